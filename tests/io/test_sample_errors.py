"""Bad sample-set input, shaped like the cases met in the field: each is one line on the terminal
(``ctxeval: error: FILE:LINE: problem``, exit 2, no traceback) naming the file, the line and what to do."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval import ConfigError, InputError
from ctxeval._cli import cli

GOOD = '{"query_id": "q1", "retrieved_ids": ["a", "b"], "reference_ids": ["a"]}\n'

# (file name, content, the error line after "ctxeval: error: <dir>/")
CASES = [
    (
        "misspelled.jsonl",
        GOOD + '{"query_id": "q2", "retreived_ids": ["c"], "reference_ids": ["c"]}\n',
        "misspelled.jsonl:2: unknown field 'retreived_ids' (did you mean 'retrieved_ids'?)",
    ),
    (
        "misspelled_ref.jsonl",
        '{"query_id": "q1", "retrieved_ids": ["a"], "reference_id": ["a"]}\n',
        "misspelled_ref.jsonl:1: unknown field 'reference_id' (did you mean 'reference_ids'?)",
    ),
    (
        "wrong_fields.jsonl",
        '{"qid": "q1", "docs": ["a"], "gold": ["a"]}\n',
        "wrong_fields.jsonl: no sample gives the retrieved chunks (retrieved, retrieved_ids or retrieved_contexts; "
        "RAGAS: retrieved_context_ids); the fields are: docs, gold, qid",
    ),
    (
        "wrong_columns.csv",
        'qid,docs,gold\nq1,"[""a""]","[""a""]"\n',
        "wrong_columns.csv: no sample gives the retrieved chunks (retrieved, retrieved_ids or retrieved_contexts; "
        "RAGAS: retrieved_context_ids); the columns are: docs, gold, qid",
    ),
    (
        "ragged.csv",
        'query_id,retrieved_ids,reference_ids\nq1,"[""a""]","[""a""]"\nq2,"[""b""]"\n',
        "ragged.csv:3: 2 fields, but the header has 3 (query_id, retrieved_ids, reference_ids) (line: 'q2,[\"b\"]')",
    ),
    (
        "ragged_long.csv",
        'query_id,retrieved_ids\nq1,"[""a""]",extra\n',
        "ragged_long.csv:2: 3 fields, but the header has 2 (query_id, retrieved_ids) (line: 'q1,[\"a\"],extra')",
    ),
    (
        "deep.jsonl",
        GOOD + '{"query_id": "q2", "retrieved_ids": ["c"], "meta": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        "deep.jsonl:2: JSON nested too deeply to read",
    ),
    (
        "huge_score.jsonl",
        '{"query_id": "q1", "retrieved_ids": ["a"], "retrieved_scores": [' + "9" * 400 + '], "reference_ids": ["a"]}\n',
        "huge_score.jsonl:1: retrieved_scores[1] must be a finite number, got an integer of 400 digits",
    ),
    (
        "huge_grade.jsonl",
        '{"query_id": "q1", "retrieved_ids": ["a"], "grades": {"a": ' + "9" * 30 + "}}\n",
        "huge_grade.jsonl:1: grades['a'] must be a whole number within 64 bits, got one of 30 digits",
    ),
    (
        "too_long.jsonl",
        '{"query_id": "q1", "retrieved_ids": ["a"], "grades": {"a": ' + "9" * 5000 + "}}\n",
        "too_long.jsonl:1: not valid JSON (Exceeds the limit (4300 digits) for integer string conversion: "
        "value has 5000 digits)",
    ),
    (
        "two_names.jsonl",
        '{"query_id": "q1", "question": "a?", "user_input": "b?", "retrieved_ids": ["a"]}\n',
        "two_names.jsonl:1: question and user_input give different values; give one of them",
    ),
    (
        "both_forms.jsonl",
        '{"query_id": "q1", "retrieved": ["a"], "retrieved_ids": ["a"]}\n',
        "both_forms.jsonl:1: retrieved and retrieved_ids both give the retrieved chunks; give one of them",
    ),
]


@pytest.mark.parametrize(("name", "text", "message"), CASES, ids=[c[0] for c in CASES])
def test_bad_sample_files_give_one_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(cli, ["evaluate", "--samples", str(path), "-m", "ContextRecall"])
    assert res.exit_code == 2, res.output
    assert res.stderr == f"ctxeval: error: {tmp_path}/{message}\n"


def test_wrong_parquet_and_frame_columns_are_listed(tmp_path: Path) -> None:
    frame = pl.DataFrame({"qid": ["q1"], "docs": [["a"]], "gold": [["a"]]})
    frame.write_parquet(tmp_path / "s.parquet")
    with pytest.raises(
        InputError, match=r"s.parquet: no sample gives the retrieved chunks .*the columns are: docs, gold, qid$"
    ):
        ctxeval.evaluate(samples=str(tmp_path / "s.parquet"), measures=["ContextRecall"])
    with pytest.raises(
        InputError, match=r"<samples frame>:1: unknown field 'retrieved_id' \(did you mean 'retrieved_ids'\?\)"
    ):
        ctxeval.Samples.from_frame(pl.DataFrame({"query_id": ["q1"], "retrieved_id": [["a"]]}))


def test_columns_with_samples_is_refused(tmp_path: Path) -> None:
    """--columns names QRELS and RUN columns; given with --samples it was silently ignored."""
    path = tmp_path / "s.jsonl"
    path.write_text(GOOD)
    for command in (["evaluate"], ["curve", "-k", "1", "-m", "RR"], ["diagnose", "-k", "1"]):
        res = CliRunner().invoke(cli, [*command, "--samples", str(path), "--columns", "qid=question_id"])
        assert res.exit_code == 2, (command, res.output)
        assert res.stderr.startswith("ctxeval: error: columns (--columns) names the columns of qrels and run tables")
        assert res.stderr.count("\n") == 1
    with pytest.raises(ConfigError, match="a sample set names its fields itself"):
        ctxeval.evaluate(samples=str(path), measures=["RR"], policies={"columns": "qid=question_id"})
