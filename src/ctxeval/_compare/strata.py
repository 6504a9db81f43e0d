"""Query strata for stratified comparison: from a file, by number of relevant docs, by query length.

* **File** (``--strata FILE``): lines ``qid category`` (the query id, white space, the category; the
  category is the rest of the line, so it may hold spaces). A query may be in several categories;
  blank lines and lines starting with ``#`` are skipped; a repeated (query, category) pair is an error.
* **num_rel**: the number of judged docs with grade ≥ ``level`` (default 1) in the qrels:
  ``num_rel:0``, ``num_rel:1``, ``num_rel:2-5``, ``num_rel:>5``.
* **query_length**: the number of white-space separated words of the query text:
  ``query_length:1-3``, ``query_length:4-6``, ``query_length:7-10``, ``query_length:>10``. The bins
  follow the usual split of web queries (short keyword queries of 1–3 words, natural-language queries
  of 4–10 words, long questions beyond).

Query texts (``--queries FILE``) are read from ``qid<TAB>text`` lines, or from JSON lines with
``qid`` (or ``query_id``/``id``) and ``text`` (or ``query``) fields when the file ends in ``.jsonl``
or its first record starts with ``{``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.columns import Columns
from .._io.side import read_query_texts, read_strata

__all__ = [
    "BUILTIN",
    "LENGTH_BINS",
    "NUM_REL_BINS",
    "StratumSet",
    "load_strata",
    "num_rel_strata",
    "query_length_strata",
    "read_query_texts",
]

BUILTIN = ("num_rel", "query_length")
#: (label, lo, hi) inclusive; hi None = no upper bound
NUM_REL_BINS = (("0", 0, 0), ("1", 1, 1), ("2-5", 2, 5), (">5", 6, None))
LENGTH_BINS = (("1-3", 1, 3), ("4-6", 4, 6), ("7-10", 7, 10), (">10", 11, None))


@dataclass
class StratumSet:
    """Strata from one source: ``members`` maps each stratum name to its query ids (in first-seen
    order of the strata); ``describe()`` goes into the report's settings."""

    kind: str  #: "file" | "num_rel" | "query_length"
    source: str
    members: dict[str, list[str]]
    unknown: list[str] = field(default_factory=list)  #: query ids of the source that were not evaluated
    unassigned: int = 0  #: evaluated queries in no stratum of this source
    detail: dict[str, Any] = field(default_factory=dict)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "source": self.source, "strata": list(self.members)}
        out.update(self.detail)
        if self.kind == "file":
            out["unknown_queries"] = len(self.unknown)
            if self.unknown:
                out["unknown_query_examples"] = self.unknown[:5]
            out["unassigned_queries"] = self.unassigned
        return out


def load_strata(source: Any, evaluated: Sequence[str]) -> StratumSet:
    """Strata from a ``qid category`` file or a mapping ``qid -> category | [categories]``."""
    members, name = read_strata(source)
    evaluated_set = set(evaluated)
    all_ids = {q for qs in members.values() for q in qs}
    unknown = sorted(all_ids - evaluated_set)
    unassigned = len(evaluated_set - all_ids)
    return StratumSet("file", name, members, unknown, unassigned)


def _bin_name(prefix: str, label: str) -> str:
    return f"{prefix}:{label}"


def _binned(
    prefix: str, qids: Sequence[str], counts: np.ndarray, bins: tuple[tuple[str, int, int | None], ...]
) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for label, lo, hi in bins:
        sel = (counts >= lo) & (counts <= (hi if hi is not None else np.iinfo(np.int64).max))
        ids = [q for q, s in zip(qids, sel) if s]
        if ids:
            out[_bin_name(prefix, label)] = ids
    return out


def num_rel_strata(qrels: Columns, qids: Sequence[str], level: int = 1, what: str | None = None) -> StratumSet:
    """Queries by their number of judged docs with grade ≥ ``level`` (empty bins are left out);
    ``what`` says which scale the level is on (default: "grade >= level")."""
    lay = qrels.layout
    per_seg = (
        np.add.reduceat((qrels.values >= level).astype(np.int64), lay.starts)
        if len(qrels)
        else np.zeros(0, dtype=np.int64)
    )
    counts = dict(zip(lay.heads.tolist(), per_seg.tolist()))
    c = np.array([counts.get(q, 0) for q in qids], dtype=np.int64)
    members = _binned("num_rel", qids, c, NUM_REL_BINS)
    detail = {"level": level, "bins": [b[0] for b in NUM_REL_BINS]}
    return StratumSet("num_rel", f"judged docs with {what or f'grade >= {level}'}", members, detail=detail)


def query_length_strata(texts: Mapping[str, str], qids: Sequence[str], source: str) -> StratumSet:
    """Queries by the number of words of their text; evaluated queries without a text are counted."""
    have = [q for q in qids if q in texts]
    c = np.array([len(texts[q].split()) for q in have], dtype=np.int64)
    members = _binned("query_length", have, c, LENGTH_BINS)
    evaluated = set(qids)
    extra = sorted(q for q in texts if q not in evaluated)
    detail: dict[str, Any] = {
        "bins": [b[0] for b in LENGTH_BINS],
        "unit": "words",
        "queries_without_text": len(qids) - len(have),
    }
    detail["texts_not_evaluated"] = len(extra)
    if extra:
        detail["texts_not_evaluated_examples"] = extra[:5]
    return StratumSet("query_length", source, members, detail=detail)
