"""Measures at a budget of tokens: with every chunk of one length they equal their K-slot measures;
with lengths that differ, their ideals equal brute force over the judged chunks; the packing rules."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ctxeval import Chunks, ConfigError, MeasureError, SpanLabels, evaluate, metric_at_k, parse_measure
from ctxeval._measures import make

DOCS = [f"d{i}" for i in range(9)]
# families read over the context, whatever the ranking's depth
OVER_CONTEXT = ["R", "AP", "RR", "Success", "nDCG", "DCG", "ERR(gmax=5)", "RA-nWG", "N-Recall4+", "N-Recall5", "GoldHit",
                "dDCG", "UDCG", "DistractorRate", "DistractorHarm", "IDBasedContextPrecision", "IDBasedContextRecall",
                "RankWeightedPrecision", "ContextPrecision", "ContextRecall", "RBP"]  # fmt: skip
# families that divide by k: equal where the ranking holds at least K chunks
PER_CHUNK = ["P", "Judged", "unj", "Precision4+", "Harm", "relative_P"]


@st.composite
def graded(draw: st.DrawFn) -> tuple[dict, dict]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in ("q1", "q2", "q3"):
        judged = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=6))
        qrels[q] = {d: draw(st.integers(1, 5)) for d in judged}
        ranked = draw(st.lists(st.sampled_from(DOCS), unique=True, max_size=8))
        if ranked:
            run[q] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    assume(run)
    return qrels, run


def _table(tokens: dict[str, int]) -> Chunks:
    return Chunks.from_records(
        [{"chunk_id": d, "doc_id": "doc", "start": 0, "end": 1, "tokens": n} for d, n in tokens.items()]
    )


@settings(max_examples=60, deadline=None)
@given(case=graded(), k=st.integers(1, 6), length=st.integers(1, 300), slack=st.integers(0, 10**6))
def test_equal_lengths_give_the_k_slot_measure(case: tuple, k: int, length: int, slack: int) -> None:
    qrels, run = case
    budget = k * length + slack % length
    names_k = [f"{f}@{k}" for f in OVER_CONTEXT + PER_CHUNK]
    names_b = [f"{f}@{budget}tok" for f in OVER_CONTEXT + PER_CHUNK]
    res = evaluate(qrels, run, names_k + names_b, chunks=_table(dict.fromkeys(DOCS, length))).runs[0]
    for f, a, b in zip(OVER_CONTEXT + PER_CHUNK, names_k, names_b):
        for q in res.qids:
            if f in PER_CHUNK and len(run.get(q, {})) < k:
                continue  # the K-slot measure pads the missing ranks; a budget has none to pad
            x, y = res.per_query(a)[q], res.per_query(b)[q]
            assert (math.isnan(x) and math.isnan(y)) or abs(x - y) <= 1e-12, (a, b, q, x, y)


def _context(ranking: list[str], tokens: dict[str, int], budget: int, rule: str) -> list[str]:
    out, left = [], budget
    for d in ranking:
        if tokens[d] <= left:
            out.append(d)
            left -= tokens[d]
        elif rule == "stop":
            break
    return out


@settings(max_examples=60, deadline=None)
@given(case=graded(), budget=st.integers(1, 60), rule=st.sampled_from(["stop", "skip"]), data=st.data())
def test_ideals_at_a_budget_equal_brute_force(case: tuple, budget: int, rule: str, data: st.DataObject) -> None:
    """nDCG@B: DCG of the packed context over the best ordered selection of judged chunks within B;
    RA-nWG@B (all weights 1 on grades 5 alone: the count of grade-5 chunks) and N-Recall4+@B likewise."""
    qrels, run = case
    tokens = {d: data.draw(st.integers(1, 25)) for d in DOCS}
    names = [f"nDCG@{budget}tok", f"N-Recall4+@{budget}tok", f"P@{budget}tok", f"RR@{budget}tok"]
    res = evaluate(qrels, run, names, chunks=_table(tokens), rag={"overflow": rule}).runs[0]
    for q in res.qids:
        ctx = _context(sorted(run.get(q, {}), key=lambda d: -run[q][d]), tokens, budget, rule)
        grades = qrels[q]
        dcg = sum(grades.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ctx))
        best = 0.0
        judged = list(grades)
        for n in range(len(judged) + 1):
            for seq in itertools.permutations(judged, n):
                if sum(tokens[d] for d in seq) <= budget:
                    best = max(best, sum(grades[d] / math.log2(i + 2) for i, d in enumerate(seq)))
        assert res.per_query(f"nDCG@{budget}tok")[q] == pytest.approx(dcg / best if best else 0.0, abs=1e-12)
        good = sorted(tokens[d] for d in judged if grades[d] >= 4)
        fit = max((n for n in range(len(good) + 1) if sum(good[:n]) <= budget), default=0)
        got4 = sum(grades.get(d, 0) >= 4 for d in ctx)
        want = got4 / fit if fit else math.nan
        x = res.per_query(f"N-Recall4+@{budget}tok")[q]
        assert (math.isnan(x) and math.isnan(want)) or x == pytest.approx(want, abs=1e-12)
        rel = sum(grades.get(d, 0) >= 1 for d in ctx)
        assert res.per_query(f"P@{budget}tok")[q] == pytest.approx(rel / len(ctx) if ctx else 0.0)
        first = next((i for i, d in enumerate(ctx) if grades.get(d, 0) >= 1), None)
        assert res.per_query(f"RR@{budget}tok")[q] == (0.0 if first is None else 1 / (first + 1))


def test_the_overflow_rules() -> None:
    # ranked a (3 tokens, relevant), b (8), c (2, relevant); budget 6
    qrels = {"q": {"a": 1, "c": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    table = _table({"a": 3, "b": 8, "c": 2})
    stop = evaluate(qrels, run, ["R@6tok", "NumRet"], chunks=table).runs[0]
    skip = evaluate(qrels, run, ["R@6tok"], chunks=table, rag={"overflow": "skip"}).runs[0]
    assert stop.mean("R@6tok") == 0.5 and skip.mean("R@6tok") == 1.0


def test_span_measures_at_a_budget_with_one_token_per_chunk() -> None:
    """A document of one-word chunks (one words-v1 token each) with spans on whole chunks: every
    span measure, and nDCG against the units' ideal, at K tokens equals its value at K chunks."""
    words = [f"w{i:02d} " for i in range(12)]
    doc = "".join(words)
    table = Chunks.from_dict({f"c{i}": ("D", 4 * i, 4 * i + 4) for i in range(12)}, documents={"D": doc})
    labels = SpanLabels.from_records(
        [
            {"query_id": "q", "doc_id": "D", "start": 4 * i, "end": 4 * i + 4, "grade": g}
            for i, g in ((1, 3), (4, 1), (7, 2), (9, 2))
        ]
    )
    run = {"q": {f"c{i}": float(12 - r) for r, i in enumerate([4, 0, 9, 7, 2, 1, 3])}}
    for k in range(1, 8):
        ms = [f"{f}@{k}" for f in ("SpanRecall", "SpanPrecision", "SpanIoU", "SpanCoverage", "nDCG", "RA-nWG", "UDCG")]
        bs = [m.replace(f"@{k}", f"@{k}tok") for m in ms]
        r = evaluate(labels, run, ms + bs, chunks=table, rag={"grade_map": {1: 3, 2: 4, 3: 5}}).runs[0]
        for a, b in zip(ms, bs):
            assert r.mean(a) == pytest.approx(r.mean(b), abs=1e-12), (a, b)


def test_the_tokenizer_is_named_and_budgets_need_a_chunk_table() -> None:
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    res = evaluate(
        qrels, run, ["nDCG@5tok"], chunks=Chunks.from_dict({"a": ("D", 0, 9)}, documents={"D": "one two three"})
    )
    assert res.settings["tokenizer"] == "words-v1" and res.settings["overflow"] == "stop"
    assert res.runs[0].mean("nDCG@5tok") == 1.0
    with pytest.raises(ConfigError, match="need a chunk table"):
        evaluate(qrels, run, ["nDCG@5tok"])
    with pytest.raises(ConfigError, match="1 judged chunks are not in the chunk table"):
        evaluate({"q": {"a": 1, "z": 1}}, run, ["nDCG@5tok"], chunks=_table({"a": 1}))
    with pytest.raises(MeasureError, match="IPrec cannot be cut at a budget"):
        parse_measure("IPrec@5tok")
    with pytest.raises(MeasureError, match="a cutoff @k or a budget"):
        make("nDCG", None, 5, 10)


@settings(max_examples=30, deadline=None)
@given(case=graded(), length=st.integers(1, 50))
def test_the_curve_over_budgets_is_the_curve_over_k_when_lengths_are_equal(case: tuple, length: int) -> None:
    """metric_at_k's token axis ("L:5L:Ltok") reads each budget's measure; with chunks of one length L
    its points are the curve over K = 1..5."""
    qrels, run = case
    table = _table(dict.fromkeys(DOCS, length))
    by_k = metric_at_k(qrels, run, ["nDCG", "R", "RA-nWG"], "1:5", rag={"chunks": table})
    by_tokens = metric_at_k(
        qrels, run, ["nDCG", "R", "RA-nWG"], f"{length}:{5 * length}:{length}tok", rag={"chunks": table}
    )
    assert by_tokens["ks"] == [length * k for k in range(1, 6)] and by_tokens["axis"] == "tokens"
    assert "axis" not in by_k
    for a, b in zip(by_k["series"], by_tokens["series"]):
        assert a["measure"] == b["measure"]
        assert a["values"] == pytest.approx(b["values"], abs=1e-12)
