"""Every cut measure at a budget of B tokens (``nDCG@512tok``, ``SpanRecall@2000tok``) instead of K chunks.

**The context.** A query's ranked chunks enter in rank order while their tokens fit the budget; the
first that does not fit is left out and packing stops (``overflow="stop"``, the default; ``skip``
goes on with the chunks that still fit: :mod:`ctxeval._core.budget`). The context is ranked 1, 2, ...
in order. Tokens come from the chunk table (the ``chunks`` side data) and are counted by the
tokenizer every report names.

**Readings.** Each family says how it reads a budget:

* *over the context*: the measure's own formula with the context as the retrieved list, nothing cut
  further (RR, R, AP, DCG, Success, ERR, RBP, UDCG, the span and context measures, ...);
* *per chunk given*: the measures that divide by k divide by the chunks in the context instead (P,
  Judged, unj, Precision4+, Harm; 0 for an empty context). Where a ranking runs out before the budget
  is spent, P@K pads the missing ranks as non-relevant; a budget has no ranks to pad, so these read
  the context as it is;
* *against the ideal at B*: the measures normalised by an ideal take the exact optimum at the same
  budget over the judged chunks (their grades' gains, their tokens), or over the evidence units of
  span labels (:mod:`ctxeval._core.knapsack`): IDCG@B the best ordered selection within B tokens
  (nDCG), G_ideal@B the best set (RA-nWG), the most grade >= 4 (grade 5) chunks that fit (N-Recall4+,
  N-Recall5), min(|context|, R) (relative_P).

With every chunk of one length L and B in [K·L, (K+1)·L), the context is the top K and each ideal is
the K-slot ideal, so every budget measure equals its K-slot measure (the per-chunk readings where the
ranking holds at least K chunks). Families without a reading (IPrec: its cutoff is a recall level;
PROC and %PROC: the pool's tokens are not tracked; ndDCG: its ideal is built from utilities, not
chunks) refuse a budget with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .._core.budget import pack
from .._core.evaldata import EvalData
from .._core.knapsack import count_optimum, ordered_optimum, set_optimum
from .._core.segments import div0, ratio
from .._errors import ConfigError
from .base import Measure, make, set_readings
from .classical import _dcg_parts, _gain_of, rel_rows
from .rag import _top_count, g_obs, weights
from .spans import span_data, span_dcg, span_ideal_gains, span_rag

if TYPE_CHECKING:
    from .._core.spans import ChunkData

__all__ = ["context"]


def _chunks(d: EvalData) -> ChunkData:
    return d.extra("chunks")


def context(d: EvalData, m: Measure) -> EvalData:
    """The EvalData cut to each query's context at the measure's budget (cached per budget)."""
    ch = _chunks(d)
    return d.memo(
        ("budget_context", m.budget), lambda: d.select(pack(d.r_off, ch.tokens, int(m.budget or 0), ch.overflow))
    )


def _deepest(ctx: EvalData) -> int:
    return max(1, int(ctx.n_ret.max()) if ctx.n_queries else 1)


def _unbudgeted(m: Measure, ctx: EvalData) -> Measure:
    """The measure read over the whole context: no cutoff, or (a cutoff required) the deepest context."""
    return make(m.family, dict(m.params), _deepest(ctx) if m.spec.cutoff == "required" else None)


def over_context(d: EvalData, m: Measure) -> np.ndarray:
    ctx = context(d, m)
    return _unbudgeted(m, ctx).compute(ctx)


def per_chunk(d: EvalData, m: Measure) -> np.ndarray:
    """A measure of the form count / k, with the context's own size in place of k."""
    ctx = context(d, m)
    k = _deepest(ctx)
    return div0(_unbudgeted(m, ctx).compute(ctx) * k, ctx.n_ret)


def _items(d: EvalData, m: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The judged chunks of every query: (offsets, raw grades, tokens); an error when a judged chunk's
    tokens are unknown (not in the chunk table)."""
    ch = _chunks(d)
    if (ch.q_tokens < 0).any():
        n = int((ch.q_tokens < 0).sum())
        raise ConfigError(
            f"{m}: {n} judged chunks are not in the chunk table {ch.source}, and the ideal at a budget packs every judged chunk by its tokens"
        )
    return ch.q_off, ch.q_grade, ch.q_tokens


def _span_items(d: EvalData, m: Measure, value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    off, g, tok = span_ideal_gains(d, value)
    if tok is None:
        raise ConfigError(
            f"{m}: the ideal at a budget packs the evidence units by their tokens: give the documents (documents=... of RagConfig, --documents)"
        )
    return off, g, np.ceil(tok).astype(np.int64)


def _discounts(n: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


def _ndcg(d: EvalData, m: Measure) -> np.ndarray:
    ctx = context(d, m)
    m0 = make(m.family, dict(m.params))
    budget = int(m.budget or 0)
    if d.has("spans"):
        dcg = span_dcg(ctx, m0, np.ones(ctx.n_rows, dtype=bool))
        off, g, w = _span_items(d, m, _gain_of(span_data(d).u_grade, m0))
    else:
        dcg = _dcg_parts(ctx, m0)[0]
        off, grades, w = _items(d, m)
        g = _gain_of(grades, m0)
    ideal = ordered_optimum(off, g, w, budget, _discounts(int(np.diff(off).max()) if off.size > 1 else 1))
    return div0(dcg, ideal)


def _ranwg(d: EvalData, m: Measure) -> np.ndarray:
    if m["novelty"] < 1.0:
        raise ConfigError(f"{m}: the novelty discount is not read at a budget; use RA-nWG@k for it")
    ctx = context(d, m)
    budget = int(m.budget or 0)
    if d.has("spans"):
        obs, w_units = span_rag(ctx, m, np.ones(ctx.n_rows, dtype=bool))
        off, g, w = _span_items(d, m, w_units)
        return ratio(obs, set_optimum(off, g, w, budget))
    obs = g_obs(ctx, m, _deepest(ctx))
    off, _, w = _items(d, m)
    util = np.clip(_chunks(d).q_util, 1, 5)
    seg = np.repeat(np.arange(d.n_queries), np.diff(off))
    return ratio(obs, set_optimum(off, weights(d, m)[seg, util], w, budget))


def _nrecall(lo: int) -> Callable[[EvalData, Measure], np.ndarray]:
    def kernel(d: EvalData, m: Measure) -> np.ndarray:
        ctx = context(d, m)
        got = _top_count(ctx, _deepest(ctx), lo, 5)
        off, _, w = _items(d, m)
        util = np.clip(_chunks(d).q_util, 1, 5)
        seg = np.repeat(np.arange(d.n_queries), np.diff(off))
        keep = util >= lo
        sub_off = np.r_[0, np.cumsum(np.bincount(seg[keep], minlength=d.n_queries))]
        return ratio(got, count_optimum(sub_off, w[keep], int(m.budget or 0)))

    return kernel


def _relative_p(d: EvalData, m: Measure) -> np.ndarray:
    ctx = context(d, m)
    relret = ctx.seg_count(rel_rows(ctx, make("R", {"rel": m["rel"]}, _deepest(ctx)))).astype(np.float64)
    return div0(relret, np.minimum(ctx.n_ret, ctx.num_rel(m["rel"])))


_OVER_CONTEXT = (
    "R", "AP", "RR", "Success", "DCG", "ERR", "GoldHit", "RBP", "dDCG", "UDCG", "UDCG-pos", "DistractorRate",
    "DistractorHarm", "IDBasedContextPrecision", "IDBasedContextRecall", "RankWeightedPrecision", "ContextPrecision",
    "ContextRecall", "CoverageRecall", "NuggetRecall", "AttributionRate", "SpanRecall", "SpanPrecision", "SpanIoU",
    "SpanCoverage",
)  # fmt: skip
_PER_CHUNK = ("P", "Judged", "unj", "Precision4+", "Harm")

for _name in _OVER_CONTEXT:
    set_readings(_name, at_budget=over_context, budget_doc="its formula over the context")
for _name in _PER_CHUNK:
    set_readings(_name, at_budget=per_chunk, budget_doc="k is the number of chunks in the context")
set_readings(
    "nDCG",
    at_budget=_ndcg,
    budget_doc="IDCG@B: the best ordered selection of judged chunks (or evidence units) within B tokens",
)
set_readings(
    "RA-nWG",
    at_budget=_ranwg,
    budget_doc="G_ideal@B: the best set of judged chunks (or evidence units) within B tokens",
)
set_readings(
    "N-Recall4+", at_budget=_nrecall(4), budget_doc="min(k, n4 + n5) becomes the most grade >= 4 chunks that fit B"
)
set_readings("N-Recall5", at_budget=_nrecall(5), budget_doc="min(k, n5) becomes the most grade-5 chunks that fit B")
set_readings("relative_P", at_budget=_relative_p, budget_doc="min(k, R) becomes min(|context|, R)")
for _name, _why in (
    ("IPrec", "its cutoff is a recall level, not a number of chunks"),
    ("PROC", "the pool's tokens are not tracked"),
    ("%PROC", "the pool's tokens are not tracked"),
    ("ndDCG", "its ideal is built from utilities, not from chunks"),
):
    set_readings(_name, budget_doc=_why)
