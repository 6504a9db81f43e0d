"""The tie rules of the RAG, trec_eval, distraction, context, fairness and span families and of Accuracy
(see :mod:`.tie_kernels` for the closed forms and their notation). Set-based RAG measures are sums over
the top k, so their expected values weigh each judged doc by its probability of ranking within it;
GoldHit is hypergeometric. Measures reading per-passage side data (utilities, a sample set's facets,
nuggets and citations, a judge's labels, a pool cut at a depth, fairness groups, span labels) are
averaged over every order of the ties, their side data built again for each order.

Accuracy over the whole ranking: a relevant row's non-relevant rows above are those of the groups
above it (c0, fixed) and, of the s non-relevant rows of its own group, each with probability 1/2 (every
relative order of the two is equally likely); N and R do not depend on the order, so E[Accuracy] = 1 −
Σ_relevant (c0 + s/2) / (N · R). At a cutoff N and R of the top k move with the order: averaged, rows
told apart by relevance alone. The fairness measures read each ranked row's groups and weights (and
nDCG-AWRF its relevance): rows of the same labels are interchangeable, and none of them reads a rank
past its cutoff. The span measures read which chunks lie within the cutoff, not their order (whole
lists: invariant); precision_Omega does not read the run. For all of these, and every reading at a
budget or over span labels, the best and worst orders are the highest and lowest value of any order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import count_before, div0, ratio
from .._core.ties import log_choose
from .base import Measure, Ties, averaged, register_ties
from .rag import _grades, _idx, g_ideal, grade_counts, weights
from .tie_kernels import INVARIANT, MEAN, TOP, _groups, _sum, _top_sum, closed, in_top, rank_mean, span, straddling
from .tie_orders import combine, grade_classes
from .trec import _k_gm_bpref, _k_gm_map
from .trec_kernels import rbp_gains
from .trec_support import num_rel, p_powers, rel_rows, trunc_long

if TYPE_CHECKING:
    from .._core.extras import Fairness  # side data: a small run imports none of it

__all__: list[str] = []


# --- set-based RAG measures ------------------------------------------------------------------------------


def _util(d: EvalData) -> np.ndarray:
    return _idx(_grades(d).j_util)


def _between(d: EvalData, m: Measure, lo: int, hi: int) -> np.ndarray:
    u = _util(d)
    return _top_sum(d, (u >= lo) & (u <= hi), m.k)


def _ranwg(d: EvalData, m: Measure) -> np.ndarray:
    if m["novelty"] < 1.0:
        return averaged(d, m)
    w = weights(d, m)[d.j_seg, _util(d)]
    obs = _sum(d, d.j_seg, w * in_top(d, m.k))
    return ratio(obs, g_ideal(d, m, m.k))


def _nrecall4(d: EvalData, m: Measure) -> np.ndarray:
    c = grade_counts(d)
    return ratio(_between(d, m, 4, 5), np.minimum(m.k, c[:, 4] + c[:, 5]))


def _nrecall5(d: EvalData, m: Measure) -> np.ndarray:
    return ratio(_between(d, m, 5, 5), np.minimum(m.k, grade_counts(d)[:, 5]))


def _precision4(d: EvalData, m: Measure) -> np.ndarray:
    return _between(d, m, 4, 5) / float(m.k)


def _harm(d: EvalData, m: Measure) -> np.ndarray:
    harm = _between(d, m, 1, 2) / float(m.k)
    if _grades(d).binary:  # NA where some order puts an unlabelled chunk in the top k
        a, _ = span(d, "ranked")
        maybe = ~d.r_judged & (a <= m.k)
        harm = np.where(np.bincount(d.r_seg[maybe], minlength=d.n_queries) > 0, np.nan, harm)
    return harm


def _goldhit(d: EvalData, m: Measure) -> np.ndarray:
    """P(every grade >= 4 doc within the top k): all retrieved, none in a group past k, and the x of
    them in the group straddling k all inside: C(n - x, m - x) / C(n, m)."""
    k = m.k
    c = grade_counts(d)
    n45 = c[:, 4] + c[:, 5]
    gold = _util(d) >= 4
    a, _ = span(d)
    p = np.where(d.seg_count(gold) == n45, 1.0, 0.0)
    p[d.j_seg[gold & (a > k)]] = 0.0
    q, x, nn, mm = straddling(d, gold, k)
    p[q] *= np.exp(log_choose(nn - x, mm - x) - log_choose(nn, mm))
    return np.where(n45 > 0, p, np.nan)


# --- trec_eval's measures -----------------------------------------------------------------------------


def _rprec_mult(d: EvalData, m: Measure) -> np.ndarray:
    rel = m["rel"]
    c = trunc_long(float(m["mult"]) * num_rel(d, rel).astype(np.float64) + 0.9)
    return div0(_top_sum(d, rel_rows(d, rel), c), np.where(c >= 1, c, 0))


def _relative_p(d: EvalData, m: Measure) -> np.ndarray:
    rel = m["rel"]
    return div0(_top_sum(d, rel_rows(d, rel), m.k), np.minimum(num_rel(d, rel), m.k))


def _unj(d: EvalData, m: Measure) -> np.ndarray:
    judged = _top_sum(d, d.j_grade >= 0, m.k)
    return (np.minimum(d.n_ret, m.k) - judged) / float(m.k)


def _rbp(d: EvalData, m: Measure) -> np.ndarray:
    p = m["p"]
    rg = rbp_gains(d, m["rel"], m["gains"])
    top = int(d.n_ret.max()) if d.n_ret.size else 0
    powers = p_powers(p, top)
    w = rank_mean(d, lambda i: powers[i - 1], None if m.cutoff is None else m.k)
    nz = rg != 0
    return (1.0 - p) * _sum(d, d.j_seg[nz], rg[nz] * w[nz])


def _rbp_resid(d: EvalData, m: Measure) -> np.ndarray:
    p = m["p"]
    ret = np.asarray(d.n_ret, dtype=np.int64)
    unj = ~d.r_judged | (d.r_grade < 0)
    powers = p_powers(p, int(ret.max()) if ret.size else 0)
    w = rank_mean(d, lambda i: powers[i - 1], None, rows="ranked")
    total = _sum(d, d.r_seg[unj], w[unj])
    any_unj = np.bincount(d.r_seg[unj], minlength=d.n_queries) > 0
    return np.where(any_unj, powers[ret] + (1 - p) * total, 0.0)


def _bing(d: EvalData, m: Measure) -> np.ndarray:
    """Σ over relevant rows of 1/log2(2 + non-relevant rows above), over R: of a relevant row and the s
    non-relevant rows of its group (judged or not) every relative order is equally likely, so the
    non-relevant rows above it are c0 + U, U uniform on 0..s."""
    rel = m["rel"]
    mask = rel_rows(d, rel)
    a, n = span(d)
    new, gid = _groups(d, mask)
    first = np.flatnonzero(mask)[new]
    r = np.bincount(gid)
    so_far = count_before(mask, d.j_seg, d.n_queries)
    c0 = (a[first] - 1) - so_far[first]  # non-relevant rows of the groups above
    s = n[first] - r
    top = int((c0 + s).max()) + 2 if c0.size else 2
    table = np.r_[0.0, 0.0, np.cumsum(1.0 / np.log2(np.arange(2, top + 1, dtype=np.float64)))]
    mean = (table[c0 + s + 2] - table[c0 + 1]) / (s + 1)
    total = _sum(d, d.j_seg[first], r * mean)
    any_rel = d.seg_count(mask) > 0
    return np.where(any_rel, div0(total, num_rel(d, rel)), 0.0)


# --- the rules --------------------------------------------------------------------------------------

closed("RA-nWG", _ranwg, "G_obs: Σ_judged w(g) · P(rank ≤ k); novelty < 1: averaged")
closed("N-Recall4+", _nrecall4, TOP)
closed("N-Recall5", _nrecall5, TOP)
closed("Precision4+", _precision4, TOP)
closed("Harm", _harm, TOP + "; binary labels: NA where some order puts an unlabelled chunk in the top k")
closed("GoldHit", _goldhit, "C(n − x, m − x) / C(n, m) for the group straddling k (hypergeometric)")
closed("gm_map", _k_gm_map, "AP's closed form, per query")
closed("gm_bpref", _k_gm_bpref, "Bpref's closed form, per query")
closed("Rprec_mult", _rprec_mult, TOP + ", k = (long)(mult·R + 0.9)")
closed("relative_P", _relative_p, TOP)
closed("unj", _unj, TOP)
closed("RBP", _rbp, MEAN + ", f = p^(i − 1)")
closed("rbp_resid", _rbp_resid, MEAN + ", f = p^(i − 1), over the unjudged rows")
closed("binG", _bing, "non-relevant rows above a relevant one within its group: uniform on 0..s")
for _name in ("utility", "ideal_dcg", "set_relative_P", "SetAP", "num_nonrel_judged_ret"):
    register_ties(_name, INVARIANT)
for _name in (
    "dDCG",
    "ndDCG",
    "UDCG",
    "UDCG-pos",
    "DistractorRate",
    "DistractorHarm",
    "CoverageRecall",
    "NuggetRecall",
    "AttributionRate",
):
    register_ties(_name, Ties(window="cutoff"))


# --- Accuracy, fairness, spans -------------------------------------------------------------------------


def _accuracy(d: EvalData, m: Measure) -> np.ndarray:
    """Accuracy over the whole ranking (see the module docstring)."""
    g = d.tie_groups
    assert g is not None
    rel = d.r_grade >= int(m["rel"])  # an unjudged row has grade 0, as the kernel reads it
    cum = np.r_[0, np.cumsum(~rel)]
    q_first = np.repeat(d.r_off[:-1], d.n_ret)
    first = q_first + g.start
    c0 = cum[first] - cum[q_first]
    s = cum[first + g.size] - cum[first]
    above = np.bincount(d.r_seg[rel], weights=(c0 + s / 2.0)[rel], minlength=d.n_queries)
    n_rel = np.bincount(d.r_seg[rel], minlength=d.n_queries)
    pairs = ((d.n_ret - n_rel) * n_rel).astype(np.float64)
    out = np.full(d.n_queries, np.nan)
    np.divide(above, pairs, out=out, where=pairs > 0)
    return np.where(pairs > 0, 1.0 - out, np.nan)


def _relevance(d: EvalData, m: Measure) -> np.ndarray:
    return (d.r_grade >= int(m["rel"])).astype(np.int64)


def _fair_labels(d: EvalData, m: Measure) -> np.ndarray:
    """Every ranked row's class: its fairness groups and weights (rows without labels: one class)."""
    fair: Fairness = d.extra("fairness")
    order = np.lexsort((fair.p_w, fair.p_group, fair.p_row))
    row = fair.p_row[order]
    n = np.bincount(row, minlength=d.n_rows)
    width = int(n.max(initial=0))
    keys = np.full((d.n_rows, 2 * width), -1, dtype=np.int64)
    at = np.arange(row.size) - np.repeat(np.cumsum(n) - n, n)
    keys[row, 2 * at] = fair.p_group[order]
    keys[row, 2 * at + 1] = fair.p_w[order].astype(np.float64).view(np.int64)
    return combine(*keys.T) if width else np.zeros(d.n_rows, dtype=np.int64)


def _fair_graded(d: EvalData, m: Measure) -> np.ndarray:
    return combine(_fair_labels(d, m), grade_classes(d))


register_ties(
    "Accuracy",
    Ties(
        "closed",
        _accuracy,
        "1 − Σ_relevant (c0 + s/2) / (N · R): of the s non-relevant rows of its group, each above with probability "
        "1/2; at a cutoff averaged",
        window="cutoff",
        applies=lambda m: m.cutoff is None and int(m["rel"]) >= 1,
        classes=_relevance,
        extremes="orders",
    ),
)
for _name, _classes in (("AWRF", _fair_labels), ("AWRF-FRT", _fair_labels), ("AWRF-FRT-gap", _fair_labels),
                        ("nDCG-AWRF", _fair_graded)):  # fmt: skip
    register_ties(_name, Ties(window="cutoff", classes=_classes, extremes="orders"))
for _name in ("SpanRecall", "SpanPrecision", "SpanIoU", "SpanCoverage"):
    register_ties(_name, Ties(window="set", extremes="orders"))
register_ties("PrecisionOmega", INVARIANT)
