#!/usr/bin/env python3
"""Coverage of evaluate's intervals (``--ci``: percentile, BCa, t) by Monte Carlo, at nominal 0.95, for
50 to 500 queries: the share of intervals that hold the true mean.

Populations: the synthetic ones of ``tests/stats/test_summary_intervals.py`` (binary, zero-inflated,
skewed per-query values, true means known), and, when ``../shared/data/real`` is there, the per-query
values of real runs (nDCG@10, AP, RR, P@10 of every first-stage run of TREC DL19 and DL20, pooled per
measure: n queries are drawn with replacement from those, the true mean is theirs).

    python bench/ci_coverage.py [--trials 4000] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "stats"))
sys.path.insert(0, str(ROOT / "tests"))

from test_summary_intervals import POPULATIONS, coverage

import ctxeval
from shared_data import shared_folder

SIZES = (50, 100, 200, 500)
METHODS = ("percentile", "bca", "t")


def real_populations() -> None:
    """Add the pooled per-query values of the real DL19 / DL20 first-stage runs to POPULATIONS."""
    real = shared_folder() / "real"
    if not (real / "dl19").is_dir():
        print("../shared/data/real is absent: synthetic populations only")
        return
    pooled: dict[str, list[np.ndarray]] = {}
    for year, qrels in (("dl19", "qrels.dl19-passage.txt"), ("dl20", "qrels.dl20-passage.txt")):
        runs = sorted(p for p in (real / year / "runs").glob("*.top100.txt") if not p.name.startswith("rankvicuna"))
        res = ctxeval.evaluate(str(real / year / qrels), [str(p) for p in runs], ["nDCG@10", "AP", "RR", "P@10"])
        for r in res.runs:
            for m, v in r.values.items():
                pooled.setdefault(str(m), []).append(v)
    for name, parts in pooled.items():
        values = np.concatenate(parts)

        def draw(rng: np.random.Generator, size: tuple[int, int], v: np.ndarray = values) -> np.ndarray:
            return v[rng.integers(0, v.size, size)]

        POPULATIONS[f"real {name} ({values.size} values)"] = (draw, float(values.mean()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=4000)
    ap.add_argument("--resamples", type=int, default=2000)
    args = ap.parse_args()
    real_populations()
    print(f"coverage at nominal 0.95 over {args.trials} trials ({args.resamples} bootstrap resamples)")
    print(f"{'population':<34} {'n':>4} " + " ".join(f"{m:>10}" for m in METHODS) + "   seconds")
    worst = 1.0
    for name in POPULATIONS:
        for n in SIZES:
            t0 = time.perf_counter()
            got = [coverage(name, n, m, args.trials, args.resamples) for m in METHODS]
            worst = min(worst, *got)
            cells = " ".join(f"{c:>10.3f}" for c in got)
            print(f"{name:<34} {n:>4} {cells}   {time.perf_counter() - t0:7.1f}", flush=True)
    print(f"lowest coverage: {worst:.3f}")


if __name__ == "__main__":
    main()
