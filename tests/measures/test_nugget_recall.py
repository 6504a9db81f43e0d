"""NuggetRecall as the TREC 2024 RAG reference code scores it: castorini/nuggetizer's own scoring
(``nuggetizer.core.metrics``, the test extra's nuggetizer 0.0.5) is the oracle on generated samples,
edge samples included (no vital nugget, an empty nugget list, an empty retrieved list): per sample and
the mean over every sample. A nugget's assignment at k is what ctxeval reads from the labels: support
when a top-k chunk supports it, partial_support when one partially does, else not_support."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from nuggetizer.core.metrics import calculate_global_metrics, calculate_nugget_scores

import ctxeval

_CHUNKS = ["c1", "c2", "c3", "c4", "c5"]
#: ctxeval's score name -> nuggetizer's
SCORES = {
    "vital_strict": "strict_vital_score",
    "all_strict": "strict_all_score",
    "vital": "vital_score",
    "all": "all_score",
}


@st.composite
def _sample(draw: st.DrawFn, i: int) -> dict:
    retrieved = draw(st.lists(st.sampled_from(_CHUNKS), max_size=4, unique=True))
    nuggets = [
        {
            "text": f"n{j}",
            "importance": draw(st.sampled_from(["vital", "okay"])),
            "supported_by": draw(st.lists(st.sampled_from(_CHUNKS), max_size=2, unique=True)),
            "partially_supported_by": draw(st.lists(st.sampled_from(_CHUNKS), max_size=2, unique=True)),
        }
        for j in range(draw(st.integers(0, 4)))
    ]
    return {"query_id": f"q{i}", "retrieved_ids": retrieved, "nuggets": nuggets}


def _assignment(nugget: dict, top: list[str]) -> str:
    if set(nugget["supported_by"]) & set(top):
        return "support"
    if set(nugget["partially_supported_by"]) & set(top):
        return "partial_support"
    return "not_support"


@given(st.integers(1, 5).flatmap(lambda n: st.tuples(*(_sample(i) for i in range(n)))), st.integers(1, 4))
def test_nugget_recall_is_nuggetizers_score(samples: tuple[dict, ...], k: int) -> None:
    records = [
        {
            "qid": s["query_id"],
            "nuggets": [
                {"text": n["text"], "importance": n["importance"], "assignment": _assignment(n, s["retrieved_ids"][:k])}
                for n in s["nuggets"]
            ],
        }
        for s in samples
    ]
    want = calculate_global_metrics(records)
    names = [f"NuggetRecall(score={x})@{k}" for x in SCORES]
    got = ctxeval.evaluate(samples=list(samples), measures=names).runs[0]
    for x, theirs in SCORES.items():
        name = f"NuggetRecall(score={x})@{k}"
        per = got.per_query(name)
        for rec in records:
            assert per[rec["qid"]] == pytest.approx(
                getattr(calculate_nugget_scores(rec["qid"], rec["nuggets"]), theirs)
            )
        assert got.mean(name) == pytest.approx(want[theirs])


@given(st.integers(1, 5).flatmap(lambda n: st.tuples(*(_sample(i) for i in range(n)))), st.integers(1, 4))
def test_empty_na_leaves_the_samples_without_nuggets_of_the_kind_out(samples: tuple[dict, ...], k: int) -> None:
    """empty=na: a sample without a vital nugget is NA for the vital scores, one with no nugget for
    every score; the others keep nuggetizer's value."""
    base = ctxeval.evaluate(samples=list(samples), measures=[f"NuggetRecall(score=vital)@{k}"]).runs[0]
    na = ctxeval.evaluate(samples=list(samples), measures=[f"NuggetRecall(score=vital,empty=na)@{k}"]).runs[0]
    per_base, per_na = (
        base.per_query(f"NuggetRecall(score=vital)@{k}"),
        na.per_query(f"NuggetRecall(score=vital,empty=na)@{k}"),
    )
    for s in samples:
        q = s["query_id"]
        if any(n["importance"] == "vital" for n in s["nuggets"]):
            assert per_na[q] == per_base[q]
        else:
            assert math.isnan(per_na[q]) and per_base[q] == 0.0


def test_the_reading_by_hand() -> None:
    """q1: vital n1 supported at rank 1, vital n2 partially at rank 2, okay n3 not: vital_strict@2 = 1/2,
    vital@2 = 1.5/2. q2 has only an okay nugget: vital scores 0.0 (nuggetizer), NA with empty=na. The
    mean of vital_strict@2 over both: (0.5 + 0) / 2 = 0.25 (0.5 over q1 alone with empty=na)."""
    q1 = {
        "query_id": "q1",
        "retrieved_ids": ["a", "b", "c"],
        "nuggets": [
            {"text": "n1", "importance": "vital", "supported_by": ["a"]},
            {"text": "n2", "importance": "vital", "partially_supported_by": ["b"]},
            {"text": "n3", "importance": "okay", "supported_by": ["z"]},
        ],
    }
    q2 = {
        "query_id": "q2",
        "retrieved_ids": ["d"],
        "nuggets": [{"text": "n4", "importance": "okay", "supported_by": ["d"]}],
    }
    ms = ["NuggetRecall@2", "NuggetRecall(score=vital)@2", "NuggetRecall(empty=na)@2"]
    r = ctxeval.evaluate(samples=[q1, q2], measures=ms).runs[0]
    assert r.per_query("NuggetRecall@2") == {"q1": 0.5, "q2": 0.0}
    assert r.per_query("NuggetRecall(score=vital)@2") == {"q1": 0.75, "q2": 0.0}
    assert r.mean("NuggetRecall@2") == 0.25 and r.mean("NuggetRecall(empty=na)@2") == 0.5
