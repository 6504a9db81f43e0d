"""Tables with named columns: CSV/TSV and JSON lines files, Parquet, pandas and polars frames, and
dict-of-dicts, into core :class:`~ctxeval._core.columns.Columns`.

Columns are found by name (case and surrounding blanks ignored): the query id (``query_id``, ``qid``,
...), the doc id (``doc_id``, ``docid``, ...), the score (runs) or grade (qrels), and for runs an
optional run name. Every reader ends in one vectorised validation step over the whole table; a table
it cannot vouch for goes to the exact row-by-row checker, which names the record of any error.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.columns import Columns, Layout
from .._core.ids import ArrayIds
from .._errors import EmptyInputError, FormatError, InputError
from .exact import Kind, brief, decode, finite_float, parse_grade, parse_score
from .frames import columns_from_frame

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = [
    "from_mapping",
    "from_table",
    "pick",
    "read_delimited",
    "read_jsonl",
    "read_parquet",
    "renamed",
    "split_lines",
]

_QID_NAMES = ("query_id", "qid", "query", "q_id", "topic", "topic_id", "query-id")
_DOC_NAMES = ("doc_id", "docid", "docno", "doc", "pid", "passage_id", "document_id", "corpus-id", "corpus_id")
_SCORE_NAMES = ("score", "sim", "similarity")
# a qrels' ``score`` column is its grade: BEIR's qrels header is ``query-id corpus-id score``
_REL_NAMES = ("relevance", "rel", "grade", "label", "judgment", "judgement", "score")
_TAG_NAMES = ("tag", "run", "run_id", "runid", "name", "system")


def pick(names: Iterable[str], candidates: tuple[str, ...], what: str, source: str, required: bool) -> str | None:
    lowered = {n.lower().strip(): n for n in names}
    for cand in candidates:
        if cand in lowered:
            return lowered[cand]
    if required:
        raise FormatError(
            source,
            1,
            f"no {what} column: expected one of {', '.join(candidates)}; found {', '.join(map(str, names)) or 'none'}",
        )
    return None


_ROLE_NAMES = {"query_id": _QID_NAMES, "doc_id": _DOC_NAMES, "score": _SCORE_NAMES, "relevance": _REL_NAMES}
_ROLE_NAMES["tag"] = _TAG_NAMES
# roles of one kind of file (a run's score and tag, a qrels' grade): the column named for one must be there
_OWN_ROLES = {"score": "score", "relevance": "grade", "tag": "tag"}


def renamed(names: list[str], renames: Mapping[str, str] | None, source: str) -> list[str]:
    """Header names with the columns of a ``columns`` mapping renamed to the readers' names.

    The query and doc ids are shared by the qrels and the runs: a file that lacks the column named
    for one is read by the usual names. A column named for a score, grade or tag must be in the file
    (never another column in its place); and a column the usual names would have picked for a role the
    mapping gives to another column is not read (``score=similarity`` ignores a ``score`` column).

    >>> renamed(["qid", "docid", "score", "similarity"], {"similarity": "score"}, "run.csv")
    ['qid', 'docid', 'score (not read: the columns setting names another)', 'score']
    """
    if not renames:
        return names
    present = set(names)
    for column, target in renames.items():
        if target in _OWN_ROLES and column not in present:
            raise FormatError(
                source,
                1,
                f"no column {column!r}, which the columns setting names for the {_OWN_ROLES[target]}; "
                f"found {', '.join(map(str, names)) or 'none'}",
            )
    hidden = {alias for column, target in renames.items() if column in present for alias in _ROLE_NAMES[target]}
    out = []
    for n in names:
        if n in renames:
            n = renames[n]
        elif n.lower().strip() in hidden:
            n = f"{n} (not read: the columns setting names another)"
        out.append(n)
    return out


def _records_from_rows(
    rows: Iterator[tuple[int, Mapping[str, Any]]], header: list[str], kind: Kind, source: str
) -> pl.DataFrame:
    qcol = pick(header, _QID_NAMES, "query id", source, True)
    dcol = pick(header, _DOC_NAMES, "document id", source, True)
    vcol = pick(
        header, _SCORE_NAMES if kind == "run" else _REL_NAMES, "score" if kind == "run" else "relevance", source, True
    )
    tcol = pick(header, _TAG_NAMES, "run name", source, False) if kind == "run" else None
    qids: list[str] = []
    docs: list[str] = []
    vals: list[Any] = []
    tags: list[str] = []
    for lineno, rec in rows:
        q, d, v = rec.get(qcol), rec.get(dcol), rec.get(vcol)  # type: ignore[arg-type]
        for name, value in ((qcol, q), (dcol, d)):
            if value is None or (isinstance(value, str) and not value.strip()):
                raise FormatError(source, lineno, f"{name} is missing or empty", _show(rec))
            if not isinstance(value, (str, int)) or isinstance(value, bool):
                raise FormatError(source, lineno, f"{name} {brief(value)} is not a string or integer id", _show(rec))
            if isinstance(value, str) and "\x00" in value:
                raise FormatError(source, lineno, f"a NUL byte in {name}", _show(rec))
        if v is None or (isinstance(v, str) and not v.strip()):
            raise FormatError(source, lineno, f"{vcol} is missing or empty", _show(rec))
        qids.append(str(q).strip())
        docs.append(str(d).strip())
        if kind == "run":
            if isinstance(v, bool):
                raise FormatError(source, lineno, f"score {v!r} is not a number", _show(rec))
            if isinstance(v, str):
                vals.append(parse_score(v.strip(), source, lineno, _show(rec)))
            else:
                vals.append(_check_num(v, source, lineno, rec))
            if tcol is not None:
                tags.append(str(rec.get(tcol, "")))
        else:
            vals.append(parse_grade(v.strip() if isinstance(v, str) else v, source, lineno, _show(rec)))
    if not qids:
        raise EmptyInputError(f"{source}: no {kind} records found (the file is empty)")
    cols: dict[str, Any] = {"query_id": pl.Series(qids, dtype=pl.String), "doc_id": pl.Series(docs, dtype=pl.String)}
    if kind == "run":
        cols["score"] = pl.Series(vals, dtype=pl.Float64)
        if tcol is not None:
            cols["tag"] = pl.Series(tags, dtype=pl.String)
    else:
        cols["relevance"] = pl.Series(vals, dtype=pl.Int64)
    return pl.DataFrame(cols)


def _check_num(v: Any, source: str, lineno: int, rec: Any) -> float:
    if not isinstance(v, (int, float)):
        raise FormatError(source, lineno, f"score {brief(v)} is not a number", _show(rec))
    out = finite_float(v)
    if out is None:
        raise FormatError(source, lineno, f"score {brief(v)} is not finite (or beyond a 64-bit float)", _show(rec))
    return out


def _show(rec: Any) -> str:
    try:
        return json.dumps(rec, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        try:
            return repr(rec)
        except ValueError:  # an integer of over 4,300 digits cannot become text
            return "(a record holding a number too long to show)"


def delimited_rows(
    text: str,
    source: str,
    delimiter: str,
    renames: Mapping[str, str] | None = None,
    *,
    comments: bool = False,
    strip: bool = False,
) -> tuple[list[str] | None, list[tuple[int, dict[str, Any]]]]:
    """A delimited text's header (None: no line but blank ones) and its rows as ``(line number, {column:
    field})``; blank lines (and with ``comments``, lines starting with ``#``) are passed over; a header
    naming a column twice, or a row with another number of fields, is a :class:`FormatError` naming
    the line. ``strip``: fields without their surrounding white space."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    header_line = 0
    rows: list[tuple[int, dict[str, Any]]] = []
    for fields in reader:
        lineno = reader.line_num
        if not fields or all(not f.strip() for f in fields) or (comments and fields[0].lstrip().startswith("#")):
            continue
        if header is None:
            header = renamed([f.strip() for f in fields], renames, source)
            header_line = lineno
            seen: set[str] = set()
            for name in header:
                if name.lower() in seen:
                    raise FormatError(
                        source, lineno, f"the header names the column {name!r} twice", delimiter.join(fields)
                    )
                seen.add(name.lower())
            continue
        if len(fields) != len(header):
            raise FormatError(
                source,
                lineno,
                f"expected {len(header)} fields as in the header (line {header_line}), found {len(fields)}",
                delimiter.join(fields),
            )
        rows.append((lineno, dict(zip(header, (f.strip() for f in fields) if strip else fields))))
    return header, rows


def parse_delimited(
    data: bytes, kind: Kind, source: str, delimiter: str, renames: Mapping[str, str] | None = None
) -> pl.DataFrame:
    header, rows = delimited_rows(decode(data, source), source, delimiter, renames)
    if header is None:
        raise EmptyInputError(f"{source}: the file is empty (no header)")
    return _records_from_rows(iter(rows), header, kind, source)


def split_lines(text: str) -> list[str]:
    """The lines of a text as every reader cuts them: a line ends at ``\\n`` (a ``\\r`` before it is
    dropped), so U+2028, U+2029, U+0085, a form feed or a lone ``\\r`` stay inside their line
    (``str.splitlines`` would cut there, yet JSON strings may hold them raw, and MS MARCO's passages
    do). A final ``\\n`` ends the last line (no empty line after it).

    >>> split_lines('{"t": "a' + chr(0x2028) + 'b"}\\r\\nx\\n') == ['{"t": "a' + chr(0x2028) + 'b"}', "x"]
    True
    """
    out = text.split("\n")
    if out and out[-1] == "":
        out.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in out]


def json_value(source: str, lineno: int, text: str, line: str | None = None, field: str | None = None) -> Any:
    """``text`` read as JSON, or the one-line error naming the file, the line (and the ``field`` whose
    value it is): invalid JSON, or a number Python will not read (an integer of over 4,300 digits),
    never a traceback.

    >>> json_value("f.jsonl", 3, '{"a": 1')
    Traceback (most recent call last):
    ctxeval.FormatError: f.jsonl:3: not valid JSON (Expecting ',' delimiter)
    """
    at = f"{field}: " if field else ""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(source, lineno, f"{at}not valid JSON ({exc.msg})", line) from None
    except ValueError:  # Python reads no integer of over 4,300 digits
        raise FormatError(source, lineno, f"{at}a number of over 4,300 digits", line) from None


def parse_jsonl(data: bytes, kind: Kind, source: str, renames: Mapping[str, str] | None = None) -> pl.DataFrame:
    text = decode(data, source)
    rows: list[tuple[int, dict[str, Any]]] = []
    keys: dict[str, None] = {}
    for lineno, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(source, lineno, f"invalid JSON ({exc.msg} at column {exc.colno})", line) from None
        except ValueError:  # Python reads no integer of over 4,300 digits
            raise FormatError(source, lineno, "a number of over 4,300 digits", line) from None
        if not isinstance(rec, dict):
            raise FormatError(source, lineno, "expected a JSON object", line)
        for k in rec:
            keys.setdefault(k, None)
        rows.append((lineno, rec))
    if not rows:
        raise EmptyInputError(f"{source}: no {kind} records found (the file is empty)")
    if renames:
        names = dict(zip(keys, renamed(list(keys), renames, source)))
        rows = [(lineno, {names[k]: v for k, v in rec.items()}) for lineno, rec in rows]
        keys = dict.fromkeys(names.values())
    return _records_from_rows(iter(rows), list(keys), kind, source)


def frame_from_table(table: Any, kind: Kind, source: str) -> pl.DataFrame:
    """Validate a polars or pandas frame with named columns."""
    if not isinstance(table, pl.DataFrame):
        if hasattr(table, "to_dict") and hasattr(table, "columns"):
            table = pl.DataFrame({str(c): list(table[c]) for c in table.columns}, strict=False)
        else:
            raise InputError(f"{source}: expected a pandas or polars DataFrame, got {type(table).__name__}")
    header = list(table.columns)
    if table.height == 0:
        raise EmptyInputError(f"{source}: the frame has no rows")
    qcol = pick(header, _QID_NAMES, "query id", source, True)
    dcol = pick(header, _DOC_NAMES, "document id", source, True)
    vcol = pick(
        header, _SCORE_NAMES if kind == "run" else _REL_NAMES, "score" if kind == "run" else "relevance", source, True
    )
    tcol = pick(header, _TAG_NAMES, "run name", source, False) if kind == "run" else None
    names: list[str] = [c for c in (qcol, dcol, vcol, tcol) if c is not None]
    sub = table.select(names)
    rows = ((i + 1, dict(zip(names, r))) for i, r in enumerate(sub.iter_rows()))
    out = _records_from_rows(rows, names, kind, f"{source} (row)")
    return out


# --------------------------------------------------------------------------------------------------
# the vectorised validation
# --------------------------------------------------------------------------------------------------

_DECIMAL = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"  # what float() and polars read alike
_INTEGER = r"^[+-]?[0-9]+$"
_EDGE_SPACE_OR_NUL = r"^[\s\x1c-\x1f]|[\s\x1c-\x1f]$|\x00"  # (one pass over the ids)


_SPACE_BYTES = tuple(bytes([c]) for c in b" \t\r\x0b\x0c\x1c\x1d\x1e\x1f\x00")


def plain_text(data: bytes, delimiter: str) -> bool:
    """True when delimited ``data`` cannot hold an id with white space at an edge, an empty id or a
    NUL: ASCII without white space (but the delimiter and ``\n``) and without NUL. One pass per
    byte value (memchr), far cheaper than a pattern over every id."""
    if not data.isascii():
        return False
    return all(data.find(b) < 0 for b in _SPACE_BYTES if b != delimiter.encode())


def _ids_ok(s: pl.Series, plain: bool = False) -> pl.Series | None:
    """The ids as a String column, or None when a row needs the exact checker. ``plain``: the text
    they were read from is :func:`plain_text` (no id can be empty, padded or hold a NUL)."""
    if s.null_count():
        return None
    if s.dtype == pl.String:
        if not plain and (bool((s.str.len_bytes() == 0).any()) or bool(s.str.contains(_EDGE_SPACE_OR_NUL).any())):
            return None
        return s
    if s.dtype.is_integer():
        return s.cast(pl.String)
    return None


def _scores_ok(s: pl.Series) -> pl.Series | None:
    if s.null_count():
        return None
    if s.dtype.is_numeric():
        out = s.cast(pl.Float64)
    elif s.dtype == pl.String:
        if not bool(s.str.contains(_DECIMAL).all()):
            return None
        out = s.cast(pl.Float64, strict=False)
        if out.null_count():
            return None
    else:
        return None
    return out if bool(out.is_finite().all()) else None


def _grades_ok(s: pl.Series) -> pl.Series | None:
    if s.null_count():
        return None
    if s.dtype.is_integer():
        out = s.cast(pl.Int64, strict=False)  # beyond int64 (UInt64, Int128): null, and the exact checker reports it
        return None if out.null_count() else out
    if s.dtype.is_float():
        ok = s.is_finite().all() and (s == s.floor()).all() and (s.abs() < 2.0**63).all()
        return s.cast(pl.Int64) if bool(ok) else None
    if s.dtype == pl.String:
        if not bool(s.str.contains(_INTEGER).all()):
            return None
        out = s.cast(pl.Int64, strict=False)
        return None if out.null_count() else out
    return None


def _validated(table: pl.DataFrame, kind: Kind, source: str, plain: bool = False) -> pl.DataFrame | None:
    """``query_id``, ``doc_id``, the value and (runs) ``tag`` columns, checked in bulk; None when some
    row needs the exact row-by-row checker (which then names it). ``plain``: see :func:`_ids_ok`."""
    header = list(table.columns)
    qcol = pick(header, _QID_NAMES, "query id", source, True)
    dcol = pick(header, _DOC_NAMES, "document id", source, True)
    vcol = pick(
        header, _SCORE_NAMES if kind == "run" else _REL_NAMES, "score" if kind == "run" else "relevance", source, True
    )
    tcol = pick(header, _TAG_NAMES, "run name", source, False) if kind == "run" else None
    q, d = _ids_ok(table[qcol], plain), _ids_ok(table[dcol], plain)  # type: ignore[index]
    v = _scores_ok(table[vcol]) if kind == "run" else _grades_ok(table[vcol])  # type: ignore[index]
    if q is None or d is None or v is None:
        return None
    cols = [q.alias("query_id"), d.alias("doc_id"), v.alias("score" if kind == "run" else "relevance")]
    if tcol is not None:
        t = table[tcol]
        if t.dtype != pl.String or t.null_count():
            return None
        cols.append(t.alias("tag"))
    return pl.DataFrame(cols)


def _tag(df: pl.DataFrame) -> str | None:
    if "tag" not in df.columns or df.height == 0:
        return None
    tags = df["tag"]
    first = tags[0]
    if first and tags.null_count() == 0 and bool((tags == first).all()):
        return str(first)
    return None


def _parsed(df: pl.DataFrame, kind: Kind) -> tuple[Columns, str | None]:
    return columns_from_frame(df, "score" if kind == "run" else "relevance"), (_tag(df) if kind == "run" else None)


# --------------------------------------------------------------------------------------------------
# the readers
# --------------------------------------------------------------------------------------------------


def _headerless_qrels(first: str, delimiter: str) -> bool:
    """A TSV qrels line ``qid<TAB>docid<TAB>grade`` where the header would be (BEIR writes them so)."""
    fields = first.split(delimiter)
    names = [f.strip().lower() for f in fields]
    return (
        delimiter == "\t"
        and len(fields) == 3
        and not any(n in _QID_NAMES for n in names)
        and bool(re.fullmatch(r"[+-]?[0-9]+", fields[2].strip()))
    )


def read_delimited(
    data: bytes, kind: Kind, source: str, delimiter: str, renames: Mapping[str, str] | None = None
) -> tuple[Columns, str | None]:
    """CSV (``,``) or TSV (``\t``) with a header line (a TSV qrels of three columns may have none).
    Blank lines (and lines of delimiters only) are skipped, as the exact reader skips them; any other
    line it cannot vouch for sends the file there."""
    end = data.find(b"\n")
    first = (data if end < 0 else data[:end]).rstrip(b"\r").decode("utf-8", errors="replace")
    if kind == "qrels" and _headerless_qrels(first, delimiter):
        data = b"query_id\tdoc_id\trelevance\n" + data
        first = "query_id\tdoc_id\trelevance"
    raw = first.split(delimiter)
    names = [c.strip() for c in raw]
    if renames:  # the header line rewritten with the readers' names (one copy, only when asked)
        names = renamed(names, renames, source)
        first = delimiter.join(names)
        raw = list(names)
        data = first.encode() + (b"" if end < 0 else data[end:])
    if b'"' not in data and first.strip() and len({n.lower() for n in names}) == len(names):
        vcol = pick(names, _SCORE_NAMES if kind == "run" else _REL_NAMES, "value", source, False)
        types = {raw[names.index(vcol)]: pl.Float64 if kind == "run" else pl.Int64} if vcol is not None else {}
        try:
            table = pl.read_csv(
                data, separator=delimiter, has_header=True, infer_schema=False, quote_char=None, schema_overrides=types
            )
        except (pl.exceptions.PolarsError, UnicodeDecodeError):
            table = None
        if table is not None and list(table.columns) == raw:
            table = table.rename(dict(zip(raw, names))).filter(~pl.all_horizontal(pl.all().is_null()))
            if table.height and not any(table[c].null_count() for c in table.columns):
                df = _validated(table, kind, source, plain_text(data, delimiter))
                if df is not None:
                    return _parsed(df, kind)
    return _parsed(parse_delimited(data, kind, source, delimiter), kind)  # (renamed already)


def _mapping_document(data: bytes) -> Mapping[str, Any] | None:
    """A whole-file JSON object whose every value is an object: ``{qid: {docid: value}}``."""
    start = len(data) - len(data.lstrip()) if data[:1].isspace() else 0
    if data[start : start + 1] != b"{":
        return None
    end = data.find(b"\n", start)
    if end >= 0:  # a first line that is a whole record of its own: JSON lines (never decode it all)
        try:
            first = json.loads(data[start:end])
        except (ValueError, UnicodeDecodeError):
            first = None
        if isinstance(first, dict) and not (first and all(isinstance(v, dict) for v in first.values())):
            return None
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(doc, dict) and doc and all(isinstance(v, dict) for v in doc.values()):
        return doc
    return None


def read_jsonl(
    data: bytes, kind: Kind, source: str, renames: Mapping[str, str] | None = None
) -> tuple[Columns, str | None]:
    """JSON lines, one object per line; or one JSON object ``{qid: {docid: score or grade}}``."""
    mapping = _mapping_document(data)
    if mapping is not None:
        return from_mapping(mapping, kind, source), None
    try:
        table = pl.read_ndjson(io.BytesIO(data))
    except (pl.exceptions.PolarsError, UnicodeDecodeError, ValueError):
        table = None
    if table is not None and renames:
        table = table.rename(dict(zip(table.columns, renamed(list(table.columns), renames, source))))
    if table is not None and table.height and not _stringified(table):
        # compact ASCII JSON without escapes or blanks cannot hold a padded id or a NUL
        plain = plain_text(data, "\n") and data.find(b"\\") < 0
        df = _validated(table, kind, source, plain)
        if df is not None:
            return _parsed(df, kind)
    return _parsed(parse_jsonl(data, kind, source, renames), kind)


# what polars writes into a String column for a JSON array, object, boolean or float that shares the
# column with strings (["q1"] becomes the text '["q1"]'); an integer becomes its digits, as the line
# reader reads it
_STRINGIFIED = r"^[\[{]|^(?:true|false)$|^-?[0-9]*\.[0-9]*(?:[eE][+-]?[0-9]+)?$|^-?[0-9]+[eE][+-]?[0-9]+$"


def _stringified(table: pl.DataFrame) -> bool:
    """Whether a String column of JSON lines read by polars may hold the text of a value that was not
    a JSON string: then the line reader reads the file (and refuses ``{"qid": ["q1"]}``, naming the
    line). A string that merely looks so (``"[a]"``, ``"1.5"``) costs only the slower reader."""
    ids = (*_QID_NAMES, *_DOC_NAMES)  # the id columns (a tag is read as text by either reader)
    texts = [
        pl.col(c).str.contains(_STRINGIFIED).any()
        for c, t in table.schema.items()
        if t == pl.String and c.lower().strip() in ids
    ]
    return bool(texts) and bool(table.select(pl.any_horizontal(texts)).item())


def read_parquet(
    path: Any, kind: Kind, source: str, renames: Mapping[str, str] | None = None
) -> tuple[Columns, str | None]:
    try:
        table = pl.read_parquet(path)
    except Exception as exc:
        raise FormatError(source, None, f"cannot read Parquet: {exc}") from exc
    return from_table(table, kind, source, renames)


def from_table(
    table: Any, kind: Kind, source: str, renames: Mapping[str, str] | None = None, plain: bool = False
) -> tuple[Columns, str | None]:
    """A polars or pandas frame with named columns (``plain``: see :func:`_ids_ok`)."""
    if not isinstance(table, pl.DataFrame):
        if not (hasattr(table, "to_dict") and hasattr(table, "columns")):
            raise InputError(f"{source}: expected a pandas or polars DataFrame, got {type(table).__name__}")
        try:
            table = pl.from_pandas(table)
        except Exception:
            table = pl.DataFrame({str(c): list(table[c]) for c in table.columns}, strict=False)
    if table.height == 0:
        raise EmptyInputError(f"{source}: the frame has no rows")
    if renames:
        table = table.rename(dict(zip(table.columns, renamed([str(c) for c in table.columns], renames, source))))
    df = _validated(table, kind, source, plain)
    if df is None:
        df = frame_from_table(table, kind, source)
    return _parsed(df, kind)


def from_mapping(mapping: Mapping[str, Mapping[str, Any]], kind: Kind, source: str) -> Columns:
    """``{query_id: {doc_id: value}}`` (the pytrec_eval / ranx shape), with numpy alone."""
    if not isinstance(mapping, Mapping):
        raise InputError(f"{source}: expected a mapping {{query_id: {{doc_id: value}}}}, got {type(mapping).__name__}")
    heads: list[str] = []
    lengths: list[int] = []
    docs: list[str] = []
    vals: list[Any] = []
    for q, inner in mapping.items():
        if not isinstance(inner, Mapping):
            raise InputError(
                f"{source}: query {q!r} maps to {type(inner).__name__}, expected a mapping of doc id to value"
            )
        n = 0
        for d, v in inner.items():
            loc = f"{source}[{q!r}][{d!r}]"
            if kind == "run":
                if isinstance(v, Mapping):
                    raise InputError(
                        f"{source}: {q!r} maps to a mapping of mappings: several runs are given as a list "
                        "(Run.from_dict(run, name=...) names each), not as a mapping"
                    )
                score = finite_float(v)
                if score is None:
                    raise InputError(f"{loc}: score {brief(v)} is not a finite number")
                vals.append(score)
            else:
                vals.append(parse_grade(v, loc, None, None))
            docs.append(str(d))
            n += 1
        if n:
            heads.append(str(q))
            lengths.append(n)
    if not docs:
        raise EmptyInputError(f"{source}: the mapping holds no (query, doc) pairs")
    values = np.array(vals, dtype=np.float64 if kind == "run" else np.int64)
    head_arr = np.array(heads, dtype=str)
    if np.unique(head_arr).size != head_arr.size:  # str(q) of two keys can coincide (1 and "1")
        raise InputError(f"{source}: two query keys have the same id as text; give each query once")
    return Columns(Layout(head_arr, np.array(lengths, dtype=np.int64)), ArrayIds.from_strings(docs), values)
