"""The ideal context at a budget of B tokens: exact optima over items with a gain and a token weight.

Every query holds candidate items (the judged chunks, or the evidence units of span labels), item i
with a gain g_i >= 0 and an integer weight w_i >= 0 (its tokens). Three optima, each exact:

* :func:`set_optimum` (the set measures, RA-nWG's G_ideal): max Σ_{i∈S} g_i subject to Σ_{i∈S} w_i
  <= B: the 0/1 knapsack, by dynamic programming over the weights (pseudo-polynomial, O(n·B) per
  query).
* :func:`ordered_optimum` (the rank-discounted measures, IDCG): the best *ordered* selection,
  max over sequences (s_1, ..., s_m) of distinct items with Σ_j w_{s_j} <= B of Σ_j g_{s_j} · d_j,
  where d_1 >= d_2 >= ... >= 0 are the position discounts (1 / log2(j + 1) for DCG).

  *Exchange argument.* Fix the chosen set S. If s_j and s_{j+1} are out of order (g_{s_j} <
  g_{s_{j+1}}), swapping them changes the value by (g_{s_{j+1}} − g_{s_j}) (d_j − d_{j+1}) >= 0, and
  the weight not at all; so some optimal sequence lists its set by gain, descending. The optimum
  is therefore max over sets S of Σ_j g_(j)(S) d_j with g_(1) >= g_(2) >= ... the gains of S sorted.
  *The DP.* Sort all items by gain, descending (ties in any order: equal gains give equal values
  whichever comes first). V_i[j][c] = the best value of a set of exactly j items among the first i
  whose weights sum to at most c, those items placed at positions 1..j in that order. Because the
  items come by gain descending, an item added to a set of j items goes to position j + 1:
  V_{i+1}[j + 1][c] = max(V_i[j + 1][c], V_i[j][c − w] + g · d_{j+1}) for c >= w, V_0[0][·] = 0,
  V_0[j > 0][·] = −∞. Every set is reached with its items in sorted order, so max_j V_n[j][B] is
  the optimum: O(n · m · B) per query, m the most items that fit. Items of gain <= 0 never help
  (they add nothing, or less than nothing, at the end of a sequence) and are left out.
  *Equal lengths.* When every item weighs L, the sets that fit are those of at most K = ⌊B/L⌋
  items, and the best of them is the K largest gains in order: the K-slot ideal (IDCG@K).
* :func:`count_optimum` (N-Recall's denominator): the most items that fit, by taking the lightest
  first (a set of m items fits iff the m lightest fit).

Each query is solved on its own table, an item a step by numpy slices (a table of at most
(B + 1) x (m + 1) cells): the same values whatever the other queries. Shortcuts that give the same value:
a query whose items all fit takes them all (sorted by gain), and the table stops at the largest
weight sum the query can reach.
"""

from __future__ import annotations

import numpy as np

from .segments import offsets

__all__ = ["count_optimum", "ordered_optimum", "set_optimum"]


def _segments(off: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lens = np.diff(off)
    return np.repeat(np.arange(lens.size, dtype=np.int64), lens), lens


def _checked(gain: np.ndarray, weight: np.ndarray, budget: int) -> tuple[np.ndarray, np.ndarray]:
    g = np.asarray(gain, dtype=np.float64)
    w = np.asarray(weight, dtype=np.int64)
    if g.shape != w.shape:
        raise ValueError("gains and weights must align")
    if w.size and int(w.min()) < 0:
        raise ValueError("weights must be >= 0")
    if budget < 0:
        raise ValueError("the budget must be >= 0")
    return g, w


def _useful(off: np.ndarray, g: np.ndarray, w: np.ndarray, budget: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The items that can matter (gain > 0, weight <= budget), per query, by gain descending."""
    seg, _ = _segments(off)
    keep = (g > 0) & (w <= budget)
    seg, g, w = seg[keep], g[keep], w[keep]
    order = np.lexsort((w, -g, seg))  # gain descending; lighter first among equal gains
    n_q = off.size - 1
    return offsets(np.bincount(seg, minlength=n_q)), g[order], w[order]


def set_optimum(off: np.ndarray, gain: np.ndarray, weight: np.ndarray, budget: int) -> np.ndarray:
    """Per query (items ``[off[q], off[q+1])``): max Σ gain over the subsets whose weights sum to at
    most ``budget`` (the 0/1 knapsack; see the module docstring).

    >>> set_optimum(np.array([0, 3]), np.array([6.0, 10.0, 12.0]), np.array([1, 2, 3]), 5)
    array([22.])
    """
    g, w = _checked(gain, weight, budget)
    off2, g, w = _useful(np.asarray(off, dtype=np.int64), g, w, budget)
    seg, lens = _segments(off2)
    n_q = lens.size
    total_w = np.bincount(seg, weights=w, minlength=n_q).astype(np.int64)
    fits = total_w <= budget  # every item fits: take them all
    out = np.bincount(seg, weights=g, minlength=n_q).astype(np.float64)
    cap = np.minimum(total_w, budget)
    for q in np.flatnonzero(~fits):  # one table a query, items by slices (no gather: ~4x the blocks' speed)
        width = int(cap[q]) + 1
        table = np.zeros(width)
        for gi, wi in zip(g[off2[q] : off2[q + 1]].tolist(), w[off2[q] : off2[q + 1]].tolist()):
            np.maximum(table[wi:], table[: width - wi] + gi, out=table[wi:])
        out[q] = table[-1]
    return out


def ordered_optimum(
    off: np.ndarray, gain: np.ndarray, weight: np.ndarray, budget: int, discount: np.ndarray
) -> np.ndarray:
    """Per query: the best Σ_j g_{s_j} · discount[j - 1] over sequences of distinct items whose
    weights sum to at most ``budget`` (``discount`` non-increasing, one per position, long enough for
    every item of a query; see the module docstring for the exchange argument and the DP).

    >>> d = 1 / np.log2(np.arange(2, 10))
    >>> off, g, w = np.array([0, 3]), np.array([3.0, 2.0, 2.0]), np.array([4, 1, 1])
    >>> [round(float(ordered_optimum(off, g, w, b, d)[0]), 4) for b in (1, 2, 4, 5)]  # 2; 2 + 2/log2(3) twice; 3 + 2/log2(3)
    [2.0, 3.2619, 3.2619, 4.2619]
    """
    g, w = _checked(gain, weight, budget)
    disc = np.asarray(discount, dtype=np.float64)
    if disc.size > 1 and bool(np.any(np.diff(disc) > 0)):
        raise ValueError("discounts must not increase with the position")
    off2, g, w = _useful(np.asarray(off, dtype=np.int64), g, w, budget)
    n_q = off2.size - 1
    seg, lens = _segments(off2)
    if lens.size and int(lens.max()) > disc.size:
        raise ValueError(f"{int(lens.max())} items need as many discounts, got {disc.size}")
    pos = np.arange(g.size) - np.repeat(off2[:-1], lens)
    out = np.bincount(seg, weights=g * disc[pos] if g.size else g, minlength=n_q).astype(np.float64)
    total_w = np.bincount(seg, weights=w, minlength=n_q).astype(np.int64)
    fits = total_w <= budget  # every item fits: all of them, by gain descending
    m_max = count_optimum(off2, w, budget)  # the most items a set that fits can hold
    cap = np.minimum(total_w, budget)
    for q in np.flatnonzero(~fits):  # one table a query, items by slices (see set_optimum)
        width = int(cap[q]) + 1
        depth = int(m_max[q]) + 1
        table = np.full((depth, width), -np.inf)
        table[0, :] = 0.0
        gd = disc[: depth - 1]
        items = zip(g[off2[q] : off2[q + 1]].tolist(), w[off2[q] : off2[q + 1]].tolist())
        for t, (gi, wi) in enumerate(items):
            top = min(t + 1, depth - 1)  # after t items a set holds at most t of them
            cand = table[:top, : width - wi] + (gi * gd[:top])[:, None]
            np.maximum(table[1 : top + 1, wi:], cand, out=table[1 : top + 1, wi:])
        out[q] = table[:, -1].max()
    return out


def count_optimum(off: np.ndarray, weight: np.ndarray, budget: int) -> np.ndarray:
    """Per query: the most items whose weights sum to at most ``budget`` (the lightest first).

    >>> count_optimum(np.array([0, 3, 4]), np.array([5, 1, 2, 9]), 3)
    array([2, 0])
    """
    w = np.asarray(weight, dtype=np.int64)
    off = np.asarray(off, dtype=np.int64)
    seg, lens = _segments(off)
    if w.size == 0:
        return np.zeros(lens.size, dtype=np.int64)
    order = np.lexsort((w, seg))
    ws = w[order]
    cum = np.cumsum(ws)
    cum -= np.repeat(np.r_[0, cum][off[:-1]], lens)
    return np.bincount(seg[cum <= budget], minlength=lens.size).astype(np.int64)
