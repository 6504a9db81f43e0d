"""Dynamic K: how many passages each query should get, by utility.

Per query the cumulative utility U(k) = Σ_{i<=k} u_i (optionally u_i / log2(i + 1)), with U(0) = 0;
the optimal k is the smallest k >= 0 maximising U(k), so an empty list, or one whose every prefix has
U(k) <= 0, has optimal k = 0 (pass nothing). :func:`dynamic_k_summary` adds the mean, median and
histogram of the optimal k and the single fixed K maximising the mean of U(K).

>>> optimal_k(np.array([0, 5, 7]), np.array([1.0, -0.5, 1.0, -1.0, 0.0, -1.0, 0.5]))
array([3, 0])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.segments import seg_reduce, within_ranks

__all__ = ["dynamic_k_parts", "dynamic_k_summary", "optimal_k", "summary_of"]


def _cumulative(
    r_off: np.ndarray, u: np.ndarray, discount: bool, max_k: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row gain w (u or u / log2(rank + 1); 0 beyond max_k), ranks, and the within-query prefix sums."""
    r_off = np.asarray(r_off, dtype=np.int64)
    u = np.asarray(u, dtype=np.float64)
    rank = within_ranks(r_off)
    w = u / np.log2(rank + 1.0) if discount else u.copy()
    if max_k is not None:
        w[rank > max_k] = 0.0
    return w, rank, prefix_sums(r_off, rank, w)


def prefix_sums(r_off: np.ndarray, rank: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Within-query prefix sums of ``w``, each query's summed on its own from its first row, rank by
    rank: the same bits however the queries are batched (a running sum over all queries, less the sum
    before each query, would carry the other queries' rounding into every query's sums).

    >>> prefix_sums(np.array([0, 2, 3]), np.array([1, 2, 1]), np.array([0.1, 0.2, 0.3])).tolist()
    [0.1, 0.30000000000000004, 0.3]
    """
    out = np.empty_like(w)
    if w.size == 0:
        return out
    seg = np.repeat(np.arange(r_off.size - 1, dtype=np.int64), np.diff(r_off))
    order = np.argsort(rank, kind="stable")  # rank 1 of every query, then rank 2, ...
    bounds = np.r_[0, np.cumsum(np.bincount(rank)[1:])]
    running = np.zeros(r_off.size - 1)
    for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        rows = order[start:end]
        at = seg[rows]  # one row of each of these queries
        running[at] += w[rows]
        out[rows] = running[at]
    return out


_TOL = 1e-9


def _optimal_from(r_off: np.ndarray, rank: np.ndarray, cs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Optimal k per query from the within-query prefix sums, and the best U (>= 0) per query."""
    n_q = r_off.size - 1
    out = np.zeros(n_q, dtype=np.int64)
    if cs.size == 0:
        return out, np.zeros(n_q)
    best = seg_reduce(np.maximum, cs, r_off, -np.inf)
    tol = _TOL * np.maximum(1.0, np.abs(np.where(np.isfinite(best), best, 0.0)))
    hit = np.flatnonzero(cs >= np.repeat(best - tol, np.diff(r_off)))
    seg = np.searchsorted(r_off, hit, side="right") - 1
    first = np.r_[True, seg[1:] != seg[:-1]] if seg.size else np.zeros(0, dtype=bool)
    out[seg[first]] = rank[hit[first]]
    none = ~(best > tol)
    out[none] = 0
    return out, np.where(none, 0.0, best)


def optimal_k(r_off: np.ndarray, u: np.ndarray, discount: bool = False, max_k: int | None = None) -> np.ndarray:
    """Per query the smallest k >= 0 maximising U(k) = Σ_{i<=k} u_i (``discount``: u_i / log2(i + 1)),
    U(0) = 0, k <= ``max_k`` when given. An empty list, or one whose prefixes all have U(k) <= 0,
    gives 0. Prefix sums equal within 1e-9 (relative) count as ties, so float noise cannot move k.

    >>> optimal_k(np.array([0, 4]), np.array([0.5, 0.0, 1.0, -2.0]))
    array([3])
    >>> optimal_k(np.array([0, 0, 2]), np.array([-1.0, 1.0]))
    array([0, 0])
    """
    r_off = np.asarray(r_off, dtype=np.int64)
    _, rank, cs = _cumulative(r_off, u, discount, max_k)
    return _optimal_from(r_off, rank, cs)[0]


def dynamic_k_parts(
    r_off: np.ndarray, u: np.ndarray, discount: bool = False, max_k: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What :func:`dynamic_k_summary` reads of a block of whole queries: per query the optimal k and
    U at it, per row the gain w (u or its discounted value; 0 beyond ``max_k``)."""
    r_off = np.asarray(r_off, dtype=np.int64)
    w, rank, cs = _cumulative(r_off, u, discount, max_k)
    ks, at_opt = _optimal_from(r_off, rank, cs)
    return ks, at_opt, w


def dynamic_k_summary(
    r_off: np.ndarray, u: np.ndarray, discount: bool = False, max_k: int | None = None
) -> dict[str, Any]:
    """The optimal k over queries (mean, median, histogram ``counts[k]`` for k = 0..max) and the
    single fixed K (0 <= K <= the longest list, or ``max_k``) maximising the mean over queries of
    U(K); a list shorter than K contributes all its rows. Ties go to the smallest K.

    >>> s = dynamic_k_summary(np.array([0, 3, 6]), np.array([1.0, 1.0, -1.0, 1.0, -1.0, -1.0]))
    >>> s["mean"], s["median"], s["histogram"], s["best_fixed_k"], s["mean_utility_at_best_fixed_k"]
    (1.5, 1.5, [0, 1, 1], 1, 1.0)
    """
    r_off = np.asarray(r_off, dtype=np.int64)
    return summary_of(r_off, *dynamic_k_parts(r_off, u, discount, max_k), discount, max_k)


def summary_of(
    r_off: np.ndarray, ks: np.ndarray, at_opt: np.ndarray, w: np.ndarray, discount: bool, max_k: int | None
) -> dict[str, Any]:
    """:func:`dynamic_k_summary` from its parts (:func:`dynamic_k_parts`) of the queries in ``r_off``'s order."""
    n_q = r_off.size - 1
    if n_q == 0:
        return {
            "n_queries": 0,
            "discount": discount,
            "max_k": max_k,
            "mean": None,
            "median": None,
            "histogram": [],
            "best_fixed_k": None,
            "mean_utility_at_best_fixed_k": None,
            "mean_utility_at_optimal_k": None,
        }
    rank = within_ranks(r_off)
    longest = int(np.diff(r_off).max()) if n_q else 0
    top = longest if max_k is None else min(max_k, longest)
    per_k = np.bincount(rank, weights=w, minlength=top + 1)[: top + 1] if w.size else np.zeros(top + 1)
    per_k[0] = 0.0
    mean_u = np.cumsum(per_k) / n_q
    best_mean = float(mean_u.max())
    best_k = int(np.flatnonzero(mean_u >= best_mean - _TOL * max(1.0, abs(best_mean)))[0])
    return {
        "n_queries": int(n_q),
        "discount": bool(discount),
        "max_k": max_k,
        "mean": float(ks.mean()),
        "median": float(np.median(ks)),
        "histogram": np.bincount(ks).astype(int).tolist(),
        "best_fixed_k": best_k,
        "mean_utility_at_best_fixed_k": float(mean_u[best_k]),
        "mean_utility_at_optimal_k": float(at_opt.mean()),
    }
