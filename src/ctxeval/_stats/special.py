"""Special functions of the tests: the regularized incomplete beta function, Student's t survival
function and the standard normal distribution (numpy and the standard library only, so that scipy stays
an optional oracle of the tests rather than a dependency)."""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np

__all__ = ["betainc", "normal_cdf", "normal_ppf", "t_cdf", "t_ppf", "t_sf"]


_lgamma = np.frompyfunc(math.lgamma, 1, 1)


def _stirling_corr(x: np.ndarray) -> np.ndarray:
    """ln Γ(x) − ((x − ½) ln x − x + ½ ln 2π), by its asymptotic series (error < 1e-15 for x ≥ 50)."""
    x2 = x * x
    return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - 1.0 / (1680.0 * x2)) / x2) / x2) / x


def _lbeta(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """ln B(a, b). When the larger argument is ≥ 50, ln Γ(g + s) − ln Γ(g) is taken from Stirling's
    series, s ln g + (g + s − ½) ln(1 + s/g) − s + corr(g + s) − corr(g), instead of as the difference of
    two large logarithms (which would lose about 1e-9 of relative accuracy at g = 1e6)."""
    big, small = np.maximum(a, b), np.minimum(a, b)
    direct = (_lgamma(a) + _lgamma(b) - _lgamma(a + b)).astype(np.float64)
    g = np.maximum(big, 50.0)
    diff = (
        small * np.log(g)
        + (g + small - 0.5) * np.log1p(small / g)
        - small
        + _stirling_corr(g + small)
        - _stirling_corr(g)
    )
    return np.where(big >= 50.0, _lgamma(small).astype(np.float64) - diff, direct)


def _betacf(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Continued fraction of the incomplete beta function (modified Lentz; Numerical Recipes 6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = np.ones_like(x)
    dd = 1.0 - qab * x / qap
    dd = np.where(np.abs(dd) < tiny, tiny, dd)
    dd = 1.0 / dd
    h = dd.copy()
    done = np.zeros(x.shape, dtype=bool)
    for m in range(1, 20001):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        dd = 1.0 + aa * dd
        dd = np.where(np.abs(dd) < tiny, tiny, dd)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        dd = 1.0 / dd
        h = np.where(done, h, h * dd * c)
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        dd = 1.0 + aa * dd
        dd = np.where(np.abs(dd) < tiny, tiny, dd)
        c = 1.0 + aa / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        dd = 1.0 / dd
        delta = dd * c
        h = np.where(done, h, h * delta)
        done |= np.abs(delta - 1.0) < 1e-15
        if done.all():
            break
    return h


def betainc(a: np.ndarray | float, b: np.ndarray | float, x: np.ndarray | float) -> np.ndarray:
    """Regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1.

    I_x(a, b) = x^a (1 − x)^b / (a B(a, b)) · CF(a, b, x), with the continued fraction CF evaluated
    where it converges fast (x < (a + 1) / (a + b + 2)) and I_x(a, b) = 1 − I_{1−x}(b, a) elsewhere.

    >>> round(float(betainc(2.0, 3.0, 0.4)), 12)  # 1 - (0.6^4 + 4 * 0.4 * 0.6^3)
    0.5248
    """
    a, b, x = np.broadcast_arrays(
        np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), np.asarray(x, dtype=np.float64)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        return _betainc(a, b, x, 1.0 - x, np.log(x), np.log1p(-x))


def _betainc(
    a: np.ndarray, b: np.ndarray, x: np.ndarray, y: np.ndarray, log_x: np.ndarray, log_y: np.ndarray
) -> np.ndarray:
    """I_x(a, b) given x, y = 1 − x and their logarithms, each computed as precisely as the caller can
    (for Student's t, ln x = −ln(1 + t²/df) keeps full accuracy when df is large)."""
    shape = x.shape
    a, b, x, y, log_x, log_y = (np.ravel(v) for v in (a, b, x, y, log_x, log_y))
    out = np.full(x.shape, np.nan)
    out[x <= 0] = 0.0
    out[y <= 0] = 1.0
    inner = (x > 0) & (y > 0) & (a > 0) & (b > 0)
    if inner.any():
        ai, bi, xi, yi, lx, ly = a[inner], b[inner], x[inner], y[inner], log_x[inner], log_y[inner]
        flip = xi >= (ai + 1.0) / (ai + bi + 2.0)
        aa, bb = np.where(flip, bi, ai), np.where(flip, ai, bi)
        xx = np.where(flip, yi, xi)
        lxx, lyy = np.where(flip, ly, lx), np.where(flip, lx, ly)
        front = np.exp(aa * lxx + bb * lyy - _lbeta(aa, bb)) / aa
        val = front * _betacf(aa, bb, xx)
        out[inner] = np.where(flip, 1.0 - val, val)
    return out.reshape(shape)


def t_sf(t: np.ndarray | float, df: np.ndarray | float) -> np.ndarray:
    """Two-sided tail P(|T| ≥ |t|) of Student's t with df degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).

    >>> round(float(t_sf(2.0, 10.0)), 10)  # scipy.stats.t.sf(2, 10) * 2
    0.0733880348
    """
    t, df = np.broadcast_arrays(np.abs(np.asarray(t, dtype=np.float64)), np.asarray(df, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = t * t / df  # x = 1 / (1 + u), 1 - x = u / (1 + u)
        x = np.where(np.isinf(t), 0.0, 1.0 / (1.0 + u))
        y = np.where(np.isinf(t), 1.0, u / (1.0 + u))
        log_x = -np.log1p(u)
        log_y = np.log(u) - np.log1p(u)
        return _betainc(df / 2.0, np.full(x.shape, 0.5), x, y, log_x, log_y)


_NORMAL = NormalDist()


def normal_cdf(z: float) -> float:
    """Φ(z) = erfc(−z/√2) / 2."""
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def normal_ppf(p: float) -> float:
    """Φ⁻¹(p); ±inf at 0 and 1."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) of Student's t with df degrees of freedom (one-sided, from :func:`t_sf`'s two-sided tail).

    >>> round(t_cdf(-2.0, 10.0), 10)  # scipy.stats.t.cdf(-2, 10)
    0.0366940174
    """
    half = 0.5 * float(t_sf(t, df))
    return half if t < 0 else 1.0 - half


def _t_pdf(t: float, df: float) -> float:
    """Student's t density: Γ((df+1)/2) / (Γ(df/2) √(df π)) · (1 + t²/df)^(−(df+1)/2)."""
    log_c = math.lgamma((df + 1.0) / 2.0) - math.lgamma(df / 2.0) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1.0) / 2.0 * math.log1p(t * t / df))


@functools.lru_cache(maxsize=4096)
def t_ppf(q: float, df: float) -> float:
    """The q quantile of Student's t with df degrees of freedom (0 < q < 1): Newton's method on
    :func:`t_cdf` from the normal quantile, kept inside a bracket found by doubling (a step that would
    leave it bisects instead), until a step moves less than a few units in the last place.

    >>> round(t_ppf(0.975, 10), 4), round(t_ppf(0.05, 1e6), 4)
    (2.2281, -1.6449)
    """
    if not 0.0 < q < 1.0:
        return -math.inf if q <= 0.0 else math.inf
    lo, hi = -1.0, 1.0
    while t_cdf(lo, df) > q:
        lo *= 2.0
    while t_cdf(hi, df) < q:
        hi *= 2.0
    x = min(max(normal_ppf(q), lo), hi)
    for _ in range(200):
        f = t_cdf(x, df) - q
        if f < 0.0:
            lo = x
        else:
            hi = x
        dens = _t_pdf(x, df)
        step = f / dens if dens > 0.0 else math.inf
        nxt = x - step
        if not lo < nxt < hi:
            nxt = (lo + hi) / 2.0
        if abs(nxt - x) <= 4.0 * math.ulp(max(abs(x), 1e-300)) or nxt in (lo, hi):
            return nxt
        x = nxt
    return x
