"""``ctxeval evaluate``: measures over runs."""

from __future__ import annotations

from typing import Any

import click

from .._errors import ConfigError
from .._measures import families
from .options import (
    at_level,
    emit,
    engine_from,
    engine_options,
    format_option,
    measures_option,
    output_option,
    policies_from,
    policy_options,
    rag_from,
    rag_options,
    rel_option,
    resampling_options,
    run_arguments,
    shown,
    utility_from,
    utility_options,
    verb_inputs,
)


def _measure_help() -> str:
    names = ", ".join(f.name for f in families())
    return f"measure name, repeatable (e.g. nDCG@10, P(rel=2)@5, AP). Known: {names}. See 'ctxeval measures'."


@click.command("evaluate")
@run_arguments()
@measures_option(_measure_help())
@click.option(
    "--spans",
    is_flag=True,
    help="QRELS is a file of span labels (evidence as character spans of the documents: 'qid 0 doc_id start end "
    "grade' lines, or JSONL/CSV/Parquet); needs --chunks",
)
@rel_option
@click.option("--per-query", is_flag=True, help="also report every query's value")
@format_option("table", "json", "csv", "jsonl")
@engine_options
@click.option(
    "--ci",
    "ci",
    is_flag=True,
    help="an interval on every figure: bootstrap over the queries (or t, --ci-method), its level and seed printed",
)
@shown(
    "--ci-method",
    type=click.Choice(["percentile", "bca", "t"]),
    default="percentile",
    help="with --ci: percentile or BCa bootstrap intervals, or Student's t",
)
@resampling_options(
    "with --ci: bootstrap resamples", "with --ci: the bootstrap's seed", "with --ci: the intervals' level"
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
    spans: bool,
    rel: int | None,
    per_query: bool,
    fmt: str,
    output: str | None,
    ci: bool,
    ci_method: str,
    confidence: float,
    resamples: int,
    seed: int,
    **kw: Any,
) -> None:
    """Evaluate RUN files against QRELS, or sample sets (--samples FILE [FILE ...]).

    RAG measures (RA-nWG@K, PROC@K, %PROC@K, ...) read grades on the 1-5 utility scale; map other
    scales with --grade-map. With --pool, every RUN is a reranking of that one retrieval pool.
    Distraction-aware measures (dDCG@K, ndDCG@K, UDCG@K, DistractorRate@K, DistractorHarm@K) read
    per-passage utilities set by --utility-map, --distractors, --utilities and --distractor-rules.
    """
    from .._evaluate import evaluate
    from .._render.text import render
    from .._stats.summary import CI

    engine = engine_from(kw)
    if spans:
        from .._io.spans import SpanLabels

        if samples:
            raise ConfigError("--spans reads QRELS as span labels, not with --samples")
        qrels = SpanLabels.from_file(qrels)  # type: ignore[assignment]
    given = click.get_current_context().get_parameter_source
    if not ci and any(
        given(name) == click.core.ParameterSource.COMMANDLINE
        for name in ("ci_method", "confidence", "resamples", "seed")
    ):
        raise ConfigError("--ci-method, --confidence, --resamples and --seed set the intervals of --ci")
    interval = CI(ci_method, confidence, resamples, seed) if ci else None
    measure_names = at_level(
        list(measures) or None, rel
    )  # None: the defaults that fit the input (sample sets: by their labels)
    result = evaluate(
        measures=measure_names,
        **verb_inputs(qrels, runs, samples),
        policies=policies_from(kw),
        rag=rag_from(kw),
        utility=utility_from(kw),
        engine=engine,
        ci=interval,
    )
    emit(render(result, fmt, per_query), output)
