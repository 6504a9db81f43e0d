"""The typed side data of an :class:`~.evaldata.EvalData` (built by ``ctxeval._context``).

Each value is frozen numpy data aligned with the EvalData it belongs to, knows how to follow a cut of
the rankings to a prefix (:meth:`cut`), and nothing else: how it is built (from files, configurations
or a judge) lives in ``ctxeval._context``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from .evaldata import Cut, EvalData
from .ids import Ids

__all__ = [
    "UTIL_MAX",
    "UTIL_MIN",
    "Fairness",
    "Fits",
    "Grades",
    "Groups",
    "JudgedScores",
    "JudgmentGroups",
    "Pool",
    "PrefGroup",
    "Preferences",
    "QueryPrefs",
    "Subtopics",
    "Utilities",
]

UTIL_MIN, UTIL_MAX = 1, 5


@dataclass(frozen=True, eq=False)
class Grades:
    """The qrels grades on the scale of the set-based RAG measures (after the grade map in force):
    ``j_util`` per judged retrieved row, ``q_util`` per judged doc (aligned with ``q_grade``);
    ``original``: grade on that scale -> the qrels' own grades mapped onto it."""

    j_util: np.ndarray
    q_util: np.ndarray
    grade_map: str | None = None  #: the grade map's description (None: the qrels' own grades)
    #: binary labels (reference ids): no grade says a chunk is useless or harmful, unjudged is unlabelled
    binary: bool = False

    def cut(self, cut: Cut) -> Grades:
        return replace(self, j_util=self.j_util[cut.j_keep])


@dataclass(frozen=True, eq=False)
class Pool:
    """The retrieval pool of every evaluated query: its judged docs (``p_seg``, ``p_util``,
    ``p_rank``), which judged run rows it holds (``j_in_pool``) and every pool row within the depth
    (``m_seg``, ``m_rank``, ``m_doc``), for diagnosis."""

    source: str  #: the pool run's name, or ``(the run itself)``
    own: bool  #: the run is its own pool
    depth: int | None  #: pool depth (None: the full pool run)
    p_seg: np.ndarray
    p_util: np.ndarray
    p_rank: np.ndarray
    j_in_pool: np.ndarray
    m_seg: np.ndarray
    m_rank: np.ndarray
    m_doc: Ids | None
    outside_rows: int = 0  #: run rows outside the pool (explicit pools only)
    outside_queries: int = 0
    allow_outside: bool = False

    def cut(self, cut: Cut) -> Pool:
        return replace(self, j_in_pool=self.j_in_pool[cut.j_keep])

    def report(self) -> dict[str, Any]:
        return {"outside_pool_docs": self.outside_rows, "outside_pool_queries": self.outside_queries}


@dataclass(frozen=True, eq=False)
class Groups:
    """Group codes of the judged run rows (``j_group``) and of every judged doc of every query
    (``q_seg``, ``q_util``, ``q_group``, in no particular order); a doc without a group has a code
    of its own (negative)."""

    j_group: np.ndarray
    q_seg: np.ndarray
    q_util: np.ndarray
    q_group: np.ndarray
    source: str

    def cut(self, cut: Cut) -> Groups:
        return replace(self, j_group=self.j_group[cut.j_keep])


#: why a row has its utility: label, known distractor, hard negative by score / by rank, LLM utility
WHY_LABEL, WHY_KNOWN, WHY_SCORE, WHY_RANK, WHY_LLM = 0, 1, 2, 3, 4
WHY_NAMES: tuple[str, ...] = (
    "label",
    "known distractor",
    "hard negative (score)",
    "hard negative (rank)",
    "LLM utility",
)


@dataclass(frozen=True, eq=False)
class Utilities:
    """Per ranked row: utility ``u``, relative score ``rel``, the rule that set it (``why``), the
    label utility, the LLM utility (NaN where none; None without them), ``u_raw`` (LLM utilities
    read as given), ``known`` (on the known-distractor list); per query: the positive utilities of
    its judged docs, descending (``pos_off``, ``pos_u``: the ideal of ndDCG; None when unknown).
    ``llm_pairs`` / ``known_pairs``: pairs in the LLM utilities file / the known list."""

    u: np.ndarray
    rel: np.ndarray
    why: np.ndarray
    label: np.ndarray
    llm_u: np.ndarray | None
    pos_off: np.ndarray | None
    pos_u: np.ndarray | None
    known: np.ndarray | None = None
    u_raw: np.ndarray | None = None
    source: str = "labels"
    llm_pairs: int | None = None
    known_pairs: int | None = None
    #: per ranked row, on binary labels: unlabelled and decided by nothing (no rule, known list or LLM
    #: utility): whether it distracts is unknown (None on graded labels, where unlabelled reads as 0)
    unknown: np.ndarray | None = None

    _PER_QUERY = ("pos_off", "pos_u")

    @property
    def u_direct(self) -> np.ndarray:
        """The utilities with LLM utilities read as given (no threshold): ``u_raw``, or ``u``."""
        return self.u if self.u_raw is None else self.u_raw

    def cut(self, cut: Cut) -> Utilities:
        changed = {
            f.name: getattr(self, f.name)[cut.rows]
            for f in fields(self)
            if f.name not in self._PER_QUERY and isinstance(getattr(self, f.name), np.ndarray)
        }
        return replace(self, **changed)

    def counts(self) -> dict[str, int]:
        """Rows set by each rule, negative rows, rows without an LLM utility and pairs of the LLM
        utilities file matching no ranked row (LLM source only), pairs of the known list matching no
        ranked row (with a known list)."""
        c = np.bincount(self.why.astype(np.int64), minlength=len(WHY_NAMES))
        out = {name: int(n) for name, n in zip(WHY_NAMES, c.tolist())}
        out["negative"] = int((self.u < 0).sum())
        if self.unknown is not None:
            out["unlabelled (unknown)"] = int(self.unknown.sum())
        if self.llm_u is not None:
            out["without LLM utility"] = int(np.isnan(self.llm_u).sum())
            if self.u_raw is not None:
                out["LLM utility below threshold"] = int(((self.u_raw < 0) & (self.u == 0)).sum())
            if self.llm_pairs is not None:
                # run rows are unique (query, doc) pairs, so each matched row uses one pair of the file
                out["LLM pairs not retrieved"] = int(self.llm_pairs - int((~np.isnan(self.llm_u)).sum()))
        if self.known is not None and self.known_pairs is not None:
            out["known pairs not retrieved"] = int(self.known_pairs - int(self.known.sum()))
        return out

    def block_counts(self) -> dict[str, Any]:
        """:meth:`counts` as one block of a run's queries holds them: each file's pairs that match no
        ranked row are kept as minus those that match a row of the block, the file's size beside, so
        that the blocks add up (:func:`ctxeval._engines.blocks.sized_counts` gives the run's :meth:`counts`)."""
        out = self.counts()
        sizes = []
        for key, pairs in (
            ("LLM pairs not retrieved", self.llm_pairs),
            ("known pairs not retrieved", self.known_pairs),
        ):
            if key in out and pairs is not None:
                out[key] -= int(pairs)
                sizes.append((key, int(pairs)))
        return {"counts": out, "sizes": frozenset(sizes)}


@dataclass(frozen=True, eq=False)
class Fits:
    """Fitted weights of the positional UDCG by content hash: ``{hash: {"alpha", "beta", "bias", "k"}}``."""

    by_hash: dict[str, dict[str, Any]] = field(default_factory=dict)

    def cut(self, cut: Cut) -> Fits:
        return self


@dataclass(frozen=True, eq=False)
class JudgmentGroups:
    """trec_eval's judgment groups (``-R qrels_jg``): one evaluation per group of judgments (the run
    against that group's qrels), and for each the position of every evaluated query in it (-1: the
    query has no judgments in that group). Groups in trec_eval's order (their labels byte-wise)."""

    labels: tuple[str, ...]
    groups: tuple[EvalData, ...]
    where: tuple[np.ndarray, ...]

    def mean(self, n_queries: int, per_group: Any) -> np.ndarray:
        """Per query, ``per_group(data)`` summed over the query's groups in order and divided by their
        number when there are several (trec_eval's ``*_avgjg``)."""
        total = np.zeros(n_queries)
        count = np.zeros(n_queries, dtype=np.int64)
        for data, where in zip(self.groups, self.where):
            values = np.asarray(per_group(data), dtype=np.float64)
            has = where >= 0
            total[has] += values[where[has]]
            count[has] += 1
        return np.where(count > 1, total / np.maximum(count, 1), total)


@dataclass(frozen=True, eq=False)
class PrefGroup:
    """One judgment group of a query's preferences (trec_eval's ``JG``): ``prefs[i, j]`` counts the
    group's preferences of doc ``i`` over doc ``j`` (docs by index: the retrieved ones first, in rank
    order), with the fulfilled and possible counts by where the two docs rank, and either the
    equivalence classes of its one sub-group (doc indices per level, levels descending) or, with
    several sub-groups, each doc's level (-1: not in the group)."""

    prefs: np.ndarray
    ful_ret: int
    poss_ret: int
    ful_imp: int
    poss_imp: int
    notoccur: int
    num_rel: int
    num_rel_ret: int
    num_nonrel: int
    num_nonrel_ret: int
    classes: tuple[np.ndarray, ...] | None
    levels: np.ndarray | None


@dataclass(frozen=True, eq=False)
class QueryPrefs:
    """A query's preferences against the run: ``n_judged`` docs, the first ``n_judged_ret`` of them
    retrieved, its judgment groups, and ``pairs[i, j]``: how many groups prefer ``i`` to ``j``."""

    n_judged: int
    n_judged_ret: int
    groups: tuple[PrefGroup, ...]
    pairs: np.ndarray


@dataclass(frozen=True, eq=False)
class Preferences:
    """trec_eval's preference judgments (``-R prefs``) counted against the run, per evaluated query
    (aligned with the EvalData's queries). Built by ``ctxeval._context.prefs``."""

    queries: tuple[QueryPrefs, ...]

    def cut(self, cut: Cut) -> Preferences:
        return self


@dataclass(frozen=True, eq=False)
class Subtopics:
    """Subtopic judgments aligned with an :class:`EvalData` (the diversity measures read them).

    A *group* is one subtopic of one evaluated query; groups are numbered by query, then by subtopic
    order (``g_seg``: the query of each). Run side: ``p_row`` (judged run row, ascending; a row's
    pairs by subtopic order), ``p_group``, ``p_grade``: one pair per judgment of a retrieved doc. Qrels
    side: the judged docs of every evaluated query, by query then doc id descending (``d_seg``), with
    their judgments ``[d_ptr[i], d_ptr[i + 1])`` (``q_group``, ``q_grade``)."""

    p_row: np.ndarray
    p_group: np.ndarray
    p_grade: np.ndarray
    g_seg: np.ndarray
    d_seg: np.ndarray
    d_ptr: np.ndarray
    q_group: np.ndarray
    q_grade: np.ndarray
    source: str

    def cut(self, cut: Cut) -> Subtopics:
        keep = cut.j_keep[self.p_row]
        new_row = np.cumsum(cut.j_keep) - 1
        return replace(self, p_row=new_row[self.p_row[keep]], p_group=self.p_group[keep], p_grade=self.p_grade[keep])


@dataclass(frozen=True, eq=False)
class JudgedScores:
    """The run's score of every judged run row (``j_score``), as read (Compat's ideal ordering reads
    them)."""

    j_score: np.ndarray

    def cut(self, cut: Cut) -> JudgedScores:
        return replace(self, j_score=self.j_score[cut.j_keep])


@dataclass(frozen=True, eq=False)
class Fairness:
    """Fairness group labels aligned with an :class:`EvalData` (AWRF reads them); groups are coded
    ``0 .. len(labels) - 1``.

    Run side, one pair per labelled ranked row and group: ``p_row`` (ranked row, ascending), ``p_seg``,
    ``p_rank``, ``p_group``, ``p_w`` (the doc's weight in the group; a doc's weights sum to 1). Items:
    the same pairs over the whole rankings, never cut (``i_seg``, ``i_group``, ``i_w``: FairRankTune's
    reading counts a group's docs among every doc the run ranked). Judged side, one pair per labelled
    judged doc of an evaluated query and group: ``d_seg``, ``d_grade``, ``d_group``, ``d_w``, by query,
    group and weight (so that sums do not depend on the order of the qrels' lines). Given targets:
    ``t_seg``, ``t_group``, ``t_w`` (weights summing to 1 per query), None without a target file.
    ``unlabelled_rows`` / ``ranked_rows``, ``unlabelled_relevant`` / ``relevant``: what the reports say."""

    p_row: np.ndarray
    p_seg: np.ndarray
    p_rank: np.ndarray
    p_group: np.ndarray
    p_w: np.ndarray
    i_seg: np.ndarray
    i_group: np.ndarray
    i_w: np.ndarray
    d_seg: np.ndarray
    d_grade: np.ndarray
    d_group: np.ndarray
    d_w: np.ndarray
    t_seg: np.ndarray | None
    t_group: np.ndarray | None
    t_w: np.ndarray | None
    labels: tuple[str, ...]
    source: str
    ranked_rows: int = 0
    unlabelled_rows: int = 0
    relevant: int = 0
    unlabelled_relevant: int = 0

    @property
    def n_groups(self) -> int:
        return len(self.labels)

    def cut(self, cut: Cut) -> Fairness:
        """The pairs of the rows the cut keeps, at their new rows and ranks (a prefix, a selection ranked
        anew, or another order of the rows: :meth:`~ctxeval._core.evaldata.EvalData.arranged`)."""
        size = max(int(self.p_row.max(initial=-1)), int(cut.rows.max(initial=-1))) + 1
        new = np.full(size, -1, dtype=np.int64)
        new[cut.rows] = np.arange(cut.rows.size, dtype=np.int64)
        at = new[self.p_row]
        keep = np.flatnonzero(at >= 0)
        keep = keep[np.argsort(at[keep], kind="stable")]  # by new row, a row's pairs in their order
        row, seg = at[keep], self.p_seg[keep]
        return replace(
            self,
            p_row=row,
            p_seg=seg,
            p_rank=row - cut.r_off[seg] + 1,
            p_group=self.p_group[keep],
            p_w=self.p_w[keep],
        )

    def note(self, run: str) -> str | None:
        """What the reports say when labels are missing: ranked docs without a group (AWRF leaves them
        out, their ranks kept) and relevant docs without one (the target of the relevant docs reads the
        others)."""
        parts = []
        if self.unlabelled_rows:
            parts.append(
                f"{self.unlabelled_rows} of its {self.ranked_rows} ranked docs have no group label (AWRF leaves them "
                "out and keeps the ranks of the others, as the TREC Fair Ranking track's evaluation does)"
            )
        if self.unlabelled_relevant:
            parts.append(
                f"{self.unlabelled_relevant} of the {self.relevant} relevant docs (grade > 0) of its queries have none "
                "(the target of the relevant docs reads the others)"
            )
        if not parts:
            return None
        return f"{run}: fairness groups {self.source}: " + "; ".join(parts)
