"""EvalData: a run joined with its qrels, query by query, and the side data its measures need.

Every measure kernel is a pure function of an :class:`EvalData` (plus its parameters) returning one
float per query. Queries are ordered byte-wise by id; within a query, rows are in rank order.

The run is held sparsely: for each query a segment ``[r_off[i], r_off[i+1])`` of ranked rows, of
which only the *judged* rows are materialised (``j_idx``: their row index in rank order, ``j_grade``:
their grade); unjudged rows carry nothing for qrels-based measures, so kernels cost O(judged
retrieved). ``rows`` (the doc id and score of every ranked row) is kept when side data needs it.

Side data (utility grades after a grade map, the retrieval pool, doc groups, per-passage utilities,
fitted weights) comes through one seam: ``extras``, typed values (:mod:`.extras`) keyed by name that
the session builds for the measures that require them; a kernel asks ``data.extra("pool")``. An
EvalData never changes after it is built: :meth:`with_extras` and :meth:`prefix` return new ones, and
derived arrays are cached through :meth:`memo` (or as cached properties).

Under ``ties="expected"`` the rows are in trec_eval's order and ``tie_groups`` says which of them tie
(:mod:`.ties`); :meth:`arranged` gives the same data in another order of those rows, its side data built
again for that order by ``side`` (set by the session) where the side data depends on the order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Protocol, TypeVar

import numpy as np

from .._errors import ConfigError
from .ids import Ids
from .segments import offsets, seg_sum, segment_rows
from .ties import TieGroups

__all__ = ["Cut", "EvalData", "Extra", "QueryAccounting", "RankedRows"]

T = TypeVar("T")


@dataclass(frozen=True)
class QueryAccounting:
    """How the queries of a run and of the qrels were treated."""

    evaluated: int  #: queries present in both the run and the qrels
    missing: int  #: judged queries absent from the run (handled by the ``missing`` policy)
    unjudged: int  #: run queries without judgments (always ignored, as trec_eval does)
    missing_policy: str
    missing_ids: tuple[str, ...] = field(default=(), repr=False)
    unjudged_ids: tuple[str, ...] = field(default=(), repr=False)
    #: scores beyond the float32 range, which rank as ±inf under ``ties="trec"`` (as in trec_eval 9)
    beyond_float32: int = 0

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "evaluated": self.evaluated,
            "missing_from_run": self.missing,
            "missing_policy": self.missing_policy,
            "scored_as_zero": self.missing if self.missing_policy == "zero" else 0,
            "ignored_missing": self.missing if self.missing_policy == "ignore" else 0,
            "unjudged_in_run": self.unjudged,
        }
        if self.beyond_float32:
            out["scores_beyond_float32"] = self.beyond_float32
        return out


@dataclass(frozen=True, eq=False)
class RankedRows:
    """The doc id and score of every ranked row of the evaluated queries, in rank order."""

    doc: Ids
    score: np.ndarray

    def take(self, rows: np.ndarray) -> RankedRows:
        return RankedRows(self.doc.take(rows), self.score[rows])


@dataclass(frozen=True)
class Cut:
    """How :meth:`EvalData.prefix`, :meth:`EvalData.judged_only` (or :meth:`EvalData.arranged`) map the
    old data onto the new: ``j_keep`` (mask over the judged rows kept, or the old index of every new
    judged row), ``rows`` (old index of every kept ranked row) and the new ``r_off``. Side data indexes
    its per-row arrays with them, so either form works."""

    j_keep: np.ndarray
    rows: np.ndarray
    r_off: np.ndarray


class Extra(Protocol):
    """Side data a measure requires (see :mod:`.extras`)."""

    def cut(self, cut: Cut) -> Extra:
        """The same side data for the rows the cut keeps (a prefix of every ranking, or its judged rows)."""
        ...


@dataclass(frozen=True, eq=False)
class EvalData:
    """A run and its qrels as per-query segments (see the module docstring).

    ``qids``: the evaluated query ids, byte-wise ascending; ``r_off``: ``int64[n_q + 1]`` offsets of
    the ranked rows; ``j_idx``, ``j_grade``: judged retrieved rows (row index, ascending) and their
    grades; ``q_off``, ``q_grade``: every query's judged grades, descending; ``has_run``: whether the
    query occurs in the run; ``max_grade``: the highest grade of the whole qrels.
    """

    qids: list[str]
    r_off: np.ndarray
    j_idx: np.ndarray
    j_grade: np.ndarray
    q_off: np.ndarray
    q_grade: np.ndarray
    has_run: np.ndarray
    accounting: QueryAccounting
    ties: str = "trec"
    max_grade: int = 0
    rows: RankedRows | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)
    #: ``ties="expected"``: the groups of tied rows (their order is the doc id rule's, one of many)
    tie_groups: TieGroups | None = None
    #: the side data of the measures built again for the data in another order (set by the session)
    side: Callable[[EvalData], EvalData] | None = field(default=None, repr=False)

    # -- side data ----------------------------------------------------------------------------------
    def extra(self, name: str) -> Any:
        """The side data ``name`` (``grades``, ``pool``, ``groups``, ``utility``, ...); a
        :class:`ConfigError` saying what is missing when the session did not build it."""
        found = self.extras.get(name)
        if found is None:
            raise ConfigError(
                f"this evaluation holds no {name!r} side data; evaluate through ctxeval.evaluate (or a Session), "
                "which builds the side data every requested measure requires"
            )
        return found

    def has(self, name: str) -> bool:
        return name in self.extras

    def with_extras(self, **extras: Any) -> EvalData:
        """A copy with more side data (cached derived arrays carried over)."""
        out = replace(self, extras={**self.extras, **extras}, _memo=self._memo)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k not in out.__dict__})
        return out

    def with_side(self, side: Callable[[EvalData], EvalData]) -> EvalData:
        """A copy whose :meth:`arranged` orders build their side data with ``side``."""
        out = replace(self, side=side, _memo=self._memo)
        out.__dict__.update({k: v for k, v in self.__dict__.items() if k not in out.__dict__})
        return out

    def memo(self, key: Any, compute: Callable[[], T]) -> T:
        """``compute()`` once per key (derived arrays kernels share)."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    # -- sizes ----------------------------------------------------------------------------------------
    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def n_rows(self) -> int:
        return int(self.r_off[-1])

    @cached_property
    def n_ret(self) -> np.ndarray:
        return np.diff(self.r_off)

    # -- judged rows ----------------------------------------------------------------------------------
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
        return self.memo(("j_rel", rel), lambda: self.j_grade >= rel)

    def seg_count(self, mask: np.ndarray) -> np.ndarray:
        """Per query: how many judged rows satisfy ``mask``."""
        return np.bincount(self.j_seg[mask], minlength=self.n_queries)

    def seg_total(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per query: the sum of ``values`` (one per judged row) over rows satisfying ``mask``."""
        seg = self.j_seg if mask is None else self.j_seg[mask]
        w = values if mask is None else values[mask]
        return np.bincount(seg, weights=w, minlength=self.n_queries).astype(np.float64)

    # -- every ranked row -----------------------------------------------------------------------------
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

    @property
    def r_score(self) -> np.ndarray:
        if self.rows is None:
            raise ConfigError("this evaluation was built without the run's rows (keep_rows=False)")
        return self.rows.score

    @cached_property
    def r_seg(self) -> np.ndarray:
        """Query index of every ranked row."""
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), np.diff(self.r_off))

    @cached_property
    def r_rank(self) -> np.ndarray:
        """1-based rank of every ranked row within its query."""
        return np.arange(self.n_rows, dtype=np.int64) - self.r_off[:-1][self.r_seg] + 1

    # -- judged docs of every query -------------------------------------------------------------------
    @cached_property
    def q_seg(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_queries, dtype=np.int64), np.diff(self.q_off))

    @cached_property
    def q_pos(self) -> np.ndarray:
        """1-based position of each judged grade in its query's descending (ideal) order."""
        pos = np.arange(1, self.q_grade.shape[0] + 1, dtype=np.int64)
        pos -= np.repeat(self.q_off[:-1], np.diff(self.q_off))
        return pos

    def num_rel(self, rel: int) -> np.ndarray:
        """Per query: judged docs with grade >= rel (retrieved or not)."""

        def compute() -> np.ndarray:
            counts = self._memo.get("grade_counts")
            if counts is not None:  # from the join: judged docs per (query, grade), grades descending
                table, gmax = counts
                return table[:, : min(max(gmax - rel + 1, 0), table.shape[1])].sum(axis=1, dtype=np.int64)
            return seg_sum((self.q_grade >= rel).astype(np.int64), self.q_off)

        return self.memo(("num_rel", rel), compute)

    # -- another order of the ranking, some queries --------------------------------------------------------------------
    def _qrels_memo(self, judged: np.ndarray | None = None) -> dict[Any, Any]:
        """The cached arrays that depend on the qrels alone (kept by a cut or an arrangement), and the
        qrels row of every judged row (``j_qrow``, from the join) taken at ``judged`` (the old judged
        rows the new data keeps, in its order)."""
        out = {
            k: v for k, v in self._memo.items() if k == "grade_counts" or (isinstance(k, tuple) and k[0] == "num_rel")
        }
        if judged is not None and "j_qrow" in self._memo:
            out["j_qrow"] = self._memo["j_qrow"][judged]
        return out

    def arranged(self, perm: np.ndarray) -> EvalData:
        """The same data with the rows of every query in another order: position ``p`` takes ranked row
        ``perm[p]`` (a permutation within each query). It holds no tie groups (it is one order); its
        side data is built again for the new order when the session gave ``side``, else follows the
        rows (:class:`Cut` with index arrays)."""
        inv = np.empty_like(perm)
        inv[perm] = np.arange(perm.size, dtype=perm.dtype)
        new_pos = inv[self.j_idx]
        order = np.argsort(new_pos, kind="stable")
        out = replace(
            self,
            j_idx=new_pos[order],
            j_grade=self.j_grade[order],
            rows=None if self.rows is None else self.rows.take(perm),
            extras={},
            tie_groups=None,
            _memo=self._qrels_memo(order),
        )
        out.__dict__.update({"j_seg": self.j_seg[order], "q_seg": self.q_seg, "q_pos": self.q_pos})
        if not self.extras:
            return out
        if self.side is not None:
            return self.side(out)
        cut = Cut(order, perm, self.r_off)
        return replace(out, extras={name: value.cut(cut) for name, value in self.extras.items()}, _memo=out._memo)

    def queries(self, idx: np.ndarray) -> EvalData:
        """The queries ``idx`` (ascending positions) alone, with their tie groups and without side data
        (for the measures that read none)."""
        lengths = self.n_ret[idx]
        r_off = offsets(lengths)
        rows = segment_rows(self.r_off[:-1][idx], lengths)
        new_q = np.full(self.n_queries, -1, dtype=np.int64)
        new_q[idx] = np.arange(idx.size, dtype=np.int64)
        keep = new_q[self.j_seg] >= 0
        seg = new_q[self.j_seg[keep]]
        q_len = np.diff(self.q_off)[idx]
        g = self.tie_groups
        out = EvalData(
            [self.qids[i] for i in idx.tolist()],
            r_off,
            self.j_idx[keep] - self.r_off[:-1][self.j_seg[keep]] + r_off[:-1][seg],
            self.j_grade[keep],
            offsets(q_len),
            self.q_grade[segment_rows(self.q_off[:-1][idx], q_len)],
            self.has_run[idx],
            self.accounting,
            self.ties,
            self.max_grade,
            None if self.rows is None else self.rows.take(rows),
            tie_groups=None if g is None else TieGroups(g.start[rows], g.size[rows]),
        )
        out.__dict__["j_seg"] = seg
        if "j_qrow" in self._memo:
            out._memo["j_qrow"] = self._memo["j_qrow"][keep]
        return out

    # -- a prefix of every ranking, or any selection of its rows -------------------------------------
    def prefix(self, length: int | np.ndarray) -> EvalData:
        """Every query's ranking cut to its first ``length`` rows (one length for all, or one per
        query). The qrels side, the accounting and the side data that does not depend on the run
        (the pool of a run that is its own pool stays the *untruncated* run) are kept; per-row side
        data is cut the same way. Refused for tied rows under ``ties="expected"`` (which rows a cut
        keeps would depend on their order)."""
        if self.tie_groups is not None and self.tie_groups.tied:
            raise ConfigError(
                "cutting rankings to a prefix is not defined for tied scores under ties='expected' (which of the "
                "tied rows it keeps depends on their order); use ties='trec'"
            )
        return self.select(self.r_rank <= np.repeat(np.broadcast_to(length, (self.n_queries,)), self.n_ret))

    def judged_only(self) -> EvalData:
        """Every query's ranking without the docs the qrels do not judge (nor those judged below 0),
        the others in the same order, ranked anew: trec_eval's ``-J``, ir_measures' ``judged_only``.
        The qrels side is kept; per-row side data is cut the same way."""
        return self.select(self.r_judged & (self.r_grade >= 0))

    def select(self, keep: np.ndarray) -> EvalData:
        """Every query's ranking reduced to the rows ``keep`` (a mask over the ranked rows), in rank
        order and ranked anew 1, 2, ... (the context a budget packs: a prefix, or a prefix with rows
        left out). Kept as :meth:`prefix` says."""
        keep = np.asarray(keep, dtype=bool)
        rows = np.flatnonzero(keep)
        n = np.bincount(self.r_seg[rows], minlength=self.n_queries).astype(np.int64)
        off = offsets(n)
        new_row = np.cumsum(keep) - 1  # the new index of every kept row
        j_keep = keep[self.j_idx]
        seg = self.j_seg[j_keep]
        j_idx = new_row[self.j_idx[j_keep]]
        cut = Cut(j_keep, rows, off)
        out = replace(
            self,
            r_off=cut.r_off,
            j_idx=j_idx,
            j_grade=self.j_grade[j_keep],
            rows=None if self.rows is None else self.rows.take(rows),
            extras={name: value.cut(cut) for name, value in self.extras.items()},
            _memo=self._qrels_memo(cut.j_keep),
            tie_groups=None,
        )
        out.__dict__.update(
            {"j_seg": seg, "j_rank": j_idx - off[:-1][seg] + 1, "q_seg": self.q_seg, "q_pos": self.q_pos}
        )
        return out
