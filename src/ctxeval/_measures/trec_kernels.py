"""The rest of trec_eval's ``all_trec`` set, as vectorised kernels over query segments.

Every kernel follows trec_eval 10.0's C code operation by operation where it matters for the
printed value: running sums are accumulated sequentially in rank order (``np.bincount`` adds its
weights in input order; :func:`seg_prefix` gives exact sequential prefix sums), logarithms of
integers come from the C library (``math.log2``), and trec_eval's own quirks are kept (the
``(long)(p·R + 0.9)`` cut-off of 9.x's ``11pt_avg`` and of ``Rprec_mult``, the zero-count levels of the gain
table, ``rbp``'s per-topic gain normalisation). The raw ``*_values`` functions take plain parameters
so that the ``ctxeval trec_eval`` drop-in can pass trec_eval's (unvalidated) command-line values.

Row categories, as trec_eval's ``form_res_rels``: a retrieved doc is *non-pool* when it is not in
the qrels, *pool-unjudged* when its qrels grade is negative, and judged otherwise; relevant means a
judged grade ``>= rel`` (``rel >= 0`` is assumed; trec_eval's treatment of negative levels, where
non-pool docs become "relevant", is not reproduced).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import count_before, div0
from .trec_support import (
    ELEVEN,
    INFAP_EPSILON,
    MIN_GEO_MEAN,
    Ideal,
    gain_map,
    log2,
    log2_int,
    lround,
    num_rel,
    num_rel_ret,
    offsets,
    p_powers,
    rel_count_incl,
    rel_rows,
    row_gains,
    seg_prefix,
    seg_suffix_max,
    seq_sum,
    trunc_long,
)

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
    "rbp_gains",
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

# --------------------------------------------------------------------------------------------------
# interpolated precision (iprec_at_recall, 11pt_avg)
# --------------------------------------------------------------------------------------------------


def iprec_cuts(
    d: EvalData, rel: int, levels: Sequence[float], rounding: str = "lround", no_docs: np.ndarray | None = None
) -> list[np.ndarray]:
    """Interpolated precision at each recall level, in the order given, as trec_eval computes it.

    Each level p becomes a number of relevant docs, ``lround(p·R)`` (trec_eval 10) or
    ``(long)(p·R + 0.9)`` (9.x; the same for ``11pt_avg``). trec_eval then walks the relevant
    retrieved docs from the last to the first, moving a pointer down the cut-offs from the last one;
    this reproduces that walk for any order of levels (vectorised over queries, one step per level).
    A cut-off the walk never reaches gets the precision of the whole ranking, ``num_rel_ret /
    num_ret``: for a query of ``no_docs`` (a mask: trec_eval retrieved nothing for it) that is
    trec_eval's own 0/0, NaN (printed ``-nan``); 0 otherwise.
    """
    n = d.n_queries
    R = num_rel(d, rel).astype(np.float64)
    mask, cnt = rel_count_incl(d, rel)
    seg = d.j_seg[mask]
    j = cnt[mask]
    prec = j / d.j_rank[mask]
    interp = seg_suffix_max(prec, seg, n)  # precision only rises at relevant rows
    nrr = np.bincount(seg, minlength=n).astype(np.int64)
    start = offsets(seg, n)[:-1]
    end_value = np.zeros(n)
    has = nrr > 0
    end_value[has] = interp[start[has]]
    if no_docs is not None:
        end_value[no_docs & ~has] = -np.nan  # 0.0 / 0.0 on x86-64: the default NaN, sign bit set
    K = len(levels)
    cuts = np.empty((K, n), dtype=np.int64)
    for k, p in enumerate(levels):
        x = float(p) * R
        cuts[k] = lround(x) if rounding == "lround" else trunc_long(x + 0.9)
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


def eleven_pt_values(
    d: EvalData, rel: int, levels: Sequence[float] = ELEVEN, rounding: str = "lround", no_docs: np.ndarray | None = None
) -> np.ndarray:
    """``11pt_avg``: mean interpolated precision over the levels, summed in trec_eval's order (from
    the last level down); cut-offs ``lround(p·R)`` (trec_eval 10.0's ``m_11pt_avg.c``) or
    ``(long)(p·R + 0.9)`` (``rounding="v9"``, trec_eval 9.x); ``no_docs`` as :func:`iprec_cuts`."""
    vals = iprec_cuts(d, rel, levels, rounding, no_docs)
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
    return div0(seq_sum(term, d.j_seg[isrel], n), num_rel(d, rel))


def rprec_mult_values(d: EvalData, rel: int, mult: float) -> np.ndarray:
    """Precision at ``(long)(mult·R + 0.9)`` docs (padded with non-relevant docs); 0 below one doc."""
    R = num_rel(d, rel)
    c = trunc_long(float(mult) * R.astype(np.float64) + 0.9)
    mask = rel_rows(d, rel) & (d.j_rank <= c[d.j_seg])
    hits = np.bincount(d.j_seg[mask], minlength=d.n_queries)
    return div0(hits, np.where(c >= 1, c, 0))


def utility_values(
    d: EvalData, rel: int, a: float = 1.0, b: float = -1.0, c: float = 0.0, e: float = 0.0, n_docs: int = 0
) -> np.ndarray:
    """``a·relret + b·(ret − relret) + c·(rel − relret) + e·(N + relret − ret − rel)``."""
    nrr = num_rel_ret(d, rel)
    ret = np.asarray(d.n_ret, dtype=np.int64)
    R = num_rel(d, rel)
    return a * nrr + b * (ret - nrr) + c * (R - nrr) + e * (int(n_docs) + nrr - ret - R)


def bing_values(d: EvalData, rel: int) -> np.ndarray:
    """binG: Σ over relevant retrieved of 1 / log2(2 + non-relevant before it), over R."""
    mask, cnt = rel_count_incl(d, rel)
    arg = d.j_rank[mask] + 2 - cnt[mask]  # 3 + i - rel_so_far with 0-based i
    total = seq_sum(1.0 / log2_int(arg), d.j_seg[mask], d.n_queries)
    any_rel = np.bincount(d.j_seg[mask], minlength=d.n_queries) > 0
    return np.where(any_rel, div0(total, num_rel(d, rel)), 0.0)


def g_values(d: EvalData, gains: Any = None) -> np.ndarray:
    """G (trec_eval ``m_G.c``): gain over log2(2 + ideal cost so far − gain so far), normalised."""
    n = d.n_queries
    gmap = gain_map(gains)
    ideal = Ideal(d, gmap)
    rg = row_gains(d, gmap)
    seg = d.j_seg
    sum_results = seg_prefix(rg, seg, n)
    cost_pref = seg_prefix(np.maximum(ideal.gain, 1.0), ideal.seg, n)
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
        terms = rg[nz] / log2(arg)
    results_g = seq_sum(terms, seg[nz], n)
    sum_ideal = seq_sum(ideal.gain, ideal.seg, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sum_ideal > 0, results_g / np.where(sum_ideal > 0, sum_ideal, 1.0), 0.0)


def _dcg_prefix(d: EvalData, gmap: Mapping[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """(row gains, exact running DCG through each judged row)."""
    rg = row_gains(d, gmap)
    terms = np.where(rg != 0, rg / log2_int(d.j_rank + 1), 0.0)
    return rg, seg_prefix(terms, d.j_seg, d.n_queries)


def _dcg_through(d: EvalData, dprefix: np.ndarray, q: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Results DCG over the first ``m`` ranks of query ``q`` (vectorised over pairs)."""
    # last judged row of query q with rank <= m
    pos = np.searchsorted(d.j_idx, d.r_off[:-1][q] + m, side="left") - 1
    start = offsets(d.j_seg, d.n_queries)[q]
    out = np.zeros(q.size)
    ok = pos >= start
    out[ok] = dprefix[pos[ok]]
    return out


def ndcg_rel_values(d: EvalData, gains: Any = None) -> np.ndarray:
    """ndcg_rel: nDCG averaged over the relevant (gain > 0) docs; unretrieved ones score the final
    DCG / IDCG (trec_eval ``m_ndcg_rel.c``)."""
    n = d.n_queries
    gmap = gain_map(gains)
    ideal = Ideal(d, gmap)
    rg, dpref = _dcg_prefix(d, gmap)
    pos = rg > 0
    seg = d.j_seg[pos]
    idcg_at = ideal.at(seg, d.j_rank[pos] - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = dpref[pos] / idcg_at
    total = seq_sum(terms, seg, n)
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
    gmap = gain_map(gains)
    ideal = Ideal(d, gmap)
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
    total = seq_sum(terms, bq, n)
    count = np.bincount(bq, minlength=n).astype(np.float64)
    extra = (I >= 1) & (nret >= I + 2)
    q = np.flatnonzero(extra)
    if q.size:
        total[q] = total[q] + _dcg_through(d, dpref, q, nret[q]) / ideal.total[q]
        count[q] += 1
    with np.errstate(divide="ignore", invalid="ignore"):
        out = total / count
    return np.where(num_rel(d, rel) == 0, 0.0, out)


def ideal_dcg_values(d: EvalData, gains: Any = None) -> np.ndarray:
    """trec_eval's ``ideal_dcg``: the DCG of the ideal ranking of all judged docs."""
    return Ideal(d, gain_map(gains)).total


def relative_p_values(d: EvalData, rel: int, k: int) -> np.ndarray:
    """relative_P@k: relevant in the top k over min(k, R); 0 when R = 0."""
    R = num_rel(d, rel)
    mask = rel_rows(d, rel) & (d.j_rank <= k)
    hits = np.bincount(d.j_seg[mask], minlength=d.n_queries)
    return div0(hits, np.minimum(R, int(k)))


def set_relative_p_values(d: EvalData, rel: int) -> np.ndarray:
    R = num_rel(d, rel)
    ret = np.asarray(d.n_ret, dtype=np.int64)
    return np.where((ret > 0) & (R > 0), div0(num_rel_ret(d, rel), np.minimum(ret, R)), 0.0)


def set_map_values(d: EvalData, rel: int) -> np.ndarray:
    """set_map: relret² / (ret · R) (recall × precision of the retrieved set)."""
    R = num_rel(d, rel).astype(np.float64)
    ret = np.asarray(d.n_ret, dtype=np.float64)
    nrr = num_rel_ret(d, rel).astype(np.float64)
    return div0(nrr * nrr, ret * R)


def set_f_values(d: EvalData, rel: int, x: float = 1.0) -> np.ndarray:
    """trec_eval's set_F with parameter x: (x + 1)·P·R / (x·P + R), 0 when nothing relevant is retrieved."""
    nrr = num_rel_ret(d, rel)
    P = div0(nrr, np.asarray(d.n_ret, dtype=np.int64))
    Rc = div0(nrr, num_rel(d, rel))
    with np.errstate(divide="ignore", invalid="ignore"):
        val = (x + 1.0) * P * Rc / (x * P + Rc)
    return np.where(nrr > 0, val, 0.0)


def nonrel_judged_ret_values(d: EvalData, rel: int) -> np.ndarray:
    g = d.j_grade
    return np.bincount(d.j_seg[(g >= 0) & (g < rel)], minlength=d.n_queries).astype(np.float64)


def yaap_values(d: EvalData, rel: int) -> np.ndarray:
    """yaap (Robertson 2012): log((1 + s) / (1 + R − s)), s = Σ precision at relevant retrieved."""
    mask, cnt = rel_count_incl(d, rel)
    s = seq_sum(cnt[mask] / d.j_rank[mask], d.j_seg[mask], d.n_queries)
    return np.log((1.0 + s) / ((1.0 + num_rel(d, rel).astype(np.float64)) - s))


def rbp_values(
    d: EvalData, p: float = 0.9, rel: int | None = None, gains: Any = None, k: int | None = None
) -> np.ndarray:
    """Rank-biased precision, (1 − p) Σ gain_i p^(i−1), the gains of :func:`rbp_gains`."""
    n = d.n_queries
    seg = d.j_seg
    rg = rbp_gains(d, rel, gains)
    keep_rows = rg != 0
    if k is not None:
        keep_rows &= d.j_rank <= k
    top_rank = int(d.j_rank.max()) if d.j_rank.size else 0
    powers = p_powers(p, top_rank)
    terms = rg[keep_rows] * powers[d.j_rank[keep_rows] - 1]
    return (1.0 - p) * seq_sum(terms, seg[keep_rows], n)


def rbp_gains(d: EvalData, rel: int | None = None, gains: Any = None) -> np.ndarray:
    """RBP's gain of every judged row. ``rel`` given: binary gain (judged grade >= rel). ``rel`` None
    (trec_eval's ``rbp``): the gain table of the topic (grade 0..max judged grade, each its own gain
    unless ``gains`` says otherwise) is rescaled to [0, 1] by (g − min) / (max − min) when it leaves
    [0, 1]."""
    n = d.n_queries
    g = d.j_grade
    seg = d.j_seg
    if rel is not None:
        rg = ((g >= rel) & (g >= 0)).astype(np.float64)
    else:
        gmap = gain_map(gains)
        rg = row_gains(d, gmap)
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
        # every row whose level is in the gain table gets its (rescaled) gain: the judged grades, and a
        # negative level given a gain (see with_trec_levels); other pool-unjudged rows keep gain 0
        in_table = (g >= 0) | np.isin(g, [lv for lv in gmap if lv < 0])
        rg = np.where(qn & in_table, scaled, rg)
    return rg


def rbp_resid_values(d: EvalData, p: float = 0.9) -> np.ndarray:
    """trec_eval's rbp_resid: p^ret + (1 − p) Σ over unjudged retrieved p^(i−1); 0 when every
    retrieved doc is judged."""
    n = d.n_queries
    ret = np.asarray(d.n_ret, dtype=np.int64)
    unj = ~d.r_judged | (d.r_grade < 0)
    top = int(ret.max()) if ret.size else 0
    powers = p_powers(p, top)
    ranks = d.r_rank[unj]
    total = seq_sum(powers[ranks - 1], d.r_seg[unj], n)
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
