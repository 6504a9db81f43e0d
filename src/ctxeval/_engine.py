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


def ranked_frame(df: pl.DataFrame, ties: str = "trec") -> pl.DataFrame:
    """Rows grouped by query (ids ascending, byte-wise) and in rank order within each query.

    ``ties="trec"``: score descending as a 32-bit float (trec_eval holds scores as C floats), ties
    broken by doc id descending (byte-wise). ``ties="input"``: the input order within each query.
    """
    _check_policy("ties", ties, TIES)
    if df.height == 0:
        return df
    if ties == "input":
        if _is_sorted_qid(df):
            return df
        return df.sort("query_id", maintain_order=True)
    key = pl.col("score").cast(pl.Float32)
    q, q1 = pl.col("query_id"), pl.col("query_id").shift(-1)
    s, s1 = key, key.shift(-1)
    d, d1 = pl.col("doc_id"), pl.col("doc_id").shift(-1)
    same = q == q1
    order_ok = (s > s1) | ((s == s1) & (d > d1))
    checks = df.select(
        sorted_q=(q <= q1).fill_null(True).all(),
        within=(~same | order_ok).fill_null(True).all(),
    ).row(0)
    sorted_q, within = checks
    if sorted_q and within:
        return df
    if within:
        # Grouped and ordered inside each query, but queries out of byte order: move whole segments.
        gid = df.select(pl.col("query_id").rle_id()).to_series().to_numpy()
        starts = np.flatnonzero(np.r_[True, gid[1:] != gid[:-1]])
        heads = df["query_id"].gather(starts)
        if heads.n_unique() == len(starts):
            lengths = np.diff(np.r_[starts, df.height])
            order = np.argsort(np.asarray(heads.to_list(), dtype=object), kind="stable")
            return df[_segment_perm(starts[order], lengths[order])]
    return (
        df.with_columns(key.alias("_s32"))
        .sort(["query_id", "_s32", "doc_id"], descending=[False, True, True])
        .drop("_s32")
    )


def _segment_perm(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(start, start + length)`` for each segment, vectorised."""
    total = int(lengths.sum())
    out_off = np.r_[0, np.cumsum(lengths)[:-1]]
    return np.arange(total, dtype=np.int64) - np.repeat(out_off - starts, lengths)


def _is_sorted_qid(df: pl.DataFrame) -> bool:
    return bool(df.select((pl.col("query_id") <= pl.col("query_id").shift(-1)).fill_null(True).all()).item())


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

    Attributes
    ----------
    qids: the evaluated query ids, byte-wise ascending.
    r_off: ``int64[n_q + 1]`` segment offsets into the run arrays (rows in rank order).
    r_grade: ``int64[n_rows]`` grade of each retrieved doc (0 where unjudged).
    r_judged: ``bool[n_rows]`` whether the doc is judged.
    r_score: ``float64[n_rows]`` the run's scores.
    q_off, q_grade: the judged grades of each query, descending.
    has_run: ``bool[n_q]`` whether the query occurs in the run.
    """

    def __init__(
        self,
        qids: list[str],
        r_off: np.ndarray,
        r_grade: np.ndarray,
        r_judged: np.ndarray,
        r_score: np.ndarray,
        q_off: np.ndarray,
        q_grade: np.ndarray,
        has_run: np.ndarray,
        accounting: QueryAccounting,
        doc_ids: pl.Series | None = None,
        ties: str = "trec",
        max_grade: int = 0,
    ) -> None:
        self.qids = qids
        self.r_off = r_off
        self.r_grade = r_grade
        self.r_judged = r_judged
        self.r_score = r_score
        self.q_off = q_off
        self.q_grade = q_grade
        self.has_run = has_run
        self.accounting = accounting
        self.doc_ids = doc_ids
        self.ties = ties
        self.max_grade = max_grade  #: the highest grade in the whole qrels
        self._cache: dict[object, np.ndarray] = {}

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def n_rows(self) -> int:
        return int(self.r_grade.shape[0])

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

    def relevant(self, rel: int) -> np.ndarray:
        """Run-row mask: judged with grade >= rel."""
        key = ("relevant", rel)
        if key not in self._cache:
            self._cache[key] = self.r_judged & (self.r_grade >= rel)
        return self._cache[key]

    def num_rel(self, rel: int) -> np.ndarray:
        """Per query: judged docs with grade >= rel (retrieved or not)."""
        key = ("num_rel", rel)
        if key not in self._cache:
            self._cache[key] = seg_sum((self.q_grade >= rel).astype(np.int64), self.q_off)
        return self._cache[key]

    def judged_nonrel(self, rel: int) -> np.ndarray:
        key = ("num_nonrel", rel)
        if key not in self._cache:
            self._cache[key] = seg_sum((self.q_grade < rel).astype(np.int64), self.q_off)
        return self._cache[key]

    def top(self, k: int | None) -> np.ndarray:
        """Run-row mask of the top-k rows of each query (all rows when k is None)."""
        if k is None:
            return np.ones(self.n_rows, dtype=bool)
        key = ("top", k)
        if key not in self._cache:
            self._cache[key] = self.r_rank <= k
        return self._cache[key]


def seg_sum(values: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Sum of ``values`` over each segment ``[off[i], off[i+1])``; empty segments give 0."""
    if values.dtype == bool:
        values = values.astype(np.int64)
    cs = np.empty(values.shape[0] + 1, dtype=np.float64 if values.dtype.kind == "f" else np.int64)
    cs[0] = 0
    np.cumsum(values, out=cs[1:])
    return cs[off[1:]] - cs[off[:-1]]


def seg_cumsum(values: np.ndarray, off: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Inclusive running sum of ``values`` restarting at every segment."""
    cs = np.cumsum(values)
    start = np.r_[0, cs][off[:-1]]
    return cs - start[seg]


def seg_first(mask: np.ndarray, seg: np.ndarray, n_seg: int) -> np.ndarray:
    """Index of the first row of each segment where ``mask`` holds, or -1."""
    idx = np.flatnonzero(mask)
    out = np.full(n_seg, -1, dtype=np.int64)
    if idx.size:
        s = seg[idx]
        first = np.r_[True, s[1:] != s[:-1]]
        out[s[first]] = idx[first]
    return out


def _align(counts: dict[str, int], qids: list[str]) -> np.ndarray:
    off = np.zeros(len(qids) + 1, dtype=np.int64)
    off[1:] = np.cumsum([counts.get(q, 0) for q in qids])
    return off


def prepare(
    qrels: Qrels,
    run: Run,
    *,
    ties: str = "trec",
    missing: str = "zero",
    keep_doc_ids: bool = False,
) -> EvalData:
    """Join ``run`` with ``qrels`` into per-query segments.

    Queries in the run without judgments are ignored (counted in ``accounting.unjudged``). Judged
    queries absent from the run follow ``missing``: ``ignore`` drops them (trec_eval's default),
    ``zero`` keeps them with an empty ranking (trec_eval ``-c``), ``error`` raises.
    """
    _check_policy("ties", ties, TIES)
    _check_policy("missing", missing, MISSING)
    qdf = qrels.frame
    rdf = run.frame
    judged_q = qdf["query_id"].unique()
    run_q = rdf["query_id"].unique()
    judged_set = set(judged_q.to_list())
    run_set = set(run_q.to_list())
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

    if unjudged_ids:
        rdf = rdf.filter(pl.col("query_id").is_in(judged_q.implode()))
    ranked = ranked_frame(rdf, ties)
    joined = ranked.join(qdf, on=["query_id", "doc_id"], how="left", maintain_order="left")
    rel = joined["relevance"]
    r_judged = rel.is_not_null().to_numpy()
    r_grade = rel.fill_null(0).to_numpy().astype(np.int64, copy=False)
    r_score = joined["score"].to_numpy()
    counts = dict(joined.group_by("query_id").len().iter_rows()) if joined.height else {}
    r_off = _align(counts, qids)

    qsel = qdf if missing == "zero" else qdf.filter(pl.col("query_id").is_in(pl.Series(both).implode()))
    qsorted = qsel.sort(["query_id", "relevance"], descending=[False, True])
    qcounts = dict(qsorted.group_by("query_id").len().iter_rows())
    q_off = _align(qcounts, qids)
    q_grade = qsorted["relevance"].to_numpy().astype(np.int64, copy=False)
    has_run = np.array([q in run_set for q in qids], dtype=bool)
    return EvalData(
        qids,
        r_off,
        r_grade,
        r_judged,
        r_score,
        q_off,
        q_grade,
        has_run,
        acc,
        joined["doc_id"] if keep_doc_ids else None,
        ties,
        int(qdf["relevance"].max() or 0),  # type: ignore[arg-type]
    )
