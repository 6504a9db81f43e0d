"""Runs are named by NAME=PATH, else by their tag, and runs sharing a tag fall back to their files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli

QRELS = "q1 0 a 1\nq1 0 b 0\n"


def _run(path: Path, first: str, tag: str = "rank") -> Path:
    other = "b" if first == "a" else "a"
    path.write_text(f"q1 Q0 {first} 1 2 {tag}\nq1 Q0 {other} 2 1 {tag}\n")
    return path


@pytest.fixture
def qrels(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text(QRELS)
    return tmp_path / "qrels.txt"


def test_runs_sharing_a_tag_are_named_by_their_files_and_a_note_says_so(qrels: Path, tmp_path: Path) -> None:
    good, bad = _run(tmp_path / "good.run", "a"), _run(tmp_path / "bad.run", "b")
    res = ctxeval.evaluate(qrels, [good, bad], "RR")
    assert [r.name for r in res.runs] == ["good", "bad"]
    assert [r.mean("RR") for r in res.runs] == [1.0, 0.5]
    assert res.notes == ["2 runs share the name 'rank' (their tag): named by their files instead (good, bad)"]
    assert res.to_dict()["notes"] == res.notes


def test_files_with_one_stem_fall_back_to_numbers(qrels: Path, tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    one, two = _run(tmp_path / "run.txt", "a"), _run(tmp_path / "x" / "run.txt", "b")
    res = ctxeval.evaluate(qrels, [one, two], "RR")
    assert [r.name for r in res.runs] == ["rank", "rank#2"]
    assert res.notes == ["2 runs share the name 'rank' (their tag): numbered instead (rank#2)"]


def test_distinct_tags_need_no_note(qrels: Path, tmp_path: Path) -> None:
    res = ctxeval.evaluate(qrels, [_run(tmp_path / "1.run", "a", "bm25"), _run(tmp_path / "2.run", "b", "dense")], "RR")
    assert [r.name for r in res.runs] == ["bm25", "dense"]
    assert res.notes == []
    assert "notes" not in res.to_dict()


def test_name_equals_path_names_a_run_on_the_command_line_and_in_python(qrels: Path, tmp_path: Path) -> None:
    good, bad = _run(tmp_path / "good.run", "a"), _run(tmp_path / "bad.run", "b")
    res = ctxeval.evaluate(qrels, [f"mine={good}", f"theirs={bad}"], "RR")
    assert [r.name for r in res.runs] == ["mine", "theirs"]
    out = CliRunner().invoke(
        cli, ["evaluate", str(qrels), f"mine={good}", f"theirs={bad}", "-m", "RR", "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    assert [r["name"] for r in json.loads(out.stdout)["runs"]] == ["mine", "theirs"]


def test_a_file_whose_name_holds_an_equals_sign_is_read_as_a_file(qrels: Path, tmp_path: Path) -> None:
    odd = _run(tmp_path / "k=5.run", "a", "bm25")
    assert ctxeval.evaluate(qrels, str(odd), "RR").runs[0].name == "bm25"


def test_name_equals_a_missing_path_is_a_missing_file(qrels: Path, tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["evaluate", str(qrels), f"mine={tmp_path / 'nope.run'}", "-m", "RR"])
    assert out.exit_code == 2
    assert "nope.run" in out.stderr
