"""Large TREC files read by the compiled scanner, several pieces at a time.

``ctx_scan`` (:mod:`ctxeval._native`; ctxeval works without it) scans pieces of whole lines into
numpy buffers: doc ids in fixed-width slots (:class:`~ctxeval._core.ids.ArrayIds`, big-endian
``uint64`` when no id is longer than 8 bytes), scores or grades, and the query ids as runs of equal
ids. It follows the reader's rule (see :mod:`ctxeval._io.trec`) for ASCII text and declines anything
else (non-ASCII bytes, a NUL, a line with the wrong number of fields, a value outside the plain
forms): the caller then gives the file to the next tier, which reads it or names the line of the
error, so the tiers cannot disagree about what a file means (``tests/io/test_native.py`` checks
them against each other over generated files).

A plain file is mapped and its pieces scanned in place on a pool of threads (the scanner holds no
Python object, and ctypes releases the GIL during the call). Each thread scans a piece into its own
buffers (reused: their pages are paid once), learns where the piece's rows go once the previous
piece's scan has counted its rows, and copies them into the file's columns while the next thread
copies the next piece's.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from .. import _native
from .._core.ids import ArrayIds
from .frames import columns_from_runs
from .light import Light

__all__ = ["available", "scan_bytes", "scan_file"]

_OK, _DECLINE, _DOC_WIDE, _HEAD_WIDE, _FULL = range(5)
_KIND = {"run": 0, "qrels": 1}
_BOM = b"\xef\xbb\xbf"


def available() -> bool:
    """Whether the compiled scanner is built and in use."""
    return _native.available()


def _round8(n: int) -> int:
    return max(8, (n + 7) // 8 * 8)


_PIECE = 16 << 20  # bytes per piece (measured at 400 MB: 8-64 MB alike, 1-2 MB 50 % slower)
_MIN_LINE = {"run": 12, "qrels": 8}  # bytes of the shortest line: one-byte fields, a line end


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


class _Buffers:
    """What one thread scans a piece into: room for ``n`` rows (the shortest possible lines: the
    pages of the unused part are never touched), doc slots of ``dw`` bytes, head slots of ``hw``."""

    def __init__(self, n: int, dw: int, hw: int, kind: str) -> None:
        self.n, self.dw, self.hw = n, dw, hw
        self.docs = np.empty(n * dw, dtype=np.uint8)
        self.values = np.empty(n, dtype=np.float64 if kind == "run" else np.int64)
        self.heads = np.empty(n * hw, dtype=np.uint8)
        self.head_rows = np.empty(n, dtype=np.int64)


class _Piece(NamedTuple):
    rows: int
    heads: np.ndarray  # S<width>: the query id of each run of equal ids
    head_rows: np.ndarray
    max_doc: int
    tag: bytes | None  # the tag of every line of the piece, or None
    wider: tuple[int, int]  # (doc, head) slot widths needed (0, 0 when the piece fit)
    spill: tuple[np.ndarray, np.ndarray] | None = None  # rows that did not fit the columns


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
    """The file's columns, allocated once from an estimate of its rows (see :func:`_widths`); rows
    beyond it are kept by their piece and put in place at the end (:func:`_finish`)."""

    def __init__(self, rows: int, dw: int, kind: str) -> None:
        self.docs = np.empty((rows, dw), np.uint8)  # each doc id's bytes, zero-padded
        self.values = np.empty(rows, np.float64 if kind == "run" else np.int64)


def _scan(lib: ctypes.CDLL, piece: np.ndarray, kind: str, bufs: _Buffers) -> tuple[_Piece | None, int]:
    """A piece of whole lines (``uint8``; ending with a line end or followed by a NUL byte) into
    ``bufs``: the piece and its rows, or None when the scanner declines it."""
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
    empty = np.zeros(0, dtype=f"S{hw}")
    if status == _DOC_WIDE:
        return _Piece(0, empty, empty, 0, None, (_round8(s.need_width), 0)), 0
    if status == _HEAD_WIDE:
        return _Piece(0, empty, empty, 0, None, (0, _round8(s.need_width))), 0
    if status != _OK:
        return None, 0
    rows, runs = int(s.rows), int(s.n_heads)
    tag = piece[s.tag_off : s.tag_off + s.tag_len].tobytes() if kind == "run" and rows and s.one_tag else None
    heads = bufs.heads[: runs * hw].view(f"S{hw}").copy()
    return _Piece(rows, heads, bufs.head_rows[:runs].copy(), int(s.max_doc), tag, (0, 0)), rows


def _widths(lib: ctypes.CDLL, first: np.ndarray, kind: str) -> tuple[int, int, float]:
    """From the first lines: slot widths for the doc and query ids (the pieces widen them if needed)
    and the rows per byte."""
    sample = first[: 1 << 16]
    ends = np.flatnonzero(sample == 0x0A)
    if ends.size == 0:
        return 8, 16, 1 / _MIN_LINE[kind]
    sample = sample[: int(ends[-1]) + 1]
    dw, hw = 8, 16
    for _ in range(8):
        got, rows = _scan(lib, sample, kind, _Buffers(ends.size, dw, hw, kind))
        if got is None or got.wider == (0, 0):
            return dw, hw, max(rows, 1) / sample.size
        dw, hw = max(dw, got.wider[0]), max(hw, got.wider[1])
    return dw, hw, 1 / _MIN_LINE[kind]


def scan_file(path: str | os.PathLike[str], kind: str) -> Light | None:
    """A plain (not compressed) TREC file, mapped and scanned in place; None when the scanner is off
    or declines the file. Each piece's pages are dropped from the mapping once it is scanned (they
    stay in the page cache), so the resident set holds the columns, not the file."""
    if _native.LIB is None:
        return None
    with open(path, "rb") as fh:
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # an empty file, or one that cannot be mapped: the next tier
            return None
    try:
        data = np.frombuffer(mm, dtype=np.uint8)
        try:
            return _scan_all(list(_mapped_pieces(mm, data)), kind, mm)
        finally:
            del data
    finally:
        mm.close()


def scan_bytes(data: bytes, kind: str) -> Light | None:
    """TREC text in memory (see :func:`scan_file`)."""
    if _native.LIB is None or not data:
        return None
    whole = np.frombuffer(data, dtype=np.uint8)  # a bytes object is followed by a NUL
    return _scan_all([(whole[lo:hi], -1) for lo, hi in _cuts(data)], kind, None)


def _cuts(text: bytes | mmap.mmap) -> Iterator[tuple[int, int]]:
    """Where the pieces of whole lines of about ``_PIECE`` bytes start and end (after a byte order
    mark; the last piece may lack its line end)."""
    size = len(text)
    at = 3 if text[:3] == _BOM else 0
    while at < size:
        end = text.find(b"\n", at + _PIECE) + 1 if at + _PIECE < size else 0
        end = end or size
        yield at, end
        at = end


def _mapped_pieces(mm: mmap.mmap, data: np.ndarray) -> Iterator[tuple[np.ndarray, int]]:
    """Pieces of whole lines of a mapped file and their offsets (-1: a copy); a last piece without
    its line end is copied into a bytes object (the scanner then stops at the NUL after it, not
    past the mapping)."""
    for lo, hi in _cuts(mm):
        if hi == data.size and data[hi - 1] != 0x0A:
            yield np.frombuffer(mm[lo:hi], dtype=np.uint8), -1
        else:
            yield data[lo:hi], lo


def _scan_all(pieces: list[tuple[np.ndarray, int]], kind: str, mm: mmap.mmap | None) -> Light | None:
    """The pieces on a pool of threads (see the module docstring)."""
    lib = _native.LIB
    if lib is None or not pieces:
        return None
    page = mmap.PAGESIZE
    size = sum(p.size for p, _ in pieces)
    local = threading.local()
    dw, hw, per_byte = _widths(lib, pieces[0][0], kind)
    while True:
        out = _Columns(int(per_byte * size * 1.02) + 1024, dw, kind)
        chain = _Chain(len(pieces))

        def one(i: int, out: _Columns, chain: _Chain, dw: int, hw: int) -> _Piece | None:
            piece, offset = pieces[i]
            rows = 0
            try:  # whatever happens here (a MemoryError too), the next piece learns where its rows go
                need = piece.size // _MIN_LINE[kind] + 1
                bufs: _Buffers | None = getattr(local, "bufs", None)
                if bufs is None or bufs.n < need or (bufs.dw, bufs.hw) != (dw, hw):
                    bufs = local.bufs = _Buffers(max(need, _PIECE // _MIN_LINE[kind] + 1), dw, hw, kind)
                got, rows = _scan(lib, piece, kind, bufs)
            finally:
                chain.done(i, rows)
            if mm is not None and offset >= 0 and hasattr(mm, "madvise"):  # its pages leave the resident set
                lo = offset // page * page
                mm.madvise(mmap.MADV_DONTNEED, lo, offset + piece.size - lo)
            if got is None or rows == 0:
                return got
            at = chain.start(i)
            fit = max(0, min(rows, out.values.size - at))
            out.docs[at : at + fit].reshape(-1)[:] = bufs.docs[: fit * dw]
            out.values[at : at + fit] = bufs.values[:fit]
            if fit < rows:  # beyond the estimate: kept here, put in place at the end
                spill = (bufs.docs[fit * dw : rows * dw].copy(), bufs.values[fit:rows].copy())
                got = got._replace(spill=spill)
            return got

        n = len(pieces)
        with ThreadPoolExecutor(_workers()) as pool:  # first in, first out: piece i - 1 starts before piece i
            got = list(pool.map(one, range(n), [out] * n, [chain] * n, [dw] * n, [hw] * n))
        if any(g is None for g in got):
            return None
        parts = [g for g in got if g is not None]
        need_dw, need_hw = max(p.wider[0] for p in parts), max(p.wider[1] for p in parts)
        if need_dw <= dw and need_hw <= hw:
            return _finish(out, parts, kind)
        dw, hw = max(dw, need_dw), max(hw, need_hw)  # an id wider than the first lines': again, wider


def _finish(out: _Columns, parts: list[_Piece], kind: str) -> Light | None:
    """The columns (rows beyond the estimate put in place; a query whose lines span two pieces as
    one run of rows)."""
    n = sum(p.rows for p in parts)
    if n == 0:
        return None  # no line: the next tier says the file is empty
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
    return Light(columns_from_runs(heads.astype("U"), lengths, ArrayIds(ids), values[:n]), tag)
