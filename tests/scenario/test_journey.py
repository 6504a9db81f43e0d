"""The RAG builder's journey on a corpus with a planted truth (:mod:`planted`), through the command line
as a user runs it: every command gives the answer the truth implies, or says it cannot and why.

The corpus is written three ways: reference ids (binary labels), graded judgments (1-5), and RAGAS
text-only files (``user_input``, ``retrieved_contexts``, ``reference_contexts``). Expected values come
from :mod:`planted`'s construction (which chunk it planted where), never from ctxeval.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli

from . import planted

EXPRESSIONS = ("refs", "graded", "ragas")
#: the measures each expression asks for: the relevance level of its labels (RA-nWG's 1-5: grade >= 3)
RECALL = {"refs": "ContextRecall@5", "graded": "ContextRecall(rel=3)@5", "ragas": "ContextRecall@5"}
RR = {"refs": "RR", "graded": "RR(rel=3)", "ragas": "RR"}


@pytest.fixture(scope="module")
def corpus() -> planted.Corpus:
    return planted.make()


@pytest.fixture(scope="module")
def files(corpus: planted.Corpus, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return planted.write(corpus, tmp_path_factory.mktemp("planted"))


@pytest.fixture(scope="module")
def judged(files: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The word-overlap judge's 1-5 grades of the good list's top K (and their sidecar), made once and
    only read by the tests that take it."""
    where = tmp_path_factory.mktemp("judged")
    out = where / "judged.qrels"
    refs = files["refs_good.jsonl"]
    run(
        "judge",
        "grade",
        "--samples",
        refs,
        "--judge",
        "lexical",
        "--depth",
        planted.K,
        "--cache",
        where / "c",
        "-o",
        out,
    )
    return out


def run(*args: Any, code: int = 0) -> Any:
    res = CliRunner().invoke(cli, [str(a) for a in args])
    assert res.exit_code == code, f"exit {res.exit_code}: {res.output}{res.stderr}"
    return res


def as_json(*args: Any, code: int = 0) -> Any:
    return json.loads(run(*args, "--format", "json", code=code).stdout)


def pair(files: dict[str, Path], expr: str) -> list[str]:
    return [f"good={files[f'{expr}_good.jsonl']}", f"weak={files[f'{expr}_weak.jsonl']}"]


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_evaluate_gives_the_planted_figures(expr: str, files: dict[str, Path], corpus: planted.Corpus) -> None:
    doc = as_json("evaluate", "--samples", *pair(files, expr), "-m", RECALL[expr], "-m", RR[expr])
    got = {r["name"]: r["aggregate"] for r in doc["runs"]}
    for name, ranking in (("good", corpus.good), ("weak", corpus.weak)):
        assert got[name][RECALL[expr]] == pytest.approx(corpus.recall_at(ranking, planted.K))
        assert got[name][RR[expr]] == pytest.approx(corpus.rr(ranking))


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_evaluate_without_measures_reads_the_context_measures(expr: str, files: dict[str, Path]) -> None:
    res = run("evaluate", "--samples", *pair(files, expr))
    assert (
        "R@100" not in res.stdout and "IDBasedContextRecall" in res.stdout and "IDBasedContextPrecision" in res.stdout
    )
    assert "no measures given" in res.stdout  # said once, for both files
    assert "give rel=" not in res.stdout  # the defaults' own levels are the scale's (graded: 1, 2, 4, 5)
    assert res.stdout.count("no measures given") == 1


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_compare_names_the_better_system(expr: str, files: dict[str, Path], corpus: planted.Corpus) -> None:
    doc = as_json("compare", "--samples", *pair(files, expr), "-m", RECALL[expr], "-m", RR[expr], "--seed", 1)
    assert doc["baseline"] == "good"
    by = {c["measure"]: c for c in doc["comparisons"]}
    assert by[RECALL[expr]]["diff"] == pytest.approx(
        corpus.recall_at(corpus.weak, planted.K) - corpus.recall_at(corpus.good, planted.K)
    )
    assert by[RR[expr]]["diff"] == pytest.approx(corpus.rr(corpus.weak) - corpus.rr(corpus.good))
    assert all(c["significant"] and c["diff"] < 0 for c in by.values())  # the weak system is worse


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_diagnose_finds_the_failing_queries_and_their_stage(
    expr: str, files: dict[str, Path], corpus: planted.Corpus
) -> None:
    doc = as_json("diagnose", "--samples", files[f"{expr}_weak.jsonl"], "-k", planted.K)
    ids = corpus.qids if expr != "ragas" else [f"line-{i}" for i in range(1, len(corpus.qids) + 1)]
    named = dict(zip(ids, corpus.qids))  # RAGAS files have no query ids: the samples are named by line
    failing = {named[q["query_id"]]: q["verdict"] for q in doc["queries"] if q["verdict"] != "healthy"}
    assert failing == corpus.failing()
    assert doc["advice"].startswith("fix the reranker")  # 18 selection failures against 6 retrieval ones
    from scipy.stats import binomtest

    s, r = planted.CLASSES["S"], planted.CLASSES["Rt"]
    assert doc["sign_test_p"] == pytest.approx(binomtest(s, s + r).pvalue)  # exact two-sided sign test


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_distraction_verdicts_or_what_they_need(expr: str, files: dict[str, Path], corpus: planted.Corpus) -> None:
    doc = as_json("distraction", "--samples", *pair(files, expr), "-k", planted.DK)
    rows = {r["run"]: r for r in doc["rows"]}
    # the good system's top 3 are its three references: no distractor, whatever the labels' kind
    assert rows["good"]["distractor_rate"] == corpus.distractor_rate(corpus.good, planted.DK) == 0.0
    assert rows["good"]["verdict"] == "SAFE"
    if expr == "graded":  # the grades name the planted distractors
        assert rows["weak"]["distractor_rate"] == pytest.approx(corpus.distractor_rate(corpus.weak, planted.DK))
        assert rows["weak"]["verdict"] == "DANGEROUS"
    else:  # reference ids say nothing of the planted distractors: no verdict, and what would give one
        assert rows["weak"]["verdict"] == "NA" and rows["weak"]["distractor_rate"] is None
        assert "ctxeval judge utility --samples" in rows["weak"]["verdict_reason"]
        # every weak top 3 holds D1 or D2 (no reference): each query is without a verdict, and it says how many
        n = len(corpus.qids)
        assert rows["weak"]["verdict_reason"].startswith(
            f"no verdict: in {n} of {n} queries the top {planted.DK} holds chunks nobody labelled"
        )
        assert rows["weak"]["hard_negatives"]["top_k"]["unlabelled"] == 0


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_calibrate_recommends_the_planted_k(expr: str, files: dict[str, Path], corpus: planted.Corpus) -> None:
    res = run("calibrate", "--samples", files[f"{expr}_good.jsonl"], "-k", 10, "--force")
    policy = json.loads(res.stdout)
    assert policy["checks"]["recommended_fixed_k"] == corpus.best_fixed_k(corpus.good) == 3
    if expr != "graded":  # binary labels cannot weigh the distractors at ranks 4 and 6: it says so
        assert any("on binary labels no passage costs anything" in n for n in policy["notes"])
        # and a flat tail (ranks 4..10 cost nothing) is no hint that the optimum lies beyond -k 10 ...
        assert not policy["checks"]["optimum_at_grid_edge"]
        # ... while at -k 2 the third reference lies beyond the grid: that is its edge
        short = json.loads(run("calibrate", "--samples", files[f"{expr}_good.jsonl"], "-k", 2, "--force").stdout)
        assert short["checks"]["optimum_at_grid_edge"] and any("grid's edge" in n for n in short["notes"])


def test_pool_is_the_union_of_the_top_k(files: dict[str, Path], corpus: planted.Corpus) -> None:
    res = run("pool", "--samples", *pair(files, "refs")[:1], "--samples", pair(files, "refs")[1], "--depth", planted.K)
    got = [tuple(line.split()) for line in res.stdout.splitlines()]
    want: dict[tuple[str, str], int] = {}
    for ranking in (corpus.good, corpus.weak):
        for q in corpus.qids:
            for rank, d in enumerate(ranking[q][: planted.K], start=1):
                want[(q, d)] = min(rank, want.get((q, d), rank))
    assert sorted(got) == sorted((q, d, str(r)) for (q, d), r in want.items())
    # as the other commands take them: --samples A B (B a sample set too), names included
    same = run("pool", "--samples", *pair(files, "refs"), "--depth", planted.K)
    assert same.stdout == res.stdout and "good " in same.stderr and "weak " in same.stderr


def test_the_lexical_judge_cannot_see_a_planted_distractor(judged: Path, corpus: planted.Corpus) -> None:
    out = judged
    grades = {d: int(g) for _, _, d, g in (line.split() for line in out.read_text().splitlines())}
    # word overlap with the question: references and distractors hold all three question words (5),
    # fillers one of three (1 + round(4/3) = 2); the heuristic cannot tell a plausible wrong answer
    want = {"R": 5, "D": 5, "F": 2}
    assert grades == {d: want[corpus.kind(d)[0]] for q in corpus.qids for d in corpus.good[q][: planted.K]}


def test_evaluate_on_judge_labels_says_who_wrote_them_and_how_deep(files: dict[str, Path], judged: Path) -> None:
    out = judged
    notes = " ".join(as_json("evaluate", out, files["good.run"], "-m", "nDCG@10")["notes"])
    assert "heuristic" in notes and "top 5 of each list" in notes and "Judged@10 of each run evaluated" in notes


def test_agreement_does_not_let_the_heuristic_replace_people(
    files: dict[str, Path], corpus: planted.Corpus, judged: Path
) -> None:
    """The word-overlap judge grades the good list's top K. Each planted distractor holds all three
    question words (overlap 1: grade 5), so every distractor in those lists is called relevant; the
    card rejects the judge for it, whatever its binarized kappa and its tau over two runs."""
    out = judged
    doc = as_json("agreement", files["human.qrels"], out, files["good.run"], files["weak.run"])
    assert doc["verdict"]["verdict"] != "replace"
    planted_d = sum(corpus.kind(d).startswith("D") for q in corpus.qids for d in corpus.good[q][: planted.K])
    assert doc["labels"]["distractors"] == {
        "grade": 1,
        "pairs": planted_d,
        "called_relevant": planted_d,
        "share": 1.0,
        "flag": True,
    }
    assert doc["verdict"]["verdict"] == "reject"
    assert doc["labels"]["alpha_ordinal"] < 0


def test_agreement_on_reference_ids_reads_them_as_binary(
    files: dict[str, Path], corpus: planted.Corpus, judged: Path
) -> None:
    """People's reference ids (R1-R3, all "1") against the word-overlap judge's 1-5 on the good list's top
    K: the card compares binarized labels, says kappa cannot be measured on relevant-only labels, and
    counts the references the judge calls relevant (all: each holds the three question words, grade 5)."""
    out = judged
    doc = as_json("agreement", files["refs_good.jsonl"], out)
    n = sum(corpus.kind(d).startswith("R") for q in corpus.qids for d in corpus.good[q][: planted.K])
    assert n == 3 * len(corpus.qids)
    assert doc["coverage"]["both"] == n and doc["verdict"]["verdict"] == "none"
    assert f"the judge calls {n} of those {n} relevant (100.0%" in doc["labels"]["positives_only"]
    assert "people's labels are all relevant" in doc["verdict"]["text"]
