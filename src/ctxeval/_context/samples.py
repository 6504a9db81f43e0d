"""What a sample set says beyond its references, for the measures that read it, each value beside the
provider that builds it (the measures read them through the protocols of :mod:`ctxeval._measures.context`,
which say what each kernel reads; the core knows none of them):

* ``samples`` (:class:`SampleLabels`): which retrieved chunks the response cites (``AttributionRate``),
  the facets an answer needs with the chunks covering each (``CoverageRecall``), and the nuggets with
  the chunks supporting each (``NuggetRecall``);
* ``similarity`` and ``containment`` (:class:`Similarities`): the reference contexts matched against
  the chunks' texts (``ContextPrecision`` / ``ContextRecall``, ``method=similarity|containment``);
* ``judged`` (:class:`JudgeLabels`): a judge's relevance of the chunks and its claims' support
  (``method=judge``).

A run that did not come from a sample set has none of this: asking for those measures is an error
that says where the data comes from. A chunk the response cites that the sample did not retrieve is an
error in the data (the response cannot have read it), naming the query and the chunk.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import ConfigError, InputError
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import Cut, EvalData
    from .._measures.base import Measure


def _moved(cut: Cut, n_rows: int, *rows: np.ndarray) -> tuple[np.ndarray, ...]:
    """Ranked rows (-1: none) after ``cut`` of ``n_rows`` rows: their new index, -1 where cut away."""
    new = np.full(n_rows, -1, dtype=np.int64)
    new[cut.rows] = np.arange(cut.rows.size, dtype=np.int64)
    return tuple(np.where(r >= 0, new[np.maximum(r, 0)], -1) for r in rows)


@dataclass(frozen=True, eq=False)
class SampleLabels:
    """What a sample set says beyond its references. Per ranked row: ``cited`` (the response cites the
    chunk); per query: ``has_citations`` / ``has_facets`` (the sample gives the field), ``f_off``
    (offsets of its facets, numbered across queries); per (facet, chunk) pair: ``fc_facet`` and
    ``fc_row`` (the chunk's ranked row, -1 when not retrieved). Nuggets likewise: ``has_nuggets``,
    ``n_off``, ``n_vital`` per nugget, and per (nugget, chunk) pair ``nc_nugget``, ``nc_row`` and
    ``nc_level`` (1.0: the chunk supports the nugget, 0.5: partially)."""

    cited: np.ndarray
    has_citations: np.ndarray
    has_facets: np.ndarray
    f_off: np.ndarray
    fc_facet: np.ndarray
    fc_row: np.ndarray
    has_nuggets: np.ndarray
    n_off: np.ndarray
    n_vital: np.ndarray
    nc_nugget: np.ndarray
    nc_row: np.ndarray
    nc_level: np.ndarray

    def cut(self, cut: Cut) -> SampleLabels:
        fc_row, nc_row = _moved(cut, self.cited.size, self.fc_row, self.nc_row)
        return replace(self, cited=self.cited[cut.rows], fc_row=fc_row, nc_row=nc_row)


class SamplesProvider(SideData):
    name = "samples"

    def build(self, data: EvalData, inputs: Inputs) -> SampleLabels:
        st, docs, queries = _by_query(
            data, inputs, "CoverageRecall, NuggetRecall and AttributionRate read facets, nuggets and citations"
        )
        n_q = data.n_queries
        cited = np.zeros(len(docs), dtype=bool)
        has_cit = np.zeros(n_q, dtype=bool)
        has_fac = np.zeros(n_q, dtype=bool)
        f_count = np.zeros(n_q, dtype=np.int64)
        fc_facet: list[int] = []
        fc_row: list[int] = []
        facet_no = 0
        has_nug = np.zeros(n_q, dtype=bool)
        n_count = np.zeros(n_q, dtype=np.int64)
        n_vital: list[bool] = []
        nc_nugget: list[int] = []
        nc_row: list[int] = []
        nc_level: list[float] = []
        for i, q, s, lo, hi in queries:
            row_of = {docs[r]: r for r in range(lo, hi)}
            if s.citations is not None:
                has_cit[i] = True
                for d in s.citations:
                    r = row_of.get(d)
                    if r is None:
                        raise InputError(
                            f"{st.source}: query {q!r}: the response cites chunk {d!r}, which the sample did not "
                            "retrieve (an error in the data: the response cannot have read it)"
                        )
                    cited[r] = True
            if s.facets is not None:
                has_fac[i] = True
                f_count[i] = len(s.facets)
                for _, ids in s.facets:
                    for d in ids:
                        fc_facet.append(facet_no)
                        fc_row.append(row_of.get(d, -1))
                    facet_no += 1
            if s.nuggets is not None:
                has_nug[i] = True
                n_count[i] = len(s.nuggets)
                for _, vital, full, partial, *_open in s.nuggets:
                    no = len(n_vital)
                    n_vital.append(vital)
                    for ids, level in ((full, 1.0), (partial, 0.5)):
                        for d in ids:
                            nc_nugget.append(no)
                            nc_row.append(row_of.get(d, -1))
                            nc_level.append(level)
        f_off = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(f_count, out=f_off[1:])
        n_off = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(n_count, out=n_off[1:])
        return SampleLabels(
            cited,
            has_cit,
            has_fac,
            f_off,
            np.asarray(fc_facet, dtype=np.int64),
            np.asarray(fc_row, dtype=np.int64),
            has_nug,
            n_off,
            np.asarray(n_vital, dtype=bool),
            np.asarray(nc_nugget, dtype=np.int64),
            np.asarray(nc_row, dtype=np.int64),
            np.asarray(nc_level, dtype=np.float64),
        )


register(SamplesProvider())


@dataclass(frozen=True, eq=False)
class Similarities:
    """String similarity between each sample's reference contexts and its retrieved chunks: per query
    ``has`` (the sample gives both texts) and ``ref_off`` (offsets of its reference contexts, numbered
    across queries); per (reference, ranked row) pair ``p_ref``, ``p_row`` and ``p_sim`` (1 - normalised
    Levenshtein distance)."""

    has: np.ndarray
    ref_off: np.ndarray
    p_ref: np.ndarray
    p_row: np.ndarray
    p_sim: np.ndarray
    n_rows: int
    #: similarities below it were computed as 0 (rapidfuzz's ``score_cutoff``): exact for thresholds >= it
    cutoff: float = 0.0

    def cut(self, cut: Cut) -> Similarities:
        new = np.full(self.n_rows, -1, dtype=np.int64)
        new[cut.rows] = np.arange(cut.rows.size, dtype=np.int64)
        moved = new[self.p_row]
        keep = moved >= 0
        return replace(
            self, p_ref=self.p_ref[keep], p_row=moved[keep], p_sim=self.p_sim[keep], n_rows=int(cut.rows.size)
        )


class SimilarityProvider(SideData):
    """``similarity``: the normalised Levenshtein similarity (rapidfuzz, as RAGAS's non-LLM context
    measures compute it) of every (non-empty reference context, retrieved chunk) pair of a sample that
    gives both texts (an empty chunk text is 0 similar to every reference); a sample without reference
    texts, or whose chunks have no texts, is NA for the measures that read it, one that retrieved
    nothing scores 0."""

    name = "similarity"

    def build(self, data: EvalData, inputs: Inputs) -> Similarities:
        from rapidfuzz.distance import Levenshtein
        from rapidfuzz.process import cdist

        cutoff = similarity_cutoff(inputs.measures)

        def pairs(refs: tuple[str, ...], texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            # 1 - d / max(len): rapidfuzz's normalised similarity, computed as it does (bit for bit), from
            # distances it stops computing beyond `most`, the largest distance of a pair similar enough
            # (its normalised cutoff itself is not exact at the boundary: a pair 0.30000000000000004
            # similar is cut at 0.299999999)
            longest = np.maximum.outer([len(t) for t in refs], [len(t) for t in texts])
            most = math.floor((1.0 - cutoff) * int(longest.max(initial=0))) + 1 if cutoff > 0 else None
            d = cdist(refs, texts, scorer=Levenshtein.distance, dtype=np.int64, score_cutoff=most)
            sim = 1.0 - d / np.maximum(longest, 1)
            if most is not None:
                sim[d > most] = 0.0  # below the cutoff: not computed
            ref, row = np.indices(sim.shape).reshape(2, -1)
            return ref, row, sim.ravel()

        found = _text_pairs(data, inputs, "ContextPrecision / ContextRecall(method=similarity) compare texts", pairs)
        return replace(found, cutoff=cutoff)


def similarity_cutoff(measures: Iterable[Measure]) -> float:
    """The smallest threshold among the measures that read text similarities (0.0 when none gives
    one): they only ask whether a similarity is >= their threshold, so a pair below it may count as 0
    similar without changing a verdict, and rapidfuzz stops computing its distance early.

    >>> from ctxeval._measures.grammar import parse_measures as parse
    >>> similarity_cutoff(parse(["ContextPrecision(method=similarity,threshold=0.7)", "ContextRecall(method=similarity)", "AP"]))
    0.5
    >>> similarity_cutoff(parse(["AP"]))
    0.0
    """
    found: list[float] = []
    for m in measures:
        if "similarity" not in m.requires:
            continue
        if not any(p.name == "threshold" for p in m.spec.params):
            return 0.0  # it reads the similarities some other way: keep them all
        found.append(float(m["threshold"]))
    return min(found, default=0.0)


class ContainmentProvider(SideData):
    """``containment``: the (reference context, retrieved chunk) pairs where the chunk's text holds the
    reference's (blanks collapsed), similarity 1; as ``similarity`` for the rest. For references that
    are excerpts of the chunks, which neither exact text nor Levenshtein similarity match (a 200-character
    excerpt of a 1,000-character chunk is 0.2 similar to it)."""

    name = "containment"

    def build(self, data: EvalData, inputs: Inputs) -> Similarities:
        def pairs(refs: tuple[str, ...], texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            held = [" ".join(t.split()) for t in texts]
            hits = [
                (j, r)
                for j, ref in enumerate(" ".join(x.split()) for x in refs)
                for r, t in enumerate(held)
                if ref in t
            ]
            ref, row = (np.array(x, dtype=np.int64) for x in zip(*hits)) if hits else (np.zeros(0, np.int64),) * 2
            return ref, row, np.ones(ref.size)

        return _text_pairs(data, inputs, "ContextPrecision / ContextRecall(method=containment) compare texts", pairs)


def _text_pairs(data: EvalData, inputs: Inputs, what: str, pairs: Any) -> Similarities:
    """Per sample with reference texts and chunk texts, ``pairs(references, chunk texts)`` -> (reference
    number, chunk position, similarity) of the pairs that may match, numbered across queries."""
    _, docs, queries = _by_query(data, inputs, what)
    n_q = data.n_queries
    has = np.zeros(n_q, dtype=bool)
    n_ref = np.zeros(n_q, dtype=np.int64)
    refs: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    sims: list[np.ndarray] = []
    first = 0
    for i, _q, s, lo, hi in queries:
        ref_texts = s.relevant_contexts()  # (an empty reference context is no reference)
        if not ref_texts or (hi > lo and s.retrieved_texts is None):
            continue  # NA: no reference text, or chunks without texts to compare
        has[i] = True  # (a sample that retrieved nothing scores 0)
        n_ref[i] = len(ref_texts)
        if hi > lo:
            text_of = dict(zip(s.retrieved_ids, s.retrieved_texts or ()))
            ref, row, sim = pairs(ref_texts, [text_of.get(docs[r], "") for r in range(lo, hi)])
            refs.append(ref + first)
            rows.append(row + lo)
            sims.append(sim)
        first += len(ref_texts)
    ref_off = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(n_ref, out=ref_off[1:])

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)

    return Similarities(has, ref_off, cat(refs, np.int64), cat(rows, np.int64), cat(sims, np.float64), len(docs))


@dataclass(frozen=True, eq=False)
class JudgeLabels:
    """A judge's labels of a sample set. Per ranked row: ``relevant`` / ``undecided`` (the chunk's
    relevance to the reference answer); per query ``has_judged`` and ``has_claims``, ``c_off``
    (offsets of its claims, numbered across queries); per (claim, chunk) pair ``cc_claim``,
    ``cc_row`` (-1: not retrieved) and ``cc_supports`` (True: supports, False: undecided)."""

    relevant: np.ndarray
    undecided: np.ndarray
    has_judged: np.ndarray
    has_claims: np.ndarray
    c_off: np.ndarray
    cc_claim: np.ndarray
    cc_row: np.ndarray
    cc_supports: np.ndarray

    def cut(self, cut: Cut) -> JudgeLabels:
        (cc_row,) = _moved(cut, self.relevant.size, self.cc_row)
        return replace(self, relevant=self.relevant[cut.rows], undecided=self.undecided[cut.rows], cc_row=cc_row)


class JudgedProvider(SideData):
    """``judged``: a judge's labels of a sample set (``ctxeval judge claims`` / ``judge relevance``):
    which chunks are relevant to the reference answer, and which chunks support each of its claims."""

    name = "judged"

    def build(self, data: EvalData, inputs: Inputs) -> JudgeLabels:
        _, docs, queries = _by_query(
            data, inputs, "ContextPrecision / ContextRecall(method=judge) read a judge's labels"
        )
        n_q = data.n_queries
        relevant = np.zeros(len(docs), dtype=bool)
        undecided = np.zeros(len(docs), dtype=bool)
        has_judged = np.zeros(n_q, dtype=bool)
        has_claims = np.zeros(n_q, dtype=bool)
        c_count = np.zeros(n_q, dtype=np.int64)
        cc_claim: list[int] = []
        cc_row: list[int] = []
        cc_supports: list[bool] = []
        claim_no = 0
        for i, _q, s, lo, hi in queries:
            row_of = {docs[r]: r for r in range(lo, hi)}
            if s.judged is not None:
                has_judged[i] = True
                for d in s.judged[0]:
                    if d in row_of:
                        relevant[row_of[d]] = True
                for d in (d for ids in s.judged[1:] for d in ids):  # undecided, tied, not sent
                    if d in row_of:
                        undecided[row_of[d]] = True
            if s.claims is not None:
                has_claims[i] = True
                c_count[i] = len(s.claims)
                for _, full, *opens in s.claims:  # undecided, tied, not sent: all left open
                    for ids, supports in ((full, True), *((o, False) for o in opens)):
                        for d in ids:
                            cc_claim.append(claim_no)
                            cc_row.append(row_of.get(d, -1))
                            cc_supports.append(supports)
                    claim_no += 1
        c_off = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(c_count, out=c_off[1:])
        return JudgeLabels(
            relevant,
            undecided,
            has_judged,
            has_claims,
            c_off,
            np.asarray(cc_claim, dtype=np.int64),
            np.asarray(cc_row, dtype=np.int64),
            np.asarray(cc_supports, dtype=bool),
        )


register(JudgedProvider())


def _by_query(
    data: EvalData, inputs: Inputs, what: str
) -> tuple[Any, list[str], Iterator[tuple[int, str, Any, int, int]]]:
    """The run's sample set, its ranked rows' doc ids, and per evaluated query that has a sample
    (query number, id, sample, first and end row)."""
    st = _sample_set(inputs, what)
    if data.rows is None:
        raise ConfigError(f"{what}: they need the run's ranked rows (keep_rows)")
    by_q = {s.query_id: s for s in st.samples}

    def each() -> Iterator[tuple[int, str, Any, int, int]]:
        for i, q in enumerate(data.qids):
            s = by_q.get(q)
            if s is not None:
                yield i, q, s, int(data.r_off[i]), int(data.r_off[i + 1])

    return st, data.rows.doc.to_list(), each()


def _sample_set(inputs: Inputs, what: str) -> Any:
    st = inputs.run.samples  # the run's one link to the sample set it came from
    if st is None:
        raise ConfigError(
            f"{what} of a sample set: evaluate(samples=...) / compare(samples=...), or --samples FILE on the "
            "command line"
        )
    return st


register(SimilarityProvider())
register(ContainmentProvider())
