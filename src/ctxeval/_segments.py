"""Vectorised structure of a run or qrels frame: query segments, id hashes and the duplicate test.

Runs and qrels files are nearly always grouped by query (every query's rows contiguous) and runs are
usually written in rank order. :class:`Layout` records that structure once (one run-length pass over
the query ids); the readers use it to test for duplicate (query, doc) pairs and the engine to rank and
join without sorting ten million rows. Everything here is O(rows) numpy or polars work; ungrouped input
falls back to exact global methods.

Hashes are 64-bit and only ever *narrow down* where to look: every conclusion drawn from equal hashes
is checked against the id strings.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from ._lazy import pl

if TYPE_CHECKING:
    import polars

T = TypeVar("T")

__all__ = [
    "Layout",
    "layout",
    "id_hash",
    "pair_keys",
    "duplicate_free",
    "segment_rows",
    "blocks",
    "map_blocks",
    "tie_order",
    "sort_tie_runs",
    "probe_by_query",
    "match_keys",
    "with_query_id",
]

_SEED = 0x5EED_C7E7
_MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it permutes the 64-bit values
# a padded segment matrix may hold at most this many cells per row of input (else: exact global test)
_PAD_RATIO = 2.0


def id_hash(ids: polars.Series) -> np.ndarray:
    """64-bit hash of every id string (``uint64``); equal ids give equal hashes."""
    return ids.hash(_SEED).to_numpy()


def pair_keys(query_ids: polars.Series, doc_ids: polars.Series) -> np.ndarray:
    """A 64-bit key of every (query id, doc id) pair: ``hash(q) * M xor hash(d)`` (mod 2^64).

    Equal pairs give equal keys; distinct pairs collide with probability ~2^-64, and every user of
    these keys checks hits against the strings.
    """
    k = id_hash(query_ids)
    if not k.flags.writeable:
        k = k.copy()
    np.multiply(k, _MIX, out=k)
    np.bitwise_xor(k, id_hash(doc_ids), out=k)
    return k


def segment_rows(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, start + length)`` for each segment, vectorised."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    out_off = np.zeros(lengths.size, dtype=np.int64)
    np.cumsum(lengths[:-1], out=out_off[1:])
    return np.arange(total, dtype=np.int64) - np.repeat(out_off - np.asarray(starts, dtype=np.int64), lengths)


class Layout:
    """The query segments of a frame in row order: maximal runs of equal ``query_id``.

    ``heads[i]`` is the query id of segment ``i``, which covers rows ``[starts[i], starts[i] +
    lengths[i])``. ``grouped`` is true when no query id heads two segments, i.e. every query's rows
    are contiguous.
    """

    __slots__ = ("heads", "starts", "lengths", "grouped", "n_rows", "doc_hash", "trec_order")

    def __init__(self, heads: polars.Series, lengths: np.ndarray, n_rows: int) -> None:
        self.heads = heads
        self.lengths = lengths
        self.starts = np.zeros(lengths.size, dtype=np.int64)
        if lengths.size > 1:
            np.cumsum(lengths[:-1], out=self.starts[1:])
        self.n_rows = n_rows
        self.grouped = bool(heads.n_unique() == heads.len())
        #: :func:`id_hash` of every doc id, when :func:`duplicate_free` has computed it
        self.doc_hash: np.ndarray | None = None
        #: when :func:`duplicate_free` has seen a ``score`` column: :func:`tie_order` of the whole
        #: frame (``(rows, src)``), or ``False`` if some segment is not in score order
        self.trec_order: tuple[np.ndarray, np.ndarray] | bool | None = None

    @property
    def n_segments(self) -> int:
        return int(self.lengths.size)

    def same_segment(self) -> np.ndarray:
        """``bool[n_rows - 1]``: whether row ``i`` and row ``i + 1`` lie in the same segment."""
        same = np.ones(max(self.n_rows - 1, 0), dtype=bool)
        if self.lengths.size > 1:
            same[self.starts[1:] - 1] = False
        return same

    def segment_of(self, rows: np.ndarray) -> np.ndarray:
        """Segment index of each row in ``rows``."""
        return np.searchsorted(self.starts, rows, side="right").astype(np.int64) - 1


def layout(df: polars.DataFrame) -> Layout:
    """The :class:`Layout` of ``df`` (one run-length pass over ``query_id``)."""
    if df.height == 0:
        return Layout(pl.Series("query_id", [], dtype=pl.String), np.zeros(0, dtype=np.int64), 0)
    rle = df.select(pl.col("query_id").rle()).to_series().struct.unnest()
    lengths = rle["len"].to_numpy().astype(np.int64)
    return Layout(rle["value"], lengths, df.height)


_BLOCK_ROWS = 1 << 18


class _Collision(Exception):
    """A hash match that the strings contradict."""


def blocks(lay: Layout) -> Iterator[tuple[int, int, int, int]]:
    """``(a, b, lo, hi)``: segments ``a..b-1``, rows ``lo..hi-1``; consecutive blocks of whole segments
    holding about ``_BLOCK_ROWS`` rows (at least one segment), so that per-block temporaries stay in
    cache and are reused instead of freshly mapped."""
    starts, lengths = lay.starts, lay.lengths
    ends = starts + lengths
    n = lengths.size
    a = 0
    while a < n:
        b = min(max(int(np.searchsorted(ends, starts[a] + _BLOCK_ROWS, side="right")), a + 1), n)
        yield a, b, int(starts[a]), int(ends[b - 1])
        a = b


_WORKERS: int | None = None  # threads for block work (None: one per available core, at most 4)


def map_blocks(fn: Callable[[int, int, int, int], T], lay: Layout) -> list[T]:
    """``[fn(a, b, lo, hi) for each block]``, in block order, on a few threads.

    numpy's sorts and ufuncs and polars' kernels release the GIL, so blocks of a quarter million rows
    run side by side on the machine's cores; results come back in block order, so the outcome does
    not depend on the number of threads.
    """
    todo = list(blocks(lay))
    workers = _WORKERS
    if workers is None:
        try:
            workers = min(4, len(os.sched_getaffinity(0)))
        except AttributeError:  # not on Linux
            workers = min(4, os.cpu_count() or 1)
    if workers <= 1 or len(todo) < 4:
        return [fn(*blk) for blk in todo]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(lambda blk: fn(*blk), todo))


def duplicate_free(df: polars.DataFrame, lay: Layout | None = None) -> bool:
    """Whether every (query_id, doc_id) pair of ``df`` is distinct (exact).

    For grouped input, duplicates can only sit in the same segment: block by block, each segment's
    32-bit doc-hash fingerprints are sorted side by side (one matrix sort) and only segments with a
    repeated fingerprint are compared on the strings. Otherwise: distinct 64-bit pair keys prove
    distinct pairs, and equal keys are compared on the strings.
    """
    n = df.height
    if n < 2:
        return True
    lay = lay if lay is not None else layout(df)
    if lay.grouped:
        doc = df["doc_id"]
        score = df["score"] if "score" in df.columns else None
        dh = np.empty(n, dtype=np.uint64)

        def scan(a: int, b: int, lo: int, hi: int) -> tuple[np.ndarray, object]:
            docs = doc.slice(lo, hi - lo)
            h = dh[lo:hi]
            h[:] = id_hash(docs)
            found = a + _repeated(h.astype(np.uint32), lay.lengths[a:b], lay.starts[a:b] - lo)  # the low half
            return found, (None if score is None else block_tie_order(score, docs, lay, a, b, lo, hi))

        parts = map_blocks(scan, lay)
        lay.doc_hash = dh
        if score is not None:
            lay.trec_order = join_tie_orders([t for _, t in parts])  # type: ignore[misc]
        found = [c for c, _ in parts]
        cand = np.concatenate(found) if found else np.zeros(0, dtype=np.int64)
        if cand.size == 0:
            return True
        rows = segment_rows(lay.starts[cand], lay.lengths[cand])
        sub = pl.DataFrame({"seg": np.repeat(cand, lay.lengths[cand]), "doc_id": doc.gather(rows)})
        return not bool(sub.select(pl.struct("seg", "doc_id").is_duplicated().any()).item())
    if pl.Series(pair_keys(df["query_id"], df["doc_id"])).n_unique() == n:
        return True
    return bool(df.select(pl.struct("query_id", "doc_id").is_unique().all()).item())


_NONE = np.zeros(0, dtype=np.int64)


def tie_order(score: polars.Series, doc: polars.Series, boundaries: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """trec_eval's order of consecutive rows of whole segments (``boundaries``: the first rows of
    all but the first segment) that are in descending float32 score order: ``(rows, src)`` such that
    position ``rows[i]`` takes row ``src[i]`` once every run of tied scores is ordered by doc id
    descending (both empty when nothing moves); None if some segment is not in score order."""
    n = score.len()
    if n < 2:
        return _NONE, _NONE
    s32 = score.cast(pl.Float32).to_numpy()
    x, y = s32[:-1], s32[1:]
    same = np.ones(n - 1, dtype=bool)
    same[boundaries - 1] = False  # pairs across a segment boundary
    if bool(np.any((x < y) & same)):
        return None
    t = np.flatnonzero((x == y) & same)
    if t.size == 0:
        return _NONE, _NONE
    # one expression: gathering through polars' expression engine costs a fraction of two
    # Series.gather calls and a Series comparison on the reader's many chunks
    if pl.select((pl.lit(doc).gather(t) > pl.lit(doc).gather(t + 1)).all()).item():
        return _NONE, _NONE
    return sort_tie_runs(t, doc)


def block_tie_order(score: polars.Series, docs: polars.Series, lay: Layout, a: int, b: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`tie_order` of one block (``docs``: the block's doc ids), in frame rows."""
    found = tie_order(score.slice(lo, hi - lo), docs, lay.starts[a + 1 : b] - lo)
    return None if found is None else (found[0] + lo, found[1] + lo)


def join_tie_orders(parts: list[tuple[np.ndarray, np.ndarray] | None]) -> tuple[np.ndarray, np.ndarray] | bool:
    if any(p is None for p in parts):
        return False
    rows = [p[0] for p in parts if p is not None and p[0].size]
    src = [p[1] for p in parts if p is not None and p[1].size]
    return (np.concatenate(rows), np.concatenate(src)) if rows else (_NONE, _NONE)


def sort_tie_runs(t: np.ndarray, doc: polars.Series) -> tuple[np.ndarray, np.ndarray]:
    """``t``: the rows tied with their successor (same segment, equal float32 score), ascending.
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
    first = starts[two]
    if first.size:
        swap = pl.select(pl.lit(doc).gather(first) < pl.lit(doc).gather(first + 1)).to_series().to_numpy()
        local[at[swap]] = first[swap] + 1
        local[at[swap] + 1] = first[swap]
    longer = np.flatnonzero(~two)
    if longer.size:
        sub = segment_rows(starts[longer], lengths[longer])
        run_id = np.repeat(np.arange(longer.size, dtype=np.int64), lengths[longer])
        order = (
            pl.DataFrame({"run": run_id, "doc": doc.gather(sub), "row": sub})
            .sort(["run", "doc"], descending=[False, True])["row"]
            .to_numpy()
            .astype(np.int64)
        )
        local[segment_rows((np.cumsum(lengths) - lengths)[longer], lengths[longer])] = order
    return rows, local


def _repeated(fp: np.ndarray, lengths: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Segments (local indexes) holding two equal values of ``fp`` (segments are consecutive rows)."""
    n_seg = lengths.size
    width = int(lengths.max())
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


# odd multipliers that pick other bits of a key for the second and later tables of match_keys
_REHASH = (0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD)
_LOAD = 8  # table slots per key (a power of two at least this many times the keys)


def _slot_table(n: int) -> tuple[np.ndarray, np.uint64]:
    bits = max(int(n * _LOAD - 1).bit_length(), 4)
    return np.full(1 << bits, -1, dtype=np.int32), np.uint64(64 - bits)


def match_keys(keys: np.ndarray, table_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(i, j)`` with ``keys[i] == table_keys[j]``, ``i`` ascending: for each key, the first of the
    table's keys equal to it found (one per key; equal table keys only arise from a hash collision,
    which the callers' string check then detects). Keys are uniformly distributed 64-bit hashes.

    A direct-address table in numpy: ``table_keys`` are scattered into ``8 * len`` slots by their top
    bits; a key looks up its slot and compares. The few table keys that lost their slot to another
    go to a second table (other bits), looked up only by the keys whose slot was taken by a
    different key, and so on until none is left. About twice as fast as a general hash join on
    cache-sized blocks, and numpy's gathers release the GIL, so blocks run on all cores.

    Checked against a dictionary, with 300 table keys forced into one slot of the first table:

    >>> rng = np.random.default_rng(7)
    >>> table_keys = rng.integers(0, 2**63, 4000, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    >>> table_keys[:300] = (table_keys[:300] >> np.uint64(20)) | np.uint64(0xABCD << 48)
    >>> table_keys = np.unique(table_keys)  # distinct (and sorted: the shared slot is one stretch)
    >>> keys = np.concatenate([table_keys[::3], rng.integers(0, 2**63, 9000, dtype=np.int64).astype(np.uint64)])
    >>> keys = keys[rng.permutation(keys.size)]
    >>> i, j = match_keys(keys, table_keys)
    >>> where = {k: n for n, k in enumerate(table_keys.tolist())}
    >>> expect = [(n, where[k]) for n, k in enumerate(keys.tolist()) if k in where]
    >>> list(zip(i.tolist(), j.tolist())) == expect, len(expect)
    (True, 1334)
    """
    n = table_keys.size
    table, shift = _slot_table(n)
    slot = (table_keys >> shift).astype(np.intp)
    idx = np.arange(n, dtype=np.int32)
    table[slot] = idx  # one of the keys sharing a slot wins it
    cand = table[(keys >> shift).astype(np.intp)]
    taken = np.flatnonzero(cand >= 0)
    c = cand[taken]
    eq = table_keys[c] == keys[taken]
    hit = np.flatnonzero(eq)
    i, j = taken[hit], c[hit].astype(np.int64)
    lost = np.flatnonzero(table[slot] != idx)  # table keys that did not win their slot
    ask = taken[~eq]  # keys whose slot holds another key: they may equal a lost key
    more_i, more_j = [], []
    for mul in map(np.uint64, _REHASH):
        if not (lost.size and ask.size):
            break
        lk = table_keys[lost]
        table, shift = _slot_table(lost.size)
        slot = ((lk * mul) >> shift).astype(np.intp)
        idx = np.arange(lost.size, dtype=np.int32)
        table[slot] = idx
        ak = keys[ask]
        cand = table[((ak * mul) >> shift).astype(np.intp)]
        taken = np.flatnonzero(cand >= 0)
        c = cand[taken]
        eq = lk[c] == ak[taken]
        more_i.append(ask[taken[eq]])
        more_j.append(lost[c[eq]])
        ask = ask[taken[~eq]]
        lost = lost[table[slot] != idx]
    if lost.size and ask.size:  # still some left (rare): a binary search of the sorted rest
        order = np.argsort(table_keys[lost], kind="stable")
        lost = lost[order]
        lk = table_keys[lost]
        ak = keys[ask]
        at = np.minimum(np.searchsorted(lk, ak), lk.size - 1)
        eq = lk[at] == ak
        more_i.append(ask[eq])
        more_j.append(lost[at[eq]])
    if more_i:
        mi = np.concatenate(more_i)
        if mi.size:
            mj = np.concatenate(more_j)
            order = np.argsort(mi)
            mi, mj = mi[order], mj[order]
            at = np.searchsorted(i, mi)
            i, j = np.insert(i, at, mi), np.insert(j, at, mj)
    return i.astype(np.int64, copy=False), j


def probe_by_query(
    run_q: np.ndarray,
    run_lay: Layout,
    run_docs: polars.Series,
    qrels_q: np.ndarray,
    qrels_lay: Layout,
    qrels_docs: polars.Series,
    n_q: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The (run row, qrels row, run segment) of every pair of equal query and doc id, run rows ascending.

    ``run_q[s]`` is the query (0..n_q-1, or -1: skip) of run segment ``s`` and ``qrels_q[s]`` that
    of qrels segment ``s`` (the qrels must be grouped and their pairs distinct). The run is probed a
    block at a time against the qrels rows of the block's queries only, so every hash set stays small
    enough for the cache. A key is ``q * M xor hash(doc)`` with ``M`` odd, so two keys with the same
    doc hash are equal only for the same query; every match is then compared on the doc strings.
    ``None`` when a match fails that check (a hash collision): the caller then joins exactly.
    """
    valid = qrels_q >= 0
    q_len = np.zeros(n_q, dtype=np.int64)
    q_len[qrels_q[valid]] = qrels_lay.lengths[valid]
    q_start = np.zeros(n_q, dtype=np.int64)
    q_start[qrels_q[valid]] = qrels_lay.starts[valid]
    qrels_hash = id_hash(qrels_docs) if qrels_lay.doc_hash is None else qrels_lay.doc_hash
    # the qrels doc ids are not rechunked here: gathering across chunks costs less than one rechunk
    # (qrels read from a file are contiguous already, see Qrels.from_file)
    lengths = run_lay.lengths

    def probe(a: int, b: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray] | None:
        sq = run_q[a:b]
        judged = sq[sq >= 0]
        judged = judged[q_len[judged] > 0]
        if judged.size == 0:
            return None
        qrows = segment_rows(q_start[judged], q_len[judged])
        qkey = np.repeat(judged.astype(np.uint64), q_len[judged])
        qkey *= _MIX
        qkey ^= qrels_hash[qrows]
        rkey = np.repeat(sq.astype(np.uint64), lengths[a:b])  # -1 (skip) wraps to 2^64 - 1
        rkey *= _MIX
        rkey ^= id_hash(run_docs.slice(lo, hi - lo)) if run_lay.doc_hash is None else run_lay.doc_hash[lo:hi]
        r, qi = match_keys(rkey, qkey)
        if r.size == 0:
            return None
        q = qrows[qi]
        docs = run_docs.slice(lo, hi - lo)
        if 20 * r.size > hi - lo:  # many hits: one contiguous chunk first (gathers across chunks cost more)
            docs = docs.rechunk()
        if not bool((docs.gather(r) == qrels_docs.gather(q)).all()):
            raise _Collision
        seg = a + np.searchsorted(run_lay.starts[a:b] - lo, r, side="right") - 1
        return r + lo, q, seg

    try:
        results = [x for x in map_blocks(probe, run_lay) if x is not None]
    except _Collision:
        return None
    run_rows = [x[0] for x in results]
    qrels_rows = [x[1] for x in results]
    segments = [x[2] for x in results]
    if not run_rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(run_rows), np.concatenate(qrels_rows), np.concatenate(segments)


def with_query_id(df: polars.DataFrame, lay: Layout) -> polars.DataFrame:
    """``df`` with its ``query_id`` column (first) rebuilt from its layout, for frames read compactly
    (see :class:`ctxeval._io.Loaded`); ``df`` itself when it has the column."""
    if "query_id" in df.columns:
        return df
    seg = np.repeat(np.arange(lay.n_segments, dtype=np.int64), lay.lengths)
    return pl.DataFrame([lay.heads.gather(seg).alias("query_id"), *df.get_columns()])
