"""Span labels: evidence marked as character spans of the source documents, so that labels survive
re-chunking (any chunker's chunks are scored against the same spans).

A label is ``(query, document, start, end, grade)``: ``[start, end)`` are character offsets into the
document's text, counted in Unicode code points of the text decoded from UTF-8 (a Python ``str``
index; newlines count as they are, one for ``\\n``, two for ``\\r\\n``; no BOM), end exclusive, so the
evidence is ``text[start:end]``; ``0 <= start < end``. Grades are whole numbers on the scale the
label kind names (:class:`~ctxeval.LabelKind`): 1 for plain evidence (binary labels), a scale's
grades otherwise; a span of grade 0 marks text judged to hold no evidence, a negative grade harmful
text. Spans may overlap (how overlaps count: :mod:`ctxeval._core.spans`).

Formats (``docs/reference/formats.md``):

* TREC-like text: ``query_id iter doc_id start end grade`` per line (``iter`` ignored, as in qrels),
  blank lines and ``#`` comments skipped;
* JSON lines, CSV/TSV with a header, Parquet, frames and lists of mappings with fields ``query_id``
  (or ``qid``, ``query``), ``doc_id`` (or ``document``, ``corpus_id``, ...), ``start`` (or
  ``start_index``, ``start_char``), ``end`` (or ``end_index``, ``end_char``) and optionally ``grade``
  (or ``relevance``; default 1);
* Chroma's ``questions_df.csv`` (:meth:`SpanLabels.from_chroma`), read as it is (a CSV file with its
  header, ``question``, ``references``, ``corpus_id``, is read so by :meth:`SpanLabels.from_file`).

Rows are kept sorted by (query, document, start, end), whatever their input order; a span given
twice with one grade counts once (noted), with two grades is an error naming both.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.columns import Columns, Layout
from .._core.ids import ArrayIds
from .._core.segments import run_starts
from .._core.spans import near
from .._errors import ConfigError, DuplicateError, EmptyInputError, FormatError
from . import writers
from .labels import LabelKind
from .locate import find_text, read_documents
from .model import Qrels
from .records import columns_of, integer, records, table_format, text_id
from .tables import json_value

if TYPE_CHECKING:
    import polars as pl

    from .chunks import Chunks
    from .model import Qrels

__all__ = ["SpanLabels"]

_FIELDS = {
    "query_id": ("query_id", "qid", "query", "topic", "topic_id", "question_id"),
    "doc_id": ("doc_id", "docid", "document", "document_id", "doc", "corpus_id", "corpus-id"),
    "start": ("start", "start_index", "start_char", "begin", "start_offset"),
    "end": ("end", "end_index", "end_char", "stop", "end_offset"),
    "grade": ("grade", "relevance", "rel", "label", "judgment"),
}


@dataclass(frozen=True, eq=False)
class SpanLabels:
    """Evidence as character spans of the documents (see the module docstring).

    >>> s = SpanLabels.from_records([{"query_id": "q1", "doc_id": "d", "start": 4, "end": 9},
    ...                              {"query_id": "q1", "doc_id": "d", "start": 0, "end": 2, "grade": 2}])
    >>> len(s), s.query_ids, s.rows()[0], s.labels.kind
    (2, ['q1'], ('q1', 'd', 0, 2, 2), 'graded')
    """

    query: np.ndarray
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    grade: np.ndarray
    labels: LabelKind = field(default_factory=lambda: LabelKind("binary"))
    source: str = "<span labels>"
    #: the question text of each query, where the source gives it (Chroma's ``question``)
    queries: Mapping[str, str] = field(default_factory=dict)
    #: what building the labels found that a report should say (references located fuzzily, not found)
    notes: tuple[str, ...] = ()
    #: (query id, reference text) of every reference text that could not be located
    unlocated: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not (self.query.size == self.doc.size == self.start.size == self.end.size == self.grade.size):
            raise ConfigError("span labels: the columns must have one length")

    # -- views ------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return int(self.start.size)

    @property
    def query_ids(self) -> list[str]:
        """The query ids, sorted."""
        return sorted(set(self.query.tolist()))

    def rows(self) -> list[tuple[str, str, int, int, int]]:
        """Every label as ``(query, document, start, end, grade)``."""
        return list(
            zip(self.query.tolist(), self.doc.tolist(), self.start.tolist(), self.end.tolist(), self.grade.tolist())
        )

    @property
    def frame(self) -> pl.DataFrame:
        """The labels as a polars frame (``query_id, doc_id, start, end, grade``)."""
        import polars as pl

        return pl.DataFrame(
            {
                "query_id": self.query.tolist(),
                "doc_id": self.doc.tolist(),
                "start": self.start,
                "end": self.end,
                "grade": self.grade,
            }
        )

    def __repr__(self) -> str:
        return f"SpanLabels({self.source!r}, {len(self.query_ids)} queries, {len(self)} spans, {self.labels.kind})"

    def with_labels(self, labels: LabelKind | str) -> SpanLabels:
        """The same spans, declared to be of another kind."""
        return replace(self, labels=LabelKind.coerce(labels))

    def texts(self, documents: Any) -> list[str]:
        """The text of every span in ``documents`` (a mapping, folder or JSON-lines file)."""
        docs = read_documents(documents)
        self.check(docs)
        return [docs[d][s:e] for d, s, e in zip(self.doc.tolist(), self.start.tolist(), self.end.tolist())]

    def check(self, documents: Mapping[str, str]) -> None:
        """A :class:`ConfigError` naming the first span whose document is unknown or shorter than its end."""
        lengths = {d: len(t) for d, t in documents.items()}
        for q, d, s, e in zip(self.query.tolist(), self.doc.tolist(), self.start.tolist(), self.end.tolist()):
            n = lengths.get(d)
            if n is None:
                raise ConfigError(f"{self.source}: query {q}: no document {d!r} among the {len(lengths)} given")
            if e > n:
                raise ConfigError(
                    f"{self.source}: query {q}: span [{s}, {e}) ends past document {d!r} ({n} characters)"
                )

    # -- construction -----------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        rows: Iterable[tuple[str, str, int, int, int]],
        *,
        source: str = "<span labels>",
        labels: LabelKind | str | None = None,
        lines: Iterable[int] | None = None,
        graded: bool | None = None,
        **extra: Any,
    ) -> SpanLabels:
        """From ``(query, document, start, end, grade)`` tuples (checked; ``lines``: where each came
        from, for errors); ``labels`` default: binary when no grade was given (``graded`` False) and
        every grade is 1, else graded."""
        data = list(rows)
        where = list(lines) if lines is not None else list(range(1, len(data) + 1))
        if not data:
            raise EmptyInputError(f"{source}: no span labels")
        for (qq, dd, ss, ee, _), line in zip(data, where):
            if ss < 0 or ee <= ss:
                raise FormatError(
                    source, line, f"query {qq}, document {dd}: span [{ss}, {ee}) must have 0 <= start < end"
                )
        q = np.array([r[0] for r in data], dtype=str)
        d = np.array([r[1] for r in data], dtype=str)
        s = np.array([r[2] for r in data], dtype=np.int64)
        e = np.array([r[3] for r in data], dtype=np.int64)
        g = np.array([r[4] for r in data], dtype=np.int64)
        order = np.lexsort((g, e, s, d, q))
        q, d, s, e, g, lines_a = q[order], d[order], s[order], e[order], g[order], np.asarray(where)[order]
        same = (q[1:] == q[:-1]) & (d[1:] == d[:-1]) & (s[1:] == s[:-1]) & (e[1:] == e[:-1])
        clash = np.flatnonzero(same & (g[1:] != g[:-1]))
        if clash.size:
            i = int(clash[0])
            raise DuplicateError(
                f"{source}: query {q[i]}, document {d[i]}: span [{s[i]}, {e[i]}) given grades {g[i]} and {g[i + 1]} "
                f"(lines {min(lines_a[i], lines_a[i + 1])} and {max(lines_a[i], lines_a[i + 1])})"
            )
        notes = list(extra.pop("notes", ()))
        if same.any():
            keep = np.r_[True, ~same]
            notes.append(f"{source}: {int(same.sum())} spans given twice with the same grade, counted once")
            q, d, s, e, g = q[keep], d[keep], s[keep], e[keep], g[keep]
        if labels is None:
            kind = (
                LabelKind("binary", None, f"span labels {source}")
                if not graded and bool(np.all(g == 1))
                else (LabelKind("graded", None, f"span labels {source}"))
            )
        else:
            kind = LabelKind.coerce(labels)
        return cls(q, d, s, e, g, kind, source, notes=tuple(notes), **extra)

    @classmethod
    def from_records(cls, recs: Any, *, source: str | None = None, labels: LabelKind | str | None = None) -> SpanLabels:
        """From a list of mappings, a pandas or polars frame (fields as the module docstring says)."""
        found, names, name = records(recs)
        return cls._of_records(found, names, source or name, labels)

    from_frame = from_records

    @classmethod
    def _of_records(cls, found: list[Any], names: list[str], source: str, labels: Any) -> SpanLabels:
        cols = columns_of(names, _FIELDS, ("query_id", "doc_id", "start", "end"), source)
        gcol = cols.get("grade")
        rows, lines = [], []
        for line, rec in found:
            g = rec.get(gcol) if gcol else None
            rows.append(
                (
                    text_id(rec.get(cols["query_id"]), "query id", source, line),
                    text_id(rec.get(cols["doc_id"]), "document id", source, line),
                    integer(rec.get(cols["start"]), "start", source, line),
                    integer(rec.get(cols["end"]), "end", source, line),
                    1 if g is None or (isinstance(g, str) and not g.strip()) else integer(g, "grade", source, line),
                )
            )
            lines.append(line)
        return cls.build(rows, source=source, labels=labels, lines=lines, graded=gcol is not None)

    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, format: str | None = None, labels: LabelKind | str | None = None
    ) -> SpanLabels:
        """Read span labels: TREC-like text, or JSON lines / CSV / TSV / Parquet by the file's suffix
        (``format`` overrides: ``trec``, ``jsonl``, ``csv``, ``tsv``, ``parquet``)."""
        fmt = format or table_format(path) or "trec"
        if fmt != "trec":
            found, names, name = records(path, fmt)
            if fmt == "csv" and {"question", "references", "corpus_id"} <= set(names) and "start" not in names:
                return cls.from_chroma(path, labels=labels)  # Chroma's questions_df.csv, known by its header
            return cls._of_records(found, names, name, labels)
        from .side import text_lines

        rows, lines = [], []
        source = str(path)
        for lineno, line in text_lines(path, "span labels"):
            parts = line.split()
            if len(parts) != 6:
                raise FormatError(
                    source, lineno, f"expected 6 fields 'query_id iter doc_id start end grade', got {len(parts)}", line
                )
            q, _, d, s, e, g = parts
            rows.append(
                (
                    q,
                    d,
                    integer(s, "start", source, lineno),
                    integer(e, "end", source, lineno),
                    integer(g, "grade", source, lineno),
                )
            )
            lines.append(lineno)
        return cls.build(rows, source=source, labels=labels, lines=lines, graded=True)

    @classmethod
    def from_chroma(cls, path: str | os.PathLike[str], *, labels: LabelKind | str | None = None) -> SpanLabels:
        """Chroma's ``questions_df.csv`` (chunking_evaluation), read as it is: the question's key is
        its 0-based data row (the pandas index, as Chroma scores them), its document the
        ``corpus_id``, every reference of the ``references`` JSON a span ``[start_index, end_index)``
        of grade 1; the question texts are kept in :attr:`queries`."""
        found, names, source = records(path, "csv")
        cols = columns_of(
            names,
            {"question": ("question",), "references": ("references",), "corpus_id": ("corpus_id",)},
            ("question", "references", "corpus_id"),
            source,
        )
        rows, lines, queries = [], [], {}
        for row, (line, rec) in enumerate(found):
            qid = str(row)
            queries[qid] = str(rec[cols["question"]])
            doc = text_id(rec[cols["corpus_id"]], "corpus_id", source, line)
            refs = json_value(source, line, rec[cols["references"]], field="references")
            if not isinstance(refs, list) or not refs:
                raise FormatError(source, line, "references must be a non-empty JSON list")
            for ref in refs:
                if not isinstance(ref, dict) or "start_index" not in ref or "end_index" not in ref:
                    raise FormatError(source, line, "every reference needs start_index and end_index")
                rows.append(
                    (
                        qid,
                        doc,
                        integer(ref["start_index"], "start_index", source, line),
                        integer(ref["end_index"], "end_index", source, line),
                        1,
                    )
                )
                lines.append(line)
        return cls.build(
            rows,
            source=source,
            labels=labels or LabelKind("binary", None, "Chroma questions_df"),
            lines=lines,
            queries=queries,
        )

    @classmethod
    def from_qrels(cls, qrels: Qrels, chunks: Chunks) -> SpanLabels:
        """Chunk-id labels made span labels: every judged (query, chunk) becomes the chunk's span
        ``(document, start, end)`` with its grade (0 and negative grades too: judged text). A judged
        chunk the table does not place is an error naming how many and which."""
        frame = qrels.frame
        qs = frame["query_id"].to_list()
        ids = frame["doc_id"].to_list()
        grades = frame["relevance"].to_list()
        where = chunks.lookup(ids)
        missing = [i for i, w in zip(ids, where.tolist()) if w < 0]
        if missing:
            shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
            raise ConfigError(
                f"{qrels.source}: {len(missing)} judged chunks are not in the chunk table {chunks.source} ({shown})"
            )
        rows = [
            (q, str(chunks.doc[w]), int(chunks.start[w]), int(chunks.end[w]), int(g))
            for q, w, g in zip(qs, where.tolist(), grades)
            if chunks.end[w] > chunks.start[w]
        ]
        source = f"{qrels.source} via {chunks.source}"
        empty = len(qs) - len(rows)
        notes = [f"{source}: {empty} judged chunks hold no character (start = end), left out"] if empty else []
        return cls.build(
            rows, source=source, labels=qrels.labels if not qrels.plain else None, graded=True, notes=notes
        )

    def chunk_grades(self, chunks: Chunks | None) -> Qrels:
        """The span labels read as chunk grades: every chunk of the table that shares a character with a
        span of a query is judged for it at the highest grade of those spans; a query whose spans no
        chunk touches is kept, with no judged chunk (the measures over chunk ids read it as a query
        with nothing relevant; the span measures read its spans). ``chunks`` None: the queries alone."""
        if chunks is None:
            qnames = self.query[run_starts(self.query)]  # the rows come sorted by query: a run each
            if qnames.size > 1 and not bool((qnames[1:] > qnames[:-1]).all()):  # built unsorted
                qnames = np.unique(self.query)
            empty = Columns(
                Layout(qnames, np.zeros(qnames.size, dtype=np.int64)),
                ArrayIds.from_strings([]),
                np.zeros(0, dtype=np.int64),
            )
            return Qrels(empty, f"{self.source} (queries)", labels=self.labels)
        _, codes = np.unique(np.r_[self.doc, chunks.doc], return_inverse=True)
        s_doc, c_doc = codes[: len(self)], codes[len(self) :]
        span, chunk, share = near(s_doc, self.start, self.end, c_doc, chunks.start, chunks.end)
        span, chunk = span[share], chunk[share]
        qnames, qcode = np.unique(self.query, return_inverse=True)
        key = qcode[span] * len(chunks) + chunk
        order = np.lexsort((-self.grade[span], key))
        first = np.r_[True, key[order][1:] != key[order][:-1]] if key.size else np.zeros(0, dtype=bool)
        pick = order[first]  # the highest grade of each (query, chunk)
        q_of, c_of, g_of = qcode[span][pick], chunk[pick], self.grade[span][pick]
        lengths = np.bincount(q_of, minlength=qnames.size)
        cols = Columns(Layout(qnames, lengths), chunks.id_column().take(c_of), g_of.astype(np.int64))
        out = Qrels(cols, f"{self.source} (as chunk grades of {chunks.source})", labels=self.labels)
        return out

    @classmethod
    def locate(
        cls,
        references: Any,
        documents: Any,
        *,
        threshold: float | None = 90.0,
        grade: int = 1,
        docs: Mapping[str, Iterable[str]] | None = None,
        source: str = "<reference texts>",
    ) -> SpanLabels:
        """Reference texts (a mapping ``{query_id: [text, ...]}`` such as RAGAS's
        ``reference_contexts``, or ``(query_id, text)`` pairs) located in ``documents``: exactly
        first, then by the best fuzzy alignment scoring at least ``threshold`` (0-100; None: exact
        only; see :mod:`ctxeval._io.locate`). ``docs``: the documents to search per query (default:
        all, in their order). Every text is counted in :attr:`notes` (exact, fuzzy, found in several
        places, not found); the ones not found are named in :attr:`unlocated` and left out.

        >>> s = SpanLabels.locate({"q": ["quick brown", "no such text"]}, {"d": "The quick brown fox."})
        >>> s.rows(), s.unlocated
        ([('q', 'd', 4, 15, 1)], (('q', 'no such text'),))
        """
        docs_map = read_documents(documents)
        pairs = _reference_pairs(references)
        rows, unlocated = [], []
        fuzzy = repeated = 0
        for qid, text in pairs:
            cands = list(docs[qid]) if docs is not None and qid in docs else None
            hit = find_text(text, docs_map, cands, threshold)
            if hit is None:
                unlocated.append((qid, text))
                continue
            fuzzy += hit.how == "fuzzy"
            repeated += hit.occurrences > 1
            rows.append((qid, hit.doc, hit.start, hit.end, grade))
        notes = [f"{source}: {len(pairs)} reference texts, {len(rows) - fuzzy} located exactly"]
        if fuzzy:
            notes[0] += f", {fuzzy} by fuzzy alignment (partial ratio >= {threshold:g})"
        if repeated:
            notes.append(
                f"{source}: {repeated} reference texts occur more than once; each was placed at its first occurrence"
            )
        if unlocated:
            shown = "; ".join(f"{q}: {t[:40]!r}" for q, t in unlocated[:3]) + (" ..." if len(unlocated) > 3 else "")
            notes.append(f"{source}: {len(unlocated)} reference texts not located, left out ({shown})")
        if not rows:
            raise EmptyInputError(f"{source}: none of the {len(pairs)} reference texts was located in the documents")
        return cls.build(
            rows,
            source=source,
            labels=LabelKind("binary", None, source) if grade == 1 else None,
            notes=notes,
            unlocated=tuple(unlocated),
        )

    @classmethod
    def coerce(cls, obj: Any) -> SpanLabels:
        """A :class:`SpanLabels`, a path, a frame or a list of mappings."""
        if isinstance(obj, SpanLabels):
            return obj
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_file(obj)
        return cls.from_records(obj)

    # -- writing ------------------------------------------------------------------------------------------
    def write(self, path: str | os.PathLike[str], *, format: str | None = None) -> None:
        """Write the labels: TREC-like text, or JSON lines / CSV / TSV / Parquet by the suffix."""
        fmt = format or table_format(path) or "trec"
        if fmt == "trec":
            lines = (f"{q} 0 {d} {s} {e} {g}\n" for q, d, s, e, g in self.rows())
            writers.write_lines(path, lines)
        elif fmt == "parquet":
            writers.write_parquet(self.frame, path)
        elif fmt == "jsonl":
            keys = ("query_id", "doc_id", "start", "end", "grade")
            writers.write_lines(path, (json.dumps(dict(zip(keys, r)), ensure_ascii=False) + "\n" for r in self.rows()))
        elif fmt in ("csv", "tsv"):
            writers.write_text(path, self.frame.write_csv(separator="," if fmt == "csv" else "\t"))
        else:
            raise ConfigError(f"unknown span label format {fmt!r}: use trec, jsonl, csv, tsv or parquet")


def _reference_pairs(references: Any) -> list[tuple[str, str]]:
    if isinstance(references, Mapping):
        out: list[tuple[str, str]] = []
        for qid, texts in references.items():
            if isinstance(texts, str):
                texts = [texts]
            out.extend((str(qid), str(t)) for t in texts)
        return out
    return [(str(q), str(t)) for q, t in references]
