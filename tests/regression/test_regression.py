"""Every command prints and writes exactly the recorded bytes (see ``cases.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from regression.cases import CASES, RECORDINGS, Case, needs_trec_eval_files, setup_scratch
from regression.runner import run_case
from shared_data import trec_eval_missing


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("regression")
    setup_scratch(folder)
    return folder


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_output_unchanged(case: Case, scratch: Path) -> None:
    if needs_trec_eval_files(case) and trec_eval_missing() is not None:
        pytest.skip(str(trec_eval_missing()))
    expected = (RECORDINGS / f"{case.name}.txt").read_text(encoding="utf-8")
    got = run_case(case, scratch)
    assert f"== exit {case.exit_code}\n" in got.splitlines(keepends=True)[0]
    assert got == expected
