"""A comparison report for people: the public :class:`Report` (the comparison model of
:mod:`ctxeval._compare` with its text and HTML formats) and :func:`compare`, which returns one.

(~510 lines on purpose: the terminal, Markdown and LaTeX renderings of one comparison model,
which must show the same cells.)

Terminal table, Markdown, LaTeX and HTML; deterministic bytes; every name that comes from input is
escaped for its format."""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .._compare.compare import compare as compare_model
from .._compare.model import Block, Comparison
from .._compare.model import Report as ReportModel
from .._compare.settings import CORRECTION_NAMES, Sections, Stats, Strata
from .._context.utility import describe_lines
from .._errors import ConfigError
from .._measures import Measure
from .distraction import render_distraction
from .text import accounting_lines

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

    from .._context.settings import RagConfig
    from .._context.utility import UtilityConfig
    from .._engine import Engine
    from .._policies import Policies

__all__ = ["Report", "compare", "latex_escape", "markdown_escape", "to_latex", "to_markdown", "to_table"]

UP, DOWN = "▲", "▼"


def _fmt(x: float | None, digits: int, count: bool = False) -> str:
    if x is None or math.isnan(x):
        return "NA"
    if count and float(x).is_integer():
        return str(int(x))
    return f"{x:.{digits}f}"


def _fmt_p(p: float) -> str:
    if math.isnan(p):
        return "NA"
    if p < 1e-4:
        return f"{p:.1e}"
    return f"{p:.4f}"


def _is_count(m: Measure) -> bool:
    return m.spec.aggregate == "sum"


def _best(report: Report, block: Block) -> dict[Measure, float | None]:
    out: dict[Measure, float | None] = {}
    for m in report.measures:
        vals = [s.aggregate[m] for s in block.runs if not math.isnan(s.aggregate[m])]
        if len(block.runs) < 2 or not vals or _is_count(m):
            out[m] = None
        else:
            out[m] = max(vals) if m.spec.higher_is_better else min(vals)
    return out


def _marker(c: Comparison | None) -> str:
    if c is None:
        return ""
    b = c.better
    return UP if b is True else DOWN if b is False else ""


def _describe(report: Report) -> str:
    st = report.settings
    test = st["test"]
    if test == "randomization":
        how = f"randomization test, {st['permutations']} sign flips"
    elif test == "bootstrap":
        how = f"paired bootstrap test, {st['resamples']} resamples"
    elif test == "t":
        how = "paired t-test"
    else:
        how = "Wilcoxon signed-rank test"
    corr = CORRECTION_NAMES[st["correction"]]
    tested, untested = _family(report)
    left = f" ({_plural(untested, 'comparison')} without a p-value left out)" if untested else ""
    return f"{how}, two-sided, {corr}{' correction' if st['correction'] != 'none' else ''} over {_plural(tested, 'comparison')}{left}, alpha = {st['alpha']:g}, seed {st['seed']}"


def _aggregate_note(report: Report, escape: Any = str) -> str:
    """Which columns are not arithmetic means: counts are summed over queries (and not ranked: a total
    depends on how many queries a run was evaluated on), ``gm_*`` are geometric means."""
    sums = [escape(str(m)) for m in report.measures if m.spec.aggregate == "sum"]
    gms = [escape(str(m)) for m in report.measures if m.spec.aggregate == "gmean"]
    parts = []
    if sums:
        parts.append(f"{', '.join(sums)}: {'sum' if len(sums) == 1 else 'sums'} over queries, not ranked")
    if gms:
        parts.append(
            f"{', '.join(gms)}: geometric {'mean' if len(gms) == 1 else 'means'} (of max(x, 1e-5); tested on the log scale)"
        )
    return "; ".join(parts)


def _against(report: Report) -> str | None:
    """With all pairs compared, the run the main table's markers compare with: the baseline."""
    return report.baseline if report.settings.get("pairs") == "all" else None


def _pair_matrix(report: Report, block: Block, measure: Any, color: bool) -> Table:
    """All pairs on one measure as a matrix, as ranx's ``compare`` shows them: the cell of row r and
    column a holds mean(r) − mean(a), marked where the Holm-adjusted test finds r better or worse."""
    from rich.table import Table
    from rich.text import Text

    names = [s.name for s in block.runs]
    t = Table(title=f"{measure}: row − column")
    t.add_column("run")
    for a in names:
        t.add_column(a, justify="right")
    count = _is_count(measure)
    for r in names:
        cells: list[Text | str] = []
        for a in names:
            c, sign = block.comparison(r, measure, a), 1.0
            if c is None:
                c, sign = block.comparison(a, measure, r), -1.0
            if r == a or c is None:
                cells.append("—" if r == a else "NA")
                continue
            better = c.better if sign > 0 or c.better is None else not c.better
            mark = UP if better is True else DOWN if better is False else ""
            cell = Text(_fmt(sign * c.diff + 0.0, 4, count) + (f" {mark}" if mark else ""))  # + 0.0: no -0
            if color and mark:
                cell.stylize("green" if mark == UP else "red")
            cells.append(cell)
        t.add_row(r, *cells)
    return t


def _run_label(c: Comparison) -> str:
    return c.run if c.against is None else f"{c.run} vs {c.against}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _family(report: Report) -> tuple[int, int]:
    """The comparisons of the overall table with a p-value (the corrected family) and those without
    (no paired query where both values are defined, or too few for the test)."""
    tested = sum(1 for c in report.comparisons if not math.isnan(c.p_value))
    return tested, len(report.comparisons) - tested


def _ci_text(report: Report) -> str:
    st = report.settings
    level = f"{st['confidence'] * 100:g}%"
    method = "BCa" if st["ci_method"] == "bca" else "percentile"
    return f"{level} bootstrap CI ({method}, {st['resamples']} resamples over queries)"


def _n_queries(report: Report) -> int:
    return report.overall.n_queries


# --------------------------------------------------------------------------------------------------
# terminal
# --------------------------------------------------------------------------------------------------


def to_table(report: Report, color: bool = False, width: int | None = None) -> str:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    measures = report.measures
    block = report.overall
    best = _best(report, block)
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
            f"Comparison with the baseline {report.baseline} over {_n_queries(report)} queries",
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
            text = _fmt(mean, 4, _is_count(m))
            c = block.comparison(s.name, m, _against(report))
            mark = _marker(c)
            is_best = best[m] is not None and mean == best[m]
            main = Text(text + (" *" if is_best else "") + (f" {mark}" if mark else ""))
            if color and is_best:
                main.stylize("bold green")
            if color and mark:
                main.stylize("green" if mark == UP else "red", len(text) + (2 if is_best else 0))
            ci = s.ci[m]
            ci_line = Text(
                "\n" + (f"[{_fmt(ci[0], 4, _is_count(m))}, {_fmt(ci[1], 4, _is_count(m))}]" if ci else "[NA]"),
                style="dim" if color else "",
            )
            cells.append(main + ci_line)
        label = s.name + (" (baseline)" if s.name == report.baseline else "")
        table.add_row(label, *cells)
    console.print(table)
    if block.comparisons:
        console.print(
            f"* best value of the column; {UP}/{DOWN} significantly better/worse than {report.baseline}; [lo, hi]: {_ci_text(report)}"
        )
        console.print(f"test: {_describe(report)}")
    else:
        console.print(f"[lo, hi]: {_ci_text(report)}")
    agg = _aggregate_note(report)
    if agg:
        console.print(f"not means: {agg}")
    if block.comparisons:
        ct = Table(title="all pairs" if _against(report) else "against the baseline", show_lines=False)
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
            count = _is_count(c.measure)
            ci_text = f"[{_fmt(c.ci[0], 4, count)}, {_fmt(c.ci[1], 4, count)}]" if c.ci else "NA"
            mark = _marker(c)
            diff = Text(f"{_fmt(c.diff, 4, count)}" + (f" {mark}" if mark else ""))
            if color and mark:
                diff.stylize("green" if mark == UP else "red")
            ct.add_row(
                _run_label(c),
                str(c.measure),
                diff,
                ci_text,
                _fmt_p(c.p_value),
                _fmt_p(c.p_adjusted),
                f"{c.wins}/{c.ties}/{c.losses}",
                str(c.n_queries),
                str(c.n_dropped),
            )
        console.print(ct)
        than = "the run after 'vs'" if _against(report) else "the baseline"
        console.print(
            f"W/T/L: queries where the run is better / equal / worse than {than}; NA: queries dropped because a value is undefined"
        )
        if _against(report):
            for m in measures:
                console.print(_pair_matrix(report, block, m, color))
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
            sbest = _best(report, sb)
            for i, s in enumerate(sb.runs):
                row: list[str] = []
                for m in measures:
                    mean = s.aggregate[m]
                    mark = _marker(sb.comparison(s.name, m))
                    star = " *" if sbest[m] is not None and mean == sbest[m] else ""
                    row.append(_fmt(mean, 4, _is_count(m)) + star + (f" {mark}" if mark else ""))
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
    best = _best(report, block)
    rows = []
    for s in block.runs:
        cells = [markdown_escape(s.name) + (" (baseline)" if s.name == report.baseline else "")]
        for m in report.measures:
            mean = s.aggregate[m]
            text = _fmt(mean, digits, _is_count(m))
            if best[m] is not None and mean == best[m]:
                text = f"**{text}**"
            mark = _marker(block.comparison(s.name, m, _against(report)))
            if mark:
                text += f" {mark}"
            ci = s.ci[m]
            if with_ci and ci:
                text += f" [{_fmt(ci[0], digits, _is_count(m))}, {_fmt(ci[1], digits, _is_count(m))}]"
            cells.append(text)
        rows.append(cells)
    return _md_table(
        ["run"] + [markdown_escape(str(m)) for m in report.measures], ["l"] + ["r"] * len(report.measures), rows
    )


def _md_comparisons(block: Block, digits: int) -> list[str]:
    rows = []
    for c in block.comparisons:
        count = _is_count(c.measure)
        mark = _marker(c)
        rows.append(
            [
                markdown_escape(_run_label(c)),
                markdown_escape(str(c.measure)),
                _fmt(c.mean, digits, count),
                _fmt(c.baseline_mean, digits, count),
                _fmt(c.diff, digits, count) + (f" {mark}" if mark else ""),
                f"[{_fmt(c.ci[0], digits, count)}, {_fmt(c.ci[1], digits, count)}]" if c.ci else "NA",
                _fmt_p(c.p_value),
                _fmt_p(c.p_adjusted),
                f"{c.wins}/{c.ties}/{c.losses}",
                str(c.n_queries),
                str(c.n_dropped),
            ]
        )
    header = ["run", "measure", "mean", "baseline", "diff", "CI of diff", "p", "p adj.", "W/T/L", "n", "NA"]
    return _md_table(header, ["l", "l"] + ["r"] * 9, rows)


def to_markdown(report: Report, digits: int = 4) -> str:
    lines = [f"## Comparison with the baseline {markdown_escape(report.baseline)} ({_n_queries(report)} queries)", ""]
    lines += _md_summary(report, report.overall, digits, True)
    legend = f"Brackets: {_ci_text(report)}."
    agg = _aggregate_note(report, markdown_escape)
    if agg:
        legend += f" Not means: {agg}."
    if report.comparisons:
        legend = (
            f"Bold: best value of the column. {UP} / {DOWN}: significantly better / worse than the baseline ({_describe(report)}). "
            + legend
        )
    lines += ["", legend, ""]
    if report.comparisons:
        lines += ["### Against the baseline", ""]
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
# LaTeX
# --------------------------------------------------------------------------------------------------

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",  # an em dash in the OT1 font encoding
    "[": "{[}",  # a cell starting with [ after \\ or \midrule would be read as their optional argument
    "]": "{]}",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters in a name.

    >>> print(latex_escape("%PROC@10 a_b & {c}"))
    \%PROC@10 a\_b \& \{c\}
    """
    return "".join(_TEX_SPECIAL.get(ch, ch) for ch in str(text))


def to_latex(report: Report, digits: int = 3, ci: bool = False, label: str = "tab:ctxeval-compare") -> str:
    if not isinstance(label, str) or not re.fullmatch(r"[A-Za-z0-9:_\-.+/]+", label):
        raise ConfigError(
            f"LaTeX label must be letters, digits and : _ - . + / only (it is written as given, for \\ref), got {label!r}"
        )
    block = report.overall
    best = _best(report, block)
    st = report.settings
    corr = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini--Hochberg", "none": "no"}[st["correction"]]
    test = {
        "randomization": f"paired randomization test ({st['permutations']} sign flips)",
        "t": "paired $t$-test",
        "wilcoxon": "Wilcoxon signed-rank test",
        "bootstrap": f"paired bootstrap test ({st['resamples']} resamples)",
    }[st["test"]]
    tested, untested = _family(report)
    agg = _aggregate_note(report, latex_escape)
    caption = f"Mean over {_n_queries(report)} queries" + (f" ({agg})." if agg else ".")
    if block.comparisons:
        caption += (
            " Best value per column in bold. "
            f"$^{{\\uparrow}}$/$^{{\\downarrow}}$: significantly better/worse than the baseline "
            f"({latex_escape(report.baseline)}), two-sided {test}, {corr} correction over {_plural(tested, 'comparison')}"
            + (f" ({_plural(untested, 'comparison')} without a $p$-value left out)" if untested else "")
            + f", $\\alpha = {st['alpha']:g}$."
        )
    if ci:
        caption += f" Brackets: {st['confidence'] * 100:g}\\,\\% bootstrap confidence interval ({'BCa' if st['ci_method'] == 'bca' else 'percentile'}, {st['resamples']} resamples)."
    lines = ["% requires \\usepackage{booktabs}"]
    if st.get("utility"):  # the utility map and rules in force, as comments: printed in every report
        lines += ["% " + line for line in describe_lines(st["utility"])]
    lines += [
        "\\begin{table}[t]",
        "\\centering",
        f"\\caption{{{caption}}}",
        f"\\label{{{label}}}",
        "\\begin{tabular}{l" + "r" * len(report.measures) + "}",
        "\\toprule",
        "Run & " + " & ".join(latex_escape(str(m)) for m in report.measures) + " \\\\",
        "\\midrule",
    ]
    for s in block.runs:
        cells = [latex_escape(s.name) + (" (baseline)" if s.name == report.baseline else "")]
        for m in report.measures:
            mean = s.aggregate[m]
            text = _fmt(mean, digits, _is_count(m))
            if best[m] is not None and mean == best[m]:
                text = f"\\textbf{{{text}}}"
            mark = _marker(block.comparison(s.name, m, _against(report)))
            if mark:
                text += "$^{\\uparrow}$" if mark == UP else "$^{\\downarrow}$"
            if ci and s.ci[m]:
                lo, hi = s.ci[m]  # type: ignore[misc]
                text += f" {{\\scriptsize [{_fmt(lo, digits, _is_count(m))}, {_fmt(hi, digits, _is_count(m))}]}}"
            cells.append(text)
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
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


def compare(
    qrels: Any = None,
    runs: Any = None,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    samples: Any = None,
    baseline: str | None = None,
    stats: Stats | Mapping[str, Any] | None = None,
    strata: Strata | Any = None,
    sections: Sections | Mapping[str, Any] | None = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    engine: Engine | str | Mapping[str, Any] = "local",
) -> Report:
    model = compare_model(
        qrels, runs, measures, samples=samples, baseline=baseline, stats=stats, strata=strata, sections=sections,
        policies=policies, rag=rag, utility=utility, engine=engine,
    )  # fmt: skip
    return Report.of(model)


compare.__doc__ = compare_model.__doc__
