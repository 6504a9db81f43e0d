"""Several sample sets read together (issue 29, points 14 and 15): RAGAS text-only files are paired by
their questions, not by row position (a filtered or asynchronous export lists them in another order),
and each set keeps its own references (a file beside it no longer changes its figures)."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli
from real_data import dl19_grades, dl19_ranked, dl19_texts, real
from scenario import planted

MEASURES = ["IDBasedContextRecall", "IDBasedContextPrecision", "RR", "nDCG@10", "ContextRecall(method=similarity)"]


def _rows(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text().splitlines()]


def _write(p: Path, rows: list[dict]) -> Path:
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return p


def _figures(a: Path, b: Path) -> tuple[dict, dict]:
    rep = ctxeval.compare(samples={"a": a, "b": b}, measures=MEASURES)
    means = {(r, m): rep.result[r].mean(m) for r in ("a", "b") for m in MEASURES}
    tests = {m: rep.comparison("b", m).p_value for m in MEASURES}
    return means, tests


def test_ragas_text_files_are_paired_by_question_whatever_their_row_order(tmp_path: Path) -> None:
    files = planted.write(planted.make(), tmp_path)
    rows = _rows(files["ragas_weak.jsonl"])
    shuffled = _write(tmp_path / "weak_shuffled.jsonl", random.Random(3).sample(rows, len(rows)))
    in_order = _figures(files["ragas_good.jsonl"], files["ragas_weak.jsonl"])
    assert _figures(files["ragas_good.jsonl"], shuffled) == in_order
    # the planted truth: recall@10 of the weak pipeline (ids written by construction)
    corpus = planted.make()
    assert in_order[0][("b", "IDBasedContextRecall")] == pytest.approx(corpus.recall_at(corpus.weak, 10), abs=1e-12)
    assert in_order[0][("b", "RR")] == pytest.approx(corpus.rr(corpus.weak), abs=1e-12)


def _dl19_ragas(tmp: Path, system: str) -> tuple[Path, dict[str, float]]:
    """RankVicuna's top 10 over a first stage, as a RAGAS text-only file (user_input,
    retrieved_contexts, reference_contexts: the texts of the passages NIST graded >= 2), and the
    truth by ids: recall@10 = |top 10 ∩ references| / |references| per question."""
    text, grades, ranked = dl19_texts(), dl19_grades(), dl19_ranked(f"rankvicuna_on_{system}.top100.txt")
    topics = dict(line.split("\t", 1) for line in real("dl19", "topics.dl19-passage.txt").read_text().splitlines())
    refs = {q: sorted(d for d, g in docs.items() if g >= 2) for q, docs in grades.items()}
    rows, truth = [], {}
    for q in sorted(ranked):
        top = ranked[q][:10]
        rows.append({"user_input": topics[q], "retrieved_contexts": [text[d] for d in top],
                     "reference_contexts": [text[d] for d in refs[q]]})  # fmt: skip
        ref_texts = {text[d] for d in refs[q]}
        truth[topics[q]] = len({text[d] for d in top} & ref_texts) / len(ref_texts)
    return _write(tmp / f"{system}.jsonl", rows), truth


def test_real_dl19_ragas_files_in_another_order_give_the_same_figures(tmp_path: Path) -> None:
    bm25, truth_bm25 = _dl19_ragas(tmp_path, "bm25")
    tasb, truth_tasb = _dl19_ragas(tmp_path, "tasb")
    rows = _rows(tasb)
    shuffled = _write(tmp_path / "tasb_shuffled.jsonl", random.Random(5).sample(rows, len(rows)))
    ms = ["IDBasedContextRecall", "nDCG@10", "RR"]
    a = ctxeval.compare(samples={"bm25": bm25, "tasb": tasb}, measures=ms)
    b = ctxeval.compare(samples={"bm25": bm25, "tasb": shuffled}, measures=ms)
    for m in ms:
        for run in ("bm25", "tasb"):
            assert b.result[run].mean(m) == a.result[run].mean(m)
        assert b.comparison("tasb", m).p_value == a.comparison("tasb", m).p_value
    # the truth by passage ids (texts as the chunks' names: duplicated texts are one chunk)
    for path, truth in ((bm25, truth_bm25), (shuffled, truth_tasb)):
        per_q = ctxeval.evaluate(samples=path, measures=["IDBasedContextRecall"]).runs[0]
        s = ctxeval.Samples.from_path(path)
        by_question = {x.question: per_q.per_query("IDBasedContextRecall")[x.query_id] for x in s.samples}
        assert by_question == pytest.approx(truth, abs=1e-12)


def test_files_that_disagree_on_their_questions_are_refused_naming_the_rows(tmp_path: Path) -> None:
    files = planted.write(planted.make(), tmp_path)
    rows = _rows(files["ragas_weak.jsonl"])
    good = files["ragas_good.jsonl"]
    missing = _write(tmp_path / "missing.jsonl", rows[:-1])
    with pytest.raises(
        ctxeval.InputError, match=r"1 question\(s\) of .*ragas_good\.jsonl \(line-40: .*are not in .*missing\.jsonl"
    ):
        ctxeval.compare(samples={"a": good, "b": missing}, measures=["RR"])
    twice = _write(tmp_path / "twice.jsonl", [*rows[:-1], {**rows[-1], "user_input": rows[0]["user_input"]}])
    with pytest.raises(ctxeval.InputError, match=r"twice\.jsonl: samples line-1 and line-40 ask the same question"):
        ctxeval.evaluate(samples={"a": good, "b": twice}, measures=["RR"])
    by_id = _write(tmp_path / "by_id.jsonl", [{**r, "query_id": f"q{i}"} for i, r in enumerate(rows)])
    res = CliRunner().invoke(cli, ["compare", "--samples", f"a={good}", f"b={by_id}", "-m", "RR"])
    assert res.exit_code == 2 and "names its samples by position (no query_id) and" in res.stderr
    # one file alone is named by position, as before, and says so
    alone = ctxeval.Samples.from_path(good)
    assert alone.by_position and alone.samples[0].query_id == "line-1"


def test_each_set_keeps_its_own_references(tmp_path: Path) -> None:
    """bm25.jsonl beside a file whose chunk ids follow another scheme than its own references (none
    matches): bm25's figures are what it scores alone, the other file scores 0 with a note, and compare
    refuses the pair."""
    files = planted.write(planted.make(), tmp_path)
    bm25 = files["refs_weak.jsonl"]
    other_rows = [
        {**r, "reference_ids": [f"doc:{d}" for d in r["reference_ids"]]} for r in _rows(files["refs_good.jsonl"])
    ]
    other = _write(tmp_path / "other.jsonl", other_rows)
    ms = ["nDCG@10", "RR", "IDBasedContextRecall"]
    alone = ctxeval.evaluate(samples={"bm25": bm25}, measures=ms).runs[0]
    both = ctxeval.evaluate(samples={"bm25": bm25, "other": other}, measures=ms)
    assert {m: both["bm25"].mean(m) for m in ms} == {m: alone.mean(m) for m in ms}
    assert {m: both["other"].mean(m) for m in ms} == dict.fromkeys(ms, 0.0)
    assert any(
        "each set is scored against its own references, so their figures do not compare" in n for n in both.notes
    )
    assert any("other.jsonl: on none of its 40 queries with references is a retrieved chunk one of them" in n
               for n in both.notes)  # fmt: skip
    with pytest.raises(
        ctxeval.ConfigError,
        match=r"query 'q00': .*refs_weak\.jsonl and .*other\.jsonl give different reference ids \(3 only in .*refs_weak\.jsonl .*; 3 only in .*other\.jsonl \('doc:q00-R1'",
    ):
        ctxeval.compare(samples={"bm25": bm25, "other": other}, measures=ms)
    res = CliRunner().invoke(cli, ["distraction", "--samples", f"bm25={bm25}", f"other={other}", "-k", "3"])
    assert res.exit_code == 2 and "(and 39 more queries)" in res.stderr


def test_graded_judgments_are_pooled_where_they_agree(tmp_path: Path) -> None:
    a = [{"query_id": "q1", "retrieved_ids": ["x", "y"], "grades": {"x": 3}}]
    b = [{"query_id": "q1", "retrieved_ids": ["y", "z"], "grades": {"z": 2, "x": 3}}]
    res = ctxeval.evaluate(samples={"a": a, "b": b}, measures=["nDCG@2"])
    # pooled judgments x 3, z 2 (trec_eval's gains: the grade): a retrieves x at 1, y unjudged -> DCG 3,
    # IDCG 3 + 2/log2 3; b retrieves y (unjudged), z at 2 -> DCG 2/log2 3
    ideal = 3 + 2 / math.log2(3)
    assert res["a"].mean("nDCG@2") == pytest.approx(3 / ideal, abs=1e-12)
    assert res["b"].mean("nDCG@2") == pytest.approx(2 / math.log2(3) / ideal, abs=1e-12)
