"""The command group: every command is listed and runs, a command's module is imported only when it
runs, and a misspelled command gets a suggestion among all of them."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from ctxeval._cli import _COMMANDS, cli

EXPECTED = [
    "evaluate", "demo", "measures", "diagnose", "trec_eval", "calibrate", "distraction",
    "fit-udcg", "compare", "chunking", "curve", "judge", "pool", "agreement", "snapshot", "gate", "power",
    "labels",
]  # fmt: skip


def test_help_lists_every_command() -> None:
    out = CliRunner().invoke(cli, ["--help"])
    assert out.exit_code == 0
    listed = [line.split()[0] for line in out.stdout.split("Commands:")[1].strip().splitlines()]
    assert listed == EXPECTED == list(_COMMANDS)


def test_every_command_has_help() -> None:
    for name in EXPECTED:
        out = CliRunner().invoke(cli, [name, "--help"])
        assert out.exit_code == 0, name
        assert out.stdout.startswith(f"Usage: cli {name} ") or out.stdout.startswith(f"Usage: ctxeval {name} ")


def test_a_misspelled_command_is_answered_with_the_nearest() -> None:
    out = CliRunner().invoke(cli, ["evalute"])
    assert out.exit_code == 2
    assert "No such command 'evalute'. Did you mean 'evaluate'?" in out.stderr
    out = CliRunner().invoke(cli, ["trec-eval"])
    assert "Did you mean 'trec_eval'?" in out.stderr


def test_evaluate_does_not_import_the_other_commands() -> None:
    code = (
        "import sys; from ctxeval._cli import main; main(['evaluate', '--help']); "
        "print(sorted(m for m in sys.modules if m.startswith('ctxeval._cli.') or m.startswith('ctxeval._judge')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "['ctxeval._cli.evaluate', 'ctxeval._cli.options']"
