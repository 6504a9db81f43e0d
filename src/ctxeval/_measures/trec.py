"""The rest of trec_eval's ``all_trec`` set, as vectorised kernels over query segments.

Every kernel follows trec_eval 10.0's C code operation by operation where it matters for the
printed value: running sums are accumulated sequentially in rank order (``np.bincount`` adds its
weights in input order; :func:`_seg_prefix` gives exact sequential prefix sums), logarithms of
integers come from the C library (``math.log2``), and trec_eval's own quirks are kept (the
``(long)(p·R + 0.9)`` cut-off of ``11pt_avg`` and ``Rprec_mult``, the zero-count levels of the gain
table, ``rbp``'s per-topic gain normalisation). The raw ``*_values`` functions take plain parameters
so that the ``ctxeval trec_eval`` drop-in can pass trec_eval's (unvalidated) command-line values.

Row categories, as trec_eval's ``form_res_rels``: a retrieved doc is *non-pool* when it is not in
the qrels, *pool-unjudged* when its qrels grade is negative, and judged otherwise; relevant means a
judged grade ``>= rel`` (``rel >= 0`` is assumed; trec_eval's treatment of negative levels, where
non-pool docs become "relevant", is not reproduced).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import count_before, div0
from .._errors import MeasureError
from .base import Family, Measure, Param, TrecArgs, TrecSpec, add_alias, add_trec_param, make, register, register_trec

__all__ = [
    "MIN_GEO_MEAN",
    "bing_values",
    "eleven_pt_values",
    "g_values",
    "ideal_dcg_values",
    "infap_values",
    "iprec_cuts",
    "ndcg_rel_values",
    "nonrel_judged_ret_values",
    "rbp_resid_values",
    "rbp_values",
    "relative_p_values",
    "relstrings",
    "rndcg_values",
    "rprec_mult_values",
    "set_f_values",
    "set_map_values",
    "set_relative_p_values",
    "unj_values",
    "utility_values",
    "yaap_values",
]

TREC = "trec_eval 10.0 (NIST), https://github.com/usnistgov/trec_eval"
REL = Param("rel", "int", 1, "minimum grade counted as relevant (inclusive)", lo=0)
GAINS = Param(
    "gains", "gains", None, "custom gain per grade, e.g. {0:0,1:1,2:3,3:7}; unlisted grades keep the grade as gain"
)
INFAP_EPSILON = 0.00001  # trec_eval.h
MIN_GEO_MEAN = 0.00001  # trec_eval.h: floor of gm_map / gm_bpref before the log
ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

# --------------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------------

_PREFIX_CELLS = 1 << 22
_LOG2: np.ndarray = np.array([-math.inf, 0.0])


def _log2_int(x: np.ndarray) -> np.ndarray:
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


def _log2(x: np.ndarray) -> np.ndarray:
    """log2 of arbitrary doubles, element by element from the C library (few distinct values)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0:
        return np.zeros(0)
    u, inv = np.unique(x, return_inverse=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = np.array([math.log2(v) if v > 0 else float(np.log2(v)) for v in u.tolist()])
    return vals[inv.reshape(-1)]


def _seq_sum(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    """Per segment, the sum of ``values`` added one by one in input order (as a C loop does)."""
    if values.size == 0:
        return np.zeros(n)
    return np.bincount(seg, weights=np.asarray(values, dtype=np.float64), minlength=n)


def _offsets(seg: np.ndarray, n: int) -> np.ndarray:
    """Segment offsets of a grouped (ascending) segment-id array."""
    return np.searchsorted(seg, np.arange(n + 1), side="left").astype(np.int64)


def _seg_prefix(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
    """Exact inclusive running sums per segment, each added sequentially from 0 (as C does).

    Segments are laid out as rows of a zero-padded matrix (longest first, in chunks) and summed
    with ``np.cumsum(axis=1)``, which is sequential; padding with zeros does not change a sum.
    """
    values = np.asarray(values, dtype=np.float64)
    out = np.empty(values.size)
    if values.size == 0:
        return out
    off = _offsets(seg, n)
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


def _seg_suffix_max(values: np.ndarray, seg: np.ndarray, n: int) -> np.ndarray:
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


def _lround(x: np.ndarray) -> np.ndarray:
    """C ``lround``: nearest integer, halves away from zero (exact, unlike floor(x + 0.5))."""
    a = np.abs(x)
    f = np.floor(a)
    r = f + (a - f >= 0.5)
    return np.copysign(r, x).astype(np.int64)


def _trunc_long(x: np.ndarray) -> np.ndarray:
    """C ``(long) x``: truncation toward zero."""
    return np.trunc(x).astype(np.int64)


def _gain_map(gains: Any) -> dict[int, float]:
    if not gains:
        return {}
    items = gains.items() if isinstance(gains, Mapping) else gains
    return {int(k): float(v) for k, v in items}


def _level_gain(grades: np.ndarray, gmap: Mapping[int, float]) -> np.ndarray:
    """trec_eval's ``get_gain`` for judged (non-negative) grades: the custom gain, else the grade."""
    out = grades.astype(np.float64)
    for g, v in gmap.items():
        out[grades == g] = v
    return out


def _row_gains(d: EvalData, gmap: Mapping[int, float]) -> np.ndarray:
    """Gain of every judged retrieved row (0 for pool-unjudged rows with a negative grade)."""
    g = d.j_grade
    return np.where(g >= 0, _level_gain(np.maximum(g, 0), gmap), 0.0)


class _Ideal:
    """Per query, the positive gains of the judged docs in decreasing order (trec_eval's ideal
    ranking: gain levels walked from the highest gain down, stopping at the first gain <= 0)."""

    def __init__(self, d: EvalData, gmap: Mapping[int, float]) -> None:
        n = d.n_queries
        keep = d.q_grade >= 0
        grade = d.q_grade[keep]
        seg = d.q_seg[keep]
        gain = _level_gain(grade, gmap)
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
        self.terms = gain / _log2_int(self.pos + 2)
        self.prefix = _seg_prefix(self.terms, seg, n)  # ideal DCG through each position
        self.total = _seq_sum(self.terms, seg, n)

    def at(self, q: np.ndarray, i: np.ndarray) -> np.ndarray:
        """Ideal DCG through position ``min(i, I_q - 1)`` for (query, 0-based position) pairs."""
        last = np.minimum(i, self.count[q] - 1)
        idx = self.off[:-1][q] + np.maximum(last, 0)
        out = np.zeros(q.size)
        ok = self.count[q] > 0
        out[ok] = self.prefix[idx[ok]]
        return out


def _rel_rows(d: EvalData, rel: int) -> np.ndarray:
    """Mask over judged rows: relevant at level ``rel`` (judged grade >= rel and >= 0)."""
    return (d.j_grade >= rel) & (d.j_grade >= 0)


def _rel_count_incl(d: EvalData, rel: int) -> tuple[np.ndarray, np.ndarray]:
    """(mask of relevant judged rows, running count of relevant rows through each judged row)."""
    mask = _rel_rows(d, rel)
    cnt = count_before(mask, d.j_seg, d.n_queries) + mask
    return mask, cnt


def _num_rel(d: EvalData, rel: int) -> np.ndarray:
    """trec_eval's num_rel: judged docs with grade >= max(rel, 0)."""
    return np.asarray(d.num_rel(max(int(rel), 0)), dtype=np.int64)


def _num_rel_ret(d: EvalData, rel: int) -> np.ndarray:
    return np.bincount(d.j_seg[_rel_rows(d, rel)], minlength=d.n_queries).astype(np.int64)


def _p_powers(p: float, n: int) -> np.ndarray:
    """``cur_p`` after i steps of ``cur_p = cur_p * p`` from 1.0, for i = 0..n (sequential products)."""
    steps = np.full(n + 1, float(p))
    steps[0] = 1.0
    return np.cumprod(steps)


# --------------------------------------------------------------------------------------------------
# interpolated precision (iprec_at_recall, 11pt_avg)
# --------------------------------------------------------------------------------------------------


def iprec_cuts(d: EvalData, rel: int, levels: Sequence[float], rounding: str = "lround") -> list[np.ndarray]:
    """Interpolated precision at each recall level, in the order given, as trec_eval computes it.

    Each level p becomes a number of relevant docs, ``lround(p·R)`` (trec_eval 10) or
    ``(long)(p·R + 0.9)`` (9.x, and always for ``11pt_avg``). trec_eval then walks the relevant
    retrieved docs from the last to the first, moving a pointer down the cut-offs from the last one;
    this reproduces that walk for any order of levels (vectorised over queries, one step per level).
    """
    n = d.n_queries
    R = _num_rel(d, rel).astype(np.float64)
    mask, cnt = _rel_count_incl(d, rel)
    seg = d.j_seg[mask]
    j = cnt[mask]
    prec = j / d.j_rank[mask]
    interp = _seg_suffix_max(prec, seg, n)  # precision only rises at relevant rows
    nrr = np.bincount(seg, minlength=n).astype(np.int64)
    start = _offsets(seg, n)[:-1]
    end_value = np.zeros(n)
    has = nrr > 0
    end_value[has] = interp[start[has]]
    K = len(levels)
    cuts = np.empty((K, n), dtype=np.int64)
    for k, p in enumerate(levels):
        x = float(p) * R
        cuts[k] = _lround(x) if rounding == "lround" else _trunc_long(x + 0.9)
    out: list[np.ndarray] = [np.zeros(n) for _ in range(K)]
    skipping = np.ones(n, dtype=bool)
    stuck = np.zeros(n, dtype=bool)
    limit = nrr.copy()
    for k in range(K - 1, -1, -1):
        c = cuts[k]
        skipping &= c > nrr
        live = ~skipping
        match = live & ~stuck & (c >= 1) & (c <= limit)
        newly_stuck = live & ~stuck & ~match
        stuck |= newly_stuck
        val = np.zeros(n)
        idx = start + np.clip(c, 1, None) - 1
        val[match] = interp[idx[match]]
        limit = np.where(match, c, limit)
        val[stuck & live] = end_value[stuck & live]
        out[k] = val
    return out


def eleven_pt_values(d: EvalData, rel: int, levels: Sequence[float] = ELEVEN) -> np.ndarray:
    """``11pt_avg``: mean interpolated precision over the levels, cut-offs (long)(p·R + 0.9), summed
    in trec_eval's order (from the last level down)."""
    vals = iprec_cuts(d, rel, levels, "v9")
    total = np.zeros(d.n_queries)
    for v in reversed(vals):
        total = total + v
    return total / float(len(levels))


# --------------------------------------------------------------------------------------------------
# kernels (raw parameters)
# --------------------------------------------------------------------------------------------------


def infap_values(d: EvalData, rel: int) -> np.ndarray:
    """infAP (Yilmaz & Aslam 2006) exactly as trec_eval's ``m_infap.c``."""
    n = d.n_queries
    g = d.j_grade
    unj = g < 0
    nonrel = (g >= 0) & (g < rel)
    isrel = (g >= 0) & ~nonrel
    r = (count_before(isrel, d.j_seg, n) + isrel)[isrel]
    nr = count_before(nonrel, d.j_seg, n)[isrel]
    u = count_before(unj, d.j_seg, n)[isrel]
    fj = (d.j_rank[isrel] - 1).astype(np.float64)
    rm1 = (r - 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r - 1 + nr + u) / fj) * (
            (rm1 + INFAP_EPSILON) / ((r - 1 + nr).astype(np.float64) + 2 * INFAP_EPSILON)
        )
    term = np.where(fj == 0, 1.0, term)
    return div0(_seq_sum(term, d.j_seg[isrel], n), _num_rel(d, rel))


def rprec_mult_values(d: EvalData, rel: int, mult: float) -> np.ndarray:
    """Precision at ``(long)(mult·R + 0.9)`` docs (padded with non-relevant docs); 0 below one doc."""
    R = _num_rel(d, rel)
    c = _trunc_long(float(mult) * R.astype(np.float64) + 0.9)
    mask = _rel_rows(d, rel) & (d.j_rank <= c[d.j_seg])
    hits = np.bincount(d.j_seg[mask], minlength=d.n_queries)
    return div0(hits, np.where(c >= 1, c, 0))


def utility_values(
    d: EvalData, rel: int, a: float = 1.0, b: float = -1.0, c: float = 0.0, e: float = 0.0, n_docs: int = 0
) -> np.ndarray:
    """``a·relret + b·(ret − relret) + c·(rel − relret) + e·(N + relret − ret − rel)``."""
    nrr = _num_rel_ret(d, rel)
    ret = np.asarray(d.n_ret, dtype=np.int64)
    R = _num_rel(d, rel)
    return a * nrr + b * (ret - nrr) + c * (R - nrr) + e * (int(n_docs) + nrr - ret - R)


def bing_values(d: EvalData, rel: int) -> np.ndarray:
    """binG: Σ over relevant retrieved of 1 / log2(2 + non-relevant before it), over R."""
    mask, cnt = _rel_count_incl(d, rel)
    arg = d.j_rank[mask] + 2 - cnt[mask]  # 3 + i - rel_so_far with 0-based i
    total = _seq_sum(1.0 / _log2_int(arg), d.j_seg[mask], d.n_queries)
    any_rel = np.bincount(d.j_seg[mask], minlength=d.n_queries) > 0
    return np.where(any_rel, div0(total, _num_rel(d, rel)), 0.0)


def g_values(d: EvalData, gains: Any = None) -> np.ndarray:
    """G (trec_eval ``m_G.c``): gain over log2(2 + ideal cost so far − gain so far), normalised."""
    n = d.n_queries
    gmap = _gain_map(gains)
    ideal = _Ideal(d, gmap)
    rg = _row_gains(d, gmap)
    seg = d.j_seg
    sum_results = _seg_prefix(rg, seg, n)
    cost_pref = _seg_prefix(np.maximum(ideal.gain, 1.0), ideal.seg, n)
    i = d.j_rank - 1
    I = ideal.count[seg]
    within = np.minimum(i, I - 1)
    base = np.zeros(i.size)
    okI = I > 0
    base[okI] = cost_pref[ideal.off[:-1][seg[okI]] + within[okI]]
    sum_cost = base + np.maximum(i - I + 1, 0).astype(np.float64)
    nz = rg != 0
    arg = (2 + sum_cost[nz]) - sum_results[nz]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = rg[nz] / _log2(arg)
    results_g = _seq_sum(terms, seg[nz], n)
    sum_ideal = _seq_sum(ideal.gain, ideal.seg, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sum_ideal > 0, results_g / np.where(sum_ideal > 0, sum_ideal, 1.0), 0.0)


def _dcg_prefix(d: EvalData, gmap: Mapping[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """(row gains, exact running DCG through each judged row)."""
    rg = _row_gains(d, gmap)
    terms = np.where(rg != 0, rg / _log2_int(d.j_rank + 1), 0.0)
    return rg, _seg_prefix(terms, d.j_seg, d.n_queries)


def _dcg_through(d: EvalData, dprefix: np.ndarray, q: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Results DCG over the first ``m`` ranks of query ``q`` (vectorised over pairs)."""
    # last judged row of query q with rank <= m
    pos = np.searchsorted(d.j_idx, d.r_off[:-1][q] + m, side="left") - 1
    start = _offsets(d.j_seg, d.n_queries)[q]
    out = np.zeros(q.size)
    ok = pos >= start
    out[ok] = dprefix[pos[ok]]
    return out


def ndcg_rel_values(d: EvalData, gains: Any = None) -> np.ndarray:
    """ndcg_rel: nDCG averaged over the relevant (gain > 0) docs; unretrieved ones score the final
    DCG / IDCG (trec_eval ``m_ndcg_rel.c``)."""
    n = d.n_queries
    gmap = _gain_map(gains)
    ideal = _Ideal(d, gmap)
    rg, dpref = _dcg_prefix(d, gmap)
    pos = rg > 0
    seg = d.j_seg[pos]
    idcg_at = ideal.at(seg, d.j_rank[pos] - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = dpref[pos] / idcg_at
    total = _seq_sum(terms, seg, n)
    nrr = np.bincount(seg, minlength=n)
    dcg_all = _dcg_through(d, dpref, np.arange(n), np.asarray(d.n_ret, dtype=np.int64))
    I = ideal.count
    with np.errstate(divide="ignore", invalid="ignore"):
        total = total + ((I - nrr).astype(np.float64) * dcg_all) / ideal.total
        out = np.where(total > 0, total / np.where(I > 0, I, 1), 0.0)
    return np.where(I > 0, out, 0.0)


def rndcg_values(d: EvalData, rel: int, gains: Any = None) -> np.ndarray:
    """Rndcg: nDCG averaged at the R levels (where the ideal gain changes), plus at the end of the
    ranking when it runs past the ideal (trec_eval ``m_Rndcg.c``). NaN where no point exists."""
    n = d.n_queries
    gmap = _gain_map(gains)
    ideal = _Ideal(d, gmap)
    _, dpref = _dcg_prefix(d, gmap)
    I = ideal.count
    nret = np.asarray(d.n_ret, dtype=np.int64)
    # boundary after ideal position t: t is the last position, or the gain changes after it
    g, s = ideal.gain, ideal.seg
    nxt_same = np.r_[(s[1:] == s[:-1]) & (g[1:] == g[:-1]), False]
    is_last = ideal.pos == I[s] - 1
    bnd = is_last | ~nxt_same
    bq = s[bnd]
    b = ideal.pos[bnd] + 1
    dcg_b = _dcg_through(d, dpref, bq, np.minimum(b, nret[bq]))
    terms = dcg_b / ideal.prefix[bnd]
    total = _seq_sum(terms, bq, n)
    count = np.bincount(bq, minlength=n).astype(np.float64)
    extra = (I >= 1) & (nret >= I + 2)
    q = np.flatnonzero(extra)
    if q.size:
        total[q] = total[q] + _dcg_through(d, dpref, q, nret[q]) / ideal.total[q]
        count[q] += 1
    with np.errstate(divide="ignore", invalid="ignore"):
        out = total / count
    return np.where(_num_rel(d, rel) == 0, 0.0, out)


def ideal_dcg_values(d: EvalData, gains: Any = None) -> np.ndarray:
    """trec_eval's ``ideal_dcg``: the DCG of the ideal ranking of all judged docs."""
    return _Ideal(d, _gain_map(gains)).total


def relative_p_values(d: EvalData, rel: int, k: int) -> np.ndarray:
    """relative_P@k: relevant in the top k over min(k, R); 0 when R = 0."""
    R = _num_rel(d, rel)
    mask = _rel_rows(d, rel) & (d.j_rank <= k)
    hits = np.bincount(d.j_seg[mask], minlength=d.n_queries)
    return div0(hits, np.minimum(R, int(k)))


def set_relative_p_values(d: EvalData, rel: int) -> np.ndarray:
    R = _num_rel(d, rel)
    ret = np.asarray(d.n_ret, dtype=np.int64)
    return np.where((ret > 0) & (R > 0), div0(_num_rel_ret(d, rel), np.minimum(ret, R)), 0.0)


def set_map_values(d: EvalData, rel: int) -> np.ndarray:
    """set_map: relret² / (ret · R) (recall × precision of the retrieved set)."""
    R = _num_rel(d, rel).astype(np.float64)
    ret = np.asarray(d.n_ret, dtype=np.float64)
    nrr = _num_rel_ret(d, rel).astype(np.float64)
    return div0(nrr * nrr, ret * R)


def set_f_values(d: EvalData, rel: int, x: float = 1.0) -> np.ndarray:
    """trec_eval's set_F with parameter x: (x + 1)·P·R / (x·P + R), 0 when nothing relevant is retrieved."""
    nrr = _num_rel_ret(d, rel)
    P = div0(nrr, np.asarray(d.n_ret, dtype=np.int64))
    Rc = div0(nrr, _num_rel(d, rel))
    with np.errstate(divide="ignore", invalid="ignore"):
        val = (x + 1.0) * P * Rc / (x * P + Rc)
    return np.where(nrr > 0, val, 0.0)


def nonrel_judged_ret_values(d: EvalData, rel: int) -> np.ndarray:
    g = d.j_grade
    return np.bincount(d.j_seg[(g >= 0) & (g < rel)], minlength=d.n_queries).astype(np.float64)


def yaap_values(d: EvalData, rel: int) -> np.ndarray:
    """yaap (Robertson 2012): log((1 + s) / (1 + R − s)), s = Σ precision at relevant retrieved."""
    mask, cnt = _rel_count_incl(d, rel)
    s = _seq_sum(cnt[mask] / d.j_rank[mask], d.j_seg[mask], d.n_queries)
    return np.log((1.0 + s) / ((1.0 + _num_rel(d, rel).astype(np.float64)) - s))


def rbp_values(
    d: EvalData, p: float = 0.9, rel: int | None = None, gains: Any = None, k: int | None = None
) -> np.ndarray:
    """Rank-biased precision, (1 − p) Σ gain_i p^(i−1).

    ``rel`` given: binary gain (judged grade >= rel). ``rel`` None (trec_eval's ``rbp``): the gain
    table of the topic (grade 0..max judged grade, each its own gain unless ``gains`` says
    otherwise) is rescaled to [0, 1] by (g − min) / (max − min) when it leaves [0, 1].
    """
    n = d.n_queries
    g = d.j_grade
    seg = d.j_seg
    if rel is not None:
        rg = ((g >= rel) & (g >= 0)).astype(np.float64)
    else:
        gmap = _gain_map(gains)
        rg = _row_gains(d, gmap)
        top = np.full(n, -1, dtype=np.int64)  # highest non-negative judged grade per topic
        keep = d.q_grade >= 0
        np.maximum.at(top, d.q_seg[keep], d.q_grade[keep])
        lo = np.full(n, np.inf)
        hi = np.full(n, -np.inf)
        pairs = sorted(gmap)
        for val in gmap.values():
            lo = np.minimum(lo, val)
            hi = np.maximum(hi, val)
        # default-gain levels 0..top that no custom gain overrides: their gain is the level itself
        low_free = 0
        while low_free in gmap:
            low_free += 1
        has_low = top >= low_free
        lo = np.where(has_low, np.minimum(lo, float(low_free)), lo)
        high_free = top.copy()
        for _ in range(len(pairs) + 1):
            high_free = np.where(np.isin(high_free, pairs), high_free - 1, high_free)
        has_high = high_free >= 0
        hi = np.where(has_high, np.maximum(hi, high_free.astype(np.float64)), hi)
        norm = (lo < 0) | (hi > 1)
        qn = norm[seg]
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = (rg - lo[seg]) / (hi[seg] - lo[seg])
        # every judged row gets its level's (rescaled) gain; pool-unjudged rows keep gain 0
        rg = np.where(qn & (g >= 0), scaled, rg)
    keep_rows = rg != 0
    if k is not None:
        keep_rows &= d.j_rank <= k
    top_rank = int(d.j_rank.max()) if d.j_rank.size else 0
    powers = _p_powers(p, top_rank)
    terms = rg[keep_rows] * powers[d.j_rank[keep_rows] - 1]
    return (1.0 - p) * _seq_sum(terms, seg[keep_rows], n)


def rbp_resid_values(d: EvalData, p: float = 0.9) -> np.ndarray:
    """trec_eval's rbp_resid: p^ret + (1 − p) Σ over unjudged retrieved p^(i−1); 0 when every
    retrieved doc is judged."""
    n = d.n_queries
    ret = np.asarray(d.n_ret, dtype=np.int64)
    unj = ~d.r_judged | (d.r_grade < 0)
    top = int(ret.max()) if ret.size else 0
    powers = _p_powers(p, top)
    ranks = d.r_rank[unj]
    total = _seq_sum(powers[ranks - 1], d.r_seg[unj], n)
    any_unj = np.bincount(d.r_seg[unj], minlength=n) > 0
    return np.where(any_unj, powers[ret] + (1 - p) * total, 0.0)


def unj_values(d: EvalData, k: int) -> np.ndarray:
    """unj@k: the fraction of the top k that is unjudged (not in the qrels, or judged < 0), the
    missing ranks counting as judged."""
    ret = np.asarray(d.n_ret, dtype=np.int64)
    judged_top = np.bincount(d.j_seg[(d.j_grade >= 0) & (d.j_rank <= k)], minlength=d.n_queries)
    return (np.minimum(ret, int(k)) - judged_top) / float(k)


def relstrings(d: EvalData, length: int) -> list[str]:
    """trec_eval's ``relstring``: one character per doc of the top ``length`` (digit = grade 0-9,
    '>' above 9, '-' not in the qrels, '.' judged negative). The characters are built in one
    vectorised pass; only the final slicing into one string per query loops over queries."""
    ret = np.asarray(d.n_ret, dtype=np.int64)
    take = np.clip(np.minimum(ret, int(length)), 0, None)
    rows = np.flatnonzero(d.r_rank <= np.clip(int(length), 0, None)) if d.n_rows else np.zeros(0, dtype=np.int64)
    judged = d.r_judged[rows]
    grade = d.r_grade[rows]
    codes = np.where(
        ~judged, ord("-"), np.where(grade < 0, ord("."), np.where(grade > 9, ord(">"), ord("0") + np.clip(grade, 0, 9)))
    )
    text = codes.astype(np.uint8).tobytes().decode("ascii")
    bounds = np.r_[0, np.cumsum(take)]
    return [text[bounds[i] : bounds[i + 1]] for i in range(d.n_queries)]


# --------------------------------------------------------------------------------------------------
# registry
# --------------------------------------------------------------------------------------------------


def _k_gm_map(d: EvalData, m: Measure) -> np.ndarray:
    return make("AP", {"rel": m["rel"]}).compute(d)


def _k_gm_bpref(d: EvalData, m: Measure) -> np.ndarray:
    return make("Bpref", {"rel": m["rel"]}).compute(d)


def _k_infap(d: EvalData, m: Measure) -> np.ndarray:
    return infap_values(d, m["rel"])


def _k_rprec_mult(d: EvalData, m: Measure) -> np.ndarray:
    return rprec_mult_values(d, m["rel"], m["mult"])


def _k_utility(d: EvalData, m: Measure) -> np.ndarray:
    return utility_values(d, m["rel"], m["a"], m["b"], m["c"], m["d"], m["n_docs"])


def _k_11pt(d: EvalData, m: Measure) -> np.ndarray:
    return eleven_pt_values(d, m["rel"])


def _k_bing(d: EvalData, m: Measure) -> np.ndarray:
    return bing_values(d, m["rel"])


def _k_g(d: EvalData, m: Measure) -> np.ndarray:
    return g_values(d, m["gains"])


def _k_ndcg_rel(d: EvalData, m: Measure) -> np.ndarray:
    return ndcg_rel_values(d, m["gains"])


def _k_rndcg(d: EvalData, m: Measure) -> np.ndarray:
    return rndcg_values(d, m["rel"], m["gains"])


def _k_ideal_dcg(d: EvalData, m: Measure) -> np.ndarray:
    return ideal_dcg_values(d, m["gains"])


def _k_relative_p(d: EvalData, m: Measure) -> np.ndarray:
    return relative_p_values(d, m["rel"], m.k)


def _k_set_relative_p(d: EvalData, m: Measure) -> np.ndarray:
    return set_relative_p_values(d, m["rel"])


def _k_set_map(d: EvalData, m: Measure) -> np.ndarray:
    return set_map_values(d, m["rel"])


def _k_nonrel_judged_ret(d: EvalData, m: Measure) -> np.ndarray:
    return nonrel_judged_ret_values(d, m["rel"])


def _k_yaap(d: EvalData, m: Measure) -> np.ndarray:
    return yaap_values(d, m["rel"])


def _k_rbp(d: EvalData, m: Measure) -> np.ndarray:
    return rbp_values(d, m["p"], m["rel"], m["gains"], None if m.cutoff is None else m.k)


def _k_rbp_resid(d: EvalData, m: Measure) -> np.ndarray:
    return rbp_resid_values(d, m["p"])


def _k_unj(d: EvalData, m: Measure) -> np.ndarray:
    return unj_values(d, m.k)


_P = Param("p", "float", 0.8, "persistence: the probability of reading on to the next rank", lo=0.0, hi=1.0)
_P_RESID = Param("p", "float", 0.9, "persistence", lo=0.0, hi=1.0)
_BIN_REL = Param(
    "rel", "int", None, "binary gain (grade >= rel); none = trec_eval's graded gain rescaled to [0, 1]", lo=0
)
G_T = "trec_eval 10.0 (NIST); experimental measure of Chris Buckley, 2008"

for fam in (
    Family(
        "gm_map",
        "Geometric mean of average precision",
        "per query AP; summary exp(mean(log(max(AP, 0.00001))))",
        "Robertson, 'On GMAP', CIKM 2006; " + TREC,
        _k_gm_map,
        (REL,),
        cutoff="none",
        aggregate="gmean",
        aliases=("gm_ap", "GMAP"),
        group="trec_eval",
        perfect_is_one=True,
    ),
    Family(
        "gm_bpref",
        "Geometric mean of bpref",
        "per query bpref; summary exp(mean(log(max(bpref, 0.00001))))",
        TREC,
        _k_gm_bpref,
        (REL,),
        cutoff="none",
        aggregate="gmean",
        group="trec_eval",
        perfect_is_one=True,
    ),
    Family(
        "infAP",
        "Inferred average precision",
        "infAP = (1/R) Σ_{judged relevant at rank k} [1/k + ((k−1)/k) · (pooled_above/(k−1)) · (rel_above + ε)/(rel_above + nonrel_above + 2ε)]; pooled = in the qrels (judged, or unjudged with grade < 0), ε = 0.00001; 1 at rank 1",
        "Yilmaz & Aslam, CIKM 2006; " + TREC,
        _k_infap,
        (REL,),
        cutoff="none",
        aliases=("infap",),
        group="trec_eval",
    ),
    Family(
        "Rprec_mult",
        "Precision at a multiple of R",
        "Rprec_mult = P@c, c = (long)(mult·R + 0.9) (0 when c < 1)",
        TREC,
        _k_rprec_mult,
        (REL, Param("mult", "float", 1.0, "multiple of R (the number of relevant docs)", lo=0.0)),
        cutoff="none",
        group="trec_eval",
    ),
    Family(
        "utility",
        "Set utility",
        "utility = a·relret + b·(ret − relret) + c·(R − relret) + d·(N + relret − ret − R)",
        TREC,
        _k_utility,
        (
            REL,
            Param("a", "float", 1.0, "worth of a relevant retrieved doc"),
            Param("b", "float", -1.0, "worth of a non-relevant retrieved doc"),
            Param("c", "float", 0.0, "worth of a relevant doc not retrieved"),
            Param("d", "float", 0.0, "worth of a non-relevant doc not retrieved"),
            Param("n_docs", "int", 0, "N, the number of docs in the collection (trec_eval -N)", lo=0),
        ),
        cutoff="none",
        bounds=None,
        group="trec_eval",
    ),
    Family(
        "11pt_avg",
        "Interpolated precision averaged over 11 recall levels",
        "11pt_avg = (1/11) Σ_{p=0,0.1,..,1} IPrec@p with the cut-off (long)(p·R + 0.9) relevant docs (in trec_eval 9 and 10)",
        TREC,
        _k_11pt,
        (REL,),
        cutoff="none",
        aliases=("11-pt_avg",),
        group="trec_eval",
        perfect_is_one=True,
    ),
    Family(
        "binG",
        "Binary G",
        "binG = (1/R) Σ_{relevant retrieved} 1 / log2(2 + non-relevant ranked above)",
        G_T,
        _k_bing,
        (REL,),
        cutoff="none",
        aliases=("bing",),
        group="trec_eval",
        perfect_is_one=True,
    ),
    Family(
        "G",
        "Normalised gain G",
        "G = Σ_i g_i / log2(2 + cost_i − gain_i) / Σ ideal gains; cost_i = Σ_{j≤i} max(ideal g_j, 1), gain_i = Σ_{j≤i} g_j",
        G_T,
        _k_g,
        (GAINS,),
        cutoff="none",
        bounds=None,
        group="trec_eval",
    ),
    Family(
        "ndcg_rel",
        "nDCG averaged over the relevant docs",
        "ndcg_rel = (1/I) [Σ_{retrieved d, g_d>0} DCG@rank(d) / IDCG@min(rank(d), I) + (I − relret) · DCG / IDCG], I = judged docs with gain > 0",
        G_T,
        _k_ndcg_rel,
        (GAINS,),
        cutoff="none",
        bounds=None,
        group="trec_eval",
        perfect_is_one=True,
    ),
    Family(
        "Rndcg",
        "nDCG averaged at the R levels",
        "Rndcg = mean of nDCG@b over the ranks b where the ideal gain drops (and at the end of the ranking if it runs past the ideal); 0 when R = 0",
        G_T,
        _k_rndcg,
        (REL, GAINS),
        cutoff="none",
        bounds=None,
        aliases=("rndcg",),
        group="trec_eval",
        perfect_is_one=True,
    ),
    Family(
        "ideal_dcg",
        "Ideal discounted cumulative gain",
        "IDCG = Σ_i g*_i / log2(i + 1) over the judged gains sorted decreasingly (positive gains only)",
        TREC,
        _k_ideal_dcg,
        (GAINS,),
        cutoff="none",
        bounds=None,
        aliases=("idcg",),
        group="trec_eval",
    ),
    Family(
        "relative_P",
        "Relative precision at k",
        "relative_P@k = |relevant ∩ top k| / min(k, R); 0 when R = 0",
        TREC,
        _k_relative_p,
        (REL,),
        cutoff="required",
        group="trec_eval",
        perfect_is_one=True,
    ),
    Family(
        "set_relative_P",
        "Relative precision of the retrieved set",
        "set_relative_P = relret / min(ret, R)",
        TREC,
        _k_set_relative_p,
        (REL,),
        cutoff="none",
        group="trec_eval",
        perfect_is_one=True,
    ),
    Family(
        "SetAP",
        "Unranked average precision of the retrieved set",
        "SetAP = relret² / (ret · R) = SetP · SetR",
        TREC,
        _k_set_map,
        (REL,),
        cutoff="none",
        aliases=("set_map",),
        group="trec_eval",
    ),
    Family(
        "num_nonrel_judged_ret",
        "Number of judged non-relevant docs retrieved",
        "Σ_q |retrieved ∩ judged, 0 ≤ grade < rel|",
        TREC,
        _k_nonrel_judged_ret,
        (REL,),
        cutoff="none",
        aggregate="sum",
        bounds=None,
        aliases=("NumNonRelJudgedRet",),
        group="trec_eval",
    ),
    Family(
        "yaap",
        "Yet another average precision",
        "yaap = log((1 + s) / (1 + R − s)), s = Σ_{relevant retrieved} precision at its rank",
        "Robertson, ECIR 2012; " + TREC,
        _k_yaap,
        (REL,),
        cutoff="none",
        bounds=None,
        group="trec_eval",
    ),
    Family(
        "RBP",
        "Rank-biased precision",
        "RBP = (1 − p) Σ_i gain_i · p^(i−1); gain binary (grade ≥ rel) or, without rel, trec_eval's graded gain rescaled to [0, 1]",
        "Moffat & Zobel, TOIS 2008; " + TREC,
        _k_rbp,
        (_P, _BIN_REL, GAINS),
        cutoff="optional",
        group="trec_eval",
    ),
    Family(
        "rbp_resid",
        "Residual of rank-biased precision",
        "rbp_resid = p^ret + (1 − p) Σ_{unjudged retrieved at rank i} p^(i−1); 0 when every retrieved doc is judged",
        "Moffat & Zobel, TOIS 2008; " + TREC,
        _k_rbp_resid,
        (_P_RESID,),
        cutoff="none",
        group="trec_eval",
    ),
    Family(
        "unj",
        "Fraction of the top k that is unjudged",
        "unj@k = |top k not judged (or judged < 0)| / k, missing ranks counting as judged",
        TREC,
        _k_unj,
        (),
        cutoff="required",
        aliases=("Unj",),
        group="trec_eval",
    ),
):
    register(fam)

add_alias("rbp", "RBP", p=0.9)
add_trec_param("RBP", "p")
add_trec_param("rbp_resid", "p")
add_trec_param("Rprec_mult", "mult")


# --------------------------------------------------------------------------------------------------
# trec_eval's printing of its measures (ctxeval trec_eval): the specs of the measures computed here
# --------------------------------------------------------------------------------------------------

_INT_NAME = re.compile(r"[+-]?\d+")


def trec_gains(pairs: Sequence[tuple[str, float]]) -> dict[int, float] | None:
    """The custom gains of ``-m name.1=3,2=9`` pairs (integer keys; the first per grade wins)."""
    gains: dict[int, float] = {}
    for name, value in pairs:
        if _INT_NAME.fullmatch(name):
            gains.setdefault(int(name), value)
    return gains or None


def trec_p(pairs: Sequence[tuple[str, float]]) -> float:
    """The persistence ``p=`` of rbp's pairs (the last given wins; 0.9 by default)."""
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = value
    return p


def _utility(d: EvalData, a: TrecArgs, values: list[float]) -> np.ndarray:
    if len(values) != 4:
        raise MeasureError("trec_eval.calc_utility: improper number of coefficients")
    ca, cb, cc, ce = values
    return utility_values(d, a.level, ca, cb, cc, ce, a.n_docs)


def _set_f(d: EvalData, a: TrecArgs, values: list[float]) -> np.ndarray:
    x = values[0]
    return make("SetF", {"rel": a.level}).compute(d) if x == 1.0 else set_f_values(d, a.level, x)


def _gains_measure(name: str) -> Callable[[EvalData, TrecArgs, list[tuple[str, float]]], np.ndarray]:
    def compute(d: EvalData, a: TrecArgs, pairs: list[tuple[str, float]]) -> np.ndarray:
        gains = trec_gains(pairs)
        return make(name, {"gains": gains} if gains else None).compute(d)

    return compute


for spec in (
    TrecSpec("runid", 0, "runid", summary="none", sets=("official", "set", "all_trec")),
    TrecSpec("num_q", 1, "num_q", summary="sum", sets=("official", "set", "all_trec")),
    TrecSpec(
        "gm_map",
        6,
        "gm",
        lambda d, a: make("AP", {"rel": a.level}).compute(d),
        summary="gm",
        family="gm_map",
        sets=("official", "all_trec"),
    ),
    TrecSpec(
        "iprec_at_recall",
        10,
        "cut_double",
        lambda d, a, cuts: iprec_cuts(d, a.level, cuts, "lround" if a.version >= 10 else "v9"),
        ELEVEN,
        family="IPrec",
        sets=("official", "all_trec"),
    ),
    TrecSpec("relstring", 12, "relstring", lambda d, a, length: relstrings(d, length), (10.0,), summary="none"),
    TrecSpec("infAP", 14, "double", lambda d, a: infap_values(d, a.level), family="infAP"),
    TrecSpec(
        "gm_bpref", 15, "gm", lambda d, a: make("Bpref", {"rel": a.level}).compute(d), summary="gm", family="gm_bpref"
    ),
    TrecSpec(
        "Rprec_mult",
        16,
        "cut_double",
        lambda d, a, cuts: [rprec_mult_values(d, a.level, c) for c in cuts],
        (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
        family="Rprec_mult",
    ),
    TrecSpec(
        "utility",
        17,
        "p_double",
        _utility,
        (1.0, -1.0, 0.0, 0.0),
        reset_missing=True,
        family="utility",
        sets=("set", "all_trec"),
    ),
    TrecSpec(
        "11pt_avg", 18, "p_double", lambda d, a, values: eleven_pt_values(d, a.level, values), ELEVEN, family="11pt_avg"
    ),
    TrecSpec("binG", 19, "double", lambda d, a: bing_values(d, a.level), family="binG"),
    TrecSpec("G", 20, "p_pair", lambda d, a, pairs: g_values(d, trec_gains(pairs)), family="G"),
    TrecSpec("dcg", 21, "p_pair", _gains_measure("DCG"), versions=(10,), family="DCG", sets=()),
    TrecSpec(
        "ideal_dcg",
        22,
        "p_pair",
        lambda d, a, pairs: ideal_dcg_values(d, trec_gains(pairs)),
        versions=(10,),
        family="ideal_dcg",
        sets=(),
    ),
    TrecSpec("ndcg", 23, "p_pair", _gains_measure("nDCG"), family="nDCG"),
    TrecSpec("ndcg_rel", 24, "p_pair", lambda d, a, pairs: ndcg_rel_values(d, trec_gains(pairs)), family="ndcg_rel"),
    TrecSpec("Rndcg", 25, "p_pair", lambda d, a, pairs: rndcg_values(d, a.level, trec_gains(pairs)), family="Rndcg"),
    TrecSpec(
        "relative_P",
        28,
        "cut_long",
        lambda d, a, k: relative_p_values(d, a.level, k),
        (5, 10, 15, 20, 30, 100, 200, 500, 1000),
        family="relative_P",
    ),
    TrecSpec(
        "set_relative_P",
        31,
        "double",
        lambda d, a: set_relative_p_values(d, a.level),
        family="set_relative_P",
        sets=("set", "all_trec"),
    ),
    TrecSpec(
        "set_map", 33, "double", lambda d, a: set_map_values(d, a.level), family="SetAP", sets=("set", "all_trec")
    ),
    TrecSpec("set_F", 34, "p_double", _set_f, (1.0,), family="SetF", sets=("set", "all_trec")),
    TrecSpec(
        "num_nonrel_judged_ret",
        35,
        "long",
        lambda d, a: nonrel_judged_ret_values(d, a.level),
        summary="sum",
        family="num_nonrel_judged_ret",
    ),
    TrecSpec("yaap", 36, "double", lambda d, a: yaap_values(d, a.level), family="yaap", sets=()),
    TrecSpec(
        "rbp",
        37,
        "p_pair",
        lambda d, a, pairs: rbp_values(d, trec_p(pairs), None, trec_gains(pairs)),
        versions=(10,),
        family="RBP",
    ),
    TrecSpec(
        "rbp_resid",
        38,
        "p_pair",
        lambda d, a, pairs: rbp_resid_values(d, trec_p(pairs)),
        versions=(10,),
        reset_missing=True,
        family="rbp_resid",
    ),
    TrecSpec(
        "unj",
        39,
        "cut_long",
        lambda d, a, k: unj_values(d, k),
        (5, 10, 20),
        versions=(10,),
        reset_missing=True,
        family="unj",
    ),
):
    register_trec(spec)
