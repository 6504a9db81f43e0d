"""The one-sided test of a drop beyond a tolerated one (the regression gate's test).

**The test.** For one measure, ``d_i`` is the candidate's change on query i (candidate − baseline,
sign-flipped for measures where lower is better, so a drop is negative), over the n queries where
both values are defined; δ ≥ 0 is the tolerated drop (``--max-drop``). The gate tests

    H0: E[d] ≥ −δ  (the change is within the tolerated drop)   against   H1: E[d] < −δ

with the one-sided t-test corrected for skewness by Hall's transformation (P. Hall, "On the removal of
skewness by transformation", JRSS B 54(1), 1992): with u = (mean(d) + δ) / s (s the standard deviation,
n − 1 in the denominator) and γ̂ = m₃ / m₂^{3/2} the sample skewness of d (m_k its central moments),

    T = √n (u + γ̂u²/3 + γ̂²u³/27 + γ̂/(6n)),   p = P(T_{n−1} ≤ T).

A small p is evidence of a drop beyond the tolerance: the gate fails when a measure's Holm-adjusted p
is below α. Without skew (γ̂ = 0) T is Student's t = (mean(d) + δ) / (s/√n) and p the one-sided paired
t-test's. The cubic is increasing in u ((1 + γ̂u/3)² ≥ 0), so the test and its interval agree.

Why the correction. The t-statistic of skewed changes is itself skewed: when a few queries gain a lot
(right-skewed changes, common when a candidate fixes some queries), a sample that misses them has a
low mean *and* a small sd, so t lands far in the lower tail and a candidate that is no worse fails more
often than α (Edgeworth: the error is of order γ/√n). Hall's T removes that first-order term.
Measured (``bench/gate_size.py``, 10,000 simulations per pair): on every ordered pair of 10 real TREC
DL19/DL20 runs (nDCG@10 changes re-centred at the margin and resampled, 43 and 54 queries), the
plain t-test's false-alarm rate at α = 5 % follows the skew, 3.2 % for skewness below −1 and 7.8 %
above 1 (worst pair 10.5 %); this test's stays at 4.8–5.8 % in every skew band (pooled 5.2 %), about
what a studentized bootstrap gives, with the same power within a point, in closed form and deterministic;
at 200 queries 4.9–5.1 % (the t-test's 4.0–6.3 %). What remains is of order 1/n and grows with the
tails: single pairs with heavy right tails reach 9.0 % at 54 queries (skewness 2.6, kurtosis 10.6).
No test of a mean holds α for every distribution at a fixed n (Bahadur & Savage 1956), so the rate is
α approximately; the report warns when the changes are right-skewed beyond Sugden, Smith & Jones's
rule for the normal approximation of a mean, n > 28 + 25 γ̂² (JRSS B 62(4), 2000), which flags the
pairs where the excess lies (26 of the 180: 5.8 % on average; the others 5.1 %). A randomization
(sign-flip) test or the Wilcoxon signed-rank test would assume changes symmetric about the null
value, which changes shifted by δ are not.

**The interval** of the change is the two-sided 1 − 2α interval of the same statistic, the means μ
with |T(μ)| ≤ t_{1−α, n−1}: μ = mean(d) − s·g⁻¹(±t_{1−α, n−1}/√n) with g⁻¹(y) = (3/γ̂)((1 + γ̂(y −
γ̂/(6n)))^{1/3} − 1) (mean(d) ∓ t·s/√n without skew). The test fails exactly when the whole interval
lies beyond the tolerated drop (it is not adjusted for the number of measures).

Planning (power, the queries a drop needs) is :mod:`.power`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .special import t_ppf, t_sf

__all__ = ["Test", "one_sided", "skew_needs", "skew_t"]


@dataclass(frozen=True)
class Test:
    """The one-sided test of one measure (see the module docstring)."""

    n: int
    mean: float  #: mean change (improvement scale: negative = drop)
    sd: float
    t: float  #: the test statistic (Hall's T; Student's t where the changes have no skew)
    p: float
    low: float  #: the 1 − 2α interval of the mean change
    high: float
    skew: float = 0.0  #: the sample skewness γ̂ of the changes


def skew_t(d: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Hall's skew-corrected one-sided test of each row of ``d`` (shape ``(..., n)``, no NaN, n ≥ 2)
    at tolerated drop ``margin``: ``(mean, sd, skewness, T, p)`` per row (see the module docstring).
    A row whose values are all equal has T = ∓inf (p 0 or 1) by the sign of mean + margin, 0 at the margin.

    >>> mean, sd, g, t, p = skew_t(np.array([0.1, 0.2, 0.3, 0.4]), 0.0)  # no skew: Student's t
    >>> round(float(t), 6), round(float(g), 6)
    (3.872983, 0.0)
    """
    x = np.asarray(d, dtype=np.float64)
    n = x.shape[-1]
    mean = x.mean(axis=-1)
    c = x - mean[..., None]
    m2 = (c * c).mean(axis=-1)
    sd = np.sqrt(m2 * (n / (n - 1.0)))
    flat = m2 <= 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(flat, 0.0, (c * c * c).mean(axis=-1) / np.where(flat, 1.0, m2) ** 1.5)
        u = (mean + margin) / np.where(flat, 1.0, sd)
        t = math.sqrt(n) * (u + g * u * u / 3.0 + g * g * u * u * u / 27.0 + g / (6.0 * n))
    gap = mean + margin
    t = np.where(flat, np.where(gap < 0, -np.inf, np.where(gap > 0, np.inf, 0.0)), t)
    half = 0.5 * t_sf(t, np.full(np.shape(t), n - 1.0))
    p = np.where(flat, np.where(gap < 0, 0.0, 1.0), np.where(t < 0, half, 1.0 - half))
    return mean, sd, g, t, p


def _g_inverse(y: float, g: float, n: int) -> float:
    """u with √n·g(u)/√n = y: the inverse of Hall's cubic (see the module docstring)."""
    z = g * (y - g / (6.0 * n))
    if g == 0.0:
        return y
    if z > -1.0:
        return 3.0 / g * math.expm1(math.log1p(z) / 3.0)  # (1 + z)^(1/3) − 1 without cancellation
    return 3.0 / g * (float(np.cbrt(1.0 + z)) - 1.0)


def one_sided(d: np.ndarray, margin: float, alpha: float) -> Test:
    """The gate's test of the changes ``d`` (improvement scale, no NaN) at tolerated drop ``margin``."""
    n = int(d.size)
    if n == 0:
        return Test(0, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    if n < 2:
        return Test(n, float(d.mean()), math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    mean, sd, g, t, p = (float(v) for v in skew_t(d, margin))
    if sd == 0.0:  # every query changed by the same amount: no sampling doubt about the mean
        return Test(n, mean, 0.0, t, p, mean, mean, 0.0)
    c = t_ppf(1.0 - alpha, n - 1) / math.sqrt(n)
    low, high = mean - sd * _g_inverse(c, g, n), mean - sd * _g_inverse(-c, g, n)
    return Test(n, mean, sd, t, p, low, high, g)


def skew_needs(skew: float) -> int:
    """The queries Sugden, Smith & Jones's rule asks of changes with this skewness: 28 + 25 γ̂²."""
    return math.ceil(28.0 + 25.0 * skew * skew)
