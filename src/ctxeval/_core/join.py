"""The join: a run against its qrels, into an :class:`~.evaldata.EvalData`; and (query, doc) pairs
against (query, doc) pairs, for side data.

Query sets follow trec_eval: run queries without judgments are ignored (and counted); judged queries
the run lacks follow ``missing`` (``zero``: kept with an empty ranking, trec_eval ``-c``;
``ignore``: left out; ``error``: refused). Rows are ranked by :mod:`.ranking`.

Matching is by 64-bit keys: a pair's key mixes its query's position with its doc id's hash, so equal
keys mean the same query and, but for a hash collision, the same doc; every match is then compared
on the ids, and a collision (never seen in practice) falls back to an exact match on the strings.
The run is probed a block of queries at a time against the qrels rows of those queries only, so
every table stays small enough for the cache, on a few threads.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._errors import QueryMismatchError
from .columns import Columns
from .evaldata import EvalData, QueryAccounting, RankedRows
from .ids import MIX, Ids, harmonise
from .keys import match_keys
from .ranking import FLOAT32_MAX, SegmentOrder, score_key, segment_order, tie_memo
from .segments import isin, map_blocks, offsets, run_starts, segment_rows
from .ties import find_groups

__all__ = ["join", "judged_docs", "match_pairs", "missing_error", "pair_lookup", "positions", "run_positions"]


class _Collision(Exception):
    """A hash match that the ids contradict."""


def positions(ids: np.ndarray, qids: np.ndarray) -> np.ndarray:
    """Position of every id of ``ids`` in the sorted, distinct ``qids``, or -1 where absent."""
    if qids.size == 0 or ids.size == 0:
        return np.full(ids.size, -1, dtype=np.int64)
    at = np.searchsorted(qids, ids).astype(np.int64)
    np.minimum(at, qids.size - 1, out=at)
    at[qids[at] != ids] = -1
    return at


def run_positions(ids: np.ndarray, qids: np.ndarray | list[str]) -> np.ndarray:
    """:func:`positions` of ``ids`` in the sorted, distinct ``qids``, each run of equal consecutive
    ids searched once (span labels come sorted by query: a run per query); when ``qids`` is a list
    and the runs are its ids, in order, no search at all.

    >>> run_positions(np.array(["a", "a", "c", "b", "b"]), ["a", "b"]).tolist()
    [0, 0, -1, 1, 1]
    >>> run_positions(np.array(["a", "b", "b"]), ["a", "b"]).tolist(), run_positions(np.array(["b", "a"]), ["a", "b"]).tolist()
    ([0, 1, 1], [1, 0])
    """
    heads = run_starts(ids)
    first = ids[heads]
    if isinstance(qids, list) and first.size == len(qids) and first.tolist() == qids:
        at = np.arange(first.size, dtype=np.int64)
    else:
        at = positions(first, np.asarray(qids))
    return np.repeat(at, np.diff(np.r_[heads, ids.size]))


def missing_error(run_name: str, missing_ids: tuple[str, ...]) -> QueryMismatchError:
    shown = ", ".join(missing_ids[:5]) + (" ..." if len(missing_ids) > 5 else "")
    n = len(missing_ids)
    return QueryMismatchError(
        f"run {run_name!r}: {n} judged quer{'y is' if n == 1 else 'ies are'} missing from the run ({shown}); "
        "use missing='zero' or 'ignore'"
    )


def _query_sets(
    qrels: Columns, run: Columns, missing: str, run_name: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, QueryAccounting, np.ndarray]:
    """The evaluated query ids (sorted), the qrels' and the run's segment positions among them, the
    accounting, and which evaluated queries the run holds."""
    judged_q, run_q = qrels.layout.heads, run.layout.heads
    if qrels.layout.heads_sorted:  # the usual case: one search, each run query's place among the judged
        pos = positions(run_q, judged_q)
        run_judged = pos >= 0
        in_run = np.zeros(judged_q.size, dtype=bool)
        in_run[pos[run_judged]] = True
    else:
        in_run = isin(judged_q, run_q, run.layout.heads_sorted)
        run_judged = isin(run_q, judged_q)
    missing_ids = tuple(np.sort(judged_q[~in_run]).tolist())
    unjudged_ids = tuple(np.sort(run_q[~run_judged]).tolist())
    if missing == "error" and missing_ids:
        raise missing_error(run_name, missing_ids)
    acc = QueryAccounting(
        evaluated=int(in_run.sum()),
        missing=len(missing_ids),
        unjudged=len(unjudged_ids),
        missing_policy=missing,
        missing_ids=missing_ids,
        unjudged_ids=unjudged_ids,
    )
    if qrels.layout.heads_sorted:  # positions from that search, no other
        if missing == "zero":
            return judged_q, np.arange(judged_q.size, dtype=np.int64), pos, acc, in_run
        rank = np.cumsum(in_run) - 1  # a judged query's place among those the run holds
        qseg_q = np.where(in_run, rank, -1).astype(np.int64)
        seg_q = np.full(run_q.size, -1, dtype=np.int64)
        seg_q[run_judged] = rank[pos[run_judged]]
        return judged_q[in_run], qseg_q, seg_q, acc, np.ones(int(in_run.sum()), dtype=bool)
    qids = np.sort(judged_q if missing == "zero" else judged_q[in_run])
    qseg_q = positions(judged_q, qids)
    seg_q = positions(run_q, qids)
    has_run = isin(qids, run_q) if missing == "zero" else np.ones(qids.size, dtype=bool)
    return qids, qseg_q, seg_q, acc, has_run


def _probe(
    run: Columns, run_doc: Ids, seg_q: np.ndarray, qrels: Columns, qrels_doc: Ids, qseg_q: np.ndarray, n_q: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (run row, qrels row, run segment) of every pair of equal query and doc id, run rows
    ascending (qrels pairs are distinct, see the readers)."""
    rl, ql = run.layout, qrels.layout
    valid = qseg_q >= 0
    q_len = np.zeros(n_q, dtype=np.int64)
    q_len[qseg_q[valid]] = ql.lengths[valid]
    q_start = np.zeros(n_q, dtype=np.int64)
    q_start[qseg_q[valid]] = ql.starts[valid]
    qh = qrels_doc.hash()
    lengths = rl.lengths

    def probe(a: int, b: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        sq = seg_q[a:b]
        judged = sq[sq >= 0]
        judged = judged[q_len[judged] > 0]
        if judged.size == 0:
            return None
        qrows = segment_rows(q_start[judged], q_len[judged])
        qkey = np.repeat(judged.astype(np.uint64), q_len[judged])
        qkey *= MIX
        qkey ^= qh[qrows]
        rkey = np.repeat(sq.astype(np.uint64), lengths[a:b])  # -1 (skip) wraps to 2^64 - 1
        rkey *= MIX
        rkey ^= run_doc.slice(lo, hi).hash()  # hashed here, block by block (see columns.scan)
        r, qi = match_keys(rkey, qkey)
        if r.size == 0:
            return None
        q = qrows[qi]
        if not bool(run_doc.slice(lo, hi).equal(r, qrels_doc, q).all()):
            raise _Collision
        seg = a + np.searchsorted(rl.starts[a:b] - lo, r, side="right") - 1
        return r + lo, q, seg

    try:
        found = [x for x in map_blocks(probe, rl.starts, rl.lengths) if x is not None]
    except _Collision:
        return _exact_probe(run, run_doc, seg_q, qrels, qrels_doc, qseg_q)
    if not found:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return (
        np.concatenate([x[0] for x in found]),
        np.concatenate([x[1] for x in found]),
        np.concatenate([x[2] for x in found]),
    )


def _exact_probe(
    run: Columns, run_doc: Ids, seg_q: np.ndarray, qrels: Columns, qrels_doc: Ids, qseg_q: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_probe` on the strings (after a hash collision)."""
    qdocs = qrels_doc.to_list()
    table: dict[tuple[int, str], int] = {}
    qseg = np.repeat(qseg_q, qrels.layout.lengths)
    for row, (q, d) in enumerate(zip(qseg.tolist(), qdocs)):
        if q >= 0:
            table[(q, d)] = row
    rseg = run.layout.row_segments()
    rq = seg_q[rseg]
    rr, qr = [], []
    for row, (q, d) in enumerate(zip(rq.tolist(), run_doc.to_list())):
        hit = table.get((q, d)) if q >= 0 else None
        if hit is not None:
            rr.append(row)
            qr.append(hit)
    r = np.asarray(rr, dtype=np.int64)
    return r, np.asarray(qr, dtype=np.int64), rseg[r]


def _judged_grades(
    qrels: Columns, qseg_q: np.ndarray, n_q: int
) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, int] | None]:
    """``(q_off, q_grade, (counts, gmax))``: every evaluated query's judged grades, descending, by
    counting grades per query (``counts[i, c]``: query ``i``'s judged docs of grade ``gmax - c``);
    sorted instead when the grades span too wide a range for a count table."""
    rel = qrels.values
    if rel.size == 0:
        return np.zeros(n_q + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), None
    gmin, gmax = int(rel.min()), int(rel.max())
    width = gmax - gmin + 1
    lay = qrels.layout
    if n_q * width > 4 * rel.size + 4096:
        q = np.repeat(qseg_q, lay.lengths)
        keep = np.flatnonzero(q >= 0)
        order = keep[np.lexsort((~rel[keep], q[keep]))]  # ~g: descending, without negating -2^63
        return offsets(np.bincount(q[keep], minlength=n_q)), rel[order].astype(np.int64), None
    # code = query * width + (gmax - grade); rows of queries not evaluated go to one extra bin
    base = np.where(qseg_q >= 0, qseg_q * width + gmax, n_q * width + gmax)
    code = np.repeat(base, lay.lengths)
    code -= rel
    counts = np.bincount(code, minlength=n_q * width + width)[: n_q * width].reshape(n_q, width)
    grades = np.tile(np.arange(gmax, gmin - 1, -1, dtype=np.int64), n_q)
    return offsets(counts.sum(axis=1)), np.repeat(grades, counts.ravel()), (counts, gmax)


def _rank_positions(order: SegmentOrder, rrow: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The rank-order position of each hit row, and the hits whose position moved."""
    if order.perm is not None:
        inv = np.empty(n_rows, dtype=np.int64)
        inv[order.perm] = np.arange(n_rows, dtype=np.int64)
        pos = inv[rrow]
        return pos, np.flatnonzero(pos != rrow)
    tie_rows, tie_src = order.tie_rows, order.tie_src
    if not (tie_rows.size and rrow.size):
        return rrow, np.zeros(0, dtype=np.int64)
    # a hit at row h moves to the position p with src[p] = h; tie_src permutes tie_rows (sorted)
    where = np.empty(tie_rows.size, dtype=np.int64)
    where[np.searchsorted(tie_rows, tie_src)] = np.arange(tie_rows.size, dtype=np.int64)
    tied = np.zeros(n_rows, dtype=bool)  # which hits lie in a tie run: a mask costs less than a search
    tied[tie_rows] = True
    moved = np.flatnonzero(tied[rrow])
    pos = rrow.copy()
    pos[moved] = tie_rows[where[np.searchsorted(tie_rows, rrow[moved])]]
    return pos, moved


def _beyond_float32(values: np.ndarray) -> int:
    """How many scores lie beyond the float32 range (finite, but ±inf once cast)."""
    if values.size == 0 or max(float(values.max()), -float(values.min())) <= FLOAT32_MAX:
        return 0
    return int(np.count_nonzero(np.isfinite(values) & (np.abs(values) > FLOAT32_MAX)))


def join(
    qrels: Columns,
    run: Columns,
    *,
    ties: str = "trec",
    missing: str = "zero",
    run_name: str = "run",
    keep_rows: bool = False,
) -> EvalData:
    """``run`` joined with ``qrels`` into per-query segments (see the module docstring); ``keep_rows``
    keeps the doc id and score of every ranked row (for side data)."""
    qids, qseg_q, seg_q, acc, has_run = _query_sets(qrels, run, missing, run_name)
    if ties in ("trec", "expected"):
        beyond = run.memo.get("beyond_float32")  # counted by the reader's scan, else here
        if beyond is None:
            beyond = _beyond_float32(run.values)
        if beyond:
            acc = dataclasses.replace(acc, beyond_float32=int(beyond))
    n_q = qids.size
    lay = run.layout
    memo = tie_memo(ties)
    order = segment_order(
        lambda: score_key(run.values, ties),
        run.doc,
        lay.starts,
        lay.lengths,
        ties,
        run.memo.get(memo) if memo else None,
    )
    kept = seg_q >= 0
    lengths = np.zeros(n_q, dtype=np.int64)
    lengths[seg_q[kept]] = lay.lengths[kept]
    r_off = offsets(lengths)
    run_doc, qrels_doc = harmonise(run.doc, qrels.doc)
    rrow, qrow, seg = _probe(run, run_doc, seg_q, qrels, qrels_doc, qseg_q, n_q)
    q_of = seg_q[seg]
    pos, moved = _rank_positions(order, rrow, lay.n_rows)
    rank0 = pos - lay.starts[seg]
    j = r_off[q_of] + rank0
    grades = qrels.values[qrow].astype(np.int64)
    kept_q = seg_q[kept]
    if (kept_q.size > 1 and not bool(np.all(kept_q[1:] > kept_q[:-1]))) or order.perm is not None:
        s = np.argsort(j, kind="stable")  # queries (or rows) move: sort every hit
        j, grades, q_of, rank0, qrow = j[s], grades[s], q_of[s], rank0[s], qrow[s]
    elif moved.size:
        # hits move only inside their run of tied rows (of one query): sorting the hits in tie runs
        # among their own slots sorts everything
        local = moved[np.argsort(j[moved], kind="stable")]
        j[moved], grades[moved], rank0[moved], qrow[moved] = j[local], grades[local], rank0[local], qrow[local]
    q_off, q_grade, counts = _judged_grades(qrels, qseg_q, n_q)
    rows = groups = None
    if keep_rows or ties == "expected":
        segs = np.flatnonzero(kept)
        segs = segs[np.argsort(seg_q[segs], kind="stable")]
        file_rows = segment_rows(lay.starts[segs], lay.lengths[segs])
        ranked = order.rows(lay.n_rows)[file_rows] if (order.perm is not None or order.tie_rows.size) else file_rows
        if keep_rows:
            rows = RankedRows(run.doc.take(ranked), run.values[ranked])
        if ties == "expected":
            groups = find_groups(score_key(run.values[ranked], ties), r_off)
    data = EvalData(
        qids.tolist(),
        r_off,
        j,
        grades,
        q_off,
        q_grade,
        has_run,
        acc,
        ties,
        int(qrels.values.max()) if len(qrels) else 0,
        rows,
        tie_groups=groups,
    )
    data.__dict__.update({"j_seg": q_of, "j_rank": rank0 + 1})  # known here already
    if counts is not None:
        data._memo["grade_counts"] = counts
    data._memo["j_qrow"] = qrow  # the qrels row of every judged row (side data keyed by qrels rows reads it)
    return data


def match_pairs(q_a: np.ndarray, ids_a: Ids, q_b: np.ndarray, ids_b: Ids) -> tuple[np.ndarray, np.ndarray]:
    """``(i, j)``: rows of ``a`` and ``b`` with the same query code (``q_a[i] == q_b[j] >= 0``) and
    the same id, ``i`` ascending; the (query, id) pairs of ``b`` must be distinct. Rows with a
    negative code are skipped."""
    a, b = harmonise(ids_a, ids_b)
    keep_b = np.flatnonzero(q_b >= 0)
    keep_a = np.flatnonzero(q_a >= 0)
    if keep_a.size == 0 or keep_b.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    hb = b.hash() if keep_b.size == len(b) else b.take(keep_b).hash()
    ha = a.hash() if keep_a.size == len(a) else a.take(keep_a).hash()
    kb = q_b[keep_b].astype(np.uint64) * MIX ^ hb
    ka = q_a[keep_a].astype(np.uint64) * MIX ^ ha
    i, jj = match_keys(ka, kb)
    i, jj = keep_a[i], keep_b[jj]
    if bool(a.equal(i, b, jj).all()):
        return i, jj
    table = {(q, d): n for n, (q, d) in enumerate(zip(q_b.tolist(), b.to_list())) if q >= 0}
    hits = [(n, table.get((q, d))) for n, (q, d) in enumerate(zip(q_a.tolist(), a.to_list())) if q >= 0]
    pairs = [(n, m) for n, m in hits if m is not None]
    return np.asarray([p[0] for p in pairs], dtype=np.int64), np.asarray([p[1] for p in pairs], dtype=np.int64)


def judged_docs(qrels: Columns, qids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The qrels rows of the queries ``qids`` (sorted), doc by doc: (query position, row), rows in
    qrels order."""
    pos = positions(qrels.layout.heads, qids)
    keep = np.flatnonzero(pos >= 0)
    lay = qrels.layout
    rows = segment_rows(lay.starts[keep], lay.lengths[keep])
    return np.repeat(pos[keep], lay.lengths[keep]), rows


def pair_lookup(q: np.ndarray, ids: Ids, table: Columns, qids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``i`` (query positions ``q`` among ``qids``, doc ids ``ids``) found in the (query, doc)
    pairs of ``table``, and the table row of each: ``(i, row)``, ``i`` ascending."""
    tq = np.repeat(positions(table.layout.heads, qids), table.layout.lengths)
    return match_pairs(q, ids, tq, table.doc)
