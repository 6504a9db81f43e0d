"""Records with named fields and the line each came from: JSON lines, CSV/TSV with a header, Parquet,
pandas and polars frames, and lists of mappings (the span labels' and the chunk tables' readers).

A field is found by any of its names (case and surrounding blanks ignored); :func:`field_of` names
the record's line in every error, so a bad value is reported as ``file:line: problem``.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._errors import ConfigError, EmptyInputError, FormatError, InputError
from .tables import json_value
from .trec import open_bytes

__all__ = ["Record", "columns_of", "decode_text", "integer", "records", "table_format", "text_id"]

Record = tuple[int, Mapping[str, Any]]  # (line or row number, fields)

_SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def decode_text(data: bytes, source: str) -> str:
    """UTF-8 text as it is (a byte order mark dropped); not UTF-8 is an error naming the byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 (byte {exc.start}): offsets count characters of UTF-8 text") from None
    return text[1:] if text.startswith("\ufeff") else text


def table_format(path: str | os.PathLike[str]) -> str | None:
    """``jsonl``, ``csv``, ``tsv`` or ``parquet`` by the file's suffix (``.gz`` looked through), else None."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return _SUFFIXES.get(os.path.splitext(name)[1])


def records(source: Any, fmt: str | None = None) -> tuple[list[Record], list[str], str]:
    """The records of a file (by ``fmt`` or its suffix), a frame or a list of mappings: (records with
    their line numbers, the field names, the source's name)."""
    if isinstance(source, (str, os.PathLike)):
        p = Path(source)
        fmt = fmt or table_format(p)
        if fmt == "parquet":
            import polars as pl

            return _frame(pl.read_parquet(p), str(p), first_line=1)
        text = decode_text(open_bytes(p), str(p))
        if fmt == "jsonl":
            return _jsonl(text, str(p))
        if fmt in ("csv", "tsv"):
            return _delimited(text, str(p), "," if fmt == "csv" else "\t")
        raise ConfigError(f"{p}: unknown table format {fmt!r}: use jsonl, csv, tsv or parquet")
    if isinstance(source, list) and all(isinstance(r, Mapping) for r in source):
        names = list(dict.fromkeys(k for r in source for k in r))
        return [(i + 1, r) for i, r in enumerate(source)], names, "<records>"
    return _frame(source, f"<{type(source).__name__}>", first_line=1)


def _jsonl(text: str, source: str) -> tuple[list[Record], list[str], str]:
    out: list[Record] = []
    names: dict[str, None] = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        rec = json_value(source, lineno, line, line)
        if not isinstance(rec, dict):
            raise FormatError(source, lineno, "expected a JSON object", line)
        names.update(dict.fromkeys(rec))
        out.append((lineno, rec))
    if not out:
        raise EmptyInputError(f"{source}: no records")
    return out, list(names), source


def _delimited(text: str, source: str, delimiter: str) -> tuple[list[Record], list[str], str]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise EmptyInputError(f"{source}: the file is empty") from None
    header = [h.strip() for h in header]
    out: list[Record] = []
    for row in reader:
        lineno = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise FormatError(source, lineno, f"{len(row)} fields, the header has {len(header)}", delimiter.join(row))
        out.append((lineno, dict(zip(header, row))))
    if not out:
        raise EmptyInputError(f"{source}: no records")
    return out, header, source


def _frame(frame: Any, source: str, first_line: int) -> tuple[list[Record], list[str], str]:
    mod = type(frame).__module__ or ""
    if mod.startswith("pandas"):
        names = [str(c) for c in frame.columns]
        rows = frame.to_dict("records")
    elif mod.startswith("polars"):
        names = list(frame.columns)
        rows = frame.to_dicts()
    else:
        raise ConfigError(f"expected a file, a frame or a list of mappings, got {type(frame).__name__}")
    if not rows:
        raise EmptyInputError(f"{source}: no records")
    return [(i + first_line, {str(k): v for k, v in r.items()}) for i, r in enumerate(rows)], names, source


def columns_of(
    names: Iterable[str], wanted: Mapping[str, tuple[str, ...]], required: Iterable[str], source: str
) -> dict[str, str]:
    """The field holding each role of ``wanted`` (role -> accepted names), by the first accepted name
    present; a role of ``required`` missing is an error naming what was found."""
    lowered = {n.lower().strip(): n for n in names}
    out: dict[str, str] = {}
    for role, accepted in wanted.items():
        hit = next((lowered[a] for a in accepted if a in lowered), None)
        if hit is not None:
            out[role] = hit
    for role in required:
        if role not in out:
            raise FormatError(
                source,
                None,
                f"no {role} field: expected one of {', '.join(wanted[role])}; found {', '.join(names) or 'none'}",
            )
    return out


def text_id(value: Any, what: str, source: str, line: int) -> str:
    """An id field as a string (a string or an integer), stripped; anything else is an error."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise FormatError(source, line, f"{what} {value!r} is not a string or integer id")
    out = str(value).strip()
    if not out or "\x00" in out:
        raise FormatError(source, line, f"{what} is empty" if not out else f"a NUL byte in {what}")
    return out


def integer(value: Any, what: str, source: str, line: int) -> int:
    """A whole number field (an int, an integral float, or its text)."""
    given = value
    if isinstance(value, str):
        t = value.strip()
        try:
            value = int(t)
        except ValueError:
            try:
                value = float(t)
            except ValueError:
                raise FormatError(source, line, f"{what} {value!r} is not a whole number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(source, line, f"{what} {value!r} is not a whole number")
    if isinstance(value, float) and (not math.isfinite(value) or not value.is_integer()):
        raise FormatError(source, line, f"{what} {given!r} is not a whole number")
    return int(value)
