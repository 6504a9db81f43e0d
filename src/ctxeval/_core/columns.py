"""Columns: a run or qrels as the core holds it, query by query.

Rows are grouped by query (every query's rows contiguous; readers group input that is not, stably,
so the rows of a query keep their input order); :class:`Layout` records the segments: the query id
heading each (distinct), where it starts and how long it is. Doc ids are an :class:`~.ids.Ids`
column, values a numpy array (float64 scores or int64 grades), and ``source_rows`` maps each row back
to its input record when grouping moved rows.

:func:`scan` is the one pass a reader makes over a fresh column set: the
segments holding a repeated doc id (found with 32-bit fingerprints sorted side by side, then checked
on the ids) and, for runs, the tie order of :mod:`.ranking`, all block by block on a few threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .ids import Ids
from .ranking import score_key, tie_memo, tie_order
from .segments import distinct, map_blocks, offsets, run_starts, segment_rows

__all__ = ["Columns", "Layout", "Scan", "duplicate_groups", "keep_rows", "scan"]

# a padded segment matrix may hold at most this many cells per row of input (else: one global sort)
_PAD_RATIO = 2.0


class Layout:
    """The query segments of grouped rows: ``heads[i]`` (distinct query ids, a numpy ``U`` array)
    covers rows ``[starts[i], starts[i] + lengths[i])``."""

    __slots__ = ("_sorted", "heads", "lengths", "n_rows", "starts")

    def __init__(self, heads: np.ndarray, lengths: np.ndarray, n_rows: int | None = None) -> None:
        self.heads = heads
        self.lengths = np.asarray(lengths, dtype=np.int64)
        self.starts = offsets(self.lengths)[:-1]
        self.n_rows = int(self.lengths.sum()) if n_rows is None else n_rows
        self._sorted: bool | None = None

    @property
    def n_segments(self) -> int:
        return int(self.lengths.size)

    @property
    def heads_sorted(self) -> bool:
        """Whether the query ids of the segments ascend (byte-wise)."""
        if self._sorted is None:
            h = self.heads
            self._sorted = bool(h.size < 2 or np.all(h[1:] > h[:-1]))
        return self._sorted

    def segment_of(self, rows: np.ndarray) -> np.ndarray:
        """Segment index of each row in ``rows``."""
        return np.searchsorted(self.starts, rows, side="right").astype(np.int64) - 1

    def row_segments(self) -> np.ndarray:
        """Segment index of every row."""
        return np.repeat(np.arange(self.n_segments, dtype=np.int64), self.lengths)


@dataclass(frozen=True, eq=False)
class Columns:
    """Grouped rows of a run (``values``: float64 scores) or qrels (int64 grades)."""

    layout: Layout
    doc: Ids
    values: np.ndarray
    source_rows: np.ndarray | None = None  #: input record (0-based) of each row; None: row = record
    memo: dict[Any, Any] = field(default_factory=dict, repr=False)  #: doc hashes, tie order (see scan)

    def __len__(self) -> int:
        return int(self.values.shape[0])

    @classmethod
    def from_codes(cls, codes: np.ndarray, names: np.ndarray, doc: Ids, values: np.ndarray) -> Columns:
        """From a query code per row (``names[code]`` is its id): grouped stably when the codes are
        not already in contiguous runs."""
        n = codes.size
        if n == 0:
            return cls(Layout(names[:0], np.zeros(0, dtype=np.int64), 0), doc, values)
        starts = run_starts(codes)
        heads = codes[starts]
        if distinct(heads).size == heads.size:
            return cls(Layout(names[heads], np.diff(np.r_[starts, n]), n), doc, values)
        order = np.argsort(codes, kind="stable")
        sc = codes[order]
        st = run_starts(sc)
        return cls(Layout(names[sc[st]], np.diff(np.r_[st, n]), n), doc.take(order), values[order], order)

    def take(self, rows: np.ndarray) -> Columns:
        """The given rows (ascending, so segments stay contiguous and in order)."""
        seg = self.layout.segment_of(rows)
        counts = np.bincount(seg, minlength=self.layout.n_segments)
        keep = counts > 0
        lay = Layout(self.layout.heads[keep], counts[keep], int(rows.size))
        src = rows if self.source_rows is None else self.source_rows[rows]
        return Columns(lay, self.doc.take(rows), self.values[rows], src)

    def record(self, row: int) -> int:
        """The input record (0-based) of a row."""
        return int(row if self.source_rows is None else self.source_rows[row])

    def query_of_rows(self) -> np.ndarray:
        """The query id of every row (a numpy ``U`` array; for output, not for hot paths)."""
        return self.layout.heads[self.layout.row_segments()]


@dataclass(frozen=True)
class Scan:
    """What :func:`scan` found."""

    dup_segments: np.ndarray  #: segments that may hold a repeated doc id (fingerprints collide)
    tie: tuple[np.ndarray, np.ndarray] | bool | None  #: see ranking.segment_order's ``known``


def scan(cols: Columns, ties: bool) -> Scan:
    """Candidate duplicate segments and (``ties``) the trec tie order, in one block pass.

    Every block's doc hashes and score keys are made, used and dropped within the block: keeping
    them for ten million rows would write 120 MB of fresh memory, and on a virtual machine the
    kernel's clearing of fresh pages costs more than hashing the doc ids again where the join needs
    them (about 0.1 s against 0.25 s of CPU at ten million rows).
    """
    lay = cols.layout
    n = len(cols)

    def one(a: int, b: int, lo: int, hi: int) -> tuple[np.ndarray, Any, int]:
        docs = cols.doc.slice(lo, hi)
        found = a + _repeated(docs.hash().astype(np.uint32), lay.lengths[a:b], lay.starts[a:b] - lo)  # the low half
        if not ties:
            return found, None, 0
        key = score_key(cols.values[lo:hi])
        # values are finite (the readers refuse others): an infinite key is a score beyond float32
        beyond = int(np.count_nonzero(np.isinf(key)))
        t = tie_order(key, docs, lay.starts[a + 1 : b] - lo)
        return found, None if t is None else (t[0] + lo, t[1] + lo), beyond

    parts = map_blocks(one, lay.starts, lay.lengths) if n else []
    cand = [c for c, _, _ in parts]
    tie: tuple[np.ndarray, np.ndarray] | bool | None = None
    if ties:
        if any(t is None for _, t, _ in parts):
            tie = False
        else:
            rows = [t[0] for _, t, _ in parts if t[0].size]
            src = [t[1] for _, t, _ in parts if t[1].size]
            none = np.zeros(0, dtype=np.int64)
            tie = (np.concatenate(rows), np.concatenate(src)) if rows else (none, none)
    dup = np.concatenate(cand) if cand else np.zeros(0, dtype=np.int64)
    if ties:
        cols.memo[tie_memo("trec")] = tie
        cols.memo["beyond_float32"] = sum(b for _, _, b in parts)
    return Scan(dup, tie)


def duplicate_groups(cols: Columns, segments: np.ndarray) -> list[np.ndarray]:
    """Among the rows of ``segments``: every group of rows with one (query, doc id), as row arrays
    (rows ascending within a group; groups in the order of their first row)."""
    if segments.size == 0:
        return []
    lay = cols.layout
    rows = segment_rows(lay.starts[segments], lay.lengths[segments])
    seg = np.repeat(segments, lay.lengths[segments])
    ordered = cols.doc.order(rows, (seg,))  # by segment, equal ids adjacent in row order (stable)
    oseg = lay.segment_of(ordered)
    same = (oseg[1:] == oseg[:-1]) & cols.doc.equal(ordered[1:], cols.doc, ordered[:-1])
    if not same.any():
        return []
    starts = np.flatnonzero(np.r_[True, ~same])
    ends = np.r_[starts[1:], ordered.size]
    groups = [ordered[a:b] for a, b in zip(starts.tolist(), ends.tolist()) if b - a > 1]
    groups = [np.sort(g) for g in groups]
    groups.sort(key=lambda g: int(g[0]))
    return groups


def keep_rows(cols: Columns, groups: list[np.ndarray], policy: str) -> np.ndarray:
    """Rows kept when each group of repeated (query, doc) rows keeps one: its first row
    (``first``) or its highest value, the first among equals (``best``)."""
    drop = []
    for g in groups:
        if policy == "first":
            win = g[0]
        else:
            v = cols.values[g]
            win = g[int(np.flatnonzero(v == v.max())[0])]
        drop.append(g[g != win])
    keep = np.ones(len(cols), dtype=bool)
    if drop:
        keep[np.concatenate(drop)] = False
    return np.flatnonzero(keep)


def _repeated(fp: np.ndarray, lengths: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Segments (local indexes) holding two equal values of ``fp`` (segments are consecutive rows)."""
    n_seg = lengths.size
    width = int(lengths.max()) if n_seg else 0
    if width < 2:
        return np.zeros(0, dtype=np.int64)
    if bool(np.all(lengths == width)):
        m = fp.reshape(n_seg, width)
        m.sort(axis=1)
        eq = m[:, 1:] == m[:, :-1]
    elif n_seg * width <= _PAD_RATIO * fp.size + 4096:
        # padding sorts after every genuine value (ties with a genuine 0xFFFFFFFF are harmless: the
        # first `length` cells of a sorted row still hold exactly the segment's values)
        m = np.full((n_seg, width), np.uint32(0xFFFFFFFF), dtype=np.uint32)
        seg = np.repeat(np.arange(n_seg, dtype=np.int64), lengths)
        m[seg, np.arange(fp.size, dtype=np.int64) - np.repeat(starts, lengths)] = fp
        m.sort(axis=1)
        eq = m[:, 1:] == m[:, :-1]
        eq &= np.arange(width - 1)[None, :] < (lengths - 1)[:, None]
    else:  # very ragged: one sort of (segment, fingerprint) keys
        key = np.repeat(np.arange(n_seg, dtype=np.uint64) << np.uint64(32), lengths) | fp.astype(np.uint64)
        key.sort()
        same = np.flatnonzero(key[1:] == key[:-1])
        return np.unique((key[same] >> np.uint64(32)).astype(np.int64))
    return np.flatnonzero(eq.any(axis=1))
