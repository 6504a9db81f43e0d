"""Run one case of the regression corpus in-process and render what it did as one text."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from click.testing import CliRunner

from regression.cases import Case, normalise

__all__ = ["run_case"]


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_case(case: Case, scratch: Path) -> str:
    """Exit status, stdout, stderr and every file the case writes, normalised (see ``cases``)."""
    from ctxeval._cli import cli

    for name in case.files:
        (scratch / name).unlink(missing_ok=True)
    with _cwd(scratch):
        result = CliRunner().invoke(cli, list(case.argv), catch_exceptions=False, env=case.env or None)
    parts = [f"== exit {result.exit_code}", "== stdout", result.stdout, "== stderr", result.stderr]
    for name in case.files:
        path = scratch / name
        parts += [f"== file {name}", path.read_text(encoding="utf-8") if path.exists() else "<not written>"]
    return normalise("\n".join(parts), scratch)
