"""The project's own checks run with the tests: ruff (lint and format), mypy on the package, and the
import-linter contracts that keep the layers one-way (configuration in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

CHECKS = {
    "ruff check": [sys.executable, "-m", "ruff", "check", "--no-cache", "src", "tests", "bench", "scripts"],
    "ruff format": [
        sys.executable,
        "-m",
        "ruff",
        "format",
        "--check",
        "--no-cache",
        "src",
        "tests",
        "bench",
        "scripts",
    ],
    "mypy": [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", "/dev/null"],
    "import-linter": [str(BIN / "lint-imports"), "--no-cache"],
}


@pytest.mark.parametrize("name", CHECKS)
def test_check_passes(name: str) -> None:
    done = subprocess.run(CHECKS[name], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout}\n{done.stderr}"
