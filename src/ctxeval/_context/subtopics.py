"""``subtopics``: the judgments by subtopic of subtopic qrels (``labels="subtopic"``, read by
:mod:`ctxeval._io.subtopics`), aligned with the joined run for the diversity measures."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._core.extras import Subtopics
from .._core.join import match_pairs, positions
from .._core.segments import segment_rows
from .._errors import ConfigError
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData

__all__ = ["NEEDS_SUBTOPICS", "SubtopicsProvider"]

#: what a diversity measure says when the qrels hold no subtopics
NEEDS_SUBTOPICS = (
    "the diversity measures (alpha-nDCG, ERR-IA, NRBP, P-IA, S-recall, MAP-IA ...) read subtopic qrels, "
    "'qid subtopic docid grade' lines (the TREC Web track's diversity qrels): read them with labels='subtopic' "
    "(--labels subtopic, Qrels.from_file(path, labels='subtopic'))"
)


class SubtopicsProvider(SideData):
    name = "subtopics"
    needs_rows = False  #: the join gives the qrels row of every judged row

    def build(self, data: EvalData, inputs: Inputs) -> Subtopics:
        sub = inputs.qrels.subtopics
        if sub is None:
            raise ConfigError(f"{inputs.qrels.source}: {NEEDS_SUBTOPICS}")
        docs = sub.docs
        qids = np.array(data.qids, dtype=str) if data.qids else np.zeros(0, dtype="U1")
        d_all = positions(docs.layout.heads, qids)[docs.layout.row_segments()]
        keep = np.flatnonzero(d_all >= 0)
        # the evaluated queries' docs, by query (then doc id descending, as read)
        keep = keep[np.argsort(d_all[keep], kind="stable")]
        lens = np.diff(sub.ptr)[keep]
        judg = segment_rows(sub.ptr[:-1][keep], lens)
        d_seg = d_all[keep]
        n_names = max(int(sub.names.size), 1)
        key = np.repeat(d_seg, lens) * n_names + sub.subtopic[judg]
        groups, q_group = np.unique(key, return_inverse=True)
        d_ptr = np.zeros(keep.size + 1, dtype=np.int64)
        np.cumsum(lens, out=d_ptr[1:])
        # the judged run rows and their judgments: the qrels the run was joined with are the subtopic
        # qrels' docs, so the join's qrels row of a judged row is its doc (else match the doc ids)
        qrow = data._memo.get("j_qrow") if inputs.qrels.columns is docs else None
        if qrow is not None:
            where = np.full(len(docs), -1, dtype=np.int64)
            where[keep] = np.arange(keep.size)
            i, j = np.arange(qrow.size, dtype=np.int64), where[qrow]
        elif data.rows is not None:
            i, j = match_pairs(data.j_seg, data.rows.doc.take(data.j_idx), d_seg, docs.doc.take(keep))
        else:
            raise ConfigError("subtopic judgments need the join's qrels rows or the run's ranked rows (keep_rows)")
        plen = lens[j]
        pj = segment_rows(d_ptr[:-1][j], plen)
        return Subtopics(
            p_row=np.repeat(i, plen),
            p_group=q_group[pj].astype(np.int64),
            p_grade=sub.grade[judg][pj],
            g_seg=(groups // n_names).astype(np.int64),
            d_seg=d_seg,
            d_ptr=d_ptr,
            q_group=q_group.astype(np.int64),
            q_grade=sub.grade[judg],
            source=sub.source,
        )


register(SubtopicsProvider())
