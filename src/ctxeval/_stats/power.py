"""Planning a one-sided test of a drop beyond a tolerated one: its power, the queries a drop needs, the
smallest drop a set of queries catches, and a bootstrap check of them.

**Power** (Jennett & Welch's normal approximation of the noncentral t, the plain t-test's, which
Hall's test has to first order): a true drop D > δ is caught
with probability 1 − Φ((t_c (1 − 1/(4ν)) − λ) / √(1 + t_c² / (2ν))), t_c = t_{1−α, ν}, ν = n − 1,
λ = (D − δ) √n / σ_d, σ_d the standard deviation of the per-query changes. With m measures the plan
uses α/m (Holm's first step), so it errs on the side of more queries. The bootstrap check draws n
queries with replacement from the observed changes shifted to a mean of −D, runs the gate's test, and
counts how often it fails.
"""

from __future__ import annotations

import math

import numpy as np

from .onesided import skew_t
from .special import normal_cdf, normal_ppf, t_ppf

__all__ = ["detectable_drop", "needed_queries", "power_at", "simulated_power"]


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
    for start in range(0, draws, 500):
        k = min(500, draws - start)
        p = skew_t(shifted[rng.integers(0, d.size, (k, n))], margin)[4]
        hits += int(np.count_nonzero(p < alpha))
    return hits / draws
