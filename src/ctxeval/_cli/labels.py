"""``ctxeval labels``: label files and their provenance (``merge``)."""

from __future__ import annotations

import click

from .options import File

__all__ = ["command"]


@click.group("labels")
def command() -> None:
    """Label files and their provenance (the sidecar <file>.labels.json a judge writes beside them)."""


@command.command("merge")
@click.argument("files", nargs=-1, required=True, type=File("labels"))
@click.option(
    "-o",
    "--output",
    required=True,
    type=File("output", writable=True),
    help="the merged labels file (its sidecar is written beside it)",
)
def merge(files: tuple[str, ...], output: str) -> None:
    """Merge judged label files (grades or utilities) and their sidecars into one, keeping who wrote
    them: the same judge, model, task and prompt in every sidecar (or no sidecar anywhere); a pair
    labelled twice must carry the same value; pairs written sorted, so the bytes do not depend on the
    order of the files."""
    from .._io.merge import merge_labels

    click.echo(merge_labels(list(files), output).describe(), err=True)
