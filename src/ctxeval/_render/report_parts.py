"""What the text renderings of a comparison share: number formats, markers, the test described,
the family of a correction, which run the markers are against."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._compare.model import Block, Comparison
from .._compare.settings import CORRECTION_NAMES
from .._measures import Measure

if TYPE_CHECKING:
    from rich.table import Table

    from .._compare.model import Report

__all__ = [
    "DOWN",
    "UP",
    "against",
    "aggregate_note",
    "baselines_text",
    "best_of",
    "ci_text",
    "describe",
    "family",
    "fmt",
    "fmt_p",
    "is_count",
    "marker",
    "n_queries",
    "pair_matrix",
    "plural",
    "run_label",
    "summary_rows",
]

UP, DOWN = "▲", "▼"


def fmt(x: float | None, digits: int, count: bool = False) -> str:
    if x is None or math.isnan(x):
        return "NA"
    if count and float(x).is_integer():
        return str(int(x))
    return f"{x:.{digits}f}"


def fmt_p(p: float) -> str:
    if math.isnan(p):
        return "NA"
    if p < 1e-4:
        return f"{p:.1e}"
    return f"{p:.4f}"


def is_count(m: Measure) -> bool:
    return m.spec.aggregate == "sum"


def best_of(report: Report, block: Block) -> dict[Measure, float | None]:
    out: dict[Measure, float | None] = {}
    for m in report.measures:
        vals = [s.aggregate[m] for s in block.runs if not math.isnan(s.aggregate[m])]
        if len(block.runs) < 2 or not vals or is_count(m):
            out[m] = None
        else:
            out[m] = max(vals) if m.spec.higher_is_better else min(vals)
    return out


def marker(c: Comparison | None) -> str:
    if c is None:
        return ""
    b = c.better
    return UP if b is True else DOWN if b is False else ""


def describe(report: Report) -> str:
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
    tested, untested = family(report)
    left = f" ({plural(untested, 'comparison')} without a p-value left out)" if untested else ""
    return f"{how}, two-sided, {corr}{' correction' if st['correction'] != 'none' else ''} over {plural(tested, 'comparison')}{left}, alpha = {st['alpha']:g}, seed {st['seed']}"


def aggregate_note(report: Report, escape: Any = str) -> str:
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


def against(report: Report) -> str | None:
    """With all pairs compared or several baselines, the run the main table's markers compare with:
    the (first) baseline."""
    return report.baseline if report.named else None


def baselines_text(report: Report, escape: Any = str) -> str:
    """ "the baseline A", or "the baselines A, B" (the main table's markers against A)."""
    names = report.baselines
    if len(names) == 1:
        return f"the baseline {escape(names[0])}"
    return "the baselines " + ", ".join(escape(n) for n in names)


def pair_matrix(report: Report, block: Block, measure: Any, color: bool) -> Table:
    """All pairs on one measure as a matrix, as ranx's ``compare`` shows them: the cell of row r and
    column a holds mean(r) − mean(a), marked where the Holm-adjusted test finds r better or worse."""
    from rich.table import Table
    from rich.text import Text

    names = [s.name for s in block.runs]
    t = Table(title=f"{measure}: row − column")
    t.add_column("run")
    for a in names:
        t.add_column(a, justify="right")
    count = is_count(measure)
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
            cell = Text(fmt(sign * c.diff + 0.0, 4, count) + (f" {mark}" if mark else ""))  # + 0.0: no -0
            if color and mark:
                cell.stylize("green" if mark == UP else "red")
            cells.append(cell)
        t.add_row(r, *cells)
    return t


def run_label(c: Comparison) -> str:
    return c.run if c.against is None else f"{c.run} vs {c.against}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def family(report: Report) -> tuple[int, int]:
    """The comparisons of the overall table with a p-value (the corrected family) and those without
    (no paired query where both values are defined, or too few for the test)."""
    tested = sum(1 for c in report.comparisons if not math.isnan(c.p_value))
    return tested, len(report.comparisons) - tested


def ci_text(report: Report) -> str:
    st = report.settings
    level = f"{st['confidence'] * 100:g}%"
    method = "BCa" if st["ci_method"] == "bca" else "percentile"
    return f"{level} bootstrap CI ({method}, {st['resamples']} resamples over queries)"


def n_queries(report: Report) -> int:
    return report.overall.n_queries


def summary_rows(
    report: Report,
    block: Block,
    digits: int,
    escape: Callable[[str], str],
    bold: Callable[[str], str],
    marks: dict[str, str],
    interval: Callable[[str, str], str] | None,
) -> list[list[str]]:
    """The summary table's cells of a text format: per run its name (``(baseline)`` after a baseline),
    then per measure the mean (``bold`` where best), its marker against the (first) baseline as
    ``marks`` writes it, and with ``interval`` the CI."""
    best = best_of(report, block)
    rows = []
    for s in block.runs:
        cells = [escape(s.name) + (" (baseline)" if s.name in report.baselines else "")]
        for m in report.measures:
            mean = s.aggregate[m]
            text = fmt(mean, digits, is_count(m))
            if best[m] is not None and mean == best[m]:
                text = bold(text)
            text += marks.get(marker(block.comparison(s.name, m, against(report))), "")
            ci = s.ci[m]
            if interval is not None and ci:
                text += interval(fmt(ci[0], digits, is_count(m)), fmt(ci[1], digits, is_count(m)))
            cells.append(text)
        rows.append(cells)
    return rows
