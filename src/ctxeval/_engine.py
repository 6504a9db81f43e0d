"""The columnar core: a run joined with its qrels as contiguous per-query segments of numpy arrays.

Every measure kernel is a pure function of an :class:`EvalData` (plus its parameters) that returns one
float per query. Queries are ordered byte-wise by id; within a query, rows are in rank order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
import polars as pl

from ._data import Qrels, Run
from ._errors import ConfigError, QueryMismatchError

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
    n = doc.len()
    in_tie = np.zeros(n, dtype=bool)
    in_tie[t] = True
    in_tie[t + 1] = True
    rows = np.flatnonzero(in_tie)
    # a new tie run starts at a tied row whose predecessor does not tie with it
    starts_run = np.ones(rows.size, dtype=bool)
    linked = np.zeros(n, dtype=bool)
    linked[t + 1] = True
    starts_run &= ~linked[rows]
    run_id = np.cumsum(starts_run)
    local = (
        pl.DataFrame({"run": run_id, "doc": doc.gather(rows), "row": rows})
        .sort(["run", "doc"], descending=[False, True])["row"]
        .to_numpy()
    )
    perm = np.arange(n, dtype=np.int64)
    perm[rows] = local
    return perm


def _segment_perm(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, start + length)`` for each segment, vectorised."""
    total = int(lengths.sum())
    out_off = np.r_[0, np.cumsum(lengths)[:-1]]
    return np.arange(total, dtype=np.int64) - np.repeat(out_off - starts, lengths)


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
        return np.arange(self.q_grade.shape[0], dtype=np.int64) - self.q_off[:-1][self.q_seg] + 1

    @cached_property
    def n_ret(self) -> np.ndarray:
        return np.diff(self.r_off)

    def num_rel(self, rel: int) -> np.ndarray:
        """Per query: judged docs with grade >= rel (retrieved or not)."""
        key = ("num_rel", rel)
        if key not in self._cache:
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


def _judged_rows(run: Run, ranking: Ranking, keep: np.ndarray | None, qrels: Qrels) -> tuple[np.ndarray, np.ndarray]:
    """Positions (in rank order, after dropping unkept rows) of the judged rows, and their grades.

    Probes 64-bit (query, doc) hashes against the qrels' hashes, then checks every hit against the
    strings; a hash collision (never seen in practice) falls back to an exact string join.
    """
    rows = ranking.perm if ranking.perm is not None else None
    if keep is not None:
        rows = np.flatnonzero(keep) if rows is None else rows[keep]
    rkeys = run.keys if rows is None else run.keys[rows]
    qdf = qrels.frame
    qkeys = qrels.keys
    order = np.argsort(qkeys, kind="stable")
    sorted_keys = qkeys[order]
    if not bool(np.any(sorted_keys[1:] == sorted_keys[:-1])):
        hit = np.flatnonzero(pl.Series(rkeys).is_in(pl.Series(qkeys).implode()).to_numpy())
        src = hit if rows is None else rows[hit]
        qrow = order[np.searchsorted(sorted_keys, rkeys[hit])]
        rdf = run.frame
        ok = bool(
            (rdf["doc_id"].gather(src) == qdf["doc_id"].gather(qrow)).all()
            and (rdf["query_id"].gather(src) == qdf["query_id"].gather(qrow)).all()
        )
        if ok:
            return hit.astype(np.int64), qdf["relevance"].to_numpy()[qrow].astype(np.int64)
    ranked = run.frame if rows is None else run.frame[rows]
    grades = ranked.join(qdf, on=["query_id", "doc_id"], how="left", maintain_order="left")["relevance"]
    judged = grades.is_not_null()
    return judged.arg_true().to_numpy().astype(np.int64), grades.drop_nulls().to_numpy().astype(np.int64)


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
    """
    _check_policy("ties", ties, TIES)
    _check_policy("missing", missing, MISSING)
    qdf = qrels.frame
    rdf = run.frame
    judged_set = set(qdf["query_id"].unique().to_list())
    run_set = set(rdf["query_id"].unique().to_list())
    missing_ids = tuple(sorted(judged_set - run_set))
    unjudged_ids = tuple(sorted(run_set - judged_set))
    if missing == "error" and missing_ids:
        shown = ", ".join(missing_ids[:5]) + (" ..." if len(missing_ids) > 5 else "")
        raise QueryMismatchError(
            f"run {run.name!r}: {len(missing_ids)} judged quer{'y is' if len(missing_ids) == 1 else 'ies are'} "
            f"missing from the run ({shown}); use missing='zero' or 'ignore'"
        )
    both = sorted(judged_set & run_set)
    qids = sorted(judged_set) if missing == "zero" else both
    acc = QueryAccounting(
        evaluated=len(both),
        missing=len(missing_ids),
        unjudged=len(unjudged_ids),
        missing_policy=missing,
        missing_ids=missing_ids,
        unjudged_ids=unjudged_ids,
    )
    ranking = rank(rdf, ties)
    keep = None
    seg_len = dict(zip(ranking.qids, ranking.lengths.tolist()))
    if unjudged_ids:
        kept_seg = np.array([q in judged_set for q in ranking.qids], dtype=bool)
        keep = np.repeat(kept_seg, ranking.lengths)
    j_idx, j_grade = _judged_rows(run, ranking, keep, qrels)
    r_off = _align(seg_len, qids)
    frame_rows = ranking.perm
    if keep is not None:
        frame_rows = np.flatnonzero(keep) if frame_rows is None else frame_rows[keep]

    qsel = qdf if missing == "zero" else qdf.filter(pl.col("query_id").is_in(pl.Series(both, dtype=pl.String).implode()))
    qsorted = qsel.sort(["query_id", "relevance"], descending=[False, True])
    qcounts = dict(qsorted.group_by("query_id").len().iter_rows())
    q_off = _align(qcounts, qids)
    q_grade = qsorted["relevance"].to_numpy().astype(np.int64, copy=False)
    has_run = np.array([q in run_set for q in qids], dtype=bool)
    rag = grade_map is not None or pool is not None or pool_depth is not None or groups is not None
    ranked = (rdf if frame_rows is None else rdf[frame_rows]) if (keep_frame or rag) else None
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
        int(qdf["relevance"].max() or 0),  # type: ignore[arg-type]
    )
    if rag:
        from ._pool import attach

        attach(data, qrels, run, grade_map=grade_map, pool=pool, pool_depth=pool_depth, allow_outside_pool=allow_outside_pool, groups=groups)
    return data
