"""The ranking rule, once: how the rows of one query are ordered before anything is measured.

``ties="trec"`` (trec_eval 9.x's rule, and pytrec_eval's): score descending, compared as 32-bit
floats (9.x reads scores into a C ``float``: scores equal as float32 tie; a score beyond the float32
range compares as ±inf), ties broken by doc id descending (byte-wise). ``ties="trec10"`` (trec_eval
10.0's rule): the same with the scores compared as 64-bit floats (10.0 reads them into a ``double``).
``ties="input"``: the order of the rows as given. ``ties="expected"`` ranks as ``trec`` and keeps which
rows tie (:mod:`.ties`): measures then take their expected value over every order of those rows.

Runs are nearly always written query by query in rank order, so the order is found without sorting:
a pass checks that every query's scores never increase; only the runs of tied scores that are not
already in doc id descending order are sorted, each among itself. A query that is not in score order
is sorted whole. The evaluation engine, the serving-time selector and every verb rank through here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .ids import Ids
from .segments import map_blocks, segment_rows

__all__ = [
    "FLOAT32_MAX",
    "RANKING_RULE",
    "SegmentOrder",
    "score_key",
    "segment_order",
    "sort_tie_runs",
    "tie_memo",
    "tie_order",
]

RANKING_RULE = "score descending as float32, ties by doc id descending (byte-wise)"  #: ties="trec"
FLOAT32_MAX = float(np.finfo(np.float32).max)

_NONE = np.zeros(0, dtype=np.int64)


def score_key(scores: np.ndarray, ties: str = "trec") -> np.ndarray:
    """The values scores are compared by under ``ties``: the scores as 32-bit floats (``trec``; a
    score beyond the float32 range becomes ±inf, as a C cast gives) or as they are (``trec10``).

    >>> score_key(np.array([0.300000009, 0.300000001, 1e300])).tolist()
    [0.30000001192092896, 0.30000001192092896, inf]
    >>> score_key(np.array([0.300000009, 0.300000001]), "trec10").tolist()
    [0.300000009, 0.300000001]
    """
    values = np.asarray(scores)
    if ties == "trec10":
        return values.astype(np.float64, copy=False)
    with np.errstate(over="ignore"):
        return values.astype(np.float32)


def tie_memo(ties: str) -> tuple[str, str] | None:
    """The key under which a reader's scan keeps the tie order of a run for ``ties`` (None: none)."""
    return ("tie", "f32") if ties in ("trec", "expected") else None


def sort_tie_runs(t: np.ndarray, ids: Ids) -> tuple[np.ndarray, np.ndarray]:
    """``t``: the rows tied with their successor (same segment, equal score key), ascending.
    Returns the rows of those tie runs (ascending) and the row each of those positions takes once
    every run is sorted by doc id descending."""
    t = np.asarray(t, dtype=np.int64)
    if t.size == 0:
        return t, t
    # consecutive entries of t chain into one run of tied rows: t[first] .. t[last] + 1
    first = np.r_[True, t[1:] != t[:-1] + 1]
    starts = t[first]
    lengths = t[np.r_[first[1:], True]] + 2 - starts
    rows = segment_rows(starts, lengths)
    local = rows.copy()
    # runs of two rows (nearly all of them): swap when the first doc id is the smaller
    two = lengths == 2
    at = (np.cumsum(lengths) - lengths)[two]  # where each such run sits in `rows`
    head = starts[two]
    if head.size:
        swap = ids.greater(head + 1, head)
        local[at[swap]] = head[swap] + 1
        local[at[swap] + 1] = head[swap]
    longer = np.flatnonzero(~two)
    if longer.size:
        sub = segment_rows(starts[longer], lengths[longer])
        run_id = np.repeat(np.arange(longer.size, dtype=np.int64), lengths[longer])
        local[segment_rows((np.cumsum(lengths) - lengths)[longer], lengths[longer])] = ids.order(sub, (run_id,))
    return rows, local


def tie_order(key: np.ndarray, ids: Ids, boundaries: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """trec_eval's order of consecutive rows of whole segments (``boundaries``: the first rows of all
    but the first segment) whose score keys never increase within a segment: ``(rows, src)`` such
    that position ``rows[i]`` takes row ``src[i]`` once every run of tied keys is ordered by doc id
    descending (both empty when nothing moves); None if some segment is not in score order."""
    n = key.size
    if n < 2:
        return _NONE, _NONE
    x, y = key[:-1], key[1:]
    same = np.ones(n - 1, dtype=bool)
    same[boundaries - 1] = False  # pairs across a segment boundary
    if bool(np.any((x < y) & same)):
        return None
    t = np.flatnonzero((x == y) & same)
    if t.size == 0:
        return _NONE, _NONE
    if bool(ids.greater(t, t + 1).all()):
        return _NONE, _NONE
    return sort_tie_runs(t, ids)


class SegmentOrder:
    """The rank order of rows laid out in segments: position ``p`` of segment ``s`` holds row
    ``perm[p]``; either nothing moves (``perm`` None), only runs of tied rows move (``tie_rows``,
    ``tie_src``: position ``tie_rows[i]`` takes row ``tie_src[i]``), or some segments are sorted
    (``perm`` given)."""

    __slots__ = ("perm", "tie_rows", "tie_src")

    def __init__(self, perm: np.ndarray | None, tie_rows: np.ndarray = _NONE, tie_src: np.ndarray = _NONE) -> None:
        self.perm = perm
        self.tie_rows = tie_rows
        self.tie_src = tie_src

    def rows(self, n: int) -> np.ndarray:
        """The permutation as one array (position -> row)."""
        if self.perm is not None:
            return self.perm
        out = np.arange(n, dtype=np.int64)
        out[self.tie_rows] = self.tie_src
        return out


def _block_tie_orders(
    key: np.ndarray, ids: Ids, starts: np.ndarray, lengths: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray] | None]:
    def one(a: int, b: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray] | None:
        found = tie_order(key[lo:hi], ids.slice(lo, hi), starts[a + 1 : b] - lo)
        return None if found is None else (found[0] + lo, found[1] + lo)

    return map_blocks(one, starts, lengths)


def segment_order(
    key: np.ndarray | Callable[[], np.ndarray],
    ids: Ids,
    starts: np.ndarray,
    lengths: np.ndarray,
    ties: str,
    known: tuple[np.ndarray, np.ndarray] | bool | None = None,
) -> SegmentOrder:
    """The rank order of rows in segments (see :class:`SegmentOrder`) under ``ties``.

    ``key``: the score keys (:func:`score_key`), or a function giving them, called only when they
    are needed; ``known``: the tie order the reader's scan found (``(rows, src)``, or False when some
    segment is out of score order), which saves the pass and the keys.
    """
    n = int(lengths.sum())
    if ties == "input" or n < 2:
        return SegmentOrder(None)
    if known is not None and known is not False:
        rows, src = known  # type: ignore[misc]
        return SegmentOrder(None, rows, src)
    key = key() if callable(key) else key
    if known is None:
        parts = _block_tie_orders(key, ids, starts, lengths)
        known = False if any(p is None for p in parts) else _join(parts)  # type: ignore[arg-type]
    if known is not False:
        rows, src = known  # type: ignore[misc]
        return SegmentOrder(None, rows, src)
    # some segments are out of score order: sort those (whole), fix the tie runs of the others
    seg = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    up = np.flatnonzero((key[:-1] < key[1:]) & (seg[:-1] == seg[1:]))
    bad = np.zeros(lengths.size, dtype=bool)
    bad[seg[up]] = True
    perm = np.arange(n, dtype=np.int64)
    rows = segment_rows(starts[bad], lengths[bad])
    perm[rows] = ids.order(rows, (seg[rows], -key[rows]))
    good = np.flatnonzero(~bad)
    if good.size:
        same = (seg[:-1] == seg[1:]) & ~bad[seg[:-1]]
        t = np.flatnonzero((key[:-1] == key[1:]) & same)
        if t.size and not bool(ids.greater(t, t + 1).all()):
            tr, ts = sort_tie_runs(t, ids)
            perm[tr] = ts
    return SegmentOrder(perm)


def _join(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    rows = [p[0] for p in parts if p[0].size]
    src = [p[1] for p in parts if p[1].size]
    return (np.concatenate(rows), np.concatenate(src)) if rows else (_NONE, _NONE)
