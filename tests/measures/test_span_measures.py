"""Span measures against a plain-Python oracle over sets of characters (tests/span_oracle.py), the
documented differences of the Chroma-compatible mode on hand-made cases, and the rank measures over
span labels against the chunk-level measures they must reproduce when the spans are the chunks."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import span_oracle as oracle
from ctxeval import Chunks, ConfigError, SpanLabels, Tokenizer, evaluate

DOCS = {
    "A": "alpha beta, gamma delta. Epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho!",
    "B": "Sigma tau upsilon phi chi psi omega; one two three four five six seven eight nine ten.",
}


@st.composite
def interval(draw: st.DrawFn, min_len: int = 1) -> tuple[str, int, int]:
    doc = draw(st.sampled_from(sorted(DOCS)))
    n = len(DOCS[doc])
    s = draw(st.integers(0, n - min_len))
    e = draw(st.integers(s + min_len, min(n, s + 40)))
    return doc, s, e


@st.composite
def cases(
    draw: st.DrawFn,
) -> tuple[list[tuple[str, str, int, int, int]], dict[str, tuple[str, int, int]], dict[str, dict[str, float]]]:
    table = {f"c{i}": draw(interval()) for i in range(draw(st.integers(1, 8)))}
    spans: dict[tuple[str, str, int, int], int] = {}  # a span given once (twice with two grades is an error)
    for q in ("q1", "q2"):
        for _ in range(draw(st.integers(1, 3))):
            d, s, e = draw(interval())
            spans[(q, d, s, e)] = draw(st.integers(0, 3))
    run = {}
    for q in ("q1", "q2"):
        ids = draw(st.lists(st.sampled_from(sorted(table)), unique=True, max_size=len(table)))
        if ids:
            run[q] = {c: float(len(ids) - i) for i, c in enumerate(ids)}
    assume(run)
    return [(*k, g) for k, g in spans.items()], table, run


def _labels(spans: list[tuple[str, str, int, int, int]]) -> SpanLabels:
    return SpanLabels.from_records(
        [{"query_id": q, "doc_id": d, "start": s, "end": e, "grade": g} for q, d, s, e, g in spans]
    )


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


@settings(max_examples=150, deadline=None)
@given(case=cases(), k=st.integers(1, 5))
def test_exact_and_chroma_modes_equal_the_oracle(case: tuple, k: int) -> None:
    spans, table, run = case
    names = ["SpanRecall", "SpanPrecision", "SpanIoU"]
    ms = [f"{n}@{k}" for n in names] + [f"{n}(mode=chroma)@{k}" for n in names]
    ms += ["PrecisionOmega", "PrecisionOmega(mode=chroma)", f"SpanCoverage@{k}"]
    res = evaluate(_labels(spans), run, ms, chunks=Chunks.from_dict(table, documents=DOCS)).runs[0]
    for q in ("q1", "q2"):
        refs = [(d, s, e) for qq, d, s, e, g in spans if qq == q and g >= 1]
        ranked = sorted(run.get(q, {}), key=lambda c: -run[q][c])[:k]
        ctx = [table[c] for c in ranked]
        ex = oracle.exact(refs, ctx)
        for n, key in zip(names, ("recall", "precision", "iou")):
            assert _close(res.per_query(f"{n}@{k}")[q], ex[key]), (n, q)
        if refs:
            ch = oracle.chroma(refs, ctx)
            for n, key in zip(names, ("recall", "precision", "iou")):
                assert _close(res.per_query(f"{n}(mode=chroma)@{k}")[q], ch[key]), (n, q, "chroma")
        assert _close(res.per_query("PrecisionOmega")[q], oracle.omega(refs, list(table.values()), touching=False))
        assert _close(
            res.per_query("PrecisionOmega(mode=chroma)")[q], oracle.omega(refs, list(table.values()), touching=True)
        )
        # graded coverage: each evidence character weighs its highest grade
        grade: dict[tuple[str, int], int] = {}
        for qq, d, s, e, g in spans:
            if qq == q:
                for i in range(s, e):
                    grade[(d, i)] = max(grade.get((d, i), -99), g)
        ev = {c: g for c, g in grade.items() if g > 0}
        covered = oracle.chars(ctx)
        want = sum(g for c, g in ev.items() if c in covered) / sum(ev.values()) if ev else math.nan
        assert _close(res.per_query(f"SpanCoverage@{k}")[q], want)


@settings(max_examples=60, deadline=None)
@given(case=cases(), k=st.integers(1, 4))
def test_token_unit_sums_the_tokens_of_each_atom(case: tuple, k: int) -> None:
    """unit=tokens with a tokenizer counting characters is the character measure; with words-v1,
    each character weighs the tokens of its atom shared out (the oracle cuts the atoms itself, at every
    span and every retrieved chunk)."""
    spans, table, run = case
    labels, chunks = _labels(spans), Chunks.from_dict(table, documents=DOCS)
    by_chars = evaluate(labels, run, [f"SpanIoU@{k}", "PrecisionOmega"], chunks=chunks).runs[0]
    as_tokens = evaluate(
        labels,
        run,
        [f"SpanIoU(unit=tokens)@{k}", "PrecisionOmega(unit=tokens)"],
        chunks=chunks,
        rag={"tokenizer": Tokenizer.coerce(len, name="chars")},
    ).runs[0]
    for q in by_chars.qids:
        assert _close(by_chars.per_query(f"SpanIoU@{k}")[q], as_tokens.per_query(f"SpanIoU(unit=tokens)@{k}")[q])
        assert _close(by_chars.per_query("PrecisionOmega")[q], as_tokens.per_query("PrecisionOmega(unit=tokens)")[q])
    words = evaluate(labels, run, [f"SpanRecall(unit=tokens)@{k}"], chunks=chunks).runs[0]
    tok = Tokenizer.coerce("words-v1")
    for q in words.qids:
        refs = [(d, s, e) for qq, d, s, e, g in spans if qq == q and g >= 1]
        ranked = sorted(run.get(q, {}), key=lambda c: -run[q][c])[:k]
        ctx = [table[c] for c in ranked]
        retrieved = [table[c] for c in run.get(q, {})]  # every ranked chunk cuts the atoms, not only the top k
        cuts: dict[str, set[int]] = {}
        for qq, d, s, e, _ in spans:
            if qq == q:
                cuts.setdefault(d, set()).update((s, e))
        for d, s, e in retrieved:
            cuts.setdefault(d, set()).update((s, e))
        weight: dict[tuple[str, int], float] = {}
        for d, pts in cuts.items():
            pts_sorted = sorted(pts)
            for a, b in itertools.pairwise(pts_sorted):
                n = int(tok.count([DOCS[d][a:b]])[0])
                for i in range(a, b):
                    weight[(d, i)] = n / (b - a)
        want = oracle.exact(refs, ctx, w=weight.__getitem__)["recall"]
        got = words.per_query(f"SpanRecall(unit=tokens)@{k}")[q]
        assert (math.isnan(got) and math.isnan(want)) or abs(got - want) <= 1e-9


# --- the documented differences of the Chroma-compatible mode, one hand-made case each ----------------


def _one(spans: list, table: dict, ranking: list[str], names: list[str]) -> dict[str, float]:
    run = {"q": {c: float(len(ranking) - i) for i, c in enumerate(ranking)}}
    res = evaluate(_labels(spans), run, names, chunks=Chunks.from_dict(table)).runs[0]
    return {n: res.per_query(n)["q"] for n in names}


def test_quirk_1_overlapping_chunks_are_counted_twice_by_chroma() -> None:
    # evidence [10, 20); two chunks [0, 20) and [10, 30) share [10, 20)
    got = _one(
        [("q", "A", 10, 20, 1)],
        {"x": ("A", 0, 20), "y": ("A", 10, 30)},
        ["x", "y"],
        ["SpanPrecision@2", "SpanPrecision(mode=chroma)@2", "SpanIoU@2", "SpanIoU(mode=chroma)@2"],
    )
    assert got["SpanPrecision@2"] == 10 / 30  # the union [0, 30)
    assert got["SpanPrecision(mode=chroma)@2"] == 10 / 40  # 20 + 20 characters
    assert got["SpanIoU@2"] == 10 / 30
    assert got["SpanIoU(mode=chroma)@2"] == 10 / 40


def test_quirk_1b_a_chunk_retrieved_twice_under_two_ids_counts_twice_for_chroma() -> None:
    got = _one(
        [("q", "A", 0, 10, 1)],
        {"x": ("A", 0, 10), "x2": ("A", 0, 10)},
        ["x", "x2"],
        ["SpanPrecision@2", "SpanPrecision(mode=chroma)@2"],
    )
    assert got == {"SpanPrecision@2": 1.0, "SpanPrecision(mode=chroma)@2": 0.5}


def test_quirk_2_overlapping_references_cap_chromas_recall() -> None:
    got = _one(
        [("q", "A", 0, 10, 1), ("q", "A", 5, 15, 1)],
        {"x": ("A", 0, 20)},
        ["x"],
        ["SpanRecall@1", "SpanRecall(mode=chroma)@1"],
    )
    assert got == {"SpanRecall@1": 1.0, "SpanRecall(mode=chroma)@1": 15 / 20}


def test_quirk_3_a_touching_chunk_enters_chromas_precision_omega() -> None:
    # evidence [10, 20); the chunking's chunks [0, 10) (touches), [10, 20) (holds it), [20, 30) (touches)
    table = {"a": ("A", 0, 10), "b": ("A", 10, 20), "c": ("A", 20, 30)}
    got = _one([("q", "A", 10, 20, 1)], table, ["b"], ["PrecisionOmega", "PrecisionOmega(mode=chroma)"])
    assert got == {"PrecisionOmega": 1.0, "PrecisionOmega(mode=chroma)": 10 / 30}


def test_quirk_4_chromas_placement_moves_repeated_passages_and_cuts_a_period() -> None:
    """A chunk of a passage that occurs twice is placed on the first copy by Chroma's rule; a chunk
    ending in a period loses it (that character then belongs to no chunk). The exact placement keeps
    each at its own position."""
    doc = "Intro text. The same passage. Middle part. The same passage. End."
    second = doc.rindex("The same passage.")
    texts = {"c0": ("A", doc[:second]), "c1": ("A", doc[second : second + 17]), "c2": ("A", doc[second + 17 :])}
    exact = Chunks.locate(texts, {"A": doc})
    chroma = Chunks.locate(texts, {"A": doc}, mode="chroma")
    assert exact.start.tolist() == [0, second, second + 17]
    assert chroma.start.tolist() == [0, doc.index("The same passage."), second + 17]
    assert chroma.end.tolist()[1] == doc.index("The same passage.") + 16  # the trailing period cut
    # evidence: the second copy; retrieving c1 finds it only where c1 lies at its own position
    labels = _labels([("q", "A", second, second + 17, 1)])
    run = {"q": {"c1": 1.0}}
    on_exact = evaluate(labels, run, ["SpanRecall@1"], chunks=exact).runs[0].mean("SpanRecall@1")
    on_chroma = evaluate(labels, run, ["SpanRecall@1"], chunks=chroma).runs[0].mean("SpanRecall@1")
    assert (on_exact, on_chroma) == (1.0, 0.0)
    # Chroma's own data: the reference also sits at the first copy, so the first-copy placement credits the hit
    labels_first = _labels([("q", "A", doc.index("The same passage."), doc.index("The same passage.") + 17, 1)])
    assert (
        evaluate(labels_first, run, ["SpanRecall(mode=chroma)@1"], chunks=chroma)
        .runs[0]
        .mean("SpanRecall(mode=chroma)@1")
        == 16 / 17
    )


# --- rank measures over span labels --------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(case=cases(), k=st.integers(1, 5))
def test_span_ndcg_counts_new_evidence_only(case: tuple, k: int) -> None:
    spans, table, run = case
    res = evaluate(_labels(spans), run, [f"DCG@{k}", f"nDCG@{k}"], chunks=Chunks.from_dict(table)).runs[0]
    for q in res.qids:
        refs = [(d, s, e, g) for qq, d, s, e, g in spans if qq == q]
        ranked = [table[c] for c in sorted(run.get(q, {}), key=lambda c: -run[q][c])[:k]]
        dcg = oracle.dcg(oracle.span_gains(refs, ranked, lambda g: max(g, 0)))
        ideal = oracle.dcg(sorted((max(g, 0) for g, _ in oracle.units(refs)), reverse=True)[:k])
        assert res.per_query(f"DCG@{k}")[q] == pytest.approx(dcg, abs=1e-12)
        assert res.per_query(f"nDCG@{k}")[q] == pytest.approx(dcg / ideal if ideal else 0.0, abs=1e-12)


@st.composite
def partitions(draw: st.DrawFn) -> tuple[dict, dict, dict]:
    """A chunking that tiles document A, chunk-id grades on it, and a run over its chunks."""
    cuts = sorted(draw(st.sets(st.integers(1, len(DOCS["A"]) - 1), min_size=2, max_size=9)))
    bounds = [0, *cuts, len(DOCS["A"])]
    table = {f"c{i}": ("A", a, b) for i, (a, b) in enumerate(itertools.pairwise(bounds))}
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in ("q1", "q2", "q3"):
        judged = draw(st.lists(st.sampled_from(sorted(table)), unique=True, min_size=1, max_size=len(table)))
        qrels[q] = {c: draw(st.integers(1, 5)) for c in judged}
        ranked = draw(st.lists(st.sampled_from(sorted(table)), unique=True, max_size=len(table)))
        if ranked:
            run[q] = {c: float(len(ranked) - i) for i, c in enumerate(ranked)}
    assume(run)
    return table, qrels, run


@settings(max_examples=100, deadline=None)
@given(case=partitions(), k=st.integers(1, 6))
def test_chunk_labels_as_spans_give_the_chunk_level_values(case: tuple, k: int) -> None:
    """Chunk-id grades converted to spans (SpanLabels.from_qrels) and scored on the same chunks give
    what the chunk ids give: nDCG, DCG, RA-nWG and UDCG by their span readings, the rest by chunk grades."""
    from ctxeval import Qrels

    table, qrels, run = case
    chunks = Chunks.from_dict(table)
    names = [f"nDCG@{k}", f"DCG@{k}", f"RA-nWG@{k}", f"UDCG@{k}", f"P@{k}", f"R@{k}", "RR", "AP", f"N-Recall4+@{k}"]
    on_ids = evaluate(qrels, run, names).runs[0]
    on_spans = evaluate(SpanLabels.from_qrels(Qrels.from_dict(qrels), chunks), run, names, chunks=chunks).runs[0]
    for n in names:
        a, b = on_ids.per_query(n), on_spans.per_query(n)
        assert a.keys() == b.keys()
        for q in a:
            assert _close(a[q], b[q]) or abs(a[q] - b[q]) <= 1e-12, (n, q, a[q], b[q])


def test_a_chunk_repeating_evidence_gains_nothing() -> None:
    # unit [0, 20) grade 2; chunk x holds [0, 15), y [10, 20): y's new evidence is [15, 20) only
    got = _one(
        [("q", "A", 0, 20, 2)],
        {"x": ("A", 0, 15), "y": ("A", 10, 20), "z": ("A", 0, 15)},
        ["x", "y", "z"],
        ["DCG@3", "nDCG@1"],
    )
    assert got["DCG@3"] == pytest.approx(2 * 15 / 20 + 2 * 5 / 20 / math.log2(3))
    assert got["nDCG@1"] == pytest.approx(0.75)


def test_a_chunk_holding_two_units_exceeds_the_units_ideal() -> None:
    """The documented K-slot pathology: one chunk holding two units gains both at rank 1."""
    got = _one([("q", "A", 0, 10, 1), ("q", "A", 20, 30, 1)], {"big": ("A", 0, 30)}, ["big"], ["nDCG@1"])
    assert got["nDCG@1"] == 2.0


def test_span_labels_need_a_chunk_table_and_every_retrieved_chunk_in_it() -> None:
    labels = _labels([("q", "A", 0, 10, 1)])
    with pytest.raises(ConfigError, match=r"need a chunk table|give a chunk table"):
        evaluate(labels, {"q": {"x": 1.0}}, ["SpanRecall@1"])
    with pytest.raises(ConfigError, match=r"1 retrieved chunk ids are not in the chunk table .*'nope'"):
        evaluate(labels, {"q": {"nope": 1.0}}, ["SpanRecall@1"], chunks={"x": ("A", 0, 5)})
    with pytest.raises(ConfigError, match="read span labels"):
        evaluate({"q": {"x": 1}}, {"q": {"x": 1.0}}, ["SpanRecall@1"], chunks={"x": ("A", 0, 5)})
    with pytest.raises(ConfigError, match="documents"):
        evaluate(labels, {"q": {"x": 1.0}}, ["SpanRecall(unit=tokens)@1"], chunks={"x": ("A", 0, 5)})


def test_a_query_whose_evidence_no_chunk_touches_stays_in_the_means() -> None:
    labels = _labels([("q1", "A", 0, 10, 1), ("q2", "B", 0, 10, 1)])
    res = evaluate(labels, {"q1": {"x": 1.0}}, ["SpanRecall@1", "R@1"], chunks={"x": ("A", 0, 10)}).runs[0]
    assert res.per_query("SpanRecall@1") == {"q1": 1.0, "q2": 0.0}
    assert res.mean("SpanRecall@1") == 0.5
    assert np.isclose(res.mean("R@1"), 0.5)
