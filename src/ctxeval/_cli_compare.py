"""``ctxeval compare`` (paired significance, CIs, strata, reports) and ``ctxeval curve`` (metric@K).

Registered on the main group in ``_cli.py`` with ``cli.add_command(...)``.
"""

from __future__ import annotations

import csv
import io
import math
import sys
from pathlib import Path
from typing import Any

import click

from ._cli_distraction import utility_options

__all__ = ["compare_cmd", "curve_cmd"]

FORMATS = ("table", "json", "csv", "markdown", "latex", "html")
_MISSING_HELP = "judged queries absent from a run: zero = score them 0 (default), ignore = leave them out, error = fail"
_GRADE_MAP_HELP = "map qrels grades onto the 1-5 utility scale of the RAG measures: FROM:TO,... or a preset (trec-dl)"


def _write(text: str, output: str | None) -> None:
    if output and output != "-":
        Path(output).write_text(text, encoding="utf-8", newline="\n")
    else:
        click.echo(text, nl=False)


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


def _eval_options(f: Any) -> Any:
    options = [
        click.option("--missing", type=click.Choice(["zero", "ignore", "error"]), default="zero", show_default=True, help=_MISSING_HELP),
        click.option("--ties", type=click.Choice(["trec", "input"]), default="trec", show_default=True, help="trec: score (as float32) desc, then doc id desc; input: file order"),
        click.option("--duplicates", type=click.Choice(["error", "first", "best"]), default="error", show_default=True, help="a repeated (query, doc) pair: fail, or keep the first / the best-scored"),
        click.option("--grade-map", default=None, help=_GRADE_MAP_HELP),
        click.option("--pool", "pool", type=click.Path(dir_okay=False), default=None, help="the retrieval pool (a run) the RUNs were selected from, for PROC and %PROC"),
        click.option("--pool-depth", type=click.IntRange(min=1), default=None, help="cut the pool at this depth (default: its full length)"),
        click.option("--allow-outside-pool", is_flag=True, help="evaluate runs holding docs outside the pool (reported) instead of failing"),
        click.option("--groups", type=click.Path(dir_okay=False), default=None, help="file of 'doc_id group' lines for RA-nWG(novelty=...)"),
        click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, help="write here instead of stdout"),
    ]
    for opt in reversed(options):
        f = opt(f)
    return f


@click.command("compare")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, help="measure name, repeatable (default: nDCG@10, AP, RR, P@10, R@100)")
@click.option("--baseline", default=None, help="name of the baseline run (default: the first RUN)")
@click.option("--test", type=click.Choice(["randomization", "t", "wilcoxon", "bootstrap"]), default="randomization", show_default=True, help="paired significance test (two-sided)")
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.05, show_default=True, help="significance level, after correction")
@click.option("--correction", type=click.Choice(["holm", "bonferroni", "bh", "none"]), default="holm", show_default=True, help="multiple-comparison correction across all (run, measure) comparisons")
@click.option("--strata", "strata", multiple=True, help="stratify: a file of 'qid category' lines, or the built-in num_rel / query_length; repeatable")
@click.option("--queries", type=click.Path(dir_okay=False), default=None, help="query texts ('qid<TAB>text' lines or JSONL with qid and text); adds the query_length strata")
@click.option("--num-rel-level", type=int, default=1, show_default=True, help="num_rel strata count the judged docs with grade >= this")
@click.option("--min-stratum", type=click.IntRange(min=0), default=10, show_default=True, help="flag strata with fewer queries than this")
@click.option("--permutations", type=click.IntRange(min=1), default=10000, show_default=True, help="random sign flips of the randomization test")
@click.option("--resamples", type=click.IntRange(min=1), default=10000, show_default=True, help="bootstrap resamples (CIs and the bootstrap test)")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="seed of every random draw")
@click.option("--ci", "ci", type=click.Choice(["percentile", "bca"]), default="percentile", show_default=True, help="bootstrap confidence interval method")
@click.option("--confidence", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.95, show_default=True, help="confidence level of the intervals")
@click.option("--distraction-k", type=click.IntRange(min=1), default=None, help="add the distraction table (verdicts, worst distractors) at this k (default: the cutoff of the first distraction-aware measure)")
@click.option("--curve-k", default=None, help="cutoffs of the metric@K curves in the report: 1:50, 1,5,10 or 0 for none (default: 1..max(20, largest cutoff))")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("-q", "--quiet", is_flag=True, help="no progress display")
@_eval_options
@utility_options
def compare_cmd(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    baseline: str | None,
    test: str,
    alpha: float,
    correction: str,
    strata: tuple[str, ...],
    queries: str | None,
    num_rel_level: int,
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
    missing: str,
    ties: str,
    duplicates: str,
    grade_map: str | None,
    pool: str | None,
    pool_depth: int | None,
    allow_outside_pool: bool,
    groups: str | None,
    output: str | None,
    **utility: Any,
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
    from ._compare import compare
    from ._evaluate import DEFAULT_MEASURES

    curves_k: Any = None
    if curve_k is not None:
        curves_k = 0 if curve_k.strip() == "0" else curve_k
    report = compare(
        qrels,
        list(runs),
        list(measures) or list(DEFAULT_MEASURES),
        baseline=baseline,
        test=test,
        alpha=alpha,
        correction=correction,
        permutations=permutations,
        resamples=resamples,
        seed=seed,
        ci=ci,
        confidence=confidence,
        strata=list(strata) or None,
        query_texts=queries,
        num_rel_level=num_rel_level,
        min_stratum=min_stratum,
        curves_k=curves_k,
        missing=missing,
        ties=ties,
        duplicates=duplicates,
        grade_map=grade_map,
        pool=pool,
        pool_depth=pool_depth,
        allow_outside_pool=allow_outside_pool,
        groups=groups,
        distraction_k=distraction_k,
        progress=_progress_wanted(quiet),
        **utility,
    )
    to_file = bool(output and output != "-")
    if fmt == "json":
        text = report.to_json()
    elif fmt == "csv":
        text = report.to_csv()
    elif fmt == "markdown":
        text = report.to_markdown()
    elif fmt == "latex":
        text = report.to_latex()
    elif fmt == "html":
        text = report.to_html()
    else:
        text = report.to_table(color=not to_file and _stdout_is_terminal())
    _write(text, output)


# --------------------------------------------------------------------------------------------------
# curve
# --------------------------------------------------------------------------------------------------


def _fmt(x: float | None) -> str:
    return "NA" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4f}"


def render_curves(data: dict[str, Any], fmt: str) -> str:
    """A metric@K result (see :func:`ctxeval._curve.metric_at_k`) as table, JSON or CSV."""
    if fmt == "json":
        from ._output import to_json

        return to_json(data)
    series = data["series"]
    runs = list(dict.fromkeys(s["run"] for s in series))
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", "measure", "k", "value"])
        for s in series:
            for k, v in zip(data["ks"], s["values"]):
                w.writerow([s["run"], s["measure"], k, "" if v is None else repr(float(v))])
        return buf.getvalue()
    from rich.console import Console
    from rich.table import Table

    heads = [s["measure"] if len(runs) == 1 else f"{s['run']}: {s['measure']}" for s in series]
    buf = io.StringIO()
    console = Console(file=buf, width=max(80, 8 + sum(max(len(h), 8) + 3 for h in heads)), color_system=None, highlight=False, markup=False)
    table = Table(title=f"metric@K ({runs[0]})" if len(runs) == 1 else "metric@K")
    table.add_column("k", justify="right")
    for h in heads:
        table.add_column(h, justify="right")
    for i, k in enumerate(data["ks"]):
        table.add_row(str(k), *(_fmt(s["values"][i]) for s in series))
    console.print(table)
    utility = (data.get("settings") or {}).get("utility")
    if utility:
        from ._utility import describe_lines

        for line in describe_lines(utility):
            console.print(line)
    return buf.getvalue()


@click.command("curve")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--measure", "measures", multiple=True, required=True, help="measure family with its parameters, cutoff optional (nDCG, P(rel=2), RA-nWG@5); repeatable")
@click.option("-k", "ks", default="1:20", show_default=True, help="cutoffs: 1:50, 1:50:5, 1,5,10, or K for 1..K")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@_eval_options
@utility_options
def curve_cmd(
    qrels: str,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    ks: str,
    fmt: str,
    missing: str,
    ties: str,
    duplicates: str,
    grade_map: str | None,
    pool: str | None,
    pool_depth: int | None,
    allow_outside_pool: bool,
    groups: str | None,
    output: str | None,
    **utility: Any,
) -> None:
    """Any measure at every cutoff K: the mean over queries of MEASURE@K for each K, per RUN."""
    from ._curve import metric_at_k

    data = metric_at_k(
        qrels, list(runs), list(measures), ks, missing=missing, ties=ties, duplicates=duplicates, grade_map=grade_map,
        pool=pool, pool_depth=pool_depth, allow_outside_pool=allow_outside_pool, groups=groups, **utility,
    )
    _write(render_curves(data, fmt), output)
