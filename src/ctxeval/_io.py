"""Readers and writers at the edge: TREC text (plain or gzip), CSV/TSV, JSONL, Parquet, pandas and
dict-of-dicts in; TREC and Parquet out.

Every reader returns a validated polars frame with the columns ``query_id`` (str), ``doc_id`` (str)
and ``relevance`` (int64, qrels) or ``score`` (float64, runs) plus, for runs, ``tag`` when the input
has one. Malformed input raises :class:`~ctxeval.FormatError` naming the source, the line and the
problem.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from ._errors import ConfigError, DuplicateError, EmptyInputError, FormatError, InputError

if TYPE_CHECKING:
    import numpy as np
    import polars as pl

    from ._segments import Layout
else:
    from ._lazy import pl

Kind = Literal["qrels", "run"]
DuplicatePolicy = Literal["error", "first", "best"]

_QID_NAMES = ("query_id", "qid", "query", "q_id", "topic", "topic_id")
_DOC_NAMES = ("doc_id", "docid", "docno", "doc", "pid", "passage_id", "document_id")
_SCORE_NAMES = ("score", "sim", "similarity")
_REL_NAMES = ("relevance", "rel", "grade", "label", "judgment", "judgement")
_TAG_NAMES = ("tag", "run", "run_id", "runid", "name", "system")

_TREC_COLUMNS = {"qrels": 4, "run": 6}
_CHUNK = 1 << 24


def _open_bytes(path: Path) -> bytes:
    with open(path, "rb") as fh:
        head = fh.read(2)
    if head == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as gz:
                return gz.read()
        except (OSError, EOFError) as exc:
            raise FormatError(str(path), None, f"cannot decompress gzip data: {exc}") from exc
    return path.read_bytes()


def _base_suffix(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return os.path.splitext(name)[1]


def detect_format(path: str | os.PathLike[str]) -> str:
    """The input format implied by a file name: ``parquet``, ``jsonl``, ``csv``, ``tsv`` or ``trec``."""
    suffix = _base_suffix(Path(path))
    return {
        ".parquet": "parquet",
        ".pq": "parquet",
        ".jsonl": "jsonl",
        ".ndjson": "jsonl",
        ".json": "jsonl",
        ".csv": "csv",
        ".tsv": "tsv",
    }.get(suffix, "trec")


# --------------------------------------------------------------------------------------------------
# TREC text
# --------------------------------------------------------------------------------------------------

_WS_RUN = re.compile(rb"[ \t]+")
_LEAD_WS = re.compile(rb"(?m)^[ \t]+")
_TRAIL_WS = re.compile(rb"(?m)[ \t\r]+$")


def _first_data_line(data: bytes) -> bytes | None:
    for line in io.BytesIO(data[: 1 << 16]):
        stripped = line.strip()
        if stripped and not stripped.startswith(b"#"):
            return line
    return None


def _trec_schema(kind: Kind) -> dict[str, Any]:
    if kind == "run":
        return {
            "query_id": pl.String,
            "q0": pl.String,
            "doc_id": pl.String,
            "rank": pl.String,
            "score": pl.Float64,
            "tag": pl.String,
        }
    return {"query_id": pl.String, "iter": pl.String, "doc_id": pl.String, "relevance": pl.Int64}


_TREC_KEEP = {"run": ["query_id", "doc_id", "score", "tag"], "qrels": ["query_id", "doc_id", "relevance"]}


class Loaded(NamedTuple):
    """What a reader returns: the frame, its query layout when computed, and for a compact read the
    run's tag."""

    frame: pl.DataFrame
    layout: Layout | None
    #: ``query_id`` was reduced chunk by chunk and is not in ``frame``; ``layout`` (grouped) holds
    #: the query ids and rebuilds the column on demand (:func:`ctxeval._segments.with_query_id`)
    compact: bool = False
    #: the run's ``tag`` column was reduced too (and dropped): ``tag`` is the tag when one non-empty
    #: tag is used throughout, else None
    tag_settled: bool = False
    tag: str | None = None


def _polars_trec(data: bytes | Path, kind: Kind, sep: bytes, ragged: bool, comments: bool = True, compact: bool = False) -> Loaded | None:
    """Fast path: parse with polars; the frame and its query layout, or ``None`` when anything looks
    off (the slow path then explains).

    With ``ragged=False`` a line with more fields than the format's fails the fast path, so a doubled
    separator (an empty field) can never shift columns silently. ``comments=False`` parses faster
    (polars' comment handling costs a third of the parse); a ``#`` line then either fails the parse or
    shows up as a query id starting with ``#``, and both send the input on to the next tier.
    ``compact`` (a file read in chunks): see :func:`_polars_trec_chunks`.
    """
    chunked = isinstance(data, Path) and not comments and not ragged
    try:
        if chunked:
            found = _polars_trec_chunks(data, kind, sep, compact)  # type: ignore[arg-type]
            if found is None:
                return None
            df, lay, tag = found
        else:
            df = (
                pl.scan_csv(
                    data,
                    separator=sep.decode(),
                    has_header=False,
                    comment_prefix="#" if comments else None,
                    truncate_ragged_lines=ragged,
                    quote_char=None,
                    schema=_trec_schema(kind),
                )
                .select(_TREC_KEEP[kind])
                .collect()
            )
            lay, tag = None, None
    except (pl.exceptions.PolarsError, UnicodeDecodeError, OSError):  # the exact slow path explains it
        return None
    if df.height == 0:
        return None
    if lay is None:
        if not _frame_valid(df, kind):
            return None
        from ._segments import layout

        lay = layout(df)
    # the query segments serve the caller too; an id starting with '#' heads a segment
    if bool(lay.heads.str.starts_with("#").any()):
        return None
    if "query_id" in df.columns:
        return Loaded(df, lay)
    settled = kind == "run"
    if not lay.grouped:  # the general paths need the column
        from ._segments import with_query_id

        return Loaded(with_query_id(df, lay), lay, False, settled, tag)
    return Loaded(df, lay, True, settled, tag)


def _frame_valid(df: pl.DataFrame, kind: Kind) -> bool:
    """No null (an empty field reads as null: polars' missing_is_null) and, in a run, finite scores."""
    checks = [pl.sum_horizontal(pl.all().null_count()).alias("nulls")]
    if kind == "run":
        checks.append(pl.col("score").is_finite().all().alias("finite"))
    row = df.select(checks).row(0)
    return bool(row[0] == 0 and all(row[1:]))


_READ_CHUNK = 16 << 20


def _pread(fd: int, n: int, offset: int) -> bytes:
    """Exactly ``n`` bytes at ``offset`` (fewer only at the end of the file)."""
    data = os.pread(fd, n, offset)
    while len(data) < n:
        more = os.pread(fd, n - len(data), offset + len(data))
        if not more:
            break
        data += more
    return data


def _line_pieces(path: Path) -> Iterator[bytes]:
    """The file in pieces of about ``_READ_CHUNK`` bytes that end at a line end (the last may lack
    its newline). Each piece is read straight into its own bytes object: the line end is found in a
    small read of the piece's last bytes first, so no piece is copied after it is read (a 16 MB copy
    costs 2.5 ms, during which polars' threads would wait). A line longer than the chunk makes the
    piece longer."""
    with open(path, "rb", buffering=0) as fh:
        fd = fh.fileno()
        total = os.fstat(fd).st_size
        at, size = 0, _READ_CHUNK
        while at < total:
            end = at + size
            if end >= total:
                piece = _pread(fd, total - at, at)
                if piece:
                    yield piece
                return
            window, cut = 4096, -1
            while cut < 0:
                lo = max(at, end - window)
                nl = _pread(fd, end - lo, lo).rfind(b"\n")
                if nl >= 0:
                    cut = lo + nl + 1
                elif lo == at:  # no line end in the piece: a longer piece
                    break
                window *= 8
            if cut < 0:
                size *= 2
                continue
            yield _pread(fd, cut - at, at)
            at, size = cut, _READ_CHUNK


def _polars_trec_chunks(path: Path, kind: Kind, sep: bytes, compact: bool) -> tuple[pl.DataFrame, Layout | None, str | None] | None:
    """polars over the file read in pieces of whole lines (see :func:`_line_pieces`): ``(frame,
    layout, tag)``, or ``None`` when a piece fails the fast path's checks.

    Same result as one scan of the file, but the file is never mapped whole: peak memory is the
    columns plus one piece (a mapped 400 MB file counts fully in the resident set, and touching its
    pages costs system time), and each piece is still parsed by polars' threads.

    ``compact``: each piece is checked (no empty field, finite scores) and reduced as soon as it is
    parsed: its ``query_id`` column to runs of equal ids (joined across pieces into the frame's
    layout) and a run's ``tag`` column to whether one tag is used throughout; the frame keeps
    ``doc_id`` and the score or grade. Ten million rows then never hold two columns of id strings
    (320 MB that were only read once), and that memory, first touched page by page, cost more
    system time than the reduction costs. Without ``compact``: the full columns, layout and tag
    left to the caller.
    """
    schema = _trec_schema(kind)
    names = list(schema)
    keep = [names.index(c) for c in _TREC_KEEP[kind]]
    parts = []
    reduced = _Reduced(kind) if compact else None
    for piece in _line_pieces(path):
        part = pl.read_csv(piece, separator=sep.decode(), has_header=False, quote_char=None, schema=schema, columns=keep)
        del piece
        if reduced is not None:
            part = reduced.add(part)
            if part is None:
                return None
        parts.append(part)
    kept = [c for c in _TREC_KEEP[kind] if reduced is None or c not in ("query_id", "tag")]
    df = pl.concat(parts, rechunk=False) if parts else pl.DataFrame(schema={c: schema[c] for c in kept})
    if reduced is None:
        return df, None, None
    return df, reduced.layout(df.height), reduced.tag()


class _Reduced:
    """The per-chunk reduction of :func:`_polars_trec_chunks` (``compact``)."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.heads: list[pl.Series] = []
        self.lengths: list[np.ndarray] = []
        self.first_tag: str | None = None
        self.one_tag = kind == "run"

    def add(self, part: pl.DataFrame) -> pl.DataFrame | None:
        if part.height == 0:
            return part.drop("query_id", "tag", strict=False)
        if not _frame_valid(part, self.kind):
            return None
        import numpy as np

        rle = part.select(pl.col("query_id").rle()).to_series().struct.unnest()
        self.heads.append(rle["value"])
        self.lengths.append(rle["len"].to_numpy().astype(np.int64))
        if self.one_tag:
            tags = part["tag"]
            first = tags[0]
            if self.first_tag is None:
                self.first_tag = first
            self.one_tag = bool(first) and first == self.first_tag and bool((tags == first).all())
        return part.drop("query_id", "tag", strict=False)

    def layout(self, n_rows: int) -> Layout:
        """The frame's query segments: the chunks' runs of equal ids, joined where a query spans two
        chunks."""
        import numpy as np

        from ._segments import Layout

        if not self.heads:
            return Layout(pl.Series("query_id", [], dtype=pl.String), np.zeros(0, dtype=np.int64), 0)
        heads = pl.concat(self.heads, rechunk=True)
        lengths = np.concatenate(self.lengths)
        first = np.cumsum([0] + [h.len() for h in self.heads[:-1]])[1:]  # first run of each later chunk
        new = np.ones(lengths.size, dtype=bool)
        if first.size:
            new[first] = (heads.gather(first) != heads.gather(first - 1)).to_numpy()
        at = np.flatnonzero(new)
        return Layout(heads.gather(at), np.add.reduceat(lengths, at), n_rows)

    def tag(self) -> str | None:
        return self.first_tag if self.one_tag and self.first_tag else None


def _slow_trec(data: bytes, kind: Kind, source: str) -> pl.DataFrame:
    """Exact line-by-line parser: handles every layout trec_eval accepts and explains every error."""
    ncols = _TREC_COLUMNS[kind]
    qids: list[str] = []
    docs: list[str] = []
    vals: list[Any] = []
    tags: list[str] = []
    text = data.decode("utf-8", errors="strict") if data.isascii() else _decode(data, source)
    for lineno, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) < ncols:
            expect = "qid iter docid grade" if kind == "qrels" else "qid Q0 docid rank score tag"
            raise FormatError(
                source, lineno, f"expected {ncols} fields ({expect}), found {len(fields)}", line
            )
        qids.append(fields[0])
        docs.append(fields[2])
        if kind == "run":
            vals.append(_parse_score(fields[4], source, lineno, line))
            tags.append(fields[5])
        else:
            vals.append(_parse_grade(fields[3], source, lineno, line))
    if not qids:
        raise EmptyInputError(f"{source}: no {kind} lines found (the file is empty or only comments)")
    cols: dict[str, Any] = {
        "query_id": pl.Series(qids, dtype=pl.String),
        "doc_id": pl.Series(docs, dtype=pl.String),
    }
    if kind == "run":
        cols["score"] = pl.Series(vals, dtype=pl.Float64)
        cols["tag"] = pl.Series(tags, dtype=pl.String)
    else:
        cols["relevance"] = pl.Series(vals, dtype=pl.Int64)
    return pl.DataFrame(cols)


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(source, line, f"not valid UTF-8 (byte {data[exc.start]:#04x})") from exc


def _parse_score(token: str, source: str, lineno: int | None, line: str | None) -> float:
    try:
        value = float(token)
    except ValueError:
        raise FormatError(source, lineno, f"score {token!r} is not a number", line) from None
    if not math.isfinite(value):
        raise FormatError(source, lineno, f"score {token!r} is not finite", line)
    return value


def _parse_grade(token: Any, source: str, lineno: int | None, line: str | None) -> int:
    if isinstance(token, bool):
        raise FormatError(source, lineno, f"relevance {token!r} is not an integer", line)
    if isinstance(token, int):
        return token
    if isinstance(token, float):
        if math.isfinite(token) and token.is_integer():
            return int(token)
        raise FormatError(source, lineno, f"relevance {token!r} is not an integer", line)
    try:
        return int(str(token))
    except ValueError:
        pass
    try:
        as_float = float(token)
    except ValueError:
        raise FormatError(source, lineno, f"relevance {token!r} is not an integer", line) from None
    if math.isfinite(as_float) and as_float.is_integer():
        return int(as_float)
    raise FormatError(source, lineno, f"relevance {token!r} is not an integer", line)


def parse_trec(path: Path, kind: Kind, source: str) -> pl.DataFrame:
    """Parse TREC qrels or run text. Fields are separated by any run of spaces or tabs; ``#`` lines
    and blank lines are skipped; columns beyond the format's are ignored (as trec_eval does).

    Three tiers, each exact: polars straight from the file; polars after folding white space; a
    line-by-line parser that names the line of any error.
    """
    return parse_trec_layout(path, kind, source).frame


def parse_trec_layout(path: Path, kind: Kind, source: str, compact: bool = False) -> Loaded:
    """:func:`parse_trec` and the frame's query layout when a polars tier has computed it.

    ``compact``: the frame may come without ``query_id`` and ``tag`` (see :class:`Loaded`)."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    gz = head[:2] == b"\x1f\x8b"
    if not gz:
        first = _first_data_line(head)
        if first is not None:
            sep = b"\t" if b"\t" in first else b" "
            found = _polars_trec(path, kind, sep, ragged=False, comments=False, compact=compact)
            if found is not None:
                return found
    data = _open_bytes(path)
    if not data.strip():
        raise EmptyInputError(f"{source}: the file is empty")
    if _first_data_line(data) is None:
        raise EmptyInputError(f"{source}: no {kind} lines found (the file is empty or only comments)")
    normal = _TRAIL_WS.sub(b"", _LEAD_WS.sub(b"", _WS_RUN.sub(b" ", data)))
    found = _polars_trec(normal, kind, b" ", ragged=True) if normal.strip() else None
    if found is None:
        return Loaded(_slow_trec(data, kind, source), None)
    return found


# --------------------------------------------------------------------------------------------------
# Header formats: CSV / TSV / JSONL
# --------------------------------------------------------------------------------------------------


def _pick(names: Iterable[str], candidates: tuple[str, ...], what: str, source: str, required: bool) -> str | None:
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


def _records_from_rows(
    rows: Iterator[tuple[int, Mapping[str, Any]]], header: list[str], kind: Kind, source: str
) -> pl.DataFrame:
    qcol = _pick(header, _QID_NAMES, "query id", source, True)
    dcol = _pick(header, _DOC_NAMES, "document id", source, True)
    vcol = _pick(header, _SCORE_NAMES if kind == "run" else _REL_NAMES, "score" if kind == "run" else "relevance", source, True)
    tcol = _pick(header, _TAG_NAMES, "run name", source, False) if kind == "run" else None
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
                raise FormatError(source, lineno, f"{name} {value!r} is not a string or integer id", _show(rec))
        if v is None or (isinstance(v, str) and not v.strip()):
            raise FormatError(source, lineno, f"{vcol} is missing or empty", _show(rec))
        qids.append(str(q).strip())
        docs.append(str(d).strip())
        if kind == "run":
            if isinstance(v, bool):
                raise FormatError(source, lineno, f"score {v!r} is not a number", _show(rec))
            if isinstance(v, str):
                vals.append(_parse_score(v.strip(), source, lineno, _show(rec)))
            else:
                vals.append(_check_num(v, source, lineno, rec))
            if tcol is not None:
                tags.append(str(rec.get(tcol, "")))
        else:
            vals.append(_parse_grade(v.strip() if isinstance(v, str) else v, source, lineno, _show(rec)))
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
        raise FormatError(source, lineno, f"score {v!r} is not a number", _show(rec))
    if not math.isfinite(float(v)):
        raise FormatError(source, lineno, f"score {v!r} is not finite", _show(rec))
    return float(v)


def _show(rec: Any) -> str:
    try:
        return json.dumps(rec, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(rec)


def parse_delimited(data: bytes, kind: Kind, source: str, delimiter: str) -> pl.DataFrame:
    text = _decode(data, source)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    header_line = 0
    rows: list[tuple[int, dict[str, Any]]] = []
    for fields in reader:
        lineno = reader.line_num
        if not fields or all(not f.strip() for f in fields):
            continue
        if header is None:
            header = [f.strip() for f in fields]
            header_line = lineno
            continue
        if len(fields) != len(header):
            raise FormatError(
                source, lineno, f"expected {len(header)} fields as in the header (line {header_line}), found {len(fields)}",
                delimiter.join(fields),
            )
        rows.append((lineno, dict(zip(header, fields))))
    if header is None:
        raise EmptyInputError(f"{source}: the file is empty (no header)")
    return _records_from_rows(iter(rows), header, kind, source)


def parse_jsonl(data: bytes, kind: Kind, source: str) -> pl.DataFrame:
    text = _decode(data, source)
    rows: list[tuple[int, dict[str, Any]]] = []
    keys: dict[str, None] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(source, lineno, f"invalid JSON ({exc.msg} at column {exc.colno})", line) from None
        if not isinstance(rec, dict):
            raise FormatError(source, lineno, "expected a JSON object", line)
        for k in rec:
            keys.setdefault(k, None)
        rows.append((lineno, rec))
    if not rows:
        raise EmptyInputError(f"{source}: no {kind} records found (the file is empty)")
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
    qcol = _pick(header, _QID_NAMES, "query id", source, True)
    dcol = _pick(header, _DOC_NAMES, "document id", source, True)
    vcol = _pick(header, _SCORE_NAMES if kind == "run" else _REL_NAMES, "score" if kind == "run" else "relevance", source, True)
    tcol = _pick(header, _TAG_NAMES, "run name", source, False) if kind == "run" else None
    names = [qcol, dcol, vcol] + ([tcol] if tcol else [])
    sub = table.select(names)
    rows = ((i + 1, dict(zip(names, r))) for i, r in enumerate(sub.iter_rows()))
    out = _records_from_rows(rows, names, kind, f"{source} (row)")
    return out


def frame_from_dict(mapping: Mapping[str, Mapping[str, Any]], kind: Kind, source: str) -> pl.DataFrame:
    if not isinstance(mapping, Mapping):
        raise InputError(f"{source}: expected a mapping {{query_id: {{doc_id: value}}}}, got {type(mapping).__name__}")
    qids: list[str] = []
    docs: list[str] = []
    vals: list[Any] = []
    for q, inner in mapping.items():
        if not isinstance(inner, Mapping):
            raise InputError(f"{source}: query {q!r} maps to {type(inner).__name__}, expected a mapping of doc id to value")
        for d, v in inner.items():
            loc = f"{source}[{q!r}][{d!r}]"
            if kind == "run":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
                    raise InputError(f"{loc}: score {v!r} is not a finite number")
                vals.append(float(v))
            else:
                vals.append(_parse_grade(v, loc, None, None))
            qids.append(str(q))
            docs.append(str(d))
    if not qids:
        raise EmptyInputError(f"{source}: the mapping holds no (query, doc) pairs")
    col = "score" if kind == "run" else "relevance"
    return pl.DataFrame(
        {
            "query_id": pl.Series(qids, dtype=pl.String),
            "doc_id": pl.Series(docs, dtype=pl.String),
            col: pl.Series(vals, dtype=pl.Float64 if kind == "run" else pl.Int64),
        }
    )


def read_file(path: str | os.PathLike[str], kind: Kind, fmt: str | None = None) -> pl.DataFrame:
    return read_file_layout(path, kind, fmt).frame


def read_file_layout(path: str | os.PathLike[str], kind: Kind, fmt: str | None = None, compact: bool = False) -> Loaded:
    """:func:`read_file` and the frame's query layout when the reader has computed it (else None).

    ``compact``: a large TREC file may come back without ``query_id`` and ``tag`` (see
    :class:`Loaded`); other formats never do."""
    p = Path(path)
    source = str(path)
    if not p.exists():
        raise InputError(f"{source}: no such file")
    if p.is_dir():
        raise InputError(f"{source}: is a directory, expected a {kind} file")
    fmt = fmt or detect_format(p)
    if fmt == "parquet":
        try:
            table = pl.read_parquet(p)
        except Exception as exc:  # noqa: BLE001
            raise FormatError(source, None, f"cannot read Parquet: {exc}") from exc
        return Loaded(frame_from_table(table, kind, source), None)
    if fmt == "trec":
        return parse_trec_layout(p, kind, source, compact)
    data = _open_bytes(p)
    if not data.strip():
        raise EmptyInputError(f"{source}: the file is empty")
    if fmt == "jsonl":
        return Loaded(parse_jsonl(data, kind, source), None)
    if fmt in ("csv", "tsv"):
        return Loaded(parse_delimited(data, kind, source, "," if fmt == "csv" else "\t"), None)
    raise ConfigError(f"unknown input format {fmt!r}: use trec, csv, tsv, jsonl or parquet")


# --------------------------------------------------------------------------------------------------
# Duplicates
# --------------------------------------------------------------------------------------------------


def pair_keys(df: pl.DataFrame) -> np.ndarray:
    """A 64-bit key of each (query_id, doc_id) pair (see :func:`ctxeval._segments.pair_keys`)."""
    from ._segments import pair_keys as keys

    return keys(df["query_id"], df["doc_id"])


def check_duplicate_policy(policy: str) -> None:
    if policy not in ("error", "first", "best"):
        raise ConfigError(f"duplicates policy must be 'error', 'first' or 'best', got {policy!r}")


def resolve_duplicates(
    df: pl.DataFrame, kind: Kind, source: str, policy: DuplicatePolicy, locate: Any = None, layout: Layout | None = None
) -> tuple[pl.DataFrame, int]:
    """Apply the duplicate (query, doc) policy; returns the frame and how many rows were dropped.

    ``layout`` (of ``df``) saves recomputing the query segments when the caller has them.
    """
    check_duplicate_policy(policy)
    from ._segments import duplicate_free

    if duplicate_free(df, layout):
        return df, 0
    if policy == "error":
        dup = (
            df.with_row_index("_row")
            .filter(pl.struct("query_id", "doc_id").is_duplicated())
            .head(2)
        )
        q, d = dup["query_id"][0], dup["doc_id"][0]
        rows = dup.filter((pl.col("query_id") == q) & (pl.col("doc_id") == d))["_row"].to_list()
        where = locate(q, d) if locate is not None else None
        if where:
            lines = " and ".join(str(x) for x in where[:2])
            msg = f"{source}: duplicate {kind} entry for query {q!r}, doc {d!r} on lines {lines}"
        else:
            msg = f"{source}: duplicate {kind} entry for query {q!r}, doc {d!r} (records {rows[0] + 1} and {rows[-1] + 1})"
        opt = "--duplicates first|best" if kind == "run" else "--duplicates first|best"
        raise DuplicateError(msg + f"; pass {opt} (duplicates='first' or 'best') to keep one")
    before = df.height
    if policy == "first":
        out = df.unique(subset=["query_id", "doc_id"], keep="first", maintain_order=True)
    else:
        col = "score" if kind == "run" else "relevance"
        out = (
            df.with_row_index("_row")
            .sort([col, "_row"], descending=[True, False])
            .unique(subset=["query_id", "doc_id"], keep="first")
            .sort("_row")
            .drop("_row")
        )
    return out, before - out.height


def locate_in_trec(data_path: str | os.PathLike[str], q: str, d: str) -> list[int]:
    """Line numbers at which (q, d) occurs in a TREC file (used only to explain a duplicate)."""
    lines: list[int] = []
    data = _open_bytes(Path(data_path))
    for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        f = line.split()
        if len(f) >= 3 and f[0] == q and f[2] == d:
            lines.append(lineno)
            if len(lines) == 2:
                break
    return lines


# --------------------------------------------------------------------------------------------------
# Writers
# --------------------------------------------------------------------------------------------------


def _fmt_float(x: float) -> str:
    return repr(float(x))


def write_trec_run(df: pl.DataFrame, path: str | os.PathLike[str], name: str) -> None:
    """Write a run as ``qid Q0 docid rank score tag``; rank follows the frame's order per query."""
    out = df.with_columns(
        pl.int_range(1, pl.len() + 1).over("query_id").alias("rank"),
    )
    _write_text(
        path,
        (
            f"{q} Q0 {d} {r} {_fmt_float(s)} {name}\n"
            for q, d, r, s in out.select("query_id", "doc_id", "rank", "score").iter_rows()
        ),
    )


def write_trec_qrels(df: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    _write_text(path, (f"{q} 0 {d} {r}\n" for q, d, r in df.select("query_id", "doc_id", "relevance").iter_rows()))


def _write_text(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    p = Path(path)
    with open(p, "wb") as raw:
        if p.name.endswith(".gz"):
            # mtime=0 and no file name: the same data gives the same bytes.
            stream: Any = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0)
        else:
            stream = raw
        fh = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
        _write_lines(fh, lines)
        fh.flush()
        fh.detach()
        if stream is not raw:
            stream.close()


def _write_lines(fh: Any, lines: Iterable[str]) -> None:
    buf: list[str] = []
    for line in lines:
        buf.append(line)
        if len(buf) >= 65536:
            fh.write("".join(buf))
            buf.clear()
    fh.write("".join(buf))
