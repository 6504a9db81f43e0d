"""``pool`` and ``groups``: the retrieval pool a run was selected from, and doc groups.

* **Pool.** A system is a pair: the retrieval pool (a run cut at ``pool_depth``) and the final
  ordering (the run being evaluated). Without a pool run, the run itself cut at ``pool_depth``
  (default: its full length) is the pool. A final run with docs outside an explicit pool is an
  error (:class:`~ctxeval.PoolError`) unless ``allow_outside_pool``; then they are counted in the
  report and, for PROC, the top-K docs outside the pool are added to the pool (the selector evidently
  had them), so PROC ≥ RA-nWG always holds. When the run is its own pool and K exceeds the pool
  depth, the same rule makes the top K part of the pool.
* **Groups.** A global doc id → group (source, facet) mapping. Docs without a group are each their
  own group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.extras import Grades, Groups, Pool
from .._core.join import join, judged_docs, match_pairs, positions
from .._errors import ConfigError, PoolError
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._core.ids import Ids

__all__ = ["GroupsProvider", "PoolProvider", "own_pool", "settings_of"]


def own_pool(data: EvalData, grades: Grades, depth: int | None) -> Pool:
    """The run itself, cut at ``depth``, as its own pool."""
    in_pool = np.ones(data.j_idx.size, dtype=bool) if depth is None else data.j_rank <= depth
    rows = np.arange(data.n_rows, dtype=np.int64) if depth is None else np.flatnonzero(data.r_rank <= depth)
    return Pool(
        source="(the run itself)",
        own=True,
        depth=depth,
        p_seg=data.j_seg[in_pool],
        p_util=np.asarray(grades.j_util)[in_pool],
        p_rank=data.j_rank[in_pool],
        j_in_pool=in_pool,
        m_seg=data.r_seg[rows],
        m_rank=data.r_rank[rows],
        m_doc=None if data.rows is None else data.rows.doc.take(rows),
    )


class PoolProvider(SideData):
    name = "pool"
    after = ("grades",)

    def build(self, data: EvalData, inputs: Inputs) -> Pool:
        st = inputs.settings
        grades: Grades = data.extra("grades")
        depth = st.rag.pool_depth
        prun = st.pool
        if prun is None:
            return own_pool(data, grades, depth)
        if data.rows is None:
            raise ConfigError("an explicit pool needs the run's ranked rows (keep_rows)")
        pd = join(
            inputs.qrels.columns, prun.columns, ties=data.ties, missing="zero", run_name=prun.name, keep_rows=True
        )
        qids = np.array(data.qids, dtype=str) if data.qids else np.zeros(0, dtype="U1")
        at = positions(np.array(pd.qids, dtype=str) if pd.qids else np.zeros(0, dtype="U1"), qids)
        # judged pool docs within the depth, of the evaluated queries
        sel = at[pd.j_seg] >= 0
        if depth is not None:
            sel &= pd.j_rank <= depth
        gm = st.rag.grade_map
        p_grade = pd.j_grade[sel]
        p_util = gm.apply(p_grade) if gm is not None and gm.mapping else p_grade
        # every pool row within the depth
        msel = at[pd.r_seg] >= 0
        if depth is not None:
            msel &= pd.r_rank <= depth
        mrows = np.flatnonzero(msel)
        m_seg = at[pd.r_seg[mrows]]
        m_doc: Ids = pd.rows.doc.take(mrows)  # type: ignore[union-attr]
        i, _ = match_pairs(data.r_seg, data.rows.doc, m_seg, m_doc)
        in_pool = np.zeros(data.n_rows, dtype=bool)
        in_pool[i] = True
        outside = ~in_pool
        n_out = int(outside.sum())
        out_q = int(np.unique(data.r_seg[outside]).size) if n_out else 0
        if n_out and not st.rag.allow_outside_pool:
            first = int(np.flatnonzero(outside)[0])
            q, d = data.qids[int(data.r_seg[first])], data.rows.doc.to_list(np.array([first]))[0]
            depth_txt = f" (pool depth {depth})" if depth is not None else ""
            raise PoolError(
                f"run {inputs.run.name!r}: {n_out} doc{'s' if n_out != 1 else ''} in {out_q} quer{'ies' if out_q != 1 else 'y'} "
                f"not in the retrieval pool {prun.name!r}{depth_txt}, e.g. query {q!r} doc {d!r}; "
                "a reranker can only reorder its pool. Use allow_outside_pool=True / --allow-outside-pool to evaluate anyway"
            )
        return Pool(
            source=prun.name,
            own=False,
            depth=depth,
            p_seg=at[pd.j_seg[sel]],
            p_util=p_util,
            p_rank=pd.j_rank[sel],
            j_in_pool=in_pool[data.j_idx],
            m_seg=m_seg,
            m_rank=pd.r_rank[mrows],
            m_doc=m_doc,
            outside_rows=n_out,
            outside_queries=out_q,
            allow_outside=st.rag.allow_outside_pool,
        )


def _codes(docs: Ids, groups: Any) -> np.ndarray:
    """Group code of every doc id (unique negative codes for docs without a group)."""
    n = len(docs)
    zeros = np.zeros(n, dtype=np.int64)
    i, j = match_pairs(zeros, docs, np.zeros(len(groups.doc), dtype=np.int64), groups.doc)
    codes = np.full(n, -1, dtype=np.int64)
    codes[i] = groups.group[j]
    none = codes == -1
    codes[none] = -2 - np.arange(int(none.sum()), dtype=np.int64)
    return codes


class GroupsProvider(SideData):
    name = "groups"
    after = ("grades",)

    def build(self, data: EvalData, inputs: Inputs) -> Groups:
        groups = inputs.settings.groups
        if groups is None:
            raise ConfigError(
                "RA-nWG(novelty=...) discounts repeats of a doc group, so it needs a doc -> group mapping: "
                "rag=RagConfig(groups=...) or --groups FILE"
            )
        if data.rows is None:
            raise ConfigError("doc groups need the run's ranked rows (keep_rows)")
        qrels = inputs.qrels.columns
        qids = np.array(data.qids, dtype=str) if data.qids else np.zeros(0, dtype="U1")
        q_seg, rows = judged_docs(qrels, qids)
        gm = inputs.settings.rag.grade_map
        grade = qrels.values[rows].astype(np.int64)
        q_util = gm.apply(grade) if gm is not None and gm.mapping else grade
        return Groups(
            j_group=_codes(data.rows.doc.take(data.j_idx), groups),
            q_seg=q_seg,
            q_util=q_util,
            q_group=_codes(qrels.doc.take(rows), groups),
            source=groups.source,
        )


register(PoolProvider())
register(GroupsProvider())


def settings_of(st: Any) -> dict[str, Any]:
    """The pool settings for reports."""
    rag = st.rag
    return {
        "source": st.pool.source if st.pool is not None else None,
        "name": st.pool.name if st.pool is not None else "(each run itself)",
        "depth": rag.pool_depth,
        "allow_outside_pool": rag.allow_outside_pool,
        "groups": st.groups.source if st.groups is not None else None,
    }
