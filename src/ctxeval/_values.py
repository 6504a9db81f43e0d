"""evaluate's block function (:mod:`ctxeval._engines.blocks`) and what its notes read: per query every
measure's value (under ``ties="expected"`` those of the best and the worst orders beside them), each
list's depth and the judged shares; per block the counts of ties, utilities and the pool. A verb that
needs per-query values asks the session's engine for the blocks of this function (:func:`map_runs`)
and never knows which engine computed them."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._core.segments import top_rows
from ._engines.blocks import Block
from ._measures import Measure, make
from ._session import Session, list_depths

__all__ = ["Values", "judged_labels", "map_runs", "values_fn", "with_judged"]


def with_judged(measures: list[Measure]) -> list[Measure]:
    """The measures plus ``Judged@K`` (``Judged@Btok``) for every K (budget) of a RAG measure, reported beside them."""
    out = list(measures)
    for m in measures:
        if m.spec.group == "rag" and (m.cutoff is not None or m.budget is not None):
            j = make("Judged", None, m.cutoff, m.budget)
            if j not in out:
                out.append(j)
    return out


def judged_labels(session: Session) -> dict[str, Any]:
    """The judged labels in force in ``session``, by what they label (``labels``, ``utilities``;
    :func:`ctxeval._context.labels.judged_kinds`)."""
    from ._context.labels import judged_kinds

    # the default utility settings hold no LLM labels (and need not be imported to say so)
    llm = session.utility.llm_labels if session.settings.utility is not None else None
    return judged_kinds(None if session.qrels.plain else session.qrels.labels, llm)


@dataclass(frozen=True)
class Values:
    """evaluate's block function (:mod:`ctxeval._engines.blocks`): per query every measure's value
    (under ``ties="expected"`` those of the best and the worst orders beside them) and what the notes
    read (each list's depth, the judged shares), and per block the counts of ties, utilities and the
    pool. ``u_depth``: the deepest rank a measure of utilities reads (None: whole lists)."""

    measures: tuple[Measure, ...]
    utility: bool
    u_depth: int | None
    #: the judged labels in force (:func:`judged_labels`): each query's labelled shares are read for them
    judged: tuple[tuple[str, Any], ...]

    def __call__(self, session: Session, data: Any) -> Block:
        ms = self.measures
        block = Block(list(data.qids), values={m: m.compute(data) for m in ms})
        block.values["depth"] = list_depths(data)
        if data.tie_groups is not None:
            for m in ms:
                block.values[("best", m)], block.values[("worst", m)] = m.extremes(data)
            g = data.tie_groups
            held = np.bincount(data.r_seg[g.size > 1], minlength=data.n_queries) > 0
            block.totals["ties"] = {
                "tie_groups": g.groups(data.r_off),
                "tied_rows": g.tied,
                "queries_with_ties": int(held.sum()),
            }
        if self.utility:
            from ._context.utility import flag_counts  # here: they pull in side files

            u = data.extra("utility")
            block.totals["utility"] = u.block_counts()
            block.totals["flags"] = flag_counts(u, data.r_judged)
            read = top_rows(data.r_off, self.u_depth)[0] if self.u_depth is not None else None
            block.totals["unlabelled"] = flag_counts(u, data.r_judged, read)
        if data.has("pool") and not data.extra("pool").own:
            block.totals["pool"] = data.extra("pool").report()
        if self.judged:  # judged labels: per query the share of the ranks read that the judge labelled
            from ._context.labels import labelled_shares

            for key, v in labelled_shares(dict(self.judged), data, list(ms)).items():
                block.values[("labelled", key)] = v
        return block


def values_fn(session: Session, measures: list[Measure]) -> Values:
    """evaluate's block function for ``measures`` (with ``Judged@K`` beside RAG measures)."""
    ms = list(measures)
    if any(m.spec.group == "rag" for m in ms):
        ms = with_judged(ms)
    # the deepest rank a measure of utilities reads (None: whole lists); unlabelled hard negatives are counted there
    cuts = [m.cutoff for m in ms if "utility" in m.requires]
    deepest = None if not cuts or None in cuts else max(float(c) for c in cuts if c is not None)
    u_depth = math.ceil(deepest) if deepest is not None and math.isfinite(deepest) else None
    need_u = any("utility" in m.requires for m in ms)
    return Values(tuple(ms), need_u, u_depth, tuple(judged_labels(session).items()))


def map_runs(session: Session, run_objs: list[Any], fn: Values, tick: Callable[[], Any] | None = None) -> list[Any]:
    """Every run's blocks of ``fn`` on the session's engine (:meth:`Session.blocks`), merged;
    ``tick`` is called as each run is done."""
    mapped = []
    for run in run_objs:
        mapped.append(session.blocks(run, fn.measures, fn))
        if tick is not None:
            tick()
    return mapped
