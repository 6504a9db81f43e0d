"""Set-based RAG measures (Dallaire 2025, arXiv:2511.09545): of the best evidence that exists for a
query, how much did the system pack into the K unordered slots the LLM reads?

Labels are on a 1–5 utility scale (5 decisive, 4 highly relevant, 3 partial, 2 weak, 1 distractor);
the kernels read the ``grades`` side data (the qrels grades after the grade map in force), PROC and
%PROC the ``pool``, the novelty-discounted RA-nWG the doc ``groups``.
``evaluate`` refuses qrels outside 1–5; called directly on an :class:`EvalData`, the kernels count a
grade above 5 as 5 and a grade below 1 as 1. Unjudged docs in the top K weigh 0 and are not harm.

Per query, with N judged docs, n_g of grade g, p_g = n_g / N, base utilities b5 = 1, b4 = 0.5,
b3 = 0.1, b2 = b1 = 0, rarity r_g = b_g / p_g^α (0 when p_g = 0): weights w5 = 1,
w4 = min(r4/r5, cap4), w3 = min(r3/r5, cap3), w2 = w1 = 0; when n5 = 0, w4 = fallback4 and
w3 = fallback3. G_ideal@K is the sum of the K largest weights of the judged docs, G_pool@K the same
over the judged docs in the retrieval pool (see :mod:`ctxeval._pool`), G_obs@K the sum of the
weights of the run's top K. Every kernel is vectorised over all queries: the weights and the ideal
sums come from an ``n_queries × 6`` matrix of grade counts.

Undefined values are NaN and are left out of the mean; ``valid_queries`` counts the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.evaldata import EvalData

if TYPE_CHECKING:
    from .._core.extras import Grades, Groups, Pool
from .._core.segments import div0
from .._core.segments import ratio as _ratio
from .base import Family, Kernel, Measure, Param, add_alias, register

CITE = "Dallaire 2025, arXiv:2511.09545"
GRADES = frozenset({"grades"})
BASE = np.array([0.0, 0.0, 0.0, 0.1, 0.5, 1.0])  # b_g by grade (index 0 unused)

ALPHA = Param("alpha", "float", 1.0, "rarity exponent: r_g = b_g / p_g^alpha (0 turns rarity off)", lo=0.0)
CAP4 = Param("cap4", "float", 1.0, "upper bound of the grade-4 weight w4 = min(r4/r5, cap4)", lo=0.0)
CAP3 = Param("cap3", "float", 0.25, "upper bound of the grade-3 weight w3 = min(r3/r5, cap3)", lo=0.0)
FB4 = Param("fallback4", "float", 1.0, "w4 when the query has no grade-5 doc", lo=0.0)
FB3 = Param("fallback3", "float", 0.2, "w3 when the query has no grade-5 doc", lo=0.0)
WEIGHTS = (ALPHA, CAP4, CAP3, FB4, FB3)
NOVELTY = Param(
    "novelty",
    "float",
    1.0,
    "factor for repeats of a doc group in the top K (1 = off; needs a doc -> group mapping, groups= / --groups)",
    lo=0.0,
    hi=1.0,
)
OF = Param(
    "of",
    "str",
    "RA-nWG",
    "the measure whose pool-achievable value is taken: RA-nWG, N-Recall4+ or N-Recall5",
    choices=("RA-nWG", "N-Recall4+", "N-Recall5"),
)


def _idx(grades: np.ndarray) -> np.ndarray:
    return np.clip(np.asarray(grades, dtype=np.int64), 1, 5)


def _grades(d: EvalData) -> Grades:
    return d.extra("grades")


def grade_counts(d: EvalData) -> np.ndarray:
    """``int64[n_q, 6]``: judged docs of each query per utility grade (column g = grade g)."""
    n = d.n_queries
    return d.memo(
        ("rag_counts",), lambda: np.bincount(d.q_seg * 6 + _idx(_grades(d).q_util), minlength=n * 6).reshape(n, 6)
    )


def weights(d: EvalData, m: Measure) -> np.ndarray:
    """``float64[n_q, 6]``: the weight of each utility grade for each query."""
    return d.memo(("rag_w", *tuple(m[p.name] for p in WEIGHTS)), lambda: _weights(d, m))


def _weights(d: EvalData, m: Measure) -> np.ndarray:
    return weights_of(grade_counts(d), m)


def weights_of(counts: np.ndarray, m: Measure) -> np.ndarray:
    """``float64[n_q, 6]``: the weight of each utility grade, from the count of each grade
    (``counts[q, g]``) among a query's judged items (docs, or the evidence units of span labels)."""
    c = counts.astype(np.float64)
    n = c.sum(axis=1, keepdims=True)
    p = div0(c, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(p > 0, BASE / np.power(np.where(p > 0, p, 1.0), m["alpha"]), 0.0)
    has5 = c[:, 5] > 0
    r5 = np.where(has5, r[:, 5], 1.0)
    w = np.zeros_like(c)
    w[:, 5] = 1.0
    w[:, 4] = np.where(has5, np.minimum(r[:, 4] / r5, m["cap4"]), m["fallback4"])
    w[:, 3] = np.where(has5, np.minimum(r[:, 3] / r5, m["cap3"]), m["fallback3"])
    return w


def top_k_sum(w: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """Per query: the sum of the k largest weights of a multiset given as weight × count per grade."""
    order = np.argsort(-w, axis=1, kind="stable")
    ws = np.take_along_axis(w, order, axis=1)
    cs = np.take_along_axis(counts, order, axis=1)
    before = np.cumsum(cs, axis=1) - cs
    take = np.clip(k - before, 0, cs)
    return (ws * take).sum(axis=1)


def _top(d: EvalData, k: int) -> np.ndarray:
    """Mask over judged run rows: in the top k."""
    return d.j_rank <= k


def _top_count(d: EvalData, k: int, lo: int, hi: int) -> np.ndarray:
    return top_counts(d, k)[:, lo : hi + 1].sum(axis=1)


def pool_counts(d: EvalData, k: int) -> np.ndarray:
    """``int64[n_q, 6]``: judged pool docs per utility grade, plus top-k run docs outside the pool."""
    pool: Pool = d.extra("pool")
    n = d.n_queries
    out = d.memo(
        ("rag_pool_counts",), lambda: np.bincount(pool.p_seg * 6 + _idx(pool.p_util), minlength=n * 6).reshape(n, 6)
    )
    extra = _top(d, k) & ~pool.j_in_pool
    if extra.any():
        out = out + np.bincount(d.j_seg[extra] * 6 + _idx(_grades(d).j_util[extra]), minlength=n * 6).reshape(n, 6)
    return out


# --- the gain sums --------------------------------------------------------------------------------


def top_counts(d: EvalData, k: int) -> np.ndarray:
    """``int64[n_q, 6]``: judged docs in the top k per utility grade."""
    n = d.n_queries

    def compute() -> np.ndarray:
        top = _top(d, k)
        return np.bincount(d.j_seg[top] * 6 + _idx(_grades(d).j_util[top]), minlength=n * 6).reshape(n, 6)

    return d.memo(("rag_top_counts", k), compute)


def g_obs(d: EvalData, m: Measure, k: int) -> np.ndarray:
    """Σ w over the top k, as weight × count per grade: exactly invariant to the order inside the top k."""
    return (weights(d, m) * top_counts(d, k)).sum(axis=1)


def g_ideal(d: EvalData, m: Measure, k: int) -> np.ndarray:
    return top_k_sum(weights(d, m), grade_counts(d), k)


def g_pool(d: EvalData, m: Measure, k: int) -> np.ndarray:
    return top_k_sum(weights(d, m), pool_counts(d, k), k)


def _group_counts(
    seg: np.ndarray, group: np.ndarray, grades: np.ndarray, w: np.ndarray, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per query and utility grade: how many docs lead their doc group (the group's highest weight in
    the query) and how many repeat a group. Returns two ``int64[n, 6]`` matrices."""
    g = _idx(grades)
    wr = w[seg, g]
    order = np.lexsort((-wr, group, seg))
    s, gr = seg[order], group[order]
    lead = np.ones(s.size, dtype=bool)
    if s.size > 1:
        lead[1:] = (s[1:] != s[:-1]) | (gr[1:] != gr[:-1])
    cell = s * 6 + g[order]
    return (
        np.bincount(cell[lead], minlength=n * 6).reshape(n, 6),
        np.bincount(cell[~lead], minlength=n * 6).reshape(n, 6),
    )


def g_obs_novelty(d: EvalData, m: Measure, k: int) -> np.ndarray:
    """The best doc of each doc group in the top k counts fully, the others × novelty."""
    grp: Groups = d.extra("groups")
    top = _top(d, k)
    w = weights(d, m)
    lead, rep = _group_counts(d.j_seg[top], grp.j_group[top], _grades(d).j_util[top], w, d.n_queries)
    return (w * lead).sum(axis=1) + m["novelty"] * (w * rep).sum(axis=1)


def g_ideal_novelty(d: EvalData, m: Measure, k: int) -> np.ndarray:
    """The k largest gains, where a group's best judged doc gains its weight and every other doc
    novelty × its own. Greedy is optimal: a repeat's gain never exceeds its group leader's, so the
    k largest gains always form a valid set."""
    grp: Groups = d.extra("groups")
    w = weights(d, m)
    lead, rep = _group_counts(grp.q_seg, grp.q_group, grp.q_util, w, d.n_queries)
    return top_k_sum(np.hstack([w, m["novelty"] * w]), np.hstack([lead, rep]), k)


# --- kernels ---------------------------------------------------------------------------------------


def _ranwg(d: EvalData, m: Measure) -> np.ndarray:
    k = m.k
    if m["novelty"] < 1.0:
        return _ratio(g_obs_novelty(d, m, k), g_ideal_novelty(d, m, k))
    return _ratio(g_obs(d, m, k), g_ideal(d, m, k))


def _n45(d: EvalData) -> np.ndarray:
    c = grade_counts(d)
    return c[:, 4] + c[:, 5]


def _nrecall4(d: EvalData, m: Measure) -> np.ndarray:
    k = m.k
    return _ratio(_top_count(d, k, 4, 5), np.minimum(k, _n45(d)))


def _nrecall5(d: EvalData, m: Measure) -> np.ndarray:
    k = m.k
    return _ratio(_top_count(d, k, 5, 5), np.minimum(k, grade_counts(d)[:, 5]))


def _precision4(d: EvalData, m: Measure) -> np.ndarray:
    k = m.k
    return _top_count(d, k, 4, 5) / float(k)


def _harm(d: EvalData, m: Measure) -> np.ndarray:
    k = m.k
    harm = _top_count(d, k, 1, 2) / float(k)
    if _grades(d).binary:  # binary labels: an unlabelled chunk in the top k may or may not be harm
        unlabelled = np.minimum(d.n_ret, k) > top_counts(d, k)[:, 1:].sum(axis=1)
        harm = np.where(unlabelled, np.nan, harm)
    return harm


def _goldhit(d: EvalData, m: Measure) -> np.ndarray:
    k = m.k
    n45 = _n45(d)
    hit = (_top_count(d, k, 4, 5) == n45).astype(np.float64)
    return np.where(n45 > 0, hit, np.nan)


def _proc(d: EvalData, m: Measure) -> np.ndarray:
    k = m.k
    of = m["of"]
    if of == "RA-nWG":
        return _ratio(g_pool(d, m, k), g_ideal(d, m, k))
    c, cp = grade_counts(d), pool_counts(d, k)
    if of == "N-Recall4+":
        return _ratio(np.minimum(k, cp[:, 4] + cp[:, 5]), np.minimum(k, c[:, 4] + c[:, 5]))
    return _ratio(np.minimum(k, cp[:, 5]), np.minimum(k, c[:, 5]))


_BASE_KERNEL = {"RA-nWG": _ranwg, "N-Recall4+": _nrecall4, "N-Recall5": _nrecall5}


def _pct_proc(d: EvalData, m: Measure) -> np.ndarray:
    k = m.k
    if m["of"] == "RA-nWG":  # G_obs / G_pool
        return _ratio(g_obs(d, m, k), g_pool(d, m, k))
    value = _BASE_KERNEL[m["of"]](d, m)
    return _ratio(value, _proc(d, m))


def _rag(
    name: str,
    summary: str,
    formula: str,
    kernel: Kernel,
    params: tuple[Param, ...] = (),
    *,
    requires: frozenset[str] = GRADES,
    **more: Any,
) -> Family:
    """A family of the paper's: its citation, the K slots the LLM reads as a required cutoff, the
    ``grades`` side data (PROC and %PROC also the ``pool``)."""
    return Family(
        name, summary, formula, CITE, kernel, params, cutoff="required", group="rag", requires=requires, **more
    )


for fam in (
    _rag(
        "RA-nWG",
        "Rarity-aware normalised weighted gain of the top-k set",
        "RA-nWG@k = G_obs / G_ideal; G_obs = Σ w(g) over the top k (order ignored, unjudged = 0), "
        "G_ideal = sum of the k largest weights among the judged docs; w5 = 1, w4 = min(r4/r5, cap4), "
        "w3 = min(r3/r5, cap3), w2 = w1 = 0, r_g = b_g / p_g^alpha with b = (1, 0.5, 0.1) for grades 5, 4, 3 "
        "and p_g the share of grade g among the judged docs; n5 = 0: w4 = fallback4, w3 = fallback3; "
        "novelty < 1: within each doc group of the top k the best doc counts fully, the others × novelty "
        "(G_ideal likewise); NA when G_ideal = 0",
        _ranwg,
        (*WEIGHTS, NOVELTY),
        aliases=("ra-nwg", "ra_nwg", "ranwg"),
        requires_for=lambda m: frozenset({"groups"}) if m["novelty"] < 1.0 else frozenset(),
    ),
    _rag(
        "N-Recall4+",
        "Normalised recall of grade >= 4 docs in the top k",
        "N-Recall4+@k = #(grade >= 4 in the top k) / min(k, n4 + n5); NA when n4 + n5 = 0",
        _nrecall4,
        aliases=("n-recall4+", "n_recall4+", "nrecall4+"),
    ),
    _rag(
        "N-Recall5",
        "Normalised recall of grade-5 docs in the top k",
        "N-Recall5@k = #(grade 5 in the top k) / min(k, n5); NA when n5 = 0",
        _nrecall5,
        aliases=("n-recall5", "n_recall5", "nrecall5"),
    ),
    _rag(
        "Precision4+",
        "Share of the k slots holding a grade >= 4 doc",
        "Precision4+@k = #(grade >= 4 in the top k) / k",
        _precision4,
        aliases=("precision4+", "p4+"),
    ),
    _rag(
        "Harm",
        "Share of the k slots holding a judged weak or distractor doc",
        "Harm@k = #(judged grade <= 2 in the top k) / k (unjudged docs are not harm); on binary labels "
        "(reference ids) NA where the top k holds an unlabelled doc",
        _harm,
        aliases=("harm",),
        higher_is_better=False,
        needs_negatives=True,
    ),
    _rag(
        "GoldHit",
        "Every grade >= 4 doc is in the top k",
        "GoldHit@k = 1 if every judged grade >= 4 doc is in the top k, else 0; NA when there is none",
        _goldhit,
        aliases=("goldhit", "gold_hit"),
    ),
    _rag(
        "PROC",
        "Pool-restricted oracle ceiling: the best value achievable by selecting k docs from the retrieval pool",
        "PROC@k = G_pool / G_ideal, G_pool = sum of the k largest weights among the judged docs in the pool "
        "(weights as RA-nWG); of=N-Recall4+: min(k, pool n4 + n5) / min(k, n4 + n5); of=N-Recall5: "
        "min(k, pool n5) / min(k, n5); NA where the base measure is NA. The pool is the pool run cut at "
        "the pool depth (default: the run itself); never average PROC across different k",
        _proc,
        (*WEIGHTS, OF),
        aliases=("proc",),
        requires=GRADES | {"pool"},
    ),
    _rag(
        "%PROC",
        "Share of the pool-achievable value the selection (reranker + cut) realised",
        "%PROC@k = RA-nWG@k / PROC@k = G_obs / G_pool (of=N-Recall4+ / N-Recall5: that measure / its PROC); "
        "NA when PROC@k is 0 or NA",
        _pct_proc,
        (*WEIGHTS, OF),
        aliases=("%proc", "pct-proc", "pct_proc"),
        requires=GRADES | {"pool"},
    ),
):
    register(fam)

add_alias("proc_n_recall4+", "PROC", of="N-Recall4+")
add_alias("proc_n_recall5", "PROC", of="N-Recall5")
