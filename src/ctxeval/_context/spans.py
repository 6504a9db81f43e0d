"""``chunks`` and ``spans``: where a run's chunks lie and what they cost, and the evidence they cover.

* ``chunks`` (:class:`~ctxeval._core.spans.ChunkData`, for every measure at a budget ``@Btok``): each
  ranked chunk's tokens, from the chunk table (``RagConfig.chunks``: its tokens column, or the
  tokenizer in force over its texts or the documents' text at its offsets), and the tokens of every
  judged chunk (the ideal at a budget packs them). A retrieved chunk the table does not hold is an
  error naming how many and which.
* ``spans`` (:class:`~ctxeval._core.spans.SpanData`, for the span measures and the rank measures
  over span labels): the evaluation's span labels, the run's chunks placed by the table, and the
  table's chunks that overlap or touch the evidence, cut into atoms; atoms and units weigh their
  characters, and their tokens when a measure counts tokens (the documents' text, by the tokenizer).

Both read the chunk table through one seam (:func:`placed`); a later source of chunk offsets (a sample
set's, a framework's metadata through ``ctxeval.collect``) is a table built from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.join import judged_docs, positions
from .._core.spans import ChunkData, SpanData, atomise, near, units
from .._errors import ConfigError
from .._io.tokenizers import Tokenizer
from . import Inputs, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._io.chunks import Chunks
    from .._measures import Measure

__all__ = ["ChunksProvider", "SpansProvider", "placed", "tokenizer_name"]


def _table(inputs: Inputs, why: str) -> Chunks:
    table = inputs.settings.chunks
    if table is None:
        raise ConfigError(
            f"{why} need a chunk table (chunk id -> doc_id, start, end; with texts or token counts for budgets): "
            "give chunks=... (evaluate) or RagConfig(chunks=...)"
        )
    return table


def _names(measures: tuple[Measure, ...], test: Any) -> str:
    return ", ".join(str(m) for m in measures if test(m)) or "these measures"


def placed(data: EvalData, table: Chunks, run_name: str) -> np.ndarray:
    """The chunk-table row of every ranked row of ``data`` (rows kept); a chunk the table lacks is an
    error naming how many and which."""
    if data.rows is None:
        raise ConfigError("placing chunks needs the run's rows (keep_rows)")
    ids = data.rows.doc.to_list()
    where = table.lookup(ids)
    missing = np.flatnonzero(where < 0)
    if missing.size:
        shown = ", ".join(repr(ids[i]) for i in missing[:5].tolist()) + (" ..." if missing.size > 5 else "")
        raise ConfigError(
            f"run {run_name!r}: {missing.size} retrieved chunk ids are not in the chunk table {table.source} ({shown})"
        )
    return where


def tokenizer_name(inputs: Inputs) -> Any:
    return inputs.settings.rag.tokenizer


@dataclass(frozen=True)
class ChunksProvider:
    name: str = "chunks"
    after: tuple[str, ...] = ()
    needs_rows: bool = True

    def build(self, data: EvalData, inputs: Inputs) -> ChunkData:
        table = _table(inputs, _names(inputs.measures, lambda m: m.budget is not None) + " (cut at a budget of tokens)")
        where = placed(data, table, inputs.run.name)
        tok = tokenizer_name(inputs)
        tokens, name = table.token_counts(tok, where)
        codes = np.searchsorted(np.unique(table.doc), table.doc[where])
        # the judged chunks of every evaluated query, with their tokens (-1: not in the table)
        qpos, qrows = judged_docs(inputs.qrels.columns, np.asarray(data.qids))
        order = np.argsort(qpos, kind="stable")
        qpos, qrows = qpos[order], qrows[order]
        judged = table.lookup(inputs.qrels.columns.doc.to_list(qrows))
        q_tokens = np.full(judged.size, -1, dtype=np.int64)
        known = judged >= 0
        if known.any():
            q_tokens[known] = table.token_counts(tok, judged[known])[0]
        q_grade = inputs.qrels.columns.values[qrows].astype(np.int64)
        gm = inputs.settings.rag.grade_map
        return ChunkData(
            doc=codes,
            start=table.start[where],
            end=table.end[where],
            tokens=tokens,
            q_off=np.r_[0, np.cumsum(np.bincount(qpos, minlength=data.n_queries))].astype(np.int64),
            q_grade=q_grade,
            q_util=np.asarray(gm.apply(q_grade) if gm is not None and gm.mapping else q_grade, dtype=np.int64),
            q_tokens=q_tokens,
            tokenizer=name,
            overflow=inputs.settings.rag.overflow,
            source=table.source,
        )


def _reads_tokens(m: Measure) -> bool:
    unit = dict(m.params).get("unit")
    return unit == "tokens" or (m.budget is not None and m.spec.on_spans is not None)


@dataclass(frozen=True)
class SpansProvider:
    name: str = "spans"
    after: tuple[str, ...] = ()
    needs_rows: bool = True

    def build(self, data: EvalData, inputs: Inputs) -> SpanData:
        st = inputs.settings
        wanted = _names(inputs.measures, lambda m: "spans" in m.requires or m.spec.on_spans is not None)
        spans = st.spans
        if spans is None:
            raise ConfigError(
                f"{wanted} read span labels: give ctxeval.SpanLabels as the labels, with a chunk table (chunks=...)"
            )
        table = _table(inputs, f"{wanted} (span labels)")
        where = placed(data, table, inputs.run.name)
        doc_names = np.unique(np.r_[spans.doc, table.doc])
        s_doc_all = np.searchsorted(doc_names, spans.doc)
        t_doc = np.searchsorted(doc_names, table.doc)
        qids = np.asarray(data.qids)
        s_q = positions(spans.query, qids)
        keep = s_q >= 0
        s_q, s_doc, s_start, s_end, s_grade = s_q[keep], s_doc_all[keep], spans.start[keep], spans.end[keep], spans.grade[keep]
        # the table's chunks that overlap or touch the evidence (precision_Omega's candidates)
        p_span, p_chunk, p_share = near(s_doc, s_start, s_end, t_doc, table.start, table.end)
        hkey = s_q[p_span] * len(table) + p_chunk
        h_keys, p_h = np.unique(hkey, return_inverse=True)
        h_q, h_chunk = np.divmod(h_keys, len(table))
        r_q = data.r_seg
        n_s, n_r = s_q.size, r_q.size
        atoms = atomise(
            np.r_[s_q, r_q, h_q],
            np.r_[s_doc, t_doc[where], t_doc[h_chunk]],
            np.r_[s_start, table.start[where], table.start[h_chunk]],
            np.r_[s_end, table.end[where], table.end[h_chunk]],
        )
        lo, hi = atoms.lo, atoms.hi
        a_grade, a_unit, u_q, u_grade = units(atoms.q.size, s_q, s_doc, s_start, s_end, s_grade, lo[:n_s], hi[:n_s])
        a_len = atoms.length
        owned = a_unit >= 0
        u_len = np.bincount(a_unit[owned], weights=a_len[owned], minlength=u_q.size).astype(np.int64)
        a_tok = u_tok = None
        tok_name = None
        if any(_reads_tokens(m) for m in inputs.measures):
            a_tok, tok_name = _atom_tokens(atoms, doc_names, table, st.rag.tokenizer, wanted)
            u_tok = np.bincount(a_unit[owned], weights=a_tok[owned], minlength=u_q.size)
        gm = st.rag.grade_map
        u_util = gm.apply(u_grade) if gm is not None and gm.mapping else u_grade
        return SpanData(
            a_off=np.r_[0, np.cumsum(np.bincount(atoms.q, minlength=data.n_queries))].astype(np.int64),
            a_len=a_len,
            a_tok=a_tok,
            a_grade=a_grade,
            a_unit=a_unit,
            u_q=u_q,
            u_grade=u_grade,
            u_util=np.asarray(u_util, dtype=np.int64),
            u_len=u_len,
            u_tok=u_tok,
            s_q=s_q,
            s_grade=s_grade,
            s_lo=lo[:n_s],
            s_hi=hi[:n_s],
            r_lo=lo[n_s : n_s + n_r],
            r_hi=hi[n_s : n_s + n_r],
            h_q=h_q,
            h_lo=lo[n_s + n_r :],
            h_hi=hi[n_s + n_r :],
            p_h=p_h.reshape(-1),
            p_s=p_span,
            p_overlap=p_share,
            tokenizer=tok_name,
        )


def _atom_tokens(atoms: Any, doc_names: np.ndarray, table: Chunks, tokenizer: Any, wanted: str) -> tuple[np.ndarray, str]:
    """The tokens of every atom's text (each distinct (document, start, end) counted once)."""
    docs = table.documents
    if docs is None:
        raise ConfigError(f"{wanted}: counting tokens of the evidence needs the documents' texts: RagConfig(documents=...)")
    tok = Tokenizer.coerce(tokenizer)
    keys = np.stack([atoms.doc, atoms.start, atoms.end], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    names = doc_names[uniq[:, 0]].tolist()
    missing = sorted({n for n in names if n not in docs})
    if missing:
        raise ConfigError(f"{wanted}: no text for document(s) {', '.join(map(repr, missing[:5]))} among the documents given")
    texts = [docs[n][s:e] for n, s, e in zip(names, uniq[:, 1].tolist(), uniq[:, 2].tolist())]
    return tok.count(texts)[inverse.reshape(-1)].astype(np.float64), tok.name


register(ChunksProvider())
register(SpansProvider())
