"""``ctxeval evaluate``: measures over runs."""

from __future__ import annotations

from typing import Any

import click

from .options import (
    at_level,
    emit,
    output_option,
    policies_from,
    policy_options,
    rag_from,
    rag_options,
    rel_option,
    resampling_options,
    samples_option,
    stderr_progress,
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
@click.option(
    "--spans",
    is_flag=True,
    help="QRELS is a file of span labels (evidence as character spans of the documents: 'qid 0 doc_id start end "
    "grade' lines, or JSONL/CSV/Parquet); needs --chunks",
)
@rel_option
@click.option("--per-query", is_flag=True, help="also report every query's value")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json", "csv", "jsonl"]), default="table", show_default=True
)
@click.option(
    "--stream",
    is_flag=True,
    help="the same as --engine stream: read the (one) run in chunks of whole queries. Pays only for a run "
    "whose in-memory reading (about 0.6x its text, 2.5x with measures that keep every ranked row) does not "
    "fit in memory; below that the default engine is "
    "faster for the same values. The run must be grouped by query (see --sort-first)",
)
@click.option(
    "--chunk-mb",
    type=click.IntRange(min=1),
    default=None,
    help="with --stream: the chunk size [default: an eighth of the run's text, 1-64 MiB, which keeps the peak "
    "memory below the default engine's]",
)
@click.option(
    "--sort-first",
    is_flag=True,
    help="with --stream: group an unsorted run by query first (read whole when it fits in memory, else sorted "
    "out of core)",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "stream", "spark"]),
    default="local",
    show_default=True,
    help="local: in this process; stream: see --stream; spark: on Spark (pip install 'ctxeval[spark]'; needs "
    "Java 17), the same kernels per query group",
)
@click.option("--spark-master", default=None, help="with --engine spark: the master URL (default local[*])")
@click.option(
    "--ci",
    "ci",
    is_flag=True,
    help="an interval on every figure: bootstrap over the queries (or t, --ci-method), its level and seed printed",
)
@click.option(
    "--ci-method",
    type=click.Choice(["percentile", "bca", "t"]),
    default="percentile",
    show_default=True,
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
    stream: bool,
    chunk_mb: int | None,
    sort_first: bool,
    engine: str,
    spark_master: str | None,
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
    from .._engine import evaluate
    from .._errors import ConfigError
    from .._evaluate import DEFAULT_MEASURES, with_intervals
    from .._io.model import split_named
    from .._render.text import render
    from .._stats.summary import CI

    if spans:
        from .._io.spans import SpanLabels

        if samples or engine != "local" or stream:
            raise ConfigError(
                "--spans reads QRELS as span labels for the local engine, not with --samples or another engine"
            )
        qrels = SpanLabels.from_file(qrels)  # type: ignore[assignment]
    if stream or sort_first or chunk_mb is not None:
        if engine == "spark":
            raise ConfigError("--stream, --chunk-mb and --sort-first are the stream engine's, not Spark's")
        engine = "stream"
    if spark_master is not None and engine != "spark":
        raise ConfigError("--spark-master is for --engine spark")
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
    if engine == "spark":
        from .._spark import evaluate_spark

        if not runs and not samples:
            raise ConfigError("--engine spark evaluates QRELS RUN [RUN ...] or --samples FILE [FILE ...]")
        files = [qrels, *runs] if samples else list(runs)
        named = [split_named(r) for r in files]
        result, _ = evaluate_spark(
            None if samples else qrels,
            [p for _, p in named],
            measure_names or list(DEFAULT_MEASURES),
            names=[n for n, _ in named],
            policies=policies_from(kw),
            rag=rag_from(kw),
            utility=utility_from(kw),
            master=spark_master,
            progress=stderr_progress(),
        )
        result = with_intervals(result, interval)
    else:
        if engine == "stream" and (samples or len(runs) != 1):
            raise ConfigError("--stream evaluates one run file: QRELS RUN (not sample sets)")
        result = evaluate(
            measures=measure_names,
            **verb_inputs(qrels, runs, samples),
            policies=policies_from(kw),
            rag=rag_from(kw),
            utility=utility_from(kw),
            engine={"name": engine, "chunk_mb": chunk_mb, "sort_first": sort_first} if engine == "stream" else engine,
            ci=interval,
        )
    emit(render(result, fmt, per_query), output)
