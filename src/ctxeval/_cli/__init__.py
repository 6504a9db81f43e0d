"""The ``ctxeval`` command line: one module per command; shared option groups in :mod:`.options`."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

from .._errors import CtxevalError
from . import calibrate, compare, curve, demo, diagnose, distraction, evaluate, fit_udcg, measures, trec_eval

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


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        return invoke_reporting_errors(ctx, super().invoke)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ctxeval")
def cli() -> None:
    """ctxeval: how much of the best evidence did your retriever put into the K slots the LLM reads?"""


for _module in (evaluate, demo, measures, diagnose, trec_eval, calibrate, distraction, fit_udcg, compare, curve):
    cli.add_command(_module.command)


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
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
