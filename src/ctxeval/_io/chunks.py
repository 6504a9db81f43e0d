"""Chunk tables: where each chunk of a chunking lies in its document, and what it costs in tokens.

A run scored against span labels names chunks by id; the table places each: ``chunk_id -> (doc_id,
start, end)`` in characters (the offsets of :mod:`ctxeval._io.spans`), with optionally the chunk's
``text`` and its ``tokens``. The documents' texts may come with it (``documents=``): they serve the
token counts of chunks without a text, and the measures counted in tokens.

Sources: a file (JSON lines, CSV/TSV, Parquet: fields ``chunk_id`` (or ``doc_id`` of a run, ``id``,
``_id``), ``doc_id`` (or ``document``, ``corpus_id``, ``source``), ``start`` (or ``start_index``,
``start_char_idx``), ``end`` (or ``end_index``, ``end_char_idx``), ``text`` and ``tokens``
optional), a frame, a list of mappings, a mapping ``{chunk_id: (doc_id, start, end)}``; or chunk
texts without offsets located in the documents (:meth:`Chunks.locate`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.ids import ArrayIds, harmonise
from .._core.join import match_pairs
from .._core.keys import lookup_keys
from .._core.segments import distinct
from .._errors import ConfigError, DuplicateError, EmptyInputError, FormatError
from . import writers
from .locate import chroma_find, find_text, read_documents
from .records import columns_of, integer, records, table_format, text_id
from .tokenizers import Tokenizer

if TYPE_CHECKING:
    import polars as pl

    from .._core.ids import Ids

__all__ = ["LOCATE_MODES", "Chunks"]

_FIELDS = {
    "chunk_id": ("chunk_id", "id", "_id", "node_id", "chunk"),
    "doc_id": ("doc_id", "document", "document_id", "corpus_id", "source", "docid", "ref_doc_id"),
    "start": ("start", "start_index", "start_char_idx", "start_char", "start_offset"),
    "end": ("end", "end_index", "end_char_idx", "end_char", "end_offset"),
    "text": ("text", "content", "page_content", "chunk_text"),
    "tokens": ("tokens", "n_tokens", "token_count", "num_tokens"),
}

#: how :meth:`Chunks.locate` places a chunk text (see there)
LOCATE_MODES = ("ordered", "first", "chroma")


@dataclass(frozen=True, eq=False)
class Chunks:
    """A chunk table (see the module docstring).

    >>> c = Chunks.from_dict({"c1": ("d1", 0, 12), "c2": ("d1", 12, 30)}, documents={"d1": "x" * 30})
    >>> len(c), c.lookup(["c2", "c9"]).tolist(), c.token_counts("words-v1")[0].tolist()
    (2, [1, -1], [1, 1])
    """

    ids: np.ndarray
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    text: tuple[str, ...] | None = None
    tokens: np.ndarray | None = None
    documents: Mapping[str, str] | None = field(default=None, repr=False)
    source: str = "<chunks>"
    notes: tuple[str, ...] = ()
    #: chunk ids a location could not place (left out of the table)
    unplaced: tuple[str, ...] = ()
    #: the tokenizer that counted the ``tokens`` column, when the table says (None: not said)
    tokens_by: str | None = None
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = self.ids.size
        if not (self.doc.size == self.start.size == self.end.size == n):
            raise ConfigError("chunk table: the columns must have one length")
        if n == 0:
            raise EmptyInputError(f"{self.source}: no chunks")
        bad = np.flatnonzero((self.start < 0) | (self.end < self.start))
        if bad.size:
            i = int(bad[0])
            raise ConfigError(
                f"{self.source}: chunk {self.ids[i]}: [{self.start[i]}, {self.end[i]}) must have 0 <= start <= end"
            )
        uniq, counts = np.unique(self.ids, return_counts=True)
        if uniq.size != n:
            raise DuplicateError(f"{self.source}: chunk id {str(uniq[counts > 1][0])!r} given twice")
        if self.documents is not None:
            self._check_documents(self.documents)

    def _check_documents(self, docs: Mapping[str, str]) -> None:
        lengths = {d: len(t) for d, t in docs.items()}
        for i, (d, e) in enumerate(zip(self.doc.tolist(), self.end.tolist())):
            n = lengths.get(d)
            if n is None:
                raise ConfigError(
                    f"{self.source}: chunk {self.ids[i]}: no document {d!r} among the {len(lengths)} given"
                )
            if e > n:
                raise ConfigError(
                    f"{self.source}: chunk {self.ids[i]}: ends at {e}, past document {d!r} ({n} characters)"
                )

    def __len__(self) -> int:
        return int(self.ids.size)

    def __repr__(self) -> str:
        return f"Chunks({self.source!r}, {len(self)} chunks in {len(set(self.doc.tolist()))} documents)"

    @property
    def frame(self) -> pl.DataFrame:
        """The table as a polars frame (``chunk_id, doc_id, start, end`` and ``text`` / ``tokens`` when held)."""
        import polars as pl

        cols: dict[str, Any] = {
            "chunk_id": self.ids.tolist(),
            "doc_id": self.doc.tolist(),
            "start": self.start,
            "end": self.end,
        }
        if self.text is not None:
            cols["text"] = list(self.text)
        if self.tokens is not None:
            cols["tokens"] = self.tokens
        return pl.DataFrame(cols)

    def with_documents(self, documents: Any) -> Chunks:
        """The table with the documents' texts (a mapping, a folder or a JSON-lines file)."""
        return replace(self, documents=read_documents(documents), _cache={})

    def lookup(self, ids: Any) -> np.ndarray:
        """The table row of every chunk id (-1 where the table has none)."""
        index = self._cache.get("index")
        if index is None:
            index = self._cache["index"] = {k: i for i, k in enumerate(self.ids.tolist())}
        return np.fromiter((index.get(k, -1) for k in ids), dtype=np.int64)

    def id_column(self) -> Ids:
        """The chunk ids as a core id column (built once)."""
        own = self._cache.get("ids")
        if own is None:
            own = self._cache["ids"] = ArrayIds.from_strings(self.ids.tolist())
        return own

    def doc_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """The table's distinct document ids (sorted) and each chunk's position among them (built once)."""
        own = self._cache.get("doc_codes")
        if own is None:
            names = distinct(self.doc)
            own = self._cache["doc_codes"] = (names, np.searchsorted(names, self.doc))
        return own

    def rows_of(self, ids: Ids) -> np.ndarray:
        """:meth:`lookup` for a core id column (a run's doc ids), by 64-bit key matching (the table's
        keys hashed once per table)."""
        own = self.id_column()
        a, b = harmonise(ids, own)
        if len(a) == 0:
            return np.full(len(ids), -1, dtype=np.int64)
        hb = self._cache.get("id_hash") if b is own else None
        if hb is None:
            hb = b.hash()
            if b is own:
                self._cache["id_hash"] = hb
        out = lookup_keys(a.hash(), hb)
        i = np.flatnonzero(out >= 0)
        if not bool(a.equal(i, b, out[i]).all()):  # a hash collision: the general matching sorts it out
            zeros = np.zeros(len(ids), dtype=np.int64)
            i, j = match_pairs(zeros, ids, np.zeros(len(self), dtype=np.int64), own)
            out = np.full(len(ids), -1, dtype=np.int64)
            out[i] = j
        return out

    def chunk_texts(self, rows: np.ndarray | None = None) -> list[str]:
        """The text of the chunks (``rows``; default all): the ``text`` column, else the documents'
        text at the chunk's offsets."""
        sel = np.arange(len(self)) if rows is None else np.asarray(rows)
        if self.text is not None:
            return [self.text[i] for i in sel.tolist()]
        if self.documents is None:
            raise ConfigError(
                f"{self.source}: counting the chunks' tokens needs their texts: give a text (or tokens) column, or the "
                "documents (Chunks.with_documents, RagConfig(documents=...))"
            )
        docs = self.documents
        return [
            docs[d][s:e] for d, s, e in zip(self.doc[sel].tolist(), self.start[sel].tolist(), self.end[sel].tolist())
        ]

    def token_counts(self, tokenizer: Any = None, rows: np.ndarray | None = None) -> tuple[np.ndarray, str]:
        """The tokens of the chunks ``rows`` (default all) and the name of what counted them: the
        ``tokens`` column when no tokenizer is asked for (named by ``tokens_by``), else the tokenizer
        (default ``words-v1``) over the chunks' texts, each chunk counted once per tokenizer."""
        sel = np.arange(len(self)) if rows is None else np.asarray(rows, dtype=np.int64)
        if tokenizer is None and self.tokens is not None:
            return self.tokens[sel], self.tokens_by or f"the tokens column of {self.source}"
        tok = Tokenizer.coerce(tokenizer)
        key = ("tokens", tok.name)
        known = self._cache.get(key)
        if known is None:
            known = self._cache[key] = np.full(len(self), -1, dtype=np.int64)
        todo = np.unique(sel[known[sel] < 0])
        if todo.size:
            known[todo] = tok.count(self.chunk_texts(todo))
        return known[sel], tok.name

    # -- construction ------------------------------------------------------------------------------------
    @classmethod
    def from_records(
        cls, recs: Any, *, documents: Any = None, source: str | None = None, tokens_by: str | None = None
    ) -> Chunks:
        """From a list of mappings or a pandas / polars frame (fields: the module docstring)."""
        found, names, name = records(recs)
        return cls._of_records(found, names, source or name, documents, tokens_by)

    from_frame = from_records

    @classmethod
    def _of_records(
        cls, found: list[Any], names: list[str], source: str, documents: Any, tokens_by: str | None
    ) -> Chunks:
        cols = columns_of(names, _FIELDS, ("chunk_id", "doc_id", "start", "end"), source)
        ids, docs, starts, ends, texts, toks = [], [], [], [], [], []
        for line, rec in found:
            ids.append(text_id(rec.get(cols["chunk_id"]), "chunk id", source, line))
            docs.append(text_id(rec.get(cols["doc_id"]), "document id", source, line))
            s = integer(rec.get(cols["start"]), "start", source, line)
            e = integer(rec.get(cols["end"]), "end", source, line)
            if s < 0 or e < s:
                raise FormatError(source, line, f"chunk {ids[-1]}: [{s}, {e}) must have 0 <= start <= end")
            starts.append(s)
            ends.append(e)
            if "text" in cols:
                t = rec.get(cols["text"])
                if not isinstance(t, str):
                    raise FormatError(source, line, f"chunk {ids[-1]}: text is not a string")
                texts.append(t)
            if "tokens" in cols:
                n = integer(rec.get(cols["tokens"]), "tokens", source, line)
                if n < 0:
                    raise FormatError(source, line, f"chunk {ids[-1]}: tokens must be >= 0")
                toks.append(n)
        return cls(
            np.array(ids, dtype=str),
            np.array(docs, dtype=str),
            np.array(starts, dtype=np.int64),
            np.array(ends, dtype=np.int64),
            tuple(texts) if "text" in cols else None,
            np.array(toks, dtype=np.int64) if "tokens" in cols else None,
            read_documents(documents) if documents is not None else None,
            source,
            tokens_by=tokens_by,
        )

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        format: str | None = None,
        documents: Any = None,
        tokens_by: str | None = None,
    ) -> Chunks:
        """Read a chunk table: JSON lines, CSV, TSV or Parquet (by the suffix, or ``format``)."""
        fmt = format or table_format(path)
        if fmt is None:
            raise ConfigError(
                f"{path}: a chunk table is JSON lines, CSV, TSV or Parquet (.jsonl, .csv, .tsv, .parquet)"
            )
        found, names, name = records(path, fmt)
        return cls._of_records(found, names, name, documents, tokens_by)

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any], *, documents: Any = None, source: str = "<chunk mapping>") -> Chunks:
        """From ``{chunk_id: (doc_id, start, end)}`` (or ``{chunk_id: {"doc_id": ..., "start": ..., "end": ...}}``)."""
        recs = []
        for k, v in mapping.items():
            if isinstance(v, Mapping):
                recs.append({"chunk_id": k, **v})
            elif isinstance(v, (tuple, list)) and len(v) == 3:
                recs.append({"chunk_id": k, "doc_id": v[0], "start": v[1], "end": v[2]})
            else:
                raise ConfigError(f"{source}: chunk {k!r}: expected (doc_id, start, end), got {v!r}")
        return cls.from_records(recs, documents=documents, source=source)

    @classmethod
    def coerce(cls, obj: Any, documents: Any = None) -> Chunks:
        """A :class:`Chunks`, a path, a mapping, a frame or a list of mappings; ``documents`` added."""
        if isinstance(obj, Chunks):
            out = obj
        elif isinstance(obj, (str, os.PathLike)):
            out = cls.from_file(obj)
        elif isinstance(obj, Mapping):
            out = cls.from_dict(obj)
        else:
            out = cls.from_records(obj)
        return out.with_documents(documents) if documents is not None else out

    @classmethod
    def locate(
        cls,
        texts: Any,
        documents: Any,
        *,
        mode: str = "ordered",
        threshold: float | None = None,
        source: str = "<located chunks>",
    ) -> Chunks:
        """Chunk texts without offsets placed in the documents. ``texts``: ``{chunk_id: (doc_id,
        text)}`` (a chunker's output, each document's chunks in order) or records with ``chunk_id``,
        ``doc_id``, ``text``. ``mode``:

        * ``ordered`` (default): a chunk is placed at the first occurrence that starts after the
          start of the chunk placed before it in its document and ends after that chunk's end (a
          chunker's next chunk always does, overlapping or not), so a repeated passage is placed at
          its own copy; failing that, at its first occurrence; with ``threshold`` (0-100) a chunk not
          found exactly takes the best fuzzy alignment (:func:`ctxeval._io.locate.find_text`);
        * ``first``: the first occurrence of the text (then fuzzy, as above);
        * ``chroma``: Chroma's placement (:func:`ctxeval._io.locate.chroma_find`): a trailing period
          cut, the first occurrence (so a chunk of a repeated passage lands on its first copy), a
          whitespace- and case-blind match, or the best sentence.

        :attr:`notes` count what was placed how; a chunk not placed is named in :attr:`unplaced` and
        left out of the table.

        >>> c = Chunks.locate({"a": ("d", "one two."), "b": ("d", "one two.")}, {"d": "one two. one two."})
        >>> c.start.tolist(), c.end.tolist()
        ([0, 9], [8, 17])
        >>> Chunks.locate({"a": ("d", "one two."), "b": ("d", "one two.")}, {"d": "one two. one two."}, mode="chroma").end.tolist()
        [7, 7]
        """
        if mode not in LOCATE_MODES:
            raise ConfigError(f"locate mode must be one of {', '.join(LOCATE_MODES)}, got {mode!r}")
        docs = read_documents(documents)
        items = _chunk_texts(texts)
        kept: list[dict[str, Any]] = []
        unplaced: list[str] = []
        how: dict[str, int] = {}
        after: dict[str, tuple[int, int]] = {}  # per document: the start + 1 and the end of the chunk placed last
        for cid, doc, text in items:
            body = docs.get(doc)
            if body is None:
                raise ConfigError(f"{source}: chunk {cid}: no document {doc!r} among the {len(docs)} given")
            if mode == "chroma":
                hit = chroma_find(text, body)
                placed = None if hit is None else (hit[0], hit[1], hit[2])
            else:
                lo, past = after.get(doc, (0, 0)) if mode == "ordered" else (0, 0)
                found = find_text(text, {doc: body}, None, threshold, lo, past)
                placed = None if found is None else (found.start, found.end, found.how)
                if found is not None and found.how == "exact" and mode == "ordered" and found.start < lo:
                    placed = (found.start, found.end, "exact, before the chunk placed ahead of it")
            if placed is None:
                unplaced.append(cid)
                continue
            how[placed[2]] = how.get(placed[2], 0) + 1
            after[doc] = (placed[0] + 1, placed[1])
            kept.append({"chunk_id": cid, "doc_id": doc, "start": placed[0], "end": placed[1], "text": text})
        notes = [
            f"{source}: {len(items)} chunk texts placed ({mode}): "
            + ", ".join(f"{n} {k}" for k, n in sorted(how.items()))
        ]
        if unplaced:
            shown = ", ".join(map(repr, unplaced[:5])) + (" ..." if len(unplaced) > 5 else "")
            notes.append(f"{source}: {len(unplaced)} chunk texts not found in their documents, left out ({shown})")
        if not kept:
            raise EmptyInputError(f"{source}: no chunk text was found in the documents")
        out = cls.from_records(kept, source=source)
        return replace(out, documents=docs, notes=tuple(notes), unplaced=tuple(unplaced))

    def write(self, path: str | os.PathLike[str], *, format: str | None = None) -> None:
        """Write the table as JSON lines, CSV, TSV or Parquet (by the suffix, or ``format``)."""
        fmt = format or table_format(path)
        frame = self.frame
        if fmt == "parquet":
            writers.write_parquet(frame, path)
        elif fmt == "jsonl":
            writers.write_text(path, frame.write_ndjson())
        elif fmt in ("csv", "tsv"):
            writers.write_text(path, frame.write_csv(separator="," if fmt == "csv" else "\t"))
        else:
            raise ConfigError(f"{path}: write a chunk table as .jsonl, .csv, .tsv or .parquet")


def _chunk_texts(texts: Any) -> list[tuple[str, str, str]]:
    if isinstance(texts, Mapping):
        out = []
        for cid, v in texts.items():
            if not (isinstance(v, (tuple, list)) and len(v) == 2 and isinstance(v[1], str)):
                raise ConfigError(f"chunk {cid!r}: expected (doc_id, text), got {type(v).__name__}")
            out.append((str(cid), str(v[0]), v[1]))
        return out
    found, names, source = records(texts)
    cols = columns_of(names, _FIELDS, ("chunk_id", "doc_id", "text"), source)
    return [
        (
            text_id(r.get(cols["chunk_id"]), "chunk id", source, line),
            text_id(r.get(cols["doc_id"]), "document id", source, line),
            str(r.get(cols["text"])),
        )
        for line, r in found
    ]
