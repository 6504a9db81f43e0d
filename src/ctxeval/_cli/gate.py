"""``ctxeval snapshot``, ``ctxeval gate`` and ``ctxeval power``: a regression gate for CI."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from .._errors import ConfigError
from .options import (
    File,
    at_level,
    emit,
    format_option,
    inputs_from,
    measures_option,
    one_run_from,
    output_option,
    rel_option,
    run_arguments,
    samples_option,
    settings_from,
    settings_options,
    shown,
    utility_options,
)

FORMATS = ("table", "markdown", "json", "junit", "github")


def _measures(values: tuple[str, ...]) -> list[str] | None:
    return list(values) or None


@click.command("snapshot")
@run_arguments(one=True, metavar="[[NAME=]RUN]")
@measures_option("measure to keep, repeatable (default: evaluate's)")
@rel_option
@click.option("--human", type=File("qrels"),
              help="people's labels on a subset of the queries, when QRELS are a judge's (the gate's intervals then include the judge's error)")  # fmt: skip
@settings_options
@utility_options
@output_option(help="the baseline file to write (default: stdout)")
def snapshot_command(
    measures: tuple[str, ...],
    rel: int | None,
    human: str | None,
    output: str | None,
    **kw: Any,
) -> None:
    """Write a baseline: RUN's per-query values, the measures and settings, and a hash of QRELS
    (NAME=RUN names the run; by default its tag, or its file's name where a candidate shares the tag).

    Made once (on main, or on the release you compare with); `ctxeval gate BASELINE QRELS RUN` then
    checks every change against it and refuses a baseline made under other labels or settings.
    """
    from .._gate.gate import snapshot

    base = snapshot(
        **inputs_from(kw, one=True),
        measures=at_level(_measures(measures), rel),
        human=human,
        **settings_from(kw),
    )
    emit(base.to_json(), output)
    if output and output != "-":
        click.echo(
            f"ctxeval: baseline of {base.run}{f' ({base.file})' if base.file and base.file != base.run else ''}: {len(base.queries)} queries, {', '.join(base.measures)} -> {output}",
            err=True,
        )


@click.command("gate")
@click.argument("baseline", type=File("baseline"))
@run_arguments(one=True, metavar="[[NAME=]RUN]")
@click.option("--max-drop", "max_drop", multiple=True,
              help="tolerated drop of a measure, MEASURE=DROP (e.g. nDCG@10=0.02), repeatable; only the measures named "
              "are gated (default: every measure of the baseline, none tolerated)")  # fmt: skip
@shown("--alpha", type=click.FloatRange(0.0, 0.5, min_open=True, max_open=True), default=0.05,
       help="level of the one-sided tests, Holm-adjusted across the gated measures")  # fmt: skip
@click.option("--human", type=File("qrels"),
              help="people's labels on a subset of the queries (as given to snapshot): prediction-powered intervals")  # fmt: skip
@format_option(*FORMATS, help="stdout: the table, Markdown, JSON, JUnit XML, or GitHub annotations")
@click.option("--markdown", "markdown_file", type=File("Markdown", writable=True),
              help="also write the Markdown summary here (e.g. \"$GITHUB_STEP_SUMMARY\"; appended to, as GitHub expects)")  # fmt: skip
@click.option("--junit", "junit_file", type=File("JUnit XML", writable=True), help="also write JUnit XML here")
@click.option(
    "--annotations",
    is_flag=True,
    help="also print GitHub annotations after the report: ::error for a significant drop or an untested measure, "
    "::warning for an inconclusive one, ::notice for one that holds",
)
@settings_options
@utility_options
@output_option()
def gate_command(
    baseline: str,
    max_drop: tuple[str, ...],
    alpha: float,
    human: str | None,
    fmt: str,
    markdown_file: str | None,
    junit_file: str | None,
    annotations: bool,
    output: str | None,
    **kw: Any,
) -> None:
    """Gate RUN against a BASELINE file (`ctxeval snapshot`): exit 0 when every gated measure was
    tested and none dropped significantly beyond its tolerated drop, 1 when one did, 2 when a gated
    measure could not be tested or on an error (a baseline made under other labels or settings, or
    one holding values the gate cannot use, is one, named).

    Each measure gets a one-sided paired t-test, corrected for skewness (Hall 1992), of H0 "the change
    is no worse than the tolerated drop" over the queries both runs were evaluated on, Holm across the
    measures; the report gives the change, its interval, the margin, the p-value, the verdict (holds;
    inconclusive: beyond the tolerance but not significantly; drop; untested) and whether the queries
    are enough to tell. NAME=RUN names the candidate in the report (by default its tag, or its file's
    name when the tag is the baseline's too).
    """
    from .._render.gate import gate

    report = gate(
        baseline,
        **inputs_from(kw, one=True),
        max_drop=",".join(max_drop) or None,
        alpha=alpha,
        human=human,
        **settings_from(kw),
    )
    text = {
        "markdown": report.to_markdown,
        "json": report.to_json,
        "junit": report.to_junit,
        "github": report.to_annotations,
    }.get(fmt, report.to_table)()
    if annotations and fmt != "github":
        text += report.to_annotations()
    if markdown_file:
        with open(markdown_file, "a", encoding="utf-8") as fh:  # GitHub's step summary is appended to
            fh.write(report.to_markdown())
    if junit_file:
        emit(report.to_junit(), junit_file)
    emit(text, output)
    sys.stdout.flush()
    if report.exit_code:
        click.get_current_context().exit(report.exit_code)


@click.command("power")
@click.argument("baseline", type=File("baseline"))
@click.argument("qrels", required=False, type=File("qrels"))
@click.argument("run", required=False, type=File("run"))
@samples_option
@shown("--drop", type=click.FloatRange(0.0, min_open=True), default=0.02,
       help="the true drop of the mean the gate must catch")  # fmt: skip
@click.option("--max-drop", "max_drop", multiple=True, help="tolerated drop, MEASURE=DROP, as for gate")
@shown("--alpha", type=click.FloatRange(0.0, 0.5, min_open=True, max_open=True), default=0.05)
@shown("--power", "target", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.8)
@shown("--correlation", type=click.FloatRange(-1.0, 1.0, max_open=True), default=0.7,
       help="without a candidate RUN: the assumed per-query correlation of baseline and candidate")  # fmt: skip
@format_option("table", "json")
@settings_options
@utility_options
@output_option()
def power_command(
    baseline: str, qrels: str | None, run: str | None, samples: bool, drop: float, max_drop: tuple[str, ...], alpha: float,
    target: float, correlation: float, fmt: str, output: str | None, **kw: Any,
) -> None:  # fmt: skip
    """Plan a gate: how many queries it needs to catch a drop of --drop with probability --power at
    --alpha (divided by the number of measures, Holm's first step), and the smallest drop BASELINE's
    queries catch. The spread of the per-query changes is observed against a candidate (QRELS RUN, or
    one sample set with --samples), else assumed from the baseline's own (--correlation). A bootstrap check of the formula is printed
    beside it.
    """
    from .._gate.gate import power
    from .._render.gate import power_lines

    inputs: dict[str, Any] = {}
    if samples and qrels is None:
        raise ConfigError("--samples needs one sample set: the candidate whose changes give the spread")
    if not samples and (qrels is None) != (run is None):
        raise ConfigError("give both QRELS and RUN (a candidate whose changes give the spread), or neither")
    if qrels is not None:
        inputs = one_run_from(qrels, run, samples)
    plans = power(
        baseline, **inputs, drop=drop, max_drop=",".join(max_drop) or None, alpha=alpha,
        plan={"power": target, "correlation": correlation}, **settings_from(kw),
    )  # fmt: skip
    if fmt == "json":
        emit(json.dumps([p.to_dict() for p in plans], indent=2) + "\n", output)
        return
    emit(power_lines(plans), output)
