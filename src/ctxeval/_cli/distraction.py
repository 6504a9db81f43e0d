"""``ctxeval distraction``: ranking profiles compared by the harm they do to an LLM reader."""

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
    utility_options,
)


@click.command("distraction")
@run_arguments()
@shown("-k", "k", type=click.IntRange(min=1), default=5, help="the number of passages the LLM reads")
@utility_options
@click.option(
    "--rel",
    type=int,
    help="grade >= REL counts as relevant for RR, R@k and UDCG (default: the smallest grade of positive utility)",
)
@shown(
    "--safe",
    type=click.FloatRange(0.0, 1.0),
    default=0.10,
    help="verdict SAFE when the mean distractor rate is <= this",
)
@shown("--risky", type=click.FloatRange(0.0, 1.0), default=0.50, help="verdict RISKY up to this rate, DANGEROUS above")
@shown("--worst", type=click.IntRange(min=0), default=5, help="how many worst distractors to list per run")
@click.option("--discount", is_flag=True, help="optimal k from the log2-discounted cumulative utility")
@rag_options(pool=False, groups=False)
@policy_options()
@format_option("table", "json", "csv")
@engine_options
@output_option()
def command(
    k: int,
    rel: int | None,
    safe: float,
    risky: float,
    worst: int,
    discount: bool,
    fmt: str,
    output: str | None,
    **kw: Any,
) -> None:
    """Compare ranking profiles by the harm they do to an LLM reader.

    One row per RUN: RR, R@K, nDCG@K next to dDCG@K, ndDCG@K, UDCG@K, the distractor rate and harm,
    a safety verdict, the optimal number of passages, the hidden harm (what the distractors cost as a
    share of the ideal, which the rank metrics do not see) and the worst distractors with the reason each was flagged.
    """
    from .._distraction import distraction_table
    from .._render.distraction import render_distraction

    table = distraction_table(
        k=k,
        **inputs_from(kw),
        rel=rel,
        thresholds=(safe, risky),
        worst=worst,
        discount=discount,
        **settings_from(kw),
    )
    emit(render_distraction(table, fmt), output)
