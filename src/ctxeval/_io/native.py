"""The first tier: TREC text read by the compiled scanner, several pieces at a time.

``ctx_scan`` (:mod:`ctxeval._native`; ctxeval works without it) scans pieces of whole lines into
numpy buffers: doc ids in fixed-width slots (:class:`~ctxeval._core.ids.ArrayIds`, big-endian
``uint64`` when no id is longer than 8 bytes), scores or grades, and the query ids as runs of equal
ids. It follows the reader's rule (see :mod:`ctxeval._io.trec`) for ASCII text and declines anything
else (non-ASCII bytes, a NUL, a line with the wrong number of fields, a value outside the plain
forms), saying at which line: the caller has the exact tier explain that line (an error naming it) or,
when the rule accepts it, gives the text to the next tier. Whatever goes wrong here (a ``MemoryError``,
ids too wide for fixed-width columns) declines the text the same way; nothing escapes but the
source's own errors (a line too long, a file that changed while it was read).

A file's pieces are read with ``pread`` into each thread's reused buffer (a file truncated meanwhile
gives a short read and an error, never ``SIGBUS``) and scanned on a pool of threads (the scanner
holds no Python object, and ctypes releases the GIL during the call). Each thread scans a piece into
its own buffers, sized from what the piece can hold (never rows x the widest id of a whole piece
beyond a budget), learns where the piece's rows go once the previous piece's scan has counted its
rows, and copies them into the file's columns while the next thread copies the next piece's. Text
in memory is scanned in place.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from .. import _native
from .._core.columns import Columns
from .._core.ids import ArrayIds
from .frames import columns_from_runs
from .source import FileText, MemoryText, Text

__all__ = ["Declined", "Scanned", "available", "scan_bytes", "scan_file", "scan_text"]

_OK, _DECLINE, _DOC_WIDE, _HEAD_WIDE, _FULL = range(5)
_KIND = {"run": 0, "qrels": 1}

#: bytes per piece (measured at 400 MB: 8-64 MB alike, 1-2 MB 50 % slower)
_PIECE = 16 << 20
#: bytes of row buffers a thread may hold, and of fixed-width columns beyond twice the text's size:
#: past it (ids too wide for fixed-width slots) the text goes to the next tier, whose ids cost their length
_BUDGET = 256 << 20
_MIN_LINE = {"run": 12, "qrels": 8}  # bytes of the shortest line: one-byte fields, a line end


class Scanned(NamedTuple):
    """A text read by the scanner: its columns and, for a run, the tag when one is used throughout."""

    columns: Columns
    tag: str | None


class Declined(NamedTuple):
    """The scanner declined the text: ``at`` is the offset of the line it declined (-1: no line; the
    scanner is off, or the text's ids do not fit its budget), ``why`` says why in words."""

    at: int
    why: str


class _TooWide(Exception):
    """Ids too wide for fixed-width slots within :data:`_BUDGET`."""


def available() -> bool:
    """Whether the compiled scanner is built and in use."""
    return _native.available()


def _round8(n: int) -> int:
    return max(8, (n + 7) // 8 * 8)


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


class _Buffers:
    """What one thread scans a piece into: room for ``n`` rows, doc slots of ``dw`` bytes, head slots
    of ``hw`` (pages of the unused part are never touched)."""

    def __init__(self, n: int, dw: int, hw: int, kind: str) -> None:
        self.n, self.dw, self.hw = n, dw, hw
        self.docs = np.empty(n * dw, dtype=np.uint8)
        self.values = np.empty(n, dtype=np.float64 if kind == "run" else np.int64)
        self.heads = np.empty(n * hw, dtype=np.uint8)
        self.head_rows = np.empty(n, dtype=np.int64)


def _rows_room(piece: np.ndarray, dw: int, hw: int, kind: str, text_size: int) -> int:
    """Rows to make room for: a whole piece's bytes (or the text's, if smaller) over the shortest
    line's, so that a thread's buffers serve every piece (new buffers are new pages to fault in); or,
    when that times a row's slots passes the budget, the piece's line ends counted;
    :class:`_TooWide` when even those do not fit."""
    per_row = dw + hw + 16
    n = max(piece.size, min(_PIECE, text_size)) // _MIN_LINE[kind] + 1
    if n * per_row <= _BUDGET:
        return n
    n = piece.size // _MIN_LINE[kind] + 1
    if n * per_row <= _BUDGET:
        return n
    n = int(np.count_nonzero(piece == 0x0A)) + 1
    if n * per_row > _BUDGET + 2 * piece.size:
        raise _TooWide
    return n


def _thread_buffers(local: threading.local, piece: np.ndarray, dw: int, hw: int, kind: str, size: int) -> _Buffers:
    """The thread's buffers for ``piece``: the ones it holds when they fit, else new ones (the old go
    first)."""
    bufs: _Buffers | None = getattr(local, "bufs", None)
    if bufs is not None and (bufs.dw, bufs.hw) == (dw, hw) and bufs.n >= piece.size // _MIN_LINE[kind] + 1:
        return bufs
    need = _rows_room(piece, dw, hw, kind, size)
    if bufs is not None and (bufs.dw, bufs.hw) == (dw, hw) and bufs.n >= need:
        return bufs
    local.bufs = None
    local.bufs = _Buffers(need, dw, hw, kind)
    return local.bufs


class _Piece(NamedTuple):
    rows: int
    heads: np.ndarray  # S<width>: the query id of each run of equal ids
    head_rows: np.ndarray
    tag: bytes | None  # the tag of every line of the piece, or None
    wider: tuple[int, int]  # (doc, head) slot widths needed (0, 0 when the piece fit)
    declined: int | None = None  # the declined line's offset in the text (-1: not a line)
    spill: tuple[np.ndarray, np.ndarray] | None = None  # rows that did not fit the columns


_EMPTY = np.zeros(0, dtype="S1")


def _declined(at: int) -> _Piece:
    return _Piece(0, _EMPTY, _EMPTY, None, (0, 0), at)


class _Chain:
    """Where each piece's rows start: known for piece ``i + 1`` once piece ``i`` is scanned."""

    def __init__(self, n: int) -> None:
        self.at: list[int | None] = [0] + [None] * n
        self.cv = threading.Condition()

    def start(self, i: int) -> int:
        with self.cv:
            while self.at[i] is None:
                self.cv.wait()
            return self.at[i]  # type: ignore[return-value]

    def done(self, i: int, rows: int) -> None:
        start = self.start(i)
        with self.cv:
            self.at[i + 1] = start + rows
            self.cv.notify_all()


class _Columns:
    """The text's columns, allocated once from an estimate of its rows (see :func:`_widths`); rows
    beyond it are kept by their piece and put in place at the end (:func:`_finish`)."""

    def __init__(self, rows: int, dw: int, kind: str) -> None:
        self.docs = np.empty((rows, dw), np.uint8)  # each doc id's bytes, zero-padded
        self.values = np.empty(rows, np.float64 if kind == "run" else np.int64)


def _scan(lib: ctypes.CDLL, piece: np.ndarray, offset: int, kind: str, bufs: _Buffers) -> tuple[_Piece, int]:
    """A piece of whole lines (``uint8``; ending with a line end or followed by a NUL byte) into
    ``bufs``: the piece and its rows (a declined piece names the line's offset: ``offset`` + where
    in the piece)."""
    dw, hw = bufs.dw, bufs.hw
    s = _native.Scan(
        buf=piece.ctypes.data,
        len=piece.size,
        kind=_KIND[kind],
        doc_width=dw,
        head_width=hw,
        cap=bufs.n,
        head_cap=bufs.n,
        docs=bufs.docs.ctypes.data,
        scores=bufs.values.ctypes.data if kind == "run" else None,
        grades=bufs.values.ctypes.data if kind == "qrels" else None,
        heads=bufs.heads.ctypes.data,
        head_rows=bufs.head_rows.ctypes.data,
    )
    status = lib.ctx_scan(ctypes.byref(s))
    if status == _DOC_WIDE:
        return _Piece(0, _EMPTY, _EMPTY, None, (_round8(s.need_width), 0)), 0
    if status == _HEAD_WIDE:
        return _Piece(0, _EMPTY, _EMPTY, None, (0, _round8(s.need_width))), 0
    if status != _OK:
        return _declined(offset + int(s.bad_at) if status == _DECLINE else -1), 0
    rows, runs = int(s.rows), int(s.n_heads)
    tag = piece[s.tag_off : s.tag_off + s.tag_len].tobytes() if kind == "run" and rows and s.one_tag else None
    heads = bufs.heads[: runs * hw].view(f"S{hw}").copy()
    return _Piece(rows, heads, bufs.head_rows[:runs].copy(), tag, (0, 0)), rows


def _widths(lib: ctypes.CDLL, sample: np.ndarray, kind: str) -> tuple[int, int, float]:
    """From the first lines: slot widths for the doc and query ids (the pieces widen them if needed)
    and the rows per byte."""
    ends = np.flatnonzero(sample == 0x0A)
    if ends.size == 0:
        return 8, 16, 1 / _MIN_LINE[kind]
    sample = sample[: int(ends[-1]) + 1]
    dw, hw = 8, 16
    for _ in range(8):
        got, rows = _scan(lib, sample, 0, kind, _Buffers(ends.size, dw, hw, kind))
        if got.declined is not None or got.wider == (0, 0):
            return dw, hw, max(rows, 1) / sample.size
        dw, hw = max(dw, got.wider[0]), max(hw, got.wider[1])
    return dw, hw, 1 / _MIN_LINE[kind]


def scan_text(text: Text, kind: str) -> Scanned | Declined:
    """The text's columns, or why the scanner declined it (see the module docstring)."""
    lib = _native.LIB
    if lib is None:
        return Declined(-1, f"the compiled scanner is {_native.status()}")
    cuts = list(text.cuts(_PIECE))
    if not cuts:
        return Declined(-1, "no text")
    try:
        if isinstance(text, MemoryText):
            whole = np.frombuffer(text.data, dtype=np.uint8)  # a bytes object is followed by a NUL

            def load(i: int, local: threading.local) -> np.ndarray:
                lo, hi = cuts[i]
                text.check_lines(text.data, lo, hi, 0)
                return whole[lo:hi]

            return _scan_all(lib, load, cuts, kind, whole[text.start : text.start + (1 << 16)])
        if not isinstance(text, FileText):
            return Declined(-1, "not a file nor bytes")
        file = text

        def read(i: int, local: threading.local) -> np.ndarray:
            lo, hi = cuts[i]
            n = hi - lo
            buf: bytearray | None = getattr(local, "buf", None)
            if buf is None or len(buf) < n + 1:
                buf = local.buf = bytearray(max(n + 1, min(_PIECE, file.size) + 1))
            file.read_into(buf, lo, n)
            buf[n] = 0  # the scanner stops at the NUL after a last line without its line end
            file.check_lines(buf, 0, n, lo)
            return np.frombuffer(buf, dtype=np.uint8, count=n)

        head = np.frombuffer(file.read(file.start, min(1 << 16, file.size - file.start)), dtype=np.uint8)
        return _scan_all(lib, read, cuts, kind, head)
    except (MemoryError, BufferError, _TooWide):
        return Declined(-1, "the scanner's buffers do not fit (ids too wide for fixed-width columns, or memory)")


def _scan_all(
    lib: ctypes.CDLL,
    load: Callable[[int, threading.local], np.ndarray],
    cuts: list[tuple[int, int]],
    kind: str,
    first: np.ndarray,
) -> Scanned | Declined:
    """The pieces on a pool of threads (see the module docstring)."""
    size = sum(hi - lo for lo, hi in cuts)
    local = threading.local()
    dw, hw, per_byte = _widths(lib, first, kind)
    while True:
        rows_estimate = int(per_byte * size * 1.02) + 1024
        if rows_estimate * dw > _BUDGET + 2 * size:
            raise _TooWide
        out = _Columns(rows_estimate, dw, kind)
        chain = _Chain(len(cuts))

        def one(i: int, out: _Columns, chain: _Chain, dw: int, hw: int) -> _Piece:
            rows, got = 0, _declined(-1)
            bufs: _Buffers | None = None
            try:  # whatever happens here, the next piece learns where its rows go
                piece = load(i, local)
                bufs = _thread_buffers(local, piece, dw, hw, kind, size)
                got, rows = _scan(lib, piece, cuts[i][0], kind, bufs)
            except (MemoryError, BufferError, _TooWide):
                got, rows = _declined(-1), 0
            finally:
                chain.done(i, rows)
            if rows == 0 or bufs is None:
                return got
            at = chain.start(i)
            fit = max(0, min(rows, out.values.size - at))
            out.docs[at : at + fit].reshape(-1)[:] = bufs.docs[: fit * dw]
            out.values[at : at + fit] = bufs.values[:fit]
            if fit < rows:  # beyond the estimate: kept here, put in place at the end
                spill = (bufs.docs[fit * dw : rows * dw].copy(), bufs.values[fit:rows].copy())
                got = got._replace(spill=spill)
            return got

        n = len(cuts)
        with ThreadPoolExecutor(_workers()) as pool:  # first in, first out: piece i - 1 starts before piece i
            parts = list(pool.map(one, range(n), [out] * n, [chain] * n, [dw] * n, [hw] * n))
        declined = next((p.declined for p in parts if p.declined is not None), None)
        if declined is not None:
            return Declined(declined, "a line outside the scanner's remit" if declined >= 0 else "memory")
        need_dw, need_hw = max(p.wider[0] for p in parts), max(p.wider[1] for p in parts)
        if need_dw <= dw and need_hw <= hw:
            return _finish(out, parts, kind)
        dw, hw = max(dw, need_dw), max(hw, need_hw)  # an id wider than the first lines': again, wider
        del out, parts


def _finish(out: _Columns, parts: list[_Piece], kind: str) -> Scanned | Declined:
    """The columns (rows beyond the estimate put in place; a query whose lines span two pieces as
    one run of rows)."""
    n = sum(p.rows for p in parts)
    if n == 0:
        return Declined(-1, "no line of data")  # the next tier says the text is empty
    docs, values = out.docs, out.values
    if n > values.size:
        spills = [p.spill for p in parts if p.spill is not None]
        kept = values.size
        docs = np.concatenate([docs.reshape(-1), *(d for d, _ in spills)]).reshape(n, docs.shape[1])
        values = np.concatenate([values[:kept], *(v for _, v in spills)])
    width = docs.shape[1]
    ids = docs[:n].view(f"S{width}").reshape(-1)
    if width == 8:
        ids = ids.view(">u8")  # ids of at most 8 bytes: big-endian uint64 (integer order = byte order)
    keep = [p for p in parts if p.rows]
    head_width = max(p.heads.dtype.itemsize for p in keep)
    heads = np.concatenate([p.heads.astype(f"S{head_width}") for p in keep])
    lengths = np.concatenate([p.head_rows for p in keep])
    firsts = np.cumsum([0] + [p.heads.size for p in keep[:-1]])[1:]  # each later piece's first run
    joined = firsts[heads[firsts] == heads[firsts - 1]] if firsts.size else firsts
    if joined.size:
        kept_runs = np.ones(heads.size, dtype=bool)
        kept_runs[joined] = False
        starts = np.flatnonzero(kept_runs)
        lengths = np.add.reduceat(lengths, starts)
        heads = heads[starts]
    tag = None
    tags = {p.tag for p in keep}
    if kind == "run" and len(tags) == 1 and None not in tags:
        tag = next(iter(tags)).decode("ascii")  # type: ignore[union-attr]
    return Scanned(columns_from_runs(heads.astype("U"), lengths, ArrayIds(ids), values[:n]), tag)


def scan_file(path: str | os.PathLike[str], kind: str) -> Scanned | None:
    """A plain TREC file's bytes scanned as they are (None: the scanner is off or declines them)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        text = FileText(fd, str(path))
        found = scan_text(text, kind)
        text.check()
    finally:
        os.close(fd)
    return found if isinstance(found, Scanned) else None


def scan_bytes(data: bytes, kind: str) -> Scanned | None:
    """TREC text in memory scanned (None: the scanner is off or declines it)."""
    found = scan_text(MemoryText(data, "<bytes>"), kind)
    return found if isinstance(found, Scanned) else None
