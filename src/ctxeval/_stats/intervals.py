"""Bootstrap confidence intervals of a mean, per column of per-query values, from the resampling kernels
of :mod:`.resample` (the same draws, the same bits on any BLAS).

Confidence intervals of a mean (Efron & Tibshirani 1993, ch. 13 and 14): B resamples of the queries
with replacement; **percentile**: the α/2 and 1 − α/2 quantiles (linear interpolation) of the
resampled means; **BCa**: those quantiles at α₁ = Φ(z₀ + (z₀ + z_{α/2}) / (1 − a(z₀ + z_{α/2}))) and
α₂ likewise with z_{1−α/2}, z₀ = Φ⁻¹(share of resampled statistics below the estimate, ties counted
half), a = Σ U³ / (6 (Σ U²)^{3/2}) from the jackknife, U_i = (n − 1)(mean of the jackknife statistics −
jackknife statistic i). Without NaN, the intervals equal ``scipy.stats.bootstrap(..., method=...,
rng=numpy.random.default_rng(seed))``. Resamples that hold no defined value of a column (possible only
when it has very few) are left out of its interval.
"""

from __future__ import annotations

import math

import numpy as np

from .._errors import ConfigError
from .resample import Progress, as_matrix, resample_means
from .special import normal_cdf, normal_ppf

__all__ = [
    "CI_METHODS",
    "bca_interval",
    "bootstrap_ci",
    "jackknife_means",
    "jackknife_sums",
    "percentile_interval",
]

#: the bootstrap intervals, by the name compare's ``ci`` setting takes
CI_METHODS = ("percentile", "bca")


def _check_level(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < float(confidence) < 1.0:
        raise ConfigError(f"confidence must be a number strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def percentile_interval(boot: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """``[lo, hi]`` per column of ``boot`` (resamples along axis 0, NaN resamples left out): its α/2
    and 1 − α/2 quantiles (linear interpolation)."""
    level = _check_level(confidence)
    b, vector = as_matrix(boot)
    alpha = (1.0 - level) / 2.0
    out = np.full((b.shape[1], 2), np.nan)
    for j in range(b.shape[1]):
        col = b[:, j]
        col = col[~np.isnan(col)] if np.isnan(col).any() else col
        if col.size:
            out[j] = np.quantile(col, [alpha, 1.0 - alpha])
    return out[0] if vector else out


def bca_interval(boot: np.ndarray, estimate: float, jackknife: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """BCa interval ``[lo, hi]`` of one statistic from its bootstrap distribution (NaN resamples left
    out), its estimate and its jackknife values (see the module docstring). When z₀ is infinite (every
    resampled value on one side of the estimate) it is the percentile interval; an undefined
    acceleration (a jackknife value is NaN, or all are equal) counts as 0."""
    level = _check_level(confidence)
    b = np.asarray(boot, dtype=np.float64)
    b = b[~np.isnan(b)]
    if b.size == 0 or math.isnan(estimate):
        return np.array([np.nan, np.nan])
    share = (np.count_nonzero(b < estimate) + np.count_nonzero(b <= estimate)) / (2.0 * b.size)
    z0 = normal_ppf(share)
    if not math.isfinite(z0):
        return percentile_interval(b, level)
    jack = np.asarray(jackknife, dtype=np.float64)
    a_hat = 0.0
    if jack.size > 1 and not np.isnan(jack).any():
        u = (jack.size - 1) * (jack.mean() - jack)
        den = float((u**2).sum())
        if den > 0:
            a_hat = float((u**3).sum()) / (6.0 * den**1.5)
    alpha = (1.0 - level) / 2.0
    qs = []
    for z in (normal_ppf(alpha), normal_ppf(1.0 - alpha)):
        num = z0 + z
        qs.append(normal_cdf(z0 + num / (1.0 - a_hat * num)))
    return np.quantile(b, qs)


def bootstrap_ci(
    x: np.ndarray,
    *,
    resamples: int = 10000,
    seed: int = 0,
    confidence: float = 0.95,
    method: str = "percentile",
    progress: Progress = None,
) -> np.ndarray:
    """Bootstrap confidence interval of the mean of each column (over its defined values): ``[lo, hi]``.

    >>> ci = bootstrap_ci(np.array([1.0, 1.0, 1.0]), resamples=50)
    >>> ci.tolist()
    [1.0, 1.0]
    """
    if method not in CI_METHODS:
        raise ConfigError(f"ci method must be one of {', '.join(CI_METHODS)}, got {method!r}")
    a, vector = as_matrix(x)
    boot = resample_means(a, resamples=resamples, seed=seed, progress=progress)
    if method == "percentile":
        out = percentile_interval(boot, confidence)
        return out[0] if vector else out
    out = np.full((a.shape[1], 2), np.nan)
    for j in range(a.shape[1]):
        col = a[:, j]
        if np.isnan(col).all():
            continue
        out[j] = bca_interval(boot[:, j], float(np.nanmean(col)), jackknife_means(col), confidence)
    return out[0] if vector else out


def jackknife_sums(x: np.ndarray) -> np.ndarray:
    """Leave-one-out sums of the defined values of a column, one per row (a NaN row: the full sum)."""
    v = np.asarray(x, dtype=np.float64)
    valid = ~np.isnan(v)
    total = v[valid].sum()
    return np.where(valid, total - np.where(valid, v, 0.0), total)


def jackknife_means(x: np.ndarray) -> np.ndarray:
    """Leave-one-out means of the defined values of a column, one per row: (Σv − v_i) / (k − 1) for a
    defined row, the mean itself for a NaN row (leaving it out changes nothing); NaN when k = 1."""
    v = np.asarray(x, dtype=np.float64)
    valid = ~np.isnan(v)
    k = int(valid.sum())
    if k == 0:
        return np.full(v.shape, np.nan)
    total = v[valid].sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        left = (total - np.where(valid, v, 0.0)) / (k - 1) if k > 1 else np.full(v.shape, np.nan)
    return np.where(valid, left, total / k)
