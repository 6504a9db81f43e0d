"""Sample files and frames as sample objects, and sample objects as files: JSON lines, CSV / TSV
(a list or object field is a JSON text in its cell), Parquet (list and struct columns), polars and
pandas frames. Each reader returns ``(line, object)`` pairs for :func:`.schema.parse`; every error
names the file, the line and the problem.

JSON: a key given twice in one object is an error (``duplicates="first"`` keeps the first, and the
set's notes count them; Python's decoder would keep the last silently); nesting deeper than the
decoder's recursion limit and a number of more than 4,300 digits are errors naming the line.

CSV holds text: an empty cell is no value, a cell of a known list or object field (the field table's
:data:`~.fields.JSON_CELLS`) is JSON (or a list
as a Python literal, as RAGAS's ``to_csv`` writes it), a cell of another column is its text (or the
JSON array or object it holds); line numbers count the header as line 1 and name a row's first line.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..._errors import EmptyInputError, FormatError, InputError
from .fields import FIELDS, JSON_CELLS
from .reader import Tally

__all__ = [
    "JSON_CELLS",
    "columnar_record",
    "csv_text",
    "decode_json",
    "frame_records",
    "jsonl_text",
    "read_csv",
    "read_jsonl",
]


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _pairs_hook(duplicates: str, tally: Tally) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            if duplicates != "first":
                seen: set[str] = set()
                raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
            out = {}
            for k, v in pairs:
                if k in out:
                    tally.duplicate_keys += 1
                else:
                    out[k] = v
        return out

    return hook


def decode_json(text: str, source: str, line: int, duplicates: str, tally: Tally, what: str = "") -> Any:
    """One JSON text (a line, a cell), with the errors of the module docstring."""
    try:
        return json.loads(text, object_pairs_hook=_pairs_hook(duplicates, tally))
    except json.JSONDecodeError as exc:
        raise FormatError(source, line, f"{what}not valid JSON ({exc.msg})", text) from None
    except _DuplicateKey as exc:
        raise FormatError(
            source,
            line,
            f"{what}the key {exc.key!r} is given twice in one object (which one counts is unclear); "
            "duplicates='first' / --duplicates first keeps the first",
        ) from None
    except RecursionError:
        raise FormatError(source, line, f"{what}JSON nested too deeply to read") from None
    except ValueError as exc:  # an integer beyond Python's limit of digits
        raise FormatError(source, line, f"{what}not valid JSON ({str(exc).split(';')[0]})") from None


def _read_text(p: Path, newline: str | None = None) -> str:
    try:
        with open(p, encoding="utf-8-sig", newline=newline) as f:
            return f.read()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: a directory, not a sample file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_jsonl(p: Path, duplicates: str, tally: Tally) -> Iterator[tuple[int, Any]]:
    """One object per line, read as the file is (blank lines skipped; a line ends at a newline, so a
    U+2028 inside a string stays in its line): the samples are parsed one line at a time, the file's
    text never held whole."""
    try:
        f = open(p, encoding="utf-8-sig")  # noqa: SIM115 (closed below, after the last line)
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{p}: a directory, not a sample file") from None
    no = 0
    with f:
        try:
            for no, line in enumerate(f, start=1):
                if line.strip():
                    yield no, decode_json(line, str(p), no, duplicates, tally)
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}:{no + 1}: not UTF-8 text ({exc.reason})") from None


def read_csv(p: Path, delimiter: str, duplicates: str, tally: Tally) -> list[tuple[int, Any]]:
    """A header naming the fields, one sample per row."""
    reader = csv.reader(io.StringIO(_read_text(p, newline=""), newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise EmptyInputError(f"{p}: empty (no header)")
        twice = sorted({h for h in header if header.count(h) > 1})
        if twice:
            raise FormatError(str(p), 1, f"the column {twice[0]!r} is given twice in the header")
        out = []
        start = reader.line_num + 1
        for row in reader:
            if row and len(row) != len(header):
                raise FormatError(
                    str(p),
                    start,
                    f"{len(row)} fields, but the header has {len(header)} ({', '.join(header)})",
                    delimiter.join(row),
                )
            if row:
                out.append((start, _csv_record(header, row, str(p), start, duplicates, tally)))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise FormatError(str(p), reader.line_num, f"not valid CSV ({exc})") from None
    return out


def _csv_record(
    header: Sequence[str], row: Sequence[str], source: str, line: int, duplicates: str, tally: Tally
) -> dict[str, Any]:
    rec: dict[str, Any] = {}
    for name, cell in zip(header, row):
        if cell == "":
            continue
        if name in JSON_CELLS:
            try:
                rec[name] = decode_json(cell, source, line, duplicates, tally, f"{name}: ")
            except FormatError:
                rec[name] = _literal_list(cell) if cell.startswith("[") else None
                if rec[name] is None:
                    raise
        elif name not in FIELDS and cell.lstrip()[:1] in ("[", "{"):
            try:
                rec[name] = json.loads(cell)
            except (ValueError, RecursionError):
                rec[name] = cell
        else:
            rec[name] = cell
    return rec


def _literal_list(cell: str) -> list[Any] | None:
    """A list written as a Python literal (``['a', "b's"]``: RAGAS's ``to_csv`` writes lists so) of
    strings and numbers, or None when the cell is no such literal."""
    try:
        value = ast.literal_eval(cell)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in value):
        return value
    return None


def frame_records(frame: Any) -> list[dict[str, Any]]:
    """A polars or pandas frame's rows as plain objects: numpy arrays as lists, numpy scalars as
    Python values, pandas' missing values (NaN, NA, NaT) as absent, and so are polars' nulls in a
    row or an object (a struct column gives every object every key: null where it has none, as in
    ``grades`` of different chunks)."""
    if hasattr(frame, "to_dicts"):
        return [columnar_record(row) for row in frame.to_dicts()]
    return [
        {k: v for k, v in ((str(k), _plain(v)) for k, v in row.items()) if v is not None}
        for row in frame.to_dict("records")
    ]


def columnar_record(v: Any) -> Any:
    """A row of a columnar source (polars, Parquet) without its nulls, in it or in its objects, at any
    depth (a list's elements stay as they are: a null id is the reader's to refuse)."""
    if isinstance(v, dict):
        return {k: columnar_record(x) for k, x in v.items() if x is not None}
    if isinstance(v, list) and v and isinstance(v[0], dict):
        return [columnar_record(x) for x in v]
    return v


def _plain(v: Any) -> Any:
    if isinstance(v, float):
        return None if math.isnan(v) else v
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if hasattr(v, "tolist"):  # numpy arrays and scalars
        return _plain(v.tolist())
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if type(v).__name__ in ("NAType", "NaTType"):
        return None
    return v


def jsonl_text(records: Iterable[Mapping[str, Any]]) -> str:
    """Sample objects as JSON lines (UTF-8 text as it is, keys in the writer's order)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def csv_text(records: Sequence[Mapping[str, Any]], delimiter: str = ",") -> str:
    """Sample objects as CSV: one column per field (in order of first use), lists and objects as JSON
    text, strings as they are."""
    columns: dict[str, None] = {}
    for r in records:
        columns.update(dict.fromkeys(r))
    buf = io.StringIO(newline="")
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\r\n")  # (RFC 4180; a lone \r in a cell is quoted)
    w.writerow(columns)
    for r in records:
        w.writerow(["" if r.get(c) is None else _cell(c, r[c]) for c in columns])
    return buf.getvalue()


def _cell(name: str, v: Any) -> str:
    if isinstance(v, str) and name not in JSON_CELLS:
        return v
    return json.dumps(v, ensure_ascii=False)
