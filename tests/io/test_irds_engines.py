"""``irds:`` qrels through the engines beside the default one: ``--stream`` and ``--engine spark`` print
on the dataset what they print on the example's own qrels file (a local ir_datasets home, see
tests/extras/irds_home.py; each run in its own process, since ir_datasets fixes its home on import, with
every download pointed at a closed local port)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import irds_home
import pytest

if importlib.util.find_spec("ir_datasets") is None:
    pytest.skip("needs ir-datasets (ctxeval[irds])", allow_module_level=True)

QRELS = str(irds_home.EXAMPLE / "qrels.txt")
RUN = str(irds_home.EXAMPLE / "runs" / "rrf-rerank.run")


def _ctxeval(home: Path, *argv: str) -> str:
    env = dict(
        os.environ, IR_DATASETS_HOME=str(home), HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9"
    )
    done = subprocess.run(
        [sys.executable, "-m", "ctxeval", *argv], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize(
    "engine",
    [
        ["--stream"],
        pytest.param(
            ["--engine", "spark"],
            marks=[
                pytest.mark.slow,
                pytest.mark.skipif(shutil.which("java") is None, reason="the Spark engine needs Java 17"),
            ],
        ),
    ],
    ids=["stream", "spark"],
)
def test_an_engine_reads_the_dataset_s_qrels(tmp_path: Path, engine: list[str]) -> None:
    irds_home.build(tmp_path / "home")
    argv = ["evaluate", RUN, "-m", "nDCG@10", "-m", "AP", "-m", "RA-nWG@5", "--per-query", "--format", "json", *engine]
    by_file = _ctxeval(tmp_path / "home", argv[0], QRELS, *argv[1:])
    by_name = _ctxeval(tmp_path / "home", argv[0], irds_home.DL19, *argv[1:])
    assert '"per_query"' in by_name and by_name == by_file.replace(QRELS, irds_home.DL19)
