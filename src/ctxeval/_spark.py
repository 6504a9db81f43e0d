"""The Spark engine: every registered measure on data held by Spark, by the same kernels.

The qrels, each run, the retrieval pool and the LLM utilities / known distractors become one long
frame ``(kind, query_id, doc_id, value)``, repartitioned by query id; each partition (whole queries,
every kind of row of a query together) goes through Arrow to :func:`ctxeval.evaluate` on the
executors (``mapInArrow``), which returns the partition's per-query values and query accounting. The
driver collects the per-query values (small: one row per query) and builds the same
:class:`~ctxeval.Result` as the local engine; the values are also returned as a Spark DataFrame.

Global statistics are computed first and broadcast: ERR's default ``gmax`` (the highest grade of the
whole qrels) becomes an explicit ``gmax`` in each partition. A query's value depends on its own rows
alone (sums within a query never run across queries), so the values equal the local engine's
exactly; a differential test checks it.

Inputs: Spark DataFrames with (query_id, doc_id, relevance|score[, u]) columns, or paths Spark reads:
TREC text (qrels: ``qid iter docid grade``; runs: ``qid Q0 docid rank score tag``), Parquet, JSON lines.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._errors import ConfigError, DependencyError, InputError
from ._evaluate import Result, RunResult
from ._measures import Measure
from ._policies import Policies
from ._session import measure_list

__all__ = ["check_spark_needs", "evaluate_spark", "spark_session"]

#: the Java release Spark 4 needs at least
JAVA_MIN = 17
_JAVA_HOW = (
    "install it (Debian/Ubuntu: apt install openjdk-17-jre-headless; macOS: brew install openjdk@17) "
    "or set JAVA_HOME to a Java 17 (or later) installation"
)

#: ``progress(text, update)``: a line saying what is starting or done; ``update=True``: a count that
#: replaces the previous one (a terminal rewrites its line; a log may skip it)
Progress = Callable[[str, bool], None]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text.split("+")[0])[:3])


def check_spark_needs() -> None:
    """Before any JVM starts (it takes 10-90 s): pyspark, the pandas and pyarrow that pyspark's Arrow
    path requires (its own ``sql`` requirements, read from its metadata), and a Java runtime of
    release 17 or later (``$JAVA_HOME/bin/java``, else ``java`` on PATH), each missing one as a
    one-line :class:`DependencyError` saying how to install it."""
    from importlib import metadata

    what = "the Spark engine"
    try:
        metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        raise DependencyError(what, "pyspark", "spark") from None
    for req in metadata.requires("pyspark") or []:
        m = re.match(r"\s*([A-Za-z0-9_.-]+)\s*>=\s*([0-9][^;,\s]*)\s*;.*extra\s*==\s*.sql.", req)
        if m is None:
            continue
        name, least = m.groups()
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            raise DependencyError(what, f"{name} >= {least} (for pyspark's Arrow path)", "spark") from None
        if _version(have) < _version(least):
            raise DependencyError(what, f"{name} >= {least} (for pyspark's Arrow path)", "spark", found=f"found {have}")
    _check_java(what)


def _check_java(what: str) -> None:
    home = os.environ.get("JAVA_HOME")
    package = f"Java {JAVA_MIN} or later"
    if home:
        java: str | None = os.path.join(home, "bin", "java")
        if not os.access(java, os.X_OK):  # type: ignore[arg-type]
            raise DependencyError(
                what, package, "spark", found=f"and JAVA_HOME={home} holds no bin/java", how=_JAVA_HOW
            )
    else:
        java = shutil.which("java")
        if java is None:
            raise DependencyError(
                what,
                package,
                "spark",
                found="and no Java was found (JAVA_HOME is unset, no java on PATH)",
                how=_JAVA_HOW,
            )
    try:
        done = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)  # type: ignore[list-item]
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DependencyError(what, package, "spark", found=f"and {java} does not run ({exc})", how=_JAVA_HOW) from None
    m = re.search(r'version "([^"]+)"', done.stderr + done.stdout)
    if done.returncode != 0 or m is None:
        raise DependencyError(what, package, "spark", found=f"and {java} -version failed", how=_JAVA_HOW)
    release = _version(m.group(1))
    major = release[1] if release[:1] == (1,) and len(release) > 1 else release[0]  # "1.8.0_292" is Java 8
    if major < JAVA_MIN:
        raise DependencyError(what, package, "spark", found=f"found Java {major} ({java})", how=_JAVA_HOW)


def spark_session(master: str | None = None, progress: Progress | None = None) -> Any:
    """The active Spark session, or a quiet local one (``local[*]`` by default). A new local session
    runs its Python workers with this interpreter (unless ``PYSPARK_PYTHON`` says otherwise), so a
    venv's ``ctxeval`` called by its path works without the venv activated."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DependencyError("the Spark engine", "pyspark", "spark") from None
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    check_spark_needs()
    warnings.filterwarnings("ignore", category=FutureWarning, module="pyspark")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no warning about the host name's address
    if (master or "local").startswith("local"):
        # local workers are started by the JVM with PYSPARK_PYTHON, else "python3" on PATH: a venv
        # not activated would give them an interpreter without ctxeval (or pyspark)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    log4j = Path(__file__).parent / "data" / "spark-log4j2.properties"
    java_opts = f"-Dlog4j2.configurationFile=file:{log4j}"
    builder = (
        SparkSession.builder.master(master or "local[*]")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
        .appName("ctxeval")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(max(2, (os.cpu_count() or 2) * 2)))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
    )
    # the JVM's start-up chatter (log level hints, incubator modules) goes to a log file, not to the
    # user's terminal: the JVM keeps the standard error it is started with
    log = Path(tempfile.gettempdir()) / f"ctxeval-spark-{os.getpid()}.log"
    if progress is not None:
        progress(
            f"starting Spark ({master or 'local[*]'}): a Java virtual machine and Spark's context, "
            "usually 10-90 s (its log: " + str(log) + ")",
            False,
        )
    t0 = time.perf_counter()
    saved = os.dup(2)
    try:
        with open(log, "ab") as fh:
            os.dup2(fh.fileno(), 2)
            spark = builder.getOrCreate()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    spark.sparkContext.setLogLevel("ERROR")
    if progress is not None:
        progress(f"Spark started in {time.perf_counter() - t0:.0f} s", False)
    return spark


class _Tasks:
    """Reports the tasks of the running Spark stages every ``every`` seconds while a job runs."""

    def __init__(self, spark: Any, progress: Progress | None, what: str, every: float = 1.0) -> None:
        self.spark, self.progress, self.what, self.every = spark, progress, what, every
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> _Tasks:
        if self.progress is not None:
            self.progress(f"{self.what}: submitting the Spark job", False)
            self.thread = threading.Thread(target=self._poll, daemon=True)
            self.thread.start()
        return self

    def _poll(self) -> None:
        tracker = self.spark.sparkContext.statusTracker()
        while not self.stop.wait(self.every):
            try:
                infos = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
            except Exception:  # pragma: no cover - the context stopping under the poll
                return
            infos = [i for i in infos if i is not None]
            if infos and self.progress is not None:
                done = sum(i.numCompletedTasks for i in infos)
                total = sum(i.numTasks for i in infos)
                self.progress(f"{self.what}: Spark tasks {done}/{total}", True)

    def __exit__(self, *exc: Any) -> None:
        self.stop.set()
        if self.thread is not None:
            self.thread.join()


def _frame(spark: Any, value: Any, kind: str) -> Any:
    """``value`` (a Spark DataFrame or a path) as (query_id, doc_id, value) strings and a double."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    if isinstance(value, DataFrame):
        df = value
    elif isinstance(value, str) and value.startswith("irds:"):  # an ir_datasets dataset: read here, then Spark's
        from ._io.model import Qrels

        if kind != "qrels":
            raise ConfigError(f"{value}: an ir_datasets dataset gives qrels, query texts and passages, not a {kind}")
        df = spark.createDataFrame(Qrels.coerce(value).frame.to_pandas())
    elif isinstance(value, (str, os.PathLike)):
        path = os.fspath(value)
        if "://" not in path and not os.path.exists(path):
            raise InputError(f"{path}: no such file")
        if path.endswith(".parquet") or os.path.isdir(path):
            df = spark.read.parquet(path)
        elif path.endswith((".jsonl", ".json", ".ndjson")):
            df = spark.read.json(path)
        else:
            fields = F.split(F.trim(F.col("value")), r"\s+")
            lines = spark.read.text(path).where(~F.col("value").startswith("#") & (F.length(F.trim("value")) > 0))
            if kind == "qrels":
                df = lines.select(fields[0].alias("query_id"), fields[2].alias("doc_id"), fields[3].alias("relevance"))
            elif kind == "run":
                df = lines.select(
                    fields[0].alias("query_id"),
                    fields[2].alias("doc_id"),
                    fields[4].alias("score"),
                    fields[5].alias("tag"),
                )
            elif kind == "pool":
                df = lines.select(fields[0].alias("query_id"), fields[2].alias("doc_id"), fields[4].alias("score"))
            elif kind == "utility":
                df = lines.select(fields[0].alias("query_id"), fields[1].alias("doc_id"), fields[2].alias("u"))
            else:
                df = lines.select(fields[0].alias("query_id"), fields[1].alias("doc_id"), F.lit(1.0).alias("value"))
    else:
        raise ConfigError(
            f"the Spark engine reads Spark DataFrames or paths, got {type(value).__name__} for the {kind}"
        )
    cols = {c.lower(): c for c in df.columns}
    q = cols.get("query_id") or cols.get("qid")
    d = cols.get("doc_id") or cols.get("docid") or cols.get("doc")
    v = next((cols[c] for c in ("relevance", "score", "u", "utility", "value") if c in cols), None)
    if q is None or d is None or (v is None and kind != "distractor"):
        raise ConfigError(f"the {kind} frame needs query_id, doc_id and a value column, got {df.columns}")
    val = F.col(v).cast("double") if v is not None else F.lit(1.0)
    tag = F.col(cols["tag"]).cast("string") if kind == "run" and "tag" in cols else F.lit(None).cast("string")
    return df.select(
        F.lit(kind).alias("kind"),
        F.col(q).cast("string").alias("query_id"),
        F.col(d).cast("string").alias("doc_id"),
        val.alias("value"),
        tag.alias("tag"),
    )


_SAMPLE_SCHEMA = (
    "query_id string, retrieved_ids array<string>, retrieved_context_ids array<string>, "
    "retrieved_scores array<double>, reference_ids array<string>, reference_context_ids array<string>, "
    "grades map<string,bigint>, retrieved array<struct<id:string,score:double>>"
)


def samples_frames(spark: Any, value: Any) -> tuple[Any, Any]:
    """A sample set (a Spark DataFrame, or a JSON-lines path read with the sample schema, ``grades``
    as a map; chunks with ids: text-only samples are the local engine's) as (qrels, run) frames, by
    the local reader's rules: the list order is the ranking; the
    given scores are kept when they rank the chunks in that order (decreasing as float32, ties by id
    descending), else the scores are n .. 1; the judgments are the grades, else the reference ids at
    grade 1 (the first of a repeated id)."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    df = value if isinstance(value, DataFrame) else spark.read.schema(_SAMPLE_SCHEMA).json(os.fspath(value))
    cols = set(df.columns)

    def first(*names: str) -> Any:
        present = [F.col(n) for n in names if n in cols]
        return F.coalesce(*present) if len(present) > 1 else (present[0] if present else F.lit(None))

    ids = first("retrieved_ids", "retrieved_context_ids")
    scores = F.col("retrieved_scores") if "retrieved_scores" in cols else F.lit(None).cast("array<double>")
    if "retrieved" in cols:  # [{id, score?}, ...] wins, as in the local reader
        item_ids = F.transform("retrieved", lambda x: x["id"])
        item_scores = F.transform("retrieved", lambda x: x["score"])
        all_scored = F.forall("retrieved", lambda x: x["score"].isNotNull())
        ids = F.when(F.col("retrieved").isNotNull(), item_ids).otherwise(ids)
        scores = F.when(F.col("retrieved").isNotNull(), F.when(all_scored, item_scores)).otherwise(scores)
    refs = first("reference_ids", "reference_context_ids")
    grades = F.col("grades") if "grades" in cols else F.lit(None).cast("map<string,bigint>")
    base = df.select(
        F.col("query_id").cast("string").alias("query_id"),
        ids.alias("ids"),
        scores.alias("scores"),
        refs.alias("refs"),
        grades.alias("grades"),
    )
    n = F.size("ids")
    f32 = lambda i: F.col("scores")[i].cast("float")  # noqa: E731
    in_order = F.when(F.col("scores").isNull() | (F.size("scores") != n), F.lit(False)).otherwise(
        F.forall(
            F.sequence(F.lit(0), F.greatest(n - 2, F.lit(0))),
            lambda i: (
                (n < 2) | (f32(i + 1) < f32(i)) | ((f32(i + 1) == f32(i)) & (F.col("ids")[i + 1] < F.col("ids")[i]))
            ),
        )
    )
    run = base.select(
        "query_id", F.posexplode("ids").alias("pos", "doc_id"), n.alias("n"), in_order.alias("ok"), "scores"
    ).select(
        "query_id",
        "doc_id",
        F.when(F.col("ok"), F.col("scores")[F.col("pos")])
        .otherwise((F.col("n") - F.col("pos")).cast("double"))
        .alias("score"),
    )
    has_grades = F.col("grades").isNotNull() & (F.size("grades") > 0)
    graded = base.where(has_grades).select("query_id", F.explode("grades").alias("doc_id", "relevance"))
    by_refs = (
        base.where(~has_grades | F.col("grades").isNull())
        .select("query_id", F.explode("refs").alias("doc_id"))
        .dropDuplicates(["query_id", "doc_id"])
        .select("query_id", "doc_id", F.lit(1).cast("bigint").alias("relevance"))
    )
    qrels = graded.unionByName(by_refs)
    return qrels, run


def _gives_grades(spark: Any, value: Any) -> bool:
    """Whether a sample set (a DataFrame or a JSON-lines path) grades any chunk: its references are
    then graded, else binary reference ids (:class:`ctxeval.LabelKind`)."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    df = value if isinstance(value, DataFrame) else spark.read.schema(_SAMPLE_SCHEMA).json(os.fspath(value))
    return "grades" in df.columns and df.where(F.size(F.col("grades")) > 0).limit(1).count() > 0


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
    """:func:`ctxeval.evaluate` on Spark (see the module docstring). A run is named as the local
    engine names it: its entry in ``names`` (None: not given), else its tag when one tag is used
    throughout, else its file name without extension (``run1``, ``run2`` ... for DataFrames);
    runs that share a name take their file names. What the engine needs (pyspark, pandas, pyarrow,
    Java 17) is checked before a JVM starts; ``progress`` (see :data:`Progress`) hears what is
    starting and how far the Spark tasks are. ``rag`` may hold ``pool`` (a
    DataFrame or path) beside its other settings; ``utility`` may hold ``utilities`` and
    ``distractors`` (DataFrames or paths). Returns the result and the per-query values as a Spark
    DataFrame ``(run, query_id, <one column per measure>)``. Sample sets: ``qrels=None`` and
    ``runs`` the sample sets (DataFrames or JSON-lines paths, see :func:`samples_frames`), whose
    references are the judgments (they must agree where they meet)."""
    if Policies.coerce(policies).ties == "expected":  # the tie orders' spread is gathered beside the values
        raise ConfigError("ties='expected' runs on the local and stream engines, not on Spark: use ties='trec'")
    try:
        from pyspark.errors import PySparkException
    except ImportError:
        raise DependencyError("the Spark engine", "pyspark", "spark") from None
    with warnings.catch_warnings():  # pyspark's FutureWarnings about pandas are not the user's concern
        warnings.filterwarnings("ignore", category=FutureWarning)
        try:
            return _evaluate_spark(qrels, runs, measures, names, policies, rag, utility, spark, master, progress)
        except PySparkException as exc:  # Spark's own errors as one line, not a Java stack
            raise InputError(f"Spark: {str(exc).splitlines()[0]}") from None


def _evaluate_spark(
    qrels: Any,
    runs: Any,
    measures: Any,
    names: Sequence[str | None] | None,
    policies: Any,
    rag: Any,
    utility: Any,
    spark: Any,
    master: str | None,
    progress: Progress | None,
) -> tuple[Result, Any]:
    from pyspark.sql import functions as F

    from ._evaluate import with_judged

    spark = spark or spark_session(master, progress)
    ms = measure_list(measures)
    if any(m.spec.group == "rag" for m in ms):
        ms = with_judged(ms)  # as the local engine reports them
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    given: list[str | None] = list(names) if names else [None] * len(run_list)
    if qrels is None:  # sample sets: each one run, their references the judgments
        from ._context.settings import RagConfig as _Rag

        if _Rag.coerce(rag).labels is None:  # what the references are, as the local reader decides it
            graded = any(_gives_grades(spark, s) for s in run_list)
            from dataclasses import replace as _with

            rag = _with(_Rag.coerce(rag), labels="graded" if graded else "binary")
        pairs = [samples_frames(spark, s) for s in run_list]
        qrels = pairs[0][0]
        for other, _ in pairs[1:]:
            qrels = qrels.unionByName(other).dropDuplicates(["query_id", "doc_id", "relevance"])
        run_list = [r for _, r in pairs]
    from dataclasses import replace as _replace

    from ._context.settings import RagConfig

    q = _frame(spark, qrels, "qrels")
    rcfg = RagConfig.coerce(rag)
    if rcfg.pools or rcfg.groups is not None or rcfg.fair_groups is not None:
        raise ConfigError(
            "the Spark engine takes one shared pool (rag.pool / --pool POOL); per-run pools, doc groups and "
            "fairness groups are local-engine only"
        )
    from ._context.utility import UtilityConfig

    # a UtilityConfig (its files read on the driver) goes to the executors as it is; a mapping's
    # ``utilities`` / ``distractors`` become rows of the shuffled frame
    utility = utility if isinstance(utility, UtilityConfig) else dict(utility or {})
    side = [q]
    if rcfg.pool is not None:
        side.append(_frame(spark, rcfg.pool, "pool"))
        rcfg = _replace(rcfg, pool=None)
    for key, kind in (("utilities", "utility"), ("distractors", "distractor")):
        if isinstance(utility, dict) and utility.get(key) is not None:
            side.append(_frame(spark, utility.pop(key), kind))
    # global statistics first: ERR's default gmax is the highest grade of the whole qrels
    gmax = None
    if any(m.family == "ERR" and m["gmax"] is None for m in ms):
        gmax = int(q.agg(F.max("value")).collect()[0][0])
    plan = [_explicit(m, gmax) for m in ms]
    pol = Policies.coerce(policies)
    want = [str(m) for m in plan]
    results: list[RunResult] = []
    frames = []
    out_ms: list[Measure] = []
    tags: list[set[str | None]] = []
    pers = []
    for i, (given_name, run) in enumerate(zip(given, run_list)):
        label = given_name or _name(run, i)
        data = side[0]
        for extra in [*side[1:], _frame(spark, run, "run")]:
            data = data.unionByName(extra)
        fn = _partition_fn(want, pol, rcfg, utility, label)
        schema = (
            "query_id string, status string, evaluated long, missing long, unjudged long, beyond long, "
            + ", ".join(f"`m{i}` double" for i in range(len(want)))
        )
        schema += ", tags string"
        per = data.repartition("query_id").mapInArrow(fn, schema)
        with _Tasks(spark, progress, f"evaluating run {i + 1} of {len(run_list)} ({label})"):
            rows = per.collect()
        values_rows = sorted((r for r in rows if r["status"] == "value"), key=lambda r: r["query_id"].encode("utf-8"))
        acc_rows = [r for r in rows if r["status"] == "accounting"]
        tags.append({t for r in acc_rows for t in json.loads(r["tags"] or "[]")})
        missing_total = sum(r["missing"] for r in acc_rows)
        evaluated = sum(r["evaluated"] for r in acc_rows)
        unjudged = sum(r["unjudged"] for r in acc_rows)
        beyond = sum(r["beyond"] for r in acc_rows)
        from ._core.evaldata import QueryAccounting

        p = pol
        acc = QueryAccounting(evaluated, missing_total, unjudged, p.missing, beyond_float32=beyond)
        if evaluated == 0 and p.overlap == "require":
            from ._errors import QueryMismatchError

            raise QueryMismatchError(
                f"run {label!r} shares no query with the qrels: probably the wrong file; overlap='any' scores it anyway"
            )
        if missing_total and p.missing == "error":
            from ._errors import QueryMismatchError

            raise QueryMismatchError(
                f"run {label!r}: {missing_total} judged queries are missing from the run; use missing='zero' or 'ignore'"
            )
        out_ms = list(ms)
        values = {m: np.array([r[f"m{i}"] for r in values_rows], dtype=np.float64) for i, m in enumerate(out_ms)}
        results.append(
            RunResult(
                label,
                str(run) if not hasattr(run, "schema") else "<spark frame>",
                [r["query_id"] for r in values_rows],
                values,
                acc,
            )
        )
        pers.append(per)
    # one naming rule for every engine: the given name, else the one tag used throughout, else the file
    from ._session import naming_notes, unique_names

    named = [
        _Named(_label(g, t, run, i), os.fspath(run) if isinstance(run, (str, os.PathLike)) else "")
        for i, (g, t, run) in enumerate(zip(given, tags, run_list))
    ]
    final = unique_names(named)
    notes = naming_notes(named, final)
    for rr, name in zip(results, final):
        rr.name = name
    for name, per in zip(final, pers):
        frames.append(
            per.where(F.col("status") == "value").select(
                F.lit(name).alias("run"), "query_id", *(F.col(f"m{i}").alias(str(m)) for i, m in enumerate(out_ms))
            )
        )
    settings: dict[str, Any] = {"engine": "spark", "master": spark.sparkContext.master, "missing": pol.missing}
    if gmax is not None:
        settings["err_gmax"] = gmax
    all_frames = frames[0]
    for f in frames[1:]:
        all_frames = all_frames.unionByName(f)
    return Result(out_ms, results, settings, notes), all_frames


@dataclass(frozen=True)
class _Named:
    name: str
    source: str


def _name(run: Any, i: int) -> str:
    if isinstance(run, (str, os.PathLike)):
        from ._io.model import _stem

        return _stem(run)
    return f"run{i + 1}"


def _label(given: str | None, tags: set[str | None], run: Any, i: int) -> str:
    if given:
        return given
    if len(tags) == 1 and None not in tags:
        return str(next(iter(tags)))
    return _name(run, i)


def _explicit(m: Measure, gmax: int | None) -> Measure:
    if m.family == "ERR" and m["gmax"] is None and gmax is not None:
        from ._measures import parse_measure

        params = {p.name: m[p.name] for p in m.spec.params if p.name != "gmax"}
        inner = ",".join(
            f"{k}={v}"
            for k, v in params.items()
            if v is not None and v != next(p.default for p in m.spec.params if p.name == k)
        )
        text = f"ERR(gmax={gmax}{',' + inner if inner else ''})" + (f"@{m.cutoff}" if m.cutoff is not None else "")
        return parse_measure(text)
    return m


def _partition_fn(want: list[str], pol: Any, rag: Any, utility: Any, label: str) -> Any:
    def fn(batches: Iterator[Any]) -> Iterator[Any]:
        import warnings as _w

        _w.filterwarnings("ignore")
        import polars as pl
        import pyarrow as pa

        tables = [pa.Table.from_batches([b]) for b in batches]
        if not tables:
            return
        df = pl.from_arrow(pa.concat_tables(tables))
        assert isinstance(df, pl.DataFrame)
        out = _evaluate_partition(df, want, pol, rag, utility, label)
        yield pa.RecordBatch.from_pydict(out)

    return fn


def _evaluate_partition(df: Any, want: list[str], pol: Any, rag: Any, utility: Any, label: str) -> dict[str, list[Any]]:
    """One partition: its rows by kind, evaluated by the local engine; per-query values and one
    accounting row."""
    import polars as pl

    from ._evaluate import evaluate

    def part(kind: str, value: str) -> Any:
        return df.filter(pl.col("kind") == kind).select("query_id", "doc_id", pl.col("value").alias(value))

    qr = part("qrels", "relevance").with_columns(pl.col("relevance").cast(pl.Int64))
    run = part("run", "score")
    cols: dict[str, list[Any]] = {k: [] for k in ("query_id", "status", "evaluated", "missing", "unjudged", "beyond")}
    for i in range(len(want)):
        cols[f"m{i}"] = []
    cols["tags"] = []  # the columns in the order of the schema
    run_tags = df.filter(pl.col("kind") == "run")["tag"].unique().to_list()[:2]
    run_q = set(run["query_id"].unique().to_list())
    if qr.height == 0:
        _acc(cols, len(want), 0, 0, len(run_q), 0, run_tags)
        return cols
    from dataclasses import replace

    rag_cfg = rag
    pool = part("pool", "score")
    if pool.height:
        rag_cfg = replace(rag, pool=pool)
    u = dict(utility) if isinstance(utility, Mapping) else utility
    ut = part("utility", "u")
    if ut.height and isinstance(u, dict):
        u["utilities"] = ut
    dist = part("distractor", "value")
    if dist.height and isinstance(u, dict):
        u["distractors"] = dist.select("query_id", "doc_id")
    pol2 = replace(pol, overlap="any")
    from ._io.model import Qrels, Run

    q_obj = Qrels.from_frame(qr, source="<spark qrels>")
    r_obj = Run.from_frame(run, name=label, source="<spark run>") if run.height else Run.empty(label, "<spark run>")
    res = evaluate(q_obj, r_obj, want, policies=pol2, rag=rag_cfg, utility=u or None)
    rr = res.runs[0]
    by_name = {str(m): m for m in res.measures}
    ms = [by_name[w] for w in want]
    for j, qid in enumerate(rr.qids):
        cols["query_id"].append(qid)
        cols["tags"].append(None)
        cols["status"].append("value")
        for k in ("evaluated", "missing", "unjudged", "beyond"):
            cols[k].append(0)
        for i, m in enumerate(ms):
            cols[f"m{i}"].append(float(rr.values[m][j]))
    a = rr.accounting
    _acc(cols, len(want), a.evaluated, a.missing, a.unjudged, a.beyond_float32, run_tags)
    return cols


def _acc(
    cols: dict[str, list[Any]], n: int, evaluated: int, missing: int, unjudged: int, beyond: int, tags: list[Any]
) -> None:
    """The partition's accounting row; ``tags``: up to two distinct tags of its run rows (naming)."""
    cols["query_id"].append(None)
    cols["tags"].append(json.dumps(tags))
    cols["status"].append("accounting")
    cols["evaluated"].append(evaluated)
    cols["missing"].append(missing)
    cols["unjudged"].append(unjudged)
    cols["beyond"].append(beyond)
    for i in range(n):
        cols[f"m{i}"].append(None)
