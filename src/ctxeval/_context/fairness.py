"""``fairness``: AWRF's fairness group labels (``rag.fair_groups``, read by :mod:`ctxeval._io.fairness`)
aligned with the joined run and with the judged docs of every evaluated query, and the given targets
(``rag.fair_target``) of the evaluated queries."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._core.extras import Fairness
from .._core.join import judged_docs, match_pairs
from .._core.segments import segment_rows
from .._errors import ConfigError
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._core.ids import Ids
    from .._io.fairness import FairGroups, FairTargets
    from .._measures.base import Measure

__all__ = ["NEEDS_FAIR_GROUPS", "FairnessProvider"]

#: what a fairness measure says when no group labels were given
NEEDS_FAIR_GROUPS = (
    "AWRF compares the exposure a ranking gives each group of docs with a target, so it needs the docs' group "
    "labels: rag=RagConfig(fair_groups=...) or --fair-groups FILE ('docid group [weight]' lines, or JSON lines)"
)


def _pairs(groups: FairGroups, ids: Ids) -> tuple[np.ndarray, np.ndarray, int]:
    """``(row, pair, n)``: for every row of ``ids`` whose doc has labels, each of its (group, weight)
    pairs (``pair`` indexes the labels' arrays), rows ascending; ``n`` the rows with labels."""
    n = len(ids)
    i, j = match_pairs(np.zeros(n, dtype=np.int64), ids, np.zeros(groups.n_docs, dtype=np.int64), groups.doc)
    if i.size > 1 and bool(np.any(i[1:] < i[:-1])):
        order = np.argsort(i, kind="stable")
        i, j = i[order], j[order]
    lens = np.diff(groups.ptr)[j]
    if groups.group.size == groups.n_docs:  # one group per doc: the doc's pair is the doc
        return i, j, int(i.size)
    return np.repeat(i, lens), segment_rows(groups.ptr[:-1][j], lens), int(i.size)


def _targets(targets: FairTargets, qids: list[str], code: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The target pairs of every evaluated query: its own lines, else those of ``*``; an error naming
    the queries that have neither."""
    from .._io.fairness import ALL_QUERIES

    where = {q: i for i, q in enumerate(targets.qids)}
    fallback = where.get(ALL_QUERIES)
    lacking = [q for q in qids if q not in where and fallback is None]
    if lacking:
        shown = ", ".join(repr(q) for q in lacking[:5]) + (" ..." if len(lacking) > 5 else "")
        raise ConfigError(
            f"{targets.source}: no target for {len(lacking)} evaluated quer{'y' if len(lacking) == 1 else 'ies'} "
            f"({shown}); give each one, or a '{ALL_QUERIES}' line for every query without its own"
        )
    at = np.array([where.get(q, fallback) for q in qids], dtype=np.int64)
    lens = np.diff(targets.ptr)[at] if at.size else np.zeros(0, dtype=np.int64)
    rows = segment_rows(targets.ptr[:-1][at], lens) if at.size else np.zeros(0, dtype=np.int64)
    return np.repeat(np.arange(at.size, dtype=np.int64), lens), code[targets.group[rows]], targets.weight[rows]


def _shared_labels(groups: FairGroups, targets: FairTargets | None) -> tuple[tuple[str, ...], np.ndarray]:
    """The groups of the labels and of the targets, one code space: the labels' groups first, then
    the targets' others; and each target group's code."""
    if targets is None:
        return groups.labels, np.zeros(0, dtype=np.int64)
    code = {lab: i for i, lab in enumerate(groups.labels)}
    extra = [lab for lab in targets.labels if lab not in code]
    for lab in extra:
        code[lab] = len(code)
    return groups.labels + tuple(extra), np.array([code[lab] for lab in targets.labels], dtype=np.int64)


class FairnessProvider(SideData):
    name = "fairness"

    def build(self, data: EvalData, inputs: Inputs) -> Fairness:
        st = inputs.settings
        groups = st.fair_groups
        if groups is None:
            raise ConfigError(NEEDS_FAIR_GROUPS)
        if data.rows is None:
            raise ConfigError("fairness group labels need the run's ranked rows (keep_rows)")
        wants_given = any(_target_of(m) == "given" for m in inputs.measures)
        if wants_given and st.fair_targets is None:
            raise ConfigError(
                "AWRF(target=given) compares with the targets of a file: rag=RagConfig(fair_target=...) or "
                "--fair-target FILE ('qid group weight' lines; qid '*' for every query)"
            )
        labels, t_code = _shared_labels(groups, st.fair_targets)
        # the run: every labelled ranked row's groups, in rank order
        row, pair, n_labelled = _pairs(groups, data.rows.doc)
        p_seg, p_rank = data.r_seg[row], data.r_rank[row]
        p_group, p_w = groups.group[pair], groups.weight[pair]
        # the judged docs of the evaluated queries
        qrels = inputs.qrels.columns
        qids = np.array(data.qids, dtype=str) if data.qids else np.zeros(0, dtype="U1")
        q_seg, rows = judged_docs(qrels, qids)
        grade = qrels.values[rows].astype(np.int64)
        drow, dpair, _ = _pairs(groups, qrels.doc.take(rows))
        d_seg, d_group, d_w = q_seg[drow], groups.group[dpair], groups.weight[dpair]
        order = np.lexsort((d_w, d_group, d_seg))  # sums by query and group, whatever the qrels' order
        labelled = np.zeros(rows.size, dtype=bool)
        labelled[drow] = True
        relevant = grade > 0
        t_seg = t_group = t_w = None
        if st.fair_targets is not None:
            t_seg, t_group, t_w = _targets(st.fair_targets, data.qids, t_code)
        return Fairness(
            p_row=row,
            p_seg=p_seg,
            p_rank=p_rank,
            p_group=p_group,
            p_w=p_w,
            i_seg=p_seg,
            i_group=p_group,
            i_w=p_w,
            d_seg=d_seg[order],
            d_grade=grade[drow][order],
            d_group=d_group[order],
            d_w=d_w[order],
            t_seg=t_seg,
            t_group=t_group,
            t_w=t_w,
            labels=labels,
            source=groups.source,
            ranked_rows=data.n_rows,
            unlabelled_rows=data.n_rows - n_labelled,
            relevant=int(relevant.sum()),
            unlabelled_relevant=int((relevant & ~labelled).sum()),
        )


def _target_of(m: Measure) -> str | None:
    """The measure's ``target`` parameter (None: it has none)."""
    return str(m["target"]) if any(p.name == "target" for p in m.spec.params) else None


register(FairnessProvider())
