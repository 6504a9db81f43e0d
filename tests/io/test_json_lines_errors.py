"""Every reader of JSON lines gives bad JSON as one error naming the file and the line, a number
Python will not read (an integer of over 4,300 digits) included: span labels, chunk tables,
documents, fairness groups, query texts and collect's questions (each once gave a traceback on it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ctxeval
from ctxeval import FormatError
from ctxeval._io.fairness import read_fair_groups
from ctxeval._io.locate import read_documents
from ctxeval._io.retrievers import _questions
from ctxeval._io.side import read_query_texts

HUGE = "9" * 5000

#: (reader, a good first line, a second line's record with {value} where the bad value goes)
READERS: dict[str, tuple[Callable[[str], Any], str, str]] = {
    "span labels": (
        ctxeval.SpanLabels.from_file,
        '{"query_id": "q1", "doc_id": "d", "start": 0, "end": 4}',
        '{{"query_id": "q2", "doc_id": "d", "start": 0, "end": {value}}}',
    ),
    "chunk table": (
        ctxeval.Chunks.from_file,
        '{"chunk_id": "c1", "doc_id": "d", "start": 0, "end": 4}',
        '{{"chunk_id": "c2", "doc_id": "d", "start": 0, "end": {value}}}',
    ),
    "documents": (read_documents, '{"doc_id": "d1", "text": "x"}', '{{"doc_id": "d2", "text": {value}}}'),
    "fairness groups": (read_fair_groups, '{"doc_id": "d1", "group": "a"}', '{{"doc_id": "d2", "group": {value}}}'),
    "query texts": (read_query_texts, '{"qid": "q1", "text": "x"}', '{{"qid": "q2", "text": {value}}}'),
    "questions": (_questions, '{"query_id": "q1", "question": "x"}', '{{"query_id": "q2", "question": {value}}}'),
}


@pytest.mark.parametrize("bad", [HUGE, "[1,", "tru"])
@pytest.mark.parametrize("what", sorted(READERS))
def test_bad_json_is_one_line_naming_the_file_and_the_line(tmp_path: Path, what: str, bad: str) -> None:
    read, good, template = READERS[what]
    path = tmp_path / "in.jsonl"
    path.write_text(good + "\n" + template.format(value=bad) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as err:
        read(str(path))
    msg = str(err.value)
    assert msg.startswith(f"{path}:2: "), msg
    want = "a number of over 4,300 digits" if bad == HUGE else "not valid JSON ("
    assert want in msg and "\n" not in msg, msg
