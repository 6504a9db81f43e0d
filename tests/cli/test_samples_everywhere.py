"""Sample sets reach every verb: NAME=FILE, dicts of named sets, ``samples=`` in Python, ``pool --samples``,
and ``policies={"columns": ...}`` for frames as for files."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli

# bm25 finds a at rank 1 of q1 and d at rank 2 of q2; dense the other way round
BM25 = [
    {"query_id": "q1", "retrieved_ids": ["a", "x"], "reference_ids": ["a"]},
    {"query_id": "q2", "retrieved_ids": ["y", "d"], "reference_ids": ["d"]},
]
DENSE = [
    {"query_id": "q1", "retrieved_ids": ["x", "a"], "reference_ids": ["a"]},
    {"query_id": "q2", "retrieved_ids": ["d", "y"], "reference_ids": ["d"]},
]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    out = []
    for name, rows in (("one.jsonl", BM25), ("two.jsonl", DENSE)):
        p = tmp_path / name
        p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out.append(p)
    return out[0], out[1]


def test_named_sample_files_on_the_command_line(files: tuple[Path, Path]) -> None:
    a, b = files
    res = CliRunner().invoke(cli, ["evaluate", "--samples", f"bm25={a}", f"dense={b}", "-m", "RR", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    # RR: bm25 (1 + 1/2) / 2 = 0.75; dense (1/2 + 1) / 2 = 0.75
    assert [(r["name"], r["aggregate"]["RR"]) for r in doc["runs"]] == [("bm25", 0.75), ("dense", 0.75)]


def test_dicts_of_named_sets_take_frames_paths_and_samples(files: tuple[Path, Path]) -> None:
    a, _ = files
    frame = pl.DataFrame(DENSE)
    res = ctxeval.evaluate(samples={"bm25": str(a), "dense": frame.to_pandas()}, measures=["RR@1"])
    # RR@1: bm25 finds a at 1 on q1 only -> 0.5; dense d at 1 on q2 only -> 0.5
    assert {r.name: r.mean("RR@1") for r in res.runs} == {"bm25": 0.5, "dense": 0.5}
    st = ctxeval.Samples.from_records(BM25, name="whatever")
    assert ctxeval.evaluate(samples={"mine": st}, measures=["RR"]).runs[0].name == "mine"


def test_every_python_verb_takes_samples(files: tuple[Path, Path]) -> None:
    a, b = files
    named = {"bm25": str(a), "dense": str(b)}
    curve = ctxeval.metric_at_k(samples=named, measures=["R"], k="1:2")
    # R@1: bm25 1/2 (q1 only), R@2: 1 for both
    assert [s["values"] for s in curve["series"]] == [[0.5, 1.0], [0.5, 1.0]]
    d = ctxeval.diagnose(samples=str(a), k=1)
    assert d["q1"].verdict == "healthy" and d["q2"].verdict == "selection"  # d sits at rank 2 > K
    t = ctxeval.distraction_table(samples=named, k=1)
    assert [row["run"] for row in t["rows"]] == ["bm25", "dense"]
    cal = ctxeval.calibrate(samples=str(a), k=2, folds=2)
    assert cal.policy["in_sample"]["objective_at_best_fixed_k"] == pytest.approx(1.0)  # both references at K=2
    rep = ctxeval.compare(samples=named, measures=["RR@1"], stats={"permutations": 100, "resamples": 100})
    assert rep.comparison("dense", "RR@1").diff == pytest.approx(0.0)
    with pytest.raises(ctxeval.ConfigError, match="one sample set"):
        ctxeval.diagnose(samples=[str(a), str(b)], k=1)


def test_pool_writes_the_best_rank_it_promises(files: tuple[Path, Path]) -> None:
    a, b = files
    runner = CliRunner()
    assert "best_rank" in runner.invoke(cli, ["pool", "--help"]).output
    res = runner.invoke(cli, ["pool", "--samples", f"bm25={a}", "--samples", f"dense={b}", "--depth", "2"])
    assert res.exit_code == 0, res.output
    # q1: a is rank 1 in bm25, x rank 1 in dense; q2: y rank 1 in bm25, d rank 1 in dense
    assert res.stdout.splitlines() == ["q1 a 1", "q1 x 1", "q2 d 1", "q2 y 1"]
    shallow = runner.invoke(cli, ["pool", "--samples", str(a), "--depth", "1"])
    assert shallow.stdout.splitlines() == ["q1 a 1", "q2 y 1"]


def test_pool_of_unlabelled_sample_sets_writes_texts(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(
        json.dumps(
            {"query_id": "q1", "question": "Q?", "retrieved": [{"id": "a", "text": "A."}, {"id": "b", "text": "B."}]}
        )
        + "\n",
        encoding="utf-8",
    )
    res = CliRunner().invoke(cli, ["pool", "--samples", str(p), "--texts", "--depth", "1"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"query_id": "q1", "question": "Q?", "doc_id": "a", "text": "A.", "best_rank": 1}


@pytest.mark.parametrize("kind", ["polars", "pandas"])
def test_columns_policy_applies_to_frames(kind: str) -> None:
    q = pl.DataFrame({"topic": ["q1", "q1"], "passage": ["a", "b"], "label": [1, 0]})
    r = pl.DataFrame({"topic": ["q1", "q1"], "passage": ["a", "b"], "sim": [0.2, 0.9]})
    if kind == "pandas":
        q, r = q.to_pandas(), r.to_pandas()
    cols = {"columns": "qid=topic,doc=passage,grade=label,score=sim"}
    # b (0.9) ranks above a (0.2): RR = 1/2
    assert ctxeval.evaluate(q, r, ["RR"], policies=cols).runs[0].mean("RR") == 0.5
    assert isinstance(q, (pd.DataFrame, pl.DataFrame))


def test_relevance_error_names_the_field(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(json.dumps({"query_id": "q1", "question": "Q?", "retrieved": [{"id": "a", "text": "A."}]}) + "\n")
    res = CliRunner().invoke(
        cli, ["judge", "relevance", "--samples", str(p), "--judge", "lexical", "--cache", str(tmp_path / "c.sqlite")]
    )
    assert res.exit_code == 2 and "reference_answer" in res.output and "RAGAS's reference" in res.output


def test_a_note_two_files_give_with_different_counts_is_one_line(tmp_path: Path) -> None:
    """Text-only files whose references are excerpts of their chunks: 2 in one file, 1 in the other
    (counted by hand below); the excerpt note is said once, with each file's count."""
    chunk = "the quick brown fox jumps over the lazy dog " * 5
    rows = {
        "one.jsonl": [
            {
                "user_input": "q?",
                "retrieved_contexts": [chunk, "other"],
                "reference_contexts": [chunk[:20], chunk[4:30]],
            }
        ],
        "two.jsonl": [{"user_input": "q?", "retrieved_contexts": [chunk], "reference_contexts": [chunk[:20]]}],
    }
    args = []
    for name, recs in rows.items():
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        args.append(f"{name[:3]}={tmp_path / name}")
    res = CliRunner().invoke(cli, ["evaluate", "--samples", *args, "-m", "ContextRecall", "--format", "json"])
    assert res.exit_code == 0, res.output
    notes = [n.replace(f"{tmp_path}/", "") for n in json.loads(res.stdout)["notes"]]
    excerpts = [n for n in notes if "excerpt of a chunk" in n]
    assert len(excerpts) == 1 and excerpts[0].startswith(
        "2 sample sets: 2 (one.jsonl), 1 (two.jsonl) reference contexts equal no retrieved text but are contained in one"
    )


def test_agreement_takes_a_dict_of_named_runs_and_sample_sets(files: tuple[Path, Path]) -> None:
    a = files[0]
    refs = {"q1": {"a": 1}, "q2": {"d": 1}}
    judge = {"q1": {"a": 5, "x": 2}, "q2": {"d": 4, "y": 1}}
    dense_run = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"d": 2.0, "y": 1.0}}
    card = ctxeval.agreement(refs, judge, {"bm25": str(a), "dense": dense_run}, measure="RR")
    frame = card.to_pandas().set_index("run")
    # RR by hand: bm25 a at 1 (q1), d at 2 (q2): 0.75; dense a at 2, d at 1: 0.75 (the same under either side)
    assert list(frame.index) == ["bm25", "dense"]
    assert list(frame["people"]) == [0.75, 0.75] and list(frame["judge"]) == [0.75, 0.75]
