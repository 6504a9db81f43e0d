"""A sample set: read from a file, records or a frame (each sample through :func:`.schema.parse`),
written back (:meth:`Samples.to_records`, :meth:`Samples.write`), and seen as qrels, a run and the
side data the measures read. The set's notes count what reading met (see :class:`.schema.Tally`).

The excerpt hint (use ``method=containment``) fires only where the references are excerpts of the
chunks: reference contexts that equal no chunk but are held in one outnumber those that equal a
chunk exactly. Where references are whole passages (most equal a retrieved text, as on MS MARCO),
one held in another chunk is a near-duplicate passage, not an excerpt: containment would credit a
chunk that is not a reference, so no hint is given."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..._errors import ConfigError, EmptyInputError, FormatError, InputError
from ..labels import of_samples
from ..model import Qrels, Run
from ..writers import write_text
from .fields import FAST, Sample
from .files import csv_text, frame_records, jsonl_text, read_csv, read_jsonl
from .notes import BY_POSITION, notes_of
from .ragas import from_dataset, ragas_record, to_dataset
from .reader import Tally
from .schema import parse, record

__all__ = ["BY_POSITION", "PLACEHOLDER", "Samples"]

#: the judgment that keeps a sample without references but with other labels (a judge's claims,
#: relevance or nuggets, facets, citations) in the query set: grade 0 of a chunk no list holds
PLACEHOLDER = "(no reference)"

_RETRIEVED = ("retrieved", "retrieved_ids", "retrieved_context_ids", "retrieved_contexts", "contexts")
_QID = ("query_id", "qid", "id")


@dataclass(frozen=True, repr=False)
class Samples:
    """A sample set: one run of a RAG pipeline with its references (fields: the README's sample section).

    >>> s = Samples.from_records([
    ...     {"query_id": "q1", "retrieved_ids": ["a", "b", "c"], "reference_ids": ["a", "c", "z"]},
    ...     {"query_id": "q2", "retrieved": [{"id": "d", "score": 0.9}, {"id": "e", "score": 0.4}], "grades": {"e": 2}},
    ... ], name="rag")
    >>> s.qrels().to_dict(), s.run().to_dict()
    ({'q1': {'a': 1, 'c': 1, 'z': 1}, 'q2': {'e': 2}}, {'q1': {'a': 3.0, 'b': 2.0, 'c': 1.0}, 'q2': {'d': 0.9, 'e': 0.4}})
    >>> s.to_records()[1]
    {'query_id': 'q2', 'retrieved_ids': ['d', 'e'], 'retrieved_scores': [0.9, 0.4], 'grades': {'e': 2}}
    """

    samples: Sequence[Sample]
    name: str = "samples"
    source: str = "<samples>"
    notes: tuple[str, ...] = field(default=())
    #: what the references are (a :class:`~ctxeval.LabelKind`): binary for reference ids or
    #: exact-text reference contexts, graded for grades; None: inferred from the samples' judgments_from
    labels: Any = None
    #: no sample gave a query_id: the samples are named line-1, line-2, ... by position (read beside
    #: other sets, they are paired by their questions: :mod:`.across`)
    by_position: bool = False

    def __post_init__(self) -> None:
        if self.labels is None:
            object.__setattr__(self, "labels", _labels_of(self))

    def __len__(self) -> int:
        return len(self.samples)

    def __repr__(self) -> str:
        """Short, whatever the set's size (the samples and their texts stay out of it).

        >>> Samples.from_records([{"query_id": "q1", "retrieved_ids": ["a"], "reference_ids": ["a"]}], name="rag")
        Samples('rag', 1 samples from <samples>; labels: binary (reference_ids in <samples>); 1 notes)
        """
        kind = self.labels.kind + (f" ({self.labels.origin})" if self.labels.origin else "")
        return (
            f"Samples({self.name!r}, {len(self)} samples from {self.source}; labels: {kind}; {len(self.notes)} notes)"
        )

    # --- reading ------------------------------------------------------------------------------------
    @classmethod
    def from_jsonl(
        cls, path: str | os.PathLike[str], *, name: str | None = None, duplicates: str = "error", fast: bool = True
    ) -> Samples:
        """From a JSON-lines file, one sample object per line (blank lines are skipped). A plain file
        (ids, scores, references, question, category) is decoded column-wise
        (a columnar fast path); ``fast=False`` reads every file line by line, the reference
        that reader is tested against."""
        p = Path(path)
        stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
        _check_duplicates(duplicates)
        if fast and p.is_file():
            from .fast import read

            columnar = read(p)
            if columnar is not None:
                return cls._from_columnar(columnar, name or stem, str(p))
        tally = Tally()
        return cls._build(read_jsonl(p, duplicates, tally), name or stem, str(p), duplicates, tally)

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
        _check_duplicates(duplicates)
        return cls._build(enumerate(records, start=1), name, source, duplicates, Tally())

    @classmethod
    def from_frame(
        cls, frame: Any, *, name: str = "samples", source: str = "<samples frame>", duplicates: str = "error"
    ) -> Samples:
        """From a polars or pandas frame with one sample per row (list columns for the lists; pandas'
        missing values are absent fields)."""
        _check_duplicates(duplicates)
        return cls._build(
            list(enumerate(frame_records(frame), start=1)), name, source, duplicates, Tally(), kind="column"
        )

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], *, name: str | None = None, duplicates: str = "error") -> Samples:
        """From a file, by its suffix: ``.parquet`` (list and struct columns), ``.csv`` / ``.tsv`` (a list
        or object field is a JSON text in its cell, e.g. ``["c1", "c7"]``; line numbers count the
        header as line 1), anything else JSON lines (RAGAS's ``to_jsonl`` and ``to_csv`` exports
        read as they are)."""
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix not in (".parquet", ".csv", ".tsv"):
            return cls.from_jsonl(p, name=name, duplicates=duplicates)
        _check_duplicates(duplicates)
        if not p.exists():
            raise InputError(f"{p}: no such file")
        tally = Tally()
        if suffix == ".parquet":
            import polars as pl

            try:
                rows = frame_records(pl.read_parquet(p))
            except (pl.exceptions.PolarsError, OSError) as exc:
                raise InputError(f"{p}: cannot read as parquet: {str(exc).splitlines()[0]}") from None
            records = list(enumerate(rows, start=1))
        else:
            records = read_csv(p, "\t" if suffix == ".tsv" else ",", duplicates, tally)
        return cls._build(records, name or p.stem, str(p), duplicates, tally, kind="column")

    @classmethod
    def from_ragas(
        cls, dataset: Any, *, name: str = "ragas", source: str = "<ragas dataset>", duplicates: str = "error"
    ) -> Samples:
        """From a RAGAS ``EvaluationDataset`` or a Hugging Face ``datasets.Dataset`` (anything whose
        ``to_list()`` gives one mapping per sample; no dependency on either package): RAGAS's names
        read as the README's sample section says."""
        _check_duplicates(duplicates)
        return cls._build(list(enumerate(from_dataset(dataset, source), start=1)), name, source, duplicates, Tally())

    @classmethod
    def coerce(cls, obj: Any, *, name: str | None = None, duplicates: str = "error") -> Samples:
        """A :class:`Samples`, a sample file's path, a list of sample mappings, a frame, or a RAGAS
        ``EvaluationDataset`` (or any dataset with ``to_list()``)."""
        if isinstance(obj, Samples):
            return obj
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_path(obj, name=name, duplicates=duplicates)
        if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
            return cls.from_records(obj, name=name or "samples", duplicates=duplicates)
        if callable(getattr(obj, "to_list", None)) and not hasattr(obj, "to_dicts"):  # (a polars frame has both)
            return cls.from_ragas(obj, name=name or "ragas", duplicates=duplicates)
        if hasattr(obj, "to_dicts") or hasattr(obj, "to_dict"):
            return cls.from_frame(obj, name=name or "samples", duplicates=duplicates)
        raise InputError(
            "samples must be a sample file's path, a list of sample mappings, a frame or a RAGAS dataset, "
            f"got {type(obj).__name__}"
        )

    @classmethod
    def _from_columnar(cls, columnar: Any, name: str, source: str) -> Samples:
        from .fast import run_columns, tally

        cols, scores, t = run_columns(columnar)
        tally(columnar, t)
        return cls(_Lazy(columnar, cols, scores), name, source, tuple(notes_of(source, t, generated=0, samples=())))

    @classmethod
    def _build(
        cls,
        records: Iterable[tuple[int, Any]],
        name: str,
        source: str,
        duplicates: str,
        tally: Tally,
        kind: str = "field",
    ) -> Samples:
        """The samples of ``(line, object)`` pairs, parsed one at a time (a file's lines are never all
        held as objects). The first sample decides whether samples are named by position (it has no
        query id) or by their query ids (every one must have one)."""
        out: list[Sample] = []
        seen: dict[str, int] = {}
        keys: set[str] = set()
        generate: bool | None = None
        first_line = 0
        for pos, (line, rec) in enumerate(records, start=1):
            if not isinstance(rec, Mapping):
                raise FormatError(source, line, f"a sample must be a JSON object, got {type(rec).__name__}")
            has_qid = any(k in rec for k in _QID)
            if generate is None:
                generate, first_line = not has_qid, line
            elif generate and has_qid:
                raise FormatError(
                    source, line, f"a query_id here but none in the sample at line {first_line}: give every sample one"
                )
            keys.update(rec)
            sample = parse(rec, source, line, f"line-{pos}" if generate else None, duplicates, tally)
            if sample.query_id in seen:
                raise FormatError(
                    source,
                    line,
                    f"query_id {sample.query_id!r} was already given by the sample at line {seen[sample.query_id]}",
                )
            seen[sample.query_id] = line
            out.append(sample)
        if not out:
            raise EmptyInputError(f"{source}: no samples")
        if not keys.intersection(_RETRIEVED):
            raise InputError(
                f"{source}: no sample gives the retrieved chunks (retrieved, retrieved_ids or retrieved_contexts; "
                f"RAGAS: retrieved_context_ids); the {kind}s are: {', '.join(sorted(map(str, keys))) or 'none'}"
            )
        notes = tuple(notes_of(source, tally, len(out) if generate else 0, out))
        return cls(tuple(out), name, source, notes, by_position=bool(generate))

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

    # --- writing ------------------------------------------------------------------------------------
    def to_records(self, schema: str = "ctxeval") -> list[dict[str, Any]]:
        """Each sample as the JSON object it reads back from: ``schema="ctxeval"`` the format's names,
        ``"ragas"`` RAGAS's names with ctxeval's other fields beside them; nothing is lost either way."""
        if schema == "ragas":
            return [ragas_record(s) for s in self.samples]
        if schema != "ctxeval":
            raise ConfigError(f"schema must be 'ctxeval' or 'ragas', got {schema!r}")
        return [record(s) for s in self.samples]

    def write(self, path: str | os.PathLike[str], *, schema: str = "ctxeval") -> None:
        """Write the set to ``path`` (atomically) by its suffix: ``.csv`` / ``.tsv`` (lists and objects as
        JSON text in their cells), anything else JSON lines; ``schema="ragas"`` under RAGAS's names
        (``EvaluationDataset.from_jsonl`` reads the JSON lines)."""
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix == ".parquet":
            raise ConfigError(
                f"{p}: ctxeval writes sample sets as JSON lines, CSV or TSV; for Parquet, write its records with "
                "polars: polars.DataFrame(samples.to_records()).write_parquet(path) (read back as they were)"
            )
        recs = self.to_records(schema)
        text = csv_text(recs, "\t" if suffix == ".tsv" else ",") if suffix in (".csv", ".tsv") else jsonl_text(recs)
        write_text(p, text)

    def to_ragas(self) -> Any:
        """The set as a RAGAS ``EvaluationDataset`` (needs ragas). Its samples hold RAGAS's fields only
        (question, texts, ids, references, response, reference answer): query ids, scores, grades and
        labels stay in :meth:`write` ``(path, schema="ragas")``."""
        return to_dataset(self.to_records("ragas"))

    # --- conversions --------------------------------------------------------------------------------
    def qrels(self) -> Any:
        """The judgments: each sample's grades, or its reference ids at grade 1 (samples without
        either have no judgments, and so are left out of every measure, as unjudged queries are)."""
        if isinstance(self.samples, _Lazy) and self.samples.columnar.qrels is not None:
            return self.samples.columnar.qrels.with_labels(self.labels)
        cols, _, _ = Qrels._of_frame(self.qrels_frame(), self.source, "error")
        return Qrels(cols, self.source, labels=self.labels)

    def qrels_frame(self) -> Any:
        """The judgments as a polars frame (query_id, doc_id, relevance); an error when there are none."""
        import polars as pl

        if isinstance(self.samples, _Lazy):
            from .fast import qrels_rows

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
        """The retrieved lists as a run, ranked by list order (see :class:`~ctxeval.Samples`); a set
        where no sample retrieved anything is a run without rows."""
        import polars as pl

        if isinstance(self.samples, _Lazy):
            return Run(self.samples.run_cols, name or self.name, self.source, samples=self)
        have = [s for s in self.samples if s.retrieved_ids]
        if not have:
            empty = Run.empty(name or self.name, self.source)
            return Run(empty.columns, empty.name, empty.source, samples=self)
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

    def locations(self) -> dict[str, tuple[str, int, int]]:
        """Where each retrieved chunk lies: ``{chunk id: (document, start, end)}`` (offsets in Unicode
        code points, end exclusive), from the samples that give ``retrieved_documents``,
        ``retrieved_starts`` and ``retrieved_ends`` (or a ``retrieved`` object's ``document``, ``start``
        and ``end``); {} when none does. A chunk placed differently by two samples is an error naming
        both. No measure reads them yet: this is the chunk table they make.

        >>> Samples.from_records([{"query_id": "q1", "retrieved": [
        ...     {"id": "c1", "document": "d1", "start": 0, "end": 120},
        ...     {"id": "c2", "document": "d1", "start": 100, "end": 220}]}]).locations()
        {'c1': ('d1', 0, 120), 'c2': ('d1', 100, 220)}
        """
        out: dict[str, tuple[str, int, int]] = {}
        where: dict[str, str] = {}
        for s in self.samples:
            if s.retrieved_documents is None or s.retrieved_starts is None or s.retrieved_ends is None:
                continue
            for d, *place in zip(s.retrieved_ids, s.retrieved_documents, s.retrieved_starts, s.retrieved_ends):
                if out.setdefault(d, tuple(place)) != tuple(place):  # type: ignore[arg-type]
                    raise InputError(
                        f"{self.source}: chunk {d!r} lies at {out[d]} in query {where[d]!r} but at {tuple(place)} in "
                        f"query {s.query_id!r}: a chunk has one place (document, start, end)"
                    )
                where.setdefault(d, s.query_id)
        return out


def _check_duplicates(duplicates: str) -> None:
    if duplicates not in ("error", "first"):
        raise InputError(f"duplicates must be 'error' or 'first' for samples, got {duplicates!r}")


def _has_labels(s: Sample) -> bool:
    return any(x is not None for x in (s.claims, s.judged, s.nuggets, s.facets, s.citations))


def _labels_of(st: Samples) -> Any:
    """The kind of a set's references (:func:`ctxeval._io.labels.of_samples`) from where each sample's
    judgments came from: its grades, its reference ids, or its reference contexts matched by text."""
    if isinstance(st.samples, _Lazy):  # the columnar reader: grades and reference ids only
        c = st.samples.columnar
        graded = c.grades["s"].n_unique() if c.grades.height else 0
        refs = int((c.frame["reference_ids"].list.len().fill_null(0) > 0).sum()) if graded < len(c) else 0
        values = c.grades["relevance"].unique().to_list() if c.grades.height else ()
        return of_samples(st.source, graded, refs, 0, values)
    where = [s.judgments_from for s in st.samples]
    values = {g for s in st.samples if s.judgments_from == "grades" for g in (s.grades or {}).values()}
    counts = (where.count("grades"), where.count("reference_ids"), where.count("reference_contexts"))
    return of_samples(st.source, *counts, values)


#: the columnar reader's fields a sample takes as read (the others make its run and its judgments)
_AS_READ = tuple(r for r in FAST if r.column == "string" and r.attr != "query_id")


class _Lazy(Sequence[Sample]):
    """The samples of a file the columnar reader read: the run's and the qrels' rows at hand, the
    :class:`Sample` values built on first use (measures reading facets or texts, strata, writing)."""

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
                ref_ids = tuple(rec["reference_ids"]) if rec["reference_ids"] is not None else None
                refs = dict.fromkeys(ref_ids or (), 1)
                given = tuple(rec["retrieved_scores"]) if rec["retrieved_scores"] is not None else None
                out.append(
                    Sample(
                        query_id=rec["query_id"],
                        retrieved_ids=tuple(rec["retrieved_ids"] or ()),
                        retrieved_scores=tuple(scores[at : at + n]),
                        grades=(graded or refs) or None,
                        reference_ids=ref_ids,
                        judgments_from="grades" if graded else ("reference_ids" if refs else None),
                        given_scores=given,
                        **{r.attr: rec[r.name] for r in _AS_READ},
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
