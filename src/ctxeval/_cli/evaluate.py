"""``ctxeval evaluate``: measures over runs."""

from __future__ import annotations

import os
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
@click.option(
    "--stream",
    is_flag=True,
    help="read the (one) run in chunks of whole queries: memory bounded by the chunk and the qrels, for runs "
    "larger than memory; the run must be grouped by query (see --sort-first)",
)
@click.option(
    "--chunk-mb", type=click.IntRange(min=1), default=64, show_default=True, help="with --stream: the chunk size"
)
@click.option("--sort-first", is_flag=True, help="with --stream: sort an ungrouped run by query out of core first")
@click.option(
    "--engine",
    type=click.Choice(["local", "spark"]),
    default="local",
    show_default=True,
    help="spark: evaluate on Spark (pip install 'ctxeval[spark]'; needs Java 17), the same kernels per query group",
)
@click.option("--spark-master", default=None, help="with --engine spark: the master URL (default local[*])")
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
    stream: bool,
    chunk_mb: int,
    sort_first: bool,
    engine: str,
    spark_master: str | None,
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

    if engine == "spark":
        from .._errors import ConfigError
        from .._io.model import split_named
        from .._spark import evaluate_spark

        if stream or (not runs and not samples):
            raise ConfigError(
                "--engine spark evaluates QRELS RUN [RUN ...] or --samples FILE [FILE ...] (not --stream)"
            )
        files = [qrels, *runs] if samples else list(runs)
        named = [split_named(r) for r in files]
        result, _ = evaluate_spark(
            None if samples else qrels,
            [p for _, p in named],
            list(measures) or list(DEFAULT_MEASURES),
            names=[n or os.path.splitext(os.path.basename(p))[0] for n, p in named],
            policies=policies_from(kw),
            rag=rag_from(kw),
            utility=utility_from(kw),
            master=spark_master,
        )
        emit(render(result, fmt, per_query), output)
        return
    if stream or sort_first:
        from .._errors import ConfigError
        from .._io.model import split_named
        from .._stream import evaluate_stream

        if samples or len(runs) != 1:
            raise ConfigError("--stream evaluates one run file: QRELS RUN (not sample sets)")
        run_name, run_path = split_named(runs[0])
        result = evaluate_stream(
            qrels,
            run_path,
            list(measures) or list(DEFAULT_MEASURES),
            name=run_name,
            policies=policies_from(kw),
            rag=rag_from(kw),
            utility=utility_from(kw),
            chunk_bytes=chunk_mb << 20,
            sort_first=sort_first,
        )
        emit(render(result, fmt, per_query), output)
        return
    inputs = verb_inputs(qrels, runs, samples)
    result = evaluate(
        measures=list(measures) or None,
        **inputs,
        policies=policies_from(kw),
        rag=rag_from(kw),
        utility=utility_from(kw),
    )
    emit(render(result, fmt, per_query), output)
