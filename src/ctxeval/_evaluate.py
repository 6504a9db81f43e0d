"""``evaluate``: measures over one or more runs against one qrels, with explicit query-set policies."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _pool
from ._data import Qrels, Run
from ._engine import QueryAccounting, prepare
from ._errors import ConfigError
from ._measures import Measure, parse_measures

__all__ = ["evaluate", "Result", "RunResult", "aggregate", "DEFAULT_MEASURES"]

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

    def __getitem__(self, name: str) -> RunResult:
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        runs = []
        for r in self.runs:
            entry: dict[str, Any] = {
                "name": r.name,
                "path": r.source,
                "aggregate": {str(m): _num(r.summary[m][0]) for m in self.measures},
                "valid_queries": {str(m): r.summary[m][1] for m in self.measures},
                "queries": r.accounting.to_dict(),
            }
            if r.dropped_duplicates:
                entry["dropped_duplicates"] = r.dropped_duplicates
            if r.pool is not None:
                entry["pool"] = dict(r.pool)
            if r.utility is not None:
                entry["utility"] = dict(r.utility)
            if per_query:
                entry["per_query"] = {
                    q: {str(m): _num(float(r.values[m][i])) for m in self.measures} for i, q in enumerate(r.qids)
                }
            runs.append(entry)
        return {"measures": [str(m) for m in self.measures], "runs": runs, "settings": dict(self.settings)}

    def to_pandas(self, per_query: bool = False) -> Any:
        """Long format: run, query (``all`` for the summary), measure, value."""
        import pandas as pd

        rows = []
        for r in self.runs:
            for m in self.measures:
                rows.append((r.name, "all", str(m), r.summary[m][0]))
                if per_query:
                    rows.extend((r.name, q, str(m), float(v)) for q, v in zip(r.qids, r.values[m]))
        return pd.DataFrame(rows, columns=["run", "query", "measure", "value"])


def _unique_names(runs: Sequence[Run]) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for r in runs:
        n = seen.get(r.name, 0) + 1
        seen[r.name] = n
        names.append(r.name if n == 1 else f"{r.name}#{n}")
    return names


def evaluate(
    qrels: Any,
    runs: Any,
    measures: Iterable[str | Measure] | str | Measure = DEFAULT_MEASURES,
    *,
    ties: str = "trec",
    missing: str = "zero",
    duplicates: str = "error",
    grade_map: Any = None,
    pool: Any = None,
    pool_depth: int | None = None,
    allow_outside_pool: bool = False,
    groups: Any = None,
    utility_map: Any = None,
    distractors: Any = None,
    utilities: Any = None,
    distractor_rules: Any = "default",
    tau: float | None = None,
    top_rank: int | None = None,
    penalty: float | None = None,
    llm_threshold: float | None = None,
) -> Result:
    """Evaluate one or more runs.

    ``qrels`` and each run may be a path, a dict-of-dicts, a pandas/polars frame or a
    :class:`Qrels`/:class:`Run`. ``missing`` decides judged queries absent from a run: ``zero``
    (scored 0, trec_eval ``-c``; the default here), ``ignore`` (trec_eval's default) or ``error``.

    Set-based RAG measures (``RA-nWG@10``, ``PROC@10``, ...; see :mod:`ctxeval._measures._rag`) read
    the qrels grades through ``grade_map`` (a preset such as ``"trec-dl"``, ``"3:5,2:4,1:3,0:2"``, a
    mapping or a :class:`GradeMap`) and need them on the 1–5 scale; ``Judged@K`` is added beside them.
    ``pool`` is the retrieval pool (a run; with several runs, the same pool applies to all), cut at
    ``pool_depth``; without it each run is its own pool. Docs of a run outside its pool raise
    :class:`~ctxeval._pool.PoolError` unless ``allow_outside_pool``. ``groups`` (doc id → group, a
    mapping or a ``doc_id group`` file) serves ``RA-nWG(novelty=...)``.

    Distraction-aware measures (``dDCG@5``, ``UDCG@5``, ``DistractorRate@5``, ...; see
    :mod:`ctxeval._measures._distraction`) read per-passage utilities (:mod:`ctxeval._utility`):
    ``utility_map`` (grade -> utility, default ``{5: 1, 4: 1, 3: 0.5, 2: 0, 1: -1}`` on the grades after
    ``grade_map``), ``distractors`` (known ``qid docid`` pairs, u = -1), ``utilities`` (LLM utilities,
    ``qid docid u`` lines) and the detection rules ``distractor_rules`` (``default``, ``strict``,
    ``lenient``, ``off`` or a :class:`~ctxeval._utility.DistractorRules`) with ``tau``, ``top_rank``,
    ``penalty`` overrides; ``llm_threshold`` (default 0.5): with LLM utilities, an irrelevant passage
    is a distractor (u = -LLM utility) only when its LLM utility is >= this, else its utility is 0. They are computed once per run, only when such a measure is requested, and
    the settings record them.

    >>> res = evaluate({"q1": {"a": 1, "b": 0}}, {"q1": {"a": 0.2, "b": 0.9}}, ["P@1", "RR"])
    >>> res.runs[0].mean("RR"), res.runs[0].mean("P@1")
    (0.5, 0.0)
    """
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    qr, run_objs = _read_inputs(qrels, run_list, duplicates)
    ms = _measure_list(measures)
    gm = _pool.coerce_grade_map(grade_map)
    pool_run = Run.coerce(pool, duplicates=duplicates) if pool is not None else None
    grp = _pool.load_groups(groups)
    rag = any(_pool.is_rag(m) for m in ms)
    if rag:
        ms = _pool.with_judged(ms)
    need_u = any("utility" in m.spec.requires for m in ms)
    ucfg = None
    if need_u or any(x is not None for x in (utility_map, distractors, utilities, tau, top_rank, penalty, llm_threshold)) or distractor_rules != "default":
        from ._utility import UtilityConfig

        ucfg = UtilityConfig.resolve(utility_map, distractors, utilities, distractor_rules, tau, top_rank, penalty, llm_threshold)
    results = []
    for run, name in zip(run_objs, _unique_names(run_objs)):
        data = prepare(
            qr, run, ties=ties, missing=missing, grade_map=gm, pool=pool_run, pool_depth=pool_depth, allow_outside_pool=allow_outside_pool, groups=grp,
            keep_frame=need_u,
        )
        _pool.check_scale(data, ms)
        ucounts = None
        if need_u:
            from ._utility import attach_utilities

            ucounts = attach_utilities(data, ucfg, qr).counts()
        values = {m: m.compute(data) for m in ms}
        pool_report = data.pool.report() if pool_run is not None else None  # type: ignore[union-attr]
        results.append(RunResult(name, run.source, data.qids, values, data.accounting, run.dropped_duplicates, pool=pool_report, utility=ucounts))
    settings = {
        "qrels": qr.source,
        "ties": ties,
        "missing": missing,
        "duplicates": duplicates,
        "qrels_dropped_duplicates": qr.dropped_duplicates,
        "grade_map": gm.describe() if gm is not None else None,
    }
    if rag or pool_run is not None or pool_depth is not None:
        settings["pool"] = _pool.settings(pool_run, pool_depth, allow_outside_pool, grp)
    if need_u and ucfg is not None:
        settings["utility"] = ucfg.describe()
    return Result(ms, results, settings)


_OVERLAP_QRELS_BYTES = 2 << 20  # below this, a second thread costs more than it saves


def _large_file(obj: Any, size: int) -> bool:
    if not isinstance(obj, (str, os.PathLike)):
        return False
    try:
        return os.stat(obj).st_size >= size
    except OSError:
        return False  # the reader reports it


def _read_inputs(qrels: Any, run_list: list[Any], duplicates: str) -> tuple[Qrels, list[Run]]:
    """Read the qrels and the runs. When the qrels come from a large file, it is read on a second thread
    while the runs are read: the parsers release the GIL and leave part of a core idle, which the other
    read fills. The qrels' error, if any, is raised first, as when they are read first."""
    if not run_list:
        raise ConfigError("evaluate needs at least one run")
    if not _large_file(qrels, _OVERLAP_QRELS_BYTES):
        qr = Qrels.coerce(qrels, duplicates=duplicates)
        return qr, [Run.coerce(r, duplicates=duplicates) for r in run_list]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(Qrels.coerce, qrels, duplicates=duplicates)
        try:
            runs = [Run.coerce(r, duplicates=duplicates) for r in run_list]
        except BaseException:
            pending.result()  # a qrels error wins, as in sequential order
            raise
        return pending.result(), runs


def _measure_list(measures: Iterable[str | Measure] | str | Measure) -> list[Measure]:
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    out: list[Measure] = []
    for m in measures:
        for parsed in parse_measures(m):
            if parsed not in out:
                out.append(parsed)
    if not out:
        raise ConfigError("no measures given")
    return out

