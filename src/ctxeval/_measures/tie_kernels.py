"""Closed forms of the expected value of a measure over every order of tied scores (McSherry & Najork,
"Computing Information Retrieval Performance Measures Efficiently in the Presence of Tied Scores",
ECIR 2008), and each family's :class:`~.base.Ties` rule.

Notation, per query: a tie group holds the ranks a .. a+n-1 (n rows, r of them relevant); its rows are
in a uniformly random order, the groups independent. A row of a group lands on each of its ranks with
probability 1/n, so the expected value of a sum of per-rank terms Σ_i f(i)·g(row at i) is Σ_rows g(row)
· (1/n) Σ_{i=a}^{a+n-1} f(i) (:func:`rank_mean`: DCG, RBP, P@k, R@k, ...). Of a group straddling a cutoff
k (m = k - a + 1 of its ranks inside), the number of its x rows of a kind that fall inside is
hypergeometric: P(none inside) = C(n - x, m) / C(n, m) (:func:`none_in_top`: Success@k). Given that a
relevant row sits at the i-th rank of its group, the relevant rows above it within the group number
(i - 1)(r - 1)/(n - 1) in expectation, and c0 (those of the groups above) for sure: AP's numerator
Σ_{i ≤ m'} (r/n)(c0 + 1 + (i - 1)(r - 1)/(n - 1)) / (a + i - 1) = (r/n)[(c0 + 1) H + (r - 1)/(n - 1)
(m' - a H)], H = Σ_{i=a}^{a+m'-1} 1/i, m' the group's ranks within the cutoff (:func:`ap_terms`). Of a
relevant row and the s judged non-relevant rows of its group, every relative order is equally likely:
the number of those above it is uniform on 0..s (Bpref, binG). RR: the first relevant row of the first
group holding one sits at its i-th rank with probability C(n - i, r - 1) / C(n, r).

Families without a closed form here are *averaged* (:func:`~.base.averaged`): their own kernel over every
distinct order of the ties, exact, refused past a budget. The rules are listed by ``ctxeval measures``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import count_before, div0, ratio, segment_rows
from .._core.ties import log_choose
from .base import Measure, Ties, averaged, register_ties
from .classical import _dcg_parts, _gain_of

__all__ = ["ap_terms", "in_top", "none_in_top", "rank_mean", "span", "straddling"]


# --- the tie groups of the judged rows ---------------------------------------------------------------


def span(d: EvalData, rows: str = "judged") -> tuple[np.ndarray, np.ndarray]:
    """Per judged row (or per ranked row, ``rows="ranked"``): the 1-based first rank of its tie group
    and the group's size."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        g = d.tie_groups
        assert g is not None
        if rows == "ranked":
            return g.start + 1, g.size
        return g.start[d.j_idx] + 1, g.size[d.j_idx]

    return d.memo(("tie_span", rows), compute)


def in_top(d: EvalData, k: np.ndarray | int | float, rows: str = "judged") -> np.ndarray:
    """Per judged (or ranked) row: the probability that it ranks within the top ``k`` (a number, or
    one per row)."""
    a, n = span(d, rows)
    return np.clip(np.asarray(k) - a + 1, 0, n) / n


def rank_mean(
    d: EvalData, f: Callable[[np.ndarray], np.ndarray], k: int | None = None, rows: str = "judged"
) -> np.ndarray:
    """Per judged (or ranked) row: the mean of ``f(i)`` over the ranks i of its tie group, counting 0
    past the cutoff ``k``; ``f(a)`` itself (within the cutoff) for an untied row."""
    a, n = span(d, rows)
    last = a + n - 1
    top = int(last.max()) if last.size else 0
    ranks = np.arange(1, top + 1, dtype=np.int64)
    vals = np.asarray(f(ranks), dtype=np.float64)
    if k is not None:
        vals = np.where(ranks <= k, vals, 0.0)
    table = np.r_[0.0, np.cumsum(vals)]
    out = (table[last] - table[a - 1]) / n
    one = n == 1
    out[one] = vals[a[one] - 1]
    return out


def _groups(d: EvalData, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Of the judged rows in ``mask`` (rank order): which start a new tie group among them, and each
    row's group number among those groups."""
    a, _ = span(d)
    seg, at = d.j_seg[mask], a[mask]
    new = np.ones(seg.size, dtype=bool)
    if seg.size > 1:
        new[1:] = (seg[1:] != seg[:-1]) | (at[1:] != at[:-1])
    return new, np.cumsum(new) - 1


def straddling(d: EvalData, mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Of each query's tie group straddling the cutoff k (ranks on both sides of it) that holds rows of
    ``mask``: the query, how many rows of ``mask`` it holds (x), its size (n) and its ranks within the
    cutoff (m)."""
    a, n = span(d)
    strad = mask & (a <= k) & (a + n - 1 > k)
    new, gid = _groups(d, strad)
    first = np.flatnonzero(strad)[new]
    return d.j_seg[first], np.bincount(gid, minlength=first.size), n[first], k - a[first] + 1


def none_in_top(d: EvalData, mask: np.ndarray, k: int) -> np.ndarray:
    """Per query: the probability that none of the judged rows in ``mask`` ranks within the top k."""
    a, n = span(d)
    out = np.ones(d.n_queries)
    out[d.j_seg[mask & (a + n - 1 <= k)]] = 0.0
    q, x, nn, m = straddling(d, mask, k)
    out[q] = np.where(out[q] == 0.0, 0.0, np.exp(log_choose(nn - x, m) - log_choose(nn, m)))
    return out


def ap_terms(d: EvalData, mask: np.ndarray, k: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """AP's numerator per tie group holding rows of ``mask`` (McSherry & Najork's closed form, see the
    module docstring), with the ranks past ``k`` left out. Returns the groups' queries, their
    contributions and their first rank."""
    a, n = span(d)
    new, gid = _groups(d, mask)
    rows = np.flatnonzero(mask)[new]
    r = np.bincount(gid).astype(np.float64)
    so_far = count_before(mask, d.j_seg, d.n_queries)  # relevant rows above each row of its query
    c0 = so_far[rows].astype(np.float64)
    aa, nn = a[rows], n[rows]
    mw = nn if k is None else np.clip(k - aa + 1, 0, nn)
    top = int((aa + nn).max()) if aa.size else 1
    harm = np.r_[0.0, np.cumsum(1.0 / np.arange(1, top + 1, dtype=np.float64))]
    h = harm[aa + mw - 1] - harm[aa - 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        inner = np.where(nn > 1, (r - 1) / np.maximum(nn - 1, 1), 0.0) * (mw - aa * h)
    out = (r / nn) * ((c0 + 1) * h + inner)
    one = nn == 1
    out[one] = np.where(mw[one] > 0, (c0[one] + 1) / aa[one], 0.0)
    return d.j_seg[rows], out, aa


def _sum(d: EvalData, seg: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.bincount(seg, weights=values, minlength=d.n_queries).astype(np.float64)


def _top_sum(d: EvalData, mask: np.ndarray, k: np.ndarray | int | float) -> np.ndarray:
    """Per query: the expected number of judged rows of ``mask`` within the top k."""
    kk = k[d.j_seg] if isinstance(k, np.ndarray) else k
    return _sum(d, d.j_seg[mask], in_top(d, kk)[mask])


# --- classical -----------------------------------------------------------------------------------------


def _precision(d: EvalData, m: Measure) -> np.ndarray:
    return _top_sum(d, d.j_relevant(m["rel"]), m.k) / m.level


def _recall(d: EvalData, m: Measure) -> np.ndarray:
    return div0(_top_sum(d, d.j_relevant(m["rel"]), m.k), d.num_rel(m["rel"]))


def _judged(d: EvalData, m: Measure) -> np.ndarray:
    return _top_sum(d, np.ones(d.j_idx.size, dtype=bool), m.k) / m.level


def _success(d: EvalData, m: Measure) -> np.ndarray:
    return 1.0 - none_in_top(d, d.j_relevant(m["rel"]), m.k)


def _ap(d: EvalData, m: Measure) -> np.ndarray:
    seg, terms, _ = ap_terms(d, d.j_relevant(m["rel"]), None if m.cutoff is None else m.k)
    return div0(_sum(d, seg, terms), d.num_rel(m["rel"]))


def _rr(d: EvalData, m: Measure) -> np.ndarray:
    mask = d.j_relevant(m["rel"])
    a, n = span(d)
    new, gid = _groups(d, mask)
    rows = np.flatnonzero(mask)[new]
    seg = d.j_seg[rows]
    first = np.r_[True, seg[1:] != seg[:-1]] if seg.size else np.zeros(0, dtype=bool)
    r = np.bincount(gid)[first]
    rows, seg = rows[first], seg[first]
    aa, nn = a[rows], n[rows]
    k = None if m.cutoff is None else m.k
    length = nn - r + 1 if k is None else np.minimum(nn - r + 1, np.maximum(k - aa + 1, 0))
    at = segment_rows(np.zeros(length.size, dtype=np.int64), length) + 1  # i = 1 .. length, per group
    g = np.repeat(np.arange(length.size), length)
    p = np.exp(log_choose(nn[g] - at, r[g] - 1) - log_choose(nn[g], r[g]))
    out = np.zeros(d.n_queries)
    out[seg] = np.bincount(g, weights=p / (aa[g] + at - 1), minlength=length.size)
    return out


def _rprec(d: EvalData, m: Measure) -> np.ndarray:
    R = d.num_rel(m["rel"])
    return div0(_top_sum(d, d.j_relevant(m["rel"]), R), R)


def _bpref(d: EvalData, m: Measure) -> np.ndarray:
    level = m["rel"]
    rel = d.j_relevant(level)
    nonrel = (d.j_grade >= 0) & (d.j_grade < level)
    R = d.num_rel(level)
    N = np.bincount(d.q_seg[(d.q_grade >= 0) & (d.q_grade < level)], minlength=d.n_queries)
    every = np.ones(d.j_idx.size, dtype=bool)
    new, gid = _groups(d, every)
    above = count_before(nonrel, d.j_seg, d.n_queries)
    c0 = above[np.flatnonzero(new)][gid]  # judged non-relevant rows of the groups above
    s = np.bincount(gid, weights=nonrel)[gid]  # ... and of the row's own group
    Rq = R[d.j_seg].astype(np.float64)
    t = np.clip(Rq - c0, 0, s + 1)
    mean_min = (t * c0 + t * (t - 1) / 2 + (s + 1 - t) * Rq) / (s + 1)  # E min(c0 + U, R), U ~ U{0..s}
    penalty = div0(mean_min, np.minimum(N[d.j_seg], Rq))
    return div0(_sum(d, d.j_seg[rel], (1.0 - penalty)[rel]), R)


def _dcg_num(d: EvalData, m: Measure) -> np.ndarray:
    gain = _gain_of(d.j_grade, m)
    k = None if m.cutoff is None else m.k
    w = rank_mean(d, lambda i: 1.0 / np.log2(i + 1.0), k)
    nz = gain != 0
    return _sum(d, d.j_seg[nz], gain[nz] * w[nz])


def _dcg(d: EvalData, m: Measure) -> np.ndarray:
    return _dcg_num(d, m)


def _ndcg(d: EvalData, m: Measure) -> np.ndarray:
    return div0(_dcg_num(d, m), _dcg_parts(d, m)[1])


def _ranked_weight(d: EvalData, m: Measure) -> np.ndarray:
    """RankWeightedPrecision@k (RAGAS's context precision on ids): AP's numerator over the relevant rows
    of the top k, divided by their number, both random when a tie group straddles k: conditioned on the
    j relevant rows of that group that fall inside (hypergeometric), which then lie uniformly among its
    m ranks within the cutoff."""
    mask = d.j_relevant(m["rel"])
    if m.cutoff is None:
        seg, terms, _ = ap_terms(d, mask, None)
        return div0(_sum(d, seg, terms), d.seg_count(mask))
    k = m.k
    a, n = span(d)
    inside = mask & (a + n - 1 <= k)
    seg, terms, _ = ap_terms(d, inside, None)
    fixed, before = _sum(d, seg, terms), d.seg_count(inside).astype(np.float64)
    out = div0(fixed, before)
    q, rs, nn, mm = straddling(d, mask, k)
    if not q.size:
        return out
    aa = k - mm + 1
    c0 = before[q]
    top = k + 1
    harm = np.r_[0.0, np.cumsum(1.0 / np.arange(1, top + 1, dtype=np.float64))]
    h = harm[aa + mm - 1] - harm[aa - 1]
    total = np.zeros(q.size)
    for j in range(int(np.minimum(rs, mm).max()) + 1):
        pj = np.exp(log_choose(rs, j) + log_choose(nn - rs, mm - j) - log_choose(nn, mm))
        with np.errstate(invalid="ignore", divide="ignore"):
            inner = np.where(mm > 1, (j - 1) / np.maximum(mm - 1, 1), 0.0) * (mm - aa * h)
            num = fixed[q] + np.where(j > 0, (j / mm) * ((c0 + 1) * h + inner), 0.0)
        total += np.where(pj > 0, pj * div0(num, c0 + j), 0.0)
    out[q] = total
    return out


def _id_precision(d: EvalData, m: Measure) -> np.ndarray:
    return div0(_top_sum(d, d.j_relevant(m["rel"]), m.k), np.minimum(d.n_ret, m.k))


def _id_recall(d: EvalData, m: Measure) -> np.ndarray:
    return ratio(_top_sum(d, d.j_relevant(m["rel"]), m.k), d.num_rel(m["rel"]))


def _context_precision(d: EvalData, m: Measure) -> np.ndarray:
    return _ranked_weight(d, m) if m["method"] == "ids" else averaged(d, m)


def _context_recall(d: EvalData, m: Measure) -> np.ndarray:
    if m["method"] != "ids":
        return averaged(d, m)
    if m.cutoff is None:
        return m.spec.kernel(d, m)
    return _id_recall(d, m)


# --- the rules --------------------------------------------------------------------------------------


def closed(family: str, kernel: Callable[[EvalData, Measure], np.ndarray], form: str) -> None:
    register_ties(family, Ties("closed", kernel, form))


def uncut(kernel: Callable[[EvalData, Measure], np.ndarray]) -> Callable[[EvalData, Measure], np.ndarray]:
    """``kernel`` for a measure with a cutoff; without one (the whole list) its own kernel: a set."""
    return lambda d, m: kernel(d, m) if m.cutoff is not None else np.asarray(m.spec.kernel(d, m))


MEAN = "Σ_rows g(row) · mean of f over its group's ranks"
TOP = "Σ_rows P(rank ≤ k) = clip(k − a + 1, 0, n) / n"
INVARIANT = Ties("invariant", form="the order of tied rows does not change it")

closed("P", _precision, TOP)
closed("R", _recall, TOP)
closed("Judged", _judged, TOP)
closed("Success", _success, "1 − C(n − x, m) / C(n, m) for the group straddling k (hypergeometric)")
closed("AP", _ap, "(r/n)[(c0 + 1) H + (r − 1)/(n − 1)(m' − a H)] per group (McSherry & Najork 2008)")
closed("RR", _rr, "Σ_i C(n − i, r − 1) / C(n, r) / (a + i − 1) over the first group holding a relevant doc")
closed("Rprec", _rprec, TOP + ", k = R")
closed("Bpref", _bpref, "non-relevant rows above a relevant one within its group: uniform on 0..s")
closed("nDCG", _ndcg, MEAN + ", f = 1/log2(i + 1); the ideal is fixed")
closed("DCG", _dcg, MEAN + ", f = 1/log2(i + 1)")
closed("IDBasedContextPrecision", uncut(_id_precision), TOP)
closed("IDBasedContextRecall", uncut(_id_recall), TOP)
closed("RankWeightedPrecision", _ranked_weight, "AP's closed form, conditioned on the hypergeometric count at k")
closed("ContextPrecision", _context_precision, "method=ids: as RankWeightedPrecision; other methods averaged")
closed("ContextRecall", _context_recall, "method=ids: " + TOP + "; other methods averaged")
for _name in ("SetP", "SetR", "SetF", "NumQ", "NumRet", "NumRel", "NumRelRet"):
    register_ties(_name, INVARIANT)
register_ties("ERR", Ties(window="cutoff"))
