"""Compatibility (Clarke, Vtyurina & Smucker, TOIS 2021), as ir_measures' provider computes it
(``ir_measures`` 0.4.3 is this module's oracle).

Compatibility is the rank-biased overlap of the run's ranking with an ideal ranking of the query's
relevant docs (grade > 0): ``RBO = Σ_{i≤D} p^{i−1} |I_{≤i} ∩ R_{≤i}| / i / Σ_{i≤D} p^{i−1}``, ``D`` the
longer of the two lists; ``normalize`` divides it by the ideal's overlap with itself (a finite ideal
cannot reach 1 otherwise). The ideal orders the relevant docs by grade, then by the run's score (a doc
the run lacks counts as score 0, so it comes before retrieved docs of negative score, as in
ir_measures). Where ir_measures leaves docs of one grade and one score in the qrels' order, ctxeval
keeps retrieved docs in the run's order and puts the ones the run lacks after them, so that the value
never depends on the order of the qrels' lines. The run is ranked by ctxeval's ``ties`` rule
(ir_measures sorts tied scores by doc id ascending: ``ties="input"`` with the run in that order gives
its numbers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import offsets, run_starts, within_ranks
from .base import Family, Measure, Param, register

if TYPE_CHECKING:
    from .._core.extras import JudgedScores

__all__ = ["IR_MEASURES"]

IR_MEASURES = "ir_measures 0.4.3 (compat provider)"


_BLOCK = 1 << 20  # depths summed per block of queries


def _rbo(seg: np.ndarray, at: np.ndarray, depth: np.ndarray, p: float) -> np.ndarray:
    """Per query ``Σ_{i≤D} p^{i−1} X_i / i / Σ_{i≤D} p^{i−1}``, ``X_i`` the docs with ``at ≤ i`` (``seg``:
    their query, ``D = depth``), summed depth after depth as ir_measures' loop does, blocks of queries
    at a time."""
    n_q = depth.size
    out = np.zeros(n_q)
    top = int(depth.max()) if n_q else 0
    weight = np.cumprod(np.r_[1.0, np.full(max(top - 1, 0), p)])
    order = np.argsort(seg, kind="stable")
    seg, at = seg[order], at[order]
    ends = np.cumsum(depth)
    a = 0
    while a < n_q:
        b = max(int(np.searchsorted(ends, (ends[a - 1] if a else 0) + _BLOCK, side="right")), a + 1)
        off = offsets(depth[a:b])
        lo, hi = np.searchsorted(seg, [a, b])
        hist = np.bincount(off[seg[lo:hi] - a] + at[lo:hi] - 1, minlength=int(off[-1]))
        flat_seg = np.repeat(np.arange(b - a), depth[a:b])
        running = np.cumsum(hist)
        count = running - np.repeat(np.r_[0, running][off[:-1]], depth[a:b])
        i = within_ranks(off)
        w = weight[i - 1]
        num = np.bincount(flat_seg, weights=w * count / i, minlength=b - a)
        den = np.bincount(flat_seg, weights=w, minlength=b - a)
        np.divide(num, den, out=out[a:b], where=den > 0)
        a = b
    return out


def _compat(d: EvalData, m: Measure) -> np.ndarray:
    p = float(m["p"])
    scores: JudgedScores = d.extra("scores")
    n_q = d.n_queries
    out = np.zeros(n_q)
    q_rel = np.flatnonzero(d.q_grade > 0)
    if q_rel.size == 0:
        return out
    grades, q_code = np.unique(d.q_grade[q_rel], return_inverse=True)
    width = np.int64(grades.size)
    key_q = d.q_seg[q_rel] * width + q_code
    uk, count = np.unique(key_q, return_counts=True)
    hit = np.flatnonzero(d.j_grade > 0)
    r_seg, r_rank = d.j_seg[hit], d.j_rank[hit]
    r_code = np.searchsorted(grades, d.j_grade[hit])
    retrieved = np.bincount(np.searchsorted(uk, r_seg * width + r_code), minlength=uk.size)
    lacking = count - retrieved  # relevant docs the run does not hold, per (query, grade)
    u_seg = np.repeat(uk // width, lacking)
    u_code = np.repeat(uk % width, lacking)
    seg = np.r_[r_seg, u_seg]
    code = np.r_[r_code, u_code]
    key = np.r_[scores.j_score[hit], np.zeros(u_seg.size)]
    absent = np.r_[np.zeros(hit.size, dtype=np.int64), np.ones(u_seg.size, dtype=np.int64)]
    rank = np.r_[r_rank, np.zeros(u_seg.size, dtype=np.int64)]
    order = np.lexsort((rank, absent, -key, -code, seg))
    start = run_starts(seg[order])
    ideal_pos = np.empty(order.size, dtype=np.int64)
    ideal_pos[order] = np.arange(order.size) - np.repeat(start, np.diff(np.r_[start, order.size])) + 1
    n_rel = np.bincount(seg, minlength=n_q)
    depth = np.maximum(d.n_ret, n_rel)
    seen = np.maximum(ideal_pos[: hit.size], r_rank)  # the depth from which a retrieved doc is in both lists
    rbo = _rbo(r_seg, seen, depth, p)
    if not m["normalize"]:
        return rbo
    best = _rbo(seg, ideal_pos, depth, p)
    np.divide(rbo, best, out=out, where=best > 0)
    out[best <= 0] = rbo[best <= 0]
    return out


register(
    Family(
        "Compat",
        "Compatibility: rank-biased overlap with an ideal ranking",
        "Compat = RBO(run, ideal) = Σ_{i≤D} p^{i−1} |ideal_{≤i} ∩ run_{≤i}| / i / Σ_{i≤D} p^{i−1}, D = max(|run|, |ideal|); "
        "ideal: the relevant docs by grade, then run score; normalize: over RBO(ideal, ideal)",
        "Clarke, Vtyurina & Smucker, TOIS 2021; " + IR_MEASURES,
        _compat,
        (
            Param("p", "float", 0.95, "persistence", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
            Param("normalize", "bool", True, "divide by the ideal's overlap with itself (ir_measures' default)"),
        ),
        cutoff="none",
        aliases=("compat", "compatibility"),
        group="compat",
        requires=frozenset({"scores"}),
    )
)
