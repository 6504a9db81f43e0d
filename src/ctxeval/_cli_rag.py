"""``ctxeval diagnose``: retrieval failure or selection failure, per query and in summary.

Registered on the main group in ``_cli.py`` with ``cli.add_command(diagnose_cmd)``.
"""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["diagnose_cmd"]

_GRADE_MAP_HELP = (
    "map qrels grades onto the 1-5 utility scale: FROM:TO,... (e.g. 3:5,2:4,1:3,0:2) or a preset (trec-dl)"
)


@click.command("diagnose")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--pool", "pool", type=click.Path(dir_okay=False), default=None, help="the retrieval pool RUN was selected from (default: RUN itself)")
@click.option("--pool-depth", type=click.IntRange(min=1), default=None, help="cut the pool at this depth (default: its full length)")
@click.option("-k", "k", type=click.IntRange(min=1), default=10, show_default=True, help="the number of slots the LLM reads")
@click.option("--proc-threshold", type=click.FloatRange(0.0, 1.0), default=0.8, show_default=True, help="PROC@K below this: retrieval failure")
@click.option("--pct-threshold", type=click.FloatRange(0.0, 1.0), default=0.8, show_default=True, help="%PROC@K below this (PROC high): selection failure")
@click.option("--grade-map", default=None, help=_GRADE_MAP_HELP)
@click.option("--allow-outside-pool", is_flag=True, help="diagnose a RUN holding docs outside the pool (reported) instead of failing")
@click.option("--worst", type=click.IntRange(min=0), default=10, show_default=True, help="how many worst queries to list")
@click.option("--per-query", is_flag=True, help="list every query in the table (JSON always has them all)")
@click.option("--missing", type=click.Choice(["zero", "ignore", "error"]), default="zero", show_default=True, help="judged queries absent from RUN")
@click.option("--ties", type=click.Choice(["trec", "input"]), default="trec", show_default=True)
@click.option("--duplicates", type=click.Choice(["error", "first", "best"]), default="error", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, help="write here instead of stdout")
def diagnose_cmd(
    qrels: str,
    run: str,
    pool: str | None,
    pool_depth: int | None,
    k: int,
    proc_threshold: float,
    pct_threshold: float,
    grade_map: str | None,
    allow_outside_pool: bool,
    worst: int,
    per_query: bool,
    missing: str,
    ties: str,
    duplicates: str,
    fmt: str,
    output: str | None,
) -> None:
    """Fix the retriever or fix the reranker? Classify each query of RUN by PROC@K and %PROC@K.

    Retrieval failure: PROC@K below --proc-threshold (the pool lacks the best evidence). Selection
    failure: PROC@K high but %PROC@K below --pct-threshold (the pool had it, the top K lost it).
    """
    from ._diagnose import diagnose

    result = diagnose(
        qrels,
        run,
        pool,
        k=k,
        pool_depth=pool_depth,
        proc_threshold=proc_threshold,
        pct_threshold=pct_threshold,
        grade_map=grade_map,
        allow_outside_pool=allow_outside_pool,
        ties=ties,
        missing=missing,
        duplicates=duplicates,
        worst=worst,
    )
    text = result.render(fmt, per_query=per_query)
    if output and output != "-":
        Path(output).write_text(text, encoding="utf-8", newline="\n")
    else:
        click.echo(text, nl=False)
