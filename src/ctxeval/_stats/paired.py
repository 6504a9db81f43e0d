"""Paired significance tests, bootstrap confidence intervals and multiple-comparison corrections.

The tests and the intervals share one resampling scheme, one random stream and one exactness
device, :func:`exact_grid`, which must stay identical for both; the special functions (incomplete
beta, t and normal distributions) live in :mod:`.special`, the intervals in :mod:`.intervals`.

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
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .resample import as_matrix, check_count, check_seed, exact_grid, flip_sums, resample_sums
from .special import normal_cdf, t_sf

__all__ = [
    "PERM_RTOL",
    "TESTS",
    "TEST_NAMES",
    "bootstrap_test",
    "randomization_test",
    "studentized_p",
    "t_test",
    "wilcoxon_test",
]

#: the paired two-sided tests, by the name compare's ``test`` setting takes
TESTS = ("randomization", "t", "wilcoxon", "bootstrap")
TEST_NAMES = {
    "randomization": "paired randomization test (random sign flips), two-sided, p = (b + 1) / (B + 1)",
    "t": "paired t-test, two-sided",
    "wilcoxon": "Wilcoxon signed-rank test, two-sided (scipy's defaults: zeros dropped, exact for n <= 50 without ties or zeros, every sign flip for n <= 13 with them, normal approximation with tie correction otherwise)",
    "bootstrap": "paired studentized bootstrap test, two-sided, p = (b + 1) / (B + 1)",
}

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
