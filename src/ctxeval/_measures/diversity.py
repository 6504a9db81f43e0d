"""Diversity measures over subtopic qrels, as ndeval computes them (the TREC Web track's tool, version
4.5; ``pyndeval`` 0.0.8 runs its C code, and is this module's oracle).

A doc is relevant to a subtopic when its grade for that subtopic is at least ``rel``; ``S`` is the
number of the query's subtopics with at least one relevant doc in the qrels (a subtopic nobody judged
relevant is ignored). At rank r the *novelty gain* is ``Σ_{subtopics s of the doc} (1 − α)^{c_s}``,
``c_s`` the docs above r relevant to s. Then, as ndeval does:

* ``alpha-DCG@k = Σ_{r≤k} gain_r · log 2 / log(r + 1)``, divided by its "ideal ideal" (S subtopics
  covered at every rank: ``Σ_{r≤k} S (1 − α)^{r−1} · log 2 / log(r + 1)``); ``ERR-IA@k`` the same with
  the discount ``1 / r``. ndeval leaves k = 1 unnormalised: ``ERR-IA@1 = alpha-DCG@1 =`` the number of
  subtopics the first doc covers.
* ``alpha-nDCG@k`` and ``nERR-IA@k``: the run's value over that of ndeval's ideal ranking, a greedy
  one (at each rank the doc of the highest novelty gain; ties to the greater doc id, byte-wise); 0
  where the run's alpha-DCG@k is 0. The greedy ranking is not always the best one: a run can exceed it.
* ``NRBP = (1 − (1 − α) β) / S · Σ_r gain_r β^{r−1}`` over the whole ranking; ``nNRBP`` over the
  greedy ideal's NRBP (NaN where S = 0: 0/0, as in ndeval).
* ``P-IA@k = Σ_{r≤k} (subtopics the doc at r is relevant to) / (k · S)``; ``S-recall@k`` = subtopics
  covered in the top k / S; ``MAP-IA = (1/S) Σ_s AP_s``, AP over the whole ranking with the doc's
  relevance to s.

Every measure is 0 for a query with S = 0 (ndeval's reading of a topic without relevant subtopics),
nNRBP excepted. ndeval prints its cut-off measures at 5, 10 and 20 and computes them to depth 20
(pyndeval refuses deeper cut-offs); here a cut-off is named (``alpha-nDCG@20``) and any k is computed
by the same formula. Tied scores: ctxeval ranks them by its ``ties`` rule (trec_eval's: doc id
descending, as ndeval's ``-traditional``); pyndeval breaks them by doc id ascending and ndeval by
default reads the rank column: ``ties="input"`` with the run in that order gives their numbers. Docs of the run that the qrels do not judge have no gain;
``judged_only`` (ir_measures' parameter) drops them from the ranking first. Gains are summed in
subtopic order and powers of (1 − α) taken by repeated products, as ndeval's loops do, so that the
greedy ideal meets the same ties.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import run_starts
from .base import Family, Measure, Param, add_alias, register

if TYPE_CHECKING:
    from .._core.extras import Subtopics

__all__ = ["NDEVAL"]

NDEVAL = "ndeval 4.5 (TREC Web track), run as pyndeval 0.0.8 runs it"
SUBTOPICS = frozenset({"subtopics"})

REL = Param("rel", "int", 1, "minimum subtopic grade counted as relevant (inclusive)")
ALPHA = Param(
    "alpha", "float", 0.5, "redundancy intolerance: each repeat of a subtopic gains (1 − α) of the last", lo=0.0, hi=1.0
)
BETA = Param("beta", "float", 0.5, "patience: the chance of reading on to the next rank", lo=0.0, hi=1.0)
JUDGED_ONLY = Param("judged_only", "bool", False, "drop the docs the qrels do not judge before ranking (ir_measures)")


@dataclass(frozen=True)
class _Ranked:
    """The ranks of a ranking that hold a novelty gain: their query (ascending), rank (ascending within
    a query) and gain."""

    seg: np.ndarray
    rank: np.ndarray
    gain: np.ndarray

    def total(self, n_q: int, weight: np.ndarray, k: int | None) -> np.ndarray:
        """Per query ``Σ_{rank ≤ k} gain · weight[rank − 1]``, added rank after rank."""
        sel = np.flatnonzero(self.rank <= k) if k is not None else np.arange(self.rank.size)
        w = self.gain[sel] * weight[self.rank[sel] - 1]
        return np.bincount(self.seg[sel], weights=w, minlength=n_q).astype(np.float64)


@dataclass(frozen=True)
class _Pairs:
    """The run's (rank, subtopic) pairs of relevance: query, rank, group, and how many docs above
    were relevant to the same subtopic."""

    seg: np.ndarray
    rank: np.ndarray
    group: np.ndarray
    before: np.ndarray


def _powers(f: float, n: int) -> np.ndarray:
    """``[1, f, f·f, ...]`` (n values) by repeated products, as ndeval's loops compute them."""
    if n <= 0:
        return np.ones(0)
    return np.cumprod(np.r_[1.0, np.full(n - 1, f)])


def _discount(n: int) -> np.ndarray:
    """ndeval's DCG discount of ranks 1..n: log 2 / log(r + 1)."""
    return np.log(2.0) / np.log(np.arange(2, n + 2, dtype=np.float64))


def _rank_within(groups: np.ndarray) -> np.ndarray:
    """For every element, how many earlier elements share its group (groups in any order)."""
    o = np.argsort(groups, kind="stable")
    n = groups.size
    start = run_starts(groups[o])
    pos = np.arange(n, dtype=np.int64) - np.repeat(start, np.diff(np.r_[start, n]))
    out = np.empty(n, dtype=np.int64)
    out[o] = pos
    return out


def _subtopics(d: EvalData) -> Subtopics:
    found: Subtopics = d.extra("subtopics")
    return found


def _actual(d: EvalData, rel: int) -> tuple[np.ndarray, np.ndarray]:
    """Per group the relevant docs of the qrels; per query S, its subtopics with any."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        s = _subtopics(d)
        nrel = np.bincount(s.q_group[s.q_grade >= rel], minlength=s.g_seg.size)
        return nrel, np.bincount(s.g_seg[nrel > 0], minlength=d.n_queries)

    return d.memo(("diversity-S", rel), compute)


def _run_pairs(d: EvalData, rel: int, judged_only: bool) -> _Pairs:
    def compute() -> _Pairs:
        s = _subtopics(d)
        keep = np.flatnonzero(s.p_grade >= rel)
        row = s.p_row[keep]
        if judged_only:  # the rank among the judged docs
            start = np.searchsorted(d.j_seg, np.arange(d.n_queries), side="left")
            rank = np.arange(d.j_seg.size, dtype=np.int64) - start[d.j_seg] + 1
        else:
            rank = d.j_rank
        group = s.p_group[keep]
        return _Pairs(d.j_seg[row], rank[row], group, _rank_within(group))

    return d.memo(("diversity-pairs", rel, judged_only), compute)


def _gains(seg: np.ndarray, rank: np.ndarray, gain: np.ndarray) -> _Ranked:
    """Pairs (ordered by query, rank, subtopic) summed into one gain per rank, in subtopic order."""
    if rank.size == 0:
        return _Ranked(seg, rank, gain)
    new = np.r_[True, (seg[1:] != seg[:-1]) | (rank[1:] != rank[:-1])]
    at = np.cumsum(new) - 1
    return _Ranked(seg[new], rank[new], np.bincount(at, weights=gain).astype(np.float64))


def _run(d: EvalData, rel: int, alpha: float, judged_only: bool) -> _Ranked:
    def compute() -> _Ranked:
        p = _run_pairs(d, rel, judged_only)
        pw = _powers(1.0 - alpha, int(p.before.max()) + 1 if p.before.size else 0)
        return _gains(p.seg, p.rank, pw[p.before])

    return d.memo(("diversity-run", rel, alpha, judged_only), compute)


def _ideal(d: EvalData, rel: int, alpha: float) -> _Ranked:
    """ndeval's greedy ideal ranking of every query's judged docs, as novelty gains per rank: at each
    rank the doc of the highest gain, ties to the greater doc id (the docs are held by query, doc id
    descending, so the first doc of the highest gain). All queries advance together, one rank a step;
    docs without a relevant subtopic add nothing and are left out."""

    def compute() -> _Ranked:
        s = _subtopics(d)
        f = 1.0 - alpha
        doc_of = np.repeat(np.arange(s.d_seg.size, dtype=np.int64), np.diff(s.d_ptr))
        rel_j = np.flatnonzero(s.q_grade >= rel)
        jd = doc_of[rel_j]
        pg = s.q_group[rel_j]
        dstart = run_starts(jd)
        n_docs = int(dstart.size)
        pd = np.repeat(np.arange(n_docs, dtype=np.int64), np.diff(np.r_[dstart, jd.size]))
        dseg = s.d_seg[jd[dstart]] if n_docs else np.zeros(0, dtype=np.int64)
        gain_of = np.ones(s.g_seg.size)
        segs, ranks, gains = [], [], []
        step = 0
        while n_docs:
            step += 1
            score = np.bincount(pd, weights=gain_of[pg], minlength=n_docs)
            qstart = run_starts(dseg)
            best = np.repeat(np.maximum.reduceat(score, qstart), np.diff(np.r_[qstart, n_docs]))
            pick = np.minimum.reduceat(np.where(score == best, np.arange(n_docs), n_docs), qstart)
            segs.append(dseg[pick])
            ranks.append(np.full(pick.size, step, dtype=np.int64))
            gains.append(score[pick])
            picked = np.zeros(n_docs, dtype=bool)
            picked[pick] = True
            on = picked[pd]
            gain_of[pg[on]] *= f
            left = ~picked
            renumber = np.cumsum(left) - 1
            pd, pg = renumber[pd[~on]], pg[~on]
            dseg = dseg[left]
            n_docs = int(dseg.size)
        if not segs:
            empty = np.zeros(0, dtype=np.int64)
            return _Ranked(empty, empty, np.zeros(0))
        seg, rank, gain = np.concatenate(segs), np.concatenate(ranks), np.concatenate(gains)
        o = np.lexsort((rank, seg))
        return _Ranked(seg[o], rank[o], gain[o])

    return d.memo(("diversity-ideal", rel, alpha), compute)


def _ideal_ideal(n_sub: np.ndarray, alpha: float, k: int, err: bool) -> np.ndarray:
    """Per query ndeval's "ideal ideal" normaliser at k (S subtopics covered at every rank), by its
    loop; 1 at k = 1, which ndeval leaves unnormalised."""
    if k == 1:
        return np.ones(n_sub.size)
    disc = 1.0 / np.arange(1, k + 1, dtype=np.float64) if err else _discount(k)
    out = np.ones(n_sub.size)
    for value in np.unique(n_sub).tolist():
        gain, total = float(value), 0.0
        for i in range(k):
            total = gain * float(disc[i]) + total
            gain *= 1.0 - alpha
        out[n_sub == value] = total
    return out


def _weights(n: int, err: bool) -> np.ndarray:
    return 1.0 / np.arange(1, n + 1, dtype=np.float64) if err else _discount(n)


def _normalised(d: EvalData, ranked: _Ranked, m: Measure, err: bool) -> np.ndarray:
    """alpha-DCG@k (err=False) or ERR-IA@k (err=True) of ``ranked``, as ndeval normalises it."""
    k = m.k
    _, n_sub = _actual(d, m["rel"])
    raw = ranked.total(d.n_queries, _weights(k, err), k)
    out = np.zeros(d.n_queries)
    np.divide(raw, _ideal_ideal(n_sub, m["alpha"], k, err), out=out, where=n_sub > 0)
    return out


def _intent(err: bool, normalise: bool) -> Callable[[EvalData, Measure], np.ndarray]:
    def kernel(d: EvalData, m: Measure) -> np.ndarray:
        run = _normalised(d, _run(d, m["rel"], m["alpha"], m["judged_only"]), m, err)
        if not normalise:
            return run
        # ndeval: err and dcg are 0 together; ndeval divides where the run's dcg is not 0
        ideal = _normalised(d, _ideal(d, m["rel"], m["alpha"]), m, err)
        out = np.zeros(d.n_queries)
        np.divide(run, ideal, out=out, where=run != 0)
        return out

    return kernel


def _nrbp_of(d: EvalData, ranked: _Ranked, m: Measure) -> np.ndarray:
    _, n_sub = _actual(d, m["rel"])
    n = int(ranked.rank.max()) if ranked.rank.size else 0
    raw = ranked.total(d.n_queries, _powers(m["beta"], n), None)
    scale = (1.0 - (1.0 - m["alpha"]) * m["beta"]) / np.maximum(n_sub, 1)
    return np.where(n_sub > 0, raw * scale, 0.0)


def _nrbp(d: EvalData, m: Measure) -> np.ndarray:
    return _nrbp_of(d, _run(d, m["rel"], m["alpha"], False), m)


def _nnrbp(d: EvalData, m: Measure) -> np.ndarray:
    run = _nrbp(d, m)
    ideal = _nrbp_of(d, _ideal(d, m["rel"], m["alpha"]), m)
    with np.errstate(divide="ignore", invalid="ignore"):
        return run / ideal  # 0/0 = NaN where no subtopic has a relevant doc, as in ndeval


def _p_ia(d: EvalData, m: Measure) -> np.ndarray:
    p = _run_pairs(d, m["rel"], m["judged_only"])
    _, n_sub = _actual(d, m["rel"])
    count = np.bincount(p.seg[p.rank <= m.k], minlength=d.n_queries)
    return np.where(n_sub > 0, count / np.maximum(m.k * n_sub, 1), 0.0)


def _s_recall(d: EvalData, m: Measure) -> np.ndarray:
    p = _run_pairs(d, m["rel"], False)
    _, n_sub = _actual(d, m["rel"])
    covered = np.bincount(p.seg[(p.rank <= m.k) & (p.before == 0)], minlength=d.n_queries)
    return np.where(n_sub > 0, covered / np.maximum(n_sub, 1), 0.0)


def _map_ia(d: EvalData, m: Measure) -> np.ndarray:
    p = _run_pairs(d, m["rel"], m["judged_only"])
    nrel, n_sub = _actual(d, m["rel"])
    s = _subtopics(d)
    total = np.bincount(p.group, weights=(p.before + 1) / p.rank, minlength=nrel.size)
    has = np.flatnonzero(nrel > 0)
    ap = np.bincount(s.g_seg[has], weights=total[has] / nrel[has], minlength=d.n_queries)
    return np.where(n_sub > 0, ap / np.maximum(n_sub, 1), 0.0)


_CITE_ALPHA = "Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon, SIGIR 2008; " + NDEVAL
_CITE_ERR = "Chapelle, Metzler, Zhang & Grinspan, CIKM 2009 (intent-aware: Agrawal et al., WSDM 2009); " + NDEVAL
_CITE_NRBP = "Clarke, Kolla & Vechtomova, ICTIR 2009; " + NDEVAL

_AGRAWAL = "Agrawal, Gollapudi, Halverson & Ieong, WSDM 2009; " + NDEVAL
_CUT = (REL, ALPHA, JUDGED_ONLY)
_GAIN = "Σ_s rel_s(r) (1 − α)^{c_s(r)}"  # the novelty gain at rank r; c_s(r): docs above r relevant to s
_UNNORM = "; ndeval leaves k = 1 unnormalised"
#: name, summary, formula, citation, kernel, parameters, cut-off, aliases, within [0, 1]
_FAMILIES = (
    ("alpha-nDCG", "Novelty- and diversity-aware nDCG over subtopics",
     f"alpha-nDCG@k = alpha-DCG@k / alpha-DCG@k of ndeval's greedy ideal; alpha-DCG@k = Σ_{{r≤k}} {_GAIN} / log2(r + 1), c_s(r) = docs above r relevant to s",
     _CITE_ALPHA, _intent(False, True), _CUT, "required", ("alpha_nDCG", "α_nDCG", "α-nDCG"), False),
    ("alpha-DCG", "alpha-DCG over subtopics, normalised by S subtopics covered at every rank",
     f"alpha-DCG@k = Σ_{{r≤k}} {_GAIN} / log2(r + 1) / Σ_{{r≤k}} S (1 − α)^{{r−1}} / log2(r + 1){_UNNORM}",
     _CITE_ALPHA, _intent(False, False), _CUT, "required", ("alpha_DCG", "α_DCG", "α-DCG"), False),
    ("ERR-IA", "Intent-aware expected reciprocal rank, normalised by S subtopics covered at every rank",
     f"ERR-IA@k = Σ_{{r≤k}} {_GAIN} / r / Σ_{{r≤k}} S (1 − α)^{{r−1}} / r{_UNNORM}",
     _CITE_ERR, _intent(True, False), _CUT, "required", ("ERR_IA",), False),
    ("nERR-IA", "Intent-aware expected reciprocal rank over that of ndeval's greedy ideal",
     "nERR-IA@k = ERR-IA@k / ERR-IA@k of ndeval's greedy ideal ranking; 0 where the run gains nothing",
     _CITE_ERR, _intent(True, True), _CUT, "required", ("nERR_IA",), False),
    ("NRBP", "Novelty- and rank-biased precision",
     f"NRBP = (1 − (1 − α) β) / S · Σ_r β^{{r−1}} {_GAIN}, over the whole ranking",
     _CITE_NRBP, _nrbp, (REL, ALPHA, BETA), "none", (), True),
    ("nNRBP", "Novelty- and rank-biased precision over that of ndeval's greedy ideal",
     "nNRBP = NRBP / NRBP of ndeval's greedy ideal ranking; NaN (0/0) where no subtopic has a relevant doc",
     _CITE_NRBP, _nnrbp, (REL, ALPHA, BETA), "none", (), False),
    ("P-IA", "Intent-aware precision at k", "P-IA@k = Σ_{r≤k} Σ_s rel_s(r) / (k · S)",
     _AGRAWAL, _p_ia, (REL, JUDGED_ONLY), "required", ("P_IA",), True),
    ("S-recall", "Subtopic recall at k", "S-recall@k = |subtopics with a relevant doc in the top k| / S",
     "Zhai, Cohen & Lafferty, SIGIR 2003; " + NDEVAL + " (strec)", _s_recall, (REL,), "required",
     ("strec", "StRecall", "subtopic_recall"), True),
    ("MAP-IA", "Intent-aware average precision",
     "MAP-IA = (1/S) Σ_{s with a relevant doc} Σ_{r: rel_s(r)} (docs at ranks ≤ r relevant to s / r) / |docs relevant to s|",
     _AGRAWAL, _map_ia, (REL, JUDGED_ONLY), "none", ("AP_IA", "MAP_IA", "AP-IA"), True),
)  # fmt: skip

for name, summary, formula, cite, kernel, params, cutoff, aliases, bounded in _FAMILIES:
    register(
        Family(name, summary, formula, cite, kernel, params, cutoff=cutoff, aliases=aliases, group="diversity",
               requires=SUBTOPICS, bounds=(0.0, 1.0) if bounded else None)
    )  # fmt: skip

add_alias("alpha-ndcg", "alpha-nDCG")
