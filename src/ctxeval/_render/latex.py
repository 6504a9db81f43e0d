"""A comparison report as a LaTeX table (booktabs), its names escaped."""

from __future__ import annotations

import re

from .._compare.model import Report
from .._context.utility import describe_lines
from .._errors import ConfigError
from .report_parts import DOWN, UP, aggregate_note, family, n_queries, plural, summary_rows

__all__ = ["latex_escape", "to_latex"]

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
    st = report.settings
    corr = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini--Hochberg", "none": "no"}[st["correction"]]
    test = {
        "randomization": f"paired randomization test ({st['permutations']} sign flips)",
        "t": "paired $t$-test",
        "wilcoxon": "Wilcoxon signed-rank test",
        "bootstrap": f"paired bootstrap test ({st['resamples']} resamples)",
    }[st["test"]]
    tested, untested = family(report)
    agg = aggregate_note(report, latex_escape)
    caption = f"Mean over {n_queries(report)} queries" + (f" ({agg})." if agg else ".")
    if block.comparisons:
        caption += (
            " Best value per column in bold. "
            f"$^{{\\uparrow}}$/$^{{\\downarrow}}$: significantly better/worse than the baseline "
            f"({latex_escape(report.baseline)}), two-sided {test}, {corr} correction over {plural(tested, 'comparison')}"
            + (f" ({plural(untested, 'comparison')} without a $p$-value left out)" if untested else "")
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
    rows = summary_rows(
        report,
        block,
        digits,
        latex_escape,
        lambda t: f"\\textbf{{{t}}}",
        {UP: "$^{\\uparrow}$", DOWN: "$^{\\downarrow}$"},
        (lambda lo, hi: f" {{\\scriptsize [{lo}, {hi}]}}") if ci else None,
    )
    lines += [" & ".join(cells) + " \\\\" for cells in rows]
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}", ""]
    return "\n".join(lines)
