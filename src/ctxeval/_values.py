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

from ._engines.blocks import Block
from ._measures import Measure, make
from ._session import Session, list_depths

__all__ = ["Values", "judged_depth_notes", "map_runs", "values_fn", "with_judged"]


def with_judged(measures: list[Measure]) -> list[Measure]:
    """The measures plus ``Judged@K`` (``Judged@Btok``) for every K (budget) of a RAG measure, reported beside them."""
    out = list(measures)
    for m in measures:
        if m.spec.group == "rag" and (m.cutoff is not None or m.budget is not None):
            j = make("Judged", None, m.cutoff, m.budget)
            if j not in out:
                out.append(j)
    return out


#: families that read no label (counts of the run, the judged share itself)
_LABEL_FREE = frozenset({"Judged", "unj", "NumQ", "NumRet"})


def _judged_depths(session: Session, measures: list[Measure]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """What the notes on judged labels read (judge-written qrels or LLM utilities whose sidecar gives
    the depth a judge labelled): the measures that read deeper than the qrels' depth, and those that
    read deeper than the utilities' (each with its cutoff; None: the whole list)."""
    kind = None if session.qrels.plain else session.qrels.labels
    qrels_ms: list[tuple[str, int | None]] = []
    if kind is not None and kind.judged and kind.provenance is not None and kind.provenance.depth is not None:
        for m in measures:
            k = None if m.cutoff is None else int(m.k)
            if m.family not in _LABEL_FREE and (k is None or k > kind.provenance.depth):
                qrels_ms.append((str(m), k))
    # the default utility settings hold no LLM labels (and need not be imported to say so)
    llm = session.utility.llm_labels if session.settings.utility is not None else None
    llm_ms: list[tuple[str, int | None]] = []
    if llm is not None and llm.judged and llm.provenance is not None and llm.provenance.depth is not None:
        for m in measures:
            k = None if m.cutoff is None else int(m.k)
            if "utility" in m.requires and (k is None or k > llm.provenance.depth):
                llm_ms.append((str(m), k))
    return tuple(qrels_ms), tuple(llm_ms)


def judged_depth_notes(session: Session, name: str, block: Block, measures: list[Measure]) -> list[str]:
    """Notes where a measure reads deeper than a judge labelled (judge-written qrels or LLM utilities
    whose sidecar gives the depth), each with the share of the ranks it reads that carries a label
    (for qrels the mean Judged@k, for utilities the share of the top k with an LLM utility)."""
    from ._context.labels import depth_notes

    depth = block.values.get("depth")
    deepest = max(int(np.nanmax(depth)) if depth is not None and np.any(~np.isnan(depth)) else 0, 1)
    qrels_ms, llm_ms = _judged_depths(session, measures)
    out: list[str] = []
    if qrels_ms:
        reads: dict[str, tuple[int | None, float]] = {}
        for m, k in qrels_ms:
            judged = block.values[("judged", k)] if k is not None else block.values[("judged", None)] / float(deepest)
            ok = judged[~np.isnan(judged)]
            reads[m] = (k, float(ok.mean()) if ok.size else 0.0)
        out += depth_notes(session.qrels.labels, name, reads)
    if llm_ms:
        reads = {}
        for m, k in llm_ms:
            has, top = block.totals.get(("llm", k), (0, 0))
            if ("llm", k) in block.totals:
                reads[m] = (k, has / top if top else 0.0)
        out += depth_notes(session.utility.llm_labels, name, reads)
    return out


@dataclass(frozen=True)
class Values:
    """evaluate's block function (:mod:`ctxeval._engines.blocks`): per query every measure's value
    (under ``ties="expected"`` those of the best and the worst orders beside them) and what the notes
    read (each list's depth, the judged shares), and per block the counts of ties, utilities and the
    pool. ``u_depth``: the deepest rank a measure of utilities reads (None: whole lists)."""

    measures: tuple[Measure, ...]
    utility: bool
    u_depth: int | None
    judged: tuple[tuple[Any, ...], tuple[Any, ...]]

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
            from ._core.segments import top_rows

            u = data.extra("utility")
            block.totals["utility"] = u.block_counts()
            block.totals["flags"] = flag_counts(u, data.r_judged)
            read = top_rows(data.r_off, self.u_depth)[0] if self.u_depth is not None else None
            block.totals["unlabelled"] = flag_counts(u, data.r_judged, read)
        if data.has("pool") and not data.extra("pool").own:
            block.totals["pool"] = data.extra("pool").report()
        qrels_ms, llm_ms = self.judged
        for k in {k for _, k in qrels_ms}:
            mask = data.j_rank <= k if k is not None else np.ones(data.j_idx.size, dtype=bool)
            counts = data.seg_count(mask)
            block.values[("judged", k)] = counts / float(k) if k is not None else counts
        u = data.extra("utility") if llm_ms and data.has("utility") else None
        if u is not None and u.llm_u is not None:
            has = ~np.isnan(u.llm_u)
            for k in {k for _, k in llm_ms}:
                top = data.r_rank <= k if k is not None else np.ones(data.n_rows, dtype=bool)
                block.totals[("llm", k)] = (int(has[top].sum()), int(top.sum()))
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
    return Values(tuple(ms), need_u, u_depth, _judged_depths(session, ms))


def map_runs(session: Session, run_objs: list[Any], fn: Values, tick: Callable[[], Any] | None = None) -> list[Any]:
    """Every run's blocks of ``fn`` on the session's engine (:meth:`Session.blocks`), merged;
    ``tick`` is called as each run is done."""
    mapped = []
    for run in run_objs:
        mapped.append(session.blocks(run, fn.measures, fn))
        if tick is not None:
            tick()
    return mapped
