"""A directory where a file is expected (issue 29 point 6): every command that reads a run or qrels
says so on one line naming the directory and what it expected, exit 2, no usage text, no traceback;
and every file parameter of every command is of the one type that says it (``_cli.options.File``)."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from ctxeval._cli import _COMMANDS, cli
from ctxeval._cli.options import File

RUN = "".join(f"q{q} Q0 d{d} {d + 1} {10 - d:.1f} bm25\n" for q in range(3) for d in range(5))
QRELS = "".join(f"q{q} 0 d{d} {d % 3}\n" for q in range(3) for d in range(5))

# (argv template, what the directory stood for): {q} a qrels file, {r} a run, {D} the directory, {j} a
# JSON baseline
CASES = [
    (("evaluate", "{D}", "{r}"), "a qrels"),
    (("evaluate", "{q}", "{D}"), "a run"),
    (("evaluate", "{q}", "{r}", "bm25={D}"), "a run"),
    (("trec_eval", "{D}", "{r}"), "a qrels"),
    (("trec_eval", "{q}", "{D}"), "a run"),
    (("compare", "{D}", "{r}", "{r}"), "a qrels"),
    (("compare", "{q}", "{r}", "{D}"), "a run"),
    (("curve", "{D}", "{r}"), "a qrels"),
    (("curve", "{q}", "{D}"), "a run"),
    (("diagnose", "{D}", "{r}"), "a qrels"),
    (("diagnose", "{q}", "{D}"), "a run"),
    (("distraction", "{D}", "{r}"), "a qrels"),
    (("distraction", "{q}", "{D}"), "a run"),
    (("calibrate", "{D}", "{r}"), "a qrels"),
    (("calibrate", "{q}", "{D}"), "a run"),
    (("fit-udcg", "{D}", "{r}", "--answers", "{q}"), "a qrels"),
    (("fit-udcg", "{q}", "{D}", "--answers", "{q}"), "a run"),
    (("snapshot", "{D}", "{r}"), "a qrels"),
    (("snapshot", "{q}", "{D}"), "a run"),
    (("gate", "{D}", "{q}", "{r}"), "a baseline"),
    (("gate", "{j}", "{D}", "{r}"), "a qrels"),
    (("gate", "{j}", "{q}", "{D}"), "a run"),
    (("power", "{j}", "{D}", "{r}"), "a qrels"),
    (("agreement", "{D}", "{q}", "{r}"), "a qrels"),
    (("agreement", "{q}", "{D}", "{r}"), "a qrels"),
    (("agreement", "{q}", "{q}", "{D}"), "a run"),
    (("pool", "{D}"), "a run"),
    (("labels", "merge", "{D}", "{q}"), "a labels"),
    (("judge", "grade", "{D}", "--queries", "{q}", "--passages", "{q}", "--judge", "lexical"), "a run"),
    (("judge", "probe", "{D}", "--queries", "{q}", "--passages", "{q}", "--judge", "lexical"), "a run"),
    (("evaluate", "{q}", "{r}", "--utilities", "{D}", "-m", "UDCG@3"), "a utilities"),
    (("evaluate", "{q}", "{r}", "-o", "{D}"), "an output"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("dirs")
    (root / "q.txt").write_text(QRELS)
    (root / "r.txt").write_text(RUN)
    (root / "folder").mkdir()
    base = root / "baseline.json"
    got = CliRunner().invoke(cli, ["snapshot", str(root / "q.txt"), str(root / "r.txt"), "-o", str(base)])
    assert got.exit_code == 0, got.output
    return {"q": str(root / "q.txt"), "r": str(root / "r.txt"), "D": str(root / "folder"), "j": str(base)}


@pytest.mark.parametrize(("argv", "what"), CASES, ids=[" ".join(c) for c, _ in CASES])
def test_a_directory_is_one_line_naming_it(argv: tuple[str, ...], what: str, files: dict[str, str]) -> None:
    got = CliRunner().invoke(cli, [a.format(**files) for a in argv])
    assert got.exit_code == 2, got.output
    assert got.stdout == ""
    assert got.stderr == f"ctxeval: error: {files['D']}: is a directory, expected {what} file\n"


def test_in_a_fresh_process_too(files: dict[str, str]) -> None:
    """The console entry point: the same line, nothing else (no usage text, no traceback)."""
    done = subprocess.run(
        [sys.executable, "-m", "ctxeval", "evaluate", files["q"], files["D"]], capture_output=True, text=True
    )
    assert (done.returncode, done.stdout, done.stderr) == (
        2,
        "",
        f"ctxeval: error: {files['D']}: is a directory, expected a run file\n",
    )


def _commands() -> list[tuple[str, click.Command]]:
    out = []
    ctx = click.Context(cli)
    for name in _COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        subs = getattr(command, "commands", None)
        out += [(f"{name} {s}", c) for s, c in subs.items()] if subs else [(name, command)]
    return out


def test_every_file_parameter_is_a_file_and_refuses_a_directory_in_one_line(files: dict[str, str]) -> None:
    """Every parameter of every command typed as a path takes the one ``File`` type (the two that name
    folders excepted), and each of them refuses a directory with the readers' one-line error."""
    from ctxeval import CtxevalError

    # demo --samples DIR and --chunking DIR, chunking --save DIR; documents: a folder of files, or JSON lines
    folders = {"samples_dir", "chunking_dir", "save_dir", "documents"}
    seen = 0
    for name, command in _commands():
        for p in command.params:
            if not isinstance(p.type, click.Path):
                continue
            if not isinstance(p.type, File):
                assert p.name in folders, (name, p.name)
                continue
            seen += 1
            with pytest.raises(CtxevalError, match=r"^.*folder: is a directory, expected an? \S.* file$"):
                p.type.convert(files["D"], p, None)
    assert seen > 60  # every command's files, counted once per command


def test_a_file_that_cannot_be_read_or_written_is_one_line_too(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """(The suite may run as root, who can read anything: the permission is denied by a stand-in.)"""
    import os

    monkeypatch.setattr(os, "access", lambda path, mode: False)
    got = CliRunner().invoke(cli, ["evaluate", files["q"], files["r"]])
    assert (got.exit_code, got.stderr) == (
        2,
        f"ctxeval: error: {files['q']}: permission denied (the qrels file cannot be read)\n",
    )
    got = CliRunner().invoke(cli, ["labels", "merge", files["q"], "-o", files["j"]])
    assert got.stderr == f"ctxeval: error: {files['j']}: permission denied (the output file cannot be written)\n"
