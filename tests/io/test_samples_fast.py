"""The columnar sample reader against the line-by-line one: on generated files, with ids that hold
every character the fast path must refuse (quotes, backslashes, braces, brackets, commas, colons,
blanks, non-ASCII, "true", key names), several spacings, extra fields, repeated keys and ids, the
columnar reader either declines (None) or gives exactly what the line reader gives; it never accepts
a file the line reader rejects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxeval import CtxevalError, Samples
from ctxeval._io.samples import fast as samples_fast

_ID = st.one_of(
    st.sampled_from(["a", "b", "c", "d", "e", "f"]),
    st.text(alphabet='ab"\\{}[],: é\t', min_size=0, max_size=4),
    st.sampled_from(["true", "grades", "query_id", " a", "a ", ""]),
)
_SCORE = st.one_of(
    st.sampled_from([1.0, 0.5, 0.5, 2, 0, -1.25, 1e300]),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)


@st.composite
def _record(draw: st.DrawFn, i: int) -> dict[str, Any]:
    rec: dict[str, Any] = {}
    if draw(st.integers(0, 20)):
        rec["query_id"] = draw(st.one_of(st.just(f"q{i}"), st.just(f"q{i % 3}"), st.integers(0, 3), _ID))
    ids = draw(st.lists(_ID, max_size=5))
    if draw(st.booleans()):
        rec["retrieved_ids"] = ids
    if draw(st.booleans()):
        rec["retrieved_scores"] = draw(st.lists(_SCORE, min_size=len(ids), max_size=len(ids) + draw(st.integers(0, 1))))
    which = draw(st.integers(0, 3))
    if which == 1:
        rec["reference_ids"] = draw(st.lists(_ID, max_size=4))
    elif which == 2:
        rec["grades"] = draw(st.dictionaries(_ID, st.one_of(st.integers(-1, 3), st.just(2.0)), max_size=4))
    elif which == 3:
        rec["grades"] = draw(st.dictionaries(_ID, st.integers(0, 3), max_size=3))
        rec["reference_ids"] = draw(st.lists(_ID, max_size=3))
    for key, value in (
        ("category", st.one_of(st.sampled_from(["how", "what", "why"]), st.none(), st.integers(0, 2))),
        ("question", st.one_of(st.text(alphabet='ab ?"é', max_size=6), st.none())),
        ("latency_ms", st.integers(0, 9)),
        ("response", st.sampled_from(["yes", 5, None])),
        ("citations", st.lists(_ID, max_size=2)),
        ("retrieved", st.sampled_from([5, None])),
        ("user_input", st.sampled_from(["q?", 7])),
    ):
        if draw(st.integers(0, 6)) == 0:
            rec[key] = draw(value)
    return rec


def _line(draw: st.DrawFn, rec: dict[str, Any]) -> str:
    seps = draw(st.sampled_from([(", ", ": "), (",", ":"), (" , ", " : ")]))
    text = json.dumps(rec, separators=seps, ensure_ascii=draw(st.booleans()))
    if draw(st.integers(0, 15)) == 0 and text.startswith('{"query_id"'):
        text = text[:-1] + ', "query_id": "again"}'  # a repeated key: json.loads keeps the last
    if draw(st.integers(0, 15)) == 0 and '"grades": {' in text:
        text = text.replace('"grades": {', '"grades": {"a": 1, "a": 2, ', 1).replace(", }", "}")
    return text


_PLAIN_ID = st.text(alphabet="abcdef", min_size=1, max_size=3)


@st.composite
def _plain_record(draw: st.DrawFn, i: int) -> dict[str, Any]:
    """A sample the columnar reader must take: the fields it reads, ids and texts it can vouch for."""
    ids = draw(st.lists(_PLAIN_ID, max_size=6, unique=True))
    rec: dict[str, Any] = {"query_id": f"q{i}", "retrieved_ids": ids}
    if draw(st.booleans()):
        rec["retrieved_scores"] = draw(st.lists(_SCORE, min_size=len(ids), max_size=len(ids)))
    if draw(st.booleans()):
        rec["grades"] = draw(st.dictionaries(_PLAIN_ID, st.integers(-1, 3), max_size=4))
    if draw(st.booleans()):
        rec["reference_ids"] = draw(st.lists(_PLAIN_ID, max_size=4))
    if draw(st.booleans()):
        rec["category"] = draw(st.sampled_from(["how", "what", None]))
    if draw(st.booleans()):
        rec["question"] = draw(st.text(alphabet="ab ?é\n\t/\u3000", max_size=6))  # escapes, not quotes
    return dict(sorted(rec.items(), key=lambda kv: draw(st.integers(0, 9))))  # any key order


@st.composite
def _file(draw: st.DrawFn) -> tuple[str, bool]:
    """A file and whether it is plain (then the columnar reader must take it)."""
    n = draw(st.integers(1, 5))
    if draw(st.booleans()):
        seps = draw(st.sampled_from([(", ", ": "), (",", ":")]))
        ascii_only = draw(st.booleans())
        return (
            "".join(
                json.dumps(draw(_plain_record(i)), separators=seps, ensure_ascii=ascii_only) + "\n" for i in range(n)
            ),
            True,
        )
    lines = [_line(draw, draw(_record(i))) for i in range(n)]
    if draw(st.integers(0, 10)) == 0:
        lines.insert(draw(st.integers(0, n)), "")
    return "\n".join(lines) + "\n", False


def _outcome(path: Path, fast: bool) -> Any:
    try:
        s = Samples.from_jsonl(path, fast=fast)
    except CtxevalError as exc:
        return ("error", type(exc).__name__, str(exc))
    try:
        qrels = s.qrels().to_dict()
    except CtxevalError as exc:
        qrels = ("error", str(exc))
    run = s.run().to_dict() if any(x.retrieved_ids for x in s.samples) else None  # errors fail the test
    return (tuple(s.samples), s.notes, qrels, run, s.categories(), s.query_texts())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_file())
def test_the_columnar_reader_agrees_with_the_line_reader(tmp_path: Path, case: tuple[str, bool]) -> None:
    text, plain = case
    path = tmp_path / "s.jsonl"
    path.write_text(text, encoding="utf-8")
    slow = _outcome(path, fast=False)
    taken = samples_fast.read(path) is not None
    assert taken or not plain, "a plain file should take the columnar path"
    if taken:  # (a declined file is the line reader's: nothing more to compare)
        assert slow[0] != "error", "the columnar reader accepted a file the line reader rejects"
        assert _outcome(path, fast=True) == slow


def test_plain_files_take_the_columnar_path(tmp_path: Path) -> None:
    """The bench's shape, default and compact spacing, scores in and out of list order, grades and
    reference ids: read column-wise, and equal to the line reader's result."""
    recs = [
        {
            "query_id": "q1",
            "retrieved_ids": ["a", "b", "c"],
            "retrieved_scores": [3.0, 2.0, 2.0],
            "grades": {"c": 2, "x": 1},
        },
        {
            "query_id": "q2",
            "retrieved_ids": ["d", "e"],
            "retrieved_scores": [1.0, 5.0],
            "reference_ids": ["e", "e", "z"],
        },
        {"query_id": "q3", "retrieved_ids": ["f"], "category": "how", "question": "why?", "reference_ids": ["f"]},
        {"query_id": "q4", "retrieved_ids": [], "grades": {}, "reference_ids": ["g"]},
    ]
    for seps in ((", ", ": "), (",", ":")):
        path = tmp_path / "s.jsonl"
        path.write_text("".join(json.dumps(r, separators=seps) + "\n" for r in recs))
        c = samples_fast.read(path)
        assert c is not None and c.plain
        fast, slow = _outcome(path, fast=True), _outcome(path, fast=False)
        assert fast == slow
        assert fast[2] == {"q1": {"c": 2, "x": 1}, "q2": {"e": 1, "z": 1}, "q3": {"f": 1}, "q4": {"g": 1}}
        # q1's tie (b, c at 2.0) breaks by id descending: c before b, not the list's order -> n .. 1;
        # q2's scores rise -> n .. 1; q3 gives none -> n .. 1
        assert fast[3] == {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"d": 2.0, "e": 1.0}, "q3": {"f": 1.0}}
        assert len(fast[1]) == 3  # scores out of order, no scores, q4 retrieved nothing


@pytest.mark.parametrize(
    "line",
    [
        '{"query_id": "q1", "retrieved_ids": ["a"], "grades": 5}',
        '{"query_id": "q1", "retrieved_ids": "a"}',
        '{"query_id": 5, "retrieved_ids": ["a"]}',
        '{"query_id": "q1", "retrieved_ids": ["a"], "retrieved": 5}',
        '{"query_id": "q1", "retrieved_ids": ["a"], "grades": {"a": 1, "a": 2}}',
        '{"query_id": "q1", "query_id": "q2", "retrieved_ids": ["a"]}',
        '{"query_id": "q1", "retrieved_ids": ["a", "a"]}',
        '{"query_id": "q1", "retrieved_ids": ["a"], "retrieved_scores": [true]}',
        '{"query_id": "q1", "retrieved_ids": ["a\\"b"]}',
        '{"query_id": "q1", "retrieved_ids": ["a"], "grades": {"\\u00e9": 1}}',
    ],
)
def test_lines_the_columnar_reader_declines(tmp_path: Path, line: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(line + "\n")
    assert samples_fast.read(path) is None
