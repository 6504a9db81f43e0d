"""Cost of ``compare``'s statistics, and of one end-to-end comparison on the bundled example.

    python bench/compare_cost.py [--queries 10000] [--runs 5] [--measures 5] [--permutations 10000] [--resamples 10000]

Part 1 uses synthetic per-query values (no evaluation): a baseline and ``runs - 1`` other runs, each
with ``measures`` measures over ``queries`` queries, 3 % of the values NA, so (runs - 1) × measures
comparisons. It times the randomization test (all comparisons at once), the bootstrap CIs of every
run's mean and every difference, the other tests, and ``compare``'s whole statistics step (the
``_block`` that compare runs once overall and once per stratum), and reports the peak memory numpy
allocated (tracemalloc). Part 2 runs ``compare`` end to end on the bundled example: 5 runs, 5
measures, the categories file and the query texts as strata, default settings (10,000 permutations
and resamples).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from ctxeval import compare
from ctxeval._compare import stats as _stats
from ctxeval._compare.blocks import block as _block
from ctxeval._compare.settings import Stats, Strata
from ctxeval._demo import example_path
from ctxeval._measures import parse_measure


def timed(label: str, fn):  # type: ignore[no-untyped-def]
    tracemalloc.start()
    t = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label:<58}{dt:>9.2f} s{peak / 2**20:>10.0f} MB")
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5, help="runs including the baseline")
    ap.add_argument("--measures", type=int, default=5)
    ap.add_argument("--permutations", type=int, default=10000)
    ap.add_argument("--resamples", type=int, default=10000)
    args = ap.parse_args()
    n, R, M = args.queries, args.runs, args.measures
    values, present = synthetic(n, R, M)
    pairs = (R - 1) * M
    print(
        f"synthetic: {n:,} queries, {R} runs (1 baseline), {M} measures -> {pairs} comparisons; "
        f"{args.permutations:,} permutations, {args.resamples:,} resamples; numpy {np.__version__}"
    )
    print(f"{'step':<58}{'time':>11}{'peak':>13}")
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
