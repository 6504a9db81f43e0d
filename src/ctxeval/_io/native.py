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
Python object, and ctypes releases the GIL during the call); each piece's rows are copied into the
file's columns, in file order, while the threads scan the next pieces.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator
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


_MIN_LINE = {"run": 12, "qrels": 8}  # bytes of the shortest line: one-byte fields, a line end


class _Buffers:
    """What the scanner writes one piece into: room for ``n`` rows (the shortest possible lines, so
    the pages of the unused part are never touched), doc slots of ``dw`` bytes, head slots of
    ``hw``. Reused from piece to piece: fresh pages cost the kernel's clearing of them."""

    def __init__(self, n: int, dw: int, hw: int, kind: str) -> None:
        self.n, self.dw, self.hw = n, dw, hw
        self.docs = np.empty(n * dw, dtype=np.uint8)
        self.values = np.empty(n, dtype=np.float64 if kind == "run" else np.int64)
        self.heads = np.empty(n * hw, dtype=np.uint8)
        self.head_rows = np.empty(n, dtype=np.int64)


_SPARE_LOCK = threading.Lock()


class _Piece(NamedTuple):
    bufs: _Buffers
    rows: int
    runs: int
    max_doc: int
    tag: bytes | None  # the tag of every line of the piece, or None


def _scan(lib: ctypes.CDLL, piece: np.ndarray, kind: str, widths: list[int], spare: list[_Buffers]) -> _Piece | None:
    """One piece of whole lines (``uint8``; ending with a line end or followed by a NUL byte); None
    when the scanner declines it. ``widths``: the doc and head slot widths to start with, widened
    in place when an id does not fit (shared by the pieces); ``spare``: buffers to reuse."""
    n = piece.size // _MIN_LINE[kind] + 1
    while True:
        dw, hw = widths
        with _SPARE_LOCK:
            bufs = next((b for b in spare if b.n >= n and b.dw == dw and b.hw == hw), None)
            if bufs is not None:
                spare.remove(bufs)
        if bufs is None:
            bufs = _Buffers(max(n, _PIECE // _MIN_LINE[kind] + 1), dw, hw, kind)
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
        if status == _OK:
            break
        if status == _DOC_WIDE:
            widths[0] = max(widths[0], _round8(s.need_width))
        elif status == _HEAD_WIDE:
            widths[1] = max(widths[1], _round8(s.need_width))
        else:
            return None
    rows = int(s.rows)
    tag = piece[s.tag_off : s.tag_off + s.tag_len].tobytes() if kind == "run" and rows and s.one_tag else None
    return _Piece(bufs, rows, int(s.n_heads), int(s.max_doc), tag)


class _Columns:
    """The pieces' rows gathered in file order into one set of arrays, each piece copied as soon as
    it is scanned (while the threads scan the next ones); sized from the first piece's rows per
    byte and the file's size, grown if short."""

    def __init__(self, kind: str, size: int) -> None:
        self.kind, self.size = kind, size
        self.docs = np.zeros(0, dtype="S8")
        self.values = np.zeros(0, dtype=np.float64 if kind == "run" else np.int64)
        self.n = 0
        self.max_doc = 0
        self.heads: list[np.ndarray] = []
        self.head_rows: list[np.ndarray] = []
        self.tags: set[bytes | None] = set()

    def add(self, p: _Piece, piece_bytes: int) -> None:
        b, rows = p.bufs, p.rows
        if rows == 0:
            return
        need = self.n + rows
        width = max(self.docs.dtype.itemsize, b.dw)
        if need > self.values.size or width > self.docs.dtype.itemsize:
            estimate = int(rows / max(piece_bytes, 1) * self.size * 1.02) + 1024 if self.n == 0 else 0
            cap = max(need, estimate, int(self.n * 1.25))
            docs = np.empty(cap, dtype=f"S{width}")
            docs[: self.n] = self.docs[: self.n]
            values = np.empty(cap, dtype=self.values.dtype)
            values[: self.n] = self.values[: self.n]
            self.docs, self.values = docs, values
        self.docs[self.n : need] = b.docs[: rows * b.dw].view(f"S{b.dw}")
        self.values[self.n : need] = b.values[:rows]
        self.n = need
        self.max_doc = max(self.max_doc, p.max_doc)
        self.heads.append(b.heads[: p.runs * b.hw].view(f"S{b.hw}").copy())
        self.head_rows.append(b.head_rows[: p.runs].copy())
        self.tags.add(p.tag)

    def finish(self) -> Light | None:
        """The columns (a query whose lines span two pieces is one run of rows)."""
        if self.n == 0:
            return None  # no line: the next tier says the file is empty
        docs, values = self.docs[: self.n], self.values[: self.n]
        width = docs.dtype.itemsize
        ids = docs.view(">u8") if width == 8 else docs  # ids of at most 8 bytes: big-endian uint64
        head_width = max(h.dtype.itemsize for h in self.heads)
        heads = np.concatenate([h.astype(f"S{head_width}") for h in self.heads])
        lengths = np.concatenate(self.head_rows)
        firsts = np.cumsum([0] + [h.size for h in self.heads[:-1]])[1:]  # each later piece's first run
        joined = firsts[heads[firsts] == heads[firsts - 1]] if firsts.size else firsts
        if joined.size:
            keep = np.ones(heads.size, dtype=bool)
            keep[joined] = False
            starts = np.flatnonzero(keep)
            lengths = np.add.reduceat(lengths, starts)
            heads = heads[starts]
        tag = None
        if self.kind == "run" and len(self.tags) == 1 and None not in self.tags:
            tag = next(iter(self.tags)).decode("ascii")  # type: ignore[union-attr]
        return Light(columns_from_runs(heads.astype("U"), lengths, ArrayIds(ids), values), tag)


def _workers() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


_PIECE = 16 << 20  # bytes per piece: a piece's buffers stay small, and there are enough for the threads


def scan_file(path: str | os.PathLike[str], kind: str) -> Light | None:
    """A plain (not compressed) TREC file, mapped and scanned in place piece by piece; None when the
    scanner is off or declines the file. Each piece's pages are dropped from the mapping once it is
    scanned (they stay in the page cache), so the resident set holds the columns, not the file."""
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
            return _scan_all(_mapped_pieces(mm, data), kind, mm, data.size)
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
    return _scan_all(pieces, kind, None, len(data))


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


def _scan_all(pieces: Iterable[tuple[np.ndarray, int]], kind: str, mm: mmap.mmap | None, size: int) -> Light | None:
    lib = _native.LIB
    if lib is None:
        return None
    widths = [8, 16]
    spare: list[_Buffers] = []
    workers = _workers()
    page = mmap.PAGESIZE
    out = _Columns(kind, size)

    def one(piece: np.ndarray, offset: int) -> _Piece | None:
        got = _scan(lib, piece, kind, widths, spare)
        if mm is not None and offset >= 0 and hasattr(mm, "madvise"):  # its pages leave the resident set
            lo = offset // page * page
            mm.madvise(mmap.MADV_DONTNEED, lo, offset + piece.size - lo)
        return got

    with ThreadPoolExecutor(workers) as pool:
        pending: deque[tuple[Future[_Piece | None], int]] = deque()
        try:
            for piece, offset in pieces:
                pending.append((pool.submit(one, piece, offset), piece.size))
                while pending and (len(pending) > workers or pending[0][0].done()):  # in file order
                    future, nbytes = pending.popleft()
                    got = future.result()
                    if got is None:
                        return None
                    out.add(got, nbytes)
                    with _SPARE_LOCK:
                        spare.append(got.bufs)
            while pending:
                future, nbytes = pending.popleft()
                got = future.result()
                if got is None:
                    return None
                out.add(got, nbytes)
                with _SPARE_LOCK:
                    spare.append(got.bufs)
        finally:
            for future, _ in pending:
                future.cancel()
    return out.finish()
