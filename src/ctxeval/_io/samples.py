"""Sample sets: RAG evaluation without TREC files.

Most RAG teams hold, per question, the chunks their pipeline retrieved and some of: the ids of the
reference chunks, graded ids, the reference answer. A *sample set* is that, one sample per query, read
from JSON lines (one object per line), a list of dicts, or a pandas / polars frame. Each sample set is
one run of a pipeline; its references are the judgments. Files: JSON lines, Parquet (list columns),
CSV / TSV (list fields as JSON text in their cells), see :meth:`Samples.from_path`.

Fields of a sample (RAGAS's own names in brackets are read as well):

* ``query_id`` (or ``qid``, ``id``): missing everywhere, the samples are named ``line-1``, ``line-2``, ...
  by position and the set says so; missing on some samples only, an error;
* ``question`` [``user_input``];
* the retrieved chunks, in rank order: ``retrieved`` as a list of ``{"id", "text"?, "score"?}`` or of
  ids, or the parallel lists ``retrieved_ids`` [``retrieved_context_ids``], ``retrieved_contexts``,
  ``retrieved_scores``. The list order is the ranking (what the LLM reads). Scores that rank the
  chunks in list order under the evaluation's rule (decreasing as float32, ties by id descending) are
  kept as the run's scores; otherwise (a reranker's order over first-stage scores)
  the list is ranked as given, with scores ``n, n - 1, ..., 1``, and the set notes how many samples
  that concerns. Chunks given by their text only (RAGAS's ``retrieved_contexts`` without ids) are
  named by a hash of the text (:func:`text_id`), so the same text is the same chunk across runs;
* ``reference_ids`` [``reference_context_ids``]: relevant, grade 1; ``grades``: ``{id: grade}`` (wins
  over ``reference_ids``); ``reference_contexts`` (without ids or grades: the judgments are the
  retrieved chunks whose text equals one exactly, and ``method=similarity`` matches them fuzzily),
  ``pool`` (the first-stage candidates, the run's retrieval pool for PROC), ``reference_answer`` [``reference``], ``response``,
  ``category``: kept for the measures and strata that read them; ``facets`` (``[{"name", "ids"}]``,
  the aspects an answer needs and the chunks that cover each) for ``CoverageRecall``; ``citations``
  (the chunk ids the response cites) for ``AttributionRate``; ``nuggets`` (``[{"text", "importance":
  "vital"|"okay", "supported_by": [ids], "partially_supported_by": [ids]}]``) for ``NuggetRecall``.

A chunk id given twice in one retrieved list is an error naming the sample's line and both positions
(``duplicates="first"`` keeps the first); so is a query id given by two samples. Every error names the
source, the line (the sample's position, from 1) and the field.

(~800 lines on purpose: one sample schema with its RAGAS aliases, read from four sources by one
validation, and the sample set's views as qrels, runs and side data, which must agree field by field.)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import EmptyInputError, FormatError, InputError
from .labels import of_sample_grades, of_samples, union

__all__ = ["Sample", "Samples"]

_QID = ("query_id", "qid", "id")
_QUESTION = ("question", "user_input")
_IDS = ("retrieved_ids", "retrieved_context_ids")
_REF_IDS = ("reference_ids", "reference_context_ids")
_ANSWER = ("reference_answer", "reference")
#: the fields a CSV cell holds as JSON text
_JSON_CELLS = frozenset(
    {
        "retrieved",
        "retrieved_ids",
        "retrieved_context_ids",
        "retrieved_contexts",
        "retrieved_scores",
        "reference_ids",
        "reference_context_ids",
        "reference_contexts",
        "grades",
        "facets",
        "nuggets",
        "citations",
        "pool",
    }
)


@dataclass(frozen=True)
class Sample:
    """One query of a sample set (see the module docstring)."""

    query_id: str
    retrieved_ids: tuple[str, ...]
    retrieved_scores: tuple[float, ...]
    question: str | None = None
    retrieved_texts: tuple[str, ...] | None = None
    grades: Mapping[str, int] | None = None  #: the judgments: given grades, or reference ids at grade 1
    reference_contexts: tuple[str, ...] | None = None
    reference_answer: str | None = None
    response: str | None = None
    category: str | None = None
    facets: tuple[tuple[str, tuple[str, ...]], ...] | None = None  #: (name, chunk ids) per facet
    citations: tuple[str, ...] | None = None  #: the chunk ids the response cites
    #: (text, vital, supporting chunk ids, partially supporting chunk ids) per nugget
    nuggets: tuple[tuple[str, bool, tuple[str, ...], tuple[str, ...]], ...] | None = None
    pool: tuple[str, ...] | None = None  #: the first-stage candidates the retrieved list was chosen from
    #: the reference answer's claims, from a judge: (text, supporting chunk ids, undecided chunk ids)
    claims: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] | None = None
    #: a judge's relevance of the chunks to the reference answer: (relevant ids, undecided ids)
    judged: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    #: who wrote the labels (``ctxeval judge``): ({judge, model, heuristic, task}, ...)
    labelled_by: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True)
class Samples:
    """A sample set: one run of a RAG pipeline with its references.

    >>> s = Samples.from_records([
    ...     {"query_id": "q1", "retrieved_ids": ["a", "b", "c"], "reference_ids": ["a", "c", "z"]},
    ...     {"query_id": "q2", "retrieved": [{"id": "d", "score": 0.9}, {"id": "e", "score": 0.4}], "grades": {"e": 2}},
    ... ], name="rag")
    >>> s.qrels().to_dict(), s.run().to_dict()
    ({'q1': {'a': 1, 'c': 1, 'z': 1}, 'q2': {'e': 2}}, {'q1': {'a': 3.0, 'b': 2.0, 'c': 1.0}, 'q2': {'d': 0.9, 'e': 0.4}})
    """

    samples: Sequence[Sample]
    name: str = "samples"
    source: str = "<samples>"
    notes: tuple[str, ...] = field(default=())
    #: what the references are (:class:`~ctxeval._io.labels.LabelKind`): binary for reference ids or
    #: exact-text reference contexts, graded for grades; None: inferred from the samples
    labels: Any = None

    def __post_init__(self) -> None:
        if self.labels is None:
            object.__setattr__(self, "labels", of_sample_grades(self.source, [s.grades for s in self.samples]))

    def __len__(self) -> int:
        return len(self.samples)

    # --- reading ------------------------------------------------------------------------------------
    @classmethod
    def from_jsonl(
        cls, path: str | os.PathLike[str], *, name: str | None = None, duplicates: str = "error", fast: bool = True
    ) -> Samples:
        """From a JSON-lines file, one sample object per line (blank lines are skipped). A plain file
        (ids, scores, references, question, category) is decoded column-wise
        (:mod:`ctxeval._io.samples_fast`); ``fast=False`` reads every file line by line, the reference
        that reader is tested against."""
        p = Path(path)
        stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
        if fast and p.is_file() and duplicates in ("error", "first"):
            from .samples_fast import read

            columnar = read(p)
            if columnar is not None:
                return cls._from_columnar(columnar, name or stem, str(p))
        try:
            text = p.read_text(encoding="utf-8-sig")
        except FileNotFoundError:
            raise InputError(f"{p}: no such file") from None
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        records: list[tuple[int, Any]] = []
        for no, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                records.append((no, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise FormatError(str(p), no, f"not valid JSON ({exc.msg})", line) from None
        return cls._build(records, name or stem, str(p), duplicates)

    @classmethod
    def from_records(
        cls,
        records: Iterable[Mapping[str, Any]],
        *,
        name: str = "samples",
        source: str = "<samples>",
        duplicates: str = "error",
    ) -> Samples:
        """From sample mappings (a list of dicts, or the rows of a frame: ``frame.to_dicts()`` /
        ``frame.to_dict("records")``); a record's line is its position, from 1."""
        return cls._build(list(enumerate(records, start=1)), name, source, duplicates)

    @classmethod
    def from_frame(
        cls, frame: Any, *, name: str = "samples", source: str = "<samples frame>", duplicates: str = "error"
    ) -> Samples:
        """From a polars or pandas frame with one sample per row (list columns for the lists)."""
        rows = frame.to_dicts() if hasattr(frame, "to_dicts") else frame.to_dict("records")
        return cls.from_records(rows, name=name, source=source, duplicates=duplicates)

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], *, name: str | None = None, duplicates: str = "error") -> Samples:
        """From a file, by its suffix: ``.parquet`` (list and struct columns), ``.csv`` / ``.tsv`` (a list
        or object field is a JSON text in its cell, e.g. ``["c1", "c7"]``; line numbers count the
        header as line 1), anything else JSON lines."""
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix not in (".parquet", ".csv", ".tsv"):
            return cls.from_jsonl(p, name=name, duplicates=duplicates)
        import polars as pl

        if not p.exists():
            raise InputError(f"{p}: no such file")
        try:
            if suffix == ".parquet":
                frame = pl.read_parquet(p)
            else:
                frame = pl.read_csv(p, separator="\t" if suffix == ".tsv" else ",", infer_schema=False)
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"{p}: cannot read as {suffix[1:]}: {str(exc).splitlines()[0]}") from None
        rows = frame.to_dicts()
        first = 1
        if suffix != ".parquet":
            first = 2  # the header is line 1
            for no, row in enumerate(rows, start=first):
                for key in _JSON_CELLS.intersection(row):
                    cell = row[key]
                    if cell is None or cell == "":
                        row[key] = None
                        continue
                    try:
                        row[key] = json.loads(cell)
                    except json.JSONDecodeError as exc:
                        raise FormatError(str(p), no, f"{key}: not valid JSON ({exc.msg})", cell) from None
                for key in (
                    "query_id",
                    "qid",
                    "id",
                    "question",
                    "user_input",
                    "response",
                    "reference",
                    "reference_answer",
                ):
                    if row.get(key) == "":
                        row[key] = None
        return cls._build(list(enumerate(rows, start=first)), name or p.stem, str(p), duplicates)

    @classmethod
    def coerce(cls, obj: Any, *, name: str | None = None, duplicates: str = "error") -> Samples:
        """A :class:`Samples`, a JSON-lines path, a list of sample mappings or a frame."""
        if isinstance(obj, Samples):
            return obj
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_path(obj, name=name, duplicates=duplicates)
        if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
            return cls.from_records(obj, name=name or "samples", duplicates=duplicates)
        if hasattr(obj, "to_dicts") or hasattr(obj, "to_dict"):
            return cls.from_frame(obj, name=name or "samples", duplicates=duplicates)
        raise InputError(
            f"samples must be a JSON-lines path, a list of sample mappings or a frame, got {type(obj).__name__}"
        )

    @classmethod
    def _from_columnar(cls, columnar: Any, name: str, source: str) -> Samples:
        from .samples_fast import run_columns

        cols, scores, reordered, unscored = run_columns(columnar)
        lazy = _Lazy(columnar, cols, scores)
        graded = columnar.grades["s"].n_unique() if columnar.grades.height else 0
        refs = int((columnar.frame["reference_ids"].list.len().fill_null(0) > 0).sum()) if graded < len(columnar) else 0
        labels = of_samples(source, graded, refs, 0)
        return cls(lazy, name, source, tuple(_order_notes(source, reordered, unscored)), labels)

    @classmethod
    def _build(cls, records: list[tuple[int, Any]], name: str, source: str, duplicates: str) -> Samples:
        if duplicates not in ("error", "first"):
            raise InputError(f"duplicates must be 'error' or 'first' for samples, got {duplicates!r}")
        if not records:
            raise EmptyInputError(f"{source}: no samples")
        named = [any(k in rec for k in _QID) for _, rec in records if isinstance(rec, Mapping)]
        generate = not any(named)
        out: list[Sample] = []
        seen: dict[str, int] = {}
        reordered = unscored = text_named = text_refs = graded = 0
        for pos, (line, rec) in enumerate(records, start=1):
            if not isinstance(rec, Mapping):
                raise FormatError(source, line, f"a sample must be a JSON object, got {type(rec).__name__}")
            sample, by_order, by_hash, refs = _sample(
                rec, source, line, f"line-{pos}" if generate else None, duplicates
            )
            reordered += by_order == 1
            unscored += by_order == 2
            text_named += by_hash
            text_refs += refs
            graded += (
                bool(sample.grades) and not refs and isinstance(rec.get("grades"), Mapping) and bool(rec["grades"])
            )
            if sample.query_id in seen:
                raise FormatError(
                    source,
                    line,
                    f"query_id {sample.query_id!r} was already given by the sample at line {seen[sample.query_id]}",
                )
            seen[sample.query_id] = line
            out.append(sample)
        notes = []
        if generate:
            notes.append(
                f"{source}: no sample has a query_id: the samples are named line-1 .. line-{len(out)} by position"
            )
        notes.extend(_order_notes(source, reordered, unscored))
        heuristic = sorted(
            {f"{x.get('task')} by {x.get('judge')}" for s in out for x in s.labelled_by if x.get("heuristic")}
        )
        if heuristic:
            n = sum(any(x.get("heuristic") for x in s.labelled_by) for s in out)
            notes.append(
                f"{source}: {n} samples carry labels from a heuristic, not a model ({'; '.join(heuristic)}): "
                "measures reading them are a first look, not a verdict"
            )
        if text_named:
            notes.append(
                f"{source}: {text_named} samples give chunk texts without ids: each chunk is named by a hash of "
                "its text (t + 16 hex digits), so the same text is the same chunk across runs"
            )
        if text_refs:
            notes.append(
                f"{source}: {text_refs} samples give reference_contexts but no reference_ids or grades: a retrieved "
                "chunk is relevant (grade 1) when its text equals a reference context exactly; "
                "ContextPrecision/ContextRecall(method=similarity) match by string similarity instead"
            )
        n_refs = sum(1 for s in out if s.grades) - graded - text_refs
        return cls(tuple(out), name, source, tuple(notes), of_samples(source, graded, n_refs, text_refs))

    @classmethod
    def from_trec(
        cls,
        qrels: Any,
        run: Any,
        *,
        passages: Mapping[str, str] | None = None,
        questions: Mapping[str, str] | None = None,
        depth: int | None = None,
    ) -> Samples:
        """The other way: a run and its qrels (anything :meth:`Run.coerce` / :meth:`Qrels.coerce`
        read) as a sample set, one sample per query of the run, its list in the evaluation's ranking
        (cut at ``depth``), the judgments as ``grades``; ``passages`` (chunk id -> text) and
        ``questions`` (query id -> text) fill in the texts."""
        from .model import Qrels, Run

        r = Run.coerce(run)
        q = Qrels.coerce(qrels).to_dict()
        rows = r.ranked_rows()
        c = r.columns
        ranked: dict[str, list[tuple[str, float]]] = {}
        for qid, d, s in zip(c.query_of_rows()[rows].tolist(), c.doc.to_list(rows), c.values[rows].tolist()):
            ranked.setdefault(str(qid), []).append((d, float(s)))
        records = []
        for qid, docs in ranked.items():
            top = docs if depth is None else docs[:depth]
            rec: dict[str, Any] = {
                "query_id": qid,
                "retrieved": [
                    {"id": d, "score": s, **({"text": passages[d]} if passages and d in passages else {})}
                    for d, s in top
                ],
            }
            if questions and qid in questions:
                rec["question"] = questions[qid]
            if q.get(qid):
                rec["grades"] = q[qid]
            records.append(rec)
        return cls.from_records(records, name=r.name, source=r.source)

    # --- conversions --------------------------------------------------------------------------------
    def qrels(self) -> Any:
        """The judgments: each sample's grades, or its reference ids at grade 1 (samples without
        either have no judgments, and so are left out of every measure, as unjudged queries are)."""
        from .model import Qrels

        if isinstance(self.samples, _Lazy) and self.samples.columnar.qrels is not None:
            return self.samples.columnar.qrels.with_labels(self.labels)
        cols, _, _ = Qrels._of_frame(self.qrels_frame(), self.source, "error")
        return Qrels(cols, self.source, labels=self.labels)

    def qrels_frame(self) -> Any:
        """The judgments as a polars frame (query_id, doc_id, relevance); an error when there are none."""
        import polars as pl

        if isinstance(self.samples, _Lazy):
            from .samples_fast import qrels_rows

            frame = qrels_rows(self.samples.columnar)
        else:
            have = [s for s in self.samples if s.grades]
            labelled = [s.query_id for s in self.samples if not s.grades and _has_labels(s)]
            qids: list[str] = [s.query_id for s in have for _ in s.grades or ()] + labelled
            docs: list[str] = [d for s in have for d in s.grades or ()] + [PLACEHOLDER] * len(labelled)
            grades: list[int] = [g for s in have for g in (s.grades or {}).values()] + [0] * len(labelled)
            frame = pl.DataFrame(
                {"query_id": qids, "doc_id": docs, "relevance": grades},
                schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64},
            )
        if frame.height == 0:
            raise EmptyInputError(
                f"{self.source}: no sample gives reference_ids, grades, reference_contexts or labels (claims, judged, "
                "nuggets, facets, citations): nothing to evaluate the retrieval against"
            )
        return frame

    def run(self, name: str | None = None) -> Any:
        """The retrieved lists as a run, ranked by list order (see the module docstring)."""
        import polars as pl

        from .model import Run

        if isinstance(self.samples, _Lazy):
            return Run(self.samples.run_cols, name or self.name, self.source, samples=self)
        have = [s for s in self.samples if s.retrieved_ids]
        frame = pl.DataFrame(
            {
                "query_id": [s.query_id for s in have for _ in s.retrieved_ids],
                "doc_id": [d for s in have for d in s.retrieved_ids],
                "score": [v for s in have for v in s.retrieved_scores],
            },
            schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64},
        )
        r = Run.from_frame(frame, name=name or self.name, source=self.source)
        return Run(r.columns, r.name, r.source, samples=self)

    def pool(self) -> Any:
        """The retrieval pool the samples give (their ``pool`` lists, as a run scored n .. 1 in list
        order), or None when no sample gives one. A sample without a pool list is its own pool (its
        retrieved chunks), as a run without a pool is."""
        import polars as pl

        from .model import Run

        if isinstance(self.samples, _Lazy) or not any(s.pool is not None for s in self.samples):
            return None  # the columnar reader reads no pool field
        qid: list[str] = []
        doc: list[str] = []
        for s in self.samples:
            docs = list(dict.fromkeys(s.pool if s.pool is not None else s.retrieved_ids))
            qid.extend([s.query_id] * len(docs))
            doc.extend(docs)
        frame = pl.DataFrame({"query_id": qid, "doc_id": doc}, schema={"query_id": pl.String, "doc_id": pl.String})
        frame = frame.with_columns(
            score=(pl.len().over("query_id") - pl.int_range(pl.len()).over("query_id")).cast(pl.Float64)
        )
        return Run.from_frame(frame, name=f"{self.name} pool", source=self.source)

    def categories(self) -> dict[str, str]:
        """Each sample's category (strata of a comparison), by query id."""
        if isinstance(self.samples, _Lazy):
            f = self.samples.columnar.frame.select("query_id", "category").drop_nulls()
            return dict(zip(f["query_id"].to_list(), f["category"].to_list()))
        return {s.query_id: s.category for s in self.samples if s.category is not None}

    def query_texts(self) -> dict[str, str]:
        return {s.query_id: s.question for s in self.samples if s.question is not None}


#: the judgment that keeps a sample without references but with other labels (a judge's claims,
#: relevance or nuggets, facets, citations) in the query set: grade 0 of a chunk no list holds
PLACEHOLDER = "(no reference)"


def _has_labels(s: Sample) -> bool:
    return any(x is not None for x in (s.claims, s.judged, s.nuggets, s.facets, s.citations))


def union_qrels(sets: Sequence[Samples]) -> Any:
    """The judgments of several sample sets: the union of their references, which must agree where
    they meet (a (query, chunk) pair graded differently by two sets is an error naming both)."""
    import polars as pl

    from .._errors import ConfigError
    from .model import Qrels

    if len(sets) == 1:
        return sets[0].qrels()
    frames = [st.qrels_frame().with_columns(pl.lit(k, dtype=pl.Int64).alias("set")) for k, st in enumerate(sets)]
    both = pl.concat(frames).unique(["query_id", "doc_id", "relevance"], keep="first", maintain_order=True)
    clash = both.filter(pl.len().over("query_id", "doc_id") > 1)
    if clash.height:
        a = clash.row(0, named=True)
        b = clash.filter((pl.col("query_id") == a["query_id"]) & (pl.col("doc_id") == a["doc_id"])).row(1, named=True)
        raise ConfigError(
            f"query {a['query_id']!r} chunk {a['doc_id']!r}: grade {a['relevance']} in {sets[a['set']].source} but "
            f"{b['relevance']} in {sets[b['set']].source}; sample sets compared together must share their references"
        )
    source = " + ".join(dict.fromkeys(st.source for st in sets))
    labels = union([st.labels for st in sets])
    return Qrels.from_frame(both.select("query_id", "doc_id", "relevance"), source=source, labels=labels)


def _order_notes(source: str, reordered: int, unscored: int) -> list[str]:
    notes = []
    if reordered:
        notes.append(
            f"{source}: {reordered} samples list scores that would rank their chunks in another order than "
            "the list's (compared as float32, ties by id, as the ranking does): ranked by list order "
            "(scores n .. 1), their scores are not used"
        )
    if unscored:
        notes.append(
            f"{source}: {unscored} samples give no scores: scored n .. 1 by list order, so relative-score "
            "rules (hard negatives, calibrate's tau) read ranks there"
        )
    return notes


class _Lazy(Sequence[Sample]):
    """The samples of a file the columnar reader read: the run's and the qrels' rows at hand, the
    :class:`Sample` values built on first use (measures reading facets or texts, strata)."""

    def __init__(self, columnar: Any, run_cols: Any, scores: Any) -> None:
        self.columnar, self.run_cols, self.scores = columnar, run_cols, scores
        self._built: tuple[Sample, ...] | None = None

    def _all(self) -> tuple[Sample, ...]:
        if self._built is None:
            f = self.columnar.frame
            lengths = f["retrieved_ids"].list.len().fill_null(0).to_list()
            scores = self.scores.tolist()
            out = []
            at = 0
            by_s: dict[int, dict[str, int]] = {}
            for i, d, g in self.columnar.grades.select("s", "doc_id", "relevance").iter_rows():
                by_s.setdefault(i, {})[d] = g
            for i, (rec, n) in enumerate(zip(f.iter_rows(named=True), lengths)):
                graded = by_s.get(i, {})
                refs = dict.fromkeys(rec["reference_ids"] or (), 1)
                out.append(
                    Sample(
                        rec["query_id"],
                        tuple(rec["retrieved_ids"] or ()),
                        tuple(scores[at : at + n]),
                        question=rec["question"],
                        grades=(graded or refs) or None,
                        category=rec["category"],
                    )
                )
                at += n
            self._built = tuple(out)
        return self._built

    def __len__(self) -> int:
        return len(self.columnar)

    def __getitem__(self, i: Any) -> Any:
        return self._all()[i]

    def __iter__(self) -> Any:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]


def _first(rec: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if k in rec and rec[k] is not None:
            return rec[k]
    return None


def _text_list(value: Any, source: str, line: int, what: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise FormatError(source, line, f"{what} must be a list, got {type(value).__name__}")
    items = tuple(value)
    kinds = set(map(type, items))
    if kinds <= {str}:  # the common case, checked in one C-level pass
        return items
    for i, v in enumerate(items, start=1):
        if not isinstance(v, (str, int)) or isinstance(v, bool):
            raise FormatError(source, line, f"{what}[{i}] must be a string, got {type(v).__name__}")
    return tuple(str(v) for v in items)


def _id_list(value: Any, source: str, line: int, what: str) -> tuple[str, ...] | None:
    """A list of chunk ids: strings (or whole numbers), none empty or with blanks at its ends (the
    rule every run and qrels file follows)."""
    ids = _text_list(value, source, line, what)
    if ids is not None:
        for i, d in enumerate(ids, start=1):
            _check_id(d, source, line, f"{what}[{i}]")
    return ids


def _check_id(d: str, source: str, line: int, what: str) -> None:
    if not d or d != d.strip() or "\x00" in d:
        raise FormatError(source, line, f"{what}: an id must be non-empty, without blanks at its ends, got {d!r}")


def _sample(
    rec: Mapping[str, Any], source: str, line: int, generated: str | None, duplicates: str
) -> tuple[Sample, int, bool, bool]:
    qid = generated if generated is not None else _first(rec, _QID)
    if qid is None:
        raise FormatError(source, line, "no query_id (other samples have one)")
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or str(qid) == "":
        raise FormatError(source, line, f"query_id must be a non-empty string, got {qid!r}")
    _check_id(str(qid), source, line, "query_id")
    ids, texts, scores, named = _retrieved(rec, source, line)
    if len(set(ids)) != len(ids):
        first: dict[str, int] = {}
        keep = []
        for i, d in enumerate(ids):
            if d in first:
                if duplicates == "error":
                    what = "the same chunk text" if named else f"chunk id {d!r}"
                    raise FormatError(
                        source,
                        line,
                        f"retrieved: {what} is given twice (positions {first[d] + 1} and {i + 1}); "
                        "duplicates='first' / --duplicates first keeps the first",
                    )
                continue
            first[d] = i
            keep.append(i)
        ids = [ids[i] for i in keep]
        texts = [texts[i] for i in keep] if texts is not None else None
        scores = [scores[i] for i in keep] if scores is not None else None
    n = len(ids)
    by_order = 0  # 0: scores kept; 1: given but not in list order; 2: none given
    if scores is None or not _ranks_as_listed(ids, scores):
        by_order = 1 if scores is not None else (2 if n else 0)
        scores = [float(n - i) for i in range(n)]
    grades = _grades(rec, source, line)
    ref_contexts = _text_list(rec.get("reference_contexts"), source, line, "reference_contexts")
    by_text = grades is None and bool(ref_contexts)
    if by_text:
        known = dict(zip(texts, ids)) if texts is not None else {}
        grades = {known.get(t) or text_id(t): 1 for t in ref_contexts}  # type: ignore[union-attr]
    question = _first(rec, _QUESTION)
    answer = _first(rec, _ANSWER)
    category = rec.get("category")
    return (
        Sample(
            str(qid),
            tuple(ids),
            tuple(scores),
            question=str(question) if question is not None else None,
            retrieved_texts=tuple(texts) if texts is not None else None,
            grades=grades,
            reference_contexts=ref_contexts,
            reference_answer=str(answer) if answer is not None else None,
            response=str(rec["response"]) if rec.get("response") is not None else None,
            category=str(category) if category is not None else None,
            facets=_facets(rec.get("facets"), source, line),
            citations=_id_list(rec.get("citations"), source, line, "citations"),
            nuggets=_nuggets(rec.get("nuggets"), source, line),
            pool=_id_list(rec.get("pool"), source, line, "pool"),
            claims=_claims(rec.get("claims"), source, line),
            judged=_judged(rec.get("judged"), source, line),
            labelled_by=_labelled_by(rec.get("labelled_by"), source, line),
        ),
        by_order,
        named,
        by_text,
    )


def _ranks_as_listed(ids: list[str], scores: list[float]) -> bool:
    """Whether the scores rank the chunks in list order under the evaluation's rule: decreasing as
    float32, ties broken by chunk id descending (byte-wise)."""
    f32 = array("f", scores)  # rounded to float32 in C, as the ranking compares them
    for i in range(len(f32) - 1):
        a, b = f32[i], f32[i + 1]
        if b > a or (b == a and ids[i + 1].encode("utf-8") > ids[i].encode("utf-8")):
            return False
    return True


def _score(v: Any, source: str, line: int, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        raise FormatError(source, line, f"{where} must be a finite number, got {v!r}")
    return float(v)


def text_id(text: str) -> str:
    """The id of a chunk given by its text only: ``t`` + the first 16 hex digits of its BLAKE2b hash.

    >>> text_id("Paris is the capital of France.")
    'tee6ee5bbaa3d3af8'
    """
    return "t" + hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def _retrieved(
    rec: Mapping[str, Any], source: str, line: int
) -> tuple[list[str], list[str] | None, list[float] | None, bool]:
    """The retrieved ids, texts and scores, and whether some chunk was named by its text."""
    items = rec.get("retrieved")
    if items is not None:
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
            raise FormatError(source, line, f"retrieved must be a list, got {type(items).__name__}")
        ids: list[str] = []
        texts: list[str] = []
        scores: list[float] = []
        has_score = None
        named = any_text = False
        for i, it in enumerate(items, start=1):
            if isinstance(it, Mapping):
                if it.get("id") is None:
                    if not isinstance(it.get("text"), str):
                        raise FormatError(source, line, f"retrieved[{i}] has neither an id nor a text")
                    named = True
                    ids.append(text_id(it["text"]))
                else:
                    ids.append(str(it["id"]))
                    _check_id(ids[-1], source, line, f"retrieved[{i}].id")
                texts.append(str(it.get("text") or ""))
                any_text = any_text or it.get("text") is not None
                scored = it.get("score") is not None
                if has_score is None:
                    has_score = scored
                elif scored != has_score:
                    raise FormatError(source, line, f"retrieved[{i}]: some chunks have a score and others not")
                if scored:
                    scores.append(_score(it["score"], source, line, f"retrieved[{i}].score"))
            elif isinstance(it, (str, int)) and not isinstance(it, bool):
                ids.append(str(it))
                _check_id(ids[-1], source, line, f"retrieved[{i}]")
            else:
                raise FormatError(source, line, f"retrieved[{i}] must be an id or an object with an id")
        return ids, (texts if any_text and len(texts) == len(ids) else None), (scores if has_score else None), named
    id_list = _id_list(_first(rec, _IDS), source, line, "retrieved_ids")
    texts_list = _text_list(rec.get("retrieved_contexts"), source, line, "retrieved_contexts")
    named = False
    if id_list is None:
        if not texts_list:
            return [], None, None, False
        id_list = tuple(map(text_id, texts_list))
        named = True
    if texts_list is not None and len(texts_list) != len(id_list):
        raise FormatError(
            source, line, f"retrieved_contexts has {len(texts_list)} items but retrieved_ids {len(id_list)}"
        )
    raw = rec.get("retrieved_scores")
    scores_out = None
    if raw is not None:
        if isinstance(raw, (str, bytes)) or not isinstance(raw, Iterable):
            raise FormatError(source, line, "retrieved_scores must be a list")
        values = list(raw)
        if set(map(type, values)) <= {float, int} and all(map(math.isfinite, values)):
            scores_out = [float(v) for v in values]  # the common case, without a check per item
        else:
            scores_out = [_score(v, source, line, f"retrieved_scores[{i}]") for i, v in enumerate(values, start=1)]
        if len(scores_out) != len(id_list):
            raise FormatError(
                source, line, f"retrieved_scores has {len(scores_out)} items but retrieved_ids {len(id_list)}"
            )
    return list(id_list), list(texts_list) if texts_list is not None else None, scores_out, named


def _facets(value: Any, source: str, line: int) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """``[{"name", "ids": [...]}]``: the aspects an answer needs, each with the chunks that cover it."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise FormatError(source, line, f"facets must be a list of {{name, ids}} objects, got {type(value).__name__}")
    out = []
    for i, f in enumerate(value, start=1):
        if not isinstance(f, Mapping) or "ids" not in f:
            raise FormatError(source, line, f"facets[{i}] must be an object with ids (and a name)")
        ids = _id_list(f["ids"], source, line, f"facets[{i}].ids") or ()
        out.append((str(f.get("name", f"facet {i}")), ids))
    return tuple(out)


def _nuggets(
    value: Any, source: str, line: int
) -> tuple[tuple[str, bool, tuple[str, ...], tuple[str, ...]], ...] | None:
    """``[{"text", "importance": "vital"|"okay", "supported_by"?: [ids], "partially_supported_by"?: [ids]}]``."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise FormatError(source, line, f"nuggets must be a list of objects, got {type(value).__name__}")
    out = []
    for i, n in enumerate(value, start=1):
        if not isinstance(n, Mapping):
            raise FormatError(source, line, f"nuggets[{i}] must be an object with text and importance")
        imp = n.get("importance", "okay")
        if imp not in ("vital", "okay"):
            raise FormatError(source, line, f"nuggets[{i}].importance must be 'vital' or 'okay', got {imp!r}")
        full = _id_list(n.get("supported_by"), source, line, f"nuggets[{i}].supported_by") or ()
        part = _id_list(n.get("partially_supported_by"), source, line, f"nuggets[{i}].partially_supported_by") or ()
        out.append((str(n.get("text", f"nugget {i}")), imp == "vital", full, part))
    return tuple(out)


def _claims(value: Any, source: str, line: int) -> tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] | None:
    """``[{"text", "supported_by": [ids], "undecided"?: [ids]}]`` (``ctxeval judge claims`` writes it)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise FormatError(source, line, f"claims must be a list of objects, got {type(value).__name__}")
    out = []
    for i, c in enumerate(value, start=1):
        if not isinstance(c, Mapping) or not isinstance(c.get("text"), str):
            raise FormatError(source, line, f"claims[{i}] must be an object with a text")
        full = _id_list(c.get("supported_by"), source, line, f"claims[{i}].supported_by") or ()
        open_ = _id_list(c.get("undecided"), source, line, f"claims[{i}].undecided") or ()
        out.append((c["text"], full, open_))
    return tuple(out)


def _labelled_by(value: Any, source: str, line: int) -> tuple[Mapping[str, Any], ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, Mapping) for x in value):
        raise FormatError(source, line, "labelled_by must be a list of objects {judge, model, heuristic, task}")
    return tuple(dict(x) for x in value)


def _judged(value: Any, source: str, line: int) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``{"relevant": [ids], "undecided"?: [ids]}`` (``ctxeval judge relevance`` writes it)."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or "relevant" not in value:
        raise FormatError(source, line, "judged must be an object {relevant: [ids], undecided: [ids]}")
    rel = _id_list(value["relevant"], source, line, "judged.relevant") or ()
    und = _id_list(value.get("undecided"), source, line, "judged.undecided") or ()
    return rel, und


def _grades(rec: Mapping[str, Any], source: str, line: int) -> dict[str, int] | None:
    given = rec.get("grades")
    if given is not None:
        if not isinstance(given, Mapping):
            raise FormatError(source, line, f"grades must be an object {{id: grade}}, got {type(given).__name__}")
        out = {}
        for k, v in given.items():
            _check_id(str(k), source, line, f"grades key {k!r}")
            if isinstance(v, bool) or not isinstance(v, int):
                raise FormatError(source, line, f"grades[{k!r}] must be a whole number, got {v!r}")
            out[str(k)] = v
        if out:
            return out  # an empty grades object falls back to the reference ids
    refs = _id_list(_first(rec, _REF_IDS), source, line, "reference_ids")
    return dict.fromkeys(refs, 1) if refs else None
