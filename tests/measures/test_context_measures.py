"""ContextPrecision and ContextRecall (RAGAS's definitions, on ids): hand calculations written out,
invariants over generated lists, and RAGAS itself as the oracle when it is installed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxeval

MEASURES = ["ContextPrecision", "ContextRecall", "ContextPrecision@2", "ContextRecall@2", "AP"]


def _means(qrels: dict, run: dict, measures: list[str] = MEASURES) -> dict[str, float]:
    res = ctxeval.evaluate(qrels, run, measures)
    return {str(m): res.runs[0].mean(m) for m in res.measures}


def test_ragas_documented_example_by_hand() -> None:
    # RAGAS's example: retrieved [relevant, irrelevant, relevant]; 3 reference chunks, one not retrieved
    got = _means({"q": {"a": 1, "c": 1, "z": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}})
    # precision@1 = 1 (v=1), precision@2 = 1/2 (v=0), precision@3 = 2/3 (v=1): (1 + 2/3) / 2 relevant retrieved
    assert got["ContextPrecision"] == pytest.approx((1 + 2 / 3) / 2)
    # @2: only a (rank 1) is relevant in the top 2: 1 / 1
    assert got["ContextPrecision@2"] == 1.0
    # recall: 2 of the 3 reference ids retrieved; @2: 1 of 3
    assert got["ContextRecall"] == pytest.approx(2 / 3) and got["ContextRecall@2"] == pytest.approx(1 / 3)
    # AP divides by all 3 relevant, not by the 2 retrieved
    assert got["AP"] == pytest.approx((1 + 2 / 3) / 3)


def test_no_relevant_chunk_retrieved_or_judged() -> None:
    # nothing relevant retrieved: precision 0, recall 0; a query without relevant chunks: recall NA
    res = ctxeval.evaluate(
        {"q1": {"z": 1, "b": 0}, "q2": {"b": 0}},
        {"q1": {"a": 1.0, "b": 0.5}, "q2": {"b": 1.0}},
        ["ContextPrecision", "ContextRecall"],
    )
    r = res.runs[0]
    assert r.per_query("ContextPrecision") == {"q1": 0.0, "q2": 0.0}
    assert r.per_query("ContextRecall")["q1"] == 0.0 and math.isnan(r.per_query("ContextRecall")["q2"])
    assert r.mean("ContextRecall") == 0.0  # the mean is over the queries where recall is defined


def test_graded_relevance_level() -> None:
    # grades 1-3; rel=2 counts b and c only: retrieved order a(1), b(3), x, c(2)
    q = {"q": {"a": 1, "b": 3, "c": 2}}
    r = {"q": {"a": 4.0, "b": 3.0, "x": 2.0, "c": 1.0}}
    got = _means(q, r, ["ContextPrecision(rel=2)", "ContextRecall(rel=2)@2"])
    assert got["ContextPrecision(rel=2)"] == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert got["ContextRecall(rel=2)@2"] == pytest.approx(1 / 2)


@given(st.lists(st.booleans(), min_size=1, max_size=12), st.integers(0, 5))
def test_context_precision_is_ap_over_the_relevant_retrieved(flags: list[bool], missed: int) -> None:
    """ContextPrecision = AP x (relevant judged) / (relevant retrieved), in [0, 1]; recall = R."""
    docs = [f"d{i:02d}" for i in range(len(flags))]
    qrels = {"q": {d: 1 for d, f in zip(docs, flags) if f} | {f"m{j}": 1 for j in range(missed)} | {"neg": 0}}
    run = {"q": {d: float(len(docs) - i) for i, d in enumerate(docs)}}
    got = _means(qrels, run, ["ContextPrecision", "ContextRecall", "AP", "R@100"])
    found = sum(flags)
    relevant = found + missed
    assert 0.0 <= got["ContextPrecision"] <= 1.0
    if found:
        assert got["ContextPrecision"] == pytest.approx(got["AP"] * relevant / found, rel=1e-12)
    else:
        assert got["ContextPrecision"] == 0.0
    if relevant:
        assert got["ContextRecall"] == pytest.approx(got["R@100"], rel=1e-12)
    else:
        assert math.isnan(got["ContextRecall"])


def test_registered_with_formula_and_source() -> None:
    names = {f.name: f for f in ctxeval.families()}
    for name in ("ContextPrecision", "ContextRecall"):
        fam = names[name]
        assert fam.group == "context" and "RAGAS" in fam.citation and "=" in fam.formula
    assert str(ctxeval.parse_measure("context_precision@5")) == "ContextPrecision@5"
    assert np.isfinite(_means({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ContextPrecision"])["ContextPrecision"])
