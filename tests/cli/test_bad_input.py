"""Hostile and careless input, case by case: each row is a file set, a command, and what the user must see
(the exit status, the one line on stderr, and where a number is printed, the number worked out by hand).
Nothing may pass silently, print a traceback or a Python warning."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli

HUGE = "1" + "0" * 400  # beyond a float's range
LONGEST = "1" + "0" * 5000  # beyond what Python reads as an int (4,300 digits)


def _jsonl(*records: str) -> str:
    return "".join(r + "\n" for r in records)


# (case, files {name: text}, argv, exit status, text expected on stderr (all of it: "=..."; a part: else), stdout)
CASES = [
    (
        "a list where a query id belongs in JSON lines",
        {
            "q.txt": "q1 0 d1 1\n",
            "r.jsonl": _jsonl(
                '{"qid": ["q1"], "docid": "d1", "score": 1.0}', '{"qid": "q1", "docid": "d2", "score": 0.5}'
            ),
        },
        ["evaluate", "q.txt", "r.jsonl", "-m", "RR"],
        2,
        "r.jsonl:1: qid ['q1'] is not a string or integer id",
        None,
    ),
    (
        "a boolean query id after string ones",
        {
            "q.txt": "q1 0 d1 1\n",
            "r.jsonl": _jsonl(
                '{"qid": "q1", "docid": "d1", "score": 1.0}', '{"qid": true, "docid": "d2", "score": 0.5}'
            ),
        },
        ["evaluate", "q.txt", "r.jsonl", "-m", "RR"],
        2,
        "r.jsonl:2: qid True is not a string or integer id",
        None,
    ),
    (
        "ids that only look like JSON values are ids",
        {
            "q.txt": "[q1] 0 1.5 1\n",
            "r.jsonl": _jsonl(
                '{"qid": "[q1]", "docid": "1.5", "score": 1.0}', '{"qid": "[q1]", "docid": "true", "score": 2.0}'
            ),
        },
        ["evaluate", "q.txt", "r.jsonl", "-m", "RR", "--format", "json"],
        0,
        "",
        '"RR": 0.5',  # 1.5 is ranked second behind "true": RR = 1/2
    ),
    (
        "every grade 0: nothing is relevant",
        {"q.txt": "q1 0 d1 0\nq1 0 d2 0\n", "r.txt": "q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n"},
        ["evaluate", "q.txt", "r.txt", "-m", "RR", "-m", "nDCG@10", "--format", "json"],
        0,
        "",
        "the qrels judge nothing relevant: all 2 judgments have a grade of 0 or less",
    ),
    (
        "a level no judgment reaches",
        {"q.txt": "q1 0 d1 1\nq1 0 d2 0\n", "r.txt": "q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n"},
        ["evaluate", "q.txt", "r.txt", "-m", "P(rel=2)@1", "-m", "RR", "--format", "json"],
        0,
        "",
        "P(rel=2)@1: no judgment reaches grade 2 (the highest grade in the qrels is 1), so it is 0 for every query",
    ),
    (
        "trec_eval's recall level nan",
        {"q.txt": "q1 0 d1 1\n", "r.txt": "q1 Q0 d1 1 2 r\n"},
        ["trec_eval", "-m", "iprec_at_recall.nan", "q.txt", "r.txt"],
        2,
        "=ctxeval: error: trec_eval: -m iprec_at_recall.nan: 'nan' is not a usable level (a finite number within "
        "±1e6): trec_eval turns it into a number of docs, which C leaves unspecified for it\n",
        "",
    ),
    (
        "trec_eval's 11pt_avg at an infinite level",
        {"q.txt": "q1 0 d1 1\n", "r.txt": "q1 Q0 d1 1 2 r\n"},
        ["trec_eval", "-m", "11pt_avg.0,inf", "q.txt", "r.txt"],
        2,
        "-m 11pt_avg.0,inf: 'inf' is not a usable level",
        "",
    ),
    (
        "--columns names a score column the run lacks",
        {"q.csv": "qid,docid,grade\nq1,d1,1\n", "r.csv": "qid,docid,rank,score\nq1,d1,1,0.1\nq1,d2,2,0.9\n"},
        ["evaluate", "q.csv", "r.csv", "-m", "RR", "--columns", "score=similarity"],
        2,
        "=ctxeval: error: r.csv:1: no column 'similarity', which the columns setting names for the score; "
        "found qid, docid, rank, score\n",
        "",
    ),
    (
        "--columns score=similarity beside a score column reads similarity",
        # similarity ranks d2 (0.9) above the relevant d1 (0.1): RR = 1/2; the score column would give 1
        {"q.csv": "qid,docid,grade\nq1,d1,1\n", "r.csv": "qid,docid,score,similarity\nq1,d1,0.9,0.1\nq1,d2,0.1,0.9\n"},
        ["evaluate", "q.csv", "r.csv", "-m", "RR", "--columns", "score=similarity", "--format", "json"],
        0,
        "",
        '"RR": 0.5',
    ),
    (
        "a qrels' grade=score leaves the run's score alone (BEIR)",
        {"q.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n", "r.csv": "qid,docid,score\nq1,d1,0.1\nq1,d2,0.9\n"},
        [
            "evaluate",
            "q.tsv",
            "r.csv",
            "-m",
            "RR",
            "--columns",
            "qid=query-id,doc=corpus-id,grade=score",
            "--format",
            "json",
        ],
        0,
        "",
        '"RR": 0.5',
    ),
    (
        "a score beyond a float in JSON lines",
        {"q.txt": "q1 0 d1 1\n", "r.jsonl": _jsonl(f'{{"qid": "q1", "docid": "d1", "score": {HUGE}}}')},
        ["evaluate", "q.txt", "r.jsonl", "-m", "RR"],
        2,
        "r.jsonl:1: score (an integer of 401 digits) is not finite (or beyond a 64-bit float)",
        "",
    ),
    (
        "a grade beyond 64 bits in JSON lines",
        {"q.jsonl": _jsonl(f'{{"qid": "q1", "docid": "d1", "grade": {HUGE}}}'), "r.txt": "q1 Q0 d1 1 2 r\n"},
        ["evaluate", "q.jsonl", "r.txt", "-m", "RR"],
        2,
        "q.jsonl:1: relevance (an integer of 401 digits) is out of range (a grade must fit in 64 bits)",
        "",
    ),
    (
        "a number of 5,001 digits in JSON lines",
        {"q.txt": "q1 0 d1 1\n", "r.jsonl": _jsonl(f'{{"qid": "q1", "docid": "d1", "score": {LONGEST}}}')},
        ["evaluate", "q.txt", "r.jsonl", "-m", "RR"],
        2,
        "r.jsonl:1: a number of over 4,300 digits",
        "",
    ),
    (
        "a grade of 5,001 digits in TREC qrels",
        {"q.txt": f"q1 0 d1 {LONGEST}\n", "r.txt": "q1 Q0 d1 1 2 r\n"},
        ["evaluate", "q.txt", "r.txt", "-m", "RR"],
        2,
        "q.txt:1: relevance '1000000000000000000000000000'... (5001 characters) is out of range",
        "",
    ),
    (
        "a score beyond a float in a JSON mapping",
        {"q.txt": "q1 0 d1 1\n", "r.json": json.dumps({"q1": {"d1": 10**400}})},
        ["evaluate", "q.txt", "r.json", "-m", "RR"],
        2,
        "r.json['q1']['d1']: score (an integer of 401 digits) is not a finite number",
        "",
    ),
    (
        "RBP without rel under a grade map",
        {"q.txt": "q1 0 d1 2\nq1 0 d2 0\n", "r.txt": "q1 Q0 d1 1 2 r\nq1 Q0 d2 2 1 r\n"},
        ["evaluate", "q.txt", "r.txt", "-m", "RBP", "--grade-map", "trec-dl", "--format", "json"],
        0,
        "",
        None,
    ),
]


@pytest.mark.parametrize(("files", "argv", "status", "err", "out"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(
    files: dict[str, str], argv: list[str], status: int, err: str, out: str | None, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = CliRunner().invoke(cli, argv)
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception  # a traceback is a failure of its own
    assert [str(w.message) for w in caught] == []
    assert res.exit_code == status, res.stderr
    if err.startswith("="):
        assert res.stderr == err[1:]
    else:
        assert err in res.stderr
    if status == 2:
        assert res.stderr.startswith("ctxeval: error: ") and res.stderr.count("\n") == 1
    if out == "":
        assert res.stdout == ""
    elif out is not None:
        assert out in res.stdout
