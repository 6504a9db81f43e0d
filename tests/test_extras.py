"""Every optional extra of pyproject.toml is tested alone in a clean venv (scripts/test-extras, run by
.ci/run): each one needs its file tests/extras/test_<extra>.py, and every such file names an extra."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent
#: extras for developing ctxeval, not features of it
NOT_FEATURES = {"test", "bench", "docs"}


def test_every_extra_has_its_clean_venv_test() -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    files = {p.stem.removeprefix("test_") for p in (ROOT / "tests" / "extras").glob("test_*.py")}
    assert extras - NOT_FEATURES - files == set(), "write tests/extras/test_<extra>.py for these extras"
    assert files - extras == set(), "these tests/extras files name no extra of pyproject.toml"


def test_ci_runs_the_extras() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "scripts/test-extras" in ci
