"""Every command prints and writes exactly the recorded bytes (see ``cases.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from regression.cases import CASES, RECORDINGS, Case, setup_scratch
from regression.runner import run_case


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("regression")
    setup_scratch(folder)
    return folder


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_output_unchanged(case: Case, scratch: Path) -> None:
    expected = (RECORDINGS / f"{case.name}.txt").read_text(encoding="utf-8")
    got = run_case(case, scratch)
    assert f"== exit {case.exit_code}\n" in got.splitlines(keepends=True)[0]
    assert got == expected
