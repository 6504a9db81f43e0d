"""Relevance levels follow the grade scale in force (issue 12, point 5): on the 1-5 scale grade 1 is a
distractor and 2 is not useful, so P-R curves and num_rel strata count grade >= 3; a grade map
translates that level to the qrels' own grades; --pr-rel overrides; every line names its scale."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli
from ctxeval._demo import example_path

Q = str(example_path("qrels.txt"))
RUNS = [str(example_path(f"runs/{n}.run")) for n in ("bm25", "rrf")]
FAST = {"stats": {"permutations": 200, "resamples": 200}, "sections": {"curves_k": 0}}
LEVELS = [f"{r / 10:g}" for r in range(11)]


def _iprec(run: str, rel: int) -> list[float]:
    res = ctxeval.evaluate(Q, run, [f"IPrec(rel={rel})@{x}" for x in LEVELS])
    return [res.runs[0].mean(f"IPrec(rel={rel})@{x}" if rel != 1 else f"IPrec@{x}") for x in LEVELS]


def test_the_demo_pr_curve_counts_grade_3_and_up_on_the_1_5_scale() -> None:
    d = ctxeval.compare(Q, RUNS, ["RA-nWG@5", "nDCG@10"], strata="num_rel", **FAST).to_dict()
    pr = {s["run"]: s["precision"] for s in d["pr_curves"]["series"]}
    assert pr["bm25"] == pytest.approx(_iprec(RUNS[0], 3))
    # at grade >= 1 every judged passage is "relevant", distractors included: the curve the issue saw
    assert pr["bm25"] != pytest.approx(_iprec(RUNS[0], 1))
    assert d["settings"]["pr_relevance"] == "grade >= 3 on the 1-5 scale"
    assert d["settings"]["num_rel_level"] == 3
    strata = {s["kind"]: s for s in d["settings"]["strata"]}
    assert strata["num_rel"]["source"] == "judged docs with grade >= 3 on the 1-5 scale"
    assert strata["num_rel"]["level"] == 3


def test_pr_rel_overrides_from_the_cli() -> None:
    res = CliRunner().invoke(
        cli, ["compare", Q, *RUNS, "-m", "RA-nWG@5", "--pr-rel", "4", "--curve-k", "0", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["settings"]["pr_rel"] == 4
    assert doc["pr_curves"]["series"][0]["precision"] == pytest.approx(_iprec(RUNS[0], 4))


def test_binary_measures_on_the_1_5_scale_are_noted() -> None:
    r = ctxeval.evaluate(Q, RUNS[0], ["P@10", "AP", "RA-nWG@5", "P(rel=3)@5"])
    assert (
        "P@10, AP count grade >= 1 on the 1-5 scale as relevant; the 1-5 scale in force calls grade >= 3 relevant "
        "(grade 1 is a distractor, 2 not useful): give rel=3, e.g. P(rel=3)@10"
    ) in r.notes
    # the classical measures alone: trec_eval's default stands, nothing to say
    assert ctxeval.evaluate(Q, RUNS[0], ["P@10", "AP"]).notes == []


def test_a_grade_map_names_both_scales() -> None:
    qrels = {"q1": {"a": 0, "b": 1, "c": 2, "d": 3}, "q2": {"e": 3, "f": 1}}
    run = {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, "q2": {"f": 2.0, "e": 1.0}}
    # DL grade 1 ("related") lands on 3 of the 1-5 scale under trec-dl: the level is qrels grade >= 1
    r = ctxeval.evaluate(qrels, run, ["P@2", "RA-nWG@2"], rag={"grade_map": "trec-dl"})
    assert not any("count" in n for n in r.notes)
    # under a stricter map DL 1 is not useful (2): the level is qrels grade >= 2, and P@2 is noted
    strict = {"grade_map": "3:5,2:4,1:2,0:1"}
    r = ctxeval.evaluate(qrels, run, ["P@2", "RA-nWG@2"], rag=strict)
    assert (
        "P@2 counts qrels grade >= 1 (grade >= 2 on the 1-5 scale after the grade map 3:5,2:4,1:2,0:1) as relevant; "
        "the 1-5 scale in force calls qrels grade >= 2 (grade >= 4 on the 1-5 scale after the grade map "
        "3:5,2:4,1:2,0:1) relevant: give rel=2, e.g. P(rel=2)@2"
    ) in r.notes
    t = ctxeval.distraction_table(qrels, run, k=2, rag={"grade_map": "trec-dl"})
    assert t["rel_relevance"] == "qrels grade >= 1 (grade >= 3 on the 1-5 scale after the grade map trec-dl)"


def test_a_level_that_counts_the_same_grades_is_not_noted() -> None:
    """Grades 1, 2, 4, 5 (no 3): rel=3 and rel=4 count the same passages relevant (4 and 5), so
    RR(rel=3) is not noted; P@5 (rel=1) counts 1 and 2 as well, and is."""
    qrels = {"q1": {"a": 5, "b": 4, "c": 2, "d": 1}, "q2": {"e": 4, "f": 1}}
    run = {"q1": {"d": 4.0, "a": 3.0, "c": 2.0}, "q2": {"f": 2.0, "e": 1.0}}
    r = ctxeval.evaluate(qrels, run, ["RR(rel=3)", "RR(rel=4)", "P@5", "RA-nWG@2"])
    noted = [n for n in r.notes if "count" in n]
    assert len(noted) == 1 and noted[0].startswith("P@5 counts grade >= 1")
    # by hand: RR(rel=3) = RR(rel=4) = (1/2 + 1/2) / 2
    assert r.runs[0].mean("RR(rel=3)") == r.runs[0].mean("RR(rel=4)") == 0.5
