"""Judge labels end to end with the offline lexical judge (claims, relevance, nuggets, grades, pool),
the measures reading them (hand calculations written out), and agreement's kappa on the example
against sklearn (the card's own tests: test_agreement.py, test_card.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli

SAMPLE = {
    "query_id": "q1",
    "question": "What is the capital of France?",
    "retrieved": [
        {"id": "c1", "text": "Paris is the capital city of France"},
        {"id": "c3", "text": "Bananas are yellow"},
        {"id": "c2", "text": "The Seine flows through the city"},
    ],
    "reference_answer": "Paris is the capital of France. The Seine flows through Paris.",
}


def _run(args: list[str], tmp_path: Path) -> str:
    res = CliRunner().invoke(cli, [*args, "--judge", "lexical", "--cache", str(tmp_path / "c.sqlite"), "-q"])
    assert res.exit_code == 0, res.output
    return res.stdout


def test_claims_relevance_and_nuggets_by_hand(tmp_path: Path) -> None:
    """Lexical judge (content words, stop words out). Claims: the answer's sentences, c1 = {paris,
    capital, france}, c2 = {seine, flows, through, paris}. c1 is all in chunk c1 (supported, >= 60 %);
    c2: chunk c2 has seine, flows, through = 3/4 (supported), chunk c1 paris = 1/4 (not).
    Ranking c1, c3, c2: ContextRecall(method=judge) = 2/2; @1 = 1/2 (c2 needs rank 3).
    Relevance (>= 30 % of the answer's 6 words): c1 has paris, capital, france = 3/6, c2 seine, flows,
    through = 3/6, c3 none: v = 1, 0, 1 -> ContextPrecision(method=judge) = (1/1 + 2/3) / 2 = 5/6.
    Nuggets: the reference sentences, the first vital; n1 supported by c1 (rank 1), n2 by c2 (rank 3):
    NuggetRecall(score=all)@3 = 1, @1 = 1/2, vital_strict@1 = 1."""
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps(SAMPLE) + "\n")
    claims = tmp_path / "claims.jsonl"
    claims.write_text(_run(["judge", "claims", "--samples", str(src)], tmp_path))
    rec = json.loads(claims.read_text())
    assert rec["claims"] == [
        {"text": "Paris is the capital of France.", "supported_by": ["c1"], "undecided": []},
        {"text": "The Seine flows through Paris.", "supported_by": ["c2"], "undecided": []},
    ]
    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(_run(["judge", "relevance", "--samples", str(claims)], tmp_path))
    assert json.loads(labelled.read_text())["judged"] == {"relevant": ["c1", "c2"], "undecided": []}
    nug = tmp_path / "nuggets.jsonl"
    nug.write_text(_run(["judge", "nuggets", "--samples", str(labelled)], tmp_path))
    ms = [
        "ContextRecall(method=judge)",
        "ContextRecall(method=judge)@1",
        "ContextPrecision(method=judge)",
        "NuggetRecall(score=all)@3",
        "NuggetRecall(score=all)@1",
        "NuggetRecall(score=vital_strict)@1",
    ]
    got = ctxeval.evaluate(samples=str(nug), measures=ms).runs[0]
    assert [got.mean(m) for m in ms] == pytest.approx([1.0, 0.5, 5 / 6, 1.0, 0.5, 1.0])


def _labelled(claims: list[dict], judged: dict) -> dict:
    return {
        "query_id": "q",
        "retrieved_ids": ["a", "b", "c", "d"],
        "reference_ids": ["a"],
        "claims": claims,
        "judged": judged,
    }


@pytest.mark.parametrize("why", ["undecided", "tied", "not_sent"])
def test_judge_measures_by_hand(why: str) -> None:
    """Ranking a, b, c, d. Relevant a, c: ContextPrecision = (1/1 + 2/3) / 2; @2 = 1/1. With d undecided
    the full list is NA (never guessed) while @3 keeps its value.
    Claims: k1 supported by b, k2 by d, k3 undecided on a. Full list: k1, k2 supported, k3 left out ->
    2 / 2; @2: k1 yes, k2 no (d is rank 4), k3 open (a at rank 1) -> 1 / 2; @1: 0 / 2. k3 undecided on
    d instead: @2 has nothing open -> 1 / 3. A chunk whose votes tied, or that the budget did not
    send, is left open the same way (each listed in its own field)."""
    claims = [
        {"text": "k1", "supported_by": ["b"]},
        {"text": "k2", "supported_by": ["d"]},
        {"text": "k3", "supported_by": [], why: ["a"]},
    ]
    ms = [
        "ContextPrecision(method=judge)",
        "ContextPrecision(method=judge)@2",
        "ContextRecall(method=judge)",
        "ContextRecall(method=judge)@2",
        "ContextRecall(method=judge)@1",
    ]
    r = ctxeval.evaluate(samples=[_labelled(claims, {"relevant": ["a", "c"]})], measures=ms).runs[0]
    assert [r.mean(m) for m in ms] == pytest.approx([(1 + 2 / 3) / 2, 1.0, 1.0, 0.5, 0.0])
    open_d = [*claims[:2], {"text": "k3", "supported_by": [], why: ["d"]}]
    r = ctxeval.evaluate(
        samples=[_labelled(open_d, {"relevant": ["a", "c"], why: ["d"]})],
        measures=[
            "ContextPrecision(method=judge)",
            "ContextPrecision(method=judge)@3",
            "ContextRecall(method=judge)@2",
        ],
    ).runs[0]
    assert math.isnan(r.per_query("ContextPrecision(method=judge)")["q"])
    assert r.mean("ContextPrecision(method=judge)@3") == pytest.approx((1 + 2 / 3) / 2)
    assert r.mean("ContextRecall(method=judge)@2") == pytest.approx(1 / 3)


def test_grades_pool_and_agreement_on_the_example(tmp_path: Path) -> None:
    from sklearn.metrics import cohen_kappa_score

    e = Path(ctxeval.__file__).parent / "data" / "example"
    runs = [str(e / "runs" / "bm25.run"), str(e / "runs" / "rrf.run")]
    pool = CliRunner().invoke(cli, ["pool", *runs, "--depth", "5"])
    assert pool.exit_code == 0
    pairs = [tuple(line.split()[:2]) for line in pool.stdout.splitlines()]  # qid docid best_rank
    qrels = _run(
        [
            "judge",
            "grade",
            *runs,
            "--queries",
            str(e / "queries.jsonl"),
            "--passages",
            str(e / "passages.jsonl"),
            "--depth",
            "5",
        ],
        tmp_path,
    )
    judged = [line.split() for line in qrels.splitlines()]
    assert [(q, d) for q, _, d, _ in judged] == pairs  # every pooled pair graded, in pool order
    assert {int(g) for *_, g in judged} <= {1, 2, 3, 4, 5}
    (tmp_path / "j.qrels").write_text(qrels)
    res = CliRunner().invoke(
        cli, ["agreement", str(e / "qrels.txt"), str(tmp_path / "j.qrels"), *runs, "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    human = {tuple(line.split()[::2][:2]): int(line.split()[3]) for line in (e / "qrels.txt").read_text().splitlines()}
    mine = {(q, d): int(g) for q, _, d, g in judged}
    both = sorted(set(human) & set(mine))
    h, j = [human[p] for p in both], [mine[p] for p in both]
    assert doc["pairs"]["both"] == len(both)
    assert doc["kappa"]["kappa"] == pytest.approx(cohen_kappa_score(h, j))
    assert doc["kappa"]["kappa_linear"] == pytest.approx(cohen_kappa_score(h, j, weights="linear"))
    assert doc["kappa"]["kappa_quadratic"] == pytest.approx(cohen_kappa_score(h, j, weights="quadratic"))
    assert set(doc["ppi"]) == {"bm25", "rrf"}


def test_judge_needs_a_server_or_lexical(tmp_path: Path) -> None:
    res = CliRunner(env={"CTXEVAL_JUDGE_URL": "", "OPENAI_BASE_URL": ""}).invoke(
        cli, ["judge", "grade", "--samples", str(tmp_path / "x.jsonl"), "--model", "m", "--cache", str(tmp_path / "c")]
    )
    assert res.exit_code == 2
    assert "ctxeval: error: the judge needs a server: --judge-url URL" in res.output


def test_attribution_and_the_heuristic_note(tmp_path: Path) -> None:
    """Response words {paris, capital, france, seine, flows, there}. A chunk is used when >= 30 % of its
    words are in the response: c1 {paris, capital, city, france} 3/4 yes; c3 {bananas, yellow} no; c2
    {seine, flows, through, city} 2/4 yes. AttributionRate = 2/3, @1 = 1/1. The labels are the lexical
    heuristic's, and the sample set says so."""
    rec = {**SAMPLE, "response": "Paris is the capital of France and the Seine flows there"}
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps(rec) + "\n")
    out = tmp_path / "a.jsonl"
    out.write_text(_run(["judge", "attribution", "--samples", str(src)], tmp_path))
    got = json.loads(out.read_text())
    assert got["citations"] == ["c1", "c2"] and got["citations_undecided"] == []
    assert got["labelled_by"] == [
        {
            "judge": "lexical word overlap (a heuristic, no model)",
            "model": "lexical-1",
            "heuristic": True,
            "task": "attribution",
        }
    ]
    res = ctxeval.evaluate(samples=str(out), measures=["AttributionRate", "AttributionRate@1"])
    r = res.runs[0]
    assert r.mean("AttributionRate") == pytest.approx(2 / 3)
    assert r.mean("AttributionRate@1") == 1.0
    assert any("carry labels from a heuristic, not a model (attribution by lexical" in n for n in res.notes)


def test_cache_stats_export_and_prune_commands(tmp_path: Path) -> None:
    """Two tasks judged by the lexical judge; stats counts them per task, export lists each judgment,
    prune --task removes one task's only."""
    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps(SAMPLE) + "\n")
    _run(["judge", "relevance", "--samples", str(src)], tmp_path)
    _run(["judge", "grade", "--samples", str(src)], tmp_path)
    cache = ["--cache", str(tmp_path / "c.sqlite")]
    stats = CliRunner().invoke(cli, ["judge", "cache", "stats", *cache, "--format", "json"])
    groups = {(g["task"], g["judgments"]) for g in json.loads(stats.stdout)["groups"]}
    assert groups == {("relevance", 3), ("grade", 3)}
    exported = [
        json.loads(line) for line in CliRunner().invoke(cli, ["judge", "cache", "export", *cache]).stdout.splitlines()
    ]
    assert len(exported) == 6 and {r["model"] for r in exported} == {"lexical-1"}
    pruned = CliRunner().invoke(cli, ["judge", "cache", "prune", *cache, "--task", "grade"])
    assert pruned.stdout.strip() == "deleted 3 judgments"
    left = json.loads(CliRunner().invoke(cli, ["judge", "cache", "stats", *cache, "--format", "json"]).stdout)
    assert [g["task"] for g in left["groups"]] == ["relevance"]
    refused = CliRunner().invoke(cli, ["judge", "cache", "prune", *cache])
    assert refused.exit_code == 2 and "prune needs a filter" in refused.output


def test_lexical_utilities_are_a_utility_file(tmp_path: Path) -> None:
    """The question's content words are {capital, france}: c1 holds both (u = 1), c3 and c2 neither
    (u = 0). The output is the utility file UDCG reads (qid docid u)."""
    from ctxeval._io.side import read_utilities

    src = tmp_path / "s.jsonl"
    src.write_text(json.dumps(SAMPLE) + "\n")
    out = _run(["judge", "utility", "--samples", str(src)], tmp_path)
    assert out.splitlines() == ["q1 c1 1.0", "q1 c3 0.0", "q1 c2 0.0"]
    (tmp_path / "u.txt").write_text(out)
    assert read_utilities(str(tmp_path / "u.txt")).columns.values.tolist() == [1.0, 0.0, 0.0]
