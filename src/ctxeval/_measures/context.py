"""Context measures as RAG toolkits (RAGAS) define them, on ids: how much of the retrieved context is
relevant, and how much of the reference context was retrieved.

Relevance is ``grade >= rel`` on the qrels (default 1): with samples, the reference ids carry grade 1
unless the samples give grades. Without @k the whole retrieved list counts (RAGAS scores the whole
list it is given).

RAGAS's names give RAGAS's numbers (ragas 0.4's classes of those names are the oracle in the tests):

* ``IDBasedContextPrecision@k`` = |top k ∩ relevant| / |top k| (RAGAS's ``IDBasedContextPrecision``, an
  unweighted share, SetP on the top k);
* ``IDBasedContextRecall@k`` = |top k ∩ relevant| / |relevant| (RAGAS's ``IDBasedContextRecall``); NA when
  the query has no relevant chunk.

The rank-weighted formula of RAGAS's LLM and non-LLM context precision, with verdicts from the ids, has
a name of its own, since no RAGAS metric computes it on ids:

* ``RankWeightedPrecision@k`` = Σ_{i<=k, chunk i relevant} (relevant chunks in the top i / i) /
  (relevant chunks in the top k); 0 when none of the top k is relevant (RAGAS divides by that count +
  1e-10, so it reads 0 there too). Unlike AP, the denominator counts the relevant chunks *retrieved*,
  not all the relevant ones: a list holding one relevant chunk at rank 1 scores 1 however many it
  missed. RAGAS's documented case: retrieved d1, d2, d3, d4, references d1, d4, d5, d6:
  IDBasedContextPrecision = 2/4 = 0.5, RankWeightedPrecision = (1/1 + 2/4) / 2 = 0.75.
* ``ContextPrecision(method=...)@k`` is that formula with the verdicts ``method`` says (RAGAS's
  ``ContextPrecision`` is the formula with an LLM's verdicts): ``ids`` (the default) gives
  RankWeightedPrecision, *not* RAGAS's IDBasedContextPrecision; ``similarity`` RAGAS's
  ``NonLLMContextPrecisionWithReference``; ``judge`` its ``LLMContextPrecisionWithReference`` on a judge's
  labels.
* ``ContextRecall(method=...)@k`` = (relevant chunks in the top k) / (relevant chunks of the query) with
  ``ids`` (equal to IDBasedContextRecall); NA when the query has none.

``method=similarity`` (text-only samples; RAGAS's ``NonLLMContextPrecisionWithReference`` and
``NonLLMContextRecall``): sim(a, b) = 1 - normalised Levenshtein distance (rapidfuzz); a retrieved chunk
is relevant when its best sim to a reference context is >= ``threshold`` (default 0.5), and a reference
context is recalled when some chunk of the top k is >= ``threshold`` similar to it. A sample without
reference texts, or whose chunks have no texts, is NA. ragas 0.4.3's recall counts sim > threshold
(strictly; its precision uses >=), ctxeval uses >= for both: the two differ only where a similarity
equals the threshold exactly.

Edge samples have one reading each, the same under every method (the sample set's notes count them;
the differences from ragas 0.4.3 are checked against ragas in the tests):

* an empty retrieved list scores 0 (a query the run lacks, under the default ``missing="zero"``; a
  pipeline that returns nothing never raises a mean). ragas: IDBasedContextPrecision NaN (``missing=
  "ignore"`` gives that reading: such samples leave every mean), IDBasedContextRecall 0, the non-LLM
  precision 0 and recall an error;
* an empty reference list (no reference id, grade or non-empty reference context) is NA: nothing is
  relevant there, and the sample leaves every mean, as an unjudged query does. ragas:
  IDBasedContextPrecision 0, IDBasedContextRecall NaN, the non-LLM precision an error, recall NaN;
* an empty text matches nothing: an empty reference context is no reference, an empty chunk text is 0
  similar to every reference. ragas finds "" 1.0 similar to "" (a match);
* a lone surrogate in a text reads as U+FFFD (ragas keeps it; the texts compare the same).

``method=containment``: as ``similarity``, a chunk matching a reference context when the chunk's text
holds the reference's (blanks collapsed; ``threshold`` is not read). For references that are excerpts of
the chunks: a 200-character excerpt of a 1,000-character chunk is 0.2 similar to it, and equal to no
chunk text (the sample set's notes count such references when exact text is in force).

``method=judge`` (RAGAS's LLM-based variants, on labels ``ctxeval judge`` wrote into the samples):
precision as above with chunk i relevant when the judge found it useful for the reference answer (NA
when a chunk of the top k is undecided: never guessed); recall = (claims of the reference answer that
a chunk of the top k supports) / (decided claims), a claim neither supported nor decided being left
out (the judge command reports how many); NA without claims.

From a sample set's own fields (the ``samples`` side data; NA for a sample without the field):

* ``CoverageRecall@k`` = (facets with at least one of their chunks in the top k) / (facets of the
  sample): does the context cover every aspect the answer needs? A sample with an empty facet list is NA.
* ``AttributionRate[@k]`` = (chunks of the top k the response cites) / min(k, chunks retrieved): how much
  of what the LLM was given it used; 1 - AttributionRate is the share it ignored.
* ``NuggetRecall(score=...)@k`` (TREC 2024 RAG track, Pradeep et al. 2024, with the given
  ``supported_by`` labels instead of an LLM's): a nugget's support s is 1 when a chunk of the top k
  supports it, 0.5 when one only partially supports it, else 0; the ``strict`` scores count s = 1
  only. ``all`` = mean s over the nuggets; ``vital`` = mean s over the vital ones; ``weighted`` = Σ w s
  / Σ w with w = 1 (vital), 0.5 (okay) (open-rag-eval's form, without its max(count, 1) per kind).
  Default ``vital_strict``. A sample whose nuggets hold none of the kind scored (no vital nugget for
  the vital scores, an empty nugget list) scores 0.0, as castorini/nuggetizer's ``metrics.py`` (the
  TREC 2024 RAG reference code) scores it before averaging over every sample (its output is the
  oracle in the tests); ``empty=na`` leaves such samples out of the mean instead (NA). A sample
  without a ``nuggets`` field is NA either way.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import div0, ratio
from .._errors import ConfigError
from .base import Family, Kernel, Measure, Param, register
from .classical import REL, precision_sums, rel_rows


# What each kernel reads of the side data it requires, as protocols: the values themselves are built,
# and declared, beside their providers in ctxeval._context.samples (tests/context/test_side_data_types.py
# checks that each has what its protocol names); the core knows none of them.
class SampleLabelsView(Protocol):
    """``samples``: what CoverageRecall, NuggetRecall and AttributionRate read."""

    cited: np.ndarray  #: per ranked row: the response cites the chunk
    has_citations: np.ndarray  #: per query: the sample gives citations
    has_facets: np.ndarray  #: per query: the sample gives facets
    f_off: np.ndarray  #: per query: offsets of its facets, numbered across queries
    fc_facet: np.ndarray  #: per (facet, chunk) pair: the facet
    fc_row: np.ndarray  #: per (facet, chunk) pair: the chunk's ranked row (-1: not retrieved)
    has_nuggets: np.ndarray  #: per query: the sample gives nuggets
    n_off: np.ndarray  #: per query: offsets of its nuggets
    n_vital: np.ndarray  #: per nugget: vital (else okay)
    nc_nugget: np.ndarray  #: per (nugget, chunk) pair: the nugget
    nc_row: np.ndarray  #: per (nugget, chunk) pair: the chunk's ranked row (-1: not retrieved)
    nc_level: np.ndarray  #: per (nugget, chunk) pair: 1.0 supports, 0.5 partially


class JudgeLabelsView(Protocol):
    """``judged``: what ContextPrecision / ContextRecall(method=judge) read."""

    relevant: np.ndarray  #: per ranked row: the judge found the chunk relevant
    undecided: np.ndarray  #: per ranked row: the judge left the chunk without a judgment
    has_judged: np.ndarray  #: per query: the sample gives the judge's relevance
    has_claims: np.ndarray  #: per query: the sample gives claims
    c_off: np.ndarray  #: per query: offsets of its claims
    cc_claim: np.ndarray  #: per (claim, chunk) pair: the claim
    cc_row: np.ndarray  #: per (claim, chunk) pair: the chunk's ranked row (-1: not retrieved)
    cc_supports: np.ndarray  #: per (claim, chunk) pair: supports (else undecided)


class SimilaritiesView(Protocol):
    """``similarity`` / ``containment``: what ContextPrecision / ContextRecall read by text."""

    has: np.ndarray  #: per query: the sample gives reference texts and chunk texts
    ref_off: np.ndarray  #: per query: offsets of its reference contexts
    p_ref: np.ndarray  #: per (reference, ranked row) pair: the reference
    p_row: np.ndarray  #: per pair: the ranked row
    p_sim: np.ndarray  #: per pair: the similarity
    cutoff: float  #: similarities below it were computed as 0


SAMPLES = frozenset({"samples"})
RAGAS = "Es, James, Espinosa-Anke & Schockaert, EACL 2024 (RAGAS); ragas 0.4 context precision / recall"


def _context_precision(d: EvalData, m: Measure) -> np.ndarray:
    if m["method"] in _TEXT_METHODS:
        return _similar_precision(d, m)
    if m["method"] == "judge":
        lab: JudgeLabelsView = d.extra("judged")
        return _rank_precision(d, m, lab.relevant, lab.has_judged, lab.undecided)
    return _rank_weighted(d, m)


def _rank_weighted(d: EvalData, m: Measure) -> np.ndarray:
    mask = rel_rows(d, m)
    found = d.seg_count(mask)
    out = np.zeros(d.n_queries, dtype=np.float64)
    np.divide(precision_sums(d, mask), found, out=out, where=found > 0)
    return out


def _id_precision(d: EvalData, m: Measure) -> np.ndarray:
    """|top k ∩ relevant| / |top k|; 0 for a query that retrieved nothing."""
    listed = d.n_ret if m.cutoff is None else np.minimum(d.n_ret, m.k)
    return div0(d.seg_count(rel_rows(d, m)), listed)


def _id_recall(d: EvalData, m: Measure) -> np.ndarray:
    return ratio(d.seg_count(rel_rows(d, m)), d.num_rel(m["rel"]))


def _context_recall(d: EvalData, m: Measure) -> np.ndarray:
    if m["method"] in _TEXT_METHODS:
        return _similar_recall(d, m)
    if m["method"] == "judge":
        return _judged_recall(d, m)
    return ratio(d.seg_count(rel_rows(d, m)), d.num_rel(m["rel"]))


def _similar_precision(d: EvalData, m: Measure) -> np.ndarray:
    """v_i = 1 when chunk i's best similarity to a reference context is >= the threshold."""
    sim, threshold = _texts(d, m)
    best = np.full(d.n_rows, -1.0)
    np.maximum.at(best, sim.p_row, sim.p_sim)
    return _rank_precision(d, m, best >= threshold, sim.has)


#: method -> the side data its text matches come from
_TEXT_METHODS = {"similarity": "similarity", "containment": "containment"}


def _texts(d: EvalData, m: Measure) -> tuple[SimilaritiesView, float]:
    """The text matches of ``m``'s method and the similarity at which they count (containment: 1)."""
    sim: SimilaritiesView = d.extra(_TEXT_METHODS[m["method"]])
    threshold = 1.0 if m["method"] == "containment" else m["threshold"]
    if threshold < sim.cutoff:
        raise ConfigError(
            f"{m}: the text similarities were computed for thresholds of {sim.cutoff:g} or more (those below "
            "were not computed); prepare the data with this measure among its measures"
        )
    return sim, threshold


def _rank_precision(
    d: EvalData, m: Measure, relevant: np.ndarray, has: np.ndarray, undecided: np.ndarray | None = None
) -> np.ndarray:
    """RAGAS's precision over ranked rows flagged ``relevant``; NA where ``has`` is false, and where a
    row of the top k is ``undecided`` (never guessed)."""
    mask = relevant.copy()
    top = np.ones(d.n_rows, dtype=bool) if m.cutoff is None else d.r_rank <= m.k
    mask &= top
    seen = np.cumsum(mask)  # relevant rows at or above each row, within its query
    before = np.where(d.r_off[:-1] > 0, seen[np.maximum(d.r_off[:-1] - 1, 0)], 0)
    so_far = seen - before[d.r_seg]
    seg = d.r_seg[mask]
    sums = np.bincount(seg, weights=so_far[mask] / d.r_rank[mask], minlength=d.n_queries)
    found = np.bincount(seg, minlength=d.n_queries)
    out = np.zeros(d.n_queries, dtype=np.float64)
    np.divide(sums, found, out=out, where=found > 0)
    out[~has] = np.nan
    if undecided is not None:
        out[np.bincount(d.r_seg[undecided & top], minlength=d.n_queries) > 0] = np.nan
    return out


def _judged_recall(d: EvalData, m: Measure) -> np.ndarray:
    """Claims of the reference answer a chunk of the top k supports / the decided claims; a claim no
    top-k chunk supports and one the judge could not decide is undecided and left out; NA when no
    claim is decided."""
    lab: JudgeLabelsView = d.extra("judged")
    n_claims = int(lab.c_off[-1])
    ok = lab.cc_row >= 0
    if m.cutoff is not None:
        ok &= d.r_rank[np.maximum(lab.cc_row, 0)] <= m.k
    supported = np.zeros(n_claims, dtype=bool)
    supported[lab.cc_claim[ok & lab.cc_supports]] = True
    open_ = np.zeros(n_claims, dtype=bool)
    open_[lab.cc_claim[ok & ~lab.cc_supports]] = True
    open_ &= ~supported
    q_of = np.repeat(np.arange(d.n_queries, dtype=np.int64), np.diff(lab.c_off))
    num = np.bincount(q_of[supported], minlength=d.n_queries)
    den = np.diff(lab.c_off) - np.bincount(q_of[open_], minlength=d.n_queries)
    out = ratio(num, den)
    out[~lab.has_claims] = np.nan
    return out


def _similar_recall(d: EvalData, m: Measure) -> np.ndarray:
    """A reference context is found when some chunk of the top k is >= the threshold similar to it."""
    sim, threshold = _texts(d, m)
    ok = sim.p_sim >= threshold
    if m.cutoff is not None:
        ok &= d.r_rank[sim.p_row] <= m.k
    n_refs = int(sim.ref_off[-1])
    found = np.zeros(n_refs, dtype=bool)
    found[sim.p_ref[ok]] = True
    q_of = np.repeat(np.arange(d.n_queries, dtype=np.int64), np.diff(sim.ref_off))
    out = ratio(np.bincount(q_of[found], minlength=d.n_queries), np.diff(sim.ref_off))
    out[~sim.has] = np.nan
    return out


METHOD = Param(
    "method",
    "str",
    "ids",
    "ids: relevance from the judgments (reference ids / grades); similarity: a chunk matches a reference "
    "context when their normalised Levenshtein similarity is >= threshold (RAGAS's non-LLM variant); containment: "
    "when the chunk's text holds the reference's (blanks collapsed; references that are excerpts of chunks); judge: "
    "an LLM judge's labels of the sample set (ctxeval judge relevance / judge claims; RAGAS's LLM variants)",
    choices=("ids", "similarity", "containment", "judge"),
)
THRESHOLD = Param("threshold", "float", 0.5, "similarity at or above which texts match", lo=0.0, hi=1.0)


def _method_needs(m: Measure) -> frozenset[str]:
    if m["method"] == "ids":
        return frozenset()
    return frozenset({_TEXT_METHODS.get(m["method"], "judged")})


def _labels(d: EvalData) -> SampleLabelsView:
    return d.extra("samples")


def _coverage_recall(d: EvalData, m: Measure) -> np.ndarray:
    lab = _labels(d)
    n_facets = np.diff(lab.f_off)
    hit = np.zeros(int(lab.f_off[-1]), dtype=bool)
    found = lab.fc_row >= 0
    ok = d.r_rank[lab.fc_row[found]] <= m.k
    hit[lab.fc_facet[found][ok]] = True
    query_of_facet = np.repeat(np.arange(d.n_queries, dtype=np.int64), n_facets)
    covered = np.bincount(query_of_facet[hit], minlength=d.n_queries)
    out = ratio(covered, n_facets)
    out[~lab.has_facets] = np.nan
    return out


NUGGET_SCORES = ("vital_strict", "vital", "all_strict", "all", "weighted_strict", "weighted")


def _nugget_recall(d: EvalData, m: Measure) -> np.ndarray:
    lab = _labels(d)
    score = m["score"]
    n_total = int(lab.n_off[-1])
    support = np.zeros(n_total, dtype=np.float64)
    found = lab.nc_row >= 0
    ok = np.zeros(found.size, dtype=bool)
    ok[found] = d.r_rank[lab.nc_row[found]] <= m.k
    np.maximum.at(support, lab.nc_nugget[ok], lab.nc_level[ok])
    if score.endswith("_strict"):
        support = (support == 1.0).astype(np.float64)
    if score.startswith("vital"):
        weight = lab.n_vital.astype(np.float64)
    elif score.startswith("weighted"):
        weight = np.where(lab.n_vital, 1.0, 0.5)
    else:
        weight = np.ones(n_total, dtype=np.float64)
    q_of = np.repeat(np.arange(d.n_queries, dtype=np.int64), np.diff(lab.n_off))
    num = np.bincount(q_of, weights=weight * support, minlength=d.n_queries)
    den = np.bincount(q_of, weights=weight, minlength=d.n_queries)
    out = ratio(num, den)
    if m["empty"] == "zero":
        out[den == 0] = 0.0  # nuggetizer's reading: no nugget of the kind scored is a score of 0
    out[~lab.has_nuggets] = np.nan
    return out


def _attribution_rate(d: EvalData, m: Measure) -> np.ndarray:
    lab = _labels(d)
    top = np.ones(lab.cited.size, dtype=bool) if m.cutoff is None else d.r_rank <= m.k
    n = d.n_queries
    out = ratio(np.bincount(d.r_seg[lab.cited & top], minlength=n), np.bincount(d.r_seg[top], minlength=n))
    out[~lab.has_citations] = np.nan
    return out


def _ragas(name: str, summary: str, formula: str, kernel: Kernel, *, by_method: bool = False, **more: Any) -> Family:
    """A family of RAGAS's: its citation, relevance at ``rel``, the whole retrieved list unless @k (RAGAS
    scores the list it is given); ``by_method``: the verdicts come by ``method`` (and its ``threshold``),
    from the side data that method reads."""
    params = (REL, METHOD, THRESHOLD) if by_method else (REL,)
    needs = _method_needs if by_method else None
    return Family(
        name, summary, formula, RAGAS, kernel, params, cutoff="optional", group="context", requires_for=needs, **more
    )


def _from_samples(
    name: str, summary: str, formula: str, citation: str, kernel: Kernel, params: tuple[Param, ...], **more: Any
) -> Family:
    """A family of a sample set's own labels (facets, nuggets, citations: the ``samples`` side data)."""
    return Family(name, summary, formula, citation, kernel, params, group="context", requires=SAMPLES, **more)


for fam in (
    _ragas(
        "IDBasedContextPrecision",
        "Share of the retrieved chunks that are relevant (RAGAS's IDBasedContextPrecision)",
        "IDBasedContextPrecision@k = |top k ∩ relevant| / |top k|; 0 when nothing was retrieved",
        _id_precision,
        aliases=("id_based_context_precision",),
    ),
    _ragas(
        "IDBasedContextRecall",
        "Share of the relevant chunks retrieved (RAGAS's IDBasedContextRecall)",
        "IDBasedContextRecall@k = |top k ∩ relevant| / |relevant|; NA when the query has no relevant chunk",
        _id_recall,
        aliases=("id_based_context_recall",),
    ),
    _ragas(
        "RankWeightedPrecision",
        "Rank-weighted precision of the retrieved context: RAGAS's context-precision formula on ids",
        "RankWeightedPrecision@k = Σ_{i≤k, i relevant} (relevant in top i / i) / (relevant in top k); 0 when "
        "none of the top k is relevant (RAGAS's docs case d1..d4 vs {d1,d4,d5,d6}: 0.75, IDBased 0.5)",
        _rank_weighted,
        aliases=("rank_weighted_precision",),
    ),
    _ragas(
        "ContextPrecision",
        "RAGAS's rank-weighted context precision, verdicts by method (ids: RankWeightedPrecision, not IDBased)",
        "ContextPrecision@k = Σ_{i≤k, i relevant} (relevant in top i / i) / (relevant in top k); 0 when none "
        "of the top k is relevant; method=similarity: i relevant when max_ref sim(i, ref) >= threshold, NA "
        "without texts",
        _context_precision,
        by_method=True,
        aliases=("context_precision",),
    ),
    _ragas(
        "ContextRecall",
        "Share of the reference context retrieved (RAGAS; method=ids equals IDBasedContextRecall)",
        "ContextRecall@k = (relevant in top k) / (relevant judged); NA when the query has no relevant chunk; "
        "method=similarity: (reference contexts with a top-k chunk >= threshold similar) / (reference contexts)",
        _context_recall,
        by_method=True,
        aliases=("context_recall",),
    ),
    _from_samples(
        "CoverageRecall",
        "Share of a sample's facets covered by the top k",
        "CoverageRecall@k = (facets with at least one of their chunks in the top k) / (facets); NA without facets",
        "Pradeep et al., TREC 2024 RAG Track nugget evaluation (coverage of the aspects an answer needs, on ids)",
        _coverage_recall,
        (),
        cutoff="required",
        aliases=("coverage_recall",),
    ),
    _from_samples(
        "NuggetRecall",
        "Share of a sample's nuggets the top k supports (TREC 2024 RAG scores, on given labels)",
        "NuggetRecall@k = Σ w_i s_i / Σ w_i over the nuggets; s = 1 supported by a top-k chunk, 0.5 partially, "
        "else 0 (strict: s = 1 only); w: all 1, vital 1/okay 0 (vital), vital 1/okay 0.5 (weighted); "
        "Σ w_i = 0: 0 (empty=zero, nuggetizer's) or NA (empty=na)",
        "Pradeep, Thakur, Upadhyay, Campos, Craswell & Lin, TREC 2024 RAG Track nugget evaluation (2024)",
        _nugget_recall,
        (
            Param("score", "str", "vital_strict", "which TREC 2024 RAG nugget score", choices=NUGGET_SCORES),
            Param(
                "empty",
                "str",
                "zero",
                "a sample whose nuggets hold none of the kind scored (no vital one for vital scores, none for "
                "the others): zero = 0.0, as nuggetizer (the TREC 2024 RAG reference code) scores it and then "
                "averages over every sample; na = left out of the mean",
                choices=("zero", "na"),
            ),
        ),
        cutoff="required",
        aliases=("nugget_recall",),
    ),
    _from_samples(
        "AttributionRate",
        "Share of the given chunks the response cites",
        "AttributionRate@k = (chunks of the top k cited by the response) / min(k, retrieved); NA without citations",
        "Attribution of RAG responses to retrieved context (e.g. ALCE, Gao et al., EMNLP 2023)",
        _attribution_rate,
        (),
        cutoff="optional",
        aliases=("attribution_rate",),
    ),
):
    register(fam)
