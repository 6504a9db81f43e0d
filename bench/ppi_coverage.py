#!/usr/bin/env python3
"""Coverage of the prediction-powered intervals by Monte Carlo, before and after: the previous
estimator (the judge averaged over all queries, labelled ones included, its variance added to the
rectifier's as if independent, the normal quantile) against ``ctxeval._stats.ppi`` (disjoint sets,
power tuning fitted leave-one-out, Student's t), on the draws of ``tests/core/test_ppi.py``.

    python bench/ppi_coverage.py [--trials 4000]

Prints, per judge and (labelled, total) queries, the share of nominal-95 % intervals that hold the
true mean, and the mean width beside the human-only interval's.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core"))

from test_ppi import GRID, JUDGES, _coverage, _human_values

from ctxeval._stats.ppi import t_quantile


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=4000)
    args = ap.parse_args()
    print(f"coverage at nominal 0.95 over {args.trials} trials (true mean 0.5)")
    print(f"{'judge':<10} {'labelled':>8} {'of':>5} {'before':>7} {'after':>7} {'width':>7} {'human width':>12}")
    for judge in JUDGES:
        for i, (n, total) in enumerate(GRID):
            ours, before, width = _coverage(judge, n, total, args.trials, seed=1000 + i)
            rng = np.random.default_rng(1000 + i)
            y = _human_values(rng, (args.trials, total))[:, :n]
            human = float(np.mean(2 * t_quantile(0.975, float(n - 1)) * y.std(1, ddof=1) / math.sqrt(n)))
            print(f"{judge:<10} {n:>8} {total:>5} {before:>7.3f} {ours:>7.3f} {width:>7.3f} {human:>12.3f}")


if __name__ == "__main__":
    main()
