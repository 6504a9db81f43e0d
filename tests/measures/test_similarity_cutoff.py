"""method=similarity computes a pair's distance only as far as the smallest requested threshold needs
(rapidfuzz's distance with a cutoff): the verdicts must be those of the full similarities, which
rapidfuzz's own ``normalized_similarity`` (no cutoff) gives."""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

import ctxeval
from ctxeval._context.samples import Similarities
from ctxeval._errors import ConfigError
from ctxeval._measures.context import _texts
from ctxeval._measures.grammar import parse_measure

# rapidfuzz's normalised similarity of these is 1 - 28/40 = 0.30000000000000004 (>= 0.3), yet its own
# score_cutoff of 0.3 (or 0.299999999) returns 0 for the pair: a cutoff must not be passed that way
_AT_03 = ("cacb  bcabb baaaaaca cabbbcacccab b   ac", "ccccaa b c ac")


def _oracle(retrieved: list[str], reference: list[str], t: float) -> tuple[float, float]:
    """RAGAS's non-LLM precision (rank-weighted over chunks >= t similar to some reference) and recall
    (references with a chunk >= t similar), from rapidfuzz's full similarities, written out."""
    sim = [[Levenshtein.normalized_similarity(r, c) for r in reference] for c in retrieved]
    v = [max(row) >= t for row in sim]
    hits, total = 0, 0.0
    for i, ok in enumerate(v, start=1):
        if ok:
            hits += 1
            total += hits / i
    precision = total / hits if hits else 0.0
    recall = sum(any(sim[i][j] >= t for i in range(len(retrieved))) for j in range(len(reference))) / len(reference)
    return precision, recall


def _evaluate(samples: list[tuple[list[str], list[str]]], measures: list[str]) -> dict[str, dict[str, float]]:
    records = [
        {"user_input": f"q{i}", "retrieved_contexts": ret, "reference_contexts": ref}
        for i, (ret, ref) in enumerate(samples)
    ]
    run = ctxeval.evaluate(samples=records, measures=measures).runs[0]
    return {m: run.per_query(m) for m in measures}


def test_a_pair_just_at_the_threshold_is_found() -> None:
    ret, ref = _AT_03
    assert Levenshtein.normalized_similarity(ret, ref) >= 0.3
    assert Levenshtein.normalized_similarity(ret, ref, score_cutoff=0.3) == 0.0  # rapidfuzz's own cutoff
    got = _evaluate([([ret], [ref])], ["ContextRecall(method=similarity,threshold=0.3)"])
    assert got["ContextRecall(method=similarity,threshold=0.3)"] == {"line-1": 1.0}


@pytest.mark.parametrize("threshold", [0.3, 0.55, 0.6])
def test_many_pairs_near_the_threshold(threshold: float) -> None:
    """300 generated samples whose similarities crowd around the threshold (rapidfuzz's own cutoff of
    0.3 drops hundreds of such pairs that are >= 0.3 similar)."""
    rng = np.random.default_rng(17)

    def text() -> str:
        return "".join(rng.choice(list("ab c"), int(rng.integers(1, 60))))

    samples = [([text() for _ in range(5)], [text() for _ in range(3)]) for _ in range(300)]
    samples = [(list(dict.fromkeys(ret)), ref) for ret, ref in samples]
    p, r = (
        f"ContextPrecision(method=similarity,threshold={threshold})",
        f"ContextRecall(method=similarity,threshold={threshold})",
    )
    got = _evaluate(samples, [p, r])
    for i, (ret, ref) in enumerate(samples):
        want_p, want_r = _oracle(ret, ref, threshold)
        assert got[p][f"line-{i + 1}"] == pytest.approx(want_p, abs=1e-12)
        assert got[r][f"line-{i + 1}"] == pytest.approx(want_r, abs=1e-12)


_TEXT = st.text(alphabet="ab c", min_size=0, max_size=40)


@given(
    st.lists(
        st.tuples(st.lists(_TEXT, min_size=1, max_size=5), st.lists(_TEXT.filter(bool), min_size=1, max_size=3)),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.sampled_from([0.2, 0.25, 0.3, 0.5, 0.6, 0.7, 0.75, 0.9]), min_size=1, max_size=3, unique=True),
)
def test_verdicts_equal_those_of_the_full_similarities(
    samples: list[tuple[list[str], list[str]]], thresholds: list[float]
) -> None:
    """Several thresholds in one evaluation (the cutoff is the smallest), on short texts over a small
    alphabet, where similarities land exactly on 0.25, 0.3, 0.5, 0.6, 0.75 often."""
    samples = [(list(dict.fromkeys(ret)), ref) for ret, ref in samples]  # a chunk text given once
    names = {
        t: (f"ContextPrecision(method=similarity,threshold={t})", f"ContextRecall(method=similarity,threshold={t})")
        for t in thresholds
    }
    got = _evaluate(samples, [m for pair in names.values() for m in pair])
    for t, (p, r) in names.items():
        for i, (ret, ref) in enumerate(samples):
            want_p, want_r = _oracle(ret, ref, t)
            assert got[p][f"line-{i + 1}"] == pytest.approx(want_p, abs=1e-12)
            assert got[r][f"line-{i + 1}"] == pytest.approx(want_r, abs=1e-12)


def test_a_threshold_below_the_computed_cutoff_is_refused() -> None:
    """Similarities built for thresholds >= 0.7 cannot answer a 0.5 question (they hold 0 below 0.7)."""
    sim = Similarities(
        np.ones(1, bool), np.array([0, 1]), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), 0, 0.7
    )
    d = types.SimpleNamespace(extra=lambda name: sim)
    assert _texts(d, parse_measure("ContextRecall(method=similarity,threshold=0.7)"))[1] == 0.7
    with pytest.raises(ConfigError, match=r"0\.7 or more"):
        _texts(d, parse_measure("ContextRecall(method=similarity)"))
