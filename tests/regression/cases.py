"""The regression corpus: every command of ctxeval on the bundled example and on generated data with
ties, ungrouped lines, unjudged queries and judged queries missing from a run.

Each case is a command line run in a scratch folder holding a copy of the example
(``example/...``) and the generated files (``gen/...``); its stdout and every file it writes are
recorded byte for byte under ``tests/data/regression``. ``scripts/record_regression.py`` writes the
recordings; ``test_regression.py`` checks that the commands still print and write exactly those
bytes. A change of output that is intended is recorded again, in its own commit that says why.

Normalised before comparison (and recording): the scratch folder's path and the installed
package's data folder (the demo prints absolute paths), the ctxeval and matplotlib versions in the HTML footer, and the body of every inline SVG
plot (its bytes depend on the matplotlib release; the numbers behind the plots are in the JSON of
the same report, which is compared whole).
"""

from __future__ import annotations

import random
import re
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from shared_data import trec_eval_data, trec_eval_missing

__all__ = ["CASES", "RECORDINGS", "Case", "needs_trec_eval_files", "normalise", "setup_scratch"]

RECORDINGS = Path(__file__).resolve().parent.parent / "data" / "regression"


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    files: tuple[str, ...] = ()  #: files the command writes (relative to the scratch folder)
    exit_code: int = 0
    env: dict[str, str] = field(default_factory=dict)


E = "example"
Q = f"{E}/qrels.txt"
RUNS = tuple(f"{E}/runs/{n}.run" for n in ("bm25", "tfidf", "rrf", "bm25-rerank", "rrf-rerank"))
G = "gen"
GQ = f"{G}/qrels.txt"
GQ03 = f"{G}/qrels03.txt"
GRUNS = (f"{G}/alpha.run", f"{G}/beta.run", f"{G}/gamma.run")
CLASSICAL = (
    "-m",
    "nDCG@10",
    "-m",
    "AP",
    "-m",
    "RR",
    "-m",
    "P(rel=3)@5",
    "-m",
    "R@20",
    "-m",
    "Bpref",
    "-m",
    "ERR(gmax=5)@10",
    "-m",
    "IPrec@0.5",
    "-m",
    "NumRelRet",
)
RAG = (
    "-m",
    "RA-nWG@5",
    "-m",
    "RA-nWG@10",
    "-m",
    "N-Recall4+@10",
    "-m",
    "N-Recall5@5",
    "-m",
    "Precision4+@5",
    "-m",
    "Harm@5",
    "-m",
    "GoldHit@10",
    "-m",
    "PROC@10",
    "-m",
    "%PROC@10",
)
DIST = (
    "-m",
    "dDCG@5",
    "-m",
    "ndDCG@5",
    "-m",
    "UDCG@5",
    "-m",
    "UDCG(reference=true)@5",
    "-m",
    "DistractorRate@5",
    "-m",
    "DistractorHarm@5",
)


def _cases() -> list[Case]:
    c: list[Case] = []
    add = c.append
    # evaluate: classical
    add(Case("evaluate-example-default", ("evaluate", Q, *RUNS)))
    add(Case("evaluate-example-classical-json", ("evaluate", Q, *RUNS, *CLASSICAL, "--format", "json", "--per-query")))
    add(Case("evaluate-example-per-query", ("evaluate", Q, RUNS[0], *CLASSICAL, "--per-query")))
    add(Case("evaluate-example-csv", ("evaluate", Q, RUNS[0], RUNS[3], *CLASSICAL, "--format", "csv", "--per-query")))
    add(
        Case(
            "evaluate-example-jsonl",
            ("evaluate", Q, RUNS[2], "-m", "nDCG@5", "-m", "RR", "--format", "jsonl", "--per-query"),
        )
    )
    add(Case("evaluate-gen-zero", ("evaluate", GQ, *GRUNS, *CLASSICAL, "--per-query", "--format", "json")))
    add(Case("evaluate-gen-ignore", ("evaluate", GQ, *GRUNS, *CLASSICAL, "--missing", "ignore")))
    add(
        Case(
            "evaluate-gen-input-ties",
            (
                "evaluate",
                GQ,
                *GRUNS,
                "-m",
                "nDCG@5",
                "-m",
                "RR",
                "-m",
                "P@3",
                "--ties",
                "input",
                "--per-query",
                "--format",
                "json",
            ),
        )
    )
    add(
        Case(
            "evaluate-gen-output-file",
            ("evaluate", GQ, GRUNS[0], "-m", "AP", "--format", "csv", "-o", "out.csv"),
            files=("out.csv",),
        )
    )
    add(Case("evaluate-gen-missing-error", ("evaluate", GQ, GRUNS[1], "--missing", "error"), exit_code=2))
    add(
        Case(
            "evaluate-gen-trec-measures",
            (
                "evaluate",
                GQ,
                GRUNS[0],
                "-m",
                "infAP",
                "-m",
                "gm_map",
                "-m",
                "11pt_avg",
                "-m",
                "binG",
                "-m",
                "G",
                "-m",
                "ndcg_rel",
                "-m",
                "Rndcg",
                "-m",
                "ideal_dcg",
                "-m",
                "relative_P@5",
                "-m",
                "set_relative_P",
                "-m",
                "SetAP",
                "-m",
                "yaap",
                "-m",
                "RBP",
                "-m",
                "rbp_resid",
                "-m",
                "unj@5",
                "-m",
                "utility",
                "-m",
                "Rprec_mult",
                "--per-query",
                "--format",
                "json",
            ),
        )
    )
    # evaluate: RAG
    add(Case("evaluate-example-rag-pool", ("evaluate", Q, RUNS[3], *RAG, "--pool", RUNS[0], "--per-query")))
    add(
        Case(
            "evaluate-example-rag-json",
            ("evaluate", Q, RUNS[0], RUNS[2], *RAG, "--pool-depth", "20", "--format", "json", "--per-query"),
        )
    )
    add(
        Case(
            "evaluate-gen-rag-grade-map",
            ("evaluate", GQ03, *GRUNS, *RAG, "--grade-map", "trec-dl", "--per-query", "--format", "json"),
        )
    )
    add(
        Case(
            "evaluate-gen-rag-pool-outside",
            (
                "evaluate",
                GQ,
                f"{G}/rerank.run",
                *RAG,
                "--pool",
                f"{G}/pool.run",
                "--pool-depth",
                "10",
                "--allow-outside-pool",
            ),
        )
    )
    add(
        Case(
            "evaluate-gen-rag-novelty",
            (
                "evaluate",
                GQ,
                *GRUNS,
                "-m",
                "RA-nWG(novelty=0.5)@5",
                "-m",
                "RA-nWG@5",
                "--groups",
                f"{G}/groups.txt",
                "--format",
                "json",
                "--per-query",
            ),
        )
    )
    # evaluate: distraction
    add(Case("evaluate-example-distraction", ("evaluate", Q, *RUNS, *DIST, "--distractors", f"{E}/distractors.txt")))
    add(
        Case(
            "evaluate-example-distraction-llm",
            (
                "evaluate",
                Q,
                RUNS[0],
                RUNS[4],
                *DIST,
                "--utilities",
                f"{E}/utilities.txt",
                "--format",
                "json",
                "--per-query",
            ),
        )
    )
    add(
        Case(
            "evaluate-gen-distraction-strict",
            (
                "evaluate",
                GQ,
                *GRUNS,
                *DIST,
                "--distractor-rules",
                "strict",
                "--tau",
                "0.6",
                "--format",
                "json",
                "--per-query",
            ),
        )
    )
    add(
        Case(
            "evaluate-gen-distraction-grade-map",
            ("evaluate", GQ03, GRUNS[0], *DIST, "--grade-map", "trec-dl", "--top-rank", "0"),
        )
    )
    # trec_eval
    add(Case("trec-eval-example-all", ("trec_eval", "-m", "all_trec", "-q", Q, RUNS[0])))
    add(Case("trec-eval-gen-all-c", ("trec_eval", "-m", "all_trec", "-q", "-c", GQ, GRUNS[1])))
    add(Case("trec-eval-gen-v9", ("trec_eval", "-m", "all_trec", "-c", "--trec-eval-version", "9", GQ, GRUNS[2])))
    add(
        Case(
            "trec-eval-gen-params",
            (
                "trec_eval",
                "-m",
                "P.1,3,7",
                "-m",
                "ndcg.1=0,2=3,3=7",
                "-m",
                "iprec_at_recall.0.25,0.75",
                "-m",
                "rbp.p=0.5",
                "-M",
                "10",
                "-l",
                "2",
                GQ,
                GRUNS[0],
            ),
        )
    )
    add(Case("trec-eval-suite-all", ("trec_eval", "-m", "all_trec", "-q", "trec/qrels.test", "trec/results.test")))
    # compare
    for fmt in ("table", "json", "csv", "markdown", "latex", "html"):
        add(
            Case(
                f"compare-example-{fmt}",
                (
                    "compare",
                    Q,
                    *RUNS,
                    "-m",
                    "nDCG@10",
                    "-m",
                    "RA-nWG@5",
                    "-m",
                    "%PROC@10",
                    "-m",
                    "dDCG@5",
                    "-m",
                    "DistractorRate@5",
                    "--baseline",
                    "bm25",
                    "--strata",
                    f"{E}/categories.tsv",
                    "--distractors",
                    f"{E}/distractors.txt",
                    "--num-rel-level",
                    "3",
                    "--format",
                    fmt,
                    "--quiet",
                    "-o",
                    f"report.{fmt}",
                ),
                files=(f"report.{fmt}",),
            )
        )
    add(
        Case(
            "compare-gen-tests",
            (
                "compare",
                GQ,
                *GRUNS,
                "-m",
                "nDCG@10",
                "-m",
                "AP",
                "-m",
                "gm_map",
                "-m",
                "NumRelRet",
                "--test",
                "t",
                "--correction",
                "bh",
                "--queries",
                f"{G}/queries.tsv",
                "--min-stratum",
                "3",
                "--format",
                "json",
                "--quiet",
            ),
        )
    )
    add(
        Case(
            "compare-gen-wilcoxon-bca",
            (
                "compare",
                GQ,
                *GRUNS,
                "-m",
                "RR",
                "-m",
                "P@5",
                "--test",
                "wilcoxon",
                "--ci",
                "bca",
                "--missing",
                "ignore",
                "--resamples",
                "2000",
                "--quiet",
            ),
        )
    )
    add(
        Case(
            "compare-gen-bootstrap",
            (
                "compare",
                GQ,
                *GRUNS,
                "-m",
                "RR",
                "--test",
                "bootstrap",
                "--resamples",
                "1000",
                "--curve-k",
                "1,3,5",
                "--format",
                "markdown",
                "--quiet",
            ),
        )
    )
    # curve
    add(
        Case(
            "curve-example",
            ("curve", Q, RUNS[0], RUNS[3], "-m", "nDCG", "-m", "P(rel=3)", "-m", "RA-nWG", "-k", "1:10"),
        )
    )
    add(
        Case(
            "curve-gen-json",
            ("curve", GQ, *GRUNS, "-m", "R", "-m", "DistractorRate", "-k", "1,2,5,10", "--format", "json"),
        )
    )
    add(
        Case(
            "curve-gen-csv",
            ("curve", GQ03, GRUNS[0], "-m", "RA-nWG", "-k", "5", "--grade-map", "trec-dl", "--format", "csv"),
        )
    )
    # diagnose
    add(Case("diagnose-example", ("diagnose", Q, RUNS[4], "--pool", RUNS[2], "-k", "5")))
    add(Case("diagnose-example-json", ("diagnose", Q, RUNS[3], "--pool", RUNS[0], "-k", "10", "--format", "json")))
    add(
        Case(
            "diagnose-gen",
            ("diagnose", GQ03, GRUNS[0], "--grade-map", "trec-dl", "-k", "3", "--per-query", "--pool-depth", "8"),
        )
    )
    # distraction
    add(Case("distraction-example", ("distraction", Q, *RUNS, "-k", "5", "--distractors", f"{E}/distractors.txt")))
    add(
        Case(
            "distraction-example-llm-json",
            ("distraction", Q, *RUNS, "-k", "5", "--utilities", f"{E}/utilities.txt", "--format", "json"),
        )
    )
    add(
        Case(
            "distraction-gen-csv",
            ("distraction", GQ, *GRUNS, "-k", "3", "--distractor-rules", "lenient", "--discount", "--format", "csv"),
        )
    )
    # fit-udcg and the fitted measure
    add(
        Case(
            "fit-udcg-example",
            ("fit-udcg", Q, *RUNS, "--answers", f"{E}/answers.tsv", "-k", "5", "-o", "fit.json"),
            files=("fit.json",),
        )
    )
    add(
        Case(
            "fit-udcg-example-json",
            (
                "fit-udcg",
                Q,
                *RUNS,
                "--answers",
                f"{E}/answers.tsv",
                "-k",
                "3",
                "--utilities",
                f"{E}/utilities.txt",
                "--format",
                "json",
                "-o",
                "fit3.json",
            ),
            files=("fit3.json",),
        )
    )
    # calibrate
    add(
        Case(
            "calibrate-example",
            ("calibrate", Q, RUNS[0], "-k", "20", "--distractors", f"{E}/distractors.txt", "-o", "policy.json"),
            files=("policy.json",),
        )
    )
    add(
        Case(
            "calibrate-example-measure",
            ("calibrate", Q, RUNS[3], "-k", "10", "--objective", "nDCG", "--folds", "3", "--force"),
        )
    )
    add(
        Case(
            "calibrate-gen-rag",
            ("calibrate", GQ, GRUNS[0], "-k", "8", "--objective", "RA-nWG@8", "--seed", "3"),
            exit_code=1,
        )
    )
    # the rest
    add(Case("measures-text", ("measures",)))
    add(Case("measures-markdown", ("measures", "--format", "markdown")))
    add(Case("demo", ("demo", "--html", "demo.html"), files=("demo.html",)))
    add(Case("error-bad-measure", ("evaluate", Q, RUNS[0], "-m", "nDCG@x"), exit_code=2))
    add(Case("error-missing-file", ("evaluate", Q, "nope.run"), exit_code=2))
    return c


CASES = _cases()


# --------------------------------------------------------------------------------------------------
# the scratch folder
# --------------------------------------------------------------------------------------------------


def _gen(folder: Path) -> None:
    """Deterministic tie-heavy data: 30 judged queries (grades 1-5, and a 0-3 copy), three runs with
    scores on a 0.1 grid (many ties), one of them ungrouped, one missing judged queries, one with
    unjudged queries; a pool and a reranking of it with some docs outside the pool's top 10."""
    rng = random.Random(20261124)
    folder.mkdir(parents=True, exist_ok=True)
    docs = [f"d{i:03d}" for i in range(1, 121)]
    queries = [f"q{i:02d}" for i in range(1, 31)]
    qrels, q03 = [], []
    judged: dict[str, dict[str, int]] = {}
    for q in queries:
        pick = rng.sample(docs, rng.randint(3, 12))
        judged[q] = {}
        for d in pick:
            g = rng.choice([1, 1, 2, 2, 2, 3, 3, 4, 5])
            judged[q][d] = g
            qrels.append(f"{q} 0 {d} {g}\n")
            q03.append(f"{q} 0 {d} {g - 2 if g >= 2 else 0}\n")
    (folder / "qrels.txt").write_text("".join(qrels))
    (folder / "qrels03.txt").write_text("".join(q03))

    def ranking(q: str, depth: int, bias: float) -> list[tuple[str, float]]:
        cand = list(judged[q]) + rng.sample(docs, depth)
        seen: dict[str, float] = {}
        for d in cand:
            if d in seen or len(seen) >= depth:
                continue
            base = judged[q].get(d, 0) * bias + rng.random() * 3.0
            seen[d] = round(base, 1)
        return sorted(seen.items(), key=lambda x: -x[1])

    def write(name: str, rows: list[str]) -> None:
        (folder / name).write_text("".join(rows))

    for name, bias, drop, extra, shuffle in (
        ("alpha", 0.9, 0, 0, False),
        ("beta", 0.4, 4, 0, False),
        ("gamma", 0.2, 1, 2, True),
    ):
        rows = []
        qs = queries[drop:] + [f"qx{i}" for i in range(extra)]
        for q in qs:
            if q.startswith("qx"):
                lst = [(d, round(rng.random() * 3, 1)) for d in rng.sample(docs, 5)]
            else:
                lst = ranking(q, rng.randint(8, 20), bias)
            rows.extend(f"{q} Q0 {d} {r} {s} {name}\n" for r, (d, s) in enumerate(lst, 1))
        if shuffle:
            rng.shuffle(rows)
        write(f"{name}.run", rows)
    pool_rows, rerank_rows = [], []
    for q in queries:
        lst = ranking(q, 25, 0.5)
        pool_rows.extend(f"{q} Q0 {d} {r} {s} pool\n" for r, (d, s) in enumerate(lst, 1))
        top = lst[:15]
        rng.shuffle(top)
        rerank_rows.extend(f"{q} Q0 {d} {r} {15 - r + 0.5} rerank\n" for r, (d, _) in enumerate(top, 1))
    write("pool.run", pool_rows)
    write("rerank.run", rerank_rows)
    groups = [f"{d} g{int(d[1:]) % 17}\n" for d in docs if int(d[1:]) % 3]
    write("groups.txt", groups)
    write("queries.tsv", [f"{q}\t{' '.join(['word'] * (1 + i % 12))}\n" for i, q in enumerate(queries)])


def setup_scratch(folder: Path) -> None:
    """A copy of the bundled example, the generated data and trec_eval's test files in ``folder`` (the
    last from the shared folder outside the tree, when it is there: ``tests/shared_data.py``)."""
    example = Path(str(resources.files("ctxeval") / "data" / "example"))
    shutil.copytree(example, folder / E)
    _gen(folder / G)
    (folder / "trec").mkdir()
    if trec_eval_missing() is None:
        for name in ("qrels.test", "results.test"):
            shutil.copy(trec_eval_data() / name, folder / "trec" / name)


def needs_trec_eval_files(case: Case) -> bool:
    """Whether ``case`` reads trec_eval's own test files (skipped without the shared folder)."""
    return any(arg.startswith("trec/") for arg in case.argv)


_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
_FOOTER = re.compile(r"Made by ctxeval [^ ]+ with matplotlib [^ .]+(?:\.[^ .]+)*\. ")


def normalise(text: str, scratch: Path) -> str:
    text = text.replace(str(scratch.resolve()), "<scratch>").replace(str(scratch), "<scratch>")
    # the demo reads the example bundled inside the installed package: where that is depends on
    # the checkout or the environment, not on ctxeval
    data = Path(str(resources.files("ctxeval") / "data"))
    text = text.replace(str(data.resolve()), "<package data>").replace(str(data), "<package data>")
    text = _SVG.sub("<svg/>", text)
    return _FOOTER.sub("Made by ctxeval <version> with matplotlib <version>. ", text)
