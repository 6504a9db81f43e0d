"""``ctxeval judge probe``: how far passages manipulated to add no evidence (the question's words
stuffed in, an instruction injected) move a judge's grades (:mod:`ctxeval._judge.probe`)."""

from __future__ import annotations

import json
from typing import Any

import click

from .._errors import ConfigError
from .judge import _cache, _guard_paths, _inputs, _items, _judge_options, _make_judge, _opts
from .options import emit, output_option

__all__ = ["probe"]


@click.command("probe")
@_inputs
@click.option(
    "--scale",
    type=click.Choice(["rag", "trec"]),
    default="rag",
    show_default=True,
    help="rag: 1-5 (RA-nWG); trec: 0-3 (UMBRELA)",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=50,
    show_default=True,
    help="probe this many items of the pool (spread evenly over it); each costs one judgment per manipulation "
    "and one as it is",
)
@click.option(
    "--manipulation",
    "manipulations",
    multiple=True,
    type=click.Choice(["stuffed", "injected"]),
    help="which copies to grade (default both): stuffed = the question's words around the passage; injected = an "
    "instruction to answer with the top grade after it",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@_judge_options
@output_option(None, "where to write the probe's report (default stdout)")
def probe(
    runs: tuple[str, ...],
    samples: str | None,
    queries: str | None,
    passages: str | None,
    depth: int | None,
    scale: str,
    limit: int,
    manipulations: tuple[str, ...],
    fmt: str,
    output: str | None,
    **kw: Any,
) -> None:
    """Grade passages as they are and in manipulated copies that add no evidence (the question's words
    stuffed in; an instruction injected), and report how far the grades move: per manipulation the mean
    shift, the share of items moved, moved up and moved to the top grade. An honest judge moves none."""
    from .._judge.probe import MANIPULATIONS
    from .._judge.probe import probe as run_probe
    from .._judge.runner import check_undecided

    _guard_paths(kw, output, [*runs, samples, queries, passages])
    judge = _make_judge(kw)
    items = _items(runs, samples, queries, passages, depth)
    if len(items) > limit:  # evenly spread, the same ones every time
        items = [items[(i * len(items)) // limit] for i in range(limit)]
    with _cache(kw, write=True) as cache:
        result, tally = run_probe(judge, items, cache, _opts(kw), scale, manipulations or tuple(MANIPULATIONS))
    click.echo(tally.line(), err=True)
    check_undecided([tally], kw["max_undecided"])
    if not any(r["compared"] for r in result.rows.values()):
        raise ConfigError("judge probe: no item has both its grades decided: nothing to compare")
    if kw.get("report_path"):
        from .._io.writers import write_text

        write_text(kw["report_path"], json.dumps({"tallies": [tally.to_dict()]}, indent=2, sort_keys=True) + "\n")
    emit(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n" if fmt == "json" else str(result), output)
