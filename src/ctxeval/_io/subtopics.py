"""Subtopic qrels: ``qid subtopic docid grade`` lines, the diversity judgments of the TREC Web track
that ndeval reads (the second column, the iteration column of plain qrels, names the subtopic).

The file is read under the TREC files' rule (:mod:`.trec`: every tier, errors naming the file and the
line); then the subtopic of every line is taken from its second field. A doc judged twice for one
subtopic of one query is an error naming both lines (``duplicates="first"`` / ``"best"`` keep one).

What the reader gives (:class:`SubtopicJudgments`): the distinct (query, doc) pairs with, per pair,
its judgments (subtopic, grade), and the subtopic ids in their order: numeric when every id is a
natural number (ndeval's reading: subtopics are numbers), else byte-wise. The same pairs, each with
its highest grade over the subtopics, are the plain qrels every other measure reads (a doc relevant to
any subtopic is relevant to the query, ndeval's own reading for its non-intent-aware MAP); the label
kind ``subtopic`` (:class:`~ctxeval.LabelKind`) marks them.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "div.qrels"
>>> _ = p.write_text("q1 1 a 1\\nq1 2 a 0\\nq1 2 b 2\\nq2 10 x 1\\nq2 9 x 1\\n")
>>> sub = read_subtopic_qrels(p)
>>> sub.names.tolist(), sub.docs.doc.to_list(), sub.docs.values.tolist(), sub.ptr.tolist()
(['1', '2', '9', '10'], ['b', 'a', 'x'], [2, 1, 1], [0, 1, 3, 5])
>>> sub.subtopic.tolist(), sub.grade.tolist()
([1, 0, 1, 2, 3], [2, 1, 0, 1, 1])
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._core.columns import Columns, Layout
from .._core.ids import ArrayIds
from .._core.segments import offsets, run_starts
from .._errors import DuplicateError, EmptyInputError, FormatError
from .read import check_duplicate_policy
from .trec import decode, open_bytes, parse_grade, read_trec, split_fields

__all__ = ["SubtopicJudgments", "read_subtopic_qrels", "subtopic_records"]


@dataclass(frozen=True, eq=False)
class SubtopicJudgments:
    """Qrels by subtopic (see the module docstring).

    ``docs``: the distinct (query, doc) pairs grouped by query, doc ids *descending* within a query
    (ndeval's ideal ordering breaks ties towards the greater doc id), each with its highest grade;
    ``ptr``: the judgments of ``docs`` row ``i`` are ``[ptr[i], ptr[i + 1])``, subtopics ascending;
    ``subtopic``: each judgment's subtopic, a position in ``names``; ``grade``: its grade."""

    docs: Columns
    ptr: np.ndarray
    subtopic: np.ndarray
    grade: np.ndarray
    names: np.ndarray
    source: str
    dropped: int = 0  #: judgments the duplicate policy dropped

    @property
    def n_judgments(self) -> int:
        return int(self.grade.size)

    def note(self) -> str | None:
        """What a report must say when no query has two subtopics (plain qrels read as subtopic
        qrels, the iteration column all alike): the diversity measures lose their point."""
        seg = self.docs.layout.row_segments()
        per_doc = np.diff(self.ptr)
        q = np.repeat(seg, per_doc)
        if q.size == 0 or np.unique(q * max(self.names.size, 1) + self.subtopic).size > np.unique(q).size:
            return None
        return (
            f"{self.source}: no query has two subtopics (the second column names the subtopic): the diversity "
            "measures reduce to single-intent ones; give the diversity qrels (qid subtopic docid grade)"
        )


def read_subtopic_qrels(path: str | os.PathLike[str], duplicates: str = "error") -> SubtopicJudgments:
    """Read a subtopic qrels file (``qid subtopic docid grade``, plain or .gz; see the module docstring)."""
    check_duplicate_policy(duplicates)
    p = Path(path)
    source = str(path)
    rows = read_trec(p, "qrels", source).columns
    data = open_bytes(p)
    records = _second_fields(data, len(rows), source)
    rec = np.arange(len(rows), dtype=np.int64) if rows.source_rows is None else rows.source_rows
    tokens = records[rec]
    return _build(rows, tokens, source, duplicates, lambda r: _line_of(data, int(rec[r])))


def subtopic_records(
    records: Iterable[tuple[Any, Any, Any, Any]], source: str = "<subtopic qrels>"
) -> SubtopicJudgments:
    """From ``(qid, subtopic, docid, grade)`` tuples (pyndeval's ``SubtopicQrel`` shape)."""
    qids: list[str] = []
    subs: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    for i, item in enumerate(records):
        try:
            q, s, d, g = item
        except (TypeError, ValueError):
            raise FormatError(source, i + 1, f"expected (qid, subtopic, docid, grade), got {item!r}") from None
        qids.append(str(q))
        subs.append(str(s))
        docs.append(str(d))
        grades.append(parse_grade(g, source, i + 1, None))
    if not qids:
        raise EmptyInputError(f"{source}: no subtopic judgments")
    names, codes = np.unique(np.array(qids), return_inverse=True)
    cols = Columns.from_codes(
        codes.astype(np.int64), names, ArrayIds.from_strings(docs), np.array(grades, dtype=np.int64)
    )
    rec = np.arange(len(cols), dtype=np.int64) if cols.source_rows is None else cols.source_rows
    return _build(cols, np.array(subs)[rec], source, "error", lambda r: int(rec[r]) + 1)


def _second_fields(data: bytes, n: int, source: str) -> np.ndarray:
    """The second field of every data line, in file order (the file has been read under the rule:
    every data line holds exactly four fields); bytes when the file is plain, else text."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    plain = data.replace(b"\r\n", b"\n")
    if not any(c in plain for c in (b"#", b"\r", b"\x0b", b"\x0c")):
        found = _fields_of(np.frombuffer(plain, dtype=np.uint8), n)
        if found is not None:
            return found
    out = []
    for line in decode(data, source).split("\n"):
        fields = split_fields(line.removesuffix("\r"))
        if fields and not fields[0].startswith("#"):
            out.append(fields[1])
    return np.array(out) if out else np.zeros(0, dtype="U1")


def _fields_of(b: np.ndarray, n: int, width: int = 64) -> np.ndarray | None:
    """The second of every four words (space, tab and newline separate words), as fixed-width bytes;
    None when the words do not come four by four or a second word is wider than ``width``."""
    gap = (b == 32) | (b == 9) | (b == 10)
    word = ~gap
    start = np.flatnonzero(word & np.r_[True, gap[:-1]])
    if start.size != 4 * n:
        return None
    end = np.flatnonzero(word & np.r_[gap[1:], True]) + 1
    s, e = start[1::4], end[1::4]
    w = int((e - s).max()) if s.size else 1
    if w > width:
        return None
    at = s[:, None] + np.arange(w)
    cells = np.where(at < e[:, None], b[np.minimum(at, b.size - 1)], 0).astype(np.uint8)
    return cells.view(f"S{w}").ravel()


def _line_of(data: bytes, record: int) -> int | None:
    """The line number of the ``record``-th data line (for an error message)."""
    seen = -1
    for lineno, line in enumerate(data.split(b"\n"), start=1):
        fields = line.split()
        if fields and not fields[0].startswith(b"#"):
            seen += 1
            if seen == record:
                return lineno
    return None


def _subtopic_order(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct subtopic ids in their order (numeric when all are natural numbers, else byte-wise)
    and each token's position among them."""
    names, codes = np.unique(tokens, return_inverse=True)
    if names.dtype.kind == "S":
        names = np.array([b.decode("utf-8") for b in names.tolist()], dtype=str) if names.size else names.astype(str)
    if names.size and all(s.isascii() and s.isdigit() for s in names.tolist()):
        order = sorted(range(names.size), key=lambda i: (int(names[i]), names[i]))
        rank = np.empty(names.size, dtype=np.int64)
        rank[order] = np.arange(names.size, dtype=np.int64)
        return names[order], rank[codes]
    return names, codes.astype(np.int64)


def _build(rows: Columns, tokens: np.ndarray, source: str, duplicates: str, line_of: Any) -> SubtopicJudgments:
    names, sub = _subtopic_order(tokens)
    lay = rows.layout
    seg = lay.row_segments()
    n = len(rows)
    by_sub = np.argsort(sub, kind="stable")
    order = rows.doc.order(by_sub, (seg[by_sub],))  # query, doc id descending, subtopic ascending
    same_doc = (seg[order][1:] == seg[order][:-1]) & rows.doc.equal(order[1:], rows.doc, order[:-1])
    same = same_doc & (sub[order][1:] == sub[order][:-1])
    dropped = 0
    if same.any():
        at = np.flatnonzero(same)
        if duplicates == "error":
            first, second = sorted((int(order[at[0]]), int(order[at[0] + 1])), key=lambda r: rows.record(r))
            q = str(lay.heads[seg[first]])
            d = rows.doc.to_list(np.array([first]))[0]
            raise DuplicateError(
                f"{source}: doc {d!r} is judged twice for subtopic {str(names[sub[first]])!r} of query {q!r} "
                f"(lines {line_of(first)} and {line_of(second)}); pass --duplicates first|best "
                "(duplicates='first' or 'best') to keep one"
            )
        keep = _keep(order, same, rows, duplicates)
        dropped = n - int(keep.sum())
        order = order[keep]
        same_doc = (seg[order][1:] == seg[order][:-1]) & rows.doc.equal(order[1:], rows.doc, order[:-1])
    starts = np.flatnonzero(np.r_[True, ~same_doc])
    grade = rows.values[order].astype(np.int64)
    best = np.maximum.reduceat(grade, starts) if grade.size else grade
    first_rows = order[starts]
    per_query = np.bincount(seg[first_rows], minlength=lay.n_segments)
    docs = Columns(Layout(lay.heads, per_query, int(starts.size)), rows.doc.take(first_rows), best)
    return SubtopicJudgments(
        docs, offsets(np.diff(np.r_[starts, order.size])), sub[order], grade, names, source, dropped
    )


def _keep(order: np.ndarray, same: np.ndarray, rows: Columns, policy: str) -> np.ndarray:
    """Which of the sorted judgments to keep: of each run of one (query, subtopic, doc), the first
    record (``first``) or the highest grade, the first record among equals (``best``)."""
    run = np.cumsum(np.r_[True, ~same]) - 1
    rec = order if rows.source_rows is None else rows.source_rows[order]
    key = (rec,) if policy == "first" else (rec, -rows.values[order])
    pick = np.lexsort((*key, run))
    heads = pick[run_starts(run[pick])]
    keep = np.zeros(order.size, dtype=bool)
    keep[heads] = True
    return keep
