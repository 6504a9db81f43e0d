"""Readers: every format, and a table of malformed inputs with the exact error each gives."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ctxeval import DuplicateError, EmptyInputError, FormatError, InputError, Qrels, Run, evaluate
from ctxeval._cli import main

RUN_LINES = "q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 2.0 sys\nq2 Q0 d3 1 1.5 sys\n"
QREL_LINES = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


EXPECTED_RUN = {"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d3": 1.5}}
EXPECTED_QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}


@pytest.mark.parametrize(
    "text",
    [
        RUN_LINES,
        RUN_LINES.replace(" ", "\t"),
        "# a comment\n" + RUN_LINES + "\n",
        RUN_LINES.replace(" ", "  \t "),  # runs of mixed white space
        "  " + RUN_LINES.replace("\n", "  \n"),  # leading and trailing blanks (columns beyond six: an error)
        RUN_LINES.replace("\n", "\r\n"),  # Windows line ends
        "q1\tQ0\td1\t1\t  3.0\tsys\nq1\tQ0\td2\t2\t  2.0\tsys\nq2\tQ0\td3\t1\t  1.5\tsys\n",  # trec_eval's own layout
    ],
)
def test_trec_run_layouts(tmp_path: Path, text: str) -> None:
    run = Run.from_file(write(tmp_path, "r.txt", text))
    assert run.to_dict() == EXPECTED_RUN
    assert run.name == "sys"


def test_trec_gzip_and_qrels(tmp_path: Path) -> None:
    p = tmp_path / "run.gz"
    p.write_bytes(gzip.compress(RUN_LINES.encode()))
    assert Run.from_file(p).to_dict() == EXPECTED_RUN
    assert Qrels.from_file(write(tmp_path, "q.txt", QREL_LINES)).to_dict() == EXPECTED_QRELS


def test_header_formats(tmp_path: Path) -> None:
    csv = write(tmp_path, "r.csv", "qid,docid,score\nq1,d1,3\nq1,d2,2\nq2,d3,1.5\n")
    tsv = write(tmp_path, "q.tsv", "query_id\tdoc_id\trelevance\nq1\td1\t1\nq1\td2\t0\nq2\td3\t2\n")
    jl = write(
        tmp_path,
        "r.jsonl",
        "".join(
            json.dumps({"query_id": q, "doc_id": d, "score": s}) + "\n"
            for q, ds in EXPECTED_RUN.items()
            for d, s in ds.items()
        ),
    )
    assert Run.from_file(csv).to_dict() == EXPECTED_RUN
    assert Run.from_file(csv).name == "r"
    assert Qrels.from_file(tsv).to_dict() == EXPECTED_QRELS
    assert Run.from_file(jl).to_dict() == EXPECTED_RUN


def test_parquet_and_frames_roundtrip(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    run = Run.from_dict(EXPECTED_RUN, name="x")
    run.write_parquet(tmp_path / "r.parquet")
    back = Run.from_file(tmp_path / "r.parquet")
    assert back.to_dict() == EXPECTED_RUN and back.name == "x"
    df = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    assert Qrels.from_frame(df).to_dict() == {"q1": {"a": 1}, "q2": {"b": 0}}


def test_trec_writer_is_deterministic_and_ranked(tmp_path: Path) -> None:
    run = Run.from_dict({"q2": {"a": 1.0}, "q1": {"b": 1.0, "c": 1.0, "a": 2.0}}, name="n")
    run.write_trec(tmp_path / "a.txt")
    run.write_trec(tmp_path / "b.txt.gz")
    run.write_trec(tmp_path / "c.txt.gz")
    # ties broken by doc id descending: c before b
    assert (tmp_path / "a.txt").read_text() == "q1 Q0 a 1 2.0 n\nq1 Q0 c 2 1.0 n\nq1 Q0 b 3 1.0 n\nq2 Q0 a 1 1.0 n\n"
    assert (tmp_path / "b.txt.gz").read_bytes() == (tmp_path / "c.txt.gz").read_bytes()
    assert Run.from_file(tmp_path / "b.txt.gz").to_dict() == run.to_dict()


# A table of malformed inputs: (kind, file name, content, error class, exact message after the path)
MALFORMED = [
    (
        "run",
        "r.txt",
        "q1 Q0 d1 1 3.0 s\nq1 Q0 d2 2\n",
        FormatError,
        ":2: expected 6 fields (qid Q0 docid rank score tag), found 4 (line: 'q1 Q0 d2 2')",
    ),
    ("run", "r.txt", "q1 Q0 d1 1 abc s\n", FormatError, ":1: score 'abc' is not a number (line: 'q1 Q0 d1 1 abc s')"),
    (
        "run",
        "r.txt",
        "q1 Q0 d1 1 3.0 s\nq1 Q0 d2 2 nan s\n",
        FormatError,
        ":2: score 'nan' is not finite (line: 'q1 Q0 d2 2 nan s')",
    ),
    ("run", "r.txt", "q1 Q0 d1 1 inf s\n", FormatError, ":1: score 'inf' is not finite (line: 'q1 Q0 d1 1 inf s')"),
    ("run", "r.txt", "", EmptyInputError, ": the file is empty"),
    (
        "run",
        "r.txt",
        "# only a comment\n",
        EmptyInputError,
        ": no run lines found (the file is empty or only comments)",
    ),
    (
        "qrels",
        "q.txt",
        "q1 0 d1 1\nq1 0 d2 x\n",
        FormatError,
        ":2: relevance 'x' is not an integer (line: 'q1 0 d2 x')",
    ),
    ("qrels", "q.txt", "q1 0 d1 1.5\n", FormatError, ":1: relevance '1.5' is not an integer (line: 'q1 0 d1 1.5')"),
    (
        "qrels",
        "q.txt",
        "q1 0 d1\n",
        FormatError,
        ":1: expected 4 fields (qid iter docid grade), found 3 (line: 'q1 0 d1')",
    ),
    (
        "run",
        "r.csv",
        "qid,docid\nq1,d1\n",
        FormatError,
        ":1: no score column: expected one of score, sim, similarity; found qid, docid",
    ),
    (
        "run",
        "r.csv",
        "qid,docid,score\nq1,d1,2\nq1,d2\n",
        FormatError,
        ":3: expected 3 fields as in the header (line 1), found 2 (line: 'q1,d2')",
    ),
    (
        "run",
        "r.jsonl",
        '{"qid": "q1", "docid": "d1", "score": 1}\n{"qid": "q1", "docid": "d2", "score": "x"}\n',
        FormatError,
        ':2: score \'x\' is not a number (line: \'{"qid": "q1", "docid": "d2", "score": "x"}\')',
    ),
    (
        "run",
        "r.jsonl",
        '{"qid": "q1", "docid": "d1", "score": 1}\n{"qid": "q1",\n',
        FormatError,
        ':2: invalid JSON (Expecting property name enclosed in double quotes at column 14) (line: \'{"qid": "q1",\')',
    ),
    (
        "qrels",
        "q.jsonl",
        '{"qid": "q1", "docid": "", "rel": 1}\n',
        FormatError,
        ':1: docid is missing or empty (line: \'{"qid": "q1", "docid": "", "rel": 1}\')',
    ),
]


@pytest.mark.parametrize(("kind", "name", "content", "error", "message"), MALFORMED)
def test_malformed_inputs(tmp_path: Path, kind: str, name: str, content: str, error: type, message: str) -> None:
    path = write(tmp_path, name, content)
    loader = Run.from_file if kind == "run" else Qrels.from_file
    with pytest.raises(error) as info:
        loader(path)
    assert str(info.value) == f"{path}{message}"


def test_duplicate_run_pair_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "r.txt", "q1 Q0 d1 1 3.0 s\nq1 Q0 d2 2 2.0 s\nq1 Q0 d1 3 5.0 s\n")
    with pytest.raises(DuplicateError) as info:
        Run.from_file(path)
    assert str(info.value) == (
        f"{path}: duplicate run entry for query 'q1', doc 'd1' on lines 1 and 3; "
        "pass --duplicates first|best (duplicates='first' or 'best') to keep one"
    )
    assert Run.from_file(path, duplicates="first").to_dict() == {"q1": {"d1": 3.0, "d2": 2.0}}
    best = Run.from_file(path, duplicates="best")
    assert best.to_dict() == {"q1": {"d1": 5.0, "d2": 2.0}} and best.dropped_duplicates == 1


def test_dict_input_errors() -> None:
    with pytest.raises(InputError, match=r"\['q1'\]\['d1'\]: score 'x' is not a finite number"):
        Run.from_dict({"q1": {"d1": "x"}})  # type: ignore[dict-item]
    with pytest.raises(EmptyInputError):
        Qrels.from_dict({})


def test_cli_prints_one_line_and_exits_nonzero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    q = write(tmp_path, "q.txt", QREL_LINES)
    r = write(tmp_path, "r.txt", "q1 Q0 d1 1 abc s\n")
    assert main(["evaluate", str(q), str(r), "-m", "AP"]) == 2
    err = capsys.readouterr().err
    assert err == f"ctxeval: error: {r}:1: score 'abc' is not a number (line: 'q1 Q0 d1 1 abc s')\n"
    assert main(["evaluate", str(q), str(tmp_path / "nope.txt")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["evaluate", str(q), str(write(tmp_path, "ok.txt", RUN_LINES)), "-m", "nDCG@x"]) == 2
    assert capsys.readouterr().err.startswith("ctxeval: error: cannot parse measure 'nDCG@x'")


def test_missing_policy_counts(tmp_path: Path) -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    run = {"q1": {"a": 1.0}, "q9": {"z": 1.0}}
    zero = evaluate(qrels, run, ["AP"], policies={"missing": "zero"}).runs[0]
    ignore = evaluate(qrels, run, ["AP"], policies={"missing": "ignore"}).runs[0]
    # q1 has AP 1; q2 and q3 are missing: zero averages over 3 queries, ignore over 1.
    assert zero.mean("AP") == pytest.approx(1 / 3) and zero.valid("AP") == 3
    assert ignore.mean("AP") == 1.0 and ignore.valid("AP") == 1
    assert zero.accounting.missing == 2 and zero.accounting.unjudged == 1
    from ctxeval import QueryMismatchError

    with pytest.raises(QueryMismatchError, match="2 judged queries are missing from the run \\(q2, q3\\)"):
        evaluate(qrels, run, ["AP"], policies={"missing": "error"})


def test_qrels_read_alongside_the_runs_reports_like_sequential_reading(tmp_path, monkeypatch) -> None:
    """Large qrels files are read on a second thread while the runs are read: same results, and a
    malformed qrels file is reported before a malformed run, as when they are read one after the other."""
    from ctxeval import _session
    from ctxeval._errors import FormatError

    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    run = tmp_path / "r.txt"
    run.write_text("q1 Q0 d1 1 2.0 s\nq1 Q0 d2 2 1.0 s\nq2 Q0 d3 1 0.5 s\n")
    sequential = evaluate(str(qrels), str(run), ["AP", "nDCG@10"]).to_dict(per_query=True)
    monkeypatch.setattr(_session, "_OVERLAP_QRELS_BYTES", 0)
    assert evaluate(str(qrels), str(run), ["AP", "nDCG@10"]).to_dict(per_query=True) == sequential
    bad_run = tmp_path / "bad.run"
    bad_run.write_text("q1 Q0 d1 1 notanumber s\n")
    with pytest.raises(FormatError, match=r"bad\.run"):
        evaluate(str(qrels), str(bad_run), ["AP"])
    bad_qrels = tmp_path / "bad.qrels"
    bad_qrels.write_text("q1 0 d1 x\n")
    with pytest.raises(FormatError, match=r"bad\.qrels"):
        evaluate(str(bad_qrels), str(bad_run), ["AP"])
