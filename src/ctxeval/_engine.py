"""The columnar core: a run joined with its qrels as contiguous per-query segments of numpy arrays.

Every measure kernel is a pure function of an :class:`EvalData` (plus its parameters) that returns one
float per query. Queries are ordered byte-wise by id; within a query, rows are in rank order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

import numpy as np

from ._data import Qrels, Run, column
from ._errors import ConfigError, QueryMismatchError
from ._segments import Layout, block_tie_order, join_tie_orders, map_blocks, probe_by_query, segment_rows, sort_tie_runs

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = ["EvalData", "QueryAccounting", "prepare", "ranked_frame", "TIES", "MISSING"]

TiePolicy = Literal["trec", "input"]
MissingPolicy = Literal["ignore", "zero", "error"]
TIES = ("trec", "input")
MISSING = ("ignore", "zero", "error")


def _check_policy(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


@dataclass(frozen=True)
class Ranking:
    """The rank order of a run's rows: ``perm`` (None = the input order already is the rank order)
    and the query segments in that order (ids ascending byte-wise, with their row counts)."""

    perm: np.ndarray | None
    qids: list[str]
    lengths: np.ndarray

    def apply(self, df: pl.DataFrame) -> pl.DataFrame:
        return df if self.perm is None else df[self.perm]


def rank(df: pl.DataFrame, ties: str = "trec") -> Ranking:
    """Order rows by query (ids ascending, byte-wise), then by rank within each query.

    ``ties="trec"``: score descending as a 32-bit float (trec_eval holds scores as C floats), ties
    broken by doc id descending (byte-wise). ``ties="input"``: the input order within each query.
    Input already grouped by query and ordered by score (runs are usually written ranked) is
    recognised in one vectorised pass; runs of tied scores out of doc id order are sorted locally, and
    whole query segments are moved rather than the rows sorted.
    """
    _check_policy("ties", ties, TIES)
    n = df.height
    if n == 0:
        return Ranking(None, [], np.zeros(0, dtype=np.int64))
    qid = df["query_id"]
    gid = qid.rle_id().to_numpy()
    same = gid[1:] == gid[:-1]
    starts = np.flatnonzero(np.r_[True, ~same])
    heads = qid.gather(starts)
    grouped = heads.n_unique() == len(starts)
    within = True
    tie_perm: np.ndarray | None = None
    if ties == "trec" and grouped:
        s32 = df["score"].cast(pl.Float32).to_numpy()
        a, b = s32[:-1], s32[1:]
        if bool(np.any(same & (a < b))):
            within = False
        else:
            t = np.flatnonzero(same & (a == b))
            if t.size:
                doc = df["doc_id"]
                if not bool((doc.gather(t) > doc.gather(t + 1)).all()):
                    tie_perm = _order_tie_runs(t, doc)
    if grouped and within:
        lengths = np.diff(np.r_[starts, n])
        if bool(heads.is_sorted()):
            return Ranking(tie_perm, heads.to_list(), lengths)
        order = heads.arg_sort().to_numpy()
        seg = _segment_perm(starts[order], lengths[order])
        perm = seg if tie_perm is None else tie_perm[seg]
        return Ranking(perm, heads.gather(order).to_list(), lengths[order])
    idx = pl.int_range(n, dtype=pl.Int64, eager=True).alias("_row")
    frame = df.select("query_id", "doc_id", pl.col("score").cast(pl.Float32).alias("_s32")).with_columns(idx)
    if ties == "input":
        ordered = frame.sort(["query_id", "_row"])
    else:
        ordered = frame.sort(["query_id", "_s32", "doc_id"], descending=[False, True, True])
    counts = ordered.select(pl.col("query_id").rle()).unnest("query_id")
    return Ranking(ordered["_row"].to_numpy(), counts["value"].to_list(), counts["len"].to_numpy().astype(np.int64))


def ranked_frame(df: pl.DataFrame, ties: str = "trec") -> pl.DataFrame:
    """The rows of ``df`` in rank order (see :func:`rank`)."""
    return rank(df, ties).apply(df)


def _order_tie_runs(t: np.ndarray, doc: pl.Series) -> np.ndarray:
    """Permutation that sorts each run of tied rows by doc id descending. ``t`` holds the rows
    whose successor ties with them (same query, equal float32 score)."""
    rows, local = _tie_fix(t, doc)
    perm = np.arange(doc.len(), dtype=np.int64)
    perm[rows] = local
    return perm


_tie_fix = sort_tie_runs


_segment_perm = segment_rows


@dataclass(frozen=True)
class QueryAccounting:
    """How the queries of a run and of the qrels were treated."""

    evaluated: int  #: queries present in both the run and the qrels
    missing: int  #: judged queries absent from the run (handled by the ``missing`` policy)
    unjudged: int  #: run queries without judgments (always ignored, as trec_eval does)
    missing_policy: str
    missing_ids: tuple[str, ...] = field(default=(), repr=False)
    unjudged_ids: tuple[str, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, object]:
        return {
            "evaluated": self.evaluated,
            "missing_from_run": self.missing,
            "missing_policy": self.missing_policy,
            "scored_as_zero": self.missing if self.missing_policy == "zero" else 0,
            "ignored_missing": self.missing if self.missing_policy == "ignore" else 0,
            "unjudged_in_run": self.unjudged,
        }


class EvalData:
    """A run and its qrels as per-query segments.

    The run is held sparsely: for each query a segment ``[r_off[i], r_off[i+1])`` of ranked rows, of
    which only the *judged* rows are materialised (``j_idx``: their global row index in rank order,
    ``j_grade``: their grade). Unjudged rows carry no information for qrels-based measures, so the
    kernels cost O(judged retrieved), not O(retrieved). Dense per-row arrays (``r_grade``,
    ``r_judged``, ``r_rank``, ``r_seg``, ``r_score``) are available lazily for kernels that need them.

    Attributes
    ----------
    qids: the evaluated query ids, byte-wise ascending.
    r_off: ``int64[n_q + 1]`` segment offsets into the ranked run rows.
    j_idx, j_grade: judged retrieved rows (global row index, ascending) and their grades.
    q_off, q_grade: the judged grades of each query, descending.
    has_run: ``bool[n_q]`` whether the query occurs in the run.
    """

    def __init__(
        self,
        qids: list[str],
        r_off: np.ndarray,
        j_idx: np.ndarray,
        j_grade: np.ndarray,
        q_off: np.ndarray,
        q_grade: np.ndarray,
        has_run: np.ndarray,
        accounting: QueryAccounting,
        frame: pl.DataFrame | None = None,
        ties: str = "trec",
        max_grade: int = 0,
    ) -> None:
        self.qids = qids
        self.r_off = r_off
        self.j_idx = j_idx
        self.j_grade = j_grade
        self.q_off = q_off
        self.q_grade = q_grade
        self.has_run = has_run
        self.accounting = accounting
        self.frame = frame  #: the ranked run rows (query_id, doc_id, score), when kept
        self.ties = ties
        self.max_grade = max_grade  #: the highest grade in the whole qrels
        self._cache: dict[object, np.ndarray] = {}

    # Set-based RAG measures (see ``_pool.attach``): the grade map in force, the retrieval pool and
    # the doc -> group mapping. ``j_util``/``q_util`` are the grades after the grade map; the RAG
    # kernels read them, every other kernel reads the qrels' own grades.
    grade_map: object | None = None
    pool: object | None = None  #: a ``_pool.PoolInfo``; None: the run itself, full depth
    groups: object | None = None  #: a ``_pool.GroupInfo`` or None

    @cached_property
    def j_util(self) -> np.ndarray:
        return self.j_grade

    @cached_property
    def q_util(self) -> np.ndarray:
        return self.q_grade

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def n_rows(self) -> int:
        return int(self.r_off[-1])

    # sparse (judged rows) ------------------------------------------------------------------------
    @cached_property
    def j_seg(self) -> np.ndarray:
        """Query index of every judged retrieved row."""
        return np.searchsorted(self.r_off, self.j_idx, side="right").astype(np.int64) - 1

    @cached_property
    def j_rank(self) -> np.ndarray:
        """1-based rank of every judged retrieved row."""
        return self.j_idx - self.r_off[:-1][self.j_seg] + 1

    def j_relevant(self, rel: int) -> np.ndarray:
        """Mask over judged rows: grade >= rel."""
        key = ("j_rel", rel)
        if key not in self._cache:
            self._cache[key] = self.j_grade >= rel
        return self._cache[key]

    def seg_count(self, mask: np.ndarray) -> np.ndarray:
        """Per query: how many judged rows satisfy ``mask``."""
        return np.bincount(self.j_seg[mask], minlength=self.n_queries)

    def seg_total(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per query: the sum of ``values`` (one per judged row) over rows satisfying ``mask``."""
        seg = self.j_seg if mask is None else self.j_seg[mask]
        w = values if mask is None else values[mask]
        return np.bincount(seg, weights=w, minlength=self.n_queries).astype(np.float64)

    # dense (every ranked row) --------------------------------------------------------------------
    @cached_property
    def r_judged(self) -> np.ndarray:
        out = np.zeros(self.n_rows, dtype=bool)
        out[self.j_idx] = True
        return out

    @cached_property
    def r_grade(self) -> np.ndarray:
        """Grade of every ranked row (0 where unjudged; see ``r_judged``)."""
        out = np.zeros(self.n_rows, dtype=np.int64)
        out[self.j_idx] = self.j_grade
        return out

    @cached_property
    def r_score(self) -> np.ndarray:
        if self.frame is None:
            raise RuntimeError("this EvalData was built without the run's rows (keep_frame=False)")
        return self.frame["score"].to_numpy()

    @cached_property
    def r_seg(self) -> np.ndarray:
        """Query index of every run row."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), np.diff(self.r_off))

    @cached_property
    def r_rank(self) -> np.ndarray:
        """1-based rank of every run row within its query."""
        return np.arange(self.n_rows, dtype=np.int64) - self.r_off[:-1][self.r_seg] + 1

    @cached_property
    def q_seg(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), np.diff(self.q_off))

    @cached_property
    def q_pos(self) -> np.ndarray:
        """1-based position of each judged grade in its query's descending (ideal) order."""
        pos = np.arange(1, self.q_grade.shape[0] + 1, dtype=np.int64)
        pos -= np.repeat(self.q_off[:-1], np.diff(self.q_off))
        return pos

    @cached_property
    def n_ret(self) -> np.ndarray:
        return np.diff(self.r_off)

    def num_rel(self, rel: int) -> np.ndarray:
        """Per query: judged docs with grade >= rel (retrieved or not)."""
        key = ("num_rel", rel)
        if key not in self._cache:
            counts = self.__dict__.get("_grade_counts")
            if counts is not None:  # from prepare: judged docs per (query, grade), grades descending
                table, gmax = counts
                self._cache[key] = table[:, : min(max(gmax - rel + 1, 0), table.shape[1])].sum(axis=1, dtype=np.int64)
            else:
                self._cache[key] = seg_sum((self.q_grade >= rel).astype(np.int64), self.q_off)
        return self._cache[key]



def seg_sum(values: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each segment ``[off[i], off[i+1])``; empty segments give 0."""
    if values.dtype == bool:
        values = values.astype(np.int64)
    cs = np.empty(values.shape[0] + 1, dtype=np.float64 if values.dtype.kind == "f" else np.int64)
    cs[0] = 0
    np.cumsum(values, out=cs[1:])
    return cs[off[1:]] - cs[off[:-1]]


def _align(counts: dict[str, int], qids: list[str]) -> np.ndarray:
    off = np.zeros(len(qids) + 1, dtype=np.int64)
    off[1:] = np.cumsum([counts.get(q, 0) for q in qids])
    return off


def _offsets(lengths: np.ndarray) -> np.ndarray:
    off = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    return off


def _segment_index(lay: Layout, qids: pl.Series) -> np.ndarray:
    """For each segment of ``lay``: the position of its query in ``qids`` (sorted), or -1."""
    return _positions(lay.heads, qids)


def _positions(ids: pl.Series, qids: pl.Series) -> np.ndarray:
    """Position of every id of ``ids`` in the sorted, distinct ``qids``, or -1 where absent."""
    if qids.len() == 0 or ids.len() == 0:
        return np.full(ids.len(), -1, dtype=np.int64)
    at = qids.search_sorted(ids, side="left").to_numpy().astype(np.int64)
    np.minimum(at, qids.len() - 1, out=at)
    found = (qids.gather(at) == ids).to_numpy()
    at[~found] = -1
    return at


def _within_segment_order(score: pl.Series, doc: pl.Series, lay: Layout, ties: str) -> tuple[np.ndarray, np.ndarray] | None:
    """For grouped input whose rows are already in rank order within each query except for runs of
    tied scores: ``(rows, src)``, meaning position ``rows[i]`` (file order) takes row ``src[i]`` once
    those tie runs are ordered by doc id descending (both empty when nothing moves). ``None`` when
    some query's rows are not in score order (they then need a sort)."""
    none = np.zeros(0, dtype=np.int64)
    if ties == "input" or score.len() < 2:
        return none, none
    if lay.trec_order is None:  # not seen by the reader's duplicate test
        lay.trec_order = join_tie_orders(
            map_blocks(lambda a, b, lo, hi: block_tie_order(score, doc.slice(lo, hi - lo), lay, a, b, lo, hi), lay)
        )
    return None if lay.trec_order is False else lay.trec_order  # type: ignore[return-value]


def _hash_join(run: Run, qrels: Qrels) -> tuple[np.ndarray, np.ndarray] | None:
    """The (run row, qrels row) pairs with equal (query id, doc id), both in input order.

    Probes the 64-bit pair keys, then compares every hit on the strings. ``None`` if the qrels hold a
    repeated pair or a hit fails the string check (a hash collision): the caller then joins exactly.
    """
    rk = pl.Series("k", run.keys)
    qk = pl.Series("k", qrels.keys)
    rrow = rk.is_in(qk.implode()).arg_true()
    hits = pl.DataFrame({"k": rk.gather(rrow), "r": rrow})
    found = hits.join(pl.DataFrame({"k": qk}).with_row_index("q"), on="k", how="inner")
    if found.height != hits.height:  # a repeated qrels key (a repeated pair or a collision)
        return None
    r = found["r"].to_numpy().astype(np.int64)
    q = found["q"].to_numpy().astype(np.int64)
    rdf, qdf = run.frame, qrels.frame
    ok = bool(
        (rdf["doc_id"].gather(r) == qdf["doc_id"].gather(q)).all()
        and (rdf["query_id"].gather(r) == qdf["query_id"].gather(q)).all()
    )
    return (r, q) if ok else None


def _query_join(
    run: Run, seg_q: np.ndarray, qrels: Qrels, qids: pl.Series, qseg_q: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Like :func:`_hash_join` for grouped qrels, query by query (see :func:`probe_by_query`): the
    query of a match is equal by construction, its doc id is compared on the strings.

    With the qrels' pairs distinct, a run row can match two qrels rows only through a hash collision,
    and then one of the two fails the string check."""
    qlay = qrels.layout
    if not qlay.grouped or not qrels.pairs_unique:
        return None
    if qseg_q is None:
        qseg_q = _segment_index(qlay, qids)
    return probe_by_query(seg_q, run.layout, column(run, "doc_id"), qseg_q, qlay, column(qrels, "doc_id"), qids.len())


class _FastRows:
    """Run rows of grouped input, ranked without a sort (see :func:`_fast_run_rows`)."""

    def __init__(
        self,
        lay: Layout,
        seg_q: np.ndarray,
        tie: tuple[np.ndarray, np.ndarray],
        r_off: np.ndarray,
        j_idx: np.ndarray,
        j_grade: np.ndarray,
        j_seg: np.ndarray,
        j_rank: np.ndarray,
    ):
        self.j_seg = j_seg  #: query of every judged row (EvalData.j_seg, known here already)
        self.j_rank = j_rank  #: its 1-based rank (EvalData.j_rank)
        self.lay = lay
        self.seg_q = seg_q
        self.tie = tie
        self.r_off = r_off
        self.j_idx = j_idx
        self.j_grade = j_grade

    def frame_rows(self) -> np.ndarray:
        """Row index (input order) of every ranked row of the evaluated queries, in rank order."""
        kept = np.flatnonzero(self.seg_q >= 0)
        kept = kept[np.argsort(self.seg_q[kept], kind="stable")]
        rows = segment_rows(self.lay.starts[kept], self.lay.lengths[kept])
        tie_rows, tie_src = self.tie
        if tie_rows.size:
            perm = np.arange(self.lay.n_rows, dtype=np.int64)
            perm[tie_rows] = tie_src
            rows = perm[rows]
        return rows


def _fast_run_rows(
    run: Run, qrels: Qrels, qids: pl.Series, ties: str, qseg_q: np.ndarray | None = None, seg_q: np.ndarray | None = None
) -> _FastRows | None:
    """Segments and judged rows for runs grouped by query and (up to ties) ranked by score: no sort
    of the run's rows, only segment-level moves. ``None`` when the input needs the general path.
    ``qseg_q`` / ``seg_q``: the qrels' / run's :func:`_segment_index` when the caller knows them."""
    lay = run.layout
    if not lay.grouped:
        return None
    tie = _within_segment_order(column(run, "score"), column(run, "doc_id"), lay, ties)
    if tie is None:
        return None
    if seg_q is None:
        seg_q = _segment_index(lay, qids)
    kept = seg_q >= 0
    lengths = np.zeros(qids.len(), dtype=np.int64)
    lengths[seg_q[kept]] = lay.lengths[kept]
    r_off = _offsets(lengths)
    joined = _query_join(run, seg_q, qrels, qids, qseg_q)
    if joined is not None:
        rrow, qrow, seg = joined
    else:
        found = _hash_join(run, qrels)
        if found is None:
            return None
        rrow, qrow = found
        order = np.argsort(rrow, kind="stable")
        rrow, qrow = rrow[order], qrow[order]
        seg = lay.segment_of(rrow)
    q_of = seg_q[seg]
    if q_of.size and int(q_of.min()) < 0:  # cannot happen: a hit's query is judged
        return None
    pos = rrow
    tie_rows, tie_src = tie
    in_tie = np.zeros(0, dtype=np.int64)
    if tie_rows.size and rrow.size:
        # a hit at row h moves to the position p with src[p] = h; tie_src permutes tie_rows (sorted)
        where = np.empty(tie_rows.size, dtype=np.int64)
        where[np.searchsorted(tie_rows, tie_src)] = np.arange(tie_rows.size, dtype=np.int64)
        # which hits lie in a tie run: a row mask costs less than searching all hits in tie_rows
        tied = np.zeros(lay.n_rows, dtype=bool)
        tied[tie_rows] = True
        in_tie = np.flatnonzero(tied[rrow])
        del tied
        at = np.searchsorted(tie_rows, rrow[in_tie])
        pos = rrow.copy()
        pos[in_tie] = tie_rows[where[at]]
    rank0 = pos - lay.starts[seg]
    j = r_off[q_of] + rank0
    grades = column(qrels, "relevance").to_numpy()[qrow].astype(np.int64)
    kept_q = seg_q[seg_q >= 0]
    if kept_q.size > 1 and not bool(np.all(kept_q[1:] > kept_q[:-1])):  # queries move: sort all
        order = np.argsort(j, kind="stable")
        j, grades, q_of, rank0 = j[order], grades[order], q_of[order], rank0[order]
    elif in_tie.size:
        # hits move only inside their run of tied rows (of one query): sorting the hits in tie runs
        # among their own slots sorts everything
        local = in_tie[np.argsort(j[in_tie], kind="stable")]
        j[in_tie], grades[in_tie], rank0[in_tie] = j[local], grades[local], rank0[local]
    return _FastRows(lay, seg_q, tie, r_off, j, grades, q_of, rank0 + 1)


def _fast_qrels(qrels: Qrels, qids: pl.Series, seg_q: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, int] | None] | None:
    """``(q_off, q_grade, (counts, gmax))``: every evaluated query's judged grades, descending, by
    counting grades per query (grades are small integers; ``counts[i, c]``: query ``i``'s judged docs
    of grade ``gmax - c``); ``None`` for ungrouped qrels or a very wide grade range."""
    lay = qrels.layout
    if not lay.grouped:
        return None
    rel = column(qrels, "relevance").to_numpy()
    n_q = qids.len()
    if rel.size == 0:
        return np.zeros(n_q + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), None
    gmin, gmax = int(rel.min()), int(rel.max())
    width = gmax - gmin + 1
    if n_q * width > 4 * rel.size + 4096:
        return None
    if seg_q is None:
        seg_q = _segment_index(lay, qids)
    # code = query * width + (gmax - grade); rows of queries not evaluated go to one extra bin
    base = np.where(seg_q >= 0, seg_q * width + gmax, n_q * width + gmax)
    code = np.repeat(base, lay.lengths)
    code -= rel
    counts = np.bincount(code, minlength=n_q * width + width)[: n_q * width].reshape(n_q, width)
    grades = np.tile(np.arange(gmax, gmin - 1, -1, dtype=np.int64), n_q)
    return _offsets(counts.sum(axis=1)), np.repeat(grades, counts.ravel()), (counts, gmax)


def _judged_rows(run: Run, ranking: Ranking, keep: np.ndarray | None, qrels: Qrels) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in rank order, after dropping unkept rows) of the judged rows, and their grades.

    Probes 64-bit (query, doc) hashes against the qrels' hashes, then checks every hit against the
    strings; a hash collision (never seen in practice) falls back to an exact string join.
    """
    rows = ranking.perm if ranking.perm is not None else None
    if keep is not None:
        rows = np.flatnonzero(keep) if rows is None else rows[keep]
    joined = _hash_join(run, qrels)
    if joined is not None:
        rrow, qrow = joined
        if rows is None:
            pos = rrow
        else:
            # position of each source row in the ranked, kept order
            where = np.full(len(run), -1, dtype=np.int64)
            where[rows] = np.arange(rows.size, dtype=np.int64)
            pos = where[rrow]
            qrow = qrow[pos >= 0]
            pos = pos[pos >= 0]
        order = np.argsort(pos, kind="stable")
        return pos[order], column(qrels, "relevance").to_numpy()[qrow[order]].astype(np.int64)
    ranked = run.frame if rows is None else run.frame[rows]
    grades = ranked.join(qrels.frame, on=["query_id", "doc_id"], how="left", maintain_order="left")["relevance"]
    judged = grades.is_not_null()
    return judged.arg_true().to_numpy().astype(np.int64), grades.drop_nulls().to_numpy().astype(np.int64)


def _query_ids(obj: Qrels | Run) -> pl.Series:
    """The distinct query ids of a run or qrels."""
    lay = obj.layout
    return lay.heads if lay.grouped else obj.frame["query_id"].unique()


def _sorted_positions(
    qrels: Qrels, judged_q: pl.Series, in_run: pl.Series, run: Run, run_q: pl.Series, run_judged: pl.Series, missing: str
) -> dict[str, np.ndarray]:
    """What :func:`prepare` would otherwise search for, when the query ids come sorted: ``qrels`` (the
    qrels segments' positions in the evaluated query list), ``run`` (the run segments') and
    ``has_run`` (which evaluated queries the run holds). The evaluated list is the judged ids
    (``missing="zero"``) or the judged ids in the run, ascending; with the qrels heads distinct and
    ascending, a judged query's position in it is the count of kept heads before it, and likewise
    for the run's heads under ``ignore`` (then every evaluated query is in the run)."""
    out: dict[str, np.ndarray] = {}
    if not (qrels.layout.grouped and bool(judged_q.is_sorted())):
        return out
    judged_in_run = in_run.to_numpy().astype(bool)
    if missing == "zero":
        out["qrels"] = np.arange(judged_q.len(), dtype=np.int64)
        out["has_run"] = judged_in_run
    else:
        out["qrels"] = np.where(judged_in_run, np.cumsum(judged_in_run) - 1, -1).astype(np.int64)
        out["has_run"] = np.ones(int(judged_in_run.sum()), dtype=bool)
        if run.layout.grouped and bool(run_q.is_sorted()):
            kept = run_judged.to_numpy().astype(bool)
            out["run"] = np.where(kept, np.cumsum(kept) - 1, -1).astype(np.int64)
    return out


def prepare(
    qrels: Qrels,
    run: Run,
    *,
    ties: str = "trec",
    missing: str = "zero",
    keep_frame: bool = False,
    grade_map: object | None = None,
    pool: Run | None = None,
    pool_depth: int | None = None,
    allow_outside_pool: bool = False,
    groups: object | None = None,
) -> EvalData:
    """Join ``run`` with ``qrels`` into per-query segments.

    Queries in the run without judgments are ignored (counted in ``accounting.unjudged``). Judged
    queries absent from the run follow ``missing``: ``ignore`` drops them (trec_eval's default),
    ``zero`` keeps them with an empty ranking (trec_eval ``-c``), ``error`` raises.

    ``grade_map``, ``pool``, ``pool_depth``, ``allow_outside_pool`` and ``groups`` serve the set-based
    RAG measures; see :func:`ctxeval._pool.attach`.

    Runs grouped by query and written in rank order (the usual case) are ranked without sorting their
    rows; anything else is sorted (see :func:`rank`). Both give the same result.
    """
    _check_policy("ties", ties, TIES)
    _check_policy("missing", missing, MISSING)
    rag = grade_map is not None or pool is not None or pool_depth is not None or groups is not None
    if qrels._light is not None and run._light is not None and not (keep_frame or rag):
        from . import _light

        return _light.prepare(qrels._light, run._light, ties, missing, run.name)
    judged_q = _query_ids(qrels)
    run_q = _query_ids(run)
    in_run = judged_q.is_in(run_q.implode())
    run_judged = run_q.is_in(judged_q.implode())
    missing_ids = tuple(judged_q.filter(~in_run).sort().to_list())
    unjudged_ids = tuple(run_q.filter(~run_judged).sort().to_list())
    if missing == "error" and missing_ids:
        shown = ", ".join(missing_ids[:5]) + (" ..." if len(missing_ids) > 5 else "")
        raise QueryMismatchError(
            f"run {run.name!r}: {len(missing_ids)} judged quer{'y is' if len(missing_ids) == 1 else 'ies are'} "
            f"missing from the run ({shown}); use missing='zero' or 'ignore'"
        )
    both = judged_q.filter(in_run).sort()
    qids_s = judged_q.sort() if missing == "zero" else both
    qids = qids_s.to_list()
    # query ids in sorted, grouped files (the usual case): where each segment's query sits in qids_s
    # follows from the membership masks, without searching the ids
    known_at = _sorted_positions(qrels, judged_q, in_run, run, run_q, run_judged, missing)
    acc = QueryAccounting(
        evaluated=both.len(),
        missing=len(missing_ids),
        unjudged=len(unjudged_ids),
        missing_policy=missing,
        missing_ids=missing_ids,
        unjudged_ids=unjudged_ids,
    )
    want_frame = keep_frame or rag

    qseg_q = known_at.get("qrels")
    if qseg_q is None and qrels.layout.grouped:
        qseg_q = _segment_index(qrels.layout, qids_s)
    fast = _fast_run_rows(run, qrels, qids_s, ties, qseg_q, known_at.get("run"))
    known: dict[str, np.ndarray] = {}
    if fast is not None:
        r_off, j_idx, j_grade = fast.r_off, fast.j_idx, fast.j_grade
        known = {"j_seg": fast.j_seg, "j_rank": fast.j_rank}
        ranked = run.frame[fast.frame_rows()] if want_frame else None
    else:
        rdf = run.frame
        ranking = rank(rdf, ties)
        keep = None
        seg_len = dict(zip(ranking.qids, ranking.lengths.tolist()))
        if unjudged_ids:
            judged_set = set(judged_q.to_list())
            kept_seg = np.array([q in judged_set for q in ranking.qids], dtype=bool)
            keep = np.repeat(kept_seg, ranking.lengths)
        j_idx, j_grade = _judged_rows(run, ranking, keep, qrels)
        r_off = _align(seg_len, qids)
        frame_rows = ranking.perm
        if keep is not None:
            frame_rows = np.flatnonzero(keep) if frame_rows is None else frame_rows[keep]
        ranked = (rdf if frame_rows is None else rdf[frame_rows]) if want_frame else None

    judged = _fast_qrels(qrels, qids_s, qseg_q)
    if judged is not None:
        q_off, q_grade, grade_counts = judged
        if grade_counts is not None:
            known["_grade_counts"] = grade_counts  # type: ignore[assignment]
    else:
        qdf = qrels.frame
        qsel = qdf if missing == "zero" else qdf.filter(pl.col("query_id").is_in(both.implode()))
        qsorted = qsel.sort(["query_id", "relevance"], descending=[False, True])
        qcounts = dict(qsorted.group_by("query_id").len().iter_rows())
        q_off = _align(qcounts, qids)
        q_grade = qsorted["relevance"].to_numpy().astype(np.int64, copy=False)
    has_run = known_at.get("has_run")
    if has_run is None:
        has_run = qids_s.is_in(run_q.implode()).to_numpy().astype(bool)
    data = EvalData(
        qids,
        r_off,
        j_idx,
        j_grade,
        q_off,
        q_grade,
        has_run,
        acc,
        ranked,
        ties,
        int(column(qrels, "relevance").max() or 0),  # type: ignore[arg-type]
    )
    data.__dict__.update(known)  # cached properties the fast path has computed on the way
    if rag:
        from ._pool import attach

        attach(data, qrels, run, grade_map=grade_map, pool=pool, pool_depth=pool_depth, allow_outside_pool=allow_outside_pool, groups=groups)
    return data
