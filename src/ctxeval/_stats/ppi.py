"""Prediction-powered inference for a mean: a measure's mean when a judge labelled every query and
people labelled a random subset, with the judge's error inside the interval.

Setting. Every query has a value ``f`` of the measure under the judge's labels; a random subset L of
n queries also has the value ``y`` under people's labels; the other N queries (U) have ``f`` only.
The estimand is the mean of ``y`` over the population the queries are drawn from. L must be a random
subset: the correction below is unbiased only then.

* **PPI** (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference", Science 382,
  2023): θ̂ = mean_U(f) + mean_L(y − f). The judge's mean is taken over U alone, disjoint from the
  labelled queries the correction (the "rectifier") is averaged over, so the two terms are
  independent and Var θ̂ = σ²_f / N + σ²_(y−f) / n. Averaging the judge over *all* queries, labelled
  ones included, and adding the two variances as if independent leaves out their covariance: its
  intervals cover too rarely whenever the judge's errors grow with ``f`` (a lenient judge).
* **Power tuning** (PPI++: Angelopoulos, Duchi, Zrnic, "PPI++: Efficient prediction-powered
  inference", arXiv:2311.01453, 2023): θ̂_λ = λ mean_U(f) + mean_L(y − λ f) is unbiased for every
  fixed λ, with Var = λ² σ²_f / N + σ²_(y−λf) / n, smallest at λ* = Cov(y, f) / ((1 + n/N) Var f).
  λ = 0 is the human-only mean (a judge that tracks nothing costs nothing), λ = 1 is PPI.
  Here λ is clipped to [0, 1] and fitted **leave-one-out**: labelled query i is corrected with λ_i
  fitted on the other labelled queries, θ̂ = λ̄ mean_U(f) + (1/n) Σ_i (y_i − λ_i f_i) with λ̄ the mean
  of the λ_i. Each λ_i is independent of query i and λ̄ of U, so θ̂ is exactly unbiased; fitted on the
  queries it corrects, λ would shrink the rectifier's sample variance and the interval with it (with
  20 labelled queries a faithful judge's intervals then cover about 0.93 at nominal 0.95; fitted
  leave-one-out, 0.945; ``tests/core/test_ppi.py`` measures it).
* **Interval**: θ̂ ± t_(1−α/2, ν) √V̂ with V̂ = λ̄² s²_U / N + s²_r / n (sample variances, r_i = y_i −
  λ_i (f_i − c), c the judge's mean over all queries: θ̂ = λ̄ (mean_U(f) − c) + mean_L(r) is the same
  estimate for any c, and this c keeps the spread of the λ_i out of s²_r, so that the interval moves
  with the values when both are shifted) and ν = V̂² / ((λ̄² s²_U / N)² / (N − 1) + (s²_r / n)² / (n − 1)) (Welch–Satterthwaite):
  with 20 labelled queries the normal quantile the papers use covers 0.92–0.93 even for the human-only
  mean; Student's t brings it back to nominal.

When fewer than two queries are unlabelled (N < 2), the estimate is the human-only mean. The
human-only interval is the t interval of mean_L(y) with n − 1 degrees of freedom.

A paired comparison of two systems is the same estimate on per-query differences.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np

from .._errors import ConfigError

__all__ = ["PPIArrays", "PPIMean", "ppi_arrays", "ppi_mean", "t_quantile"]


def t_quantile(p: float, df: np.ndarray | float) -> np.ndarray:
    """Student's t quantile t_p(ν) for 0.5 < p < 1 and real ν ≥ 1, vectorised over ν: Hill's
    approximation (G. W. Hill, "Algorithm 396: Student's t-quantiles", CACM 13(10), 1970), within a
    relative 2e-5 of the exact value for ν ≥ 3; below 3, ν is rounded down to 1 or 2 (a larger
    quantile), where it is exact: tan(π(p − 1/2)) and (2p − 1) / √(2p(1 − p)). ν = inf gives the
    normal quantile.

    >>> round(float(t_quantile(0.975, 1.0)), 4), round(float(t_quantile(0.975, 19.0)), 4)
    (12.7062, 2.093)
    """
    if not 0.5 < p < 1.0:
        raise ConfigError(f"t_quantile needs 0.5 < p < 1, got {p}")
    nu = np.asarray(df, dtype=float)
    if np.any(~(nu >= 1.0)):
        raise ConfigError("t_quantile needs degrees of freedom >= 1")
    two = 2.0 * (1.0 - p)  # two-tailed probability
    zq = NormalDist().inv_cdf(1.0 - two / 2.0)
    exact1 = math.tan(math.pi * (p - 0.5))
    exact2 = (2.0 * p - 1.0) / math.sqrt(2.0 * p * (1.0 - p))
    with np.errstate(all="ignore"):
        n = np.where(nu < 3.0, 3.0, nu)  # placeholder where an exact value is used
        a = 1.0 / (n - 0.5)
        b = 48.0 / (a * a)
        c = ((20700.0 * a / b - 98.0) * a - 16.0) * a + 96.36
        d = ((94.5 / (b + c) - 3.0) / b + 1.0) * np.sqrt(a * math.pi / 2.0) * n
        y = (d * two) ** (2.0 / n)
        # the normal-based branch (the usual one for moderate p)
        x = -zq
        c2 = c + np.where(n < 5.0, 0.3 * (n - 4.5) * (x + 0.6), 0.0)
        c2 = (((0.05 * d * x - 5.0) * x - 7.0) * x - 2.0) * x + b + c2
        yy = (((((0.4 * x * x + 6.3) * x * x + 36.0) * x * x + 94.5) / c2 - x * x - 3.0) / b + 1.0) * x
        big = np.expm1(a * yy * yy)
        # the tail branch (small two-tailed probabilities for the degrees of freedom)
        small = ((1.0 / (((n + 6.0) / (n * y) - 0.089 * d - 0.822) * (n + 2.0) * 3.0) + 0.5 / (n + 4.0)) * y - 1.0) * (
            n + 1.0
        ) / (n + 2.0) + 1.0 / y
        t = np.sqrt(n * np.where(y > 0.05 + a, big, small))
    t = np.where(nu < 2.0, exact1, np.where(nu < 3.0, exact2, t))
    return np.where(np.isinf(nu), zq, t)


class PPIArrays(NamedTuple):
    """:func:`ppi_arrays`'s result, one value per leading index."""

    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray
    df: np.ndarray
    lam: np.ndarray  #: λ̄, the weight of the judge's mean over the unlabelled queries


def _loo_lambda(y: np.ndarray, f: np.ndarray, n_unlabelled: int) -> np.ndarray:
    """λ_i = clip(Cov(y, f) / ((1 + n/N) Var f), 0, 1) over the labelled queries without i (same shape as y)."""
    n = y.shape[-1]
    m = n - 1
    sy = y.sum(-1, keepdims=True) - y
    sf = f.sum(-1, keepdims=True) - f
    syf = (y * f).sum(-1, keepdims=True) - y * f
    sff = (f * f).sum(-1, keepdims=True) - f * f
    cov = (syf - sy * sf / m) / (m - 1)
    var = (sff - sf * sf / m) / (m - 1)
    var = np.where(var > 1e-12 * np.maximum(1.0, sff / m), var, 0.0)  # a constant judge: λ = 0
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var > 0, cov / ((1.0 + n / n_unlabelled) * var), 0.0)
    return np.clip(lam, 0.0, 1.0)


def ppi_arrays(
    f_unlabelled: np.ndarray,
    y: np.ndarray,
    f_labelled: np.ndarray,
    *,
    alpha: float = 0.05,
    power_tuning: bool = True,
) -> PPIArrays:
    """The prediction-powered mean and its (1 − alpha) interval along the last axis (leading axes are
    independent problems of one shape; see the module docstring). ``power_tuning=False`` is PPI as
    published (λ = 1).

    >>> r = ppi_arrays(np.array([0.5, 0.7]), np.array([0.4, 0.9, 0.6]), np.array([0.5, 0.7, 0.6]), power_tuning=False)
    >>> round(float(r.mean), 4)   # mean_U f = 0.6, mean_L (y - f) = (-0.1 + 0.2 + 0) / 3
    0.6333
    """
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must be between 0 and 1, got {alpha}")
    fu = np.asarray(f_unlabelled, dtype=float)
    y = np.asarray(y, dtype=float)
    fl = np.asarray(f_labelled, dtype=float)
    if y.shape != fl.shape:
        raise ConfigError("the labelled queries need both the human and the judge value")
    n, big_n = y.shape[-1], fu.shape[-1]
    if n < 3:
        raise ConfigError(f"prediction-powered inference needs at least 3 labelled queries, got {n}")
    if big_n >= 2:
        lam_i = _loo_lambda(y, fl, big_n) if power_tuning else np.ones_like(y)
        lam = lam_i.mean(-1)
        # the same estimate for any centre c (λ̄ c cancels); c = the judge's mean keeps the spread of
        # the λ_i out of the rectifier's variance, and the interval moves with the values
        c = (fu.sum(-1) + fl.sum(-1))[..., None] / (big_n + n)
        r = y - lam_i * (fl - c)
        v_u = lam**2 * fu.var(-1, ddof=1) / big_n
        est = lam * (fu.mean(-1) - c[..., 0]) + r.mean(-1)
    else:  # every query labelled but at most one: the human-only mean
        lam = np.zeros(y.shape[:-1])
        r = y
        v_u = np.zeros(y.shape[:-1])
        est = y.mean(-1)
    v_l = r.var(-1, ddof=1) / n
    var = v_u + v_l
    with np.errstate(divide="ignore", invalid="ignore"):
        den = (v_u**2 / max(big_n - 1, 1)) + v_l**2 / (n - 1)
        df = np.where(den > 0, var**2 / den, float(n - 1))
    df = np.maximum(df, 1.0)
    half = t_quantile(1.0 - alpha / 2.0, df) * np.sqrt(var)
    return PPIArrays(est, est - half, est + half, np.sqrt(var), df, lam)


@dataclass(frozen=True)
class PPIMean:
    """A mean with the judge's error in its interval (:func:`ppi_mean`), beside the human-only one."""

    mean: float
    low: float
    high: float
    se: float
    df: float  #: Welch–Satterthwaite degrees of freedom of the t quantile
    alpha: float
    lam: float  #: weight of the judge's mean over the unlabelled queries (0: human only, 1: PPI)
    method: str  #: "PPI++ (power-tuned, leave-one-out)", "PPI" or "human only (every query labelled)"
    labelled: int  #: queries with both values
    unlabelled: int  #: queries with the judge's value only
    human_only: int  #: queries with the human value only (left out: the correction needs both)
    human_mean: float
    human_low: float
    human_high: float
    judge_mean: float  #: the judge's mean over every query it has a value for

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def ppi_mean(
    judge: Mapping[str, float],
    human: Mapping[str, float],
    *,
    alpha: float = 0.05,
    power_tuning: bool = True,
) -> PPIMean:
    """A measure's mean with the judge's error included: ``judge`` maps every query id to the
    measure's value under the judge's labels, ``human`` the queries people labelled (a random subset)
    to its value under theirs. Queries in both are the labelled set, queries in ``judge`` only the
    unlabelled one; queries in ``human`` only cannot be corrected and are counted in ``human_only``
    (left out). NaN values count as absent. See the module docstring for the estimator.

    >>> judge = {"q1": 0.6, "q2": 0.8, "q3": 0.4, "q4": 0.5, "q5": 0.7}
    >>> r = ppi_mean(judge, {"q1": 0.5, "q2": 0.6, "q3": 0.4}, power_tuning=False)
    >>> round(r.mean, 4), r.labelled, r.unlabelled   # 0.6 + ((-0.1) + (-0.2) + 0) / 3
    (0.5, 3, 2)
    """
    jv = {q: float(v) for q, v in judge.items() if not math.isnan(float(v))}
    hv = {q: float(v) for q, v in human.items() if not math.isnan(float(v))}
    lab = sorted(q for q in hv if q in jv)
    unl = sorted(q for q in jv if q not in hv)
    y = np.array([hv[q] for q in lab])
    fl = np.array([jv[q] for q in lab])
    fu = np.array([jv[q] for q in unl])
    r = ppi_arrays(fu, y, fl, alpha=alpha, power_tuning=power_tuning)
    h_half = float(t_quantile(1.0 - alpha / 2.0, float(y.size - 1))) * float(y.std(ddof=1)) / math.sqrt(y.size)
    if fu.size < 2:
        method = "human only (fewer than 2 queries unlabelled)"
    else:
        method = "PPI++ (power-tuned, leave-one-out)" if power_tuning else "PPI"
    return PPIMean(
        mean=float(r.mean),
        low=float(r.low),
        high=float(r.high),
        se=float(r.se),
        df=float(r.df),
        alpha=alpha,
        lam=float(r.lam),
        method=method,
        labelled=len(lab),
        unlabelled=len(unl),
        human_only=len(hv) - len(lab),
        human_mean=float(y.mean()),
        human_low=float(y.mean()) - h_half,
        human_high=float(y.mean()) + h_half,
        judge_mean=float(np.mean(list(jv.values()))),
    )
