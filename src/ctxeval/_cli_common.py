"""What every ctxeval command shares: errors reported as one line on stderr, exit status 2."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ._errors import CtxevalError


def invoke_reporting_errors(ctx: click.Context, invoke: Callable[[click.Context], Any]) -> Any:
    """Run ``invoke(ctx)``; a :class:`CtxevalError` or a file error becomes ``ctxeval: error: ...``."""
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
