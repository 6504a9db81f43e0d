"""``ctxeval judge probe``: how far passages manipulated to add no evidence (the question's words
stuffed in, an instruction injected) move a judge's grades (:mod:`ctxeval._judge.probe`)."""

from __future__ import annotations

import json
from typing import Any

import click

from .._errors import ConfigError
from .._judge.probe import MANIPULATIONS
from .._judge.probe import probe as run_probe
from .._judge.runner import check_undecided
from .judging import cache_of, guard_paths, input_options, items_of, judge_options, make_judge, options_of, write_report
from .options import emit, output_option

__all__ = ["probe"]


@click.command("probe")
@input_options
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
    type=click.Choice(list(MANIPULATIONS)),
    help="which copies to grade (default both): stuffed = the question's words around the passage; injected = an "
    "instruction to answer with the top grade after it",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@judge_options
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
    guard_paths(kw, output, [*runs, samples, queries, passages])
    judge = make_judge(kw)
    items = items_of(runs, samples, queries, passages, depth)
    if len(items) > limit:  # evenly spread, the same ones every time
        items = [items[(i * len(items)) // limit] for i in range(limit)]
    with cache_of(kw, write=True) as cache:
        result, tally = run_probe(judge, items, cache, options_of(kw), scale, manipulations or tuple(MANIPULATIONS))
    click.echo(tally.line(), err=True)
    check_undecided([tally], kw["max_undecided"])
    if not any(r["compared"] for r in result.rows.values()):
        raise ConfigError("judge probe: no item has both its grades decided: nothing to compare")
    write_report(kw, {"tallies": [tally.to_dict()]})
    emit(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n" if fmt == "json" else str(result), output)
