"""Cost of ``compare``'s statistics, and of one end-to-end comparison on the bundled example.

    python bench/compare_cost.py [--queries 10000] [--runs 5] [--measures 5] [--permutations 10000] [--resamples 10000]
    python bench/compare_cost.py --one-doc [--one-doc-queries 100000] [--against OLD/src] [--repeat 2]

Part 1 uses synthetic per-query values (no evaluation): a baseline and ``runs - 1`` other runs, each
with ``measures`` measures over ``queries`` queries, 3 % of the values NA, so (runs - 1) × measures
comparisons. It times the randomization test (all comparisons at once), the bootstrap CIs of every
run's mean and every difference, the other tests, and ``compare``'s whole statistics step (the
``_block`` that compare runs once overall and once per stratum), and reports the peak memory numpy
allocated (tracemalloc). Part 2 runs ``compare`` end to end on the bundled example: 5 runs, 5
measures, the categories file and the query texts as strata, default settings (10,000 permutations
and resamples).

``--one-doc`` (only this part): ``ctxeval compare QRELS A B`` as a process, default settings, on two
runs of one document per query over 100,000 queries with one relevant document each (run A finds it for
half of the queries, B for 55 %), files generated under a temporary directory. It reports the process's
CPU time (user + sys, which a shared machine disturbs less than wall time) and wall time; with
``--against OLD/src`` it runs an older source tree the same way, interleaved, and checks that both print
the same bytes.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from ctxeval import _stats, compare
from ctxeval._compare.blocks import block as _block
from ctxeval._compare.settings import Stats, Strata
from ctxeval._demo import example_path
from ctxeval._measures import parse_measure


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    tracemalloc.start()
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    dt, dc = time.perf_counter() - t, time.process_time() - c
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label:<58}{dc:>9.2f} s{dt:>9.2f} s{peak / 2**20:>9.0f} MB")
    return out


def synthetic(n: int, runs: int, measures: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2, 2, (n, measures))
    values = np.empty((runs, n, measures))
    for r in range(runs):
        values[r] = np.clip(difficulty + 0.01 * r + rng.normal(0, 0.15, (n, measures)), 0, 1)
    values[rng.random(values.shape) < 0.03] = np.nan
    present = np.ones((runs, n), dtype=bool)
    return values, present


def one_doc_files(where: Path, n: int) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(0)
    qrels = where / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(n)))
    runs = []
    for name, share in (("a", 0.5), ("b", 0.55)):
        hit = rng.random(n) < share
        path = where / f"{name}.run"
        path.write_text("".join(f"q{i} Q0 {'d' if hit[i] else 'x'}{i} 1 1.0 {name}\n" for i in range(n)))
        runs.append(path)
    return qrels, runs[0], runs[1]


def timed_process(src: str, args: list[str]) -> tuple[float, float, bytes]:
    """CPU (user + sys) and wall seconds of ``python -m ctxeval ARGS`` with ``src`` first on the path."""
    env = dict(os.environ, PYTHONPATH=src)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "ctxeval", *args], env=env, capture_output=True, check=True).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, out


def one_doc(n: int, against: str | None, repeat: int) -> None:
    trees = [("this tree", str(HERE.parent / "src"))] + ([("--against", against)] if against else [])
    with tempfile.TemporaryDirectory() as tmp:
        qrels, a, b = one_doc_files(Path(tmp), n)
        print(
            f"ctxeval compare of two one-document runs over {n:,} queries (default settings; load {os.getloadavg()[0]:.1f})"
        )
        print(f"{'source':<12}{'CPU (user+sys)':>16}{'wall':>10}")
        outs = set()
        for _ in range(repeat):
            for label, src in trees:
                cpu, wall, out = timed_process(src, ["compare", str(qrels), str(a), str(b), "--quiet"])
                outs.add(out)
                print(f"{label:<12}{cpu:>14.2f} s{wall:>8.2f} s")
        print("same output bytes" if len(outs) == 1 else "OUTPUTS DIFFER")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--one-doc", action="store_true", help="time compare on one-document runs only")
    ap.add_argument("--one-doc-queries", type=int, default=100_000)
    ap.add_argument("--against", default=None, help="with --one-doc: an older source tree (its src/) to time beside")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5, help="runs including the baseline")
    ap.add_argument("--measures", type=int, default=5)
    ap.add_argument("--permutations", type=int, default=10000)
    ap.add_argument("--resamples", type=int, default=10000)
    args = ap.parse_args()
    if args.one_doc:
        one_doc(args.one_doc_queries, args.against, args.repeat)
        return
    n, R, M = args.queries, args.runs, args.measures
    values, present = synthetic(n, R, M)
    pairs = (R - 1) * M
    print(
        f"synthetic: {n:,} queries, {R} runs (1 baseline), {M} measures -> {pairs} comparisons; "
        f"{args.permutations:,} permutations, {args.resamples:,} resamples; numpy {np.__version__}"
    )
    print(f"{'step':<58}{'CPU':>11}{'wall':>11}{'peak':>12}")
    d = np.concatenate([values[r] - values[0] for r in range(1, R)], axis=1)  # (n, pairs), NaN pairwise
    timed(
        f"randomization test, {pairs} comparisons",
        lambda: _stats.randomization_test(d, permutations=args.permutations, seed=0),
    )
    x = np.concatenate(list(values), axis=1)
    timed(
        f"bootstrap means of {R * M} (run, measure) columns",
        lambda: _stats.resample_means(x, resamples=args.resamples, seed=0),
    )
    timed(f"paired t-test, {pairs} comparisons", lambda: _stats.t_test(d))
    timed(f"Wilcoxon signed-rank, {pairs} comparisons", lambda: _stats.wilcoxon_test(d))
    timed(
        f"paired bootstrap test, {pairs} comparisons",
        lambda: _stats.bootstrap_test(d, resamples=args.resamples, seed=0),
    )
    measures = [parse_measure(m) for m in ("nDCG@10", "AP", "RR", "P@10", "R@100", "RA-nWG@10", "Harm@10")[:M]]
    names = [f"run{r}" for r in range(R)]
    for test in ("randomization", "t"):
        cfg = Stats(test, 0.05, "holm", args.permutations, args.resamples, 0, "percentile", 0.95)
        timed(
            f"compare's statistics step (test={test}, percentile CIs)",
            lambda cfg=cfg: _block(values, present, np.arange(n), names, measures, 0, cfg, None),
        )
    cfg = Stats("randomization", 0.05, "holm", args.permutations, args.resamples, 0, "bca", 0.95)
    timed(
        "compare's statistics step (randomization, BCa CIs)",
        lambda: _block(values, present, np.arange(n), names, measures, 0, cfg, None),
    )

    print(
        "\nend to end on the bundled example (50 queries, 5 runs, 5 measures, strata: categories file + query length)"
    )
    runs = [str(p) for p in sorted(example_path("runs").glob("*.run"))]
    ms = ["nDCG@10", "AP(rel=3)", "RR(rel=3)", "RA-nWG@5", "Harm@5"]
    rep = timed(
        "compare(...), default settings",
        lambda: compare(
            example_path("qrels.txt"),
            runs,
            ms,
            strata=Strata(str(example_path("categories.tsv")), queries=str(example_path("queries.jsonl"))),
        ),
    )
    print(
        f"  {len(rep.comparisons)} comparisons, {len(rep.strata or {})} strata, {sum(c.significant for c in rep.comparisons)} significant overall"
    )


if __name__ == "__main__":
    main()
