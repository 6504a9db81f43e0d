"""A comparison report for people: the public :class:`Report` (the comparison model of
:mod:`ctxeval._compare` with its text and HTML formats) and :func:`compare`, which returns one.

Terminal table and Markdown here, LaTeX in :mod:`.latex`, HTML in :mod:`.html`, what they share in
:mod:`.report_parts`; deterministic bytes; every name that comes from input is escaped for its
format."""

from __future__ import annotations

import io

from .._compare.compare import compare as compare_model
from .._compare.model import Block
from .._compare.model import Report as ReportModel
from .._context.utility import describe_lines
from . import reporting
from .distraction import render_distraction
from .latex import latex_escape, to_latex
from .report_parts import (
    DOWN,
    UP,
    against,
    aggregate_note,
    baselines_text,
    best_of,
    ci_text,
    describe,
    fmt,
    fmt_p,
    is_count,
    marker,
    n_queries,
    pair_matrix,
    run_label,
    summary_rows,
)
from .text import accounting_lines

__all__ = ["Report", "compare", "latex_escape", "markdown_escape", "to_latex", "to_markdown", "to_table"]

# --------------------------------------------------------------------------------------------------
# terminal
# --------------------------------------------------------------------------------------------------


def to_table(report: Report, color: bool = False, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    measures = report.measures
    block = report.overall
    best = best_of(report, block)
    col_w = [max(len(str(m)), 18) + 3 for m in measures]
    name_w = max([len(n) for n in report.run_names] + [10]) + 12
    w = width or max(100, name_w + sum(col_w) + 4)
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=w,
        color_system="standard" if color else None,
        force_terminal=color,
        highlight=False,
        emoji=False,
        markup=False,
    )
    console.print(
        Text(
            f"Comparison with {baselines_text(report)} over {n_queries(report)} queries",
            style="bold" if color else "",
        )
    )
    table = Table(show_lines=False)
    table.add_column("run", style="bold" if color else None)
    for m in measures:
        table.add_column(str(m), justify="right")
    for s in block.runs:
        cells = []
        for m in measures:
            mean = s.aggregate[m]
            text = fmt(mean, 4, is_count(m))
            c = block.comparison(s.name, m, against(report))
            mark = marker(c)
            is_best = best[m] is not None and mean == best[m]
            main = Text(text + (" *" if is_best else "") + (f" {mark}" if mark else ""))
            if color and is_best:
                main.stylize("bold green")
            if color and mark:
                main.stylize("green" if mark == UP else "red", len(text) + (2 if is_best else 0))
            ci = s.ci[m]
            ci_line = Text(
                "\n" + (f"[{fmt(ci[0], 4, is_count(m))}, {fmt(ci[1], 4, is_count(m))}]" if ci else "[NA]"),
                style="dim" if color else "",
            )
            cells.append(main + ci_line)
        label = s.name + (" (baseline)" if s.name in report.baselines else "")
        table.add_row(label, *cells)
    console.print(table)
    if block.comparisons:
        console.print(
            f"* best value of the column; {UP}/{DOWN} significantly better/worse than {report.baseline}; [lo, hi]: {ci_text(report)}"
        )
        console.print(f"test: {describe(report)}")
    else:
        console.print(f"[lo, hi]: {ci_text(report)}")
    agg = aggregate_note(report)
    if agg:
        console.print(f"not means: {agg}")
    if block.comparisons:
        title = "all pairs" if report.settings.get("pairs") == "all" else "against the baseline"
        if len(report.baselines) > 1:
            title = "against the baselines (one family: " + ", ".join(report.baselines) + ")"
        ct = Table(title=title, show_lines=False)
        for name, just in (
            ("run", "left"),
            ("measure", "left"),
            ("diff", "right"),
            ("CI of diff", "right"),
            ("p", "right"),
            ("p adj.", "right"),
            ("W/T/L", "right"),
            ("n", "right"),
            ("NA", "right"),
        ):
            ct.add_column(name, justify=just)  # type: ignore[arg-type]
        for c in block.comparisons:
            count = is_count(c.measure)
            civ = f"[{fmt(c.ci[0], 4, count)}, {fmt(c.ci[1], 4, count)}]" if c.ci else "NA"
            mark = marker(c)
            diff = Text(f"{fmt(c.diff, 4, count)}" + (f" {mark}" if mark else ""))
            if color and mark:
                diff.stylize("green" if mark == UP else "red")
            ct.add_row(
                run_label(c),
                str(c.measure),
                diff,
                civ,
                fmt_p(c.p_value),
                fmt_p(c.p_adjusted),
                f"{c.wins}/{c.ties}/{c.losses}",
                str(c.n_queries),
                str(c.n_dropped),
            )
        console.print(ct)
        than = "the run after 'vs'" if against(report) else "the baseline"
        console.print(
            f"W/T/L: queries where the run is better / equal / worse than {than}; NA: queries dropped because a value is undefined"
        )
        if report.settings.get("pairs") == "all":
            for m in measures:
                console.print(pair_matrix(report, block, m, color))
            console.print(
                f"row − column: the difference of the means; {UP}/{DOWN}: the row significantly better/worse (Holm over all pairs)"
            )
    if report.strata:
        st = Table(title="by stratum", show_lines=False)
        st.add_column("stratum")
        st.add_column("n", justify="right")
        st.add_column("run")
        for m in measures:
            st.add_column(str(m), justify="right")
        for name, stratum in report.strata.items():
            sb = stratum.block
            sbest = best_of(report, sb)
            for i, s in enumerate(sb.runs):
                row: list[str] = []
                for m in measures:
                    mean = s.aggregate[m]
                    mark = marker(sb.comparison(s.name, m, against(report)))
                    star = " *" if sbest[m] is not None and mean == sbest[m] else ""
                    row.append(fmt(mean, 4, is_count(m)) + star + (f" {mark}" if mark else ""))
                label = (name + (" (small)" if stratum.small else "")) if i == 0 else ""
                st.add_row(label, str(sb.n_queries) if i == 0 else "", s.name, *row)
            st.add_section()
        console.print(st)
        small = [n for n, s in report.strata.items() if s.small]
        min_n = report.settings.get("min_stratum")
        if small:
            console.print(
                f"(small): fewer than {min_n} queries; read its figures and tests with care ({len(small)} strata)"
            )
        if block.comparisons:
            console.print(
                "per stratum: the same test, corrected within the stratum over its comparisons with a p-value"
            )
    for line in _accounting(report):
        console.print(line)
    out = buf.getvalue()
    if report.distraction is not None:
        out += render_distraction(report.distraction, "table")
    return out


def _accounting(report: Report) -> list[str]:
    out = accounting_lines(report.result.runs, report.measures)
    out.extend(report.notes)
    pool = report.settings.get("pool")
    if pool:
        depth = f", depth {pool['depth']}" if pool.get("depth") else ", full depth"
        out.append(f"pool: {pool['name']}{depth}; grade map: {report.settings.get('grade_map') or 'none'}")
    return out


# --------------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------------

_MD_SPECIAL = {
    "\\": "\\\\", "|": "\\|", "*": "\\*", "_": "\\_", "`": "\\`", "[": "\\[", "]": "\\]", "<": "&lt;", ">": "&gt;", "&": "&amp;", "#": "\\#",
    "$": "\\$", "~": "\\~",  # GitHub: $...$ is math, ~x~ strikethrough
}  # fmt: skip


def markdown_escape(text: str) -> str:
    """Escape a name for a Markdown table cell (no formatting, no HTML, no column breaks).

    >>> markdown_escape("a|b_<c>")
    'a\\\\|b\\\\_&lt;c&gt;'
    """
    return "".join(_MD_SPECIAL.get(ch, ch) for ch in str(text)).replace("\n", " ")


def _md_table(header: list[str], align: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if a == "r" else ":---" for a in align) + "|"]
    out.extend("| " + " | ".join(r) + " |" for r in rows)
    return out


def _md_summary(report: Report, block: Block, digits: int, with_ci: bool) -> list[str]:
    rows = summary_rows(
        report,
        block,
        digits,
        markdown_escape,
        lambda t: f"**{t}**",
        {UP: f" {UP}", DOWN: f" {DOWN}"},
        (lambda lo, hi: f" [{lo}, {hi}]") if with_ci else None,
    )
    return _md_table(
        ["run"] + [markdown_escape(str(m)) for m in report.measures], ["l"] + ["r"] * len(report.measures), rows
    )


def _md_comparisons(block: Block, digits: int) -> list[str]:
    rows = []
    for c in block.comparisons:
        count = is_count(c.measure)
        mark = marker(c)
        rows.append(
            [
                markdown_escape(run_label(c)),
                markdown_escape(str(c.measure)),
                fmt(c.mean, digits, count),
                fmt(c.baseline_mean, digits, count),
                fmt(c.diff, digits, count) + (f" {mark}" if mark else ""),
                f"[{fmt(c.ci[0], digits, count)}, {fmt(c.ci[1], digits, count)}]" if c.ci else "NA",
                fmt_p(c.p_value),
                fmt_p(c.p_adjusted),
                f"{c.wins}/{c.ties}/{c.losses}",
                str(c.n_queries),
                str(c.n_dropped),
            ]
        )
    header = ["run", "measure", "mean", "baseline", "diff", "CI of diff", "p", "p adj.", "W/T/L", "n", "NA"]
    return _md_table(header, ["l", "l"] + ["r"] * 9, rows)


def to_markdown(report: Report, digits: int = 4) -> str:
    lines = [f"## Comparison with {baselines_text(report, markdown_escape)} ({n_queries(report)} queries)", ""]
    lines += _md_summary(report, report.overall, digits, True)
    legend = f"Brackets: {ci_text(report)}."
    agg = aggregate_note(report, markdown_escape)
    if agg:
        legend += f" Not means: {agg}."
    if report.comparisons:
        legend = (
            f"Bold: best value of the column. {UP} / {DOWN}: significantly better / worse than the baseline ({describe(report)}). "
            + legend
        )
    lines += ["", legend, ""]
    if report.comparisons:
        lines += ["### Against the baselines" if len(report.baselines) > 1 else "### Against the baseline", ""]
        lines += _md_comparisons(report.overall, digits)
        lines += [
            "",
            "W/T/L: queries where the run is better / equal / worse; NA: queries dropped because a value is undefined.",
            "",
        ]
    if report.strata:
        lines += ["### By stratum", ""]
        for name, st in report.strata.items():
            flag = f" — small (< {report.settings.get('min_stratum')} queries)" if st.small else ""
            lines += [f"#### {markdown_escape(name)} ({st.block.n_queries} queries, {st.source}){flag}", ""]
            lines += _md_summary(report, st.block, digits, False)
            lines.append("")
    notes = _accounting(report)
    if report.settings.get("utility"):  # the utility map and rules in force: printed in every report
        notes = notes + describe_lines(report.settings["utility"])
    if notes:
        lines += ["### Notes", ""] + [f"- {markdown_escape(n)}" for n in notes] + [""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------
# the public report
# --------------------------------------------------------------------------------------------------


class Report(ReportModel):
    """The outcome of :func:`compare`: the comparison (``to_dict()`` is the JSON of ``ctxeval compare
    --format json``; ``to_csv``, ``to_pandas``) and its text formats."""

    @classmethod
    def of(cls, model: ReportModel) -> Report:
        out = cls.__new__(cls)
        out.__dict__.update(model.__dict__)
        return out

    def to_markdown(self, digits: int = 4) -> str:
        return to_markdown(self, digits)

    def to_latex(self, digits: int = 3, ci: bool = False, label: str = "tab:ctxeval-compare") -> str:
        return to_latex(self, digits, ci, label)

    def to_table(self, color: bool = False, width: int | None = None) -> str:
        """The rich terminal table (plain text unless ``color``)."""
        return to_table(self, color, width)

    def to_html(self) -> str:
        """One self-contained HTML file (the README's "HTML report" section)."""
        from .html import render_html

        return render_html(self.to_dict())


compare = reporting(compare_model, Report.of, "Report", __name__)
