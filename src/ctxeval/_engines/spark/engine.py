"""The Spark engine: a verb's block function on the executors, one block per partition of whole queries.

The driver's session reads the qrels, the pool and the side files (as every engine's session does);
Spark reads the runs (paths it reads: TREC text ``qid Q0 docid rank score tag``, Parquet, JSON lines;
or Spark DataFrames with query_id, doc_id, score[, tag] columns; a run given in memory is sent from
the driver). The qrels, each run and the pool become one frame ``(kind, query_id, doc_id, value,
tag)``, repartitioned by query id; each partition (whole queries, every kind of row of a query
together) goes through Arrow to a Python worker (``mapInArrow``), which prepares it with the
driver's session over the partition's judgments and applies the verb's block function; the driver
collects one pickled block per partition and merges them in query-id order (:mod:`..blocks`). A
query's values depend on its own rows alone, so they equal the local engine's exactly; the matrix
test checks every verb.

What Spark's shuffle cannot keep is refused before a JVM starts: the input order of a file (the
``input`` ranking rule, the ``first`` and ``best`` duplicate rules), a pool per run, and the side data
that lives beside the runs in this process (sample sets' fields, fairness groups, doc groups, chunk
tables and span labels, subtopic qrels); so is ``ties="expected"`` (its tests pin Spark to the ranking
rules of trec_eval; the blocks would carry its per-query values as they carry the others).
"""

from __future__ import annotations

import os
import pickle
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from ..._core.evaldata import QueryAccounting
from ..._errors import ConfigError, DependencyError, InputError
from ..._io.model import Qrels, Run, _stem, split_named
from ..._policies import Policies
from ..base import Capabilities, Engine, Job, Provider
from ..blocks import Block, Mapped, merge
from ..local import LocalEngine
from ..shared import block_session, empty_block, finish
from .runtime import Progress, Tasks, check_spark_needs, spark_session

__all__ = ["SparkEngine", "SparkRun"]

_ROWS = "kind string, query_id string, doc_id string, value double, tag string"


@dataclass(frozen=True)
class SparkRun:
    """A run Spark reads: a path or a Spark DataFrame, the name given (else its one tag, else its
    file's name, or ``run<i>`` for a frame)."""

    value: Any
    given: str | None
    fallback: str
    samples: None = None
    dropped_duplicates: int = 0

    @property
    def name(self) -> str:
        return self.given or self.fallback

    @property
    def source(self) -> str:
        return os.fspath(self.value) if isinstance(self.value, (str, os.PathLike)) else "<spark frame>"

    def with_name(self, name: str) -> SparkRun:
        return replace(self, given=name)


class SparkEngine(Provider):
    """A verb's blocks computed on Spark (see the module docstring). ``master``: the master URL of a
    session started for it (default ``local[*]``; without one, the active session is used); ``spark``:
    a session to use; ``progress`` (see :data:`.runtime.Progress`) hears what is starting and how far
    the Spark tasks are."""

    name = "spark"
    instead = "the local or stream engine"
    capabilities = Capabilities(
        ties=frozenset({"trec", "trec10"}),
        duplicates=frozenset({"error"}),
        columns=False,
        per_run_pools=False,
        side_data=frozenset({"grades", "pool", "utility", "fits", "scores"}),
        why={
            "ties=input": "Spark's shuffle does not keep a file's order",
            "ties=expected": "ties='expected' runs on the local and stream engines, not on Spark: use ties='trec'",
            "duplicates": "Spark's shuffle does not keep a file's order",
        },
    )

    def __init__(self, master: str | None = None, spark: Any = None, progress: Progress | None = None) -> None:
        self.master, self.spark, self.progress = master, spark, progress

    @classmethod
    def from_settings(cls, settings: Engine, progress: Progress | None = None) -> SparkEngine:
        return cls(settings.master, progress=progress)

    def check(self) -> None:
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise DependencyError("the Spark engine", "pyspark", "spark") from None
        if self.spark is None and (self.master is not None or SparkSession.getActiveSession() is None):
            check_spark_needs()

    def session(self) -> Any:
        """The Spark session (started on first use)."""
        if self.spark is None:
            self.spark = spark_session(self.master, self.progress)
        return self.spark

    def read(self, runs: Sequence[Any], policies: Policies) -> list[Any]:
        out: list[Any] = []
        for i, run in enumerate(runs):
            if isinstance(run, (SparkRun, Run)):
                out.append(run)
            elif isinstance(run, (str, os.PathLike)):
                given, path = split_named(run) if isinstance(run, str) else (None, os.fspath(run))
                if "://" not in path and not os.path.exists(path):
                    raise InputError(f"{path}: no such file")
                out.append(SparkRun(path, given, _stem(path)))
            elif SparkEngine.is_frame(run):
                out.append(SparkRun(run, None, f"run{i + 1}"))
            else:  # a run in memory: read here, sent to Spark
                out.append(Run.coerce(run, duplicates=policies.duplicates))
        return out

    def blocks(self, session: Any, run: Any, job: Job) -> Mapped:
        try:
            from pyspark.errors import PySparkException
        except ImportError:
            raise DependencyError("the Spark engine", "pyspark", "spark") from None
        with warnings.catch_warnings():  # pyspark's FutureWarnings about pandas are not the user's concern
            warnings.filterwarnings("ignore", category=FutureWarning)
            try:
                return self._blocks(session, run, job)
            except PySparkException as exc:  # Spark's own errors as one line, not a Java stack
                raise InputError(f"Spark: {str(exc).splitlines()[0]}") from None

    def _blocks(self, session: Any, run: Any, job: Job) -> Mapped:
        spark = self.session()
        rows = _driver_rows(spark, session.qrels.frame, "qrels", "relevance")
        pool = session.settings.pool
        if pool is not None:
            rows = rows.unionByName(_driver_rows(spark, pool.frame, "pool", "score"))
        in_memory = isinstance(run, Run)
        rows = rows.unionByName(_driver_rows(spark, run.frame, "run", "score") if in_memory else _run_rows(spark, run))
        # the driver's session without what the executors get from the partition (its judgments, the
        # pool's rows) or need not (the engine, the notes)
        shell = replace(
            session.on(session.qrels.queries(())),
            engine=LocalEngine(),
            settings=replace(session.settings, pool=None),
        )
        label = run.name
        fn = _partition(shell, job, label, run.source, (pool.name, pool.source) if pool is not None else None)
        per = rows.repartition("query_id").mapInArrow(fn, "payload binary")
        with Tasks(spark, self.progress, f"evaluating run {label}"):
            outs = [pickle.loads(r["payload"]) for r in per.collect()]
        blocks = [b for b, _, _ in outs if b is not None]
        accs: list[QueryAccounting] = [a for _, a, _ in outs]
        tags = {t for _, _, ts in outs for t in ts}
        if not in_memory and run.given is None and len(tags) == 1 and None not in tags:
            label = str(next(iter(tags)))  # one tag throughout names the run, as the local engine names it
        missing = sorted({q for a in accs for q in a.missing_ids})
        acc, notes = finish(session, label, run.source, accs, missing, run.samples)
        if not blocks:
            blocks = [empty_block(session, job, label, run.source)]
        return Mapped(label, run.source, run.dropped_duplicates, acc, merge(blocks), run, notes)

    def describe(self) -> dict[str, Any]:
        return {"engine": "spark", "master": self.session().sparkContext.master}

    @staticmethod
    def is_frame(value: Any) -> bool:
        """Whether ``value`` is a Spark DataFrame (False without pyspark)."""
        try:
            from pyspark.sql import DataFrame
        except ImportError:
            return False
        return isinstance(value, DataFrame)


def _driver_rows(spark: Any, frame: pl.DataFrame, kind: str, value: str) -> Any:
    """Rows the driver holds (the qrels, the pool, a run given in memory) as the shuffled frame's rows."""
    from pyspark.sql import functions as F

    if frame.height == 0:
        return spark.createDataFrame([], _ROWS)
    df = spark.createDataFrame(frame.select("query_id", "doc_id", pl.col(value).cast(pl.Float64)).to_pandas())
    return df.select(
        F.lit(kind).alias("kind"),
        F.col("query_id").cast("string").alias("query_id"),
        F.col("doc_id").cast("string").alias("doc_id"),
        F.col(value).cast("double").alias("value"),
        F.lit(None).cast("string").alias("tag"),
    )


def _run_rows(spark: Any, run: SparkRun) -> Any:
    """A run Spark reads (a DataFrame, or a path: TREC text, Parquet, JSON lines) as the shuffled frame's rows."""
    from pyspark.sql import functions as F

    value = run.value
    if SparkEngine.is_frame(value):
        df = value
    else:
        path = os.fspath(value)
        if path.endswith(".parquet") or os.path.isdir(path):
            df = spark.read.parquet(path)
        elif path.endswith((".jsonl", ".json", ".ndjson")):
            df = spark.read.json(path)
        else:
            fields = F.split(F.trim(F.col("value")), r"\s+")
            lines = spark.read.text(path).where(~F.col("value").startswith("#") & (F.length(F.trim("value")) > 0))
            df = lines.select(
                fields[0].alias("query_id"), fields[2].alias("doc_id"), fields[4].alias("score"), fields[5].alias("tag")
            )
    cols = {c.lower(): c for c in df.columns}
    q = cols.get("query_id") or cols.get("qid")
    d = cols.get("doc_id") or cols.get("docid") or cols.get("doc")
    v = cols.get("score")
    if q is None or d is None or v is None:
        raise ConfigError(f"the run frame needs query_id, doc_id and score columns, got {df.columns}")
    tag = F.col(cols["tag"]).cast("string") if "tag" in cols else F.lit(None).cast("string")
    return df.select(
        F.lit("run").alias("kind"),
        F.col(q).cast("string").alias("query_id"),
        F.col(d).cast("string").alias("doc_id"),
        F.col(v).cast("double").alias("value"),
        tag.alias("tag"),
    )


def _partition(shell: Any, job: Job, name: str, source: str, pool: tuple[str, str] | None) -> Callable[..., Any]:
    """The function each partition's Python worker runs: its rows (Arrow batches) to one pickled
    (block, accounting, tags)."""

    def fn(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        warnings.filterwarnings("ignore")
        tables = [pa.Table.from_batches([b]) for b in batches]
        if not tables:
            return
        frame = pl.from_arrow(pa.concat_tables(tables))
        assert isinstance(frame, pl.DataFrame)
        out = _evaluate_partition(frame, shell, job, name, source, pool)
        yield pa.RecordBatch.from_pydict({"payload": [pickle.dumps(out)]})

    return fn


def _evaluate_partition(
    df: pl.DataFrame, shell: Any, job: Job, name: str, source: str, pool: tuple[str, str] | None
) -> tuple[Block | None, QueryAccounting, list[str | None]]:
    """One partition: its judgments, run rows and pool rows prepared by the driver's session and given
    to the block function; the block (None without judgments), its accounting, up to two of its tags."""

    def part(kind: str, value: str) -> pl.DataFrame:
        return df.filter(pl.col("kind") == kind).select("query_id", "doc_id", pl.col("value").alias(value))

    qr = part("qrels", "relevance").with_columns(pl.col("relevance").cast(pl.Int64))
    rows = part("run", "score")
    tags = df.filter(pl.col("kind") == "run")["tag"].unique().sort(nulls_last=True).to_list()[:2]
    policy = shell.policies.missing
    if qr.height == 0:  # the run's queries here are unjudged
        unjudged = sorted(set(rows["query_id"].to_list()))
        return None, QueryAccounting(0, 0, len(unjudged), policy, unjudged_ids=tuple(unjudged)), tags
    judged = shell.qrels.on(Qrels.from_frame(qr, source=shell.qrels.source).columns)
    pool_run = None
    if pool is not None:
        pool_rows = part("pool", "score")
        pool_run = Run.from_frame(pool_rows, name=pool[0], source=pool[1]) if pool_rows.height else Run.empty(*pool)
    session = block_session(shell.on(judged, pool_run), "zero" if policy == "zero" else "ignore")
    run = Run.from_frame(rows, name=name, source=source) if rows.height else Run.empty(name, source)
    data = session.prepare(run, job.measures, keep_rows=job.keep_rows, extras=job.extras, notes=[])
    return job.fn(session, data), data.accounting, tags
