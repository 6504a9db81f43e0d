"""Paired significance tests, bootstrap confidence intervals and multiple-comparison corrections.

The tests and the intervals share one resampling scheme, one random stream and one exactness
device, :func:`exact_grid`, which must stay identical for both; the special functions (incomplete
beta, t and normal distributions) live in :mod:`.special`.

Everything works on a matrix ``x`` of shape ``(n_queries, n_columns)`` (a 1-D array is one column):
each column is one comparison (paired differences) or one sample (per-query values), and NaN marks a
query where that column's value is undefined (NA). The statistic of a column is its mean (or sum)
over its defined queries.

Resampling is over queries, shared by all columns. A random sign flip or a bootstrap resample draws
over all ``n_queries`` rows; a column's statistic on the draw is computed over its defined rows
(NaN rows flip to nothing; a bootstrap resample's mean of a column is Σ c_i x_i / Σ c_i over the
column's defined rows, c_i the number of times query i was drawn), which is the statistic of the
column applied to the resampled queries. Without NaN this is the plain bootstrap of the mean.

Determinism. Randomness comes from ``numpy.random.default_rng(seed)`` only: random signs from whole
64-bit outputs of the bit generator, resampling indices from ``integers(0, n, (chunk, n))`` chunk after
chunk (the draws of ``scipy.stats.bootstrap`` with the same generator); neither depends on the
chunk size or the number of threads. The resampled statistics are sums Σ c_i x_i over chunks of about
4 million random draws (:mod:`.resample`, which also says how they are computed fast), so memory stays
at a few tens of MB whatever the size. A multi-threaded BLAS adds up a matrix product in another order
with another number of threads, so the values are first rounded to a grid on which every such sum is
exact (:func:`exact_grid`; a value moves by at most n · max|x| · 2⁻⁵²): the sums, and so every p-value
and interval, are the same bits whatever the number of threads. A column's result depends only on its
own values, the number of rows, the seed and the number of resamples, not on the other columns.

Tests (two-sided; ``d`` = the paired differences of a column, ``n`` its length):

* **Randomization** (sign-flip permutation test; Fisher 1935, Smucker, Allan & Carterette, CIKM 2007):
  T = Σ d_i over the defined d_i; each of B random sign vectors s gives T* = Σ s_i d_i;
  p = (b + 1) / (B + 1), b = #{|T*| ≥ |T|} (Phipson & Smyth 2010). Comparisons allow a relative
  tolerance of 1e-9 · Σ|d_i| so that sums equal in exact arithmetic count as equal.
* **Paired t-test** (Student 1908): t = mean(d) / (sd(d) / √n), df = n − 1, p = I_{df/(df+t²)}(df/2, 1/2)
  (the regularized incomplete beta function, evaluated here by its continued fraction). Equals
  ``scipy.stats.ttest_rel``. When every d_i is 0, p = 1 (scipy: NaN); n < 2 gives NaN.
* **Wilcoxon signed-rank** (Wilcoxon 1945), with scipy's defaults (``scipy.stats.wilcoxon``,
  ``zero_method="wilcox"``, ``correction=False``, ``method="auto"``): zero differences are dropped
  before ranking, tied |d| get average ranks, W+ = sum of the ranks of the positive d. With n ≤ 50
  differences (counting zeros), no zeros and no ties: the exact null distribution of W+. With n ≤ 13
  and zeros or ties: the exact distribution over all 2^n sign flips of d. Otherwise the normal
  approximation z = (W+ − n'(n'+1)/4) / σ, σ² = (n'(n'+1)(2n'+1) − Σ(t³ − t)/2) / 24 over the n'
  non-zero differences and tie group sizes t, without continuity correction.
* **Paired bootstrap** (studentized; Efron & Tibshirani 1993, Alg. 16.2; Sakai, SIGIR 2006): the
  differences are shifted to mean 0, w = d − mean(d); each of B resamples w* of the queries gives
  t* = mean(w*) / (sd(w*) / √n*) over its n* defined values; p = (b + 1) / (B' + 1), b = #{|t*| ≥ |t|},
  B' the resamples with n* ≥ 2 (all of them unless the column has very few defined values).

Confidence intervals of a mean (Efron & Tibshirani 1993, ch. 13 and 14): B resamples of the queries
with replacement; **percentile**: the α/2 and 1 − α/2 quantiles (linear interpolation) of the
resampled means; **BCa**: those quantiles at α₁ = Φ(z₀ + (z₀ + z_{α/2}) / (1 − a(z₀ + z_{α/2}))) and
α₂ likewise with z_{1−α/2}, z₀ = Φ⁻¹(share of resampled statistics below the estimate, ties counted
half), a = Σ U³ / (6 (Σ U²)^{3/2}) from the jackknife, U_i = (n − 1)(mean of the jackknife statistics −
jackknife statistic i). Without NaN, the intervals equal ``scipy.stats.bootstrap(..., method=...,
rng=numpy.random.default_rng(seed))``. Resamples that hold no defined value of a column (possible only
when it has very few) are left out of its interval.

Corrections of m p-values (NaN p-values are not counted in m and stay NaN): **Holm** (1979) step-down,
p_(i) ← max_{j≤i} min(1, (m − j + 1) p_(j)); **Bonferroni** min(1, m p); **Benjamini–Hochberg** (1995)
step-up, p_(i) ← min_{j≥i} min(1, m p_(j) / j); **none**.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._errors import ConfigError

__all__ = [
    "CI_METHODS",
    "CORRECTIONS",
    "TESTS",
    "adjust_pvalues",
    "bca_interval",
    "betainc",
    "bootstrap_ci",
    "bootstrap_test",
    "exact_grid",
    "jackknife_means",
    "jackknife_sums",
    "normal_cdf",
    "normal_ppf",
    "percentile_interval",
    "randomization_test",
    "resample_means",
    "resample_sums",
    "t_sf",
    "t_test",
    "unique_masks",
    "wilcoxon_test",
]

from .resample import (
    as_matrix,
    check_count,
    check_seed,
    exact_grid,
    flip_sums,
    resample_means,
    resample_sums,
    unique_masks,
)
from .settings import CI_METHODS, CORRECTIONS, TESTS
from .special import betainc, normal_cdf, normal_ppf, t_sf

#: relative tolerance of the randomization test's comparisons (times Σ|d|)
PERM_RTOL = 1e-9

Progress = Callable[[float], None] | None
_as_matrix, _check_count, _check_seed = as_matrix, check_count, check_seed


def _out(v: np.ndarray, vector: bool) -> np.ndarray:
    return v[0] if vector else v


# --------------------------------------------------------------------------------------------------
# randomization (sign-flip permutation) test
# --------------------------------------------------------------------------------------------------


def randomization_test(
    d: np.ndarray, *, permutations: int = 10000, seed: int = 0, progress: Progress = None
) -> np.ndarray:
    """Two-sided paired randomization (sign-flip) test of mean(d) = 0, per column.

    p = (b + 1) / (B + 1) with b the number of the B random sign flips whose |Σ s_i d_i| reaches
    |Σ d_i| (see the module docstring). Columns with no defined value give NaN.

    >>> float(randomization_test(np.array([0.0, 0.0, 0.0]), permutations=99))
    1.0
    >>> p = randomization_test(np.r_[np.full(30, 0.2), [-0.1]], permutations=999, seed=1)
    >>> bool(p == 1 / 1000)
    True
    """
    x, vector = _as_matrix(d)
    B = _check_count("permutations", permutations)
    seed = _check_seed(seed)
    n, m = x.shape
    valid = ~np.isnan(x)
    dz = exact_grid(np.where(valid, x, 0.0))  # sums of any subset exact: the same bits on any BLAS
    total = dz.sum(axis=0)
    thresh = np.abs(total) - PERM_RTOL * np.abs(dz).sum(axis=0)
    hits = np.zeros(m, dtype=np.int64)
    if n and m:
        for flipped in flip_sums(dz, B, seed, progress):
            stat = total - 2.0 * flipped  # Σ s_i d_i with s_i = 1 - 2 flip_i
            hits += (np.abs(stat) >= thresh).sum(axis=0)
    p = (hits + 1.0) / (B + 1.0)
    p[~valid.any(axis=0)] = np.nan
    return _out(p, vector)


# --------------------------------------------------------------------------------------------------
# t-test and Wilcoxon
# --------------------------------------------------------------------------------------------------


def t_test(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Paired t-test per column: ``(t, p)``. See the module docstring for the edge cases.

    >>> t, p = t_test(np.array([0.1, 0.2, 0.3, 0.4]))
    >>> round(float(t), 6), round(float(p), 6)
    (3.872983, 0.030466)
    """
    x, vector = _as_matrix(d)
    m = x.shape[1]
    tt, pp = np.full(m, np.nan), np.full(m, np.nan)
    for j in range(m):
        v = x[:, j][~np.isnan(x[:, j])]
        n = v.size
        if n < 2:
            continue
        mean = float(v.mean())
        sd = float(v.std(ddof=1))
        if sd == 0.0:
            if mean == 0.0:
                tt[j], pp[j] = 0.0, 1.0
            else:
                tt[j], pp[j] = math.copysign(math.inf, mean), 0.0
            continue
        tt[j] = mean / (sd / math.sqrt(n))
    todo = ~np.isnan(tt) & np.isnan(pp)
    if todo.any():
        df = (~np.isnan(x)).sum(axis=0)[todo] - 1.0
        pp[todo] = np.minimum(1.0, t_sf(tt[todo], df))
    return _out(tt, vector), _out(pp, vector)


def _rank_abs(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks of |v| (1-based) and the sizes of the tie groups."""
    a = np.abs(v)
    order = np.argsort(a, kind="stable")
    s = a[order]
    start = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    sizes = np.diff(np.r_[start, s.size])
    avg = start + (sizes + 1) / 2.0
    ranks = np.empty(v.size)
    ranks[order] = np.repeat(avg, sizes)
    return ranks, sizes


def _wilcoxon_pmf(n: int) -> np.ndarray:
    """P(W+ = k), k = 0..n(n+1)/2, for n untied non-zero differences (each sign equally likely)."""
    c = np.ones(1)
    for k in range(1, n + 1):
        prev = c
        c = np.zeros(k * (k + 1) // 2 + 1)
        c[: prev.size] = prev * 0.5
        c[-prev.size :] += prev * 0.5
    return c


def wilcoxon_test(d: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Wilcoxon signed-rank test per column: ``(W+, p, method)``, method ``exact``, ``exact-flips``,
    ``normal`` or ``none`` (no non-zero difference: p = 1; no difference at all: NaN).

    >>> w, p, how = wilcoxon_test(np.array([0.5, 1.5, -0.25, 2.0, 3.0, 1.0]))
    >>> float(w), round(float(p), 6), how
    (20.0, 0.0625, ['exact'])
    """
    x, vector = _as_matrix(d)
    m = x.shape[1]
    stat, pv = np.full(m, np.nan), np.full(m, np.nan)
    methods: list[str] = []
    for j in range(m):
        v = x[:, j][~np.isnan(x[:, j])]
        n_all = v.size
        nz = v[v != 0]
        n = nz.size
        if n_all == 0:
            methods.append("none")
            continue
        if n == 0:
            stat[j], pv[j] = 0.0, 1.0
            methods.append("none")
            continue
        ranks, sizes = _rank_abs(nz)
        wp = float(ranks[nz > 0].sum())
        stat[j] = wp
        ties = bool((sizes > 1).any())
        zeros = n < n_all
        if n_all <= 50 and not ties and not zeros:
            pmf = _wilcoxon_pmf(n)
            k = round(wp)
            pv[j] = min(1.0, 2.0 * min(float(pmf[k:].sum()), float(pmf[: k + 1].sum())))
            methods.append("exact")
        elif n_all <= 13:
            # every sign flip of all n_all differences (zeros included, as scipy's permutation test)
            flips = ((np.arange(2**n_all)[:, None] >> np.arange(n_all)) & 1).astype(bool)
            signed = np.where(flips, -v, v)
            full = np.zeros(n_all)
            full[v != 0] = ranks
            null = ((signed > 0) * full).sum(axis=1)
            gamma = abs(np.finfo(np.float64).eps * 100 * wp)
            less = np.count_nonzero(null <= wp + gamma) / null.size
            greater = np.count_nonzero(null >= wp - gamma) / null.size
            pv[j] = min(1.0, 2.0 * min(less, greater))
            methods.append("exact-flips")
        else:
            mean = n * (n + 1) / 4.0
            var = (n * (n + 1) * (2 * n + 1) - float((sizes**3 - sizes).sum()) / 2.0) / 24.0
            z = (wp - mean) / math.sqrt(var)
            pv[j] = min(1.0, 2.0 * normal_cdf(-abs(z)))
            methods.append("normal")
    return _out(stat, vector), _out(pv, vector), methods


# --------------------------------------------------------------------------------------------------
# bootstrap
# --------------------------------------------------------------------------------------------------


def _check_level(confidence: float) -> float:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < float(confidence) < 1.0:
        raise ConfigError(f"confidence must be a number strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def percentile_interval(boot: np.ndarray, confidence: float = 0.95) -> np.ndarray:
    """``[lo, hi]`` per column of ``boot`` (resamples along axis 0, NaN resamples left out): its α/2
    and 1 − α/2 quantiles (linear interpolation)."""
    level = _check_level(confidence)
    b, vector = _as_matrix(boot)
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
    a, vector = _as_matrix(x)
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


def studentized_p(sums: np.ndarray, sums2: np.ndarray, counts: np.ndarray, d: np.ndarray) -> float:
    """p of the paired bootstrap test from the resampled sums of d and of d² and the resampled counts
    of defined values (same resamples); ``d``: the defined differences.

    With w = d − mean(d) and n* defined values in a resample: mean(w*) = sums/n* − mean(d) and
    var(w*) = n*/(n*−1) (sums2/n* − (sums/n*)²) (the shift does not change the variance).
    """
    n = d.size
    if n < 2:
        return math.nan
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    ok = counts >= 2
    used = int(ok.sum())
    if sd == 0.0:
        return 1.0 if mean == 0.0 else 1.0 / (used + 1.0)
    t_obs = abs(mean / (sd / math.sqrt(n)))
    k = np.where(ok, counts, 2.0)
    m_star = sums / k
    num = m_star - mean
    var = np.maximum(sums2 / k - m_star**2, 0.0) * k / (k - 1.0)
    se = np.sqrt(var / k)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where(num == 0.0, 0.0, np.abs(num) / se)
    hits = np.count_nonzero(ok & (t_star >= t_obs * (1.0 - 1e-12)))
    return (hits + 1.0) / (used + 1.0)


def bootstrap_test(d: np.ndarray, *, resamples: int = 10000, seed: int = 0, progress: Progress = None) -> np.ndarray:
    """Two-sided paired (studentized) bootstrap test of mean(d) = 0, per column.

    >>> bool(bootstrap_test(np.full(20, 0.3) + np.linspace(0, 0.01, 20), resamples=199) == 1 / 200)
    True
    """
    a, vector = _as_matrix(d)
    m = a.shape[1]
    sums, counts = resample_sums(np.hstack([a, a**2]), resamples=resamples, seed=seed, progress=progress)
    p = np.full(m, np.nan)
    for j in range(m):
        v = a[:, j][~np.isnan(a[:, j])]
        if v.size:
            p[j] = studentized_p(sums[:, j], sums[:, m + j], counts[:, j], v)
    return _out(p, vector)


# --------------------------------------------------------------------------------------------------
# multiple comparisons
# --------------------------------------------------------------------------------------------------


def adjust_pvalues(p: np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values for the family of all non-NaN entries of ``p``.

    >>> adjust_pvalues(np.array([0.01, 0.04, 0.03]), "holm").round(6).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues(np.array([0.01, 0.04, 0.03]), "bh").round(6).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in CORRECTIONS:
        raise ConfigError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    v = p[ok]
    if method == "none":
        adj = v.copy()
    elif method == "bonferroni":
        adj = np.minimum(1.0, v * m)
    else:
        order = np.argsort(v, kind="stable")
        s = v[order]
        i = np.arange(1, m + 1)
        if method == "holm":
            steps = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * s))
        else:  # bh
            steps = np.minimum.accumulate(np.minimum(1.0, m * s / i)[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = steps
    out[ok] = adj
    return out
