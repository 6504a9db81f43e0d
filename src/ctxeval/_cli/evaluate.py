"""``ctxeval evaluate``: measures over runs."""

from __future__ import annotations

from typing import Any

import click

from .options import (
    emit,
    output_option,
    policies_from,
    policy_options,
    rag_from,
    rag_options,
    samples_option,
    utility_from,
    utility_options,
    verb_inputs,
)


def _measure_help() -> str:
    from .._measures import families

    names = ", ".join(f.name for f in families())
    return f"measure name, repeatable (e.g. nDCG@10, P(rel=2)@5, AP). Known: {names}. See 'ctxeval measures'."


@click.command("evaluate")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))
@samples_option
@click.option("-m", "--measure", "measures", multiple=True, help=_measure_help())
@click.option("--per-query", is_flag=True, help="also report every query's value")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "csv", "jsonl"]), default="table", show_default=True
)
@policy_options()
@output_option()
@rag_options()
@utility_options
def command(
    qrels: str,
    runs: tuple[str, ...],
    samples: bool,
    measures: tuple[str, ...],
    per_query: bool,
    fmt: str,
    output: str | None,
    **kw: Any,
) -> None:
    """Evaluate RUN files against QRELS, or sample sets (--samples FILE [FILE ...]).

    RAG measures (RA-nWG@K, PROC@K, %PROC@K, ...) read grades on the 1-5 utility scale; map other
    scales with --grade-map. With --pool, every RUN is a reranking of that one retrieval pool.
    Distraction-aware measures (dDCG@K, ndDCG@K, UDCG@K, DistractorRate@K, DistractorHarm@K) read
    per-passage utilities set by --utility-map, --distractors, --utilities and --distractor-rules.
    """
    from .._evaluate import DEFAULT_MEASURES, evaluate
    from .._render.text import render

    inputs = verb_inputs(qrels, runs, samples)
    result = evaluate(
        measures=list(measures) or list(DEFAULT_MEASURES),
        **inputs,
        policies=policies_from(kw),
        rag=rag_from(kw),
        utility=utility_from(kw),
    )
    emit(render(result, fmt, per_query), output)
