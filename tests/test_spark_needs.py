"""What the Spark engine needs is checked before a JVM starts (which takes 10-90 s): Java 17 found
through JAVA_HOME or PATH, and pyspark's own Arrow requirements (pandas, pyarrow) at the versions its
metadata names. Each missing piece is one line naming it and how to install it; no JVM is started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxeval
from ctxeval._engines.spark.runtime import check_spark_needs


def _cli(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 1.0 a\n")
    return subprocess.run(
        [sys.executable, "-m", "ctxeval", "evaluate", "qrels", "a.run", "--engine", "spark"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _env_without_java(tmp_path: Path) -> dict[str, str]:
    """PATH holding only this interpreter's directory (and nothing named java), no JAVA_HOME."""
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    bindir = tmp_path / "bin"
    bindir.mkdir()
    env["PATH"] = str(bindir)
    return env


def test_no_java_is_one_line_before_any_jvm(tmp_path: Path) -> None:
    done = _cli(tmp_path, _env_without_java(tmp_path))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Java 17" in lines[0]
    assert "JAVA_HOME" in lines[0]
    assert "apt install openjdk-17-jre-headless" in lines[0]
    assert "JAVA_GATEWAY_EXITED" not in done.stderr
    assert "starting Spark" not in done.stderr  # refused before the JVM's start was announced


def test_java_home_without_java(tmp_path: Path) -> None:
    env = _env_without_java(tmp_path)
    env["JAVA_HOME"] = str(tmp_path / "jdk")
    done = _cli(tmp_path, env)
    assert done.returncode == 2
    assert f"JAVA_HOME={tmp_path / 'jdk'} holds no bin/java" in done.stderr


def test_java_too_old(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # no Java 11 exists on the test machines: a stand-in that answers -version as Java 11 does
    jdk = tmp_path / "jdk11"
    (jdk / "bin").mkdir(parents=True)
    java = jdk / "bin" / "java"
    java.write_text("#!/bin/sh\necho 'openjdk version \"11.0.22\" 2024-01-16' >&2\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(jdk))
    with pytest.raises(ctxeval.DependencyError, match=r"needs Java 17 or later, found Java 11 "):
        check_spark_needs()
    java.write_text("#!/bin/sh\necho 'java version \"1.8.0_292\"' >&2\n")
    with pytest.raises(ctxeval.DependencyError, match=r"found Java 8 "):
        check_spark_needs()


def test_pandas_below_pysparks_requirement(monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure of a bare ``pip install pyspark pyarrow`` beside an old pandas: named before the JVM."""
    from importlib import metadata

    pytest.importorskip("pyspark")
    need = [r for r in metadata.requires("pyspark") or [] if r.startswith("pandas") and "sql" in r]
    assert need, "pyspark no longer names pandas among its sql requirements"
    real = metadata.version

    def version(name: str) -> str:
        return "2.1.4" if name == "pandas" else real(name)

    monkeypatch.setattr(metadata, "version", version)
    with pytest.raises(ctxeval.DependencyError) as info:
        check_spark_needs()
    msg = str(info.value)
    assert "pandas >= " in msg
    assert "found 2.1.4" in msg
    assert "pip install 'ctxeval[spark]'" in msg

    def missing(name: str) -> str:
        if name == "pyarrow":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", missing)
    with pytest.raises(ctxeval.DependencyError, match=r"needs pyarrow >= [0-9.]+ \(for pyspark's Arrow path\), which"):
        check_spark_needs()
