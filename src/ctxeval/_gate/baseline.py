"""A baseline: one run's per-query values of some measures, with the settings and a fingerprint of the
labels they were computed under, written once (``ctxeval snapshot``) and read by every gate.

The file is JSON (``format: ctxeval-baseline``, ``version: 1``)::

    {"format", "version", "ctxeval", "run", "run_file" (optional), "measures": [...], "settings": {...},
     "labels": {...}, "queries": [...], "values": {measure: [value or null per query]},
     "questions" (optional): {query: question}}

Each query is listed once; a value is a finite JSON number within its measure's range, or null where
the measure is undefined on the query (a gate leaves that query out of the measure's test and says so).

``labels`` fingerprints the judgments: ``sha256`` of their canonical text (one ``query<TAB>doc<TAB>grade``
line per judgment, sorted by query then doc, so the same judgments hash alike whatever the file's
format or order), their counts, and the label kind (given, binary, judged and by what model).
``settings`` holds what changes the numbers (the ranking, query-set and duplicate rules, the grade
map, the pool's name and depth, the utility settings, the relevance level), not where files were
(paths, the labels' origin: the judgments' hash stands for them).
A gate refuses a baseline whose labels or settings differ from its own, naming each difference.

``questions``: a baseline of a sample set without query ids (RAGAS's text-only files, whose samples
are named ``line-1``, ``line-2``, ... by position) keeps every sample's question, and a gate pairs the
candidate's samples with the baseline's by their questions, as sets read together are paired
(:func:`ctxeval._io.samples.pair_by_question`): a filtered or asynchronous export lists them in
another order.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, FormatError
from .._io.writers import write_text
from .._json import num
from .._version import __version__

__all__ = ["FORMAT", "Baseline", "differences", "labels_fingerprint", "settings_fingerprint"]

FORMAT = "ctxeval-baseline"
VERSION = 1
#: evaluate's settings that name files or count input rows: not part of what a baseline must match
#: how far a stored value may stray beyond its measure's range (floating-point rounding) before it is refused
_SLACK = 1e-9
_PLACES = ("qrels", "qrels_dropped_duplicates", "runs", "engine", "master", "streamed")


def labels_fingerprint(qrels: Any) -> dict[str, Any]:
    """The fingerprint of a :class:`~ctxeval.Qrels`: its canonical hash, counts and label kind."""
    pairs = qrels.to_dict()
    digest = hashlib.sha256()
    n = 0
    for q in sorted(pairs):
        for d in sorted(pairs[q]):
            digest.update(f"{q}\t{d}\t{int(pairs[q][d])}\n".encode())
            n += 1
    kind = qrels.labels
    out: dict[str, Any] = {"sha256": digest.hexdigest(), "queries": len(pairs), "judgments": n, "kind": kind.kind}
    if kind.scale is not None:
        out["scale"] = kind.scale
    prov = getattr(kind, "provenance", None)
    if kind.kind == "judged" and prov is not None:
        out["labelled_by"] = {
            k: v for k, v in prov.to_dict().items() if k in ("judge", "model", "heuristic", "task", "prompt_version")
        }
    return out


def settings_fingerprint(settings: Mapping[str, Any], extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """What in evaluate's settings changes the numbers (see the module docstring)."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if key in _PLACES:
            continue
        if key in ("pool", "labels") and isinstance(value, Mapping):  # where they were read from
            value = {k: v for k, v in value.items() if k not in ("source", "origin")}
            if not value:
                continue
        out[key] = value
    out.update(extra or {})
    return json.loads(json.dumps(out, sort_keys=True, default=str))


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, Mapping):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out or {prefix[:-1]: {}}
    return {prefix[:-1]: d}


def differences(stored: Mapping[str, Any], now: Mapping[str, Any], what: str) -> list[str]:
    """``what.key: stored (baseline) vs now`` for every key whose value differs."""
    a, b = _flat(stored), _flat(now)
    out = []
    for key in sorted(set(a) | set(b)):
        if a.get(key, "(not set)") != b.get(key, "(not set)"):
            out.append(f"{what}.{key}: {a.get(key, '(not set)')} in the baseline, {b.get(key, '(not set)')} now")
    return out


@dataclass(frozen=True)
class Baseline:
    """One run's per-query values of some measures, with the settings and labels they were computed
    under (see the module docstring). ``values[m][i]`` is query ``queries[i]``'s value (NaN: undefined)."""

    run: str
    measures: list[str]
    queries: list[str]
    values: dict[str, np.ndarray]
    settings: dict[str, Any]
    labels: dict[str, Any]
    ctxeval: str = __version__
    source: str = field(default="<baseline>", compare=False)
    #: per-query values under people's labels on a subset of the queries (measure -> query -> value)
    human: dict[str, dict[str, float]] | None = None
    #: the stem of the run's file (names the run in a gate's report when a candidate carries its name)
    file: str | None = None
    #: a sample set named by position (no query_id): every sample's name (line-1 ...) -> its question
    questions: dict[str, str] | None = None

    def __repr__(self) -> str:
        return f"Baseline({self.run!r}, {len(self.queries)} queries, measures {', '.join(self.measures)})"

    def per_query(self, measure: str) -> dict[str, float]:
        return {q: float(v) for q, v in zip(self.queries, self.values[measure])}

    def check(self, measure: str, bounds: tuple[float, float] | None) -> None:
        """Refuse what the gate cannot test of ``measure``: a query listed twice, a value that is not a
        finite number, one outside the measure's range ``bounds``, fewer than two defined values."""
        twice = _repeated(self.queries)
        if twice is not None:
            raise FormatError(
                self.source,
                None,
                f"query {twice!r} is listed twice in the baseline (each query has one value per measure)",
            )
        v = np.asarray(self.values[measure], dtype=np.float64)
        defined = ~np.isnan(v)
        with np.errstate(invalid="ignore"):
            wrong = defined & ~np.isfinite(v)
            if bounds is not None:
                wrong |= defined & ((v < bounds[0] - _SLACK) | (v > bounds[1] + _SLACK))
        if wrong.any():
            i = int(np.flatnonzero(wrong)[0])
            where = "" if bounds is None else f", outside the measure's range [{bounds[0]:g}, {bounds[1]:g}]"
            raise FormatError(self.source, None, f"{measure} of query {self.queries[i]!r} is {float(v[i])!r}{where}")
        k = int(defined.sum())
        if k < 2:
            some = (
                f"only query {self.queries[int(np.flatnonzero(defined)[0])]!r} has a value"
                if k
                else "every value is null"
            )
            raise ConfigError(
                f"{self.source}: {measure} is undefined on {len(v) - k} of the baseline's {len(v)} queries ({some}): "
                "the gate cannot test it (a test needs 2 queries with a value); gate other measures (--max-drop), "
                "or snapshot a run on which it is defined"
            )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "ctxeval": self.ctxeval,
            "run": self.run,
            **({"run_file": self.file} if self.file else {}),
            "measures": list(self.measures),
            "settings": self.settings,
            "labels": self.labels,
            "queries": list(self.queries),
            "values": {m: [num(float(x)) for x in self.values[m]] for m in self.measures},
            **(
                {"human_values": {m: {q: num(v) for q, v in self.human[m].items()} for m in self.human}}
                if self.human
                else {}
            ),
            **({"questions": dict(self.questions)} if self.questions else {}),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=False, ensure_ascii=False) + "\n"

    def write(self, path: str | os.PathLike[str]) -> None:
        """Write the baseline file (atomically)."""
        write_text(Path(path), self.to_json())

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Baseline:
        """Read a baseline file written by :meth:`write` (``ctxeval snapshot``)."""
        where = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ConfigError(f"{where}: no such file (baseline; make one with ctxeval snapshot)") from None
        except UnicodeDecodeError:
            raise FormatError(where, None, "not a baseline file (not UTF-8 text)") from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(where, exc.lineno, f"not a baseline file (invalid JSON: {exc.msg})") from None
        return cls.from_dict(d, where)

    @classmethod
    def from_dict(cls, d: Any, source: str = "<baseline>") -> Baseline:
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            raise FormatError(
                source, None, f'not a baseline file (no "format": "{FORMAT}"; make one with ctxeval snapshot)'
            )
        if d.get("version") != VERSION:
            raise FormatError(
                source, None, f"baseline version {d.get('version')!r} is not one this ctxeval reads ({VERSION})"
            )
        missing = [k for k in ("run", "measures", "settings", "labels", "queries", "values") if k not in d]
        if missing:
            raise FormatError(source, None, f"baseline lacks {', '.join(missing)}")
        if not isinstance(d["queries"], list) or not all(isinstance(q, str) for q in d["queries"]):
            raise FormatError(source, None, "baseline queries are not a list of query ids (strings)")
        queries = list(d["queries"])
        twice = _repeated(queries)
        if twice:
            raise FormatError(
                source, None, f"query {twice!r} is listed twice in the baseline (each query has one value per measure)"
            )
        if not isinstance(d["values"], Mapping):
            raise FormatError(source, None, "baseline values are not a mapping of measure -> values")
        values = {}
        for m in d["measures"]:
            col = d["values"].get(m)
            if not isinstance(col, list) or len(col) != len(queries):
                raise FormatError(source, None, f"baseline values of {m} are not one per query ({len(queries)})")
            values[m] = np.array([_number(v, source, m, q) for q, v in zip(queries, col)], dtype=np.float64)
        human = d.get("human_values")
        if human is not None:
            if not isinstance(human, Mapping) or not all(isinstance(col, Mapping) for col in human.values()):
                raise FormatError(source, None, "baseline human_values are not a mapping of measure -> {query: value}")
            human = {
                m: {str(q): _number(v, source, f"{m} (people's labels)", str(q)) for q, v in col.items()}
                for m, col in human.items()
            }
        file = d.get("run_file")
        questions = _questions(d.get("questions"), source)
        unasked = next((q for q in queries if q not in questions), None) if questions is not None else None
        if unasked is not None:
            raise FormatError(
                source, None, f"baseline query {unasked!r} has no question (a sample set named by position)"
            )
        return cls(str(d["run"]), list(d["measures"]), queries, values, dict(d["settings"]), dict(d["labels"]),
                   str(d.get("ctxeval", "?")), source, human, str(file) if file else None, questions)  # fmt: skip


def _questions(given: Any, source: str) -> dict[str, str] | None:
    """The stored questions of a sample set named by position: ``line-1`` .. ``line-n``, each a string."""
    if given is None:
        return None
    lines = {f"line-{i}" for i in range(1, len(given) + 1)} if isinstance(given, Mapping) else set()
    if not lines or set(given) != lines or not all(isinstance(v, str) and v for v in given.values()):
        raise FormatError(
            source, None, "baseline questions are not a mapping of line-1 .. line-n to the samples' questions"
        )
    return dict(given)


def measure_names(measures: Iterable[Any]) -> list[str]:
    return [str(m) for m in measures]


def _repeated(items: list[str]) -> str | None:
    """The first item that occurs twice, or None."""
    seen: set[str] = set()
    for x in items:
        if x in seen:
            return x
        seen.add(x)
    return None


def _number(v: Any, source: str, measure: str, query: str) -> float:
    """One stored value: a finite JSON number, or null (NaN: the measure is undefined on the query)."""
    if v is None:
        return math.nan
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FormatError(
            source,
            None,
            f"{measure} of query {query!r} is {v!r}, not a number (a value is a JSON number, or null where the measure is undefined)",
        )
    if (isinstance(v, int) and abs(v) > 2**1023) or not math.isfinite(v):
        raise FormatError(
            source,
            None,
            f"{measure} of query {query!r} is {v!r}, which is not a JSON number (null stands for an undefined value)",
        )
    return float(v)
