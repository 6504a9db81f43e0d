"""``ctxeval measures``: every measure with its definition (generated from the registry)."""

from __future__ import annotations

import click


@click.command("measures")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def command(fmt: str) -> None:
    """List every measure with its parameters and definition."""
    from .._render.measures import measure_list

    click.echo(measure_list(fmt), nl=False)
