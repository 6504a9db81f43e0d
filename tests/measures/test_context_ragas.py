"""RAGAS itself as the oracle of ContextPrecision and ContextRecall (the test extra installs ragas
0.2.15; this test fails, not skips, without it)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxeval

# --- RAGAS as the oracle --------------------------------------------------------------------------------


@st.composite
def _samples(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    pool = [f"c{i}" for i in range(12)]
    retrieved = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8, unique=True))
    reference = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6, unique=True))
    return retrieved, reference


def _text(chunk: str) -> str:
    """A chunk's text: 60 letters drawn from the chunk id's own seed, so equal ids give equal texts and
    different ids texts far below RAGAS's 0.5 similarity threshold."""
    import random
    import string

    rng = random.Random(chunk)
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(60))


@given(st.lists(_samples(), min_size=1, max_size=5))
def test_ragas_non_llm_context_precision_and_recall_agree(samples: list[tuple[list[str], list[str]]]) -> None:
    """ctxeval's ID-based ContextPrecision / ContextRecall equal RAGAS's non-LLM ones (string similarity)
    on texts that match exactly when the ids match. RAGAS divides precision by (relevant retrieved +
    1e-10): its value is below ours by at most 1e-10."""
    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics import NonLLMContextPrecisionWithReference, NonLLMContextRecall

    texts = {f"c{i}": _text(f"c{i}") for i in range(12)}
    precision, recall = NonLLMContextPrecisionWithReference(), NonLLMContextRecall()
    records = []
    want_p, want_r = {}, {}
    for i, (retrieved, reference) in enumerate(samples):
        q = f"q{i}"
        s = SingleTurnSample(
            retrieved_contexts=[texts[c] for c in retrieved], reference_contexts=[texts[c] for c in reference]
        )
        want_p[q], want_r[q] = precision.single_turn_score(s), recall.single_turn_score(s)
        records.append({"query_id": q, "retrieved_ids": retrieved, "reference_ids": reference})
    got = ctxeval.evaluate(samples=records, measures=["ContextPrecision", "ContextRecall"]).runs[0]
    assert got.per_query("ContextPrecision") == pytest.approx(want_p, abs=1e-9)
    assert got.per_query("ContextRecall") == pytest.approx(want_r, abs=1e-12)


_WORDS = st.text(alphabet="abcd ", min_size=1, max_size=12)


@given(
    st.lists(
        st.tuples(st.lists(_WORDS, min_size=1, max_size=6, unique=True), st.lists(_WORDS, min_size=1, max_size=4)),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from([0.3, 0.5, 0.7]),
)
def test_ragas_similarity_context_precision_and_recall_agree(
    samples: list[tuple[list[str], list[str]]], threshold: float
) -> None:
    """method=similarity on text-only samples in RAGAS's own schema (user_input / retrieved_contexts /
    reference_contexts) equals RAGAS's NonLLMContextPrecisionWithReference and NonLLMContextRecall on
    short texts over a small alphabet (similarities spread around the threshold). RAGAS's recall counts
    sim > threshold and ctxeval >= (documented): pairs exactly at the threshold are assumed away."""
    from hypothesis import assume
    from ragas.dataset_schema import SingleTurnSample
    from ragas.metrics import NonLLMContextPrecisionWithReference, NonLLMContextRecall
    from rapidfuzz.distance import Levenshtein

    for retrieved, reference in samples:
        assume(all(Levenshtein.normalized_similarity(a, b) != threshold for a in retrieved for b in reference))
    precision = NonLLMContextPrecisionWithReference(threshold=threshold)
    recall = NonLLMContextRecall(threshold=threshold)
    records, want_p, want_r = [], {}, {}
    for i, (retrieved, reference) in enumerate(samples):
        s = SingleTurnSample(retrieved_contexts=retrieved, reference_contexts=reference)
        want_p[f"line-{i + 1}"] = precision.single_turn_score(s)
        want_r[f"line-{i + 1}"] = recall.single_turn_score(s)
        records.append(
            {"user_input": f"question {i}", "retrieved_contexts": retrieved, "reference_contexts": reference}
        )
    p, r = (
        f"ContextPrecision(method=similarity,threshold={threshold})",
        f"ContextRecall(method=similarity,threshold={threshold})",
    )
    got = ctxeval.evaluate(samples=records, measures=[p, r]).runs[0]
    assert got.per_query(p) == pytest.approx(want_p, abs=1e-9)
    assert got.per_query(r) == pytest.approx(want_r, abs=1e-12)
