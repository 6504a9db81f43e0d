"""Reading a run or qrels: the format registry, and the one duplicate rule every format follows.

A file's format comes from its name (``.parquet``/``.pq``, ``.jsonl``/``.ndjson``/``.json``,
``.csv``, ``.tsv``, otherwise TREC text; ``.gz`` is looked through) unless given. Every reader yields
core :class:`~ctxeval._core.columns.Columns`; then one scan finds repeated (query, doc) pairs, and
the duplicate policy decides: ``error`` (naming both lines, or both records), ``first`` or ``best``
(the highest score or grade; the first among equals) keep one row of each pair. A path may be ``-``
(standard input) or any other stream, read once (:func:`~ctxeval._io.source.local_copy`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from .._core.columns import Columns, duplicate_groups, keep_rows, scan
from .._errors import ConfigError, DuplicateError, EmptyInputError
from . import tables, trec
from .source import local_copy, open_bytes
from .trec import Kind

__all__ = ["FORMATS", "Read", "detect_format", "read_file", "resolve_duplicates"]

_SUFFIXES = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
}


class Read(NamedTuple):
    """A file read: its columns (duplicates resolved), how many rows the policy dropped, and for a
    run the tag when one non-empty tag is used throughout."""

    columns: Columns
    dropped: int
    tag: str | None


def _read_trec(path: Path, kind: Kind, source: str, renames: Mapping[str, str] | None) -> tuple[Columns, str | None]:
    if renames:
        raise ConfigError(
            f"{source}: the columns setting names columns of tabular input (CSV, TSV, JSON lines, Parquet), not of TREC text"
        )
    parsed = trec.read_trec(path, kind, source)
    return parsed.columns, parsed.tag


def _text(
    reader: Callable[[bytes, Kind, str, Mapping[str, str] | None], tuple[Columns, str | None]],
) -> Callable[[Path, Kind, str, Mapping[str, str] | None], tuple[Columns, str | None]]:
    def read(path: Path, kind: Kind, source: str, renames: Mapping[str, str] | None) -> tuple[Columns, str | None]:
        data = open_bytes(path, source, kind)
        if data.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark is not data
            data = data[3:]
        if not data or data.isspace():  # (isspace stops at the first other byte; strip would copy)
            raise EmptyInputError(f"{source}: the file is empty")
        return reader(data, kind, source, renames)

    return read


#: format name -> reader of a file of that format
FORMATS: dict[str, Callable[[Path, Kind, str, Mapping[str, str] | None], tuple[Columns, str | None]]] = {
    "trec": _read_trec,
    "csv": _text(lambda data, kind, source, renames: tables.read_delimited(data, kind, source, ",", renames)),
    "tsv": _text(lambda data, kind, source, renames: tables.read_delimited(data, kind, source, "\t", renames)),
    "jsonl": _text(tables.read_jsonl),
    "parquet": tables.read_parquet,
}


def detect_format(path: str | os.PathLike[str]) -> str:
    """The input format implied by a file name: ``parquet``, ``jsonl``, ``csv``, ``tsv`` or ``trec``
    (``.gz``, ``.bz2``, ``.xz`` looked through; ``-``, standard input, is TREC text)."""
    name = Path(path).name.lower()
    for compressed in (".gz", ".bz2", ".xz"):
        name = name.removesuffix(compressed)
    return _SUFFIXES.get(os.path.splitext(name)[1], "trec")


def check_duplicate_policy(policy: str) -> None:
    if policy not in ("error", "first", "best"):
        raise ConfigError(f"duplicates policy must be 'error', 'first' or 'best', got {policy!r}")


def read_file(
    path: str | os.PathLike[str],
    kind: Kind,
    fmt: str | None = None,
    duplicates: str = "error",
    renames: Mapping[str, str] | None = None,
    source: str | None = None,
) -> Read:
    """Read a run or qrels file of any registered format and apply the duplicate policy; ``renames``:
    column name -> the readers' name (:meth:`ctxeval.Policies.renames`), for tabular formats;
    ``source``: the name errors give the file (default: its path)."""
    check_duplicate_policy(duplicates)
    if isinstance(path, str) and path.startswith("irds:"):  # an ir_datasets dataset by name
        return _read_irds(path, kind, duplicates)
    source = str(path) if source is None else source
    fmt = fmt or detect_format(path)
    reader = FORMATS.get(fmt)
    if reader is None:
        raise ConfigError(f"unknown input format {fmt!r}: use {', '.join(FORMATS)}")
    with local_copy(path, source, kind) as p:  # a stream (-, a pipe) read once, into a file
        cols, tag = reader(p, kind, source, renames)
        locate = (lambda q, d: trec.locate_in_trec(p, q, d)) if fmt == "trec" else None
        cols, dropped = resolve_duplicates(cols, kind, source, duplicates, locate)
        if dropped and kind == "run" and fmt == "trec" and tag is None:
            tag = _kept_tag(p, cols, source)  # the dropped rows may have carried the other tags
    return Read(cols, dropped, tag)


def _read_irds(ref: str, kind: Kind, duplicates: str) -> Read:
    from .irds import qrels_columns

    if kind != "qrels":
        raise ConfigError(f"{ref}: an ir_datasets dataset gives qrels, query texts and passages, not a {kind}")
    cols, dropped = resolve_duplicates(qrels_columns(ref), kind, ref, duplicates)
    return Read(cols, dropped, None)


def _kept_tag(path: Path, cols: Columns, source: str) -> str | None:
    """The run's tag over the rows kept after dropping duplicates (a rare path: the file is read
    again, line by line, for its tags)."""
    import numpy as np

    tags = trec.read_tags(path, source)
    records = cols.source_rows if cols.source_rows is not None else np.arange(len(cols))
    kept = {tags[int(r)] for r in records.tolist()}
    return next(iter(kept)) if len(kept) == 1 and "" not in kept else None


def resolve_duplicates(cols: Columns, kind: Kind, source: str, policy: str, locate: Any = None) -> tuple[Columns, int]:
    """Apply the duplicate (query, doc) policy; the columns and how many rows were dropped.
    ``locate(q, d)``: the file's line numbers of a pair, to name them in the error."""
    check_duplicate_policy(policy)
    found = scan(cols, ties=kind == "run")
    groups = duplicate_groups(cols, found.dup_segments)
    if not groups:
        return cols, 0
    if policy == "error":
        first = min(groups, key=lambda g: min(cols.record(int(r)) for r in g))
        records = sorted(cols.record(int(r)) for r in first)
        q = str(cols.layout.heads[cols.layout.segment_of(first[:1])[0]])
        d = cols.doc.to_list(first[:1])[0]
        where = locate(q, d) if locate is not None else None
        if where:
            msg = f"{source}: duplicate {kind} entry for query {q!r}, doc {d!r} on lines {' and '.join(str(x) for x in where[:2])}"
        else:
            msg = f"{source}: duplicate {kind} entry for query {q!r}, doc {d!r} (records {records[0] + 1} and {records[-1] + 1})"
        raise DuplicateError(msg + "; pass --duplicates first|best (duplicates='first' or 'best') to keep one")
    keep = keep_rows(cols, groups, policy)
    return cols.take(keep), len(cols) - int(keep.size)
