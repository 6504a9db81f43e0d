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
Python object, and ctypes releases the GIL during the call): the pieces' line ends are counted
first, so that each piece writes its rows straight into the file's columns.
"""

from __future__ import annotations

import ctypes
import mmap
import os
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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


_PIECE = 16 << 20  # bytes per piece: enough pieces for the threads, each piece's pages in cache


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


class _Columns:
    """The file's columns, written in place by the scans of its pieces: each piece owns as many rows
    as it has line ends (the most rows it can hold), from its ``start``; sized from the first piece's
    lines per byte and grown (between pieces, no scan running) when short."""

    def __init__(self, rows: int, dw: int, kind: str) -> None:
        self.docs = np.empty((rows, dw), np.uint8)  # each doc id's bytes, zero-padded
        self.values = np.empty(rows, np.float64 if kind == "run" else np.int64)
        self.start: list[int] = []
        self.cap: list[int] = []

    def grow(self, rows: int) -> None:
        docs = np.empty((rows, self.docs.shape[1]), np.uint8)
        values = np.empty(rows, self.values.dtype)
        used = self.start[-1] + self.cap[-1] if self.start else 0
        docs[:used] = self.docs[:used]
        values[:used] = self.values[:used]
        self.docs, self.values = docs, values


class _Piece(NamedTuple):
    rows: int
    heads: np.ndarray  # S<width>: the query id of each run of equal ids
    head_rows: np.ndarray
    max_doc: int
    tag: bytes | None  # the tag of every line of the piece, or None
    wider: tuple[int, int]  # (doc, head) slot widths needed (0, 0 when the piece fit)


def _scan(lib: ctypes.CDLL, piece: np.ndarray, kind: str, out: _Columns, i: int, hw: int) -> _Piece | None:
    """Piece ``i`` (``uint8``; ending with a line end or followed by a NUL byte) into its rows of
    ``out``; None when the scanner declines it."""
    start, cap = out.start[i], out.cap[i]
    dw = out.docs.shape[1]
    heads = np.empty(cap * hw, dtype=np.uint8)  # the pages of the unused part are never touched
    head_rows = np.empty(cap, dtype=np.int64)
    s = _native.Scan(
        buf=piece.ctypes.data,
        len=piece.size,
        kind=_KIND[kind],
        doc_width=dw,
        head_width=hw,
        cap=cap,
        head_cap=cap,
        docs=out.docs.ctypes.data + start * dw,
        scores=out.values.ctypes.data + start * 8 if kind == "run" else None,
        grades=out.values.ctypes.data + start * 8 if kind == "qrels" else None,
        heads=heads.ctypes.data,
        head_rows=head_rows.ctypes.data,
    )
    status = lib.ctx_scan(ctypes.byref(s))
    empty = np.zeros(0, dtype=f"S{hw}")
    if status == _DOC_WIDE:
        return _Piece(0, empty, empty, 0, None, (_round8(s.need_width), 0))
    if status == _HEAD_WIDE:
        return _Piece(0, empty, empty, 0, None, (0, _round8(s.need_width)))
    if status != _OK:
        return None
    rows, runs = int(s.rows), int(s.n_heads)
    tag = piece[s.tag_off : s.tag_off + s.tag_len].tobytes() if kind == "run" and rows and s.one_tag else None
    return _Piece(rows, heads[: runs * hw].view(f"S{hw}").copy(), head_rows[:runs].copy(), int(s.max_doc), tag, (0, 0))


def _widths(lib: ctypes.CDLL, first: np.ndarray, kind: str) -> tuple[int, int]:
    """Slot widths for the doc and query ids from the first lines (the pieces widen them if needed)."""
    sample = first[: 1 << 16]
    cut = int(np.flatnonzero(sample == 0x0A)[-1]) + 1 if bool((sample == 0x0A).any()) else 0
    if cut == 0:
        return 8, 16
    sample = sample[:cut]
    dw, hw = 8, 16
    for _ in range(8):
        out = _Columns(int(lib.ctx_count_lines(sample.ctypes.data, sample.size)) + 1, dw, kind)
        out.start, out.cap = [0], [out.values.size]
        got = _scan(lib, sample, kind, out, 0, hw)
        if got is None or got.wider == (0, 0):
            break
        dw, hw = max(dw, got.wider[0]), max(hw, got.wider[1])
    return dw, hw


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
    pieces = []
    at = 3 if data.startswith(_BOM) else 0
    while at < len(data):
        end = data.find(b"\n", at + _PIECE) + 1 if at + _PIECE < len(data) else 0
        end = end or len(data)
        pieces.append((whole[at:end], -1))
        at = end
    return _scan_all(pieces, kind, None)


def _mapped_pieces(mm: mmap.mmap, data: np.ndarray) -> Iterator[tuple[np.ndarray, int]]:
    """Pieces of whole lines of a mapped file and their offsets (-1: a copy); a last piece without
    its line end is copied into a bytes object (the scanner then stops at the NUL after it, not
    past the mapping)."""
    size = data.size
    at = 3 if mm[:3] == _BOM else 0
    while at < size:
        end = mm.find(b"\n", at + _PIECE) + 1 if at + _PIECE < size else 0
        end = end or size
        if end == size and data[size - 1] != 0x0A:
            yield np.frombuffer(mm[at:end], dtype=np.uint8), -1
        else:
            yield data[at:end], at
        at = end


def _scan_all(pieces: list[tuple[np.ndarray, int]], kind: str, mm: mmap.mmap | None) -> Light | None:
    """The pieces on a pool of threads, each writing its rows in place (no copy of the columns, no
    buffer per piece): the main thread counts a piece's line ends (its rows), then hands it to the
    pool, at most ``workers + 1`` pieces ahead of the scans (so that the mapped file's pages in the
    resident set are a few pieces', see :func:`scan_file`)."""
    lib = _native.LIB
    if lib is None or not pieces:
        return None
    page = mmap.PAGESIZE
    size = sum(p.size for p, _ in pieces)
    workers = _workers()

    def scan(i: int, out: _Columns, hw: int) -> _Piece | None:
        piece, offset = pieces[i]
        got = _scan(lib, piece, kind, out, i, hw)
        if mm is not None and offset >= 0 and hasattr(mm, "madvise"):  # its pages leave the resident set
            lo = offset // page * page
            mm.madvise(mmap.MADV_DONTNEED, lo, offset + piece.size - lo)
        return got

    dw, hw = _widths(lib, pieces[0][0], kind)
    with ThreadPoolExecutor(workers) as pool:
        while True:
            out: _Columns | None = None
            parts: list[_Piece] = []
            pending: deque[Future[_Piece | None]] = deque()
            at = 0
            for i, (piece, _) in enumerate(pieces):
                lines = int(lib.ctx_count_lines(piece.ctypes.data, piece.size))
                lines += int(piece.size > 0 and piece[-1] != 0x0A)  # a last line without its line end
                if out is None:
                    out = _Columns(int(lines / max(piece.size, 1) * size * 1.02) + lines + 1024, dw, kind)
                if at + lines > out.values.size:  # short: grow once every scan so far is done
                    for f in pending:
                        f.result()
                    out.grow(max(at + lines, int(out.values.size * 1.25)))
                out.start.append(at)
                out.cap.append(lines)
                at += lines
                pending.append(pool.submit(scan, i, out, hw))
                while len(pending) > workers or (pending and pending[0].done()):
                    parts.append(pending.popleft().result())  # type: ignore[arg-type]
            parts.extend(f.result() for f in pending)  # type: ignore[misc]
            if any(p is None for p in parts) or out is None:
                return None
            need_dw, need_hw = max(p.wider[0] for p in parts), max(p.wider[1] for p in parts)
            if need_dw <= dw and need_hw <= hw:
                break
            dw, hw = max(dw, need_dw), max(hw, need_hw)  # an id wider than the first lines': again, wider
    return _finish(out, parts, kind)


def _finish(out: _Columns, parts: list[_Piece], kind: str) -> Light | None:
    """The columns: rows closed up where a piece held fewer rows than line ends (blank and comment
    lines), a query whose lines span two pieces as one run of rows."""
    rows = [p.rows for p in parts]
    n = sum(rows)
    if n == 0:
        return None  # no line: the next tier says the file is empty
    docs, values = out.docs, out.values
    if rows != out.cap:
        at = 0
        for i, r in enumerate(rows):
            s = out.start[i]
            if s != at and r:
                docs[at : at + r] = docs[s : s + r]
                values[at : at + r] = values[s : s + r]
            at += r
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
        kept = np.ones(heads.size, dtype=bool)
        kept[joined] = False
        starts = np.flatnonzero(kept)
        lengths = np.add.reduceat(lengths, starts)
        heads = heads[starts]
    tag = None
    tags = {p.tag for p in keep}
    if kind == "run" and len(tags) == 1 and None not in tags:
        tag = next(iter(tags)).decode("ascii")  # type: ignore[union-attr]
    return Light(columns_from_runs(heads.astype("U"), lengths, ArrayIds(ids), values[:n]), tag)
