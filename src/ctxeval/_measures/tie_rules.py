"""The tie rules of the RAG, trec_eval, distraction and context families (see :mod:`.tie_kernels` for
the closed forms and their notation). Set-based RAG measures are sums over the top k, so their
expected values weigh each judged doc by its probability of ranking within it; GoldHit is
hypergeometric. Measures reading per-passage side data (utilities, a sample set's facets, nuggets
and citations, a judge's labels, a pool cut at a depth) are averaged over every order of the ties,
their side data built again for each order.
"""

from __future__ import annotations

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import count_before, div0, ratio
from .._core.ties import log_choose
from .base import Measure, Ties, averaged, register_ties
from .rag import _grades, _idx, g_ideal, grade_counts, weights
from .tie_kernels import INVARIANT, MEAN, TOP, _groups, _sum, _top_sum, closed, in_top, rank_mean, span, straddling
from .trec import _k_gm_bpref, _k_gm_map
from .trec_kernels import rbp_gains
from .trec_support import num_rel, p_powers, rel_rows, trunc_long

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
