"""Edge samples: one documented reading each, the same under every method (ids, similarity, judge),
with a note counting it; ragas's own readings of the same samples, where they differ, asserted as the
documented differences."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval import FormatError, Samples
from ctxeval._cli import cli
from ragas_oracle import ragas_metric, ragas_score

#: q1 retrieves its one reference first under every method: recall 1, precision 1 (rank-weighted)
GOOD = {
    "query_id": "q1",
    "retrieved": [{"id": "a", "text": "alpha text"}, {"id": "b", "text": "beta beta"}],
    "reference_ids": ["a"],
    "reference_contexts": ["alpha text"],
    "reference_answer": "alpha",
    "judged": {"relevant": ["a"], "undecided": []},
    "claims": [{"text": "alpha", "supported_by": ["a"], "undecided": []}],
}
METHODS = ("ids", "similarity", "judge")


def _means(records: list[dict], name: str) -> dict[str, float]:
    ms = [f"{name}(method={m})" for m in METHODS]
    r = ctxeval.evaluate(samples=records, measures=ms).runs[0]
    return {m: r.mean(f"{name}(method={m})") for m in METHODS}


def test_an_empty_retrieved_list_scores_0_under_every_method() -> None:
    """A pipeline that returns nothing must not raise the mean: q2 retrieved nothing (its judge labels
    say so: nothing relevant, its one claim unsupported), so every recall and precision mean is
    (1 + 0) / 2 (similarity read it as NA before: mean 1.0)."""
    empty = {
        "query_id": "q2",
        "retrieved": [],
        "reference_ids": ["c"],
        "reference_contexts": ["gamma text"],
        "reference_answer": "gamma",
        "judged": {"relevant": [], "undecided": []},
        "claims": [{"text": "gamma", "supported_by": [], "undecided": []}],
    }
    assert _means([GOOD, empty], "ContextRecall") == dict.fromkeys(METHODS, 0.5)
    assert _means([GOOD, empty], "ContextPrecision") == dict.fromkeys(METHODS, 0.5)
    r = ctxeval.evaluate(samples=[GOOD, empty], measures=["IDBasedContextPrecision", "IDBasedContextRecall"])
    assert r.runs[0].per_query("IDBasedContextPrecision") == {"q1": 0.5, "q2": 0.0}
    assert r.runs[0].per_query("IDBasedContextRecall") == {"q1": 1.0, "q2": 0.0}
    assert any("1 samples retrieved nothing" in n for n in Samples.from_records([GOOD, empty]).notes)
    # missing='ignore' leaves it out of every mean: RAGAS's reading of its IDBasedContextPrecision (NaN)
    ignored = ctxeval.evaluate(
        samples=[GOOD, empty], measures=["IDBasedContextPrecision"], policies={"missing": "ignore"}
    )
    assert ignored.runs[0].per_query("IDBasedContextPrecision") == {"q1": 0.5}


def test_an_empty_reference_list_is_left_out_under_every_method() -> None:
    """q2's references are empty (ids, contexts; its reference answer has no claim): nothing is
    relevant there, so it leaves every mean (NA), under each method."""
    empty = {
        "query_id": "q2",
        "retrieved": [{"id": "c", "text": "gamma text"}],
        "reference_ids": [],
        "reference_contexts": [],
    }
    for name in ("ContextRecall", "ContextPrecision"):
        assert _means([GOOD, empty], name) == dict.fromkeys(METHODS, 1.0)
    r = ctxeval.evaluate(
        samples=[GOOD, empty], measures=["IDBasedContextPrecision", "ContextRecall(method=similarity)"]
    )
    assert r.runs[0].qids == ["q1"] and r.runs[0].accounting.unjudged == 1
    assert any("1 samples give an empty reference list" in n for n in Samples.from_records([GOOD, empty]).notes)
    no_claims = {**GOOD, "query_id": "q2", "claims": []}
    got = ctxeval.evaluate(samples=[GOOD, no_claims], measures=["ContextRecall(method=judge)"]).runs[0]
    per = got.per_query("ContextRecall(method=judge)")
    assert per["q1"] == 1.0 and math.isnan(per["q2"])


def test_an_empty_text_matches_nothing() -> None:
    """An empty reference context is no reference and an empty chunk text matches none. q1: chunks "",
    "zeta"; references "", "zeta": by exact text and by similarity the one reference is found at rank
    2: recall 1, precision (0 + 1/2) / 1 = 0.5. q2: its only reference is empty: no reference, left out."""
    recs = [
        {"query_id": "q1", "retrieved_contexts": ["", "zeta"], "reference_contexts": ["", "zeta"]},
        {"query_id": "q2", "retrieved_contexts": ["", "eta"], "reference_contexts": [""]},
    ]
    ms = [
        "ContextRecall",
        "ContextPrecision",
        "ContextRecall(method=similarity)",
        "ContextPrecision(method=similarity)",
    ]
    r = ctxeval.evaluate(samples=recs, measures=ms).runs[0]
    assert r.qids == ["q1"]
    assert [r.mean(m) for m in ms] == [1.0, 0.5, 1.0, 0.5]
    notes = Samples.from_records(recs).notes
    assert any("4 chunk texts or reference contexts are empty" in n for n in notes)
    # ragas reads "" as 1.0 similar to "": recall 2/2, precision (1/1 + 2/2) / 2 (documented difference)
    fields = {"retrieved_contexts": ["", "zeta"], "reference_contexts": ["", "zeta"]}
    assert ragas_score(ragas_metric("NonLLMContextRecall")(), **fields) == 1.0
    assert ragas_score(ragas_metric("NonLLMContextPrecisionWithReference")(), **fields) == pytest.approx(1.0)
    assert ragas_score(ragas_metric("NonLLMContextRecall")(), retrieved_contexts=[""], reference_contexts=[""]) == 1.0


def test_a_lone_surrogate_becomes_the_replacement_character(tmp_path: Path) -> None:
    """ "ab\\ud800cd" (a JSON \\ud800 escape, or a Python string) reads as "ab\\ufffdcd" in every text:
    the texts still equal each other (exact text: recall 1; similarity 1); in an id it is an error."""
    rec = {
        "query_id": "q1",
        "question": "ab\ud800cd?",
        "retrieved_contexts": ["ab\ud800cd", "x"],
        "reference_contexts": ["ab\ud800cd"],
    }
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(rec) + "\n", encoding="utf-8")  # ensure_ascii: the \ud800 escape
    assert "\\ud800" in path.read_text()
    for source in (str(path), [rec]):
        s = Samples.coerce(source)
        assert s.samples[0].question == "ab\ufffdcd?" and s.samples[0].retrieved_texts == ("ab\ufffdcd", "x")
        assert any("3 texts hold a lone surrogate" in n for n in s.notes)
    ms = ["ContextRecall", "ContextRecall(method=similarity)"]
    assert [ctxeval.evaluate(samples=str(path), measures=ms).runs[0].mean(m) for m in ms] == [1.0, 1.0]
    res = CliRunner().invoke(cli, ["evaluate", "--samples", str(path), "-m", "ContextRecall(method=similarity)"])
    assert res.exit_code == 0 and "Traceback" not in res.output and "U+FFFD" in res.output
    path.write_text(json.dumps({"query_id": "q1", "retrieved_ids": ["a\ud800"]}) + "\n")
    with pytest.raises(FormatError, match=r"s.jsonl:1: retrieved_ids\[1\]: an id must be valid Unicode"):
        Samples.from_path(path)


def test_a_key_given_twice_is_an_error_or_the_first_kept(tmp_path: Path) -> None:
    """JSON would keep the last silently; which one the writer meant is unclear: an error naming the
    line and the key; duplicates='first' keeps the first and the notes count it."""
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"query_id": "q1", "retrieved_ids": ["a", "b"], "reference_ids": ["a"]}\n'
        '{"query_id": "q2", "retrieved_ids": ["c"], "reference_ids": ["c"], "reference_ids": ["z"]}\n'
    )
    with pytest.raises(FormatError) as err:
        Samples.from_path(path)
    assert str(err.value) == (
        f"{path}:2: the key 'reference_ids' is given twice in one object (which one counts is unclear); "
        "duplicates='first' / --duplicates first keeps the first"
    )
    s = Samples.from_path(path, duplicates="first")
    assert s.samples[1].reference_ids == ("c",)
    assert any("1 keys given twice in one object: the first kept" in n for n in s.notes)
    res = CliRunner().invoke(cli, ["evaluate", "--samples", str(path), "-m", "ContextRecall", "--duplicates", "first"])
    assert res.exit_code == 0, res.output
    assert "ContextRecall" in res.stdout


def test_ragas_reads_the_edges_otherwise() -> None:
    """The documented differences, from ragas itself: its non-LLM measures fail on an empty retrieved
    list (recall) and on an empty reference list (precision); ctxeval reads 0 and NA."""
    recall, precision = ragas_metric("NonLLMContextRecall")(), ragas_metric("NonLLMContextPrecisionWithReference")()
    with pytest.raises(ValueError):
        ragas_score(recall, retrieved_contexts=[], reference_contexts=["a"])
    assert ragas_score(precision, retrieved_contexts=[], reference_contexts=["a"]) == 0.0
    with pytest.raises(ValueError):
        ragas_score(precision, retrieved_contexts=["a"], reference_contexts=[])
    assert math.isnan(ragas_score(recall, retrieved_contexts=["a"], reference_contexts=[]))
