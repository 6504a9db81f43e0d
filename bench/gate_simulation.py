"""How often the gate raises a false alarm, and how often it catches a real drop, next to the rules
people use instead (a simulation, not a timed test).

    python bench/gate_simulation.py [--sims 1000] [--seed 0]

Data. The per-query nDCG@10 values are generated to match published DL19/DL20 figures (the real
runs' false-alarm rate per skew band is ``bench/gate_size.py``'s question): BM25-like systems with mean nDCG@10 ≈ 0.50 (DL19 BM25 0.506 over 43
queries, DL20 0.480 over 54), a per-query standard deviation ≈ 0.25, a few queries at 0 and at 1, and
paired changes between two runs of the same quality with a standard deviation ≈ 0.15–0.17 (the spread
of per-query differences between comparable DL runs). Each query has a latent difficulty u ~ Beta(2, 2)
and a run's value is clip(u + e, 0, 1), e ~ N(0, 0.12) independent per run, so two runs of one system
are exchangeable: the same system against itself. A planted drop lowers every candidate value by c
before clipping, c set so that the candidate population's mean nDCG@10 is exactly 0.02 below the
baseline's. A population of 200,000 queries is generated; each simulation draws n of them (query
resampling). For the false alarms, each drawn query's two values are assigned to baseline and candidate
by a coin flip, so the true mean change is exactly 0 (the finite population's two columns differ by
chance, -0.0002 at seed 0, which alone would move the rate at 500 queries by a third of a point).

Rules, each deciding "fail" on one simulated change:

* **gate, max-drop 0**: ``ctxeval gate``'s test (the one-sided paired t-test corrected for skewness of
  ``ctxeval._stats.onesided``, called as the gate calls it) at alpha 0.05: fail when p < 0.05.
* **gate, max-drop 0.01**: the same with a tolerated drop of 0.01 (the planted 0.02 drop is then
  0.01 beyond the tolerance).
* **per-case threshold (DeepEval-style)**: every query is a test case that passes when nDCG@10 ≥ 0.5
  (DeepEval's default threshold); the run fails when a case fails (``deepeval test run``'s exit status).
* **pass rate (promptfoo-style)**: fail when the share of cases ≥ 0.5 falls more than 2 points below
  the baseline's share on the same queries.
* **fixed threshold on the mean**: fail when the candidate's mean is more than 0.01 below the baseline's.

Prediction: ``ctxeval power``'s formula (``power_at``) with the standard deviation of the per-query
changes observed on one sample of 500 queries, as a user would have it from a baseline and a candidate.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from ctxeval._stats.onesided import one_sided, skew_t
from ctxeval._stats.power import power_at

SIZES = (50, 100, 200, 500)


def population(rng: np.random.Generator, size: int = 200_000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    u = rng.beta(2.0, 2.0, size) * 1.1 - 0.05
    base = np.clip(u + rng.normal(0.0, 0.12, size), 0.0, 1.0)
    e2 = rng.normal(0.0, 0.12, size)
    same = np.clip(u + e2, 0.0, 1.0)
    lo, hi = 0.0, 0.2  # the shift that puts the candidate's population mean exactly 0.02 below the baseline's
    for _ in range(60):
        c = (lo + hi) / 2
        if base.mean() - np.clip(u + e2 - c, 0.0, 1.0).mean() < 0.02:
            lo = c
        else:
            hi = c
    worse = np.clip(u + e2 - (lo + hi) / 2, 0.0, 1.0)
    return base, same, worse


def rules(b: np.ndarray, c: np.ndarray) -> dict[str, bool]:
    d = c - b
    return {
        "gate, max-drop 0": one_sided(d, 0.0, 0.05).p < 0.05,
        "gate, max-drop 0.01": one_sided(d, 0.01, 0.05).p < 0.05,
        "per-case threshold 0.5 (DeepEval-style)": bool((c < 0.5).any()),
        "pass rate -2 points (promptfoo-style)": bool((c >= 0.5).mean() < (b >= 0.5).mean() - 0.02),
        "fixed threshold: mean -0.01": bool(c.mean() < b.mean() - 0.01),
    }


def _wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson's 95 % interval of a binomial proportion k / n."""
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return float(mid - half), float(mid + half)


def null_rate(rng: np.random.Generator, base: np.ndarray, same: np.ndarray, n: int, sims: int) -> float:
    """The gate's false-alarm rate (max-drop 0, alpha 0.05) from ``sims`` simulations, vectorised: the
    gate's own test (``skew_t``, as ``one_sided`` calls it), 10,000 simulations at a time."""
    rejected = 0
    for start in range(0, sims, 10_000):
        k = min(10_000, sims - start)
        q = rng.integers(0, base.size, (k, n))
        d = np.where(rng.random((k, n)) < 0.5, base[q] - same[q], same[q] - base[q])
        rejected += int((skew_t(d, 0.0)[4] < 0.05).sum())
    return rejected / sims


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sims", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--null-sims", type=int, default=100_000, help="the precise false-alarm check (0: skip)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    base, same, worse = population(rng)
    print(
        f"population: {base.size:,} queries; mean nDCG@10 {base.mean():.3f} (sd {base.std():.3f}, "
        f"{(base == 0).mean():.1%} at 0, {(base == 1).mean():.1%} at 1); same system {same.mean():.3f}; "
        f"planted drop {base.mean() - worse.mean():.4f}; sd of the changes {np.std(same - base):.3f} (same), "
        f"{np.std(worse - base):.3f} (drop)"
    )
    sample = rng.integers(0, base.size, 500)
    sd_obs = float(np.std(worse[sample] - base[sample], ddof=1))
    t0 = time.perf_counter()
    table: dict[str, dict[int, tuple[float, float]]] = {}
    for n in SIZES:
        alarms: dict[str, int] = {}
        caught: dict[str, int] = {}
        for _ in range(args.sims):
            q = rng.integers(0, base.size, n)
            swap = rng.random(n) < 0.5  # which of the two exchangeable runs is the baseline, per query
            b, c = np.where(swap, same[q], base[q]), np.where(swap, base[q], same[q])
            for name, fail in rules(b, c).items():
                alarms[name] = alarms.get(name, 0) + fail
            q = rng.integers(0, base.size, n)
            for name, fail in rules(base[q], worse[q]).items():
                caught[name] = caught.get(name, 0) + fail
        for name in alarms:
            table.setdefault(name, {})[n] = (alarms[name] / args.sims, caught[name] / args.sims)
    predicted = {n: power_at(n, sd_obs, 0.02, 0.0, 0.05) for n in SIZES}
    predicted_01 = {n: power_at(n, sd_obs, 0.02, 0.01, 0.05) for n in SIZES}
    print(f"{args.sims:,} simulations per cell, seed {args.seed}, {time.perf_counter() - t0:.0f} s\n")
    head = " | ".join(f"n={n}" for n in SIZES)
    print(f"| rule | false alarms: {head} | power, planted 0.02 drop: {head} |")
    print("|---|" + "---:|" * (2 * len(SIZES)))
    for name, cells in table.items():
        fa = " | ".join(f"{cells[n][0]:.1%}" for n in SIZES)
        pw = " | ".join(f"{cells[n][1]:.1%}" for n in SIZES)
        print(f"| {name} | {fa} | {pw} |")
    print(
        f"| ctxeval power's prediction, max-drop 0 (sd {sd_obs:.3f} observed on 500 queries) | | | | | "
        + " | ".join(f"{predicted[n]:.1%}" for n in SIZES)
        + " |"
    )
    print(
        "| ctxeval power's prediction, max-drop 0.01 | | | | | "
        + " | ".join(f"{predicted_01[n]:.1%}" for n in SIZES)
        + " |"
    )
    fa = [round(table["gate, max-drop 0"][n][0] * args.sims) for n in SIZES]
    print(
        "\nthe gate's false alarms (max-drop 0), with 95% Wilson intervals of the simulation's own noise: "
        + ", ".join(
            f"n={n} {k}/{args.sims} [{_wilson(k, args.sims)[0]:.1%}, {_wilson(k, args.sims)[1]:.1%}]"
            for n, k in zip(SIZES, fa)
        )
        + f"; pooled {sum(fa)}/{len(SIZES) * args.sims} = {sum(fa) / (len(SIZES) * args.sims):.1%}"
    )
    if args.null_sims:
        rates = [null_rate(rng, base, same, n, args.null_sims) for n in SIZES]
        se = np.sqrt(0.05 * 0.95 / args.null_sims)
        print(
            f"the same, from {args.null_sims:,} simulations per size (simulation noise ±{1.96 * se:.2%}): "
            + ", ".join(f"n={n} {r:.2%}" for n, r in zip(SIZES, rates))
        )
    worst = max(abs(table["gate, max-drop 0"][n][1] - predicted[n]) for n in SIZES)
    worst01 = max(abs(table["gate, max-drop 0.01"][n][1] - predicted_01[n]) for n in SIZES)
    print(
        f"\nlargest gap between the gate's power and the prediction: {worst:.1%} (max-drop 0), {worst01:.1%} (max-drop 0.01)"
    )


if __name__ == "__main__":
    main()
