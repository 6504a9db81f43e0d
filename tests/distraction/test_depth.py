"""k beyond a run's depth (issue 12, point 1): a depth-100 run read at k = 100, 200, 400.

DistractorRate@k is the share of the passages given, min(k, depth), so the rate and the safety verdict
do not fall as k grows past the depth; the verbs say when k exceeds most of a run's lists.
"""

from __future__ import annotations

import pytest

import ctxeval
from ctxeval._distraction import distraction_table

DEPTH = 100


def _depth_100_case(n_queries: int = 4, distractors: int = 40) -> tuple[dict, dict]:
    """Per query 100 retrieved passages; the first ``distractors`` of them are judged grade 1 (a
    distractor on the 1-5 scale), then one grade-5 passage, the rest unjudged."""
    qrels: dict = {}
    run: dict = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"{qid}-d{i:03d}" for i in range(DEPTH)]
        qrels[qid] = dict.fromkeys(docs[:distractors], 1) | {docs[distractors]: 5}
        run[qid] = {d: float(DEPTH - i) for i, d in enumerate(docs)}
    return qrels, run


def test_the_rate_is_over_the_passages_given() -> None:
    qrels, run = _depth_100_case()
    names = ["DistractorRate@50", "DistractorRate@100", "DistractorRate@200", "DistractorRate@400"]
    r = ctxeval.evaluate(qrels, run, names, utility={"rules": "off"})
    got = {n: r.runs[0].mean(n) for n in names}
    # hand: 40 distractors in the top 50 -> 40/50; in the whole list of 100 -> 40/100, at every k >= 100
    assert got == {
        "DistractorRate@50": pytest.approx(40 / 50),
        "DistractorRate@100": pytest.approx(40 / 100),
        "DistractorRate@200": pytest.approx(40 / 100),
        "DistractorRate@400": pytest.approx(40 / 100),
    }
    notes = [n for n in r.notes if "exceeds the ranked list's depth" in n]
    assert len(notes) == 2  # k = 200 and k = 400; not k = 50 or 100
    assert "k=200 exceeds the ranked list's depth on 4 of 4 queries (median depth 100)" in notes[0]
    assert "min(k, depth)" in notes[0]


def test_the_verdict_does_not_turn_safe_past_the_depth() -> None:
    qrels, run = _depth_100_case()
    verdicts = {k: distraction_table(qrels, run, k, utility={"rules": "off"}) for k in (100, 200, 400)}
    assert {k: t["rows"][0]["verdict"] for k, t in verdicts.items()} == {100: "RISKY", 200: "RISKY", 400: "RISKY"}
    assert not any("exceeds" in n for n in verdicts[100]["notes"])
    assert any("k=400 exceeds the ranked list's depth on 4 of 4 queries" in n for n in verdicts[400]["notes"])


def test_a_minority_of_short_lists_gives_no_note() -> None:
    qrels, run = _depth_100_case()
    run["q0"] = dict(list(run["q0"].items())[:10])  # one short list of four: no note at k = 50
    r = ctxeval.evaluate(qrels, run, ["DistractorRate@50"], utility={"rules": "off"})
    assert not any("exceeds" in n for n in r.notes)
    # q0 gives 10 passages, all distractors: 10/10; the others 40/50
    assert r.runs[0].mean("DistractorRate@50") == pytest.approx((1.0 + 3 * 40 / 50) / 4)


def test_diagnose_says_when_k_exceeds_the_depth() -> None:
    qrels, run = _depth_100_case()
    d = ctxeval.diagnose(qrels, run, k=500)
    assert d.counts["selection"] == 0
    assert len(d.notes) == 1
    assert "k=500 exceeds the ranked list's depth on 4 of 4 queries" in d.notes[0]
    assert "no query can be a selection failure" in d.notes[0]
    assert d.to_dict()["notes"] == d.notes
    assert ctxeval.diagnose(qrels, run, k=10).notes == []
