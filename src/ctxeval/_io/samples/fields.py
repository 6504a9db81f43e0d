"""The sample format's field table: one row per field, from which everything else is derived.

:class:`Sample` *is* the table: each of its attributes read from a sample object carries its
:class:`Row` (the names it is read under, the shape of its value, what it says, what reads it, and for
a per-chunk field its key in a ``retrieved`` object). From the rows come: the reader
(:func:`.schema.parse`) and the writer (:func:`.schema.record`), the retrieved chunks in both their
forms (:mod:`.chunks`), the fields a CSV cell holds as JSON (:data:`JSON_CELLS`), the fields the
columnar reader takes (:data:`FAST`, :mod:`.fast`), RAGAS's names (:mod:`.ragas`), the misspelling
check, and the format reference (:func:`reference`, the table of docs/reference/formats.md).

Adding a field is one row here (an attribute of :class:`Sample` with its :func:`row` or, for a value
per retrieved chunk, its :func:`chunk`) plus its test: docs/development.md walks through it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from typing import Any

from .shapes import (
    CLAIMS,
    FACETS,
    GRADES,
    ID,
    IDS,
    JUDGED,
    KEPT_LIST,
    KEPT_TEXT,
    LABELLED_BY,
    META,
    NUGGETS,
    OFFSET,
    QUERY_ID,
    SCORE,
    TEXT,
    TEXTS,
    Claim,
    Nugget,
    Shape,
)

__all__ = ["CHUNKS", "FAST", "FIELDS", "JSON_CELLS", "KEPT", "NAMED", "ROWS", "Row", "Sample", "reference"]


@dataclass(frozen=True)
class Row:
    """One field of the sample format."""

    names: tuple[str, ...]  #: its name, then the other names it is read under (RAGAS's, older ones)
    shape: Shape  #: its value (per chunk, for a per-chunk field)
    doc: str  #: what it says
    reads: str  #: what reads it (the measures, the provider, the verb)
    #: per chunk: its key in a ``retrieved`` object ("": the chunk's other keys); None: one value per sample
    key: str | None = None
    partial: bool = False  #: per chunk: a chunk may go without it (else every chunk gives it, or none)
    together: tuple[str, ...] = ()  #: per chunk: the fields given with it or not at all
    at_least: str | None = None  #: per chunk: the field no value of it may be below (an end, its start)
    ragas: str | None = None  #: RAGAS's name of the field, when it has one
    fast: bool = False  #: the columnar reader takes it (see :mod:`.fast`)
    #: the sample -> the value written back, when it is not the attribute as it is (None from it: not written)
    written: Callable[[Sample], Any] | None = None
    attr: str = ""  #: the :class:`Sample` attribute holding it ("": kept in ``extra``)

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def per_chunk(self) -> bool:
        return self.key is not None

    @property
    def column(self) -> str | None:
        """How the columnar reader decodes it (a per-chunk field: the list of its values)."""
        if self.key is None or self.shape.column is None:
            return self.shape.column
        return {"string": "strings", "float": "floats"}[self.shape.column]


def row(*names: str, shape: Shape, doc: str, reads: str, default: Any = None, **more: Any) -> Any:
    """A :class:`Sample` attribute read from the field ``names[0]`` (also read as ``names[1:]``)."""
    spec = Row(names, shape, doc, reads, **more)
    if default is MISSING:
        return field(metadata={"row": spec})
    return field(default=default, metadata={"row": spec})


def chunk(*names: str, key: str, shape: Shape, doc: str, reads: str, **more: Any) -> Any:
    """A :class:`Sample` attribute holding one value per retrieved chunk: the parallel list ``names[0]``
    (also read as ``names[1:]``), or the key ``key`` of each ``retrieved`` object."""
    return row(*names, shape=shape, doc=doc, reads=reads, key=key, **more)


def derived(doc: str, default: Any = None) -> Any:
    """A :class:`Sample` attribute no field gives as it is: the reader works it out (``doc`` says how)."""
    return field(default=default, metadata={"derived": doc})


_RANKING = (
    "as given when they rank the chunks in list order under the evaluation's rule (decreasing as float32, ties by "
    "id descending); otherwise (a reranker's order over first-stage scores) the list is ranked as given, scored "
    "n, n - 1, ..., 1, and the given scores are kept for writing"
)
_OPEN = "; the chunks a judge left without a judgment are listed by why (see below the table)"
_PLACE = ("retrieved_documents", "retrieved_starts", "retrieved_ends")


@dataclass(frozen=True, kw_only=True)
class Sample:
    """One query of a sample set: what the measures read, and what it was read from (the given
    ``reference_ids``, ``given_scores``, ``retrieved_meta``, ``extra``...) so that writing it back loses
    nothing. Each attribute is one row of the field table (the module docstring)."""

    query_id: str = row(
        "query_id", "qid", "id",
        shape=QUERY_ID,
        doc="the query; missing everywhere, the samples are named `line-1`, `line-2`, ... by position and the set "
        "says so (read beside other such sets, they are paired by their questions, each asked once in each); "
        "missing on some samples only, an error",
        reads="every verb",
        default=MISSING,
        fast=True,
    )  # fmt: skip
    question: str | None = row(
        "question", "user_input",
        shape=TEXT,
        doc="the question",
        reads="the judge; sets without query_id are paired by it; query-length strata",
        ragas="user_input",
        fast=True,
    )  # fmt: skip
    retrieved_ids: tuple[str, ...] = chunk(
        "retrieved_ids", "retrieved_context_ids",
        key="id",
        shape=ID,
        doc="the chunks in rank order (the list order is the ranking: what the LLM reads); a chunk given by its text "
        "only is named by a hash of the text (`t` + 16 hex digits), so the same text is the same chunk across runs",
        reads="the run: every measure",
        ragas="retrieved_context_ids",
        fast=True,
        default=(),
    )  # fmt: skip
    retrieved_texts: tuple[str, ...] | None = chunk(
        "retrieved_contexts", "contexts",
        key="text",
        shape=TEXT,
        partial=True,
        doc="the chunks' texts (an empty text matches nothing, exactly or by similarity)",
        reads="text matching (ContextPrecision / ContextRecall, method=similarity or containment; exact-text "
        "references), the judge",
        ragas="retrieved_contexts",
    )  # fmt: skip
    given_scores: tuple[float, ...] | None = chunk(
        "retrieved_scores",
        key="score",
        shape=SCORE,
        doc="the chunks' scores: the run's scores " + _RANKING,
        reads="the run (relative-score rules: hard negatives, calibrate's tau)",
        fast=True,
    )  # fmt: skip
    retrieved_documents: tuple[str, ...] | None = chunk(
        "retrieved_documents",
        key="document",
        shape=ID,
        together=_PLACE,
        doc="the document each chunk was cut from (given with its start and end)",
        reads="no measure yet: the chunks' places (`Samples.locations()`, a chunk table's rows)",
    )  # fmt: skip
    retrieved_starts: tuple[int, ...] | None = chunk(
        "retrieved_starts",
        key="start",
        shape=OFFSET,
        together=_PLACE,
        doc="where each chunk starts in its document, in Unicode code points from 0",
        reads="as `retrieved_documents`",
    )  # fmt: skip
    retrieved_ends: tuple[int, ...] | None = chunk(
        "retrieved_ends",
        key="end",
        shape=OFFSET,
        together=_PLACE,
        at_least="retrieved_starts",
        doc="where each chunk ends, exclusive (the chunk is `document[start:end]`), never before its start",
        reads="as `retrieved_documents`",
    )  # fmt: skip
    retrieved_meta: tuple[Mapping[str, Any], ...] | None = chunk(
        "retrieved_meta",
        key="",
        shape=META,
        partial=True,
        doc="per chunk, its other keys (`{}` for none), e.g. what a retriever returned with it",
        reads="kept and written back",
    )  # fmt: skip
    #: the run's scores, one per retrieved chunk
    retrieved_scores: tuple[float, ...] = derived("`retrieved_scores` " + _RANKING, default=())
    reference_ids: tuple[str, ...] | None = row(
        "reference_ids", "reference_context_ids",
        shape=IDS,
        doc="the relevant chunks (binary labels: grade 1, every other chunk unlabelled)",
        reads="the judgments: every measure",
        ragas="reference_context_ids",
        fast=True,
    )  # fmt: skip
    #: the judgments: given grades, or reference ids (or contexts matched by text) at grade 1
    grades: Mapping[str, int] | None = row(
        "grades",
        shape=GRADES,
        doc="graded judgments (they win over `reference_ids`)",
        reads="the judgments: every measure",
        fast=True,
        written=lambda s: s.grades if s.judgments_from == "grades" else None,
    )  # fmt: skip
    reference_contexts: tuple[str, ...] | None = row(
        "reference_contexts",
        shape=TEXTS,
        doc="the reference texts: without ids or grades, a retrieved chunk whose text equals one exactly is "
        "relevant (an empty one is no reference)",
        reads="the judgments; text matching (ContextPrecision / ContextRecall, method=similarity or containment)",
        ragas="reference_contexts",
    )  # fmt: skip
    #: where :attr:`grades` come from: ``"grades"``, ``"reference_ids"``, ``"reference_contexts"`` or None
    judgments_from: str | None = derived("the first of `grades`, `reference_ids`, `reference_contexts` given")
    reference_answer: str | None = row(
        "reference_answer", "reference", "ground_truth",
        shape=TEXT,
        doc="the reference answer",
        reads="the judge (claims, relevance, nuggets)",
        ragas="reference",
    )  # fmt: skip
    response: str | None = row(
        "response", "answer",
        shape=TEXT,
        doc="the pipeline's answer",
        reads="the judge (attribution)",
        ragas="response",
    )  # fmt: skip
    category: str | None = row(
        "category",
        shape=TEXT,
        doc="the sample's category",
        reads="compare's strata",
        fast=True,
    )  # fmt: skip
    facets: tuple[tuple[str, tuple[str, ...]], ...] | None = row(
        "facets",
        shape=FACETS,
        doc="the aspects an answer needs, each with the chunks that cover it",
        reads="`CoverageRecall@k` (side data `samples`)",
    )  # fmt: skip
    citations: tuple[str, ...] | None = row(
        "citations",
        shape=IDS,
        doc="the chunks the response cites (each one the sample retrieved)",
        reads="`AttributionRate[@k]` (side data `samples`)",
    )  # fmt: skip
    nuggets: tuple[Nugget, ...] | None = row(
        "nuggets",
        shape=NUGGETS,
        doc="the facts an answer needs, each with the chunks that support it" + _OPEN,
        reads="`NuggetRecall@k` (side data `samples`)",
    )  # fmt: skip
    pool: tuple[str, ...] | None = row(
        "pool",
        shape=IDS,
        doc="the first-stage candidates the list was chosen from",
        reads="the pool (PROC, `diagnose`)",
    )  # fmt: skip
    claims: tuple[Claim, ...] | None = row(
        "claims",
        shape=CLAIMS,
        doc="the reference answer's claims, each with the chunks that support it (`ctxeval judge claims`)" + _OPEN,
        reads="`ContextRecall(method=judge)` (side data `judged`)",
    )  # fmt: skip
    #: (relevant ids, undecided ids, tied ids, ids not sent)
    judged: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = row(
        "judged",
        shape=JUDGED,
        doc="a judge's relevance of the chunks to the reference answer (`ctxeval judge relevance`)" + _OPEN,
        reads="`ContextPrecision(method=judge)` (side data `judged`)",
    )  # fmt: skip
    labelled_by: tuple[Mapping[str, Any], ...] = row(
        "labelled_by",
        shape=LABELLED_BY,
        doc="who wrote the labels (`ctxeval judge`)",
        reads="the set's notes (labels from a heuristic)",
        default=(),
    )  # fmt: skip
    #: the fields the format does not read (and those it keeps as they are), as given
    extra: Mapping[str, Any] | None = derived("every other field, as given")

    def relevant_contexts(self) -> tuple[str, ...]:
        """The reference contexts that count: the non-empty ones."""
        return tuple(t for t in self.reference_contexts or () if t)


def _kept(name: str, shape: Shape, doc: str) -> Row:
    return Row((name,), shape, doc, "kept as they are, without a note")


#: the fields ``ctxeval judge`` writes beside its labels that no measure reads (kept in ``extra``)
KEPT: tuple[Row, ...] = (
    _kept("claims_status", KEPT_TEXT, "why a sample has no claims (`ctxeval judge claims`)"),
    _kept("nuggets_status", KEPT_TEXT, "why a sample has no nuggets (`ctxeval judge nuggets`)"),
    *(
        _kept(f"citations_{k}", KEPT_LIST, f"the cited chunks the judge left {k.replace('_', ' ')}")
        for k in ("undecided", "tied", "not_sent")
    ),
)
#: the fields of :class:`Sample`, in the writer's order
ROWS: tuple[Row, ...] = tuple(replace(f.metadata["row"], attr=f.name) for f in fields(Sample) if "row" in f.metadata)
#: the per-chunk fields (the first is the chunks' ids)
CHUNKS: tuple[Row, ...] = tuple(r for r in ROWS if r.per_chunk)
#: the fields the columnar reader takes
FAST: tuple[Row, ...] = tuple(r for r in ROWS if r.fast)
#: every name the format reads (``retrieved``: the chunks as objects)
FIELDS: frozenset[str] = frozenset({"retrieved", *(n for r in (*ROWS, *KEPT) for n in r.names)})
#: the names of one field each (a misspelling is matched against the fields a sample does not give)
NAMED: tuple[tuple[str, ...], ...] = (("retrieved",), *(r.names for r in ROWS))
#: the fields a CSV cell holds as JSON text
JSON_CELLS: frozenset[str] = frozenset(
    {"retrieved", *(n for r in (*ROWS, *KEPT) if r.shape.cell or r.per_chunk for n in r.names)}
)


def reference() -> str:
    """The field table as the format reference gives it (docs/reference/formats.md, between its
    ``fields`` markers): one line per field, the chunks' fields after the ``retrieved`` objects."""

    def names(r: Row) -> str:
        return f"`{r.name}`" + (f" [{', '.join(f'`{n}`' for n in r.names[1:])}]" if r.names[1:] else "")

    def line(*cells: str) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    keys = ", ".join(f'"{r.key}"' + ("?" if r is not CHUNKS[0] else "") for r in CHUNKS if r.key)
    lines = ["| field | value | meaning | read by |", "|---|---|---|---|"]
    for r in ROWS:
        if r is CHUNKS[0]:
            lines.append(
                line(
                    "`retrieved`",
                    f"a list of objects {{{keys}, ...}} or of ids",
                    "the chunks, one object (or id) each: each per-chunk field below under its key, given by every "
                    "chunk or by none (a missing text is an empty one); a chunk without an id is named by its text; "
                    "other keys are kept with the chunk",
                    "as each field",
                )
            )
        value = r.shape.what
        if r.per_chunk:
            value = f"a list, one per chunk: {value}" + (
                f" (in `retrieved`: key `{r.key}`)" if r.key else " (in `retrieved`: the chunk's other keys)"
            )
        lines.append(line(names(r), value, r.doc, r.reads))
    lines.extend(line(names(r), r.shape.what, r.doc, r.reads) for r in KEPT)
    return "\n".join(lines) + "\n"
