"""``evaluate``: measures over one or more runs against one qrels, with explicit query-set policies."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ._context.grades import level_note, relevance_note, scale_level
from ._context.settings import RagConfig
from ._core.segments import distinct
from ._engines.base import provider
from ._engines.blocks import sized_counts
from ._errors import ConfigError
from ._io.model import Qrels
from ._json import num as _num
from ._measures import Measure, parse_measures
from ._names import merge_notes, naming_notes, once, unique_names
from ._policies import Policies
from ._session import Session, depth_note, open_session, resolve_inputs, sample_sets
from ._show import fmt, html_table, pandas, short, text_table
from ._stats.summary import CI, summary_intervals
from ._values import Values, judged_labels, map_runs, values_fn, with_judged

if TYPE_CHECKING:
    from ._context.utility import UtilityConfig
    from ._core.evaldata import QueryAccounting

__all__ = [
    "DEFAULT_MEASURES",
    "Result",
    "RunResult",
    "aggregate",
    "default_measures",
    "evaluate",
    "evaluate_runs",
    "judged_notes",
    "with_intervals",
    "with_judged",
]

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
    #: ties="expected": per measure, the per-query values under the best and the worst order of the ties
    extremes: dict[Measure, tuple[np.ndarray, np.ndarray]] | None = None
    ties: dict[str, int] | None = None  #: ties="expected": tie groups, tied rows, queries holding ties
    ci: dict[Measure, tuple[float, float] | None] | None = None  #: the interval of each summary (ci=...)
    #: judged labels: per query, the share of the ranks read that the judge labelled, by (what, depth)
    #: (:func:`ctxeval._context.labels.labelled_shares`); said once per command by :func:`judged_notes`
    labelled: dict[tuple[str, int | None], np.ndarray] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.summary:
            self.summary = {m: aggregate(m, v) for m, v in self.values.items()}

    def spread(self, measure: Measure | str) -> tuple[float, float, int]:
        """Under ``ties="expected"``: the summary under the best and under the worst order of the ties,
        and on how many queries the two differ."""
        if self.extremes is None:
            raise KeyError("no tie orders: evaluate with ties='expected'")
        best, worst = self.extremes[_key(measure)]
        both = ~np.isnan(best) & ~np.isnan(worst)
        moved = int(np.count_nonzero(np.abs(best[both] - worst[both]) > 1e-12))
        m = _key(measure)
        return aggregate(m, best)[0], aggregate(m, worst)[0], moved

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
        if self.ci is not None:
            out["ci"] = {str(m): _pair(self.ci.get(m)) for m in measures}
        if self.extremes is not None:
            spreads = {m: self.spread(m) for m in measures}
            out["ties"] = {
                **(self.ties or {}),
                "best": {str(m): _num(v[0]) for m, v in spreads.items()},
                "worst": {str(m): _num(v[1]) for m, v in spreads.items()},
                "queries_moved": {str(m): v[2] for m, v in spreads.items()},
            }
        return out

    def per_query_ties(self, measures: list[Measure]) -> dict[str, dict[str, list[float | None]]]:
        """``{query: {measure: [best, worst]}}`` under ``ties="expected"``, for the queries whose value
        depends on the order of their ties."""
        if self.extremes is None:
            return {}
        out: dict[str, dict[str, list[float | None]]] = {}
        for i, q in enumerate(self.qids):
            row = {}
            for m in measures:
                b, w = float(self.extremes[m][0][i]), float(self.extremes[m][1][i])
                if not (math.isnan(b) and math.isnan(w)) and not abs(b - w) <= 1e-12:
                    row[str(m)] = [_num(b), _num(w)]
            if row:
                out[q] = row
        return out

    def per_query_dict(self, measures: list[Measure]) -> dict[str, dict[str, float | None]]:
        """``{query: {measure: value}}`` (None where undefined)."""
        return {q: {str(m): _num(float(self.values[m][i])) for m in measures} for i, q in enumerate(self.qids)}

    def per_query(self, measure: Measure | str) -> dict[str, float]:
        vals = self.values[_key(measure)]
        return {q: float(v) for q, v in zip(self.qids, vals)}

    def __repr__(self) -> str:
        means = ", ".join(f"{m} {fmt(v)}" for m, (v, _) in list(self.summary.items())[:4])
        more = f" and {len(self.summary) - 4} more" if len(self.summary) > 4 else ""
        return f"RunResult({self.name!r}, {len(self.qids)} queries: {means}{more})"

    def to_pandas(self, per_query: bool = False) -> Any:
        """This run's means (``measure, value, valid_queries``), or with ``per_query=True`` its
        per-query values (``query, measure, value``; NaN = NA)."""
        pd = pandas("RunResult.to_pandas")
        ms = list(self.values)
        if per_query:
            frame = pd.DataFrame(
                [(q, str(m), float(self.values[m][i])) for m in ms for i, q in enumerate(self.qids)],
                columns=["query", "measure", "value"],
            )
        else:
            frame = pd.DataFrame(
                [(str(m), *self.summary[m]) for m in ms], columns=["measure", "value", "valid_queries"]
            )
        return self._extra_columns(frame, ms, per_query)

    def _extra_columns(self, frame: Any, ms: list[Measure], per_query: bool) -> Any:
        """``ci_low``, ``ci_high`` (with intervals, on the summaries) and ``best``, ``worst`` (under
        ``ties="expected"``) beside the values of :meth:`to_pandas`, in its row order."""
        if self.ci is not None and not per_query:
            frame["ci_low"] = [_bound(self.ci.get(m), 0) for m in ms]
            frame["ci_high"] = [_bound(self.ci.get(m), 1) for m in ms]
        if self.extremes is not None:
            ex = self.extremes
            if per_query:
                frame["best"] = np.concatenate([ex[m][0] for m in ms]) if ms else []
                frame["worst"] = np.concatenate([ex[m][1] for m in ms]) if ms else []
            else:
                frame["best"] = [self.spread(m)[0] for m in ms]
                frame["worst"] = [self.spread(m)[1] for m in ms]
        return frame


def _key(measure: Measure | str) -> Measure:
    return measure if isinstance(measure, Measure) else parse_measures(measure)[0]


def _pair(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else [float(ci[0]), float(ci[1])]


def _bound(ci: tuple[float, float] | None, i: int) -> float:
    return math.nan if ci is None else float(ci[i])


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
                if r.extremes is not None:
                    entry["per_query_ties"] = r.per_query_ties(self.measures)
            runs.append(entry)
        out = {"measures": [str(m) for m in self.measures], "runs": runs, "settings": dict(self.settings)}
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    def __repr__(self) -> str:
        runs = short([r.name for r in self.runs])
        ms = short([str(m) for m in self.measures])
        return f"Result({len(self.runs)} runs x {len(self.measures)} measures; runs: {runs}; measures: {ms})"

    def __str__(self) -> str:
        """The means, one row per run (what ``print(result)`` shows), then the notes."""
        rows = [[r.name, *(r.summary[m][0] for m in self.measures)] for r in self.runs]
        table = text_table(["run", *map(str, self.measures)], rows)
        return "\n".join([table, *(f"note: {n}" for n in self.notes)])

    def _repr_html_(self) -> str:
        rows = [[r.name, *(r.summary[m][0] for m in self.measures)] for r in self.runs]
        cap = "means over queries" + (f"; {len(self.notes)} notes (.notes)" if self.notes else "")
        return html_table(["run", *map(str, self.measures)], rows, cap)

    def to_pandas(self, per_query: bool = False) -> Any:
        """The means, one row per (run, measure): ``run, measure, value, valid_queries``; with
        ``per_query=True`` the per-query values instead, ``run, query, measure, value`` (NaN = NA),
        the shape of :meth:`Report.to_pandas(per_query=True) <ctxeval.Report.to_pandas>` and of the
        report's CSV. The two never share a frame, so a query named ``all`` stays a query."""
        pd = pandas("Result.to_pandas")
        frames = []
        for r in self.runs:
            part = r.to_pandas(per_query)
            if per_query:  # this frame's row order: query by query, the measures within each
                n_m, n_q = len(r.values), len(r.qids)
                order = np.arange(n_m * n_q).reshape(n_m, n_q).T.ravel()
                keep = part["measure"].isin([str(m) for m in self.measures])
                part = part.iloc[order][keep.iloc[order].to_numpy()]
            else:
                part = part[part["measure"].isin([str(m) for m in self.measures])]
            part.insert(0, "run", r.name)
            frames.append(part)
        cols = ["run", "query", "measure", "value"] if per_query else ["run", "measure", "value", "valid_queries"]
        if not frames:
            return pd.DataFrame([], columns=cols)
        return pd.concat(frames, ignore_index=True)


def default_measures(qrels: Any, runs: list[Any], rag: Any = None) -> tuple[list[str], str]:
    """The measures a sample set gets when none are asked for, and a note saying which and why: the
    context measures that fit the kind of its references and the depth of its lists (d, the longest),
    instead of the TREC defaults (``R@100`` on 10-deep lists). Binary references:
    ``IDBasedContextRecall`` and ``IDBasedContextPrecision`` (RAGAS's numbers), ``RR`` and ``nDCG@d``;
    graded ones the same at the
    relevance level of the scale in force, with ``RA-nWG@d`` when the grades lie on the 1-5 scale;
    text-only references add ``ContextRecall(method=similarity)`` (RAGAS's non-LLM recall)."""
    from ._context.labels import resolve

    qr, rcfg = resolve(qrels, RagConfig.coerce(rag))
    depth = max((int(r.columns.layout.lengths.max()) for r in runs if len(r)), default=10)
    kind = qr.labels
    grades = distinct(qr.columns.values).tolist()
    gm = rcfg.grade_map
    if kind.binary:
        out = ["IDBasedContextRecall", "IDBasedContextPrecision", "RR", f"nDCG@{depth}"]
        if "reference_contexts" in kind.origin:
            out.append("ContextRecall(method=similarity)")
        why = "binary references"
    else:
        rel = scale_level(grades, gm) if gm is not None else (3 if kind.scale == "rag" or max(grades) > 3 else 1)
        p = f"(rel={rel})" if rel != 1 else ""
        out = [f"IDBasedContextRecall{p}", f"IDBasedContextPrecision{p}", f"RR{p}", f"nDCG@{depth}"]
        on_scale = gm.apply(np.asarray(grades)) if gm is not None else np.asarray(grades)
        if on_scale.size and on_scale.min() >= 1 and on_scale.max() <= 5:
            out.append(f"RA-nWG@{depth}")
        why = f"graded references (relevant: grade >= {rel})"
    return out, f"no measures given: for {why} and lists up to {depth} deep, {', '.join(out)} (give -m to choose)"


def evaluate(
    qrels: Any = None,
    runs: Any = None,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    samples: Any = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    ci: CI | Mapping[str, Any] | str | bool | None = None,
    chunks: Any = None,
    engine: Any = "local",
) -> Result:
    """Evaluate one or more runs.

    ``engine`` (an :class:`~ctxeval.Engine`, its name or a mapping of its fields): ``local`` (the
    default, every run read whole), ``stream`` (each run file read in chunks of whole queries, for runs
    larger than memory) or ``spark``; each gives the same values (the scale guide).

    ``qrels`` and each run may be a path, a dict-of-dicts, a pandas/polars frame or a
    :class:`Qrels`/:class:`Run`. ``policies`` (a :class:`~ctxeval.Policies`) sets the ranking rule
    (``ties``), judged queries absent from a run (``missing``: ``zero``, scored 0, trec_eval ``-c``,
    the default here; ``ignore``, trec_eval's default; ``error``) and repeated pairs (``duplicates``).
    ``ties="expected"`` gives every measure's exact expected value over all orders of tied scores,
    with the values of the best and the worst orders beside it (:meth:`RunResult.spread`; closed forms
    where they exist, else the exact average over the orders: ``ctxeval measures`` says which).

    ``ci`` puts an interval on every figure: True (95% percentile bootstrap over the queries, 10,000
    resamples, seed 0), a method (``"percentile"``, ``"bca"``, ``"t"``), or a :class:`~ctxeval.CI`
    (method, confidence, resamples, seed); each run's ``ci`` holds them and the settings say how.

    Set-based RAG measures (``RA-nWG@10``, ``PROC@10``, ...; ``ctxeval measures`` lists them) read
    the qrels grades through ``rag.grade_map`` (a preset such as ``"trec-dl"``, ``"3:5,2:4,1:3,0:2"``,
    a mapping or a :class:`GradeMap`) and need them on the 1–5 scale; ``Judged@K`` is added beside
    them. ``rag.pool`` is the retrieval pool (a run; with several runs, the same pool applies to all;
    ``rag.pools`` gives runs pools of their own by name, so a comparison can mix first stages),
    cut at ``rag.pool_depth``; without it each run is its own pool. Docs of a run outside its pool
    raise :class:`~ctxeval.PoolError` unless ``rag.allow_outside_pool``. ``rag.groups`` (doc id →
    group) serves ``RA-nWG(novelty=...)``; ``rag.fair_groups`` (the docs' fairness groups, with weights)
    and ``rag.fair_target`` (target distributions) serve AWRF.

    Distraction-aware measures (``dDCG@5``, ``UDCG@5``, ``DistractorRate@5``, ...; see
    ``ctxeval measures``) read per-passage utilities set by ``utility`` (a
    :class:`~ctxeval.UtilityConfig`: the utility map, known distractors, LLM utilities and the
    detection rules); they are computed once per run, only when such a measure is requested, and the
    settings record them.

    ``samples`` (instead of ``qrels`` and ``runs``): one sample set or a list of them (a
    :class:`~ctxeval.Samples`, a JSON-lines path, a list of sample dicts or a frame), each one run, or
    a mapping ``{name: set}`` naming them; the judgments are their references (see
    :class:`~ctxeval.Samples` and the README's sample section). ``measures`` default: :data:`DEFAULT_MEASURES` for runs, and for
    sample sets the context measures that fit their references and depth (:func:`default_measures`).

    >>> res = evaluate({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 0.2, "b": 0.9}}, ["P@1", "RR"])
    >>> res.runs[0].mean("RR"), res.runs[0].mean("P@1")
    (0.5, 0.0)
    >>> res = evaluate(samples=[{"query_id": "q1", "retrieved_ids": ["b", "a"], "reference_ids": ["a"]}],
    ...                measures=["RR", "ContextRecall@1"])
    >>> res.runs[0].mean("RR"), res.runs[0].mean("ContextRecall@1")
    (0.5, 0.0)

    ``qrels`` may be span labels (a :class:`~ctxeval.SpanLabels`: evidence as character spans of the
    documents); ``chunks`` (shorthand for ``rag.chunks``) is the chunk table placing the run's chunks
    (a :class:`~ctxeval.Chunks`, a file, a mapping ``{chunk_id: (doc_id, start, end)}``). A measure
    at a budget of tokens (``SpanRecall@2000tok``, ``nDCG@512tok``) packs each query's ranked chunks
    into the budget, their tokens from the table (``rag.tokenizer`` counts them; the settings name it).
    A 40-character document whose evidence is characters 10-20, chunked in four:

    >>> from ctxeval import Chunks, SpanLabels
    >>> labels = SpanLabels.from_records([{"query_id": "q", "doc_id": "d", "start": 10, "end": 20}])
    >>> table = Chunks.from_dict({f"c{i}": ("d", 10 * i, 10 * i + 10) for i in range(4)}, documents={"d": "one two three four five six seven eight "})
    >>> res = evaluate(labels, {"q": {"c1": 0.9, "c0": 0.5, "c3": 0.1}}, ["SpanRecall@1", "SpanPrecision@2", "SpanRecall@3tok"], chunks=table)
    >>> [res.runs[0].mean(m) for m in ("SpanRecall@1", "SpanPrecision@2", "SpanRecall@3tok")], res.settings["tokenizer"]
    ([1.0, 0.5, 1.0], 'words-v1')
    """
    eng = provider(engine)
    cfg = CI.coerce(ci)  # validated before anything is read
    rag = with_chunks(rag, chunks)
    if samples is not None and qrels is None and runs is None:
        eng.refuse(Policies.coerce(policies), None, (), True)
        apart = _apart(samples, measures, policies, rag, utility, eng)
        if apart is not None:
            return with_intervals(apart, cfg)
    qrels, runs, notes, sets = resolve_inputs("evaluate", qrels, runs, samples, policies, eng)
    if measures is None:
        measures = list(DEFAULT_MEASURES)
        if sets:
            measures, why = default_measures(qrels, runs, rag)
            notes = [*notes, why]
    session, run_objs = open_session(
        qrels, runs, measures, policies=policies, rag=rag, utility=utility, samples=sets, engine=eng
    )
    if not run_objs:
        raise ConfigError("evaluate needs at least one run")
    result = evaluate_runs(session, run_objs, session.measures)
    judged = judged_notes(session, result.runs, result.measures)
    result.notes[:] = once([*notes, *result.notes, *judged], [r.name for r in result.runs])
    return with_intervals(result, cfg)


def with_intervals(result: Result, ci: CI | Mapping[str, Any] | str | bool | None) -> Result:
    """``result`` with the interval of every run's summary of every measure (see :class:`CI`), the
    settings saying how; unchanged when ``ci`` asks for none."""
    cfg = CI.coerce(ci)
    if cfg is None:
        return result
    for r in result.runs:
        found = summary_intervals(
            [r.values[m] for m in result.measures], [m.spec.aggregate for m in result.measures], cfg
        )
        r.ci = dict(zip(result.measures, found))
    result.settings["ci"] = cfg.describe()
    return result


def with_chunks(rag: RagConfig | Mapping[str, Any] | None, chunks: Any) -> RagConfig | Mapping[str, Any] | None:
    """``rag`` with the chunk table ``chunks`` (when given; given twice is an error)."""
    if chunks is None:
        return rag
    cfg = RagConfig.coerce(rag)
    if cfg.chunks is not None:
        raise ConfigError("give the chunk table once: chunks=... or rag.chunks, not both")
    return replace(cfg, chunks=chunks)


def _apart(samples: Any, measures: Any, policies: Any, rag: Any, utility: Any, engine: Any) -> Result | None:
    """Sample sets that give some query different references, each evaluated against its own (with
    a note that their figures do not compare), or None when they agree (see
    :mod:`ctxeval._io.samples.across`)."""
    from ._io.samples import differing_references, pair_by_question

    sets, paired = pair_by_question(sample_sets(samples, Policies.coerce(policies).duplicates))
    diff = differing_references(sets)
    if diff is None:
        return None
    if measures is None:  # the measures that fit every set, chosen once
        measures, why = default_measures(*samples_inputs_of(sets), rag)
        paired = [*paired, why]
    parts = [
        evaluate(samples=[st], measures=measures, policies=policies, rag=rag, utility=utility, engine=engine)
        for st in sets
    ]
    n, first = diff
    note = (
        f"{first}{f' (and {n - 1} more queries)' if n > 1 else ''}: each set is scored against its own references, "
        "so their figures do not compare (compare refuses them); give the sets the same references to compare them"
    )
    runs = [r for p in parts for r in p.runs]
    notes = once([*paired, *merge_notes([p.notes for p in parts]), note], [r.name for r in runs])
    settings = dict(parts[0].settings)
    settings["qrels"] = " + ".join(st.source for st in sets)
    return Result(parts[0].measures, runs, settings, notes)


def samples_inputs_of(sets: list[Any]) -> tuple[Any, list[Any]]:
    """The union of the sets' judgments (graded ones pooled; no reference check) and their runs, to
    choose default measures from."""
    import polars as pl

    frames = [st.qrels_frame() for st in sets]
    both = pl.concat(frames).unique(["query_id", "doc_id"], keep="first", maintain_order=True)
    return Qrels.from_frame(both, source="+".join(st.source for st in sets)), [st.run() for st in sets]


def judged_notes(session: Session, runs: Iterable[RunResult], measures: Iterable[Measure]) -> list[str]:
    """A command's notes on judged labels (qrels or LLM utilities a judge wrote): the share of the
    ranks ``measures`` read that the judge labelled, Judged@k of each of ``runs``, said once for all of
    them (see :func:`ctxeval._context.labels.labelled_notes`)."""
    kinds = judged_labels(session)
    if not kinds:
        return []
    from ._context.labels import labelled_notes

    return labelled_notes(kinds, [(r.name, r.labelled or {}) for r in runs], list(measures))


def evaluate_runs(
    session: Session,
    run_objs: list[Any],
    measures: list[Measure],
    *,
    names: list[str] | None = None,
    tick: Callable[[], Any] | None = None,
) -> Result:
    """:func:`evaluate` on a session: every run, every measure (with ``Judged@K`` beside RAG
    measures), the side data they need built once per run, on the session's engine. Runs are named
    by the one rule of every engine, made distinct (``names`` instead, when given); ``tick`` is
    called as each run is done."""
    fn = values_fn(session, measures)
    return reduce_runs(session, map_runs(session, run_objs, fn, tick), fn, measures, names)


def reduce_runs(
    session: Session, mapped: list[Any], fn: Values, measures: list[Measure], names: list[str] | None = None
) -> Result:
    """The :class:`Result` of runs mapped by :func:`map_runs`: per-query values, the accounting and
    the notes, the runs named by ``names`` (default: their names made distinct)."""
    ms = list(fn.measures)
    rag_ms = any(m.spec.group == "rag" for m in measures)
    need_u, u_depth = fn.utility, fn.u_depth
    rates = sorted({m.k for m in ms if m.family == "DistractorRate" and m.cutoff is not None})
    names = unique_names(mapped) if names is None else names
    notes = naming_notes(mapped, names)
    level = level_note(
        measures,
        lambda: session.grades,
        session.rag.grade_map,
        scale_known=not session.qrels.plain and session.qrels.labels.scale == "rag",
    )
    if level:
        notes.append(level)
    nothing = relevance_note(measures, session.qrels.columns.values, session.rag.grade_map)
    if nothing:
        notes.append(nothing)
    session.label_notes(ms)
    unlabelled: dict[str, dict[str, int]] = {}
    at: int | None = None
    results = []
    for run, name in zip(mapped, names):
        block = run.block
        for k in rates:
            note = depth_note(
                name, block.values["depth"], k, f"DistractorRate@{k} is the share of the passages given (min(k, depth))"
            )
            if note:
                notes.append(note)
        ucounts = None
        if need_u:
            from ._context.utility import flag_note

            ucounts = sized_counts(block.totals["utility"])
            unlabelled[name] = block.totals["unlabelled"]
            if unlabelled[name]["unlabelled"] and at is None:
                at = len(notes)  # said once for all runs, where the first run's note would stand
            note = flag_note(name, block.totals["flags"], session.utility.rules)
            if note:
                notes.append(note)
        extremes = None
        if "ties" in block.totals:
            extremes = {m: (block.values[("best", m)], block.values[("worst", m)]) for m in ms}
        labelled = {key[1]: v for key, v in block.values.items() if isinstance(key, tuple) and key[0] == "labelled"}
        results.append(
            RunResult(
                name,
                run.source,
                block.qids,
                {m: block.values[m] for m in ms},
                run.accounting,
                run.dropped_duplicates,
                pool=block.totals.get("pool"),
                utility=ucounts,
                extremes=extremes,
                ties=block.totals.get("ties"),
                labelled=labelled or None,
            )
        )
    if at is not None:
        from ._context.utility import unlabelled_notes

        notes.insert(at, unlabelled_notes(unlabelled, u_depth) or "")
    settings = session.describe()
    if rag_ms or session.has_pool or session.rag.pool_depth is not None:
        settings["pool"] = session.pool_settings()
    if need_u:
        settings["utility"] = session.utility.describe()
    settings.update(session.engine.describe())
    said = [*session.notes, *(n for r in mapped for n in r.notes)]
    return Result(ms, results, settings, notes + [n for n in dict.fromkeys(said) if n not in notes])
