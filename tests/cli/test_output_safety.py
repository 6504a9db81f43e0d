"""--output never destroys an input, and a failed write is one line, leaving nothing half-written."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli

QRELS = "q1 0 a 1\nq1 0 b 0\n"
RUN = "q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


@pytest.mark.parametrize("target", ["run", "qrels", "run-relative"])
@pytest.mark.parametrize("command", [["evaluate"], ["compare"], ["distraction", "-k", "2"], ["diagnose"]])
def test_an_output_that_is_an_input_is_refused_before_any_work(
    files: tuple[Path, Path], target: str, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    qrels, run = files
    monkeypatch.chdir(run.parent)
    out = {"run": str(run), "qrels": str(qrels), "run-relative": "./run.txt"}[target]
    result = CliRunner().invoke(cli, [*command, str(qrels), str(run), "-o", out])
    assert result.exit_code == 2
    assert "the output is one of the inputs" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert (qrels.read_text(), run.read_text()) == (QRELS, RUN)


def test_a_full_disk_is_one_line_and_leaves_no_file(files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = files
    import ctxeval._io.writers as writers

    def full(src: str, dst: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writers.os, "replace", full)
    target = run.parent / "table.txt"
    result = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "-m", "RR", "-o", str(target)])
    assert result.exit_code == 2
    assert result.stderr == f"ctxeval: error: {target}: cannot write: {os.strerror(errno.ENOSPC)}\n"
    assert sorted(p.name for p in run.parent.iterdir()) == ["qrels.txt", "run.txt"]  # no table, no temp file


def test_an_output_in_a_missing_folder_is_one_line(files: tuple[Path, Path]) -> None:
    qrels, run = files
    target = run.parent / "no" / "such" / "dir" / "table.txt"
    result = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "-m", "RR", "-o", str(target)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"ctxeval: error: {target}: cannot write: ")
    assert "Traceback" not in result.output


def test_an_output_gets_the_permissions_of_any_new_file(files: tuple[Path, Path], tmp_path: Path) -> None:
    # written under a temporary name and renamed: the file must still get the umask's permissions
    # (0o666 & ~umask), not the private 0o600 of a tempfile
    qrels, run = files
    old = os.umask(0o022)
    try:
        result = CliRunner().invoke(
            cli, ["evaluate", str(qrels), str(run), "-m", "AP", "-o", str(tmp_path / "out.json")]
        )
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out.json").stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left
