"""Classical IR measures with trec_eval's semantics, as vectorised kernels over query segments.

(~600 lines on purpose: some 25 families, each kernel declared beside its :class:`Family` and
its trec_eval spelling, so that adding a measure touches this one file.)

Conventions (trec_eval's, see ``ctxeval measures``): relevance is ``grade >= rel`` (default 1) for
the binary measures; P@k divides by k even when fewer than k docs were retrieved; recall and AP
divide by the number of relevant judged docs, retrieved or not; nDCG uses the raw grade as a linear
gain and ignores ``rel``; negative grades give gain 0; unjudged docs are non-relevant.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import div0 as _div
from .._core.segments import rank_among as _rank_among
from .._core.segments import seg_sum
from .base import (
    Family,
    Kernel,
    Measure,
    Param,
    TrecArgs,
    TrecSpec,
    add_alias,
    add_trec_param,
    make,
    register,
    register_trec,
)
from .judged import with_judged_only
from .trec_support import seg_prefix

REL = Param("rel", "int", 1, "minimum grade counted as relevant (inclusive)")
TREC = "trec_eval 10.0 (NIST), https://github.com/usnistgov/trec_eval"


def rel_rows(d: EvalData, m: Measure) -> np.ndarray:
    """Mask over judged rows: relevant (grade >= rel) and within the cutoff."""
    mask = d.j_relevant(m["rel"])
    if m.cutoff is not None:
        mask = mask & (d.j_rank <= m.k)
    return mask


# --- P, R, Success, Judged, set measures ------------------------------------------------------------


def _precision(d: EvalData, m: Measure) -> np.ndarray:
    return d.seg_count(rel_rows(d, m)) / m.level


def _recall(d: EvalData, m: Measure) -> np.ndarray:
    return _div(d.seg_count(rel_rows(d, m)), d.num_rel(m["rel"]))


def _success(d: EvalData, m: Measure) -> np.ndarray:
    return (d.seg_count(rel_rows(d, m)) > 0).astype(np.float64)


def _judged(d: EvalData, m: Measure) -> np.ndarray:
    return d.seg_count(d.j_rank <= m.k) / m.level


def _set_p(d: EvalData, m: Measure) -> np.ndarray:
    return _div(d.seg_count(d.j_relevant(m["rel"])), d.n_ret)


def _set_r(d: EvalData, m: Measure) -> np.ndarray:
    return _div(d.seg_count(d.j_relevant(m["rel"])), d.num_rel(m["rel"]))


def _set_f(d: EvalData, m: Measure) -> np.ndarray:
    p, r = _set_p(d, m), _set_r(d, m)
    b2 = m["beta"] ** 2
    return _div((b2 + 1.0) * p * r, b2 * p + r)


# --- AP, RR, Rprec, Bpref ---------------------------------------------------------------------------


def _ap(d: EvalData, m: Measure) -> np.ndarray:
    return _div(precision_sums(d, rel_rows(d, m)), d.num_rel(m["rel"]))


def precision_sums(d: EvalData, mask: np.ndarray) -> np.ndarray:
    """Per query, Σ over the judged rows in ``mask`` of (rows of ``mask`` at or above it) / its rank:
    the numerator of average precision (and of RAGAS's context precision)."""
    rel = np.flatnonzero(mask)
    seg = d.j_seg[rel]
    n = seg.size
    if n:  # each relevant row's count among its query's relevant rows (see _rank_among)
        start = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
        so_far = np.arange(n, dtype=np.int64) - np.repeat(start, np.diff(np.r_[start, n])) + 1
    else:
        so_far = np.zeros(0, dtype=np.int64)
    prec = so_far / d.j_rank[rel]
    return np.bincount(seg, weights=prec, minlength=d.n_queries).astype(np.float64)


def _rr(d: EvalData, m: Measure) -> np.ndarray:
    rel = np.flatnonzero(rel_rows(d, m))
    out = np.zeros(d.n_queries)
    seg = d.j_seg[rel]
    if seg.size:
        first = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
        out[seg[first]] = 1.0 / d.j_rank[rel[first]]
    return out


def _rprec(d: EvalData, m: Measure) -> np.ndarray:
    R = d.num_rel(m["rel"])
    mask = d.j_relevant(m["rel"]) & (d.j_rank <= R[d.j_seg])
    return _div(d.seg_count(mask), R)


def _bpref(d: EvalData, m: Measure) -> np.ndarray:
    level = m["rel"]
    rel = d.j_relevant(level)
    nonrel = (d.j_grade >= 0) & (d.j_grade < level)
    R = d.num_rel(level)
    N = seg_sum(((d.q_grade >= 0) & (d.q_grade < level)).astype(np.int64), d.q_off)
    # judged non-relevant rows strictly above each judged row of the same query
    cum = np.cumsum(nonrel)
    seg_start = np.searchsorted(d.j_seg, np.arange(d.n_queries), side="left")
    before = np.r_[0, cum][seg_start][d.j_seg]
    above = cum - nonrel - before
    Rq, Nq = R[d.j_seg], N[d.j_seg]
    penalty = _div(np.minimum(above, Rq), np.minimum(Nq, Rq))
    return _div(d.seg_total(1.0 - penalty, rel), R)


# --- interpolated precision -------------------------------------------------------------------------


def _iprec_table(d: EvalData, rel_level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per relevant retrieved row: its query, its count j among relevant retrieved, and
    max precision over rows with count >= j (the interpolated precision at j)."""
    rel = d.j_relevant(rel_level)
    seg = d.j_seg[rel]
    j = _rank_among(rel, d.j_seg)
    prec = j / d.j_rank[rel]
    # Segmented suffix maximum, exact: accumulate the precisions' integer order with a per-segment
    # offset (adding a float offset to the precisions themselves would round away their low bits).
    if prec.size:
        u, inv = np.unique(prec, return_inverse=True)
        off = (d.n_queries - seg[::-1].astype(np.int64)) * np.int64(u.size)
        interp = u[(np.maximum.accumulate(inv.reshape(-1)[::-1] + off) - off)[::-1]]
    else:
        interp = prec
    return seg, j, interp


def iprec_at(d: EvalData, rel_level: int, level: float, rounding: str) -> np.ndarray:
    R = d.num_rel(rel_level)
    seg, j, interp = _iprec_table(d, rel_level)
    if rounding == "v9":
        need = np.floor(level * R + 0.9).astype(np.int64)
    else:
        x = level * R  # C lround, exactly (floor(x + 0.5) rounds 0.49999999999999994 up)
        need = (np.floor(x) + (x - np.floor(x) >= 0.5)).astype(np.int64)
    need = np.maximum(need, 1)
    out = np.zeros(d.n_queries)
    hit = np.flatnonzero(j == need[seg])
    out[seg[hit]] = interp[hit]
    return out


def _iprec(d: EvalData, m: Measure) -> np.ndarray:
    return iprec_at(d, m["rel"], m.level, m["rounding"])


ELEVEN = tuple(i / 10 for i in range(11))


def _aucpr(d: EvalData, m: Measure) -> np.ndarray:
    pts = [iprec_at(d, m["rel"], p, m["rounding"]) for p in ELEVEN]
    area = np.zeros(d.n_queries)
    for a, b in itertools.pairwise(pts):
        area += 0.05 * (a + b)
    return area


# --- DCG family -------------------------------------------------------------------------------------


def _gain_of(grades: np.ndarray, m: Measure) -> np.ndarray:
    gains = m["gains"]
    if m["dcg"] == "exp-log2":
        base = np.where(grades > 0, np.exp2(np.maximum(grades, 0).astype(np.float64)) - 1.0, 0.0)
    else:
        base = np.maximum(grades, 0).astype(np.float64)
    if gains:
        for g, v in gains:
            base = np.where(grades == g, v, base)
    return base


def _dcg_parts(d: EvalData, m: Measure) -> tuple[np.ndarray, np.ndarray]:
    k = None if m.cutoff is None else m.k
    # only rows within the cutoff with a non-zero gain count: the gains and discounts of those
    # alone (the same values, summed in the same order, as over all rows and then masked)
    rows = np.flatnonzero(d.j_rank <= k) if k is not None else None
    grade = d.j_grade if rows is None else d.j_grade[rows]
    gain = _gain_of(grade, m)
    nz = np.flatnonzero(gain != 0)
    rows = nz if rows is None else rows[nz]
    dcg = np.bincount(d.j_seg[rows], weights=gain[nz] / np.log2(d.j_rank[rows] + 1.0), minlength=d.n_queries).astype(
        np.float64
    )
    if k is not None and not m["gains"]:
        # the default gains are monotone in the grade and q_grade is sorted descending per query, so
        # the ideal ranking's top k is each query's first k judged grades: read only those rows
        lens = np.minimum(np.diff(d.q_off), k)
        pos = np.arange(int(lens.sum()), dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        rows = np.repeat(d.q_off[:-1], lens) + pos
        qg = _gain_of(d.q_grade[rows], m)
        ideal = np.where(qg > 0, qg, 0.0) / np.log2(pos + 2.0)
        return dcg, np.bincount(np.repeat(np.arange(d.n_queries), lens), weights=ideal, minlength=d.n_queries)
    qg = _gain_of(d.q_grade, m)
    if m["gains"]:
        order = np.lexsort((-qg, d.q_seg))
        qg = qg[order]
    ideal = np.where(qg > 0, qg, 0.0) / np.log2(d.q_pos + 1.0)
    if k is not None:
        ideal = np.where(d.q_pos <= k, ideal, 0.0)
    return dcg, seg_sum(ideal, d.q_off)


def _ndcg(d: EvalData, m: Measure) -> np.ndarray:
    dcg, idcg = _dcg_parts(d, m)
    return _div(dcg, idcg)


def _dcg(d: EvalData, m: Measure) -> np.ndarray:
    return _dcg_parts(d, m)[0]


def _err(d: EvalData, m: Measure) -> np.ndarray:
    gmax = int(m["gmax"])
    g = np.maximum(d.j_grade, 0).astype(np.float64)
    # (2^g - 1) / 2^gmax as 2^(g - gmax) - 2^-gmax: the same value (both exact up to one rounding)
    # without overflowing 2^g for large grades; grades above gmax count as 1
    over = g - float(gmax)
    R = np.where(over > 0, 1.0, np.exp2(np.minimum(over, 0.0)) - np.exp2(-float(gmax)))
    R = np.clip(R, 0.0, 1.0)
    R = np.where(d.j_rank <= m.k, R, 0.0)
    # probability the user reaches a row: the product of (1 - R_i) over the judged rows above it, as a
    # sum of logs; a row with R = 1 (every later row is unreachable) is counted apart, never as log 0
    stop = R >= 1.0
    log_keep = np.log1p(-np.where(stop, 0.0, R))
    seg_start = np.searchsorted(d.j_seg, np.arange(d.n_queries), side="left")
    # the running sum within each query alone, so a query's value does not depend on the queries
    # batched with it (streaming chunks, Spark partitions)
    excl = seg_prefix(log_keep, d.j_seg, d.n_queries) - log_keep
    stops = np.cumsum(stop)
    stopped = (stops - stop - np.r_[0, stops][seg_start][d.j_seg]) > 0
    contrib = np.where((R > 0) & ~stopped, np.exp(excl) * R / d.j_rank, 0.0)
    return d.seg_total(contrib)


# --- counts -----------------------------------------------------------------------------------------


def _num_q(d: EvalData, m: Measure) -> np.ndarray:
    return np.ones(d.n_queries)


def _num_ret(d: EvalData, m: Measure) -> np.ndarray:
    return d.n_ret.astype(np.float64)


def _num_rel(d: EvalData, m: Measure) -> np.ndarray:
    return d.num_rel(m["rel"]).astype(np.float64)


def _num_rel_ret(d: EvalData, m: Measure) -> np.ndarray:
    return d.seg_count(d.j_relevant(m["rel"])).astype(np.float64)


GAINS = Param(
    "gains", "gains", None, "custom gain per grade, e.g. {0:0,1:1,2:3,3:7}; unlisted grades keep the default gain"
)
DCG = Param(
    "dcg",
    "str",
    "log2",
    "gain form: log2 (linear gain, trec_eval) or exp-log2 (2^g - 1, Burges)",
    choices=("log2", "exp-log2"),
)
ROUNDING = Param(
    "rounding",
    "str",
    "lround",
    "recall cut-off rounding: lround (trec_eval 10) or v9 ((long)(p*R + 0.9))",
    choices=("lround", "v9"),
)


def _binary(
    name: str,
    summary: str,
    formula: str,
    citation: str,
    kernel: Kernel,
    params: tuple[Param, ...] = (),
    *,
    judged_only: bool = False,
    **more: Any,
) -> Family:
    """A family of binary relevance: grade >= ``rel``, then its own ``params`` (and ``judged_only``)."""
    family = Family(name, summary, formula, citation, kernel, (REL, *params), **more)
    return with_judged_only(family) if judged_only else family


def _count(name: str, summary: str, formula: str, kernel: Kernel, params: tuple[Param, ...], **more: Any) -> Family:
    """A count of trec_eval's: of the whole ranking, summed over the queries (not averaged), unbounded."""
    return Family(name, summary, formula, TREC, kernel, params, cutoff="none", aggregate="sum", bounds=None, **more)


for fam in (
    _binary(
        "P",
        "Precision at k",
        "P@k = |relevant ∩ top k| / k (padded with non-relevant when fewer than k retrieved)",
        TREC,
        _precision,
        judged_only=True,
        cutoff="required",
        aliases=("precision",),
    ),
    _binary(
        "R",
        "Recall at k",
        "R@k = |relevant ∩ top k| / |relevant judged|; 0 when nothing is relevant",
        TREC,
        _recall,
        judged_only=True,
        cutoff="required",
        aliases=("recall",),
    ),
    _binary(
        "AP",
        "Average precision",
        "AP@k = Σ_{relevant d at rank i ≤ k} (relevant in top i / i) / |relevant judged|",
        "Harman 1993; " + TREC,
        _ap,
        judged_only=True,
        aliases=("map", "map_cut", "MAP"),
        perfect_is_one=True,
    ),
    _binary(
        "RR",
        "Reciprocal rank of the first relevant doc",
        "RR@k = 1 / rank of the first relevant doc within the top k, else 0",
        "Voorhees 1999 (TREC-8 QA); " + TREC,
        _rr,
        judged_only=True,
        aliases=("MRR", "recip_rank", "mrr"),
        perfect_is_one=True,
    ),
    _binary(
        "Rprec",
        "R-precision",
        "Rprec = |relevant ∩ top R| / R, R = |relevant judged|",
        TREC,
        _rprec,
        judged_only=True,
        cutoff="none",
        aliases=("r-precision", "rprecision", "Rprec"),
        perfect_is_one=True,
    ),
    _binary(
        "Success",
        "Success (hit) at k",
        "Success@k = 1 if any relevant doc is in the top k, else 0",
        TREC,
        _success,
        judged_only=True,
        cutoff="required",
        aliases=("Hit", "hit_rate", "hits_rate", "success", "hit"),
    ),
    _binary(
        "Bpref",
        "Binary preference",
        "bpref = (1/R) Σ_{relevant retrieved r} (1 − min(n_r, R) / min(N, R)); n_r = judged non-relevant above r, N = judged non-relevant",
        "Buckley & Voorhees, SIGIR 2004; " + TREC,
        _bpref,
        cutoff="none",
        aliases=("bpref",),
        perfect_is_one=True,
    ),
    _binary(
        "IPrec",
        "Interpolated precision at a recall level",
        "IPrec@p = max precision at any rank whose recall ≥ p, with the recall cut-off round(p·R) relevant docs",
        TREC,
        _iprec,
        (ROUNDING,),
        judged_only=True,
        cutoff="required",
        cutoff_kind="float",
        aliases=("iprec_at_recall",),
    ),
    _binary(
        "AUCPR",
        "Area under the 11-point interpolated precision–recall curve",
        "AUCPR = Σ_{i=0..9} 0.1 · (IPrec@(i/10) + IPrec@((i+1)/10)) / 2 (trapezoid rule)",
        TREC,
        _aucpr,
        (ROUNDING,),
        cutoff="none",
        perfect_is_one=True,
    ),
    with_judged_only(
        Family(
            "nDCG",
            "Normalised discounted cumulative gain",
            "nDCG@k = DCG@k / IDCG@k, DCG@k = Σ_{i≤k} gain(g_i) / log2(i + 1); IDCG from all judged docs; 0 when IDCG = 0",
            "Järvelin & Kekäläinen, TOIS 2002; " + TREC,
            _ndcg,
            (GAINS, DCG),
            aliases=("ndcg", "ndcg_cut", "NDCG"),
            perfect_is_one=True,
        ),
    ),
    Family(
        "DCG",
        "Discounted cumulative gain",
        "DCG@k = Σ_{i≤k} gain(g_i) / log2(i + 1)",
        "Järvelin & Kekäläinen, TOIS 2002",
        _dcg,
        (GAINS, DCG),
        bounds=None,
        aliases=("dcg",),
    ),
    Family(
        "ERR",
        "Expected reciprocal rank",
        "ERR@k = Σ_{r≤k} (1/r) R(g_r) Π_{i<r} (1 − R(g_i)), R(g) = (2^g − 1) / 2^gmax",
        "Chapelle, Metzler, Zhang & Grinspan, CIKM 2009",
        _err,
        (
            Param(
                "gmax",
                "int",
                None,
                "the top grade of the qrels' scale, e.g. ERR(gmax=3)@10 for TREC DL's 0-3 (4 reproduces "
                "gdeval); never taken from the qrels, where one query's value would move with the other "
                "queries' judgments. trec_eval has no ERR",
                lo=0,
                required=True,
            ),
        ),
        cutoff="required",
        aliases=("err",),
    ),
    Family(
        "Judged",
        "Fraction of the top k that is judged",
        "Judged@k = |judged ∩ top k| / k",
        "Sakai & Kando 2008; ir_measures",
        _judged,
        (),
        cutoff="required",
        aliases=("judged",),
    ),
    _binary(
        "SetP",
        "Precision of the whole retrieved set",
        "SetP = |relevant ∩ retrieved| / |retrieved|",
        TREC,
        _set_p,
        judged_only=True,
        cutoff="none",
        aliases=("set_P",),
    ),
    _binary(
        "SetR",
        "Recall of the whole retrieved set",
        "SetR = |relevant ∩ retrieved| / |relevant judged|",
        TREC,
        _set_r,
        cutoff="none",
        aliases=("set_recall",),
    ),
    _binary(
        "SetF",
        "F-measure of the retrieved set",
        "SetF = (β²+1)·SetP·SetR / (β²·SetP + SetR)",
        TREC,
        _set_f,
        (Param("beta", "float", 1.0, "weight of recall relative to precision", lo=0.0),),
        judged_only=True,
        cutoff="none",
        aliases=("set_F",),
    ),
    _count(
        "NumQ",
        "Number of queries evaluated",
        "NumQ = Σ_q 1",
        _num_q,
        (),
        aliases=("num_q",),
    ),
    _count(
        "NumRet",
        "Number of docs retrieved",
        "NumRet = Σ_q |retrieved_q|",
        _num_ret,
        (),
        aliases=("num_ret",),
    ),
    _count(
        "NumRel",
        "Number of relevant judged docs",
        "NumRel = Σ_q |relevant judged_q|",
        _num_rel,
        (REL,),
        aliases=("num_rel",),
    ),
    _count(
        "NumRelRet",
        "Number of relevant docs retrieved",
        "NumRelRet = Σ_q |relevant ∩ retrieved_q|",
        _num_rel_ret,
        (REL,),
        aliases=("num_rel_ret",),
    ),
):
    register(fam)

add_alias("precision", "P")
add_trec_param(
    "SetF", "beta", lambda x: math.sqrt(x) if x >= 0 else x
)  # set_F.x: x = β² (a negative x is refused by the bounds)
add_alias("hit_rate", "Success")


# --- trec_eval's names for these measures (ctxeval trec_eval) ---------------------------------------

LONG_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def _rel(name: str) -> Callable[[EvalData, TrecArgs], np.ndarray]:
    """trec_eval's measure: the family at relevance level -l."""
    return lambda d, a: make(name, {"rel": a.level}).compute(d)


def _at(name: str, rel: bool = True) -> Callable[[EvalData, TrecArgs, int], np.ndarray]:
    """trec_eval's measure at a cut-off: the family @k (at relevance level -l)."""
    return lambda d, a, k: make(name, {"rel": a.level} if rel else None, k).compute(d)


for spec in (
    TrecSpec(
        "num_ret",
        2,
        "long",
        lambda d, a: d.n_ret.astype(np.float64),
        summary="sum",
        family="NumRet",
        sets=("official", "set", "all_trec"),
    ),
    TrecSpec(
        "num_rel", 3, "long", _rel("NumRel"), summary="sum", family="NumRel", sets=("official", "set", "all_trec")
    ),
    TrecSpec(
        "num_rel_ret",
        4,
        "long",
        _rel("NumRelRet"),
        summary="sum",
        family="NumRelRet",
        sets=("official", "set", "all_trec"),
    ),
    TrecSpec("map", 5, "double", _rel("AP"), family="AP", sets=("official", "all_trec")),
    TrecSpec("Rprec", 7, "double", _rel("Rprec"), family="Rprec", sets=("official", "all_trec")),
    TrecSpec("bpref", 8, "double", _rel("Bpref"), family="Bpref", sets=("official", "all_trec")),
    TrecSpec("recip_rank", 9, "double", _rel("RR"), family="RR", sets=("official", "all_trec")),
    TrecSpec("P", 11, "cut_long", _at("P"), LONG_CUTS, family="P", sets=("official", "all_trec")),
    TrecSpec("recall", 13, "cut_long", _at("R"), LONG_CUTS, family="R"),
    TrecSpec("ndcg_cut", 26, "cut_long", _at("nDCG", rel=False), LONG_CUTS, family="nDCG"),
    TrecSpec("map_cut", 27, "cut_long", _at("AP"), LONG_CUTS, family="AP"),
    TrecSpec("success", 29, "cut_long", _at("Success"), (1, 5, 10), family="Success"),
    TrecSpec("set_P", 30, "double", _rel("SetP"), family="SetP", sets=("set", "all_trec")),
    TrecSpec("set_recall", 32, "double", _rel("SetR"), family="SetR", sets=("set", "all_trec")),
):
    register_trec(spec)
