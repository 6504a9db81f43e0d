"""``evaluate``: measures over one or more runs against one qrels, with explicit query-set policies."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ._context.grades import level_note, relevance_note
from ._errors import ConfigError, DependencyError
from ._measures import Measure, make, parse_measures
from ._policies import Policies
from ._session import Session, depth_note, naming_notes, open_session, resolve_inputs, unique_names

if TYPE_CHECKING:
    from ._context.settings import RagConfig
    from ._context.utility import UtilityConfig
    from ._core.evaldata import QueryAccounting
    from ._io.model import Run

__all__ = ["DEFAULT_MEASURES", "Result", "RunResult", "aggregate", "evaluate", "evaluate_runs", "with_judged"]

DEFAULT_MEASURES = ("nDCG@10", "AP", "RR", "P@10", "R@100")


def aggregate(measure: Measure, values: np.ndarray) -> tuple[float, int]:
    """The summary of per-query values and the number of queries where the measure is defined.

    ``mean``: arithmetic mean over defined (non-NaN) queries; ``sum``: their sum; ``gmean``: the
    geometric mean with values floored at 1e-5, as trec_eval's gm_map.
    """
    valid = values[~np.isnan(values)]
    n = int(valid.size)
    how = measure.spec.aggregate
    if how == "sum":
        return float(valid.sum()), n
    if n == 0:
        return math.nan, 0
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(valid, 1e-5))))), n
    return float(valid.mean()), n


@dataclass
class RunResult:
    """Per-query values of every measure for one run."""

    name: str
    source: str
    qids: list[str]
    values: dict[Measure, np.ndarray]
    accounting: QueryAccounting
    dropped_duplicates: int = 0
    summary: dict[Measure, tuple[float, int]] = field(default_factory=dict)
    pool: dict[str, Any] | None = None  #: outside-pool accounting when an explicit pool was given
    utility: dict[str, int] | None = None  #: rows set by each utility rule, when distraction measures ran

    def __post_init__(self) -> None:
        if not self.summary:
            self.summary = {m: aggregate(m, v) for m, v in self.values.items()}

    def mean(self, measure: Measure | str) -> float:
        return self.summary[_key(measure)][0]

    def valid(self, measure: Measure | str) -> int:
        return self.summary[_key(measure)][1]

    def entry(self, measures: list[Measure], utility: bool = True) -> dict[str, Any]:
        """The run's part of a JSON report: name, path, summaries, query accounting, dropped
        duplicates, pool and (``utility``) utility counts."""
        out: dict[str, Any] = {
            "name": self.name,
            "path": self.source,
            "aggregate": {str(m): _num(self.summary[m][0]) for m in measures},
            "valid_queries": {str(m): self.summary[m][1] for m in measures},
            "queries": self.accounting.to_dict(),
        }
        if self.dropped_duplicates:
            out["dropped_duplicates"] = self.dropped_duplicates
        if self.pool is not None:
            out["pool"] = dict(self.pool)
        if utility and self.utility is not None:
            out["utility"] = dict(self.utility)
        return out

    def per_query_dict(self, measures: list[Measure]) -> dict[str, dict[str, float | None]]:
        """``{query: {measure: value}}`` (None where undefined)."""
        return {q: {str(m): _num(float(self.values[m][i])) for m in measures} for i, q in enumerate(self.qids)}

    def per_query(self, measure: Measure | str) -> dict[str, float]:
        vals = self.values[_key(measure)]
        return {q: float(v) for q, v in zip(self.qids, vals)}


def _key(measure: Measure | str) -> Measure:
    return measure if isinstance(measure, Measure) else parse_measures(measure)[0]


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


@dataclass
class Result:
    """The outcome of :func:`evaluate`: measures × runs, with the settings that produced it."""

    measures: list[Measure]
    runs: list[RunResult]
    settings: dict[str, Any]
    notes: list[str] = field(default_factory=list)  #: how runs were named, k beyond a run's depth

    def __getitem__(self, name: str) -> RunResult:
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        runs = []
        for r in self.runs:
            entry = r.entry(self.measures)
            if per_query:
                entry["per_query"] = r.per_query_dict(self.measures)
            runs.append(entry)
        out = {"measures": [str(m) for m in self.measures], "runs": runs, "settings": dict(self.settings)}
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def to_pandas(self, per_query: bool = False) -> Any:
        """The means, one row per (run, measure): ``run, measure, value, valid_queries``; with
        ``per_query=True`` the per-query values instead, ``run, query, measure, value`` (NaN = NA),
        the shape of :meth:`Report.to_pandas(per_query=True) <ctxeval.Report.to_pandas>` and of the
        report's CSV. The two never share a frame, so a query named ``all`` stays a query."""
        try:
            import pandas as pd
        except ImportError:
            raise DependencyError("Result.to_pandas", "pandas", "pandas") from None

        if per_query:
            rows = [
                (r.name, q, str(m), float(r.values[m][i]))
                for r in self.runs
                for i, q in enumerate(r.qids)
                for m in self.measures
            ]
            return pd.DataFrame(rows, columns=["run", "query", "measure", "value"])
        summary = [(r.name, str(m), r.summary[m][0], r.summary[m][1]) for r in self.runs for m in self.measures]
        return pd.DataFrame(summary, columns=["run", "measure", "value", "valid_queries"])


def with_judged(measures: list[Measure]) -> list[Measure]:
    """The measures plus ``Judged@K`` for every K of a RAG measure (reported beside them)."""
    out = list(measures)
    for m in measures:
        if m.spec.group == "rag" and m.cutoff is not None:
            j = make("Judged", None, m.cutoff)
            if j not in out:
                out.append(j)
    return out


def evaluate(
    qrels: Any = None,
    runs: Any = None,
    measures: Iterable[str | Measure] | str | Measure = DEFAULT_MEASURES,
    *,
    samples: Any = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
) -> Result:
    """Evaluate one or more runs.

    ``qrels`` and each run may be a path, a dict-of-dicts, a pandas/polars frame or a
    :class:`Qrels`/:class:`Run`. ``policies`` (a :class:`~ctxeval.Policies`) sets the ranking rule
    (``ties``), judged queries absent from a run (``missing``: ``zero``, scored 0, trec_eval ``-c``,
    the default here; ``ignore``, trec_eval's default; ``error``) and repeated pairs (``duplicates``).

    Set-based RAG measures (``RA-nWG@10``, ``PROC@10``, ...; see :mod:`ctxeval._measures.rag`) read
    the qrels grades through ``rag.grade_map`` (a preset such as ``"trec-dl"``, ``"3:5,2:4,1:3,0:2"``,
    a mapping or a :class:`GradeMap`) and need them on the 1–5 scale; ``Judged@K`` is added beside
    them. ``rag.pool`` is the retrieval pool (a run; with several runs, the same pool applies to all;
    ``rag.pools`` gives runs pools of their own by name, so a comparison can mix first stages),
    cut at ``rag.pool_depth``; without it each run is its own pool. Docs of a run outside its pool
    raise :class:`~ctxeval.PoolError` unless ``rag.allow_outside_pool``. ``rag.groups`` (doc id →
    group) serves ``RA-nWG(novelty=...)``.

    Distraction-aware measures (``dDCG@5``, ``UDCG@5``, ``DistractorRate@5``, ...; see
    :mod:`ctxeval._measures.distraction`) read per-passage utilities set by ``utility`` (a
    :class:`~ctxeval.UtilityConfig`: the utility map, known distractors, LLM utilities and the
    detection rules); they are computed once per run, only when such a measure is requested, and the
    settings record them.

    ``samples`` (instead of ``qrels`` and ``runs``): one sample set or a list of them (a
    :class:`~ctxeval.Samples`, a JSON-lines path, a list of sample dicts or a frame), each one run; the
    judgments are their references (see :mod:`ctxeval._io.samples`).

    >>> res = evaluate({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 0.2, "b": 0.9}}, ["P@1", "RR"])
    >>> res.runs[0].mean("RR"), res.runs[0].mean("P@1")
    (0.5, 0.0)
    >>> res = evaluate(samples=[{"query_id": "q1", "retrieved_ids": ["b", "a"], "reference_ids": ["a"]}],
    ...                measures=["RR", "ContextRecall@1"])
    >>> res.runs[0].mean("RR"), res.runs[0].mean("ContextRecall@1")
    (0.5, 0.0)
    """
    qrels, runs, notes, sets = resolve_inputs("evaluate", qrels, runs, samples, policies)
    session, run_objs = open_session(qrels, runs, measures, policies=policies, rag=rag, utility=utility, samples=sets)
    if not run_objs:
        raise ConfigError("evaluate needs at least one run")
    result = evaluate_runs(session, run_objs, session.measures)
    result.notes[:0] = notes
    return result


def evaluate_runs(session: Session, run_objs: list[Run], measures: list[Measure]) -> Result:
    """:func:`evaluate` on a session: every run, every measure (with ``Judged@K`` beside RAG
    measures), the side data they need built once per run."""
    ms = list(measures)
    rag_ms = any(m.spec.group == "rag" for m in ms)
    if rag_ms:
        ms = with_judged(ms)
    need_u = any("utility" in m.requires for m in ms)
    results = []
    names = unique_names(run_objs)
    notes = naming_notes(run_objs, names)
    rates = sorted({m.k for m in ms if m.family == "DistractorRate"})
    level = level_note(measures, lambda: session.grades, session.rag.grade_map)
    if level:
        notes.append(level)
    nothing = relevance_note(measures, session.qrels.columns.values, session.rag.grade_map)
    if nothing:
        notes.append(nothing)
    for run, name in zip(run_objs, names):
        data = session.prepare(run, ms)
        for k in rates:
            note = depth_note(name, data, k, f"DistractorRate@{k} is the share of the passages given (min(k, depth))")
            if note:
                notes.append(note)
        ucounts = data.extra("utility").counts() if need_u else None
        if need_u:
            from ._context.utility import flag_counts, flag_note  # here: utility settings pull in side files

            note = flag_note(name, flag_counts(data.extra("utility"), data.r_judged), session.utility.rules)
            if note:
                notes.append(note)
        values = {m: m.compute(data) for m in ms}
        pool_report = data.extra("pool").report() if session.pool_for(run) is not None else None
        results.append(
            RunResult(
                name,
                run.source,
                data.qids,
                values,
                data.accounting,
                run.dropped_duplicates,
                pool=pool_report,
                utility=ucounts,
            )
        )
    settings = session.describe()
    if rag_ms or session.has_pool or session.rag.pool_depth is not None:
        settings["pool"] = session.pool_settings()
    if need_u:
        settings["utility"] = session.utility.describe()
    return Result(ms, results, settings, notes + [n for n in session.notes if n not in notes])
