"""ctxeval[spark] alone: ``<venv>/bin/ctxeval evaluate --engine spark`` called by its path, the venv
not activated (Spark's Python workers must run the venv's interpreter, not whatever ``python3`` is
on PATH), on a local Spark with the machine's Java. The values are worked out by hand below, and the
run is named by the rule every engine follows (its tag, used throughout the file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ctxeval_by_path

# q1: relevant d1 (grade 1) and d3 (grade 2), retrieved at ranks 1 and 3:
#     AP = (1/1 + 2/3) / 2 = 5/6, P@2 = 1/2
# q2: relevant d2, retrieved at rank 2: AP = (1/2) / 1 = 1/2, P@2 = 1/2
QRELS = "q1 0 d1 1\nq1 0 d3 2\nq2 0 d2 1\n"
RUN = "q1 Q0 d1 1 0.9 bm25\nq1 Q0 d2 2 0.8 bm25\nq1 Q0 d3 3 0.7 bm25\nq2 Q0 d1 1 0.5 bm25\nq2 Q0 d2 2 0.4 bm25\n"


def test_spark_engine_from_a_venv_called_by_path(tmp_path: Path) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "system.run").write_text(RUN)
    done = ctxeval_by_path(
        "evaluate",
        "qrels.txt",
        "system.run",
        "-m",
        "AP",
        "-m",
        "P@2",
        "--engine",
        "spark",
        "--spark-master",
        "local[1]",
        "--format",
        "json",
        "--per-query",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    (run,) = out["runs"]
    assert run["name"] == "bm25"
    per_query = {(q, m): v for q, row in run["per_query"].items() for m, v in row.items()}
    assert per_query == pytest.approx({("q1", "AP"): 5 / 6, ("q1", "P@2"): 0.5, ("q2", "AP"): 0.5, ("q2", "P@2"): 0.5})
    # the minute before the first result says what is starting
    assert "ctxeval: starting Spark (local[1]): a Java virtual machine" in done.stderr
    assert "ctxeval: Spark started in " in done.stderr
    assert "Traceback" not in done.stderr
