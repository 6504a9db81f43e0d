"""``ctxeval judge probe``: how far passages manipulated to add no evidence (the question's words
stuffed in, an instruction injected) move a judge's grades (:mod:`ctxeval._judge.probe`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import click

from .._errors import ConfigError
from .._io.model import Run, split_named
from .._judge.probe import MANIPULATIONS
from .._judge.probe import probe as run_probe
from .._judge.rerank import rerank_rise
from .._judge.runner import check_undecided
from .judging import (
    cache_of,
    guard_paths,
    input_options,
    items_of,
    judge_options,
    make_judge,
    options_of,
    reported,
    write_report,
)
from .options import File, emit, format_option, output_option, shown

__all__ = ["probe"]


@click.command("probe")
@input_options
@shown("--scale", type=click.Choice(["rag", "trec"]), default="rag", help="rag: 1-5 (RA-nWG); trec: 0-3 (UMBRELA)")
@shown(
    "--limit",
    type=click.IntRange(min=1),
    default=50,
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
@shown(
    "--rerank-queries",
    type=click.IntRange(min=0),
    default=10,
    help="rerank the first run's top --depth (default 10) of this many of its queries by the judge's own grades and "
    "report how far that run rises (0: no reranked run)",
)
@click.option(
    "--qrels",
    type=File("qrels"),
    help="people's labels: how far the reranked run rises under theirs, beside the judge's",
)
@format_option("table", "json")
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
    rerank_queries: int,
    qrels: str | None,
    fmt: str,
    output: str | None,
    **kw: Any,
) -> None:
    """Grade passages as they are and in manipulated copies that add no evidence (the question's words
    stuffed in; an instruction injected), and report how far the grades move: per manipulation the mean
    shift, the share of items moved, moved up and moved to the top grade. An honest judge moves none."""
    guard_paths(kw, output, [*runs, samples, queries, passages, qrels])
    judge = make_judge(kw)
    pool = items_of(runs, samples, queries, passages, depth)
    items = [pool[(i * len(pool)) // limit] for i in range(limit)] if len(pool) > limit else pool  # evenly spread
    with reported(kw), cache_of(kw, write=True) as cache:
        result, tally = run_probe(judge, items, cache, options_of(kw), scale, manipulations or tuple(MANIPULATIONS))
        tallies = [tally]
        if runs and rerank_queries:
            name, path = split_named(runs[0])
            first = Run.coerce(path).with_name(name or Path(path).name.split(".")[0])
            rise, t2 = rerank_rise(judge, first, pool, cache, options_of(kw), scale, depth or 10, rerank_queries, qrels)
            result = dataclasses.replace(result, rise=rise)
            tallies.append(t2)
    for t in tallies:
        click.echo(t.line(), err=True)
    check_undecided(tallies, kw["max_undecided"])
    if not any(r["compared"] for r in result.rows.values()):
        raise ConfigError("judge probe: no item has both its grades decided: nothing to compare")
    write_report(kw, {"tallies": [t.to_dict() for t in tallies], "ended": "finished"})
    emit(json.dumps(result.to_dict(), indent=2, sort_keys=True) + "\n" if fmt == "json" else str(result), output)
