"""``ctxeval chunking``: which chunker at which token budget (:mod:`ctxeval._chunking`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .._compare.settings import CORRECTIONS, TESTS, Stats
from .._errors import ConfigError
from .options import File, emit, format_option, output_option, resampling_options, shown

FORMATS = ("table", "markdown", "json", "html")


def _chunkers(values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values:
        name, sep, spec = v.partition("=")
        if not sep or not name or ":" in name or "/" in name:  # a spec or a path alone is named by itself
            name, spec = v, v
        if name in out:
            raise ConfigError(f"--chunker {name}=...: given twice")
        out[name] = spec
    return out


@click.command("chunking")
@click.argument("documents", type=click.Path(exists=True))
@click.argument("labels", type=File("span labels"))
@click.option(
    "--chunker",
    "chunkers",
    multiple=True,
    required=True,
    metavar="[NAME=]SPEC",
    help="a chunker, repeatable: tokens:N[/O] or chars:N[/O] (fixed windows, offline), "
    "langchain:Class(k=v, ...), llamaindex:Class(...), chonkie:Class(...), haystack:DocumentSplitter(...), "
    "semchunk:N, python:module:function, or a chunk table file (chunk_id, doc_id, start, end)",
)
@click.option(
    "--questions",
    type=File("questions"),
    help="question texts (qid<TAB>text lines, or JSON lines of query_id and question); default: the labels' own "
    "(Chroma's questions_df.csv)",
)
@shown(
    "--budgets",
    default="128,256,512,1024,2048,4096",
    help="the curve's budgets in tokens: 256,512,1024 or 256:4096:256",
)
@click.option("--budget", type=click.IntRange(min=1), help="the budget the answer is about (default: each)")
@shown("-m", "--measure", default="SpanRecall", help="the measure family compared at each budget")
@shown("-k", "k", type=click.IntRange(min=1), default=5, help="K of the equal-K view")
@click.option(
    "--tokenizer",
    help="what counts tokens: words-v1 (offline, the default) or tiktoken:<encoding>; the report names it",
)
@shown("--test", type=click.Choice(list(TESTS)), default="randomization")
@shown("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.05)
@shown("--correction", type=click.Choice(list(CORRECTIONS)), default="holm")
@shown("--permutations", type=click.IntRange(min=1), default=10000)
@resampling_options(
    "bootstrap resamples of the intervals", "seed of every random draw", "the level of the confidence intervals"
)
@click.option(
    "--save",
    "save_dir",
    type=click.Path(file_okay=False),
    help="write each chunker's chunk table (NAME.chunks.jsonl) and run (NAME.run) into this folder",
)
@format_option(*FORMATS)
@output_option()
def command(
    documents: str, labels: str, chunkers: tuple[str, ...], questions: str | None, budgets: str, budget: int | None,
    measure: str, k: int, tokenizer: str | None, save_dir: str | None, fmt: str, output: str | None, **kw: Any,
) -> None:  # fmt: skip
    """Which chunker at which token budget: every chunker cuts DOCUMENTS (a folder, or JSON lines of
    doc_id and text), BM25 retrieves each chunking's chunks for every question of LABELS (span labels:
    query_id doc_id start end grade, or Chroma's questions_df.csv), and the measure is compared at equal
    token budgets (paired tests over every pair of chunkers, Holm): the answer names the chunker that
    wins at each budget, or says why it cannot tell; precision_Omega beside each chunker."""
    from .._render.chunking import chunking

    stats = Stats(
        **{n: kw[n] for n in ("test", "alpha", "correction", "permutations", "resamples", "seed", "confidence")}
    )
    report = chunking(
        documents, labels, _chunkers(chunkers), questions=questions, budgets=budgets, budget=budget,
        measure=measure, k=k, tokenizer=tokenizer, stats=stats,
    )  # fmt: skip
    if save_dir is not None:
        folder = Path(save_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for name, table in report.tables.items():
            safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)
            table.write(folder / f"{safe}.chunks.jsonl")
            report.runs[name].write_trec(folder / f"{safe}.run")
    text = {"table": report.to_text, "markdown": report.to_markdown, "json": report.to_json, "html": report.to_html}
    emit(text[fmt](), output)
