"""The gate's test and its planning.

**The test.** For one measure, ``d_i`` is the candidate's change on query i (candidate − baseline,
sign-flipped for measures where lower is better, so a drop is negative), over the n queries where
both values are defined; δ ≥ 0 is the tolerated drop (``--max-drop``). The gate tests

    H0: E[d] ≥ −δ  (the change is within the tolerated drop)   against   H1: E[d] < −δ

with the one-sided paired t-test: t = (mean(d) + δ) / (sd(d) / √n), p = P(T_{n−1} ≤ t). A small p is
evidence of a drop beyond the tolerance: the gate fails when a measure's Holm-adjusted p is below α.
This is the one-sided test of a non-inferiority hypothesis at margin δ, with the burden of proof on the
alarm: a candidate no worse than the baseline fails it with probability at most α (per measure, and,
through Holm, across the measures), however few the queries; a candidate worse by more than δ is caught
with the power computed below.

Why the t-test. The question is about the mean of the per-query changes (the difference of two mean
scores) at a margin other than 0; a randomization (sign-flip) test or the Wilcoxon signed-rank test
assume a distribution symmetric about the null value, which the changes shifted by δ are not (most
IR changes have many ties at 0). The t-test needs only that the queries are an independent random
sample of the queries the system will face, paired by query, with the same labels, and that the mean
change is close to normal (the central limit theorem: per-query changes are bounded, so n ≥ 30 is
usually enough; Urbano, Lima & Hanjalic, SIGIR 2019, found the paired t-test's error rates on IR
data at their nominal level). With fewer queries, or changes dominated by a few queries, treat the
p-value as approximate; the report says how many queries there were.

**The interval** of the change is the two-sided 1 − 2α t-interval, mean(d) ± t_{1−α, n−1} · sd/√n,
whose lower end is the one-sided bound the test uses (it is not adjusted for the number of measures).

**Power** (Jennett & Welch's normal approximation of the noncentral t): a true drop D > δ is caught
with probability 1 − Φ((t_c (1 − 1/(4ν)) − λ) / √(1 + t_c² / (2ν))), t_c = t_{1−α, ν}, ν = n − 1,
λ = (D − δ) √n / σ_d, σ_d the standard deviation of the per-query changes. With m measures the plan
uses α/m (Holm's first step), so it errs on the side of more queries. The bootstrap check draws n
queries with replacement from the observed changes shifted to a mean of −D, runs the gate's test, and
counts how often it fails.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._compare.special import normal_cdf, normal_ppf, t_cdf, t_ppf

__all__ = ["Test", "detectable_drop", "needed_queries", "one_sided", "power_at", "simulated_power"]


@dataclass(frozen=True)
class Test:
    """The one-sided test of one measure (see the module docstring)."""

    n: int
    mean: float  #: mean change (improvement scale: negative = drop)
    sd: float
    t: float
    p: float
    low: float  #: the 1 − 2α interval of the mean change
    high: float


def one_sided(d: np.ndarray, margin: float, alpha: float) -> Test:
    """The gate's test of the changes ``d`` (improvement scale, no NaN) at tolerated drop ``margin``."""
    n = int(d.size)
    if n == 0:
        return Test(0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    mean = float(d.mean())
    if n < 2:
        return Test(n, mean, math.nan, math.nan, math.nan, math.nan, math.nan)
    sd = float(d.std(ddof=1))
    if sd == 0.0:  # every query changed by the same amount: no sampling doubt about the mean
        p = 0.0 if mean < -margin else 1.0
        return Test(n, mean, 0.0, math.copysign(math.inf, mean + margin) if mean != -margin else 0.0, p, mean, mean)
    se = sd / math.sqrt(n)
    t = (mean + margin) / se
    half = t_ppf(1.0 - alpha, n - 1) * se
    return Test(n, mean, sd, t, t_cdf(t, n - 1), mean - half, mean + half)


def power_at(n: int, sd: float, drop: float, margin: float, alpha: float) -> float:
    """Probability that the gate catches a true mean drop ``drop`` (> margin) with n queries."""
    if n < 2 or not sd > 0:
        return math.nan
    nu = n - 1
    tc = t_ppf(1.0 - alpha, nu)
    lam = (drop - margin) * math.sqrt(n) / sd
    z = (tc * (1.0 - 1.0 / (4.0 * nu)) - lam) / math.sqrt(1.0 + tc * tc / (2.0 * nu))
    return 1.0 - normal_cdf(z)


def needed_queries(sd: float, drop: float, margin: float, alpha: float, power: float, cap: int = 10**8) -> int | None:
    """The fewest queries with which the gate catches a mean drop ``drop`` with probability ``power``
    (None when ``drop`` is not beyond ``margin`` or more than ``cap`` would be needed)."""
    if not drop > margin or not sd > 0:
        return None
    if power_at(cap, sd, drop, margin, alpha) < power:
        return None
    lo, hi = 2, 2
    while power_at(hi, sd, drop, margin, alpha) < power:
        lo, hi = hi, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if power_at(mid, sd, drop, margin, alpha) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo


def detectable_drop(n: int, sd: float, margin: float, alpha: float, power: float) -> float:
    """The smallest true mean drop the gate catches with probability ``power`` with n queries."""
    if n < 2 or not sd > 0:
        return math.nan
    nu = n - 1
    tc = t_ppf(1.0 - alpha, nu)
    lam = tc * (1.0 - 1.0 / (4.0 * nu)) + normal_ppf(power) * math.sqrt(1.0 + tc * tc / (2.0 * nu))
    return margin + lam * sd / math.sqrt(n)


def simulated_power(
    d: np.ndarray, n: int, drop: float, margin: float, alpha: float, draws: int = 2000, seed: int = 0
) -> float:
    """The bootstrap check of :func:`power_at`: the share of ``draws`` samples of n queries, drawn with
    replacement from the changes ``d`` shifted to a mean of −drop, on which the gate's test fails."""
    rng = np.random.default_rng(seed)
    shifted = d - d.mean() - drop
    hits = 0
    tc = t_ppf(alpha, n - 1)  # the test fails when t <= this quantile (p < alpha)
    for start in range(0, draws, 500):
        k = min(500, draws - start)
        x = shifted[rng.integers(0, d.size, (k, n))]
        mean = x.mean(axis=1)
        sd = x.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (mean + margin) / (sd / math.sqrt(n))
        t = np.where(sd > 0, t, np.where(mean < -margin, -np.inf, np.inf))
        hits += int(np.count_nonzero(t < tc))
    return hits / draws
