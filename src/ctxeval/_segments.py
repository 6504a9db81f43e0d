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

from typing import TYPE_CHECKING

import numpy as np

from ._lazy import pl

if TYPE_CHECKING:
    import polars

__all__ = ["Layout", "layout", "id_hash", "pair_keys", "duplicate_free", "segment_rows"]

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

    __slots__ = ("heads", "starts", "lengths", "grouped", "n_rows", "_doc_hash")

    def __init__(self, heads: polars.Series, lengths: np.ndarray, n_rows: int) -> None:
        self.heads = heads
        self.lengths = lengths
        self.starts = np.zeros(lengths.size, dtype=np.int64)
        if lengths.size > 1:
            np.cumsum(lengths[:-1], out=self.starts[1:])
        self.n_rows = n_rows
        self.grouped = bool(heads.n_unique() == heads.len())
        self._doc_hash: np.ndarray | None = None

    @property
    def n_segments(self) -> int:
        return int(self.lengths.size)

    def doc_hash(self, df: polars.DataFrame) -> np.ndarray:
        """:func:`id_hash` of ``df["doc_id"]`` (computed once; ``df`` must be the frame described)."""
        if self._doc_hash is None:
            self._doc_hash = id_hash(df["doc_id"])
        return self._doc_hash

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


def duplicate_free(df: polars.DataFrame, lay: Layout | None = None) -> bool:
    """Whether every (query_id, doc_id) pair of ``df`` is distinct (exact).

    For grouped input, duplicates can only sit in the same segment: each segment's 32-bit doc-hash
    fingerprints are sorted side by side (one ``(segments, width)`` matrix sort) and only segments
    with a repeated fingerprint are compared on the strings. Otherwise: distinct 64-bit pair keys
    prove distinct pairs, and equal keys are compared on the strings.
    """
    n = df.height
    if n < 2:
        return True
    lay = lay if lay is not None else layout(df)
    if lay.grouped:
        cand = _repeated_fingerprints(lay.doc_hash(df), lay)
        if cand is not None:
            if cand.size == 0:
                return True
            rows = segment_rows(lay.starts[cand], lay.lengths[cand])
            sub = pl.DataFrame({"seg": np.repeat(cand, lay.lengths[cand]), "doc_id": df["doc_id"].gather(rows)})
            return not bool(sub.select(pl.struct("seg", "doc_id").is_duplicated().any()).item())
    if pl.Series(pair_keys(df["query_id"], df["doc_id"])).n_unique() == n:
        return True
    return bool(df.select(pl.struct("query_id", "doc_id").is_unique().all()).item())


def _repeated_fingerprints(dh: np.ndarray, lay: Layout) -> np.ndarray | None:
    """Segments holding two rows with equal 32-bit fingerprints (the high half of the doc hash).

    ``None`` when the segments are too ragged to lay out as a matrix cheaply.
    """
    lengths = lay.lengths
    width = int(lengths.max())
    n_seg = lengths.size
    if width < 2:
        return np.zeros(0, dtype=np.int64)
    fp = (dh >> np.uint64(32)).astype(np.uint32)
    if bool(np.all(lengths == width)):
        m = fp.reshape(n_seg, width)
        ragged = False
    else:
        if n_seg * width > _PAD_RATIO * lay.n_rows + 4096:
            return None
        # padding sorts after every genuine value (ties with a genuine 0xFFFFFFFF are harmless: the
        # first `length` cells of a sorted row still hold exactly the segment's values)
        m = np.full((n_seg, width), np.uint32(0xFFFFFFFF), dtype=np.uint32)
        flat = np.arange(lay.n_rows, dtype=np.int64) + np.repeat(np.arange(n_seg, dtype=np.int64) * width - lay.starts, lengths)
        m.ravel()[flat] = fp
        del flat
        ragged = True
    del fp
    m.sort(axis=1)
    eq = m[:, 1:] == m[:, :-1]
    if ragged:
        eq &= np.arange(width - 1)[None, :] < (lengths - 1)[:, None]
    return np.flatnonzero(eq.any(axis=1))


_CHUNK_ROWS = 1 << 18


def probe_by_query(
    run_q: np.ndarray,
    run_lay: Layout,
    run_hash: np.ndarray,
    qrels_q: np.ndarray,
    qrels_lay: Layout,
    qrels_hash: np.ndarray,
    n_q: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Match run rows to qrels rows of the same query with an equal doc hash.

    ``run_q[s]`` is the query (0..n_q-1, or -1: skip) of run segment ``s`` and ``qrels_q[s]`` that
    of qrels segment ``s``. The run is probed in chunks of whole segments against the qrels rows of
    the same queries only, so every hash set stays small enough for the cache: a key is
    ``q * M xor doc_hash`` with ``M`` odd, so equal keys with equal doc hashes have equal queries.

    Returns ``(run_rows, qrels_rows)`` of the matches (doc *hashes* equal: the caller compares the
    strings); every run row matches at most one qrels row unless the qrels repeat a (query, doc hash),
    which the caller detects as a repeated run row.
    """
    # the qrels rows of every query, as one range per query
    valid = qrels_q >= 0
    q_len = np.zeros(n_q, dtype=np.int64)
    q_len[qrels_q[valid]] = qrels_lay.lengths[valid]
    q_start = np.zeros(n_q, dtype=np.int64)
    q_start[qrels_q[valid]] = qrels_lay.starts[valid]
    starts, lengths = run_lay.starts, run_lay.lengths
    ends = starts + lengths
    n_seg = lengths.size
    run_rows: list[np.ndarray] = []
    qrels_rows: list[np.ndarray] = []
    a = 0
    while a < n_seg:
        b = min(max(int(np.searchsorted(ends, starts[a] + _CHUNK_ROWS, side="right")), a + 1), n_seg)
        sq = run_q[a:b]
        judged = sq[(sq >= 0)]
        judged = judged[q_len[judged] > 0]
        if judged.size:
            lo, hi = int(starts[a]), int(ends[b - 1])
            qrows = segment_rows(q_start[judged], q_len[judged])
            qkey = np.repeat(judged.astype(np.uint64), q_len[judged])
            qkey *= _MIX
            qkey ^= qrels_hash[qrows]
            rkey = np.repeat(sq.astype(np.uint64), lengths[a:b])  # -1 (unjudged) wraps to 2^64 - 1
            rkey *= _MIX
            rkey ^= run_hash[lo:hi]
            rk = pl.Series("k", rkey)
            hit = rk.is_in(pl.Series("k", qkey).implode()).arg_true()
            if hit.len():
                found = pl.DataFrame({"k": rk.gather(hit), "r": hit}).join(
                    pl.DataFrame({"k": qkey, "q": qrows}), on="k", how="inner"
                )
                run_rows.append(found["r"].to_numpy().astype(np.int64) + lo)
                qrels_rows.append(found["q"].to_numpy().astype(np.int64))
        a = b
    if not run_rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(run_rows), np.concatenate(qrels_rows)
