"""``ctxeval curve``: any measure at every cutoff K."""

from __future__ import annotations

from typing import Any

import click

from .options import (
    emit,
    format_option,
    inputs_from,
    measures_option,
    output_option,
    run_arguments,
    settings_from,
    settings_options,
    shown,
    utility_options,
)


@click.command("curve")
@run_arguments()
@measures_option(
    "measure family with its parameters, cutoff optional (nDCG, P(rel=2), RA-nWG@5); repeatable", required=True
)
@shown(
    "-k",
    "ks",
    default="1:20",
    help="cutoffs: 1:50, 1:50:5, 1,5,10, or K for 1..K; ending in tok, budgets of tokens (256:4096:256tok, with --chunks)",
)
@format_option("table", "json", "csv")
@settings_options
@output_option()
@utility_options
def command(measures: tuple[str, ...], ks: str, fmt: str, output: str | None, **kw: Any) -> None:
    """Any measure at every cutoff K: the mean over queries of MEASURE@K for each K, per RUN."""
    from .._curve import metric_at_k
    from .._render.curve import render_curves

    data = metric_at_k(measures=list(measures), k=ks, **inputs_from(kw), **settings_from(kw))
    emit(render_curves(data, fmt), output)
