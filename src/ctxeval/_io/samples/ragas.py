"""RAGAS both ways, without depending on ragas: its datasets read as sample sets, and sample sets (with
the labels a judge wrote into them) written as RAGAS datasets.

Reading: a RAGAS ``EvaluationDataset`` (anything with ``to_list()`` giving one mapping per sample: also a
Hugging Face ``datasets.Dataset``, e.g. ``to_hf_dataset()``), its ``to_pandas()`` frame, and its
``to_jsonl`` / ``to_csv`` files (``to_csv`` writes lists as Python literals, ``['a', 'b']``: read as
they are). RAGAS's names are the format's aliases (``user_input``, ``retrieved_contexts``,
``retrieved_context_ids``, ``reference_contexts``, ``reference_context_ids``, ``response``,
``reference``); its other fields (``rubrics``, ``multi_responses``, ``persona_name``, ...) are kept as
they are. Multi-turn samples (a conversation as ``user_input``) are not sample sets: an error says so.

Writing (:func:`ragas_record`): each sample under RAGAS's names, ctxeval's fields RAGAS has no name
for (``query_id``, ``retrieved_scores``, ``grades``, ``pool``, facets, nuggets, a judge's claims and
relevance, ...) beside them under the format's names, so that JSON lines and CSV go to RAGAS and come
back without losing a field (RAGAS ignores the keys it does not know). Graded judgments are also given
to RAGAS as its binary ``reference_context_ids`` (the chunks of grade >= 1). An ``EvaluationDataset``
holds RAGAS's fields only (its samples drop the others): write JSON lines to keep everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._errors import DependencyError, InputError
from .fields import CHUNKS, ROWS, Sample
from .reader import named_by
from .schema import record

__all__ = ["from_dataset", "ragas_record", "to_dataset"]

#: ctxeval's name -> RAGAS's (the field table's ``ragas``), or the name itself where RAGAS has none
_NAMES = {r.name: r.ragas or r.name for r in ROWS}


def from_dataset(dataset: Any, source: str) -> list[dict[str, Any]]:
    """The samples of a RAGAS ``EvaluationDataset`` (or of any dataset with ``to_list()``) as objects."""
    if callable(getattr(dataset, "is_multi_turn", None)) and dataset.is_multi_turn():
        raise InputError(
            f"{source}: a multi-turn RAGAS dataset (conversations): a sample set needs one question per sample"
        )
    rows = dataset.to_list()
    if not isinstance(rows, list) or not all(isinstance(r, Mapping) for r in rows):
        raise InputError(f"{source}: to_list() must give one mapping per sample, got {type(rows).__name__}")
    out = []
    for i, r in enumerate(rows, start=1):
        if isinstance(r.get("user_input"), list):
            raise InputError(f"{source}: sample {i} is multi-turn (user_input is a conversation), not a question")
        out.append({k: v for k, v in r.items() if v is not None})
    return out


def ragas_record(s: Sample) -> dict[str, Any]:
    """A sample under RAGAS's names, with the fields RAGAS has no name for beside them (see the
    module docstring); :func:`.schema.parse` reads it back to the same sample, bar
    ``reference_ids``, which a graded sample also gives (its chunks of grade >= 1). The chunks are
    written as parallel lists (RAGAS has no chunk objects), the texts first, as RAGAS writes them."""
    rec = record(s)
    out: dict[str, Any] = {"query_id": rec.pop("query_id")}
    if "question" in rec:
        out["user_input"] = rec.pop("question")
    ids, texts = s.retrieved_ids, s.retrieved_texts
    named = texts is not None and all(named_by(d, t) for d, t in zip(ids, texts))
    for name in ("retrieved", *(c.name for c in CHUNKS)):
        rec.pop(name, None)
    ids_row, texts_row, *others = CHUNKS  # the ids, the texts, then the others
    if texts is not None:
        out[_NAMES[texts_row.name]] = list(texts)
    if not (named and ids):
        out[_NAMES[ids_row.name]] = list(ids)
    for c in others:
        v = getattr(s, c.attr)
        if v is not None:
            out[_NAMES[c.name]] = [dict(x) for x in v] if c.key == "" else list(v)
    if "reference_ids" in rec:
        out["reference_context_ids"] = rec.pop("reference_ids")
    elif s.judgments_from == "grades" and s.grades is not None:
        out["reference_context_ids"] = [d for d, g in s.grades.items() if g >= 1]
    for name in ("reference_contexts", "response"):
        if name in rec:
            out[name] = rec.pop(name)
    if "reference_answer" in rec:
        out["reference"] = rec.pop("reference_answer")
    out.update(rec)
    return out


def to_dataset(records: list[dict[str, Any]]) -> Any:
    """RAGAS's ``EvaluationDataset`` of these RAGAS records (its samples keep RAGAS's fields only)."""
    try:
        from ragas.dataset_schema import EvaluationDataset, SingleTurnSample
    except ImportError:
        err = DependencyError("a RAGAS EvaluationDataset", "ragas", "ragas")
        err.args = (
            "a RAGAS EvaluationDataset needs ragas, which is not installed: pip install ragas (RAGAS's JSON lines need nothing)",
        )
        raise err from None
    fields = set(SingleTurnSample.model_fields)
    return EvaluationDataset(samples=[SingleTurnSample(**{k: v for k, v in r.items() if k in fields}) for r in records])
