"""``ctxeval curve``: any measure at every cutoff K."""

from __future__ import annotations

from typing import Any

import click

from .options import (
    emit,
    engine_options,
    output_option,
    policy_options,
    rag_options,
    run_arguments,
    settings_from,
    utility_options,
    verb_inputs,
)


@click.command("curve")
@run_arguments()
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    required=True,
    help="measure family with its parameters, cutoff optional (nDCG, P(rel=2), RA-nWG@5); repeatable",
)
@click.option(
    "-k",
    "ks",
    default="1:20",
    show_default=True,
    help="cutoffs: 1:50, 1:50:5, 1,5,10, or K for 1..K; ending in tok, budgets of tokens (256:4096:256tok, with --chunks)",
)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@engine_options
@policy_options()
@rag_options()
@output_option()
@utility_options
def command(
    qrels: str,
    runs: tuple[str, ...],
    samples: bool,
    measures: tuple[str, ...],
    ks: str,
    fmt: str,
    output: str | None,
    **kw: Any,
) -> None:
    """Any measure at every cutoff K: the mean over queries of MEASURE@K for each K, per RUN."""
    from .._curve import metric_at_k
    from .._render.curve import render_curves

    data = metric_at_k(
        measures=list(measures),
        k=ks,
        **verb_inputs(qrels, runs, samples),
        **settings_from(kw),
    )
    emit(render_curves(data, fmt), output)
