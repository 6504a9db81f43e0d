"""The diversity measures next to pyndeval (ndeval's C code), and the C/W/L measures next to cwl_eval,
on the synthetic benchmark data: wall time side by side, in one run, and whether the numbers agree.

    python bench/diversity_cwl_cost.py [--scale M] [--queries N]

Needs ``python bench/generate.py --scale M`` first. From the scale's qrels it derives (seeded, written
beside them once): ``subtopics.txt``, diversity qrels (2-6 subtopics a query, each judged doc on 1-3
of them, its grade on the first, a grade no higher on the others), and ``gains.txt``, the grades as
cwl_eval's gains (grade / 3, negative as 0). Each tool pays what a user pays in one process: reading
both files and computing every measure for every query (ctxeval: ``Qrels.from_file`` +
``Run.from_file`` + ``evaluate``; pyndeval: its ``RelevanceEvaluator`` on the files read line by line;
cwl_eval: its own ``main``, with its log silenced). The measures: ndeval's default set (21), and nine
C/W/L measures (cwl_eval computes its five figures for each anyway; ctxeval is timed for EU alone and
for EU, ETU, ETC and ED). The run is read in file order everywhere (ctxeval ``ties="input"``;
pyndeval is given -rank as the score, its own sort would break ties by doc id), so the numbers must
agree; the largest difference is printed (cwl_eval prints 4 decimals). ``--queries N`` keeps the
first N queries (a quick look); ``--only diversity|cwl`` runs one comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import ctxeval

ND = [f"{m}@{k}" for m in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG") for k in (5, 10, 20)]
ND += ["NRBP", "nNRBP", "MAP-IA"] + [f"{m}@{k}" for m in ("P-IA", "strec") for k in (5, 10, 20)]
#: ctxeval name -> cwl_eval metric (class, arguments)
CWL = {
    "INST(T=1,max_rel=3)": ("INSTCWLMetric", (1.0,)),
    "INSQ(T=1,max_rel=3)": ("INSQCWLMetric", (1.0,)),
    "BPM(T=1,max_rel=3)@10": ("BPMCWLMetric", (1.0, 10)),
    "SDCG(max_rel=3)@10": ("NDCGCWLMetric", (10,)),
    "NERR8(max_rel=3)@10": ("NERReq8CWLMetric", (10,)),
    "NERR9(max_rel=3)@10": ("NERReq9CWLMetric", (10,)),
    "NERR10(p=0.9,max_rel=3)": ("NERReq10CWLMetric", (0.9,)),
    "NERR11(T=1,max_rel=3)": ("NERReq11CWLMetric", (1.0,)),
    "RBP-CWL(p=0.8,max_rel=3)": ("RBPCWLMetric", (0.8,)),
}


def derive(folder: Path, queries: int | None) -> tuple[Path, Path, Path]:
    """The subtopic qrels, cwl_eval's gain file and the run (cut to ``queries``), written once."""
    tag = f"-{queries}" if queries else ""
    sub, gains, run = folder / f"subtopics{tag}.txt", folder / f"gains{tag}.txt", folder / f"run{tag}.txt"
    if sub.exists() and gains.exists() and run.exists():
        return sub, gains, run
    import polars as pl

    q = pl.read_csv(folder / "qrels.txt", separator=" ", has_header=False, new_columns=["q", "it", "d", "g"])
    if queries:  # the run's first N queries (the file is sorted by query)
        wanted: list[str] = []
        with open(folder / "run.txt") as src, open(run, "w") as out:
            for line in src:
                qid = line.split(" ", 1)[0]
                if not wanted or wanted[-1] != qid:
                    if len(wanted) == queries:
                        break
                    wanted.append(qid)
                out.write(line)
        q = q.filter(pl.col("q").cast(pl.String).is_in(wanted))
    rng = np.random.default_rng(32)
    qid, doc, grade = q["q"].to_numpy(), q["d"].to_list(), q["g"].to_numpy()
    uq, inv = np.unique(qid, return_inverse=True)
    n_sub = 2 + rng.integers(0, 5, uq.size)[inv]
    lines = []
    for i in range(qid.size):
        k = min(1 + int(rng.integers(0, 3)), int(n_sub[i]))
        first = int(rng.integers(0, n_sub[i]))
        for j in range(k):
            g = int(grade[i]) if j == 0 else int(rng.integers(0, max(int(grade[i]), 0) + 1))
            lines.append(f"{qid[i]} {(first + j) % n_sub[i] + 1} {doc[i]} {g}\n")
    sub.write_text("".join(lines))
    gains.write_text("".join(f"{a} 0 {b} {max(int(c), 0) / 3!r}\n" for a, b, c in zip(qid, doc, grade)))
    return sub, gains, run


def _lines(path: Path) -> list[str]:
    with open(path) as fh:
        return fh.readlines()


def _count(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))


def timed(fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def ours_diversity(sub: Path, run: Path) -> dict[str, dict[str, float]]:
    qrels = ctxeval.Qrels.from_file(sub, labels="subtopic")
    res = ctxeval.evaluate(qrels, ctxeval.Run.from_file(run), ND, policies={"ties": "input"}).runs[0]
    return {n: res.per_query(n) for n in ND}


def pyndeval_diversity(sub: Path, run: Path) -> dict[str, dict[str, float]]:
    import pyndeval

    with open(sub) as fh:
        qrels = [(a, b, c, int(d)) for a, b, c, d in (line.split() for line in fh)]
    with open(run) as fh:
        rows = [(f[0], f[2], -float(f[3])) for f in (line.split() for line in fh)]
    out = pyndeval.RelevanceEvaluator(qrels, ND).evaluate(rows)
    return {n: {q: v[n] for q, v in out.items()} for n in ND}


def ours_cwl(gains_qrels: Path, run: Path, figures: tuple[str, ...]) -> dict[str, dict[str, float]]:
    names = [n if f == "EU" else n.replace(")", f",figure={f})", 1) for n in CWL for f in figures]
    res = ctxeval.evaluate(gains_qrels, ctxeval.Run.from_file(run), names, policies={"ties": "input"}).runs[0]
    return {n: res.per_query(n) for n in names}


def cwl_eval(gains: Path, run: Path) -> dict[str, dict[str, float]]:
    import cwl.cwl_eval as ce
    from cwl.ruler import cwl_ruler

    class Ruler(cwl_ruler.CWLRuler):
        def __init__(self, metrics_file=None, residuals=False):  # type: ignore[no-untyped-def]
            self.metrics = [getattr(cwl_ruler, cls)(*args) for cls, args in CWL.values()]
            for m in self.metrics:
                m.residuals = residuals

    logging.getLogger("cwl").disabled = True
    ce.CWLRuler = Ruler
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp), contextlib.redirect_stdout(out):
        ce.main(str(run), str(gains))
    values: dict[str, dict[str, float]] = {n: {} for n in CWL}
    names = {}
    for n, (cls, args) in CWL.items():
        names[getattr(cwl_ruler, cls)(*args).name()] = n
    for line in out.getvalue().splitlines():
        topic, metric, eu = line.split("\t")[:3]
        values[names[metric.strip()]][topic] = float(eu)
    return values


def worst(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> float:
    diffs = [
        abs(a[n][q] - b[n][q]) for n in b for q in b[n] if q in a[n] and not (np.isnan(a[n][q]) and np.isnan(b[n][q]))
    ]
    return max(diffs) if diffs else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", default="M")
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--queries", type=int, default=None)
    ap.add_argument("--only", choices=("diversity", "cwl"), default=None, help="one of the two comparisons")
    args = ap.parse_args()
    folder = Path(args.data) / args.scale
    if not (folder / "run.txt").exists():
        sys.exit(f"{folder}/run.txt is missing: python bench/generate.py --scale {args.scale}")
    sub, gains, run = derive(folder, args.queries)
    # ctxeval reads grades; cwl_eval reads gains (grade / 3): the same gains with max_rel=3
    qrels_file = folder / "qrels.txt"
    if args.queries:
        qrels_file = folder / f"qrels-{args.queries}.txt"
        if not qrels_file.exists():
            wanted = {line.split(" ", 1)[0] for line in _lines(sub)}
            qrels_file.write_text("".join(x for x in _lines(folder / "qrels.txt") if x.split(" ", 1)[0] in wanted))
    n_rows, n_sub = _count(run), _count(sub)
    print(f"scale {args.scale}: {n_rows:,} run rows; {n_sub:,} subtopic judgments; cores {os.cpu_count()}")
    print(f"{'':<44}{'ctxeval s':>11}{'peer s':>10}{'ratio':>8}{'max |diff|':>12}")
    if args.only != "cwl":
        t_ours, ours = timed(lambda: ours_diversity(sub, run))
        t_peer, peer = timed(lambda: pyndeval_diversity(sub, run))
        row = f"{t_ours:>11.2f}{t_peer:>10.2f}{t_ours / t_peer:>8.3f}{worst(ours, peer):>12.2e}"
        print(f"{'diversity, 21 measures (pyndeval 0.0.8)':<44}{row}")
    if args.only == "diversity":
        return
    t_eu, eu = timed(lambda: ours_cwl(qrels_file, run, ("EU",)))
    t_all, _ = timed(lambda: ours_cwl(qrels_file, run, ("EU", "ETU", "ETC", "ED")))
    t_cwl, theirs = timed(lambda: cwl_eval(gains, run))
    row = f"{t_eu:>11.2f}{t_cwl:>10.2f}{t_eu / t_cwl:>8.3f}{worst(eu, theirs):>12.2e}"
    print(f"{'C/W/L, 9 measures, EU (cwl_eval 1.0.12)':<44}{row}")
    print(f"{'C/W/L, 9 measures x 4 figures':<44}{t_all:>11.2f}{t_cwl:>10.2f}{t_all / t_cwl:>8.3f}")


if __name__ == "__main__":
    main()
