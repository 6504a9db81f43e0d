"""The reading rule for tables (CSV/TSV, JSON lines, JSON mappings): BOM skipped, duplicated header
names refused, NUL bytes and out-of-range numbers one-line errors, BEIR's files read as they are."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxeval

CASES = [
    ("q.csv", b"\xef\xbb\xbfquery_id,doc_id,relevance\nq1,d1,1\n", {"q1": {"d1": 1}}),
    ("q.csv", b"\xef\xbb\xbf\nquery_id,doc_id,relevance\nq1,d1,1\n", {"q1": {"d1": 1}}),
    ("q.jsonl", b'\xef\xbb\xbf{"query_id":"q1","doc_id":"d1","relevance":1}\n', {"q1": {"d1": 1}}),
    ("q.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n", {"q1": {"d1": 1, "d2": 0}}),
    ("q.tsv", b"q1\td1\t2\nq1\td2\t0\n", {"q1": {"d1": 2, "d2": 0}}),
    ("q.json", b'{"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}', {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}),
    ("q.csv", b"query_id,doc_id,relevance,doc_id\nq1,d1,1,d2\n", ":1: the header names the column 'doc_id' twice"),
    ("q.csv", b"Query_ID,doc_id,relevance,query_id\nq1,d1,1,q2\n", ":1: the header names the column 'query_id' twice"),
    ("q.csv", b"query_id,doc_id,relevance\nq1,d\x001,1\n", ":2: a NUL byte in doc_id"),
    ("q.jsonl", b'{"query_id":"q1","doc_id":"d\\u00001","relevance":1}\n', ":1: a NUL byte in doc_id"),
    ("q.csv", b"query_id,doc_id,relevance\nq1,d1,1e39\n", ":2: relevance '1e39' is out of range"),
    ("q.csv", b"query_id,doc_id,relevance\nq1,d1,3.5e38\n", ":2: relevance '3.5e38' is out of range"),
    ("q.jsonl", b'{"query_id":"q1","doc_id":"d1","relevance":123456789012345678901234567890}\n', ":1: relevance 123456789012345678901234567890 is out of range"),
    ("q.csv", b"query_id,doc_id,relevance\nq1,d1,1_0\n", ":2: relevance '1_0' is not an integer"),
    ("q.jsonl", '{"query_id":"q1","doc_id":"d1","relevance":"\u0663"}\n'.encode(), ":1: relevance '\u0663' is not an integer"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "data", "expected"), CASES)
def test_tables_follow_the_rule(name: str, data: bytes, expected, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        if isinstance(expected, str):
            with pytest.raises(ctxeval.FormatError) as err:
                ctxeval.Qrels.from_file(path)
            assert f"{path}{expected}" in str(err.value)
        else:
            assert ctxeval.Qrels.from_file(path).to_dict() == expected


def test_a_json_mapping_is_a_run(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text('{"q1": {"d1": 0.5, "d2": 0.25}}')
    run = ctxeval.Run.from_file(path)
    assert (run.name, run.to_dict()) == ("run", {"q1": {"d1": 0.5, "d2": 0.25}})


def test_run_scores_follow_the_rule_in_csv(tmp_path: Path) -> None:
    path = tmp_path / "run.csv"
    for value, problem in (("1e400", "is not finite"), ("0_5", "is not a number"), ("\u0665", "is not a number")):
        path.write_text(f"query_id,doc_id,score\nq1,d1,{value}\n", encoding="utf-8")
        with pytest.raises(ctxeval.FormatError) as err:
            ctxeval.Run.from_file(path)
        assert f"{path}:2: score {value!r} {problem}" in str(err.value)


_CELL = st.sampled_from(["q1", "d1", "1", "0.5", "-2", "1e39", "1_0", "", " ", "\x00", "\u00a0", '"', "nan", "x"])


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    suffix=st.sampled_from([".csv", ".tsv", ".jsonl", ".json"]),
    kind=st.sampled_from(["qrels", "run"]),
    data=st.one_of(
        st.binary(max_size=200),
        st.lists(st.lists(_CELL, min_size=1, max_size=5), max_size=6).map(
            lambda rows: "\n".join(",".join(r) for r in [["query_id", "doc_id", "relevance", "score"], *rows]).encode()
        ),
    ),
)
def test_arbitrary_table_bytes_give_a_result_or_a_ctxeval_error(
    suffix: str, kind: str, data: bytes, tmp_path: Path
) -> None:
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(data)
    message = ""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            (ctxeval.Run if kind == "run" else ctxeval.Qrels).from_file(path)
        except ctxeval.CtxevalError as exc:
            message = str(exc)
    assert "\n" not in message  # one line


def test_a_column_mapping_names_the_columns_of_any_table(tmp_path: Path) -> None:
    qrels = tmp_path / "q.tsv"
    qrels.write_text("topic\tpassage\tlabel_x\nq1\td1\t1\nq1\td2\t0\n")
    run = tmp_path / "r.csv"
    run.write_text("topic,passage,sim\nq1,d2,0.9\nq1,d1,0.5\n")
    columns = "qid=topic,doc=passage,grade=label_x,score=sim"
    assert ctxeval.Qrels.from_file(qrels, columns=columns).to_dict() == {"q1": {"d1": 1, "d2": 0}}
    assert ctxeval.Run.from_file(run, columns={"qid": "topic", "doc": "passage", "score": "sim"}).to_dict() == {
        "q1": {"d2": 0.9, "d1": 0.5}
    }
    # one mapping for both files: RR = 1/2 (d2, grade 0, ranks first); the settings say which mapping
    res = ctxeval.evaluate(qrels, run, "RR", policies={"columns": columns})
    assert res.runs[0].mean("RR") == 0.5
    assert res.settings["columns"] == {"doc": "passage", "grade": "label_x", "qid": "topic", "score": "sim"}
    jl = tmp_path / "r.jsonl"
    jl.write_text('{"topic": "q1", "passage": "d2", "sim": 0.9}\n')
    assert ctxeval.Run.from_file(jl, columns=columns).to_dict() == {"q1": {"d2": 0.9}}


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ("dok=passage", "columns: unknown role 'dok' (did you mean 'doc'?)"),
        ("qid", "columns: 'qid' is not ROLE=COLUMN"),
        ("qid=a,qid=b", "columns: role 'qid' given twice"),
        ("qid=a,doc=a", "columns: one column named for two roles"),
    ],
)
def test_a_bad_column_mapping_is_refused_before_reading(columns: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ctxeval.ConfigError) as err:
        ctxeval.evaluate(tmp_path / "none.tsv", tmp_path / "none.csv", "RR", policies={"columns": columns})
    assert message in str(err.value)


def test_a_column_mapping_is_refused_for_trec_text(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\n")
    with pytest.raises(ctxeval.ConfigError, match="not of TREC text"):
        ctxeval.Qrels.from_file(path, columns="qid=topic")
