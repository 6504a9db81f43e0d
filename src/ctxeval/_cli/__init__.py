"""The ``ctxeval`` command line: one module per command; shared option groups in :mod:`.options`."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

from .._version import __version__

# The command uses no BLAS routine on large data, and OpenBLAS' pool of threads, started with numpy,
# spins on the cores the reader's threads use (0.08 s of CPU per large evaluation on 2 cores); set
# before numpy is first imported, and only by the command (a program importing ctxeval keeps its own).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click

from .._errors import CtxevalError, OutputError

__all__ = ["cli", "console_main", "main"]


def invoke_reporting_errors(ctx: click.Context, invoke: Callable[[click.Context], Any]) -> Any:
    """Run ``invoke(ctx)``; a :class:`CtxevalError` or a file error becomes ``ctxeval: error: ...``
    on stderr with exit status 2, never a traceback."""
    try:
        return invoke(ctx)
    except CtxevalError as exc:
        click.echo(f"ctxeval: error: {exc}", err=True)
        ctx.exit(2)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        click.echo(f"ctxeval: error: {exc.filename}: {exc.strerror}", err=True)
        ctx.exit(2)
    except BrokenPipeError:  # pragma: no cover
        ctx.exit(0)
    except OSError as exc:  # a full disk under standard output: say so, never exit 0 on a cut output
        click.echo(f"ctxeval: error: {_where(exc)}: {exc.strerror or exc}", err=True)
        ctx.exit(2)


def _where(exc: OSError) -> str:
    """The file an OSError names, or standard output (the streams' errors name no file)."""
    return str(exc.filename) if exc.filename is not None else "cannot write to standard output"


# command name -> (module, attribute): a command's module is imported when the command is used, so
# `ctxeval evaluate` does not pay for importing the judge, compare, calibrate ... (about 25 ms)
_COMMANDS = {
    "evaluate": ("evaluate", "command"),
    "demo": ("demo", "command"),
    "measures": ("measures", "command"),
    "diagnose": ("diagnose", "command"),
    "trec_eval": ("trec_eval", "command"),
    "calibrate": ("calibrate", "command"),
    "distraction": ("distraction", "command"),
    "fit-udcg": ("fit_udcg", "command"),
    "compare": ("compare", "command"),
    "chunking": ("chunking", "command"),
    "curve": ("curve", "command"),
    "judge": ("judge", "command"),
    "pool": ("pool", "command"),
    "agreement": ("card", "agreement"),
    "snapshot": ("gate", "snapshot_command"),
    "gate": ("gate", "gate_command"),
    "power": ("gate", "power_command"),
    "labels": ("labels", "command"),
}

# commands that do no BLAS work: numpy's OpenBLAS starts a thread per core when numpy is imported
# (about 15 ms of CPU, as much as reading a small run), so they ask for one unless the user chose
_NO_BLAS = frozenset({"evaluate", "trec_eval"})


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        return invoke_reporting_errors(ctx, super().invoke)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(_COMMANDS)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:  # "did you mean" among every command, loaded or not
            raise click.exceptions.NoSuchCommand(exc.command_name, possibilities=list(_COMMANDS), ctx=ctx) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in _COMMANDS:
            if cmd_name in _NO_BLAS and "numpy" not in sys.modules:
                os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
            module, attr = _COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
            for sub in getattr(command, "commands", {}).values():
                refuse_overwriting_inputs(sub)
            self.add_command(refuse_overwriting_inputs(command), cmd_name)
        return self.commands.get(cmd_name)


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """The version, and whether the compiled kernels are in use (ctxeval gives the same results
    without them, reading large TREC files more slowly)."""
    if not value or ctx.resilient_parsing:
        return
    from .. import _native

    click.echo(f"ctxeval, version {__version__}\ncompiled kernels: {_native.status()}")
    ctx.exit()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli() -> None:
    """ctxeval: how much of the best evidence did your retriever put into the K slots the LLM reads?"""


def _inputs(params: dict[str, Any]) -> list[str]:
    """Every parameter value that names an existing file (the command's inputs)."""
    from .._io.model import split_named

    out: list[str] = []
    for name, value in params.items():
        if name == "output":
            continue
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(v, str) and v != "-":
                path = split_named(v)[1]
                if os.path.isfile(path):
                    out.append(path)
    return out


def refuse_overwriting_inputs(command: click.Command) -> click.Command:
    """``command`` refusing an ``--output`` that is one of its inputs, before any work is done."""
    callback = command.callback
    if callback is None or not any(p.name == "output" for p in command.params):
        return command

    @functools.wraps(callback)
    def guarded(**params: Any) -> Any:
        out = params.get("output")
        if isinstance(out, str) and out != "-" and os.path.exists(out):
            for path in _inputs(params):
                if os.path.samefile(path, out):
                    raise OutputError(f"{out}: the output is one of the inputs ({path}); choose another --output")
        return callback(**params)

    command.callback = guarded
    return command


def main(argv: list[str] | None = None) -> int:
    try:
        cli.main(args=argv, prog_name="ctxeval", standalone_mode=True)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def console_main() -> None:
    """Entry point of the ``ctxeval`` command: run, flush, and leave without tearing down the heap.

    Freeing millions of array elements and strings one by one at interpreter exit costs up to a
    second on large runs and does nothing useful for a process that is about to end.
    """
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # pragma: no cover
        pass
    except OSError as exc:
        sys.stderr.write(f"ctxeval: error: {_where(exc)}: {exc.strerror or exc}\n")
        code = code or 2
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(code)
