"""The portable vectorised tier: polars' CSV parser over pieces of whole lines, each reduced as soon as
it is parsed (its query ids to runs of equal ids, its tags to whether one tag is used throughout, its
values into one numpy array); the doc ids stay a polars column (:class:`~ctxeval._io.ids.SeriesIds`:
no fixed width, so one long id costs its own bytes only).

A piece is read as it is when it is plainly laid out (one kind of separator, never two in a row, no NUL):
with one column past the format's (:func:`checked_schema`), a line with too many or too few fields
cannot shift columns silently. Any other piece, or one whose values the checks refuse, is read in
sub-pieces of about a MiB: white space folded, comments skipped, then polars again; a sub-piece that
still fails goes to the exact tier (:mod:`.exact`), which reads it or names the line of the error. So an
error costs the reading of the pieces before it and one small sub-piece line by line, never the file.

Peak memory is the columns plus one piece, and ten million rows never hold two columns of id strings.
``bench/reader_rule_cost.py`` measures what the piece checks cost.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._core.columns import Columns
from .._errors import FormatError
from . import exact
from .exact import Kind
from .frames import columns_from_runs, query_array
from .ids import SeriesIds
from .source import PIECE, MemoryText, Text

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = ["PIECE", "SUB_PIECE", "Parsed", "checked_schema", "plain_piece", "read", "trec_schema"]

#: bytes per sub-piece of a piece that is not plainly laid out
SUB_PIECE = 1 << 20
_VALUE = {"run": "score", "qrels": "relevance"}
_KEEP = {"run": ["query_id", "doc_id", "score", "tag"], "qrels": ["query_id", "doc_id", "relevance"]}
_EXTRA = "_extra"  # one column past the format's: a line with too many fields fills it
_WS_RUN = re.compile(rb"[ \t]+")
_LEAD_WS = re.compile(rb"(?m)^[ \t]+")
_TRAIL_WS = re.compile(rb"(?m)[ \t]*\r?$")


class Parsed(NamedTuple):
    """A file read into columns, and for a run the tag when one non-empty tag is used throughout;
    ``trailing``: lines whose words after the format's fields were dropped (``trailing="ignore"``)."""

    columns: Columns
    tag: str | None
    trailing: int = 0


def trec_schema(kind: Kind) -> dict[str, Any]:
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


def checked_schema(kind: Kind) -> dict[str, Any]:
    return {**trec_schema(kind), _EXTRA: pl.String}


def _frame_valid(df: pl.DataFrame, kind: Kind) -> bool:
    """No null in the format's columns (an empty field reads as null: polars' missing_is_null),
    nothing past them, in a run finite scores, and no query id that is a comment's first word."""
    data_cols = [c for c in df.columns if c != _EXTRA]
    checks = [pl.sum_horizontal([pl.col(c).null_count() for c in data_cols]).alias("nulls")]
    if _EXTRA in df.columns:
        checks.append((pl.col(_EXTRA).null_count() == pl.len()).alias("no_extra"))
    if kind == "run":
        checks.append(pl.col("score").is_finite().all().alias("finite"))
    row = df.select(checks).row(0)
    return bool(row[0] == 0 and all(row[1:]))


class _Reduced:
    """Each piece reduced as soon as it is parsed (see the module docstring)."""

    def __init__(self, kind: Kind, size_hint: int = 0) -> None:
        self.kind = kind
        self.size_hint = size_hint  #: the text's size in bytes (0: unknown)
        self.heads: list[pl.Series] = []
        self.lengths: list[np.ndarray] = []
        self.docs: list[pl.Series] = []
        self.values: np.ndarray | None = None  # filled piece by piece while the piece is in cache
        self.n_values = 0
        self.first_tag: str | None = None
        self.one_tag = kind == "run"

    def add(self, part: pl.DataFrame, piece_bytes: int = 0) -> bool:
        """Take a piece's rows; False (nothing taken) when they fail the checks."""
        if part.height == 0:
            return True
        if not _frame_valid(part, self.kind):
            return False
        rle = part.select(pl.col("query_id").rle()).to_series().struct.unnest()
        if bool(rle["value"].str.starts_with("#").any()):
            return False  # a comment line read as data
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
        array is sized from the first piece's rows per byte and the text's size (grown if short)."""
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
        doc = SeriesIds(pl.concat(self.docs, rechunk=False))
        values = self.values[: self.n_values] if self.values is not None else np.zeros(0)
        return columns_from_runs(query_array(heads.gather(at)), np.add.reduceat(lengths, at), doc, values)

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


BLOCK = 1 << 18  # bytes per step of the piece checks: a step's work stays in cache


def plain_piece(piece: bytes, sep: bytes) -> bool:
    """Whether ``piece`` may be read as it is: no space next to a tab, no NUL, no two separators in
    a row (an empty field that polars would read where the rule folds the run); polars keeps a ``\\r``
    inside a field, as the rule does, and drops one before a line end. With the one-column-past-the-
    format check of :func:`checked_schema`, this is what makes the plain read follow the rule exactly.

    A space-separated piece is checked in cache-sized blocks: one whose smallest byte is a line end
    or above holds no tab and no NUL, so only the doubled separator is looked for in it (less than
    half the time of four passes over the whole 16 MB piece, and no 8 MB temporaries).
    """
    if sep != b" ":
        return piece.find(b" ") < 0 and piece.find(b"\x00") < 0 and not _doubled(piece, sep)
    data = np.frombuffer(piece, dtype=np.uint8)
    out = np.empty(BLOCK // 2, dtype=bool)
    for at in range(0, len(piece), BLOCK):
        block = data[at : at + BLOCK + 1]  # one byte into the next block: a pair across the border
        if int(block.min()) < 0x0A and (
            piece.find(b"\t", at, at + BLOCK) >= 0 or piece.find(b"\x00", at, at + BLOCK) >= 0
        ):
            return False
        if _doubled(block, sep, out):
            return False
    return True


def _plain(piece: bytes, kind: Kind) -> pl.DataFrame | None:
    """A plainly laid-out piece read as it is, or None."""
    sep = b"\t" if piece.find(b"\t", 0, 4096) >= 0 else b" "
    if not plain_piece(piece, sep):
        return None
    schema = checked_schema(kind)
    keep = [i for i, c in enumerate(schema) if c in (*_KEEP[kind], _EXTRA)]
    try:
        return pl.read_csv(
            piece,
            separator=sep.decode(),
            has_header=False,
            quote_char=None,
            schema=schema,
            columns=keep,
            missing_columns="insert",
        )
    except _polars_fails():
        return None


def _polars_fails() -> tuple[type[BaseException], ...]:
    return (pl.exceptions.PolarsError, UnicodeDecodeError, OSError)


def folded(data: bytes, kind: Kind) -> pl.DataFrame | None:
    """Text whose separators are folded to single spaces (comment lines allowed) read by polars, or
    None when anything looks off (the exact tier then explains)."""
    normal = _TRAIL_WS.sub(b"", _LEAD_WS.sub(b"", _WS_RUN.sub(b" ", data)))
    if not normal or normal.isspace() or b"\x00" in normal or b"\r" in normal:
        return None  # (a \r inside a line: line-end ones are folded away)
    try:
        df = (
            pl.scan_csv(
                normal,
                separator=" ",
                has_header=False,
                comment_prefix="#",
                quote_char=None,
                schema=checked_schema(kind),
                missing_columns="insert",
            )
            .select([*_KEEP[kind], _EXTRA])
            .collect()
        )
    except _polars_fails():
        return None
    return df if df.height and _frame_valid(df, kind) else None


def _careful(text: Text, piece: bytes, lo: int, kind: Kind, trailing: bool) -> tuple[list[pl.DataFrame], int]:
    """A piece that is not plainly laid out, in sub-pieces of whole lines: folded and read by polars,
    else by the exact tier (an error names the text's line). Also: the lines whose trailing words
    were cut (``trailing``)."""
    parts, cut = [], 0
    for a, b in MemoryText(piece, text.source, bom=False).cuts(SUB_PIECE):
        sub = piece[a:b]
        if trailing:
            sub, n = exact.cut_trailing(sub)
            cut += n
        df = folded(sub, kind)
        if df is None:
            try:
                df = exact.frame(sub, kind, text.source)
            except FormatError as exc:
                if exc.line is None:
                    raise
                line = text.line_of(lo + a) + exc.line - 1
                raise FormatError(exc.source, line, exc.problem, exc.text) from None
        parts.append(df.select(_KEEP[kind]))
    return parts, cut


def read(text: Text, kind: Kind, trailing: bool = False, piece: int | None = None) -> Parsed | None:
    """The text in pieces of about ``piece`` bytes (default :data:`PIECE`; see the module docstring);
    None when it holds no line of data. With ``trailing`` (a run read as trec_eval reads it), words
    after the sixth field are dropped and the lines that had them counted."""
    reduced = _Reduced(kind, text.size)
    cut = 0
    for lo, hi in text.cuts(piece or PIECE):
        data = text.piece(lo, hi)
        part = _plain(data, kind)
        if part is not None and reduced.add(part, len(data)):
            continue
        parts, n = _careful(text, data, lo, kind, trailing)
        cut += n
        for part in parts:
            if not reduced.add(part, len(data)):  # (the exact tier's rows pass the checks)
                raise FormatError(text.source, None, "a piece failed the reader's checks after the exact tier")
    cols = reduced.columns()
    return None if cols is None else Parsed(cols, reduced.tag(), cut)
