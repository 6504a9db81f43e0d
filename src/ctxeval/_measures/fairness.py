"""Attention-weighted rank fairness (AWRF): how far the exposure a ranking gives each group of docs is
from a target distribution, as the TREC Fair Ranking track's evaluation computes it (2021 and 2022,
Task 1; Sapiezynski, Zeng, Robertson, Mislove & Wilson, WWW 2019 Companion), and FairRankTune's reading
(``FairRankTune`` 0.0.7's ``Metrics.AWRF`` is that family's oracle).

The docs' group labels (and the given targets) come through the ``fairness`` side data (a doc may
belong to several groups with weights summing to 1: its alignment ``a_{d,g}``; several dimensions give
intersectional groups; see :mod:`ctxeval._io.fairness`). Docs without a label are left out; the others
keep their ranks (as in the track's code, which drops unknown pages after discounting).

**AWRF** (TREC): the ranking's exposure ``E_g = Σ_{i≤k} w_i a_{d_i,g}``, ``w_i = 1 / log2(max(i, 2))``
(the track's discount: ranks 1 and 2 count alike) or, with ``p``, the geometric attention
``w_i = p (1 − p)^{i−1}`` of Sapiezynski et al.; its distribution ``P = E / Σ_g E_g`` against the
target ``Q`` (``target=relevant``: the mean alignment of the query's relevant docs, grade >= ``rel``;
``target=given``: the target file's), ``AWRF = 1 − JSD(P, Q)``, the Jensen-Shannon divergence in
nats as the track's code takes it from ``scipy.spatial.distance.jensenshannon`` (squared): so AWRF
lies in ``[1 − ln 2, 1] ≈ [0.307, 1]``, 1 for a ranking whose exposure matches the target. NaN where
no doc of the top k has a label or the target is empty (no labelled relevant doc). The track evaluated
whole rankings (at most 500 docs in 2022, 1000 in 2021): ``AWRF`` without a cut-off is its figure.
The track computes its discount in float32; here in float64 (differences below 1e-6). Its 2021 and
2022 targets averaged the relevant docs' distribution with world population (geography) and a gender
background: such targets are given as a file (``target=given``).

**nDCG-AWRF** (the track's Task 1 score): ``nDCG × AWRF``, its nDCG binary (grade >= ``rel``) with the
same discount: ``DCG@k = Σ_{i≤k} rel_i / log2(max(i, 2))`` over the ideal's ``Σ_{i≤min(k, R)}``;
``@500`` is the 2022 figure (its runs held 500 docs and its ideal at most 500), ``@1000`` 2021's. 0
where nDCG is 0 (the track's code would give NaN where AWRF is undefined; its topics had labelled
relevant docs).

**AWRF-FRT** and **AWRF-FRT-gap** (FairRankTune): per group the *average attention* of its docs,
``V_g = Σ_{i≤k} 100 p (1 − p)^{i−1} a_{d_i,g} / Σ_{d ranked} a_{d,g}``, over the groups of the docs
the run ranked (its whole list: a group missing from the top k gets 0), then one number:
``AWRF-FRT = min_g V_g / max_g V_g`` (FairRankTune's ``MinMaxRatio``, in [0, 1], 1 fair);
``AWRF-FRT-gap(combo=...)`` its other aggregations, lower is fairer: ``MaxMinDiff`` (max − min),
``MaxAbsDiff`` (max |V − mean V|), ``MeanAbsDev`` (mean |V − mean V|), ``LTwo`` (‖V‖₂; its docs say
the square), ``Variance`` (``np.var``: over G; its docs say G − 1). ``MaxMinRatio`` (max / min, infinite
when a group gets no attention) is the reciprocal of AWRF-FRT and left out. No target, no relevance:
statistical parity of attention. FairRankTune gives each item one group; weights here generalise it
(a doc counts ``a_{d,g}`` in each of its groups).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._core.evaldata import EvalData
from .base import Family, Measure, Param, register

if TYPE_CHECKING:
    from .._core.extras import Fairness

__all__ = ["FAIRRANKTUNE", "FAIR_TREC", "jsd"]

FAIR_TREC = "TREC Fair Ranking 2021/2022 evaluation (fair-trec/trec2022-fair-public, wptrec.metrics.awrf)"
FAIRRANKTUNE = "FairRankTune 0.0.7 (Metrics.AWRF)"
FAIRNESS = frozenset({"fairness"})

REL = Param("rel", "int", 1, "minimum grade of a relevant doc (inclusive): the target's docs, nDCG's gain")
TARGET = Param(
    "target",
    "str",
    "relevant",
    "the distribution to meet: relevant (the groups' mean alignment over the relevant docs) or given (the target file)",
    choices=("relevant", "given"),
)
P_OPT = Param(
    "p",
    "float",
    None,
    "geometric attention p(1 − p)^(i−1) (Sapiezynski et al.); none: the track's 1 / log2(max(i, 2))",
    lo=0.0,
    hi=1.0,
    lo_open=True,
    hi_open=True,
)
P_FRT = Param(
    "p",
    "float",
    None,
    "the share of attention of the first rank (FairRankTune's p, which has no default)",
    lo=0.0,
    hi=1.0,
    lo_open=True,
    hi_open=True,
    required=True,
)


def _weights(rank: np.ndarray, p: float | None) -> np.ndarray:
    """The attention of each rank: the track's discount, or the geometric one."""
    if p is None:
        return 1.0 / np.log2(np.maximum(rank, 2).astype(np.float64))
    return p * (1.0 - p) ** (rank - 1).astype(np.float64)


def _sparse(seg: np.ndarray, group: np.ndarray, w: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (query, group) keys ``query · n_groups + group``, ascending, and the weights summed per
    key in array order (a dense count where queries × groups is small beside the pairs, else sorted)."""
    key = seg * np.int64(max(n_groups, 1)) + group
    if key.size == 0:
        return key, np.zeros(0)
    top = int(key.max()) + 1
    if top <= 4 * key.size + 65536:
        present = np.bincount(key, minlength=top) > 0
        uk = np.flatnonzero(present)
        return uk, np.bincount(key, weights=w, minlength=top)[uk].astype(np.float64)
    uk, inv = np.unique(key, return_inverse=True)
    return uk, np.bincount(inv.reshape(-1), weights=w, minlength=uk.size).astype(np.float64)


def jsd(
    p_key: np.ndarray, p_val: np.ndarray, q_key: np.ndarray, q_val: np.ndarray, n_groups: int, n_q: int
) -> np.ndarray:
    """Per query the Jensen-Shannon divergence (nats) of two sparse distributions over groups (keys
    ``query · n_groups + group``, values not yet normalised); NaN where either is empty.

    >>> round(float(jsd(np.array([0]), np.array([1.0]), np.array([1]), np.array([2.0]), 2, 1)[0]), 6)
    0.693147
    """
    width = np.int64(max(n_groups, 1))
    keys = np.union1d(p_key, q_key)
    P = np.zeros(keys.size)
    Q = np.zeros(keys.size)
    P[np.searchsorted(keys, p_key)] = p_val
    Q[np.searchsorted(keys, q_key)] = q_val
    seg = keys // width
    p_tot = np.bincount(seg, weights=P, minlength=n_q)
    q_tot = np.bincount(seg, weights=Q, minlength=n_q)
    ok = (p_tot > 0) & (q_tot > 0)
    out = np.full(n_q, np.nan)
    take = ok[seg]
    seg, P, Q = seg[take], P[take], Q[take]
    P = P / p_tot[seg]
    Q = Q / q_tot[seg]
    M = (P + Q) / 2.0
    terms = np.zeros(P.size)
    hp, hq = P > 0, Q > 0
    terms[hp] += P[hp] * np.log(P[hp] / M[hp])
    terms[hq] += Q[hq] * np.log(Q[hq] / M[hq])
    out[ok] = np.bincount(seg, weights=terms, minlength=n_q)[ok] / 2.0
    return out


def _awrf(d: EvalData, m: Measure) -> np.ndarray:
    fair: Fairness = d.extra("fairness")
    G = fair.n_groups
    sel = np.flatnonzero(fair.p_rank <= m.cutoff) if m.cutoff is not None else np.arange(fair.p_rank.size)
    att = _weights(fair.p_rank[sel], m["p"]) * fair.p_w[sel]
    p_key, p_val = _sparse(fair.p_seg[sel], fair.p_group[sel], att, G)
    if m["target"] == "given":
        q_key, q_val = _sparse(fair.t_seg, fair.t_group, fair.t_w, G)  # type: ignore[arg-type]
    else:
        rel = np.flatnonzero(fair.d_grade >= int(m["rel"]))
        q_key, q_val = _sparse(fair.d_seg[rel], fair.d_group[rel], fair.d_w[rel], G)
    js = jsd(p_key, p_val, q_key, q_val, G, d.n_queries)
    return 1.0 - js


def _fair_ndcg(d: EvalData, m: Measure) -> np.ndarray:
    """The track's nDCG: binary gains, discount ``1 / log2(max(i, 2))``, the ideal over min(k, R) ranks."""
    rel = int(m["rel"])
    hit = np.flatnonzero(d.j_relevant(rel) & (d.j_rank <= m.cutoff if m.cutoff is not None else True))
    dcg = np.bincount(d.j_seg[hit], weights=_weights(d.j_rank[hit], None), minlength=d.n_queries)
    R = d.num_rel(rel)
    top = np.minimum(R, m.cutoff) if m.cutoff is not None else R
    ideal = np.r_[0.0, np.cumsum(_weights(np.arange(1, int(top.max(initial=0)) + 1), None))][top]
    out = np.zeros(d.n_queries)
    np.divide(dcg, ideal, out=out, where=ideal > 0)
    return out


def _ndcg_awrf(d: EvalData, m: Measure) -> np.ndarray:
    ndcg = _fair_ndcg(d, m)
    out = np.zeros(d.n_queries)
    pos = ndcg > 0
    out[pos] = ndcg[pos] * _awrf(d, m)[pos]
    return out


@dataclass(frozen=True)
class _Attention:
    """FairRankTune's average attention ``v`` of every (query, group) of the ranked docs, by query then
    group (``seg``: the query of each), with the queries that have any (``has``), where each one's
    groups start and how many they are."""

    v: np.ndarray
    seg: np.ndarray
    has: np.ndarray
    start: np.ndarray
    n: np.ndarray

    def reduce(self, ufunc: np.ufunc, x: np.ndarray) -> np.ndarray:
        return ufunc.reduceat(x, self.start)

    def total(self, x: np.ndarray) -> np.ndarray:
        return np.bincount(self.seg, weights=x, minlength=self.has.size)[self.has]

    @property
    def dev(self) -> np.ndarray:
        """Each group's ``V − mean V`` of its query."""
        return self.v - np.repeat(self.total(self.v) / self.n, self.n)


def _attention(d: EvalData, m: Measure) -> _Attention:
    fair: Fairness = d.extra("fairness")
    G = fair.n_groups
    p = float(m["p"])
    i_key, count = _sparse(fair.i_seg, fair.i_group, fair.i_w, G)
    sel = np.flatnonzero(fair.p_rank <= m.cutoff) if m.cutoff is not None else np.arange(fair.p_rank.size)
    rank = fair.p_rank[sel].astype(np.float64)
    att = 100 * (1 - p) ** (rank - 1) * p * fair.p_w[sel]  # FairRankTune's attention, in its order of operations
    a_key, a_val = _sparse(fair.p_seg[sel], fair.p_group[sel], att, G)
    total = np.zeros(i_key.size)
    total[np.searchsorted(i_key, a_key)] = a_val
    seg = i_key // np.int64(max(G, 1))
    n = np.bincount(seg, minlength=d.n_queries)
    has = n > 0
    start = (np.cumsum(n) - n)[has].astype(np.int64)
    return _Attention(total / count, seg, has, start, n[has])


def _min_max(a: _Attention) -> np.ndarray:
    lo, hi = a.reduce(np.minimum, a.v), a.reduce(np.maximum, a.v)
    out = np.full(lo.size, np.nan)
    np.divide(lo, hi, out=out, where=hi > 0)  # FairRankTune: 0 / 0 where no group gets attention
    return out


#: FairRankTune's aggregations of the groups' average attention (Metrics.ComboUtil), as its code computes them
_AGGREGATE: dict[str, Callable[[_Attention], np.ndarray]] = {
    "MinMaxRatio": _min_max,
    "MaxMinDiff": lambda a: a.reduce(np.maximum, a.v) - a.reduce(np.minimum, a.v),
    "MaxAbsDiff": lambda a: a.reduce(np.maximum, np.abs(a.dev)),
    "MeanAbsDev": lambda a: a.total(np.abs(a.dev)) / a.n,
    "LTwo": lambda a: np.sqrt(a.total(a.v * a.v)),
    "Variance": lambda a: a.total(a.dev**2) / a.n,  # np.var: over G
}


def _frt(combo: str | None) -> Callable[[EvalData, Measure], np.ndarray]:
    """The kernel of FairRankTune's AWRF aggregated by ``combo`` (None: the measure's ``combo``)."""

    def kernel(d: EvalData, m: Measure) -> np.ndarray:
        a = _attention(d, m)
        out = np.full(d.n_queries, np.nan)
        if a.has.any():
            out[a.has] = _AGGREGATE[combo or m["combo"]](a)
        return out

    return kernel


_AWRF_FORMULA = (
    "AWRF@k = 1 − JSD(P, Q), P_g ∝ Σ_{i≤k} w_i a_{d_i,g}, w_i = 1 / log2(max(i, 2)) (or p(1 − p)^(i−1)); "
    "Q: the relevant docs' mean alignment (or the target file's); JSD in nats (≥ 1 − ln 2); "
    "docs without a group left out, ranks kept"
)
_V = "V_g = Σ_{i≤k} 100 p(1 − p)^(i−1) a_{d_i,g} / Σ_{d ranked} a_{d,g} over the groups of the ranked docs"

_TREC_CITE = "Ekstrand, McDonald, Raj & Johnson, TREC 2021 and 2022 Fair Ranking overviews; " + FAIR_TREC
_COMBO = Param(
    "combo",
    "str",
    "MaxMinDiff",
    "FairRankTune's aggregation of the groups' average attention",
    choices=("MaxMinDiff", "MaxAbsDiff", "MeanAbsDev", "LTwo", "Variance"),
)
#: name, summary, formula, citation, kernel, parameters, (bounds, higher is better)
_FAMILIES = (
    ("AWRF", "Attention-weighted rank fairness: the ranking's group exposure against a target (TREC Fair Ranking)",
     _AWRF_FORMULA, "Sapiezynski, Zeng, Robertson, Mislove & Wilson, WWW 2019 Companion; " + _TREC_CITE, _awrf,
     (REL, TARGET, P_OPT), True),
    ("nDCG-AWRF", "The TREC Fair Ranking track's Task 1 score: its nDCG times AWRF",
     "nDCG-AWRF@k = nDCG@k × AWRF@k, nDCG@k = Σ_{i≤k} rel_i / log2(max(i, 2)) / Σ_{i≤min(k, R)} 1 / log2(max(i, 2)), "
     "rel_i binary (grade ≥ rel); 0 where nDCG is 0", _TREC_CITE, _ndcg_awrf, (REL, TARGET, P_OPT), True),
    ("AWRF-FRT", "FairRankTune's AWRF: the least over the most average attention of the groups (MinMaxRatio)",
     f"AWRF-FRT@k = min_g V_g / max_g V_g, {_V}; NaN where no group gets attention",
     "Sapiezynski et al., WWW 2019 Companion; K. Cachel, " + FAIRRANKTUNE, _frt("MinMaxRatio"), (P_FRT,), True),
    ("AWRF-FRT-gap", "FairRankTune's AWRF with an aggregation of the groups' average attention where 0 is fair",
     f"MaxMinDiff: max − min; MaxAbsDiff: max |V − mean|; MeanAbsDev: mean |V − mean|; LTwo: ‖V‖₂; "
     f"Variance: mean (V − mean)²; {_V}", "K. Cachel, " + FAIRRANKTUNE, _frt(None), (P_FRT, _COMBO), False),
)  # fmt: skip

for name, summary, formula, cite, kernel, params, bounded in _FAMILIES:
    register(
        Family(name, summary, formula, cite, kernel, params, group="fairness", requires=FAIRNESS,
               bounds=(0.0, 1.0) if bounded else None, higher_is_better=bounded)
    )  # fmt: skip
