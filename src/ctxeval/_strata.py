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

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import ConfigError, FormatError, InputError

__all__ = ["StratumSet", "load_strata", "load_query_texts", "num_rel_strata", "query_length_strata", "BUILTIN", "NUM_REL_BINS", "LENGTH_BINS"]

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


def _lines(path: Path, what: str) -> list[tuple[int, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{what} file {path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{what} file {path}: is a directory, not a file") from None
    except PermissionError:
        raise InputError(f"{what} file {path}: permission denied") from None
    except UnicodeDecodeError as exc:
        raise FormatError(str(path), None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return list(enumerate(text.splitlines(), 1))


def load_strata(source: Any, evaluated: Sequence[str]) -> StratumSet:
    """Strata from a ``qid category`` file or a mapping ``qid -> category | [categories]``."""
    members: dict[str, list[str]] = {}
    seen: dict[tuple[str, str], int] = {}
    evaluated_set = set(evaluated)
    if isinstance(source, Mapping):
        name = "<strata mapping>"
        for qid, cats in source.items():
            for cat in [cats] if isinstance(cats, str) else list(cats):
                if not isinstance(cat, str) or not cat.strip():
                    raise ConfigError(f"strata: query {qid!r} has an empty or non-text category {cat!r}")
                members.setdefault(cat.strip(), [])
                if str(qid) not in members[cat.strip()]:
                    members[cat.strip()].append(str(qid))
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        name = str(path)
        for lineno, line in _lines(path, "strata"):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split(None, 1)
            if len(parts) != 2 or not parts[1].strip():
                raise FormatError(name, lineno, "expected 'qid category' (a query id, white space, a category)", line)
            qid, cat = parts[0], parts[1].strip()
            if (qid, cat) in seen:
                raise FormatError(name, lineno, f"query {qid} is already in category {cat!r} (line {seen[(qid, cat)]})", line)
            seen[(qid, cat)] = lineno
            members.setdefault(cat, []).append(qid)
        if not members:
            raise FormatError(name, None, "no 'qid category' lines")
    else:
        raise ConfigError(f"strata must be a file path or a mapping of query id to categories, got {type(source).__name__}")
    all_ids = {q for qs in members.values() for q in qs}
    unknown = sorted(all_ids - evaluated_set)
    unassigned = len(evaluated_set - all_ids)
    return StratumSet("file", name, members, unknown, unassigned)


def _bin_name(prefix: str, label: str) -> str:
    return f"{prefix}:{label}"


def _binned(prefix: str, qids: Sequence[str], counts: np.ndarray, bins: tuple[tuple[str, int, int | None], ...]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for label, lo, hi in bins:
        sel = (counts >= lo) & (counts <= (hi if hi is not None else np.iinfo(np.int64).max))
        ids = [q for q, s in zip(qids, sel) if s]
        if ids:
            out[_bin_name(prefix, label)] = ids
    return out


def num_rel_strata(qrels_frame: Any, qids: Sequence[str], level: int = 1) -> StratumSet:
    """Queries by their number of judged docs with grade ≥ ``level`` (empty bins are left out)."""
    import polars as pl

    counts_df = qrels_frame.filter(pl.col("relevance") >= level).group_by("query_id").len()
    counts = dict(counts_df.iter_rows())
    c = np.array([counts.get(q, 0) for q in qids], dtype=np.int64)
    members = _binned("num_rel", qids, c, NUM_REL_BINS)
    detail = {"level": level, "bins": [b[0] for b in NUM_REL_BINS]}
    return StratumSet("num_rel", f"judged docs with grade >= {level}", members, detail=detail)


def query_length_strata(texts: Mapping[str, str], qids: Sequence[str], source: str) -> StratumSet:
    """Queries by the number of words of their text; evaluated queries without a text are counted."""
    have = [q for q in qids if q in texts]
    c = np.array([len(texts[q].split()) for q in have], dtype=np.int64)
    members = _binned("query_length", have, c, LENGTH_BINS)
    evaluated = set(qids)
    extra = sorted(q for q in texts if q not in evaluated)
    detail: dict[str, Any] = {"bins": [b[0] for b in LENGTH_BINS], "unit": "words", "queries_without_text": len(qids) - len(have)}
    detail["texts_not_evaluated"] = len(extra)
    if extra:
        detail["texts_not_evaluated_examples"] = extra[:5]
    return StratumSet("query_length", source, members, detail=detail)


def load_query_texts(source: Any) -> tuple[dict[str, str], str]:
    """Query texts from a mapping, a ``qid<TAB>text`` file or a JSON-lines file."""
    if source is None:
        return {}, ""
    if isinstance(source, Mapping):
        return {str(k): str(v) for k, v in source.items()}, "<query texts mapping>"
    if not isinstance(source, (str, os.PathLike)):
        raise ConfigError(f"query texts must be a file path or a mapping of query id to text, got {type(source).__name__}")
    path = Path(source)
    name = str(path)
    lines = _lines(path, "query texts")
    first = next((t for _, t in lines if t.strip()), "")
    as_json = path.suffix.lower() in (".jsonl", ".ndjson") or first.lstrip().startswith("{")
    out: dict[str, str] = {}
    for lineno, line in lines:
        if not line.strip() or (not as_json and line.startswith("#")):
            continue
        if as_json:
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormatError(name, lineno, f"not a JSON object: {exc.msg}", line) from None
            if not isinstance(rec, dict):
                raise FormatError(name, lineno, "expected a JSON object with qid and text", line)
            qid = next((rec[k] for k in ("qid", "query_id", "id") if k in rec), None)
            text = next((rec[k] for k in ("text", "query") if k in rec), None)
            if qid is None or not isinstance(text, str):
                raise FormatError(name, lineno, "expected fields qid (or query_id, id) and text (or query)", line)
            qid = str(qid)
        else:
            qid, tab, text = line.partition("\t")
            if not tab or not qid.strip():
                raise FormatError(name, lineno, "expected 'qid<TAB>text'", line)
            qid = qid.strip()
        if qid in out:
            raise FormatError(name, lineno, f"query {qid} already has a text", line)
        out[qid] = text.strip()
    if not out:
        raise FormatError(name, None, "no query texts")
    return out, name
