"""``evaluate_stream`` and ``evaluate_spark``: :func:`ctxeval.evaluate` on one engine, as the public API
has promised them (every verb takes ``engine=`` instead; see :mod:`ctxeval._engines`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._engines.spark.engine import SparkEngine
from ._engines.spark.runtime import Progress
from ._engines.stream import StreamEngine
from ._evaluate import Result, evaluate
from ._measures import Measure
from ._policies import Policies

__all__ = ["evaluate_spark", "evaluate_stream"]


def evaluate_stream(
    qrels: Any,
    run: str | os.PathLike[str],
    measures: Iterable[str | Measure] | str | Measure,
    *,
    name: str | None = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: Any = None,
    utility: Any = None,
    chunk_bytes: int | None = None,
    chunk_rows: int = 2_000_000,
    sort_first: bool = False,
) -> Result:
    """:func:`ctxeval.evaluate` of one run file read in chunks of whole queries (the stream engine):
    ``evaluate(..., engine=Engine("stream", ...))``. ``chunk_bytes``
    (default: an eighth of the run's text, between 1 and 64 MiB, which keeps the peak below the local
    engine's) bounds the memory; ``sort_first`` groups an ungrouped run first: read whole when it fits
    in the memory available, else sorted out of core.

    Streaming pays only for a run whose in-memory reading does not fit (about 0.6 times its text with
    the classical measures, 2.5 times with measures that keep every ranked row, such as PROC or
    RA-nWG): below that, the local engine is faster for the same values."""
    eng = StreamEngine(chunk_bytes, chunk_rows, sort_first)
    (handle,) = eng.read([run], Policies.coerce(policies))
    if name is not None:
        handle = handle.with_name(name)
    return evaluate(qrels, [handle], measures, policies=policies, rag=rag, utility=utility, engine=eng)


def evaluate_spark(
    qrels: Any,
    runs: Any,
    measures: Iterable[str | Measure] | str | Measure,
    *,
    names: Sequence[str | None] | None = None,
    policies: Any = None,
    rag: Any = None,
    utility: Any = None,
    spark: Any = None,
    master: str | None = None,
    progress: Progress | None = None,
) -> tuple[Result, Any]:
    """:func:`ctxeval.evaluate` on Spark (the Spark engine), with the per-query
    values also as a Spark DataFrame ``(run, query_id, <one column per measure>)``. ``runs``: paths
    Spark reads or Spark DataFrames, each named by its entry in ``names`` (None: not given), else by
    the rule of every engine; ``qrels`` (and ``rag``'s ``pool``, ``utility``'s ``utilities`` and
    ``distractors``) may be Spark DataFrames too, collected to the driver. Sample sets: ``qrels=None``
    and ``runs`` the sample sets (read on the driver; their runs evaluated on Spark). ``spark``: the
    session to use, else one started (``master``, default ``local[*]``), its start told to
    ``progress``."""
    eng = SparkEngine(master, spark, progress)
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    given = list(names) if names else [None] * len(run_list)
    kw: dict[str, Any] = {"policies": policies, "rag": _local_in(rag, "pool"), "engine": eng}
    kw["utility"] = _local_in(utility, "utilities", "distractors")
    if qrels is None:  # sample sets: each one run, their references the judgments
        sets = [_local(s) for s in run_list]
        named = dict(zip(given, sets)) if all(given) else sets
        result = evaluate(samples=named, measures=measures, **kw)
    else:
        handles = eng.read(run_list, Policies.coerce(policies))
        handles = [h.with_name(n) if n else h for h, n in zip(handles, given)]
        result = evaluate(_local(qrels), handles, measures, **kw)
    return result, _per_query_frame(eng.session(), result)


def _local(value: Any) -> Any:
    """A Spark DataFrame collected to the driver (as pandas), anything else as it is."""
    return value.toPandas() if SparkEngine.is_frame(value) else value


def _local_in(settings: Any, *keys: str) -> Any:
    """``settings`` (a mapping) with the Spark DataFrames under ``keys`` collected to the driver."""
    if not isinstance(settings, Mapping):
        return settings
    return {k: _local(v) if k in keys else v for k, v in settings.items()}


def _per_query_frame(spark: Any, result: Result) -> Any:
    """The per-query values of ``result`` as a Spark DataFrame ``(run, query_id, <measure>...)``."""
    import pandas as pd

    names = [str(m) for m in result.measures]
    rows = [
        (r.name, q, *(float(r.values[m][i]) for m in result.measures))
        for r in result.runs
        for i, q in enumerate(r.qids)
    ]
    frame = pd.DataFrame(rows, columns=["run", "query_id", *names])
    schema = ", ".join(["run string", "query_id string", *(f"`{n}` double" for n in names)])
    return spark.createDataFrame(frame, schema)
