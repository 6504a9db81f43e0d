"""``chunks`` and ``spans``: where a run's chunks lie and what they cost, and the evidence they cover.

* ``chunks`` (:class:`~ctxeval._core.spans.ChunkData`, for every measure at a budget ``@Btok``): each
  ranked chunk's tokens, from the chunk table (``RagConfig.chunks``: its tokens column, or the
  tokenizer in force over its texts or the documents' text at its offsets), and the tokens of every
  judged chunk (the ideal at a budget packs them). A retrieved chunk the table does not hold is an
  error naming how many and which.
* ``spans`` (:class:`~ctxeval._core.spans.SpanData`, for the span measures and the rank measures
  over span labels): the evaluation's span labels and the run's chunks placed by the table, cut
  into atoms; atoms and units weigh their characters, and their tokens when a measure counts tokens
  (the documents' text, by the tokenizer).
* ``ceiling`` (:class:`~ctxeval._core.spans.SpanCeiling`, for precision_Omega): the span labels and
  the table's chunks that overlap or touch them, cut into atoms (the run plays no part).

Both read the chunk table through one seam (:func:`placed`); a later source of chunk offsets (a sample
set's, a framework's metadata through ``ctxeval.collect``) is a table built from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .._core.join import judged_docs, run_positions
from .._core.segments import distinct
from .._core.spans import Atoms, ChunkData, SpanCeiling, SpanData, atomise_parts, near, units
from .._errors import ConfigError
from .._io.chunks import Chunks
from .._io.spans import SpanLabels
from .._io.tokenizers import Tokenizer
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._io.model import Qrels
    from .._measures import Measure
    from .settings import RagConfig, Settings

__all__ = [
    "CeilingProvider",
    "ChunksProvider",
    "SpansProvider",
    "placed",
    "run_tables",
    "run_view",
    "span_inputs",
    "span_notes",
    "tokenizer_of",
]


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
    where = table.rows_of(data.rows.doc)
    missing = np.flatnonzero(where < 0)
    if missing.size:
        ids = data.rows.doc.to_list(missing[:5])
        shown = ", ".join(repr(i) for i in ids) + (" ..." if missing.size > 5 else "")
        raise ConfigError(
            f"run {run_name!r}: {missing.size} retrieved chunk ids are not in the chunk table {table.source} ({shown})"
        )
    return where


class ChunksProvider(SideData):
    name = "chunks"

    def build(self, data: EvalData, inputs: Inputs) -> ChunkData:
        table = _table(inputs, _names(inputs.measures, lambda m: m.budget is not None) + " (cut at a budget of tokens)")
        where = placed(data, table, inputs.run.name)
        tok = inputs.settings.rag.tokenizer
        tokens, name = table.token_counts(tok, where)
        codes = np.searchsorted(distinct(table.doc), table.doc[where])
        # the judged chunks of every evaluated query, with their tokens (-1: not in the table)
        qpos, qrows = judged_docs(inputs.qrels.columns, np.asarray(data.qids))
        order = np.argsort(qpos, kind="stable")
        qpos, qrows = qpos[order], qrows[order]
        judged = table.rows_of(inputs.qrels.columns.doc.take(qrows))
        if inputs.run.name in inputs.settings.chunk_tables:  # other chunkings' judged chunks: no candidates
            mine = judged >= 0
            qpos, qrows, judged = qpos[mine], qrows[mine], judged[mine]
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


class Evidence(NamedTuple):
    """The span labels of the evaluated queries, with document codes shared with the chunk table."""

    q: np.ndarray
    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    grade: np.ndarray
    doc_names: np.ndarray
    t_doc: np.ndarray  #: the document code of every chunk of the table
    table: Chunks


def _evidence(data: EvalData, inputs: Inputs, wanted: str) -> Evidence:
    """The evidence of ``data``'s queries, built once for the span and the ceiling side data (a value
    of the queries and the labels, not of the ranking: shared by every order of tied rows)."""
    return data.fixed(("span_evidence",), lambda: _read_evidence(data, inputs, wanted))


def _read_evidence(data: EvalData, inputs: Inputs, wanted: str) -> Evidence:
    spans = inputs.settings.spans
    if spans is None:
        raise ConfigError(
            f"{wanted} read span labels: give ctxeval.SpanLabels as the labels, with a chunk table (chunks=...)"
        )
    table = _table(inputs, f"{wanted} (span labels)")
    t_names, t_codes = table.doc_codes()  # the table's codes are built once
    s_q = run_positions(spans.query, data.qids)
    keep = s_q >= 0
    # every document named: the table's and the labels' (the labels' runs looked up among the table's)
    s_doc = run_positions(spans.doc, t_names)
    if bool((s_doc >= 0).all()):
        doc_names, t_doc = t_names, t_codes
    else:
        doc_names = distinct(np.concatenate([distinct(spans.doc), t_names]))
        s_doc, t_doc = np.searchsorted(doc_names, spans.doc), np.searchsorted(doc_names, t_names)[t_codes]
    return Evidence(
        s_q[keep], s_doc[keep], spans.start[keep], spans.end[keep], spans.grade[keep], doc_names, t_doc, table
    )


class Atomised(NamedTuple):
    atoms: Atoms
    a_grade: np.ndarray
    a_unit: np.ndarray
    u_q: np.ndarray
    u_grade: np.ndarray
    a_tok: np.ndarray | None
    tokenizer: str | None


def _atomised(ev: Evidence, q: np.ndarray, rows: np.ndarray, inputs: Inputs, wanted: str) -> Atomised:
    """The atoms of the evidence and of the table's chunks ``rows`` (one per query of ``q``), with
    the evidence units, and the atoms' tokens when a measure counts tokens."""
    table = ev.table
    n_s = ev.q.size
    atoms = atomise_parts([(ev.q, ev.doc, ev.start, ev.end, None), (q, ev.t_doc, table.start, table.end, rows)])
    a_grade, a_unit, u_q, u_grade = units(
        atoms.last.size, ev.q, ev.doc, ev.start, ev.end, ev.grade, atoms.lo[:n_s], atoms.hi[:n_s]
    )
    a_tok, name = None, None
    if any(_reads_tokens(m) for m in inputs.measures):
        readers = _names(inputs.measures, _reads_tokens)
        a_tok, name = _atom_tokens(atoms, ev.doc_names, table, inputs.settings.rag.tokenizer, readers)
    return Atomised(atoms, a_grade, a_unit, u_q, u_grade, a_tok, name)


class SpansProvider(SideData):
    name = "spans"

    def build(self, data: EvalData, inputs: Inputs) -> SpanData:
        wanted = _names(inputs.measures, lambda m: "spans" in m.requires or m.spec.on_spans is not None)
        ev = _evidence(data, inputs, wanted)
        where = placed(data, ev.table, inputs.run.name)
        at = _atomised(ev, data.r_seg, where, inputs, wanted)
        a_len = at.atoms.length
        owned = np.flatnonzero(at.a_unit >= 0)  # the atoms of evidence: few (a boolean index is ~3x slower)
        unit = at.a_unit[owned]
        u_len = np.bincount(unit, weights=a_len[owned], minlength=at.u_q.size).astype(np.int64)
        u_tok = None if at.a_tok is None else np.bincount(unit, weights=at.a_tok[owned], minlength=at.u_q.size)
        gm = inputs.settings.rag.grade_map
        u_util = gm.apply(at.u_grade) if gm is not None and gm.mapping else at.u_grade
        n_s = ev.q.size
        return SpanData(
            a_off=at.atoms.offsets(data.n_queries),
            a_len=a_len,
            a_tok=at.a_tok,
            a_grade=at.a_grade,
            a_unit=at.a_unit,
            u_q=at.u_q,
            u_grade=at.u_grade,
            u_util=np.asarray(u_util, dtype=np.int64),
            u_len=u_len,
            u_tok=u_tok,
            s_q=ev.q,
            s_grade=ev.grade,
            s_lo=at.atoms.lo[:n_s],
            s_hi=at.atoms.hi[:n_s],
            r_lo=at.atoms.lo[n_s:],
            r_hi=at.atoms.hi[n_s:],
            tokenizer=at.tokenizer,
        )


class CeilingProvider(SideData):
    """precision_Omega's side data: the chunk table's chunks that overlap or touch each query's
    evidence, atomised with it (the run plays no part)."""

    name = "ceiling"
    needs_rows = False

    def build(self, data: EvalData, inputs: Inputs) -> SpanCeiling:
        wanted = _names(inputs.measures, lambda m: "ceiling" in m.requires)
        ev = _evidence(data, inputs, wanted)
        table = ev.table
        p_span, p_chunk, p_share = near(ev.doc, ev.start, ev.end, ev.t_doc, table.start, table.end)
        hkey = ev.q[p_span] * len(table) + p_chunk
        h_keys = distinct(hkey)
        h_q, h_chunk = np.divmod(h_keys, len(table))
        at = _atomised(ev, h_q, h_chunk, inputs, wanted)
        n_s = ev.q.size
        return SpanCeiling(
            a_off=at.atoms.offsets(data.n_queries),
            a_len=at.atoms.length,
            a_tok=at.a_tok,
            a_grade=at.a_grade,
            s_grade=ev.grade,
            h_lo=at.atoms.lo[n_s:],
            h_hi=at.atoms.hi[n_s:],
            p_h=np.searchsorted(h_keys, hkey),
            p_s=p_span,
            p_overlap=p_share,
        )


def _atom_tokens(
    atoms: Any, doc_names: np.ndarray, table: Chunks, tokenizer: Any, wanted: str
) -> tuple[np.ndarray, str]:
    """The tokens of every atom's text (each distinct (document, start, end) counted once)."""
    docs = table.documents
    if docs is None:
        raise ConfigError(
            f"{wanted}: counting the tokens of the evidence needs the documents' texts: give the documents "
            "(documents=... of RagConfig, --documents)"
        )
    tok = Tokenizer.coerce(tokenizer)
    keys = np.stack([atoms.doc, atoms.start, atoms.end], axis=1)
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    names = doc_names[uniq[:, 0]].tolist()
    missing = sorted({n for n in names if n not in docs})
    if missing:
        raise ConfigError(
            f"{wanted}: no text for document(s) {', '.join(map(repr, missing[:5]))} among the documents given"
        )
    texts = [docs[n][s:e] for n, s, e in zip(names, uniq[:, 1].tolist(), uniq[:, 2].tolist())]
    return tok.count(texts)[inverse.reshape(-1)].astype(np.float64), tok.name


register(ChunksProvider())
register(SpansProvider())
register(CeilingProvider())


def span_inputs(qrels: Any, rcfg: RagConfig, measures: list[Measure]) -> tuple[Any, Any, Any]:
    """Span labels given as the labels are read as chunk grades by the chunk table (which they then
    need; when every measure is a span measure, or every run has a table of its own, the queries
    alone: :func:`run_view` reads each run's); returns (the labels to read, the chunk table or None,
    the span labels or None)."""
    if rcfg.chunks is None and rcfg.chunk_tables is None and rcfg.documents is not None:
        raise ConfigError("documents serve a chunk table: give chunks=... (RagConfig(chunks=...)) too")
    chunks = Chunks.coerce(rcfg.chunks, rcfg.documents) if rcfg.chunks is not None else None
    if not isinstance(qrels, SpanLabels):
        return qrels, chunks, None
    if chunks is None and rcfg.chunk_tables is None:
        raise ConfigError(
            f"span labels ({qrels.source}) score a run's chunks by where they lie: give a chunk table "
            "(chunks=... or RagConfig(chunks=...): chunk id -> doc_id, start, end)"
        )
    if chunks is not None and chunks.documents is not None:
        qrels.check(chunks.documents)
    if chunks is not None and _reads_grades(measures):
        return qrels.chunk_grades(chunks), chunks, qrels
    return qrels.chunk_grades(None), chunks, qrels


def _reads_grades(measures: Any) -> bool:
    return any(m.spec.group != "spans" for m in measures)


def run_tables(named: Mapping[str, Any], rcfg: RagConfig, spans: SpanLabels | None) -> dict[str, Chunks]:
    """The per-run chunk tables (``RagConfig.chunk_tables`` keyed by the run each names), read with
    the documents; the span labels checked against the documents of each."""
    out = {}
    for name, value in named.items():
        table = Chunks.coerce(value, rcfg.documents)
        if spans is not None and table.documents is not None:
            spans.check(table.documents)
        out[name] = table
    return out


def run_view(settings: Settings, qrels: Qrels, run_name: str, measures: Any) -> tuple[Settings, Qrels]:
    """What one run is evaluated with: its own chunk table in place of the shared one, and, with span
    labels, the labels read as chunk grades by that table (each run's grades from its own chunking;
    built once per table)."""
    table = settings.chunk_tables.get(run_name)
    if table is None:
        return settings, qrels
    out = replace(settings, chunks=table)
    spans = settings.spans
    if spans is None or not _reads_grades(measures):
        return out, qrels
    key = ("chunk_grades", spans)  # the labels themselves (identity): an id could be reused
    grades = table._cache.get(key)
    if grades is None:
        grades = table._cache[key] = spans.chunk_grades(table)
    return out, grades


def tokenizer_of(chunks: Any, rcfg: RagConfig) -> str:
    """The name of what counts the tokens of a budget: the tokenizer given, else the chunk table's
    tokens column when it has one, else words-v1."""
    if rcfg.tokenizer is None and chunks is not None and chunks.tokens is not None:
        return chunks.tokens_by or f"the tokens column of {chunks.source}"
    return Tokenizer.coerce(rcfg.tokenizer).name


def span_notes(
    chunks: Any, spans: Any, measures: list[Measure], rcfg: RagConfig, tables: Mapping[str, Chunks] | None = None
) -> list[str]:
    """What the reports must say about span labels and chunk tables (the shared one and the per-run
    ``tables``): how they were built, and which measures read the span labels as chunk grades."""
    every = ([chunks] if chunks is not None else []) + list((tables or {}).values())
    out = [*(spans.notes if spans is not None else ()), *(n for t in every for n in t.notes)]
    budgets = [str(m) for m in measures if m.budget is not None]
    if budgets and every:
        counted = ", ".join(dict.fromkeys(tokenizer_of(t, rcfg) for t in every))
        out.append(
            f"{', '.join(budgets)}: tokens counted by {counted}; a chunk that does not fit the budget: {rcfg.overflow}"
        )
    if spans is not None:
        as_grades = [str(m) for m in measures if not {"spans", "ceiling"} & m.requires and m.spec.on_spans is None]
        if as_grades:
            whose = f"a chunk of {chunks.source}" if not tables else "a chunk of a run's chunk table"
            out.append(
                f"{', '.join(as_grades)} read the span labels as chunk grades: {whose} is judged "
                "at the highest grade of the evidence it shares a character with"
            )
    return out
