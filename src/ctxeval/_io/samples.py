"""Sample sets: RAG evaluation without TREC files.

Most RAG teams hold, per question, the chunks their pipeline retrieved and some of: the ids of the
reference chunks, graded ids, the reference answer. A *sample set* is that, one sample per query, read
from JSON lines (one object per line), a list of dicts, or a pandas / polars frame. Each sample set is
one run of a pipeline; its references are the judgments.

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
  that concerns;
* ``reference_ids`` [``reference_context_ids``]: relevant, grade 1; ``grades``: ``{id: grade}`` (wins
  over ``reference_ids``); ``reference_contexts``, ``reference_answer`` [``reference``], ``response``,
  ``category``: kept for the measures and strata that read them; ``facets`` (``[{"name", "ids"}]``,
  the aspects an answer needs and the chunks that cover each) for ``CoverageRecall``; ``citations``
  (the chunk ids the response cites) for ``AttributionRate``; ``nuggets`` (``[{"text", "importance":
  "vital"|"okay", "supported_by": [ids], "partially_supported_by": [ids]}]``) for ``NuggetRecall``.

A chunk id given twice in one retrieved list is an error naming the sample's line and both positions
(``duplicates="first"`` keeps the first); so is a query id given by two samples. Every error names the
source, the line (the sample's position, from 1) and the field.
"""

from __future__ import annotations

import json
import math
import os
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._errors import EmptyInputError, FormatError, InputError

__all__ = ["Sample", "Samples"]

_QID = ("query_id", "qid", "id")
_QUESTION = ("question", "user_input")
_IDS = ("retrieved_ids", "retrieved_context_ids")
_REF_IDS = ("reference_ids", "reference_context_ids")
_ANSWER = ("reference_answer", "reference")


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

    samples: tuple[Sample, ...]
    name: str = "samples"
    source: str = "<samples>"
    notes: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.samples)

    # --- reading ------------------------------------------------------------------------------------
    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str], *, name: str | None = None, duplicates: str = "error") -> Samples:
        """From a JSON-lines file, one sample object per line (blank lines are skipped)."""
        p = Path(path)
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
        stem = p.name[: -len(".jsonl")] if p.name.endswith(".jsonl") else p.stem
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
    def from_frame(cls, frame: Any, *, name: str = "samples", source: str = "<samples frame>") -> Samples:
        """From a polars or pandas frame with one sample per row (list columns for the lists)."""
        rows = frame.to_dicts() if hasattr(frame, "to_dicts") else frame.to_dict("records")
        return cls.from_records(rows, name=name, source=source)

    @classmethod
    def coerce(cls, obj: Any, *, name: str | None = None, duplicates: str = "error") -> Samples:
        """A :class:`Samples`, a JSON-lines path, a list of sample mappings or a frame."""
        if isinstance(obj, Samples):
            return obj
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_jsonl(obj, name=name, duplicates=duplicates)
        if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
            return cls.from_records(obj, name=name or "samples", duplicates=duplicates)
        if hasattr(obj, "to_dicts") or hasattr(obj, "to_dict"):
            return cls.from_frame(obj, name=name or "samples")
        raise InputError(
            f"samples must be a JSON-lines path, a list of sample mappings or a frame, got {type(obj).__name__}"
        )

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
        reordered = unscored = 0
        for pos, (line, rec) in enumerate(records, start=1):
            if not isinstance(rec, Mapping):
                raise FormatError(source, line, f"a sample must be a JSON object, got {type(rec).__name__}")
            sample, by_order = _sample(rec, source, line, f"line-{pos}" if generate else None, duplicates)
            reordered += by_order == 1
            unscored += by_order == 2
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
        return cls(tuple(out), name, source, tuple(notes))

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
        import polars as pl

        from .model import Qrels

        have = [s for s in self.samples if s.grades]
        if not have:
            raise EmptyInputError(
                f"{self.source}: no sample gives reference_ids or grades: nothing to evaluate the retrieval against"
            )
        frame = pl.DataFrame(
            {
                "query_id": [s.query_id for s in have for _ in s.grades],  # type: ignore[union-attr]
                "doc_id": [d for s in have for d in s.grades],  # type: ignore[union-attr]
                "relevance": [g for s in have for g in s.grades.values()],  # type: ignore[union-attr]
            },
            schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64},
        )
        return Qrels.from_frame(frame, source=self.source)

    def run(self, name: str | None = None) -> Any:
        """The retrieved lists as a run, ranked by list order (see the module docstring)."""
        import polars as pl

        from .model import Run

        have = [s for s in self.samples if s.retrieved_ids]
        frame = pl.DataFrame(
            {
                "query_id": [s.query_id for s in have for _ in s.retrieved_ids],
                "doc_id": [d for s in have for d in s.retrieved_ids],
                "score": [v for s in have for v in s.retrieved_scores],
            },
            schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64},
        )
        return Run.from_frame(frame, name=name or self.name, source=self.source)

    def query_texts(self) -> dict[str, str]:
        return {s.query_id: s.question for s in self.samples if s.question is not None}


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


def _sample(
    rec: Mapping[str, Any], source: str, line: int, generated: str | None, duplicates: str
) -> tuple[Sample, int]:
    qid = generated if generated is not None else _first(rec, _QID)
    if qid is None:
        raise FormatError(source, line, "no query_id (other samples have one)")
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or str(qid) == "":
        raise FormatError(source, line, f"query_id must be a non-empty string, got {qid!r}")
    ids, texts, scores = _retrieved(rec, source, line)
    if len(set(ids)) != len(ids):
        first: dict[str, int] = {}
        keep = []
        for i, d in enumerate(ids):
            if d in first:
                if duplicates == "error":
                    raise FormatError(
                        source,
                        line,
                        f"retrieved: chunk id {d!r} is given twice (positions {first[d] + 1} and {i + 1}); "
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
            reference_contexts=_text_list(rec.get("reference_contexts"), source, line, "reference_contexts"),
            reference_answer=str(answer) if answer is not None else None,
            response=str(rec["response"]) if rec.get("response") is not None else None,
            category=str(category) if category is not None else None,
            facets=_facets(rec.get("facets"), source, line),
            citations=_text_list(rec.get("citations"), source, line, "citations"),
            nuggets=_nuggets(rec.get("nuggets"), source, line),
        ),
        by_order,
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


def _retrieved(
    rec: Mapping[str, Any], source: str, line: int
) -> tuple[list[str], list[str] | None, list[float] | None]:
    items = rec.get("retrieved")
    if items is not None:
        if isinstance(items, (str, bytes)) or not isinstance(items, Iterable):
            raise FormatError(source, line, f"retrieved must be a list, got {type(items).__name__}")
        ids: list[str] = []
        texts: list[str] = []
        scores: list[float] = []
        has_score = None
        for i, it in enumerate(items, start=1):
            if isinstance(it, Mapping):
                if it.get("id") is None:
                    raise FormatError(source, line, f"retrieved[{i}] has no id")
                ids.append(str(it["id"]))
                texts.append(str(it.get("text", "")))
                scored = it.get("score") is not None
                if has_score is None:
                    has_score = scored
                elif scored != has_score:
                    raise FormatError(source, line, f"retrieved[{i}]: some chunks have a score and others not")
                if scored:
                    scores.append(_score(it["score"], source, line, f"retrieved[{i}].score"))
            elif isinstance(it, (str, int)) and not isinstance(it, bool):
                ids.append(str(it))
            else:
                raise FormatError(source, line, f"retrieved[{i}] must be an id or an object with an id")
        return ids, (texts if texts and len(texts) == len(ids) else None), (scores if has_score else None)
    id_list = _text_list(_first(rec, _IDS), source, line, "retrieved_ids")
    texts_list = _text_list(rec.get("retrieved_contexts"), source, line, "retrieved_contexts")
    if id_list is None:
        if texts_list:
            raise FormatError(
                source,
                line,
                "retrieved_contexts without ids (retrieved_ids / retrieved_context_ids): text-only samples need "
                "similarity matching, not supported yet",
            )
        return [], None, None
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
    return list(id_list), list(texts_list) if texts_list is not None else None, scores_out


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
        ids = _text_list(f["ids"], source, line, f"facets[{i}].ids") or ()
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
        full = _text_list(n.get("supported_by"), source, line, f"nuggets[{i}].supported_by") or ()
        part = _text_list(n.get("partially_supported_by"), source, line, f"nuggets[{i}].partially_supported_by") or ()
        out.append((str(n.get("text", f"nugget {i}")), imp == "vital", full, part))
    return tuple(out)


def _grades(rec: Mapping[str, Any], source: str, line: int) -> dict[str, int] | None:
    given = rec.get("grades")
    if given is not None:
        if not isinstance(given, Mapping):
            raise FormatError(source, line, f"grades must be an object {{id: grade}}, got {type(given).__name__}")
        out = {}
        for k, v in given.items():
            if isinstance(v, bool) or not isinstance(v, int):
                raise FormatError(source, line, f"grades[{k!r}] must be a whole number, got {v!r}")
            out[str(k)] = v
        return out or None
    refs = _text_list(_first(rec, _REF_IDS), source, line, "reference_ids")
    return dict.fromkeys(refs, 1) if refs else None
