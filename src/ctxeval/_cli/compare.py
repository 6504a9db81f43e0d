"""``ctxeval compare``: paired significance, CIs, strata and reports."""

from __future__ import annotations

import sys
from typing import Any

import click

from .._compare.settings import CI_METHODS, CORRECTIONS, TESTS, Sections, Stats, Strata
from .options import (
    File,
    at_level,
    emit,
    format_option,
    inputs_from,
    measures_option,
    output_option,
    rel_option,
    resampling_options,
    run_arguments,
    settings_from,
    settings_options,
    shown,
    utility_options,
)

FORMATS = ("table", "json", "csv", "markdown", "latex", "html")


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # pragma: no cover
        return False


def _progress_wanted(quiet: bool) -> bool:
    """Progress goes to stderr, and only when both stdout and stderr are terminals."""
    try:
        return not quiet and _stdout_is_terminal() and sys.stderr.isatty()
    except (AttributeError, ValueError):  # pragma: no cover
        return False


@click.command("compare")
@run_arguments()
@measures_option("measure name, repeatable (default: nDCG@10, AP, RR, P@10, R@100)")
@rel_option
@click.option(
    "--baseline",
    "baseline",
    multiple=True,
    help="name of the baseline run (default: the first RUN); repeatable: every run against each baseline, "
    "the p-values of all those tests corrected as one family",
)
@click.option(
    "--all-pairs",
    is_flag=True,
    help="compare every pair of runs (each later run against each earlier one, as ranx's compare), Holm over all "
    "pairs and measures; the main table's markers stay against the baseline",
)
@shown("--test", type=click.Choice(list(TESTS)), default="randomization", help="paired significance test (two-sided)")
@shown(
    "--alpha",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=0.05,
    help="significance level, after correction",
)
@shown(
    "--correction",
    type=click.Choice(list(CORRECTIONS)),
    default="holm",
    help="multiple-comparison correction across all (run, measure) comparisons (with several baselines, all "
    "(run, baseline, measure) comparisons)",
)
@click.option(
    "--strata",
    "strata",
    multiple=True,
    help="stratify: a file of 'qid category' lines, or the built-in num_rel / query_length; repeatable",
)
@click.option(
    "--queries",
    type=File("queries"),
    help="query texts ('qid<TAB>text' lines or JSONL with qid and text); adds the query_length strata",
)
@click.option(
    "--num-rel-level",
    type=int,
    help="num_rel strata count the judged docs with qrels grade >= this (default: the level of the grade scale: "
    "grade >= 3 on the 1-5 scale, through --grade-map; else 1)",
)
@click.option(
    "--pr-rel",
    type=int,
    help="the precision-recall curve counts qrels grade >= this as relevant (default: as --num-rel-level)",
)
@shown("--min-stratum", type=click.IntRange(min=0), default=10, help="flag strata with fewer queries than this")
@shown("--permutations", type=click.IntRange(min=1), default=10000, help="random sign flips of the randomization test")
@resampling_options(
    "bootstrap resamples (CIs and the bootstrap test)", "seed of every random draw", "confidence level of the intervals"
)
@shown(
    "--ci", "ci", type=click.Choice(list(CI_METHODS)), default="percentile", help="bootstrap confidence interval method"
)
@click.option(
    "--distraction-k",
    type=click.IntRange(min=1),
    help="add the distraction table (verdicts, worst distractors) at this k (default: the cutoff of the first distraction-aware measure)",
)
@click.option(
    "--curve-k",
    help="cutoffs of the metric@K curves in the report: 1:50, 1,5,10 or 0 for none (default: 1..max(20, largest cutoff))",
)
@format_option(*FORMATS)
@click.option("-q", "--quiet", is_flag=True, help="no progress display")
@settings_options
@output_option()
@utility_options
def command(
    measures: tuple[str, ...],
    rel: int | None,
    baseline: tuple[str, ...],
    all_pairs: bool,
    test: str,
    alpha: float,
    correction: str,
    strata: tuple[str, ...],
    queries: str | None,
    num_rel_level: int | None,
    pr_rel: int | None,
    min_stratum: int,
    permutations: int,
    resamples: int,
    seed: int,
    ci: str,
    confidence: float,
    distraction_k: int | None,
    curve_k: str | None,
    fmt: str,
    quiet: bool,
    output: str | None,
    **kw: Any,
) -> None:
    """Compare RUNs with a baseline: means with bootstrap CIs, paired significance tests corrected for
    multiple comparisons, win/tie/loss counts, strata, and metric@K / precision-recall curves.

    Every comparison is paired by query over the queries both runs were evaluated on; queries where a
    measure is undefined (NA) for either run are dropped from that comparison and counted. --strata
    takes a file of 'qid category' lines (a query may be in several categories) or the built-in
    num_rel (0, 1, 2-5, >5 relevant docs) and query_length (1-3, 4-6, 7-10, >10 words; needs
    --queries); name a file ./num_rel to read a file of that name. A stratified report (--strata or
    --queries) always holds the num_rel strata, and with --queries the query_length strata.
    """
    from .._compare.progress import show_progress
    from .._render.report import compare

    curves_k: Any = None
    if curve_k is not None:
        curves_k = 0 if curve_k.strip() == "0" else curve_k
    inputs = inputs_from(kw)
    with show_progress(_progress_wanted(quiet)):
        report = compare(
            **inputs,
            measures=at_level(list(measures) or None, rel),
            baseline=list(baseline) or None,
            stats=Stats(
                test,
                alpha,
                correction,
                permutations,
                resamples,
                seed,
                ci,
                confidence,
                "all" if all_pairs else "baseline",
            ),
            strata=Strata(list(strata) or None, queries, num_rel_level, min_stratum),
            sections=Sections(curves_k=curves_k, pr_rel=pr_rel, distraction_k=distraction_k),
            **settings_from(kw),
        )
    to_file = bool(output and output != "-")
    text = {
        "json": report.to_json,
        "csv": report.to_csv,
        "markdown": report.to_markdown,
        "latex": report.to_latex,
        "html": report.to_html,
    }.get(fmt, lambda: report.to_table(color=not to_file and _stdout_is_terminal()))()
    emit(text, output)
