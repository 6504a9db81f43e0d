"""The commands on which ``ctxeval trec_eval`` is checked against what trec_eval 10.0 and 9.0.8 print, and
the recorder of what each binary prints. trec_eval's files and the recordings live outside this tree, in
the shared folder (``tests/shared_data.py``; ``tests/data/trec_eval/README.md``).

Three groups of cases, each run as ``ctxeval trec_eval --trec-eval-version V ARGS`` and compared byte for
byte (stdout, and the exit status) with what trec_eval V printed for ``trec_eval ARGS``:

* ``MAKEFILE``: every command of trec_eval 10.0's ``make quicktest`` (its Makefile), on its ``test/``
  directory as it is in trec_eval's repository (the shared folder's ``trec_eval``);
* ``DIRECTORY``: the rest of that directory (9.0.8's own ``zscores_file``, which holds ``nan``; the
  single-topic files of topic 302; ``prefs.rank20``, a results file without query ids);
* ``GENERATED``: DL-HARD-like runs made by :func:`write_dlhard` (graded passages 0-3, rankings of 100,
  topics whose top 50 holds no judged passage, topics judged only 0/1, judged topics without results),
  evaluated as the DL-HARD runs were (``-c -l2 -J -M50``) and around that.

Record (needs both binaries, which this project neither ships nor builds; the folder of trec_eval's
files, and a folder to write to)::

    python tests/trec_eval_cases.py --trec-eval-10 PATH --trec-eval-9 PATH --out FOLDER
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from shared_data import trec_eval_data

DATA = trec_eval_data()  #: trec_eval's files (the shared folder; it may be absent: see shared_data)
RECORDED = DATA / "recorded"
VERSIONS = ("10", "9")
_MEAS_PARAMS = (
    "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 "
    "-mutility.2,-1,0,0 -m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20"
)

#: name -> arguments (relative to trec_eval's folder, DATA): trec_eval 10.0's Makefile, in its order
MAKEFILE = {
    "out.test": "qrels.test results.test",
    "out.test.with-comments": "qrels.test.with-comments results.test",
    "out.comment.test": "qrels.comment.test results.comment.test",
    "out.test.a": "-m all_trec qrels.test results.test",
    "out.test.aq": "-m all_trec -q qrels.test results.test",
    "out.test.aqc": "-m all_trec -q -c qrels.test results.trunc",
    "out.test.aqcM": "-m all_trec -q -c -M100 qrels.test results.trunc",
    "out.test.aql": "-m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test",
    "out.test.prefs": "-m all_prefs -q -R prefs prefs.test prefs.results.test",
    "out.test.prefs.comment": "-m all_prefs -q -R prefs prefs.comment.test prefs.results.test",
    "out.test.qrels_prefs": "-m all_prefs -q -R qrels_prefs qrels.test results.test",
    "out.test.qrels_jg": "-m qrels_jg -q -R qrels_jg qrels.123 results.test",
    "out.test.qrels_jg.comments": "-m qrels_jg -q -R qrels_jg qrels.comments.123 results.test",
    "out.test.meas_params": _MEAS_PARAMS + " qrels.test results.test",
    "out.test.aqZ": "-q -m all_trec -Z zscores_file qrels.test results.test",
}

#: the directory's other files
DIRECTORY = {
    "aqZ.v9_zscores": "-q -m all_trec -Z v9.0.8/zscores_file qrels.test results.test",
    "aqcZ.v9_zscores": "-q -c -m all_trec -Z v9.0.8/zscores_file qrels.test results.trunc",
    "aqcZ": "-q -c -m all_trec -Z zscores_file qrels.test results.trunc",
    "302": "-q -m all_trec qrels-302.test results-302.test",
    "302.c": "-q -c -m all_trec qrels.test results-302.test",
    "302.stop": "-q -m all_trec qrels.test results-302.test",
    "prefs.rank20": "-m all_prefs -R prefs prefs.test prefs.rank20",
    "302.trunc": "qrels-302.test results.trunc",
    "302.trunc.c": "-c qrels-302.test results.trunc",
    "M0": "-M0 qrels.test results.test",
    "illegal.err": "-m err qrels.test results.test",
}

_SOME = "-m official -m 11pt_avg -m set_F -m Rprec_mult -m ndcg_cut -m bpref -m infAP"

#: generated DL-HARD-like runs ({dl}: the folder :func:`write_dlhard` wrote)
GENERATED = {
    "dl.c.l2.J.M50": "-c -l2 -J -M50 -q -m all_trec {dl}/qrels {dl}/run",
    "dl.c.l2.J.M50.official": "-c -l2 -J -M50 -q {dl}/qrels {dl}/run",
    "dl.c.l2.J.M50.Z": "-c -l2 -J -M50 -q -m official -Z {dl}/zscores {dl}/qrels {dl}/run",
    "dl.l2.J.M50.stop": "-l2 -J -M50 -q " + _SOME + " {dl}/qrels {dl}/run",
    "dl.full.l2.J.M50": "-l2 -J -M50 -q " + _SOME + " {dl}/qrels {dl}/run.full",
    "dl.c.J": "-c -J -q " + _SOME + " {dl}/qrels {dl}/run",
    "dl.c.M50": "-c -M50 -q " + _SOME + " {dl}/qrels {dl}/run",
    "dl.c.M0": "-c -M0 -q {dl}/qrels {dl}/run",
    "dl.J.iprec": "-J -M50 -l2 -q -m iprec_at_recall..0,.05,.5,1 -m 11pt_avg {dl}/qrels {dl}/run.full",
}

CASES = {**MAKEFILE, **DIRECTORY, **GENERATED}


def args_of(name: str, dl: Path) -> list[str]:
    return shlex.split(CASES[name].replace("{dl}", str(dl)))


def write_dlhard(folder: Path, seed: int = 20261126) -> dict[str, str]:
    """DL-HARD-like qrels, run and z-scores in ``folder``; returns each file's sha256.

    50 topics with ids like DL-HARD's; each topic's ranking is 100 passages (scores with 4 decimals,
    some tied). Judgments: 4-30 passages per topic, grades 0-3. Every fifth topic has no judged passage
    in its top 50 (only passages ranked 51-100, or never retrieved, are judged); every fifth other
    topic is judged only 0 or 1 (nothing relevant at -l2); topics 7 and 31 are judged but absent from
    ``run`` (``run.full`` holds them); one topic of the run is not judged. Only ``random.random()`` is
    used, whose sequence Python keeps for a seed, so the files are the same on every Python.
    """
    rng = random.Random(seed)

    def pick(n: int) -> int:
        return int(rng.random() * n)

    folder.mkdir(parents=True, exist_ok=True)
    qrels, run, full, zs = [], [], [], []
    for t in range(50):
        qid = str(1000 + 4123 * t % 9973 * 97)
        docs: list[str] = []
        while len(docs) < 130:
            d = f"msmarco_passage_{pick(8_841_823):07d}"
            if d not in docs:
                docs.append(d)
        ranked, unretrieved = docs[:100], docs[100:]
        pool = ranked[50:] + unretrieved if t % 5 == 0 else ranked + unretrieved
        judged: dict[str, int] = {}
        for _ in range(4 + pick(27)):
            judged[pool[pick(len(pool))]] = min(3, pick(5))
        if t % 5 == 1:
            judged = {d: min(g, 1) for d, g in judged.items()}
        qrels += [f"{qid} 0 {d} {g}\n" for d, g in sorted(judged.items())]
        score = 30.0
        lines = []
        for rank, d in enumerate(ranked, start=1):
            if rng.random() > 0.1:  # one in ten ties with the passage above
                score -= 0.0001 + round(rng.random() * 0.2, 4)
            lines.append(f"{qid} Q0 {d} {rank} {score:.4f} dlhard-bm25\n")
        full += lines
        if t not in (7, 31):
            run += lines
        if t % 3:
            zs += [f"{qid}\tmap\t{rng.random() * 0.3:.4f}\t{0.05 + rng.random() * 0.2:.4f}\n"]
            zs += [f"{qid}\tP_10\t{rng.random() * 0.3:.4f}\t{'nan' if t % 2 else '0.1000'}\n"]
            zs += [f"{qid}\tiprec_at_recall_0.00\t0.5000\tnan\n", f"{qid}\tnum_ret\t50\t0\n"]
            zs += [f"{qid}\tzz_last\t0\t1\n"]
    # trec_eval's binary searches read one entry past the table for a qid or measure sorting after
    # all of the file's (a crash, or the next topic's entry): a last measure and a last topic
    zs += ["zz_last\tzz_last\t0\t1\n"]
    run += [f"9999 Q0 msmarco_passage_{i:07d} {i + 1} {10 - i}.0 dlhard-bm25\n" for i in range(10)]
    files = {"qrels": qrels, "run": run, "run.full": full, "zscores": zs}
    for name, lines in files.items():
        (folder / name).write_text("".join(lines))
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in files}


def _record(binaries: dict[str, str], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    status: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        dl = Path(tmp) / "dl"
        sha = write_dlhard(dl)
        for name in CASES:
            status[name] = {}
            for version in VERSIONS:
                args = args_of(name, dl)
                done = subprocess.run([binaries[version], *args], cwd=DATA, capture_output=True)
                (out / f"{name}.v{version}").write_bytes(done.stdout)
                status[name][version] = done.returncode
                print(f"{name} v{version}: exit {done.returncode}, {len(done.stdout.splitlines())} lines")
    doc = {"exit_status": status, "generated_sha256": sha}
    (out / "exit_status.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description="record what trec_eval 10.0 and 9.0.8 print on the cases")
    ap.add_argument("--trec-eval-10", required=True, help="a trec_eval 10.0 binary")
    ap.add_argument("--trec-eval-9", required=True, help="a trec_eval 9.0.8 binary")
    ap.add_argument("--out", required=True, type=Path, help="the folder to write the recordings to")
    a = ap.parse_args()
    if not (DATA / "qrels.test").is_file():
        ap.error(f"trec_eval's test files are not at {DATA}: set CTXEVAL_TREC_EVAL_DATA")
    _record({"10": a.trec_eval_10, "9": a.trec_eval_9}, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
