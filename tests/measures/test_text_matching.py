"""References given as texts that are excerpts of the retrieved chunks (200 characters of a
1,000-character chunk): exact text and Levenshtein similarity read them as not retrieved; the set's
notes say so and point to method=containment, which finds them. Planted truth: per sample, which
references were excerpted from a retrieved chunk (and at what rank) is known."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxeval
from ctxeval import Samples


def _text(rng: random.Random, n: int) -> str:
    out = ""
    while len(out) < n:
        out += "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9))) + " "
    return out[:n]


@settings(deadline=None, max_examples=25)
@given(st.integers(0, 10**6), st.integers(1, 6), st.integers(1, 8))
def test_excerpts_are_found_by_containment_only(seed: int, n_samples: int, k: int) -> None:
    rng = random.Random(seed)
    recs, want_recall, want_precision = [], {}, {}
    excerpts = 0
    for q in range(n_samples):
        chunks = [_text(rng, 1000) for _ in range(8)]
        planted = rng.sample(range(8), rng.randint(0, 3))  # ranks (0-based) whose chunk holds a reference
        refs = []
        for r in planted:
            start = rng.randrange(0, 800)
            refs.append(chunks[r][start : start + 200])
        refs.append(_text(rng, 200))  # a reference no chunk holds
        rng.shuffle(refs)
        recs.append(
            {
                "query_id": f"q{q}",
                "user_input": f"question {q}?",
                "retrieved_contexts": chunks,
                "reference_contexts": refs,
            }
        )
        excerpts += len(planted)
        top = sorted(r for r in planted if r < k)
        want_recall[f"q{q}"] = len(top) / len(refs)
        want_precision[f"q{q}"] = sum((i + 1) / (r + 1) for i, r in enumerate(top)) / len(top) if top else 0.0
    s = Samples.from_records(recs)
    if excerpts:
        assert any(
            f"{excerpts} reference contexts equal no retrieved text but are contained in one" in n for n in s.notes
        )
    ms = [
        f"ContextRecall@{k}",
        f"ContextRecall(method=similarity)@{k}",
        f"ContextRecall(method=containment)@{k}",
        f"ContextPrecision(method=containment)@{k}",
    ]
    got = ctxeval.evaluate(samples=s, measures=ms).runs[0]
    assert got.per_query(f"ContextRecall(method=containment)@{k}") == pytest.approx(want_recall)
    assert got.per_query(f"ContextPrecision(method=containment)@{k}") == pytest.approx(want_precision)
    assert got.mean(f"ContextRecall@{k}") == 0.0  # exact text: no reference equals a chunk
    assert got.mean(f"ContextRecall(method=similarity)@{k}") == 0.0  # an excerpt is ~0.2 similar to its chunk


def test_containment_collapses_blanks_and_reads_no_threshold() -> None:
    """The chunk "alpha  beta\\ngamma" holds "beta gamma" once blanks are collapsed; "beta  delta" it
    does not hold. An empty reference is none (the edge reading)."""
    rec = {
        "query_id": "q",
        "retrieved_contexts": ["x", "alpha  beta\ngamma"],
        "reference_contexts": ["beta gamma", "beta  delta", ""],
    }
    ms = [
        "ContextRecall(method=containment)",
        "ContextPrecision(method=containment)",
        "ContextRecall(method=containment,threshold=0.1)",
    ]
    got = ctxeval.evaluate(samples=[rec], measures=ms).runs[0]
    assert [got.mean(m) for m in ms] == [0.5, 0.5, 0.5]
