"""Each file here, ``test_<extra>.py``, tests one optional extra of pyproject.toml in a fresh virtual
environment holding only ``ctxeval[<extra>]`` and pytest (``scripts/test-extras``, run by ``.ci/run``):
the extra's own dependencies must be enough to run its feature. The main test run skips these files
(they would pass there for the wrong reason: the test extra installs every optional package). Adding an
extra is adding its file; ``tests/test_extras.py`` checks that every extra has one. Packages a test
needs beyond the extra (a retriever to drive, say) go in the file's ``TEST_REQUIRES = [...]`` (a literal
list of requirement strings), which the runner installs beside it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

#: set by scripts/test-extras to the extra installed in the environment
EXTRA = os.environ.get("CTXEVAL_EXTRA")

collect_ignore_glob = [] if EXTRA else ["test_*.py"]

#: packages only the test extra brings in (their absence shows the venv is clean), and the heavy
#: packages of single extras (absent unless that extra is the one installed)
TEST_ONLY = ("hypothesis", "pytrec_eval", "ragas", "playwright")
HEAVY = {"pyspark": "spark", "matplotlib": "report"}


@pytest.fixture(scope="session", autouse=True)
def _clean_environment() -> None:
    """ctxeval is imported as installed (not from the source tree), and the venv holds no package of
    the test extra and no other extra's heavy package."""
    import importlib.util

    import ctxeval

    assert Path(ctxeval.__file__).resolve().is_relative_to(Path(sys.prefix).resolve()), ctxeval.__file__
    present = [m for m in TEST_ONLY if importlib.util.find_spec(m) is not None]
    present += [m for m, extra in HEAVY.items() if extra != EXTRA and importlib.util.find_spec(m) is not None]
    assert not present, f"{present} installed beside ctxeval[{EXTRA}]"


def ctxeval_by_path(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``<venv>/bin/ctxeval ARGS`` called by its path, the environment not activated: no VIRTUAL_ENV,
    the venv's bin/ off PATH (as pipx users and cron jobs call it)."""
    exe = Path(sys.executable).parent / "ctxeval"
    assert exe.is_file(), exe
    base = dict(os.environ if env is None else env)
    base.pop("VIRTUAL_ENV", None)
    bindir = str(Path(sys.executable).parent)
    base["PATH"] = os.pathsep.join(p for p in base.get("PATH", "").split(os.pathsep) if p and p != bindir)
    assert shutil.which("ctxeval", path=base["PATH"]) != str(exe)
    return subprocess.run([str(exe), *args], cwd=cwd, env=base, capture_output=True, text=True, timeout=600)
