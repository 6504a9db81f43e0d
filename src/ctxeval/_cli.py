"""The ``ctxeval`` command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from ._cli_common import invoke_reporting_errors
from ._cli_distraction import utility_options

__all__ = ["main", "cli"]


def _measure_help() -> str:
    from ._measures import families

    names = ", ".join(f.name for f in families())
    return f"measure name, repeatable (e.g. nDCG@10, P(rel=2)@5, AP). Known: {names}. See 'ctxeval measures'."


def _emit(text: str, output: str | None) -> None:
    if output and output != "-":
        Path(output).write_text(text, encoding="utf-8", newline="\n")
    else:
        click.echo(text, nl=False)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        return invoke_reporting_errors(ctx, super().invoke)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="ctxeval")
def cli() -> None:
    """ctxeval: how much of the best evidence did your retriever put into the K slots the LLM reads?"""


MISSING_HELP = (
    "judged queries absent from a run: zero = score them 0 (trec_eval -c; default), "
    "ignore = leave them out (trec_eval's default), error = fail"
)


GRADE_MAP_HELP = (
    "map qrels grades onto the 1-5 utility scale of the RAG measures: FROM:TO,... (e.g. 3:5,2:4,1:3,0:2) "
    "or a preset (trec-dl); rel= thresholds and classical measures keep the qrels' own grades"
)
POOL_HELP = "the retrieval pool (a run) the RUNs were selected from, for PROC and %PROC; default: each RUN itself"


@cli.command()
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, help=_measure_help())
@click.option("--per-query", is_flag=True, help="also report every query's value")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "jsonl"]), default="table", show_default=True)
@click.option("--missing", type=click.Choice(["zero", "ignore", "error"]), default="zero", show_default=True, help=MISSING_HELP)
@click.option("--ties", type=click.Choice(["trec", "input"]), default="trec", show_default=True, help="trec: score (as float32) desc, then doc id desc; input: file order")
@click.option("--duplicates", type=click.Choice(["error", "first", "best"]), default="error", show_default=True, help="a repeated (query, doc) pair: fail, or keep the first / the best-scored")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, help="write here instead of stdout")
@click.option("--grade-map", default=None, help=GRADE_MAP_HELP)
@click.option("--pool", "pool", type=click.Path(dir_okay=False), default=None, help=POOL_HELP)
@click.option("--pool-depth", type=click.IntRange(min=1), default=None, help="cut the pool at this depth (default: its full length)")
@click.option("--allow-outside-pool", is_flag=True, help="evaluate runs holding docs outside the pool (they are reported) instead of failing")
@click.option("--groups", type=click.Path(dir_okay=False), default=None, help="file of 'doc_id group' lines for RA-nWG(novelty=...)")
@utility_options
def evaluate(
    qrels: str, runs: tuple[str, ...], measures: tuple[str, ...], per_query: bool, fmt: str, missing: str, ties: str, duplicates: str, output: str | None,
    grade_map: str | None = None, pool: str | None = None, pool_depth: int | None = None, allow_outside_pool: bool = False, groups: str | None = None,
    **utility: Any,
) -> None:
    """Evaluate RUN files against QRELS.

    RAG measures (RA-nWG@K, PROC@K, %PROC@K, ...) read grades on the 1-5 utility scale; map other
    scales with --grade-map. With --pool, every RUN is a reranking of that one retrieval pool.
    Distraction-aware measures (dDCG@K, ndDCG@K, UDCG@K, DistractorRate@K, DistractorHarm@K) read
    per-passage utilities set by --utility-map, --distractors, --utilities and --distractor-rules.
    """
    from ._evaluate import DEFAULT_MEASURES
    from ._evaluate import evaluate as run_eval
    from ._output import render

    result = run_eval(
        qrels, list(runs), list(measures) or list(DEFAULT_MEASURES), ties=ties, missing=missing, duplicates=duplicates,
        grade_map=grade_map, pool=pool, pool_depth=pool_depth, allow_outside_pool=allow_outside_pool, groups=groups, **utility,
    )
    _emit(render(result, fmt, per_query), output)


@cli.command()
@click.option(
    "--html", "html_path", type=click.Path(dir_okay=False, writable=True), default="ctxeval-report.html", show_default=True,
    help="where to write the HTML report of the comparison ('' for none)",
)
def demo(html_path: str) -> None:
    """Run the main job on the bundled example data set, print a readable report and write the HTML
    report of the comparison."""
    from ._demo import demo_report

    click.echo(demo_report(html_path or None), nl=False)


@cli.command("measures")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
def measures_cmd(fmt: str) -> None:
    """List every measure with its parameters and definition."""
    from ._docs import measure_list

    click.echo(measure_list(fmt), nl=False)


def _register() -> None:
    from ._cli_calibrate import calibrate_cmd
    from ._cli_distraction import distraction_cmd, fit_udcg_cmd
    from ._cli_compare import compare_cmd, curve_cmd
    from ._cli_rag import diagnose_cmd
    from ._cli_trec import trec_eval_cmd

    cli.add_command(diagnose_cmd)
    cli.add_command(trec_eval_cmd)
    cli.add_command(calibrate_cmd)
    cli.add_command(distraction_cmd)
    cli.add_command(fit_udcg_cmd)
    cli.add_command(compare_cmd)
    cli.add_command(curve_cmd)


_register()


def main(argv: list[str] | None = None) -> int:
    try:
        cli.main(args=argv, prog_name="ctxeval", standalone_mode=True)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def console_main() -> None:
    """Entry point of the ``ctxeval`` command: run, flush, and leave without tearing down the heap.

    Freeing millions of array elements and strings one by one at interpreter exit costs up to a
    second on large runs and does nothing useful for a process that is about to end.
    """
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
