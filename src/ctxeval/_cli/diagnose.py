"""``ctxeval diagnose``: retrieval failure or selection failure, per query and in summary."""

from __future__ import annotations

from typing import Any

import click

from .options import (
    emit,
    engine_options,
    format_option,
    inputs_from,
    output_option,
    policy_options,
    rag_options,
    run_arguments,
    settings_from,
    shown,
)


@click.command("diagnose")
@run_arguments(one=True)
@rag_options(groups=False)
@shown("-k", "k", type=click.IntRange(min=1), default=10, help="the number of slots the LLM reads")
@shown("--proc-threshold", type=click.FloatRange(0.0, 1.0), default=0.8, help="PROC@K below this: retrieval failure")
@shown(
    "--pct-threshold",
    type=click.FloatRange(0.0, 1.0),
    default=0.8,
    help="%PROC@K below this (PROC high): selection failure",
)
@shown("--worst", type=click.IntRange(min=0), default=10, help="how many worst queries to list")
@click.option("--per-query", is_flag=True, help="list every query in the table (JSON always has them all)")
@engine_options
@policy_options()
@format_option("table", "json")
@output_option()
def command(
    k: int,
    proc_threshold: float,
    pct_threshold: float,
    worst: int,
    per_query: bool,
    fmt: str,
    output: str | None,
    **kw: Any,
) -> None:
    """Fix the retriever or fix the reranker? Classify each query of RUN by PROC@K and %PROC@K.

    Retrieval failure: PROC@K below --proc-threshold (the pool lacks the best evidence). Selection
    failure: PROC@K high but %PROC@K below --pct-threshold (the pool had it, the top K lost it).
    """
    from .._diagnose import diagnose
    from .._render.diagnose import render

    result = diagnose(
        **inputs_from(kw, one=True),
        k=k,
        proc_threshold=proc_threshold,
        pct_threshold=pct_threshold,
        worst=worst,
        **settings_from(kw, utility=False),
    )
    emit(render(result, fmt, per_query=per_query), output)
