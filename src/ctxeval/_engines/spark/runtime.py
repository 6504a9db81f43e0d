"""Spark itself: what the engine needs (checked before a JVM starts, which takes 10-90 s), a quiet
session, and the progress of its jobs."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from ..._errors import DependencyError

__all__ = ["JAVA_MIN", "Progress", "Tasks", "check_spark_needs", "spark_session"]

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
    log4j = Path(__file__).resolve().parents[2] / "data" / "spark-log4j2.properties"
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


class Tasks:
    """Reports the tasks of the running Spark stages every ``every`` seconds while a job runs."""

    def __init__(self, spark: Any, progress: Progress | None, what: str, every: float = 1.0) -> None:
        self.spark, self.progress, self.what, self.every = spark, progress, what, every
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> Tasks:
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
