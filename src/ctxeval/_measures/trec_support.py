"""Segment arithmetic of the trec_eval kernels, done the way trec_eval 10.0's C code does it.

Running sums accumulate sequentially in rank order (:func:`seg_prefix` gives exact sequential prefix
sums where ``np.cumsum`` would pair them), logarithms of integers come from the C library, rounding is
C's ``lround`` and ``(long)`` truncation; the ideal ranking per query (:class:`Ideal`) and the relevant-
row counts are shared by the kernels of ``trec_kernels``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import count_before

__all__ = [
    "ELEVEN",
    "INFAP_EPSILON",
    "MIN_GEO_MEAN",
    "Ideal",
    "gain_map",
    "level_gain",
    "log2",
    "log2_int",
    "lround",
    "num_rel",
    "num_rel_ret",
    "offsets",
    "p_powers",
    "rel_count_incl",
    "rel_rows",
    "row_gains",
    "seg_prefix",
    "seg_suffix_max",
    "seq_sum",
    "trunc_long",
    "with_trec_levels",
]

INFAP_EPSILON = 0.00001  # trec_eval.h
MIN_GEO_MEAN = 0.00001  # trec_eval.h: floor of gm_map / gm_bpref before the log
ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------

_PREFIX_CELLS = 1 << 22
_LOG2: np.ndarray = np.array([-math.inf, 0.0])


def log2_int(x: np.ndarray) -> np.ndarray:
    """log2 of non-negative integers, from the C library (as trec_eval's ``log2``), via a table."""
    global _LOG2
    x = np.asarray(x, dtype=np.int64)
    if x.size == 0:
        return np.zeros(0)
    top = int(x.max())
    if top >= _LOG2.size:
        size = max(top + 1, 2 * _LOG2.size)
        _LOG2 = np.array([-math.inf] + [math.log2(i) for i in range(1, size)])
    return _LOG2[x]


def log2(x: np.ndarray) -> np.ndarray:
    """log2 of arbitrary doubles, element by element from the C library (few distinct values)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return np.zeros(0)
    u, inv = np.unique(x, return_inverse=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = np.array([math.log2(v) if v > 0 else float(np.log2(v)) for v in u.tolist()])
    return vals[inv.reshape(-1)]


def seq_sum(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    """Per segment, the sum of ``values`` added one by one in input order (as a C loop does)."""
    if values.size == 0:
        return np.zeros(n)
    return np.bincount(seg, weights=np.asarray(values, dtype=np.float64), minlength=n)


def offsets(seg: np.ndarray, n: int) -> np.ndarray:
    """Segment offsets of a grouped (ascending) segment-id array."""
    return np.searchsorted(seg, np.arange(n + 1), side="left").astype(np.int64)


def seg_prefix(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    """Exact inclusive running sums per segment, each added sequentially from 0 (as C does).

    Segments are laid out as rows of a zero-padded matrix (longest first, in chunks) and summed
    with ``np.cumsum(axis=1)``, which is sequential; padding with zeros does not change a sum.
    """
    values = np.asarray(values, dtype=np.float64)
    out = np.empty(values.size)
    if values.size == 0:
        return out
    off = offsets(seg, n)
    lens = np.diff(off)
    order = np.argsort(-lens, kind="stable")
    order = order[lens[order] > 0]
    i = 0
    while i < order.size:
        width = int(lens[order[i]])
        take = max(1, _PREFIX_CELLS // width)
        segs = order[i : i + take]
        sl = lens[segs]
        rows = np.repeat(np.arange(segs.size), sl)
        cols = np.arange(int(sl.sum())) - np.repeat(np.cumsum(sl) - sl, sl)
        src = np.repeat(off[segs], sl) + cols
        grid = np.zeros((segs.size, width))
        grid[rows, cols] = values[src]
        np.cumsum(grid, axis=1, out=grid)
        out[src] = grid[rows, cols]
        i += take
    return out


def seg_suffix_max(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    """For each row, the maximum of ``values`` over it and the later rows of its segment (exact:
    the values are replaced by their integer order, offset per segment, before accumulating)."""
    if values.size == 0:
        return values.astype(np.float64)
    u, inv = np.unique(values, return_inverse=True)
    inv = inv.reshape(-1).astype(np.int64)
    width = np.int64(u.size)
    off = (np.int64(n) - seg[::-1].astype(np.int64)) * width
    acc = np.maximum.accumulate(inv[::-1] + off) - off
    return u[acc[::-1]]


def lround(x: np.ndarray) -> np.ndarray:
    """C ``lround``: nearest integer, halves away from zero (exact, unlike floor(x + 0.5))."""
    a = np.abs(x)
    f = np.floor(a)
    r = f + (a - f >= 0.5)
    return np.copysign(r, x).astype(np.int64)


def trunc_long(x: np.ndarray) -> np.ndarray:
    """C ``(long) x``: truncation toward zero."""
    return np.trunc(x).astype(np.int64)


def gain_map(gains: Any) -> dict[int, float]:
    if not gains:
        return {}
    items = gains.items() if isinstance(gains, Mapping) else gains
    return {int(k): float(v) for k, v in items}


def level_gain(grades: np.ndarray, gmap: Mapping[int, float]) -> np.ndarray:
    """trec_eval's ``get_gain`` for judged (non-negative) grades: the custom gain, else the grade."""
    out = grades.astype(np.float64)
    for g, v in gmap.items():
        out[grades == g] = v
    return out


def row_gains(d: EvalData, gmap: Mapping[int, float]) -> np.ndarray:
    """Gain of every judged retrieved row; a row with a negative grade (a level of
    :func:`with_trec_levels`) has the gain given for that level, else 0."""
    g = d.j_grade
    out = np.where(g >= 0, level_gain(np.maximum(g, 0), gmap), 0.0)
    for level, gain in gmap.items():
        if level < 0:
            out[g == level] = gain
    return out


def with_trec_levels(d: EvalData) -> EvalData:
    """``d`` with trec_eval's relevance levels for retrieved docs outside the judged grades: every
    retrieved doc absent from the qrels becomes a row of level -1 (``RELVALUE_NONPOOL``), a doc the
    qrels hold with a negative grade a row of level -2 (``RELVALUE_UNJUDGED``), and the ideal ranking
    keeps the non-negative grades only (trec_eval's ``form_res_rels``). A gain that ``-m`` gives a
    negative level applies to those rows, as in trec_eval."""
    judged = np.zeros(d.n_rows, dtype=bool)
    judged[d.j_idx] = True
    nonpool = np.flatnonzero(~judged)
    idx = np.concatenate([d.j_idx, nonpool])
    grade = np.concatenate([np.where(d.j_grade < 0, -2, d.j_grade), np.full(nonpool.size, -1, dtype=np.int64)])
    order = np.argsort(idx, kind="stable")
    q_seg = np.repeat(np.arange(d.n_queries), np.diff(d.q_off))
    keep = d.q_grade >= 0
    q_off = np.r_[0, np.cumsum(np.bincount(q_seg[keep], minlength=d.n_queries))].astype(np.int64)
    return EvalData(
        d.qids, d.r_off, idx[order], grade[order], q_off, d.q_grade[keep], d.has_run, d.accounting, d.ties, d.max_grade
    )


class Ideal:
    """Per query, the positive gains of the judged docs in decreasing order (trec_eval's ideal
    ranking: gain levels walked from the highest gain down, stopping at the first gain <= 0)."""

    def __init__(self, d: EvalData, gmap: Mapping[int, float]) -> None:
        n = d.n_queries
        keep = d.q_grade >= 0
        grade = d.q_grade[keep]
        seg = d.q_seg[keep]
        gain = level_gain(grade, gmap)
        pos = gain > 0
        gain, seg = gain[pos], seg[pos]
        if gmap:
            order = np.lexsort((-gain, seg))
            gain, seg = gain[order], seg[order]
        self.gain = gain
        self.seg = seg
        self.count = np.bincount(seg, minlength=n).astype(np.int64)  # I: ideal positions with gain > 0
        self.off = np.r_[0, np.cumsum(self.count)].astype(np.int64)
        self.pos = np.arange(gain.size, dtype=np.int64) - self.off[:-1][seg]  # 0-based
        self.terms = gain / log2_int(self.pos + 2)
        self.prefix = seg_prefix(self.terms, seg, n)  # ideal DCG through each position
        self.total = seq_sum(self.terms, seg, n)

    def at(self, q: np.ndarray, i: np.ndarray) -> np.ndarray:
        """Ideal DCG through position ``min(i, I_q - 1)`` for (query, 0-based position) pairs."""
        last = np.minimum(i, self.count[q] - 1)
        idx = self.off[:-1][q] + np.maximum(last, 0)
        out = np.zeros(q.size)
        ok = self.count[q] > 0
        out[ok] = self.prefix[idx[ok]]
        return out


def rel_rows(d: EvalData, rel: int) -> np.ndarray:
    """Mask over judged rows: relevant at level ``rel`` (judged grade >= rel and >= 0)."""
    return (d.j_grade >= rel) & (d.j_grade >= 0)


def rel_count_incl(d: EvalData, rel: int) -> tuple[np.ndarray, np.ndarray]:
    """(mask of relevant judged rows, running count of relevant rows through each judged row)."""
    mask = rel_rows(d, rel)
    cnt = count_before(mask, d.j_seg, d.n_queries) + mask
    return mask, cnt


def num_rel(d: EvalData, rel: int) -> np.ndarray:
    """trec_eval's num_rel: judged docs with grade >= max(rel, 0)."""
    return np.asarray(d.num_rel(max(int(rel), 0)), dtype=np.int64)


def num_rel_ret(d: EvalData, rel: int) -> np.ndarray:
    return np.bincount(d.j_seg[rel_rows(d, rel)], minlength=d.n_queries).astype(np.int64)


def p_powers(p: float, n: int) -> np.ndarray:
    """``cur_p`` after i steps of ``cur_p = cur_p * p`` from 1.0, for i = 0..n (sequential products)."""
    steps = np.full(n + 1, float(p))
    steps[0] = 1.0
    return np.cumprod(steps)
