"""TREC text (plain or gzip): ``qid iter docid grade`` (qrels) and ``qid Q0 docid rank score tag``
(runs), into core :class:`~ctxeval._core.columns.Columns`.

The rule, which every tier follows (``tests/io/test_reader_rule.py`` runs each case through each):

* Lines end at ``\n`` (a ``\r`` before it is dropped); a UTF-8 byte order mark at the start is
  skipped; lines that are blank or start with ``#`` are skipped.
* Fields are separated by ASCII spaces and tabs, any run of them one separator; leading and trailing
  ones are ignored. Every other character (a no-break space, U+3000, a vertical tab ...) belongs to a
  field, except NUL, which is an error.
* Every line holds exactly the format's fields (4 or 6); anything else is an error naming the file
  and the line (a run given where qrels belong is named as such). The one exception is trec_eval's
  own reading of a run (``trailing="ignore"``, for ``ctxeval trec_eval``): words after the sixth
  field are dropped, as trec_eval drops them, and the lines that had them are counted.
* A grade is a whole number in ASCII digits (``2`` or ``2.0``) that fits in 64 bits; a score is a
  finite decimal number in ASCII (``0.5``, ``-1e3``). Underscores, other digits (``٣``), ``inf``
  and ``nan`` are errors.

Five tiers, the first that accepts a file reads it: the native scanner (:mod:`.native`, compiled
when the package is installed; ctxeval works without it); numpy alone for small plain files
(:mod:`.light`); polars straight from the file, in pieces of whole lines, each reduced as soon as it
is parsed (its query ids to runs, its tags to one name); polars after folding white space; and the
line-by-line parser, which is the rule written out and names the line of any error. A fast tier that
meets anything it cannot vouch for gives the file to the next.

(~600 lines on purpose: the rule and every tier that follows it side by side, so that a change to the
rule meets each tier in the same file; ``tests/io/test_reader_rule.py`` runs each case through each.)
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import numpy as np

from .._core.columns import Columns
from .._errors import EmptyInputError, FormatError
from . import light, native
from .frames import columns_from_frame, columns_from_runs, query_array
from .ids import SeriesIds

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = [
    "Kind",
    "Parsed",
    "brief",
    "cut_trailing",
    "decode",
    "finite_float",
    "locate_in_trec",
    "open_bytes",
    "parse_grade",
    "parse_score",
    "read_tags",
    "read_trec",
    "split_fields",
]

Kind = Literal["qrels", "run"]
_TREC_COLUMNS = {"qrels": 4, "run": 6}
_VALUE = {"run": "score", "qrels": "relevance"}


class Parsed(NamedTuple):
    """A file read into columns, and for a run the tag when one non-empty tag is used throughout;
    ``trailing``: lines whose words after the format's fields were dropped (``trailing="ignore"``)."""

    columns: Columns
    tag: str | None
    trailing: int = 0


def open_bytes(path: Path) -> bytes:
    with open(path, "rb") as fh:
        head = fh.read(2)
    if head == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as gz:
                return gz.read()
        except (OSError, EOFError) as exc:
            raise FormatError(str(path), None, f"cannot decompress gzip data: {exc}") from exc
    return path.read_bytes()


_WS_RUN = re.compile(rb"[ \t]+")
_LEAD_WS = re.compile(rb"(?m)^[ \t]+")
_TRAIL_WS = re.compile(rb"(?m)[ \t]*\r?$")


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


_EXTRA = "_extra"  # one column past the format's: a line with too many fields fills it


def _checked_schema(kind: Kind) -> dict[str, Any]:
    return {**_trec_schema(kind), _EXTRA: pl.String}


def _frame_valid(df: pl.DataFrame, kind: Kind) -> bool:
    """No null in the format's columns (an empty field reads as null: polars' missing_is_null),
    nothing past them and, in a run, finite scores (a NUL byte is looked for in the bytes)."""
    data_cols = [c for c in df.columns if c != _EXTRA]
    checks = [pl.sum_horizontal([pl.col(c).null_count() for c in data_cols]).alias("nulls")]
    if _EXTRA in df.columns:
        checks.append((pl.col(_EXTRA).null_count() == pl.len()).alias("no_extra"))
    if kind == "run":
        checks.append(pl.col("score").is_finite().all().alias("finite"))
    row = df.select(checks).row(0)
    return bool(row[0] == 0 and all(row[1:]))


def _tag_of(tags: pl.Series) -> str | None:
    """The tag when one non-empty tag is used throughout, else None."""
    if tags.len() == 0:
        return None
    first = tags[0]
    if first and tags.null_count() == 0 and bool((tags == first).all()):
        return str(first)
    return None


def _polars_trec(data: bytes, kind: Kind) -> Parsed | None:
    """polars over white-space-folded text (comment lines allowed); None when anything looks off
    (the exact tier then explains)."""
    if b"\x00" in data or b"\r" in data:  # a NUL, or a \r inside a line (line-end ones are folded away)
        return None
    try:
        df = (
            pl.scan_csv(
                data,
                separator=" ",
                has_header=False,
                comment_prefix="#",
                quote_char=None,
                schema=_checked_schema(kind),
                missing_columns="insert",
            )
            .select([*_TREC_KEEP[kind], _EXTRA])
            .collect()
        )
    except (pl.exceptions.PolarsError, UnicodeDecodeError, OSError):
        return None
    if df.height == 0 or not _frame_valid(df, kind):
        return None
    df = df.drop(_EXTRA)
    if bool(df["query_id"].str.starts_with("#").any()):
        return None
    tag = _tag_of(df["tag"]) if kind == "run" else None
    return Parsed(columns_from_frame(df, _VALUE[kind]), tag)


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


def _memory_pieces(data: bytes) -> Iterator[bytes]:
    """``data`` in pieces of about ``_READ_CHUNK`` bytes ending at a line end, as :func:`_line_pieces`
    reads a file: each piece parsed and reduced before the next, so that polars' working memory is a
    piece's, not the whole buffer's."""
    at = 0
    while at < len(data):
        cut = data.find(b"\n", at + _READ_CHUNK) + 1 if at + _READ_CHUNK < len(data) else 0
        end = cut or len(data)
        yield data[at:end]
        at = end


class _Reduced:
    """Each piece of a file read in pieces, reduced as soon as it is parsed: its query ids to runs
    of equal ids (joined across pieces), its tags to whether one tag is used throughout, its values
    to a numpy array; only the doc ids stay a polars column."""

    def __init__(self, kind: Kind, size_hint: int = 0) -> None:
        self.kind = kind
        self.size_hint = size_hint  #: the file's size in bytes (0: unknown)
        self.heads: list[pl.Series] = []
        self.lengths: list[np.ndarray] = []
        self.docs: list[pl.Series] = []
        self.values: np.ndarray | None = None  # filled piece by piece while the piece is in cache
        self.n_values = 0
        self.first_tag: str | None = None
        self.one_tag = kind == "run"

    def add(self, part: pl.DataFrame, piece_bytes: int = 0) -> bool:
        if part.height == 0:
            return True
        if not _frame_valid(part, self.kind):
            return False
        rle = part.select(pl.col("query_id").rle()).to_series().struct.unnest()
        self.heads.append(rle["value"])
        self.lengths.append(rle["len"].to_numpy().astype(np.int64))
        self.docs.append(part["doc_id"])
        self._append_values(part[_VALUE[self.kind]], piece_bytes)
        if self.one_tag:
            tags = part["tag"]
            first = tags[0]
            if self.first_tag is None:
                self.first_tag = first
            self.one_tag = bool(first) and first == self.first_tag and bool((tags == first).all())
        return True

    def _append_values(self, s: pl.Series, piece_bytes: int) -> None:
        """Copy a piece's values (chunk by chunk, each viewed without a copy) into one array, while
        they are in cache: one concatenation of the whole column afterwards costs twice as much. The
        array is sized from the first piece's rows per byte and the file's size (grown if short)."""
        need = self.n_values + s.len()
        if self.values is None or need > self.values.size:
            estimate = int(s.len() / max(piece_bytes, 1) * self.size_hint * 1.02) + 1024 if self.values is None else 0
            size = max(need, estimate, int(self.n_values * 1.25))
            grown = np.empty(size, dtype=np.float64 if self.kind == "run" else np.int64)
            if self.values is not None:
                grown[: self.n_values] = self.values[: self.n_values]
            self.values = grown
        at = self.n_values
        for chunk in s.get_chunks():
            n = chunk.len()
            self.values[at : at + n] = chunk.to_numpy()
            at += n
        self.n_values = at

    def columns(self) -> Columns | None:
        if not self.heads:
            return None
        heads = pl.concat(self.heads, rechunk=True)
        lengths = np.concatenate(self.lengths)
        # a query spanning two pieces: its two runs are one
        first = np.cumsum([0] + [h.len() for h in self.heads[:-1]])[1:]  # first run of each later piece
        new = np.ones(lengths.size, dtype=bool)
        if first.size:
            new[first] = (heads.gather(first) != heads.gather(first - 1)).to_numpy()
        at = np.flatnonzero(new)
        heads_u = query_array(heads.gather(at))
        if heads_u.size and bool(np.char.startswith(heads_u, "#").any()):
            return None  # a comment line read as a query: the next tier skips it
        doc = SeriesIds(pl.concat(self.docs, rechunk=False))
        # one copy, by polars, into a single chunk that numpy then views
        values = self.values[: self.n_values] if self.values is not None else np.zeros(0)
        return columns_from_runs(heads_u, np.add.reduceat(lengths, at), doc, values)

    def tag(self) -> str | None:
        return self.first_tag if self.one_tag and self.first_tag else None


def _doubled(piece: bytes | np.ndarray, sep: bytes, out: np.ndarray | None = None) -> bool:
    """Whether two separator bytes follow each other anywhere in ``piece``: the 16-bit words at
    even and at odd offsets compared with the doubled byte (2 ms per 16 MB, where ``bytes.find`` of
    two bytes takes 14 ms on text dense in separators); ``out``: a reused buffer for the comparisons.

    >>> _doubled(b"q1 Q0  d1", b" "), _doubled(b"q1 Q0 d1  ", b" "), _doubled(b"q1 Q0 d1", b" ")
    (True, True, False)
    """
    pair = sep[0] * 0x0101
    data = np.frombuffer(piece, dtype=np.uint8) if isinstance(piece, bytes) else piece
    for offset in (0, 1):
        n = (data.size - offset) // 2
        words = data[offset : offset + 2 * n].view(np.uint16)
        hits = np.equal(words, pair, out=None if out is None else out[:n])
        if bool(hits.any()):
            return True
    return False


_BLOCK = 1 << 18  # bytes per step of the piece checks: a step's work stays in cache


def _plain_piece(piece: bytes, sep: bytes) -> bool:
    """Whether the fast tier may read ``piece``: no space next to a tab, no NUL, no two separators in
    a row (an empty field that polars would read where the rule folds the run); else the next tiers
    decide (polars keeps a ``\r`` inside a field, as the rule does, and drops one before a line end).
    With the one-column-past-the-format check of :func:`_checked_schema`, this is what makes the fast
    tier follow the rule exactly; ``bench/reader_rule_cost.py`` measures what both cost.

    A space-separated piece is checked in cache-sized blocks: one whose smallest byte is a line end
    or above holds no tab and no NUL, so only the doubled separator is looked for in it (less than
    half the time of four passes over the whole 16 MB piece, and no 8 MB temporaries).
    """
    if sep != b" ":
        return piece.find(b" ") < 0 and piece.find(b"\x00") < 0 and not _doubled(piece, sep)
    data = np.frombuffer(piece, dtype=np.uint8)
    out = np.empty(_BLOCK // 2, dtype=bool)
    for at in range(0, len(piece), _BLOCK):
        block = data[at : at + _BLOCK + 1]  # one byte into the next block: a pair across the border
        if int(block.min()) < 0x0A and (
            piece.find(b"\t", at, at + _BLOCK) >= 0 or piece.find(b"\x00", at, at + _BLOCK) >= 0
        ):
            return False
        if _doubled(block, sep, out):
            return False
    return True


def _polars_chunks(path: Path, kind: Kind, sep: bytes) -> Parsed | None:
    """polars over the file read in pieces of whole lines (see :func:`_line_pieces`), each reduced as
    soon as it is parsed (:class:`_Reduced`); None when a piece fails the fast path's checks (a
    line with more fields than the format's fails it, so a doubled separator can never shift
    columns silently).

    Peak memory is the columns plus one piece (a mapped 400 MB file counts fully in the resident
    set), and ten million rows never hold two columns of id strings.
    """
    return _polars_pieces(_line_pieces(path), kind, sep, os.path.getsize(path))


def _polars_pieces(pieces: Any, kind: Kind, sep: bytes, size_hint: int = 0) -> Parsed | None:
    """The loop of :func:`_polars_chunks` over pieces of whole lines (bytes)."""
    schema = _checked_schema(kind)
    names = list(schema)
    keep = [i for i, c in enumerate(names) if c in (*_TREC_KEEP[kind], _EXTRA)]
    insert: dict[str, Any] = {"missing_columns": "insert"} if _EXTRA in schema else {}
    reduced = _Reduced(kind, size_hint)
    try:
        for piece in pieces:
            if not _plain_piece(piece, sep):
                return None
            part = pl.read_csv(
                piece, separator=sep.decode(), has_header=False, quote_char=None, schema=schema, columns=keep, **insert
            )
            size = len(piece)
            del piece
            if not reduced.add(part, size):
                return None
    except (pl.exceptions.PolarsError, UnicodeDecodeError, OSError):
        return None
    cols = reduced.columns()
    return None if cols is None else Parsed(cols, reduced.tag())


_SEPARATORS = re.compile(r"[ \t]+")
_GRADE = re.compile(r"[+-]?[0-9]+(?:\.0*)?")
_FLOAT_GRADE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_FINITE = re.compile(r"[+-]?(?:inf(?:inity)?|nan)", re.IGNORECASE)
_INT64 = 1 << 63


def split_fields(line: str) -> list[str]:
    """The fields of a line under the rule (see the module docstring).

    >>> split_fields(" q1 \t0\td\u00a01  1 ")
    ['q1', '0', 'd\xa01', '1']
    """
    core = line.strip(" \t")
    return _SEPARATORS.split(core) if core else []


def _slow_trec(data: bytes, kind: Kind, source: str) -> pl.DataFrame:
    """The rule written out, line by line (see the module docstring): names the line of any error."""
    ncols = _TREC_COLUMNS[kind]
    qids: list[str] = []
    docs: list[str] = []
    vals: list[Any] = []
    tags: list[str] = []
    text = data.decode("utf-8", errors="strict") if data.isascii() else decode(data, source)
    if text.startswith("\ufeff"):
        text = text[1:]
    for lineno, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        fields = split_fields(line)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != ncols:
            expect = "qid iter docid grade" if kind == "qrels" else "qid Q0 docid rank score tag"
            hint = ""
            if kind == "qrels" and len(fields) == 6 and _DECIMAL.fullmatch(fields[4]):
                hint = "; this looks like a run (qid Q0 docid rank score tag), not qrels"
            elif kind == "run" and len(fields) > ncols:
                hint = (
                    "; trec_eval ignores words after the run tag: `ctxeval trec_eval` reads this file as it does, "
                    "or keep 6 fields with awk '{print $1,$2,$3,$4,$5,$6}'"
                )
            raise FormatError(source, lineno, f"expected {ncols} fields ({expect}), found {len(fields)}{hint}", line)
        if "\x00" in line:
            raise FormatError(source, lineno, "a NUL byte in a field", line)
        qids.append(fields[0])
        docs.append(fields[2])
        if kind == "run":
            vals.append(parse_score(fields[4], source, lineno, line))
            tags.append(fields[5])
        else:
            vals.append(parse_grade(fields[3], source, lineno, line))
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


def decode(data: bytes, source: str) -> str:
    """UTF-8 text, without a byte order mark; an error names the line of a bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(source, line, f"not valid UTF-8 (byte {data[exc.start]:#04x})") from exc


def brief(value: Any) -> str:
    """A value as an error message shows it: its repr, cut to about 40 characters.

    >>> brief(10**5000), brief("x" * 100), brief(0.5)
    ('(an integer of 5001 digits)', "'xxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100 characters)", '0.5')
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"(an integer of {len(str(value)) if value.bit_length() < 14000 else _digits(value)} digits)"
    text = repr(value)
    if len(text) <= 40:
        return text
    if isinstance(value, str):
        return f"{value[:28]!r}... ({len(value)} characters)"
    return f"{text[:30]}... ({len(text)} characters)"


def _digits(value: int) -> int:
    """The number of decimal digits of a positive or negative integer too long to print (Python
    refuses to turn one of over 4,300 digits into text)."""
    n = abs(value)
    d = int(n.bit_length() * 0.30102999566398120) + 1
    return d if n >= 10 ** (d - 1) else d - 1


def finite_float(value: Any) -> float | None:
    """``value`` (an int or a float, not a bool) as a finite float, or None (beyond a float's range
    or not finite: 10**400 does not convert)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        out = float(value)
    except OverflowError:
        return None
    return out if math.isfinite(out) else None


def parse_score(token: str, source: str, lineno: int | None, line: str | None) -> float:
    """A score: a finite decimal number in ASCII (see the module docstring)."""
    if not _DECIMAL.fullmatch(token):
        problem = "is not finite" if _NOT_FINITE.fullmatch(token) else "is not a number"
        raise FormatError(source, lineno, f"score {brief(token)} {problem}", line)
    value = float(token)
    if not math.isfinite(value):
        raise FormatError(source, lineno, f"score {brief(token)} is not finite (or beyond a 64-bit float)", line)
    return value


def parse_grade(token: Any, source: str, lineno: int | None, line: str | None) -> int:
    """A grade: a whole number (``2``, ``2.0``, an int or an integral float) within 64 bits."""
    if isinstance(token, bool):
        raise FormatError(source, lineno, f"relevance {brief(token)} is not an integer", line)
    value: int | None = None
    if isinstance(token, int):
        value = token
    elif isinstance(token, float):
        if math.isfinite(token) and token.is_integer():
            value = int(token)
    else:
        text = str(token)
        if _GRADE.fullmatch(text):
            whole = text.split(".")[0]
            # beyond 19 digits it cannot fit (and past 4,300 Python refuses to read it)
            value = int(whole) if len(whole.lstrip("+-0")) <= 19 else _INT64 * (-1 if whole.startswith("-") else 1)
        elif _FLOAT_GRADE.fullmatch(text):
            as_float = float(text)
            if math.isfinite(as_float) and as_float.is_integer():
                value = int(as_float)
    if value is None:
        raise FormatError(source, lineno, f"relevance {brief(token)} is not an integer", line)
    if not -_INT64 < value < _INT64:
        raise FormatError(
            source, lineno, f"relevance {brief(token)} is out of range (a grade must fit in 64 bits)", line
        )
    return value


_TRAILING = re.compile(rb"(?m)^([ \t]*[^# \t\n][^ \t\n]*(?:[ \t]+[^ \t\n]+){5})[ \t]+[^ \t\r\n][^\n]*")


def cut_trailing(data: bytes) -> tuple[bytes, int]:
    r"""Run lines cut after their sixth field (trec_eval's reading), and how many lines were cut.

    >>> cut_trailing(b"q1 Q0 d1 1 0.5 tag more junk\nq1 Q0 d2 2 0.4 tag \r\n")
    (b'q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 0.4 tag \r\n', 1)
    """
    return _TRAILING.subn(rb"\1", data)


def read_trec(path: Path, kind: Kind, source: str, trailing: Literal["error", "ignore"] = "error") -> Parsed:
    """Read a TREC qrels or run file (see the module docstring). ``trailing="ignore"`` (a run): words
    after the sixth field are dropped and the lines counted (``Parsed.trailing``), as trec_eval
    reads a run; the fast tiers refuse such lines, so only the text tiers see this."""
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    gz = head[:2] == b"\x1f\x8b"
    data: bytes | None = None
    if native.available():
        data = open_bytes(path) if gz else None  # decompressed once for every tier
        scanned = native.scan_file(path, kind) if data is None else native.scan_bytes(data, kind)
        if scanned is not None:
            return Parsed(scanned.columns, scanned.tag)
    small = light.read_trec(path, kind)
    if small is not None:
        return Parsed(small.columns, small.tag)
    if not gz:
        first = _first_data_line(head)
        if first is not None:
            found = _polars_chunks(path, kind, b"\t" if b"\t" in first else b" ")
            if found is not None:
                return found
    data = open_bytes(path) if data is None else data
    if not data or data.isspace():
        raise EmptyInputError(f"{source}: the file is empty")
    if _first_data_line(data) is None:
        raise EmptyInputError(f"{source}: no {kind} lines found (the file is empty or only comments)")
    cut = 0
    if trailing == "ignore" and kind == "run":
        data, cut = cut_trailing(data)
    normal = _TRAIL_WS.sub(b"", _LEAD_WS.sub(b"", _WS_RUN.sub(b" ", data)))
    found = _polars_trec(normal, kind) if normal and not normal.isspace() else None
    if found is not None:
        return found._replace(trailing=cut)
    df = _slow_trec(data, kind, source)
    return Parsed(columns_from_frame(df, _VALUE[kind]), _tag_of(df["tag"]) if kind == "run" else None, cut)


def parse_trec(data: bytes, kind: Kind, source: str, first_line: int = 1) -> Parsed:
    """TREC text already in memory (a piece of a file whose first line is ``first_line``): the same
    tiers as :func:`read_trec`; an error names the line in the whole file."""
    scanned = native.scan_bytes(data, kind)
    if scanned is not None:
        return Parsed(scanned.columns, scanned.tag)
    if len(data) > light.LIGHT_MAX_BYTES:  # large: polars, multi-threaded, in read_trec's pieces
        first = _first_data_line(data[: 1 << 16])
        if first is not None:
            found = _polars_pieces(_memory_pieces(data), kind, b"\t" if b"\t" in first else b" ", len(data))
            if found is not None:
                return found
    small = light.parse(data, kind)
    if small is not None:
        return Parsed(small.columns, small.tag)
    normal = _TRAIL_WS.sub(b"", _LEAD_WS.sub(b"", _WS_RUN.sub(b" ", data)))
    found = _polars_trec(normal, kind) if normal and not normal.isspace() else None
    if found is not None:
        return found
    try:
        df = _slow_trec(data, kind, source)
    except FormatError as exc:
        if exc.line is None or first_line == 1:
            raise
        raise FormatError(exc.source, exc.line + first_line - 1, exc.problem, exc.text) from None
    return Parsed(columns_from_frame(df, _VALUE[kind]), _tag_of(df["tag"]) if kind == "run" else None)


def read_tags(path: Path, source: str) -> list[str]:
    """The tag of every run record, in file order (the exact tier's reading)."""
    return _slow_trec(open_bytes(path), "run", source)["tag"].to_list()


def locate_in_trec(path: Path, q: str, d: str) -> list[int]:
    """Line numbers at which (q, d) occurs in a TREC file (used only to explain a duplicate)."""
    lines: list[int] = []
    data = open_bytes(path)
    for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        f = line.split()
        if len(f) >= 3 and f[0] == q and f[2] == d:
            lines.append(lineno)
            if len(lines) == 2:
                break
    return lines
