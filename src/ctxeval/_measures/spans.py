"""Span measures: how much of a query's evidence (span labels, :mod:`ctxeval._io.spans`) the retrieved
chunks cover, and how much else came with it; and the rank measures read over span labels.

Notation (per query): R = the evidence, the characters of its spans of grade >= ``rel``; C = the
context, the union of the characters of the chunks retrieved (the top k, a budget's context, or the
whole list); |X| counts characters, or with ``unit=tokens`` the tokens of the documents' text in X
(each atom of :mod:`ctxeval._core.spans` weighs the tokens its own text counts, so the tokens of a
stretch are the sum over its atoms: a tokenizer that would merge across an atom boundary counts a
little more than over the whole text). Chunks of other documents are in C (they are context, and
junk to this query). H = the chunks of the chunking (the chunk table) that share at least one
character with R.

Exact mode (``mode=exact``, the default):

* ``SpanRecall`` = |R ∩ C| / |R|; NA when the query has no evidence.
* ``SpanPrecision`` = |R ∩ C| / |C|; 0 for an empty context.
* ``SpanIoU`` = |R ∩ C| / |R ∪ C|.
* ``PrecisionOmega`` = |R ∩ ∪H| / |∪H ∪ R|: the IoU of the oracle context that retrieves exactly the
  chunks holding evidence, so the best IoU (and, when the chunks cover all the evidence, the best
  precision) this chunking allows any retriever: a ceiling per chunker, whatever the run. Evidence
  no chunk covers stays in the denominator. 0 when no chunk holds evidence.
* ``SpanCoverage`` = Σ_{a ∈ R ∩ C} gain(g_a) |a| / Σ_{a ∈ R} gain(g_a) |a|: recall with evidence
  weighted by grade (g_a the highest grade of the spans covering a; gain(g) = max(g, 0), or
  ``gains``); NA without evidence of positive gain.

Chroma-compatible mode (``mode=chroma``) computes what chunking_evaluation's code computes
(``_scores_from_dataset_and_retrievals``, ``_full_precision_score``; Smith & Troynikov, Chroma 2024),
with Σ over the spans as a list and over the retrieved chunks as a list (duplicates and overlaps
counted again): recall = |R ∩ C| / Σ_r |r|; precision = |R ∩ C| / Σ_c |c|; IoU = |R ∩ C| / (Σ_c |c|
+ Σ_r |r \\ C|); precision_Omega as above with H taking every chunk that overlaps *or touches* a span
(a zero-length intersection counts). So the modes differ exactly where (1) retrieved chunks overlap
each other or repeat (Chroma's sums count the shared characters again: lower precision and IoU),
(2) spans overlap (Chroma's recall denominator counts the shared characters twice, so recall stays
below 1), (3) a chunk only touches a span (Chroma's H takes it: a lower precision_Omega). Chroma's
placement of chunk texts (first occurrence, a trailing period cut) is a property of the chunk table,
not of the measure: :meth:`ctxeval.Chunks.locate` with ``mode="chroma"``.

Rank measures over span labels (the evaluation's labels are spans): a retrieved chunk's gain is the
*new* evidence it holds given the chunks ranked above it in the context, so overlapping chunks never
count the same evidence twice. The spans are first resolved into disjoint units u (grade g_u, W_u
characters; :mod:`ctxeval._core.spans`); chunk i gains G_i = Σ_u gain(g_u) · |u ∩ c_i \\ (c_1 ∪ ... ∪
c_{i-1})| / W_u: each unit's share (in characters) times its grade's gain. ``nDCG`` = Σ_i G_i /
log2(i + 1) over the context, normalised by the ideal of the evidence itself: every unit a chunk of
its own holding exactly it (IDCG@k = the k largest gain(g_u), discounted; at a budget of B tokens the
best ordered selection of units whose tokens sum to at most B, :mod:`ctxeval._core.knapsack`). That
ideal is what a chunker that cut out each unit exactly would allow; a chunk holding several units
gains them all at one rank, which no single unit can, so nDCG over spans can exceed 1 where chunks
hold several units (the K-slot pathology that a budget bounds). A chunk-id label converted to a span
(:meth:`ctxeval.SpanLabels.from_qrels`) scored on the same chunks gives the chunk-level value.
``RA-nWG`` reads the units: G_obs = Σ_u w(g_u) · |u ∩ C| / W_u, G_ideal@k = the k largest unit
weights (weights from the units' grade shares, as RA-nWG's from the judged docs'), at a budget the
best set of units within B tokens. ``UDCG``: a chunk is relevant when UDCG finds its chunk grade
relevant (the chunk grades below) and it newly holds evidence; its u = min(1, Σ_u |u ∩ c_i \\ earlier|
/ W_u) over the units of grade >= ``rel`` (default 1): the share of one unit it brings, at most 1;
the other chunks as UDCG reads them.
Other measures (``P``, ``R``, ``RR``, ``AP``, ...) read span labels as chunk grades: a chunk of the
table is judged at the highest grade of the evidence it shares a character with.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import distinct, div0, ratio
from .._core.spans import covered, expand, first_cover
from .._errors import ConfigError
from .base import Family, Measure, Param, register, set_readings
from .classical import GAINS, _gain_of
from .distraction import _udcg as _udcg_chunks
from .distraction import relevant_rows, top_rows, udcg_of, utilities_of
from .rag import top_k_sum, weights_of

if TYPE_CHECKING:
    from .._core.spans import AtomData, SpanCeiling, SpanData

__all__ = ["span_data", "span_dcg", "span_ideal_gains", "span_rag"]

CHROMA = "Smith & Troynikov 2024, Evaluating Chunking Strategies for Retrieval (Chroma; code: brandonstarxel/chunking_evaluation)"
OWN = "ctxeval: evidence as character spans of the documents"
SPANS = frozenset({"spans"})

UNIT = Param(
    "unit",
    "str",
    "chars",
    "what |X| counts: chars (characters) or tokens (of the documents' text)",
    choices=("chars", "tokens"),
)
MODE = Param(
    "mode",
    "str",
    "exact",
    "exact (unions) or chroma (chunking_evaluation's sums, touching chunks in precision_Omega)",
    choices=("exact", "chroma"),
)
SREL = Param("rel", "int", 1, "minimum grade of a span counted as evidence (inclusive)")


def span_data(d: EvalData) -> SpanData:
    return d.extra("spans")


def _weights(s: AtomData, m: Measure | None) -> np.ndarray:
    if m is not None and m["unit"] == "tokens":
        if s.a_tok is None:
            raise ConfigError(
                f"{m} counts the tokens of the documents' text: give the documents (documents=... of RagConfig, --documents)"
            )
        return s.a_tok
    return s.a_len.astype(np.float64)


def _context(d: EvalData, m: Measure) -> np.ndarray:
    """Mask over the ranked rows: in the context (the top k, or every row)."""
    return np.ones(d.n_rows, dtype=bool) if m.cutoff is None else d.r_rank <= m.k


def _per_query(d: EvalData, s: SpanData, mask: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Σ of ``w`` over the atoms of ``mask``, per query (zeros in place of the atoms left out: the same
    sums, without gathering the masked atoms)."""
    aq = d.memo(("span_aq",), lambda: s.a_q)
    return np.bincount(aq, weights=np.where(mask, w, 0.0), minlength=d.n_queries).astype(np.float64)


def _parts(d: EvalData, m: Measure) -> dict[str, np.ndarray]:
    """Per query: |R ∩ C| and, exact, |R|, |C|, |R ∪ C|, or, chroma, Chroma's list sums.

    Sums over the evidence read its atoms alone (a small share of the atoms); every weight (characters,
    tokens) is a whole number, so sums in any order and |R ∪ C| = |R| + |C| - |R ∩ C| are exact."""

    def compute() -> dict[str, np.ndarray]:
        s = span_data(d)
        w = _weights(s, m)
        # every row in the context (no query ranks more than k): no masks, no copies
        every = m.cutoff is None or int(np.diff(d.r_off).max(initial=0)) <= m.k
        rows: np.ndarray | slice = slice(None) if every else _context(d, m)
        lo, hi = s.r_lo[rows], s.r_hi[rows]
        cov = covered(s.n_atoms, lo, hi)
        ev, ev_q = d.memo(("span_evidence_atoms", m["rel"]), lambda: _evidence_atoms(s, m["rel"]))
        n = d.n_queries
        w_ev = w[ev]
        out = {"inter": np.bincount(ev_q, weights=np.where(cov[ev], w_ev, 0.0), minlength=n).astype(np.float64)}
        if m["mode"] != "chroma":
            out["ref"] = np.bincount(ev_q, weights=w_ev, minlength=n).astype(np.float64)
            out["ctx"] = _per_query(d, s, cov, w)
            out["union"] = out["ref"] + out["ctx"] - out["inter"]
            return out
        ref_spans = np.flatnonzero(s.s_grade >= m["rel"])
        span, atom = expand(s.s_lo[ref_spans], s.s_hi[ref_spans])  # every (span, atom) pair, spans as a list
        sq, sw = s.s_q[ref_spans[span]], w[atom]
        out["sum_ref"] = np.bincount(sq, weights=sw, minlength=n).astype(np.float64)
        out["unused"] = out["sum_ref"] - np.bincount(sq, weights=np.where(cov[atom], sw, 0.0), minlength=n)
        cw = np.empty(w.size + 1)
        cw[0] = 0.0
        np.cumsum(w, out=cw[1:])
        out["sum_ret"] = np.bincount(d.r_seg[rows], weights=cw[hi] - cw[lo], minlength=n).astype(np.float64)
        return out

    key = ("span_parts", m["unit"], m["mode"], m["rel"], None if m.cutoff is None else m.k)
    return d.memo(key, compute)


def _evidence_atoms(s: SpanData, rel: int) -> tuple[np.ndarray, np.ndarray]:
    """The atoms of evidence of grade >= ``rel`` and the query of each."""
    ev = np.flatnonzero(s.a_grade >= rel)
    return ev, np.searchsorted(s.a_off, ev, side="right") - 1


def _recall(d: EvalData, m: Measure) -> np.ndarray:
    p = _parts(d, m)
    return ratio(p["inter"], p["sum_ref"] if m["mode"] == "chroma" else p["ref"])


def _precision(d: EvalData, m: Measure) -> np.ndarray:
    p = _parts(d, m)
    return div0(p["inter"], p["sum_ret"] if m["mode"] == "chroma" else p["ctx"])


def _iou(d: EvalData, m: Measure) -> np.ndarray:
    p = _parts(d, m)
    return div0(p["inter"], p["sum_ret"] + p["unused"] if m["mode"] == "chroma" else p["union"])


def _omega(d: EvalData, m: Measure) -> np.ndarray:
    c: SpanCeiling = d.extra("ceiling")
    w = _weights(c, m)
    ok = c.s_grade[c.p_s] >= m["rel"]
    if m["mode"] == "exact":
        ok &= c.p_overlap
    h = distinct(c.p_h[ok])
    cov = covered(c.n_atoms, c.h_lo[h], c.h_hi[h])
    ev = c.a_grade >= m["rel"]
    aq = c.a_q
    n = d.n_queries
    # the atoms left out weigh 0 (whole-number weights: the same sums as gathering the others)
    return div0(
        np.bincount(aq, weights=np.where(cov & ev, w, 0.0), minlength=n).astype(np.float64),
        np.bincount(aq, weights=np.where(cov | ev, w, 0.0), minlength=n).astype(np.float64),
    )


def _grade_gain(grades: np.ndarray, m: Measure) -> np.ndarray:
    g = np.maximum(grades, 0).astype(np.float64)
    for grade, v in m["gains"] or ():
        g = np.where(grades == grade, v, g)
    return g


def _coverage(d: EvalData, m: Measure) -> np.ndarray:
    s = span_data(d)
    w = _weights(s, m) * np.where(s.a_unit >= 0, _grade_gain(s.a_grade, m), 0.0)
    rows = _context(d, m)
    cov = covered(s.n_atoms, s.r_lo[rows], s.r_hi[rows])
    pos = w > 0
    return ratio(_per_query(d, s, cov & pos, w), _per_query(d, s, pos, w))


# --- the rank measures over span labels -------------------------------------------------------------


def new_evidence(d: EvalData, rows: np.ndarray, unit_value: np.ndarray) -> np.ndarray:
    """Per ranked row of ``rows`` (a mask, rank order): Σ over the units of the evidence it holds that
    no row above it in ``rows`` holds, of ``unit_value[u] · |piece| / W_u`` (characters)."""
    s = span_data(d)
    owned = s.a_unit >= 0
    value = np.zeros(s.n_atoms)
    value[owned] = unit_value[s.a_unit[owned]] * s.a_len[owned] / s.u_len[s.a_unit[owned]]
    atoms, first = first_cover(s.r_lo[rows], s.r_hi[rows], value > 0)
    return np.bincount(first, weights=value[atoms], minlength=int(rows.sum())).astype(np.float64)


def span_ideal_gains(d: EvalData, unit_value: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The units as the ideal's items: per query offsets, their values and their token weights (None
    when no tokenizer counted them), units of value <= 0 left out."""
    s = span_data(d)
    keep = unit_value > 0
    order = np.flatnonzero(keep)
    off = np.r_[0, np.cumsum(np.bincount(s.u_q[order], minlength=d.n_queries))]
    tok = None if s.u_tok is None else s.u_tok[order]
    return off, unit_value[order], tok  # units are numbered query by query


def span_dcg(d: EvalData, m: Measure, rows: np.ndarray) -> np.ndarray:
    """Σ_i G_i / log2(i + 1) over the rows ``rows`` (rank order; i their position among them)."""
    s = span_data(d)
    gains = new_evidence(d, rows, _gain_of(s.u_grade, m))
    seg = d.r_seg[rows]
    rank = np.arange(seg.size) - np.r_[0, np.cumsum(np.bincount(seg, minlength=d.n_queries))][seg] + 1
    return np.bincount(seg, weights=gains / np.log2(rank + 1.0), minlength=d.n_queries).astype(np.float64)


def _dcg(d: EvalData, m: Measure) -> np.ndarray:
    return span_dcg(d, m, _context(d, m))


def _ndcg(d: EvalData, m: Measure) -> np.ndarray:
    s = span_data(d)
    off, g, _ = span_ideal_gains(d, _gain_of(s.u_grade, m))
    seg = np.repeat(np.arange(d.n_queries), np.diff(off))
    order = np.lexsort((-g, seg))
    pos = np.arange(g.size) - off[:-1][seg] + 1
    disc = np.where(m.cutoff is None or pos <= (m.k if m.cutoff is not None else 0), 1 / np.log2(pos + 1.0), 0.0)
    ideal = np.bincount(seg, weights=g[order] * disc, minlength=d.n_queries)
    return div0(_dcg(d, m), ideal)


def span_rag(d: EvalData, m: Measure, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """RA-nWG over the units: (G_obs over the rows ``rows``, the weight of every unit)."""
    s = span_data(d)
    util = np.clip(s.u_util, 1, 5)
    counts = np.bincount(s.u_q * 6 + util, minlength=d.n_queries * 6).reshape(d.n_queries, 6)
    w = weights_of(counts, m)[s.u_q, util]
    cov = covered(s.n_atoms, s.r_lo[rows], s.r_hi[rows])
    owned = cov & (s.a_unit >= 0)
    share = w[s.a_unit[owned]] * s.a_len[owned] / s.u_len[s.a_unit[owned]]
    aq = d.memo(("span_aq",), lambda: s.a_q)
    return np.bincount(aq[owned], weights=share, minlength=d.n_queries).astype(np.float64), w


def _ranwg(d: EvalData, m: Measure) -> np.ndarray:
    if m["novelty"] < 1.0:
        raise ConfigError(
            f"{m}: the novelty discount reads doc groups, which span labels replace: use RA-nWG without novelty"
        )
    s = span_data(d)
    obs, _ = span_rag(d, m, _context(d, m))
    util = np.clip(s.u_util, 1, 5)
    counts = np.bincount(s.u_q * 6 + util, minlength=d.n_queries * 6).reshape(d.n_queries, 6)
    return ratio(obs, top_k_sum(weights_of(counts, m), counts, m.k))


def _udcg(d: EvalData, m: Measure) -> np.ndarray:
    u_all = utilities_of(d)
    if u_all.llm_u is not None:  # the LLM's utilities rule, whatever the labels
        return _udcg_chunks(d, m)
    s = span_data(d)
    idx, seg, _ = top_rows(d, None if m.cutoff is None else m.k)
    rows = np.zeros(d.n_rows, dtype=bool)
    rows[idx] = True
    rel = 1 if m["rel"] is None else m["rel"]
    share = new_evidence(d, rows, (s.u_grade >= rel).astype(np.float64))
    relevant = relevant_rows(d, m["rel"], idx) & (share > 0)
    u = np.where(relevant, np.minimum(share, 1.0), np.maximum(0.0, -u_all.u[idx]))
    return udcg_of(d, m, seg, relevant, u)


for name, summary, formula, kernel in (
    (
        "SpanRecall",
        "Share of the evidence (span labels) the context covers",
        "SpanRecall@k = |R ∩ C| / |R| (exact); mode=chroma: |R ∩ C| / Σ_r |r|; R evidence, C the context's chunks, "
        "|·| characters (unit=tokens: tokens); NA without evidence",
        _recall,
    ),
    (
        "SpanPrecision",
        "Share of the context that is evidence",
        "SpanPrecision@k = |R ∩ C| / |C| (exact); mode=chroma: |R ∩ C| / Σ_c |c| (chunks as a list); 0 for an empty context",
        _precision,
    ),
    (
        "SpanIoU",
        "Intersection over union of the evidence and the context",
        "SpanIoU@k = |R ∩ C| / |R ∪ C| (exact); mode=chroma: |R ∩ C| / (Σ_c |c| + Σ_r |r \\ C|)",
        _iou,
    ),
):
    low = name.lower()
    register(
        Family(
            name,
            summary,
            formula,
            CHROMA,
            kernel,
            (UNIT, MODE, SREL),
            cutoff="optional",
            group="spans",
            aliases=(low, low.replace("span", "span_")),
            requires=SPANS,
        )
    )

for fam in (
    Family(
        "PrecisionOmega",
        "The best IoU this chunking allows: the oracle context of every chunk holding evidence",
        "PrecisionOmega = |R ∩ ∪H| / |∪H ∪ R|, H the chunks of the chunk table sharing a character with R "
        "(mode=chroma: overlapping or touching R); 0 when H is empty; a ceiling per chunker, whatever the run",
        CHROMA,
        _omega,
        (UNIT, MODE, SREL),
        cutoff="none",
        group="spans",
        aliases=("precision_omega", "precisionomega", "precision_Ω"),
        requires=frozenset({"ceiling"}),
    ),
    Family(
        "SpanCoverage",
        "Graded coverage: the evidence the context covers, weighted by grade",
        "SpanCoverage@k = Σ_{a∈R∩C} gain(g_a)·|a| / Σ_{a∈R} gain(g_a)·|a|, g_a the highest grade covering a, "
        "gain(g) = max(g, 0) or gains; NA without evidence of positive gain",
        OWN,
        _coverage,
        (UNIT, GAINS),
        cutoff="optional",
        group="spans",
        aliases=("spancoverage", "span_coverage", "graded_coverage"),
        requires=SPANS,
    ),
):
    register(fam)

set_readings("nDCG", on_spans=_ndcg)
set_readings("DCG", on_spans=_dcg)
set_readings("RA-nWG", on_spans=_ranwg)
set_readings("UDCG", on_spans=_udcg)
