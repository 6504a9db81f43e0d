"""One self-contained HTML page for a comparison report (the ``Report.to_dict()`` dict).

:func:`render_html` turns the report dict (``ctxeval compare --format json``) into ONE HTML file that
opens offline: no scripts, no network requests (a strict Content-Security-Policy forbids them), no
external fonts; the plots are SVG made with matplotlib and embedded inline. It shows

* the summary table: the mean of every measure per run with its confidence interval (95 % unless the
  settings give another ``confidence``), the best value per measure in bold (highest, or lowest for
  measures whose registry entry says lower is better, such as ``Harm@k``; counts, summed over queries,
  are not ranked), and ▲/▼ where a run differs significantly (adjusted p < alpha) from the baseline;
* the differences to the baseline: diff, its CI, p, adjusted p, wins/ties/losses per run and measure;
* metric@K curves (the mean of a measure at every cut-off K) and interpolated precision-recall curves
  (precision at recall level r is max{P(k) : R(k) >= r}, the 11-point curve of Manning, Raghavan and
  Schütze 2008, *Introduction to Information Retrieval*, §8.4);
* per query, the difference ``run - baseline`` of every measure, sorted, over the queries where both
  values are defined (wins and losses are counted in the measure's direction; a tie is a difference
  within the settings' ``tie_tolerance``, 1e-12 by default, as compare counts it);
* PROC@K against %PROC@K per query (Dallaire 2025, arXiv:2511.09545): a query with PROC < t_PROC is a
  *retrieval* failure (the best evidence never reached the pool), one with PROC >= t_PROC and
  %PROC < t_%PROC a *selection* failure (the reranker or the cut lost it), else *healthy*; undefined
  where PROC is NA (the rule of :func:`ctxeval.diagnose`, default thresholds 0.8);
* the distraction table with the safety verdict of every run, its worst distractors and the rules;
* the same summary per stratum, flagged when a stratum has few queries;
* the settings that produced every number and the query accounting of every run.

Safety: every string from the report (run names, paths, query and doc ids, measure names, settings) is
escaped with :func:`html.escape` and only ever placed in element text, never in an attribute, a style
or a script. Plots carry no text from the input at all (legends and captions are HTML), so nothing from
the input reaches the SVG. Ids, classes and colours come from fixed tables indexed by position.

Determinism: the same dict gives the same bytes. matplotlib runs from its default style (the user's
matplotlibrc is ignored inside the call), with a fixed ``svg.hashsalt``, no date in the metadata and
the SVG ids renamed per figure (``f3-...``) so that several figures can share one page.

>>> page = render_html({"baseline": "bm25", "measures": ["AP"],
...                     "runs": [{"name": "bm25", "aggregate": {"AP": 0.25}}]})
>>> page.startswith("<!DOCTYPE html>"), "<script" in page
(True, False)
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._errors import CtxevalError, InputError, MeasureError

__all__ = ["CSP", "PALETTE", "ReportDependencyError", "render_html"]

#: The page's Content-Security-Policy: nothing may load or run; inline styles and data: images only.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

#: Run colours (matplotlib's tab10), by run position; runs 11-20 and 21-30 get dashed and dotted lines.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
_DASHES = ("-", "--", ":")
_BETTER, _WORSE, _NEUTRAL = "#2166ac", "#b2182b", "#6f6f6f"

_INSTALL = "pip install 'ctxeval[report]'"

#: matplotlib settings applied on top of its default style while a report is drawn.
_RC = {
    "svg.hashsalt": "ctxeval",
    "svg.fonttype": "none",
    "svg.image_inline": True,
    "text.parse_math": False,
    "font.family": ["DejaVu Sans"],
    "font.size": 8.5,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 144,
}

_COMPARISON_NUMBERS = (
    "mean",
    "baseline_mean",
    "diff",
    "p_value",
    "p_adjusted",
    "wins",
    "ties",
    "losses",
    "n_queries",
    "n_dropped",
)

_VERDICT_CLASS = {"SAFE": "v-safe", "RISKY": "v-risky", "DANGEROUS": "v-danger"}


class ReportDependencyError(CtxevalError, ImportError):
    """A package needed for the HTML report is not installed."""


# --------------------------------------------------------------------------------------------------
# reading the report dict (every error names the place in the dict)
# --------------------------------------------------------------------------------------------------


def _fail(where: str, rule: str, value: Any) -> InputError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return InputError(f"report {where}: {rule}, got {shown}")


def _num(value: Any, where: str) -> float | None:
    """A number or None (null, NaN); anything else is an error."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _fail(where, "expected a number or null", value)
    x = float(value)
    return None if math.isnan(x) else x


def _str(value: Any, where: str, ids: bool = False) -> str:
    if isinstance(value, str):
        return value
    if ids and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _fail(where, "expected a string", value)


def _map(value: Any, where: str, optional: bool = True) -> Mapping[str, Any]:
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(where, "expected an object", value)
    return value


def _list(value: Any, where: str, optional: bool = True) -> Sequence[Any]:
    if value is None and optional:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise _fail(where, "expected a list", value)
    return value


def _ci(value: Any, where: str) -> tuple[float | None, float | None] | None:
    if value is None:
        return None
    pair = _list(value, where)
    if len(pair) != 2:
        raise _fail(where, "expected [low, high]", value)
    return _num(pair[0], f"{where}[0]"), _num(pair[1], f"{where}[1]")


def _aggregate(measure: str) -> str | None:
    """How the measure is summarised over queries (``mean``, ``sum``, ``gmean``); None when unknown."""
    from ._measures import parse_measure

    try:
        return str(parse_measure(measure).spec.aggregate)
    except MeasureError:
        return None


def _direction(measure: str) -> bool | None:
    """True if higher is better, False if lower is, None for a name the measure registry does not know."""
    from ._measures import parse_measure

    try:
        return bool(parse_measure(measure).spec.higher_is_better)
    except MeasureError:
        return None


# --------------------------------------------------------------------------------------------------
# small HTML helpers
# --------------------------------------------------------------------------------------------------


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _f(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "NA"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    out = f"{x:.{digits}f}"
    return out[1:] if out.startswith("-") and float(out) == 0 else out  # no "-0.0000"


def _p(x: float | None) -> str:
    if x is None:
        return "NA"
    return f"{x:.4f}" if x >= 0.001 else f"{x:.1e}"


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


def _value_cell(value: Any) -> str:
    """A settings value: plain text for scalars, indented JSON for the rest; always escaped."""
    if value is None:
        return '<span class="muted">none</span>'
    if isinstance(value, (str, int, float, bool)):
        return _e(_json_text(value) if isinstance(value, bool) else value)
    return f"<pre>{_e(_json_text(value))}</pre>"


def _swatch(index: int) -> str:
    return f'<span class="sw c{index % len(PALETTE)} d{(index // len(PALETTE)) % len(_DASHES)}"></span>'


def _row_head(index: int, name: str, tail: str = "") -> str:
    """The row header of a run: colour swatch and escaped name; long names may wrap."""
    cls = "run long" if len(name) > 28 else "run"
    return f'<th scope="row" class="{cls}">{_swatch(index)}{_e(name)}{tail}</th>'


class _Ids:
    """Sequential ids for captions and figures (never derived from input)."""

    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n


# --------------------------------------------------------------------------------------------------
# plots
# --------------------------------------------------------------------------------------------------

_SVG_START = re.compile(r"<svg\b")
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TAG = re.compile(r"<[^<>]+>")
_ROOT_SIZE = re.compile(r'\s(?:width|height)="[^"]*"')


class _Plotter:
    """Draws figures with matplotlib (imported on first use) and returns them as inline SVG."""

    def __init__(self) -> None:
        try:
            import matplotlib
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError as exc:
            raise ReportDependencyError(
                f"the HTML report draws its plots with matplotlib, which is not installed: {_INSTALL}"
            ) from exc
        self.mpl = matplotlib
        self._figure = Figure
        self._canvas = FigureCanvasAgg
        self.version = matplotlib.__version__

    def figure(self, width: float, height: float) -> Any:
        fig = self._figure(figsize=(width, height), layout="constrained")
        self._canvas(fig)  # the Agg canvas: no GUI backend, no pyplot state
        return fig

    def svg(self, fig: Any, fid: int) -> str:
        import io

        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        text = buf.getvalue()
        start = _SVG_START.search(text)
        if start is None:  # pragma: no cover - matplotlib always writes an <svg> root
            raise CtxevalError("matplotlib wrote no <svg> element")
        text = _METADATA.sub("", _COMMENT.sub("", text[start.start() :])).strip()
        prefix = f"f{fid}-"

        def fix(m: re.Match[str]) -> str:
            tag = m.group(0)
            tag = re.sub(r'(\s)id="', rf'\1id="{prefix}', tag)
            return tag.replace('href="#', f'href="#{prefix}').replace("url(#", f"url(#{prefix}")

        text = _TAG.sub(fix, text)
        root_end = text.index(">")
        root = _ROOT_SIZE.sub("", text[:root_end])
        return f'{root} class="plot" role="img" aria-labelledby="cap{fid}"{text[root_end:]}'


def _style(index: int) -> dict[str, Any]:
    return {"color": PALETTE[index % len(PALETTE)], "linestyle": _DASHES[(index // len(PALETTE)) % len(_DASHES)]}


def _figure_html(svg: str, fid: int, caption: str) -> str:
    return f'<figure>{svg}<figcaption id="cap{fid}">{caption}</figcaption></figure>'


# --------------------------------------------------------------------------------------------------
# the report model (validated once, then rendered)
# --------------------------------------------------------------------------------------------------


class _Report:
    def __init__(self, report: Any) -> None:
        rep = _map(report, "(top level)", optional=False)
        self.raw = rep
        self.baseline = _str(rep.get("baseline"), "baseline")
        self.measures = [
            _str(m, f"measures[{i}]") for i, m in enumerate(_list(rep.get("measures"), "measures", optional=False))
        ]
        runs = _list(rep.get("runs"), "runs", optional=False)
        if not runs:
            raise _fail("runs", "expected at least one run", runs)
        self.runs = [_map(r, f"runs[{i}]", optional=False) for i, r in enumerate(runs)]
        self.names = [_str(r.get("name"), f"runs[{i}].name") for i, r in enumerate(self.runs)]
        if len(set(self.names)) != len(self.names):
            dup = next(n for n in self.names if self.names.count(n) > 1)
            raise _fail("runs", "run names must be unique", dup)
        if self.baseline not in self.names:
            raise _fail("baseline", f"must be one of the runs ({', '.join(map(repr, self.names))})", self.baseline)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.direction = {m: _direction(m) for m in self.measures}
        self.aggregate = {m: _aggregate(m) for m in self.measures}
        self.settings = _map(rep.get("settings"), "settings")
        level = _num(self.settings.get("confidence"), "settings.confidence")
        self.level = f"{level * 100:g} %" if level is not None and 0 < level < 1 else "95 %"
        tol = _num(self.settings.get("tie_tolerance"), "settings.tie_tolerance")
        self.tie_tol = 1e-12 if tol is None else abs(tol)
        self.comparisons = self._comparisons(rep.get("comparisons"), "comparisons")

    def run_index(self, name: Any, where: str) -> int:
        n = _str(name, where)
        if n not in self.index:
            raise _fail(where, "names no run of the report", n)
        return self.index[n]

    def _comparisons(self, value: Any, where: str) -> dict[tuple[str, str], Mapping[str, Any]]:
        out: dict[tuple[str, str], Mapping[str, Any]] = {}
        for i, c in enumerate(_list(value, where)):
            w = f"{where}[{i}]"
            c = _map(c, w, optional=False)
            key = (_str(c.get("run"), f"{w}.run"), _str(c.get("measure"), f"{w}.measure"))
            self.run_index(key[0], f"{w}.run")
            if key in out:
                raise _fail(w, "a second comparison of the same run and measure", list(key))
            sig = c.get("significant")
            if sig is not None and not isinstance(sig, bool):
                raise _fail(f"{w}.significant", "expected true, false or null", sig)
            clean: dict[str, Any] = {k: _num(c.get(k), f"{w}.{k}") for k in _COMPARISON_NUMBERS}
            clean.update(run=key[0], measure=key[1], significant=bool(sig), ci=_ci(c.get("ci"), f"{w}.ci"))
            out[key] = clean
        return out


# --------------------------------------------------------------------------------------------------
# sections
# --------------------------------------------------------------------------------------------------


def _marker(comp: Mapping[str, Any] | None, higher_better: bool | None) -> str:
    """▲/▼ for a significant improvement/deterioration against the baseline in the measure's direction
    (as in the text reports); for a measure of unknown direction, ▲/▼ = higher/lower, uncoloured."""
    if comp is None or not comp["significant"]:
        return ""
    diff = comp["diff"]
    if diff is None or diff == 0:
        return ""
    up = diff > 0
    if higher_better is None:
        return f'<span class="sig neutral">{"▲" if up else "▼"}</span>'
    better = up == higher_better
    return f'<span class="sig {"better" if better else "worse"}">{"▲" if better else "▼"}</span>'


def _summary_table(
    rep: _Report,
    runs: Sequence[Mapping[str, Any]],
    comparisons: Mapping[tuple[str, str], Mapping[str, Any]],
    where: str,
) -> str:
    means: dict[str, list[float | None]] = {}
    for m in rep.measures:
        means[m] = [
            _num(_map(r.get("aggregate"), f"{where}[{i}].aggregate").get(m), f"{where}[{i}].aggregate[{m!r}]")
            for i, r in enumerate(runs)
        ]
    best: dict[str, float | None] = {}
    for m, vals in means.items():
        present = [v for v in vals if v is not None]
        hb = rep.direction[m]
        # a count (sum over queries) is not ranked: its total depends on how many queries a run has
        ranked = hb is not None and rep.aggregate[m] != "sum"
        best[m] = None if not ranked or len(present) < 2 else (max(present) if hb else min(present))
    head = "".join(
        f'<th scope="col">{_e(m)}'
        + ('<span class="dir">lower is better</span>' if rep.direction[m] is False else "")
        + ('<span class="dir">direction unknown</span>' if rep.direction[m] is None else "")
        + "</th>"
        for m in rep.measures
    )
    rows = []
    for i, r in enumerate(runs):
        name = _str(r.get("name"), f"{where}[{i}].name")
        idx = rep.run_index(name, f"{where}[{i}].name")
        cis = _map(r.get("ci"), f"{where}[{i}].ci")
        cells = []
        for m in rep.measures:
            v = means[m][i]
            ci = _ci(cis.get(m), f"{where}[{i}].ci[{m!r}]")
            cls = ' class="best"' if v is not None and best[m] is not None and v == best[m] else ""
            mark = "" if name == rep.baseline else _marker(comparisons.get((name, m)), rep.direction[m])
            ci_html = f'<span class="ci">[{_f(ci[0])}, {_f(ci[1])}]</span>' if ci is not None else ""
            cells.append(f"<td{cls}>{_f(v)}{mark}{ci_html}</td>")
        tag = ' <span class="tag">baseline</span>' if name == rep.baseline else ""
        rows.append(f"<tr>{_row_head(idx, name, tag)}{''.join(cells)}</tr>")
    return f'<table class="summary"><thead><tr><th scope="col">run</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _not_means(rep: _Report) -> str:
    """Which columns are not arithmetic means (as compare's text reports say it)."""
    sums = [m for m in rep.measures if rep.aggregate[m] == "sum"]
    gms = [m for m in rep.measures if rep.aggregate[m] == "gmean"]
    parts = []
    if sums:
        parts.append(f"{_e(', '.join(sums))}: {'sum' if len(sums) == 1 else 'sums'} over queries, not ranked")
    if gms:
        parts.append(
            f"{_e(', '.join(gms))}: geometric {'mean' if len(gms) == 1 else 'means'} (of max(x, 1e-5); tested on the log scale)"
        )
    return f" Not means: {'; '.join(parts)}." if parts else ""


def _sig_legend(rep: _Report) -> str:
    if not rep.comparisons:
        return (
            f'<p class="note">Each cell: the mean over the queries where the measure is defined, and its {rep.level} '
            "confidence interval when given. <b>Bold</b>: best value of the measure. No comparisons to the "
            f"baseline in this report.{_not_means(rep)}</p>"
        )
    s = rep.settings
    test = _e(s.get("test", "paired"))
    corr = _e(s.get("correction", "the configured"))
    alpha = _e(s.get("alpha", "alpha"))
    return (
        f'<p class="note">Each cell: the mean over the queries where the measure is defined, and its {rep.level} '
        "confidence interval. <b>Bold</b>: best value of the measure. "
        '<span class="sig better">▲</span>/<span class="sig worse">▼</span>: significantly better/worse '
        f"than the baseline in the measure's direction (two-sided {test} test, {corr}-adjusted p &lt; {alpha}; "
        f"lower is better for harm-like measures).{_not_means(rep)}</p>"
    )


def _section_summary(rep: _Report) -> str:
    table = _summary_table(rep, rep.runs, rep.comparisons, "runs")
    valid_head = "".join(f'<th scope="col">{_e(m)}</th>' for m in rep.measures)
    valid_rows = []
    for i, r in enumerate(rep.runs):
        vq = _map(r.get("valid_queries"), f"runs[{i}].valid_queries")
        cells = "".join(
            f"<td>{_e(_f(_num(vq.get(m), f'runs[{i}].valid_queries[{m!r}]'), 0))}</td>" for m in rep.measures
        )
        valid_rows.append(f"<tr>{_row_head(i, rep.names[i])}{cells}</tr>")
    valid = (
        "<details><summary>Queries each mean is over (valid queries per measure)</summary>"
        f'<table class="plain"><thead><tr><th scope="col">run</th>{valid_head}</tr></thead><tbody>{"".join(valid_rows)}</tbody></table></details>'
    )
    return f'<section id="summary"><h2>Summary</h2>{table}{_sig_legend(rep)}{valid}</section>'


def _section_comparisons(rep: _Report) -> str:
    if not rep.comparisons:
        return ""
    rows = []
    for (run, m), c in rep.comparisons.items():
        ci = c["ci"]
        idx = rep.index[run]
        hb = rep.direction[m] if m in rep.direction else _direction(m)
        wtl = "/".join(_f(c[k], 0) for k in ("wins", "ties", "losses"))
        cells = [
            f"<td>{_f(c['mean'])}</td>",
            f"<td>{_f(c['baseline_mean'])}</td>",
            f"<td>{_f(c['diff'])}{_marker(c, hb)}</td>",
            f"<td>{'NA' if ci is None else f'[{_f(ci[0])}, {_f(ci[1])}]'}</td>",
            f"<td>{_p(c['p_value'])}</td>",
            f"<td>{_p(c['p_adjusted'])}</td>",
            f"<td>{'yes' if c['significant'] else 'no'}</td>",
            f"<td>{wtl}</td>",
            f"<td>{_f(c['n_queries'], 0)}</td>",
            f"<td>{_f(c['n_dropped'], 0)}</td>",
        ]
        rows.append(
            f'<tr>{_row_head(idx, run)}<td class="{"m long" if len(m) > 28 else "m"}">{_e(m)}</td>{"".join(cells)}</tr>'
        )
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in (
            "run",
            "measure",
            "mean",
            "baseline",
            "diff",
            f"{rep.level} CI of diff",
            "p",
            "p adj.",
            "sig.",
            "wins/ties/losses",
            "queries",
            "dropped (NA)",
        )
    )
    return (
        f'<section id="comparisons"><h2>Differences to the baseline ({_e(rep.baseline)})</h2>'
        f'<table class="plain"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        '<p class="note">Paired by query over the queries both runs are evaluated on; queries where either '
        "value is NA are dropped (counted). Wins/ties/losses count queries where the run is better, equal or "
        "worse than the baseline.</p></section>"
    )


def _legend(rep: _Report, indices: Sequence[int]) -> str:
    items = "".join(
        f"<li>{_swatch(i)}{_e(rep.names[i])}{' (baseline)' if rep.names[i] == rep.baseline else ''}</li>"
        for i in indices
    )
    return f'<ul class="legend">{items}</ul>'


def _section_curves(rep: _Report, plot: _Plotter, ids: _Ids) -> str:
    curves = _map(rep.raw.get("curves"), "curves")
    series = _list(curves.get("series"), "curves.series")
    if not curves or not series:
        return ""
    ks = [_num(k, f"curves.ks[{i}]") for i, k in enumerate(_list(curves.get("ks"), "curves.ks", optional=False))]
    if any(k is None for k in ks):
        raise _fail("curves.ks", "expected numbers", curves.get("ks"))
    x = np.array(ks, dtype=np.float64)
    by_measure: dict[str, list[tuple[int, np.ndarray]]] = {}
    for i, s in enumerate(series):
        s = _map(s, f"curves.series[{i}]", optional=False)
        idx = rep.run_index(s.get("run"), f"curves.series[{i}].run")
        m = _str(s.get("measure"), f"curves.series[{i}].measure")
        vals = _list(s.get("values"), f"curves.series[{i}].values", optional=False)
        if len(vals) != len(ks):
            raise _fail(f"curves.series[{i}].values", f"expected {len(ks)} values (one per k)", len(vals))
        y = np.array(
            [np.nan if (v := _num(val, f"curves.series[{i}].values[{j}]")) is None else v for j, val in enumerate(vals)]
        )
        by_measure.setdefault(m, []).append((idx, y))
    figs = []
    used: set[int] = set()
    for m, lines in by_measure.items():
        fig = plot.figure(3.6, 2.5)
        ax = fig.add_subplot()
        for idx, y in lines:
            used.add(idx)
            ax.plot(x, y, marker="o" if len(x) <= 20 else None, markersize=2.5, linewidth=1.4, **_style(idx))
        ax.set_xlabel("K")
        ax.set_ylabel("mean")
        fid = ids.next()
        figs.append(_figure_html(plot.svg(fig, fid), fid, f"{_e(m)}@K"))
    return (
        '<section id="curves"><h2>Metric@K curves</h2>'
        '<p class="note">The mean of each measure at every cut-off K (gaps: no query defines it).</p>'
        f'{_legend(rep, sorted(used))}<div class="grid">{"".join(figs)}</div></section>'
    )


def _section_pr(rep: _Report, plot: _Plotter, ids: _Ids) -> str:
    pr = _map(rep.raw.get("pr_curves"), "pr_curves")
    series = _list(pr.get("series"), "pr_curves.series")
    if not pr or not series:
        return ""
    rec = [
        _num(v, f"pr_curves.recall[{i}]")
        for i, v in enumerate(_list(pr.get("recall"), "pr_curves.recall", optional=False))
    ]
    if any(v is None for v in rec):
        raise _fail("pr_curves.recall", "expected numbers", pr.get("recall"))
    fig = plot.figure(4.6, 3.2)
    ax = fig.add_subplot()
    used = []
    for i, s in enumerate(series):
        s = _map(s, f"pr_curves.series[{i}]", optional=False)
        idx = rep.run_index(s.get("run"), f"pr_curves.series[{i}].run")
        vals = _list(s.get("precision"), f"pr_curves.series[{i}].precision", optional=False)
        if len(vals) != len(rec):
            raise _fail(
                f"pr_curves.series[{i}].precision", f"expected {len(rec)} values (one per recall level)", len(vals)
            )
        y = [
            np.nan if (v := _num(val, f"pr_curves.series[{i}].precision[{j}]")) is None else v
            for j, val in enumerate(vals)
        ]
        ax.plot(rec, y, marker="o", markersize=2.5, linewidth=1.4, **_style(idx))
        used.append(idx)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    fid = ids.next()
    cap = "Interpolated precision at each recall level, averaged over queries (11-point curve)"
    return (
        '<section id="pr"><h2>Precision&ndash;recall curves</h2>'
        f'{_legend(rep, sorted(set(used)))}<div class="grid wide">{_figure_html(plot.svg(fig, fid), fid, cap)}</div></section>'
    )


def _per_query(rep: _Report, i: int) -> Mapping[str, Any]:
    return _map(rep.runs[i].get("per_query"), f"runs[{i}].per_query")


def _paired_diffs(rep: _Report, i: int, m: str) -> tuple[np.ndarray, int, int]:
    """Sorted ``run - baseline`` over shared queries where both are defined; NA-dropped and unpaired counts."""
    b = rep.index[rep.baseline]
    base_pq, run_pq = _per_query(rep, b), _per_query(rep, i)
    shared = [q for q in run_pq if q in base_pq]
    unpaired = len(run_pq) + len(base_pq) - 2 * len(shared)
    diffs = []
    dropped = 0
    for q in shared:
        rv = _num(_map(run_pq[q], f"runs[{i}].per_query[{q!r}]").get(m), f"runs[{i}].per_query[{q!r}][{m!r}]")
        bv = _num(_map(base_pq[q], f"runs[{b}].per_query[{q!r}]").get(m), f"runs[{b}].per_query[{q!r}][{m!r}]")
        if rv is None or bv is None:
            dropped += 1
        else:
            diffs.append(rv - bv)
    return np.sort(np.array(diffs, dtype=np.float64)), dropped, unpaired


#: at most this many steps per per-query difference plot; more queries are drawn in bins
MAX_STEPS = 800


def _envelope(d: np.ndarray, max_steps: int = MAX_STEPS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step edges and the positive and negative heights that draw the sorted differences ``d``.

    Query i (1-based rank) spans [i - 0.5, i + 0.5]. With more than ``max_steps`` queries, consecutive
    ranks are grouped into ``max_steps`` bins and each bin is drawn at its largest positive and its
    smallest negative value (an outer envelope: no difference is drawn smaller than it is, and the
    extremes stay visible), so the SVG stays small whatever the number of queries.

    >>> _envelope(np.array([-1.0, 0.0, 2.0]))
    (array([0.5, 1.5, 2.5, 3.5]), array([0., 0., 2.]), array([-1.,  0.,  0.]))
    >>> edges, pos, neg = _envelope(np.array([-3.0, -1.0, 1.0, 2.0, 5.0]), max_steps=2)
    >>> edges.tolist(), pos.tolist(), neg.tolist()
    ([0.5, 2.5, 5.5], [0.0, 5.0], [-3.0, 0.0])
    """
    n = d.size
    if n <= max_steps:
        bounds = np.arange(n + 1)
        hi = lo = d
    else:
        bounds = np.unique(np.linspace(0, n, max_steps + 1).round().astype(np.int64))
        hi = np.maximum.reduceat(d, bounds[:-1])
        lo = np.minimum.reduceat(d, bounds[:-1])
    return bounds + 0.5, np.where(hi > 0, hi, 0.0), np.where(lo < 0, lo, 0.0)


def _section_per_query(rep: _Report, plot: _Plotter, ids: _Ids) -> str:
    b = rep.index[rep.baseline]
    others = [i for i in range(len(rep.runs)) if i != b]
    if not others or not rep.measures:
        return ""
    have = [i for i in range(len(rep.runs)) if rep.runs[i].get("per_query")]
    if b not in have or not any(i in have for i in others):
        return ""
    blocks = []
    for m in rep.measures:
        hb = rep.direction[m]
        data = [(i, *_paired_diffs(rep, i, m)) for i in others if i in have]
        lim = max((float(np.max(np.abs(d))) for _, d, _, _ in data if d.size), default=0.0)
        lim = lim * 1.08 if lim > 0 else 1.0
        figs = []
        for i, d, dropped, unpaired in data:
            fig = plot.figure(3.3, 1.9)
            ax = fig.add_subplot()
            n = d.size
            if n:
                edges, pos, neg = _envelope(d)
                up, down = (_BETTER, _WORSE) if hb is not False else (_WORSE, _BETTER)
                if hb is None:
                    up = down = _NEUTRAL
                # one filled step path per sign
                ax.stairs(pos, edges, baseline=0.0, fill=True, color=up, linewidth=0)
                ax.stairs(neg, edges, baseline=0.0, fill=True, color=down, linewidth=0)
                ax.set_xlim(0.5, n + 0.5)
                ax.xaxis.set_major_locator(plot.mpl.ticker.MaxNLocator(integer=True))
            ax.axhline(0, color="#333333", linewidth=0.7)
            ax.set_ylim(-lim, lim)
            ax.set_xlabel("queries, sorted by difference")
            ax.set_ylabel("run - baseline")
            # ties as compare counts them: |difference| <= its tie tolerance
            higher, lower = int(np.sum(d > rep.tie_tol)), int(np.sum(d < -rep.tie_tol))
            ties = n - higher - lower
            if hb is None:
                counts = f"{higher} higher, {ties} tied, {lower} lower"
            else:
                better, worse = (higher, lower) if hb else (lower, higher)
                counts = f"{better} better, {ties} tied, {worse} worse"
            notes = f"{n} paired queries"
            if n > MAX_STEPS:
                notes += f", drawn as the envelope of {MAX_STEPS} bins of consecutive queries"
            if dropped:
                notes += f"; {dropped} dropped (NA)"
            if unpaired:
                notes += f"; {unpaired} not in both runs"
            fid = ids.next()
            cap = f'{_swatch(i)}{_e(rep.names[i])} &minus; {_e(rep.baseline)}: <span class="counts">{counts}</span> ({notes})'
            figs.append(_figure_html(plot.svg(fig, fid), fid, cap))
        blocks.append(f'<h3>{_e(m)}</h3><div class="grid">{"".join(figs)}</div>')
    return (
        '<section id="per-query"><h2>Per-query differences to the baseline</h2>'
        '<p class="note">For every run and measure, the difference run &minus; baseline on each query where '
        'both values are defined, sorted; <span class="better-text">blue</span>: the run is better, '
        '<span class="worse-text">red</span>: worse (in the measure\'s direction; grey when the direction '
        "is unknown). The y axis is shared within a measure.</p>"
        f"{''.join(blocks)}</section>"
    )


def _section_proc(rep: _Report, plot: _Plotter, ids: _Ids) -> str:
    proc = rep.raw.get("proc")
    if proc is None:
        return ""
    proc = _map(proc, "proc")
    series = _list(proc.get("series"), "proc.series")
    if not series:
        return ""
    k = _num(proc.get("k"), "proc.k")
    ktxt = "K" if k is None else _f(k, 0)
    thr = _map(proc.get("thresholds"), "proc.thresholds")
    t_proc = _num(thr.get("PROC", 0.8), "proc.thresholds.PROC")
    t_pct = _num(thr.get("%PROC", 0.8), "proc.thresholds['%PROC']")
    t_proc = 0.8 if t_proc is None else t_proc
    t_pct = 0.8 if t_pct is None else t_pct
    figs, rows = [], []
    for si, s in enumerate(series):
        s = _map(s, f"proc.series[{si}]", optional=False)
        idx = rep.run_index(s.get("run"), f"proc.series[{si}].run")
        pq = _map(s.get("per_query"), f"proc.series[{si}].per_query")
        xs, ys = [], []
        counts = {"retrieval": 0, "selection": 0, "healthy": 0, "undefined": 0}
        for q, pair in pq.items():
            w = f"proc.series[{si}].per_query[{q!r}]"
            pair = _list(pair, w, optional=False)
            if len(pair) != 2:
                raise _fail(w, "expected [PROC, %PROC]", pair)
            p, pct = _num(pair[0], f"{w}[0]"), _num(pair[1], f"{w}[1]")
            if p is None:
                counts["undefined"] += 1
            elif p < t_proc:
                counts["retrieval"] += 1
            elif pct is not None and pct < t_pct:
                counts["selection"] += 1
            else:
                counts["healthy"] += 1
            if p is not None and pct is not None:
                xs.append(p)
                ys.append(pct)
        fig = plot.figure(3.0, 2.7)
        ax = fig.add_subplot()
        ax.axvline(t_proc, color="#999999", linewidth=0.8, linestyle="--")
        ax.axhline(t_pct, color="#999999", linewidth=0.8, linestyle="--", xmin=0, xmax=1)
        if xs:
            ax.scatter(
                xs,
                ys,
                s=14 if len(xs) <= 500 else 3,
                alpha=0.55,
                color=PALETTE[idx % len(PALETTE)],
                linewidths=0,
                rasterized=len(xs) > 3000,
            )
        top = max(1.05, max(ys, default=0.0) + 0.05)
        ax.set_xlim(-0.03, max(1.05, max(xs, default=0.0) + 0.05))
        ax.set_ylim(-0.03, top)
        ax.set_xlabel(f"PROC@{ktxt}")
        ax.set_ylabel(f"%PROC@{ktxt}")
        label = {
            "transform": ax.transAxes,
            "fontsize": 7,
            "color": "#444444",
            "bbox": {"facecolor": "white", "alpha": 0.75, "linewidth": 0, "pad": 1},
        }
        ax.text(0.01, 0.99, "retrieval\nfailures", va="top", ha="left", **label)
        ax.text(0.99, 0.01, "selection failures", va="bottom", ha="right", **label)
        fid = ids.next()
        not_plotted = len(pq) - len(xs)
        cap = f"{_swatch(idx)}{_e(rep.names[idx])}: {len(xs)} queries plotted"
        if not_plotted:
            cap += f", {not_plotted} not plotted (PROC or %PROC NA)"
        figs.append(_figure_html(plot.svg(fig, fid), fid, cap))
        cells = "".join(f"<td>{counts[c]}</td>" for c in ("retrieval", "selection", "healthy", "undefined"))
        rows.append(f"<tr>{_row_head(idx, rep.names[idx])}<td>{len(pq)}</td>{cells}</tr>")
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in ("run", "queries", "retrieval failures", "selection failures", "healthy", "undefined (PROC NA)")
    )
    return (
        f'<section id="proc"><h2>PROC@{ktxt} vs %PROC@{ktxt}: fix the retriever or the reranker?</h2>'
        f'<p class="note">Each point is a query. PROC: share of the ideal top-{ktxt} value that the retrieval pool '
        f"holds at all; %PROC: share of that the final top {ktxt} realised. Retrieval failure: PROC &lt; {_f(t_proc, 2)}; "
        f"selection failure: PROC &ge; {_f(t_proc, 2)} and %PROC &lt; {_f(t_pct, 2)}; healthy otherwise.</p>"
        f'<div class="grid">{"".join(figs)}</div>'
        f'<table class="plain"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
    )


def _section_distraction(rep: _Report) -> str:
    dist = rep.raw.get("distraction")
    if dist is None:
        return ""
    dist = _map(dist, "distraction")
    rows = [
        _map(r, f"distraction.rows[{i}]", optional=False)
        for i, r in enumerate(_list(dist.get("rows"), "distraction.rows"))
    ]
    k = _num(dist.get("k"), "distraction.k")
    ktxt = "K" if k is None else _f(k, 0)
    measures: list[str] = []
    for i, r in enumerate(rows):
        for m in _map(r.get("measures"), f"distraction.rows[{i}].measures"):
            m = _str(m, f"distraction.rows[{i}].measures key")
            if m not in measures:
                measures.append(m)
    cols: list[tuple[str, bool | None, list[float | None]]] = []
    for m in measures:
        cols.append(
            (
                m,
                _direction(m),
                [
                    _num(
                        _map(r.get("measures"), f"distraction.rows[{i}].measures").get(m),
                        f"distraction.rows[{i}].measures[{m!r}]",
                    )
                    for i, r in enumerate(rows)
                ],
            )
        )
    cols.append(
        (
            "distractor rate",
            False,
            [_num(r.get("distractor_rate"), f"distraction.rows[{i}].distractor_rate") for i, r in enumerate(rows)],
        )
    )
    cols.append(
        (
            "distractor harm",
            False,
            [_num(r.get("distractor_harm"), f"distraction.rows[{i}].distractor_harm") for i, r in enumerate(rows)],
        )
    )
    best = []
    for _, hb, vals in cols:
        present = [v for v in vals if v is not None]
        best.append(None if hb is None or len(present) < 2 else (max(present) if hb else min(present)))
    opts = [_map(r.get("optimal_k"), f"distraction.rows[{i}].optimal_k") for i, r in enumerate(rows)]
    fixed = [_num(o.get("best_fixed_k"), f"distraction.rows[{i}].optimal_k.best_fixed_k") for i, o in enumerate(opts)]
    show_fixed = any(v is not None for v in fixed)
    body, details = [], []
    for i, r in enumerate(rows):
        idx = rep.run_index(r.get("run"), f"distraction.rows[{i}].run")
        name = rep.names[idx]
        cells = []
        for (m, _, vals), b in zip(cols, best):
            v = vals[i]
            cls = ' class="best"' if v is not None and b is not None and v == b else ""
            cells.append(f"<td{cls}>{_f(v)}</td>")
        verdict = r.get("verdict")
        vtext = "NA" if verdict is None else _str(verdict, f"distraction.rows[{i}].verdict")
        vcls = _VERDICT_CLASS.get(vtext.upper(), "v-other")
        opt = opts[i]
        cells.append(f'<td><span class="verdict {vcls}">{_e(vtext)}</span></td>')
        cells.append(f"<td>{_f(_num(opt.get('mean'), f'distraction.rows[{i}].optimal_k.mean'), 2)}</td>")
        cells.append(f"<td>{_f(_num(opt.get('median'), f'distraction.rows[{i}].optimal_k.median'), 1)}</td>")
        if show_fixed:
            cells.append(f"<td>{_f(fixed[i], 0)}</td>")
        cells.append(f"<td>{_f(_num(r.get('ndcg_minus_nddcg'), f'distraction.rows[{i}].ndcg_minus_nddcg'))}</td>")
        body.append(f"<tr>{_row_head(idx, name)}{''.join(cells)}</tr>")
        worst = _list(r.get("worst_distractors"), f"distraction.rows[{i}].worst_distractors")
        wrows = []
        for j, wd in enumerate(worst):
            w = f"distraction.rows[{i}].worst_distractors[{j}]"
            wd = _map(wd, w, optional=False)
            rank = _num(wd.get("rank"), f"{w}.rank")
            wrows.append(
                f'<tr><td class="t">{_e(_str(wd.get("query"), f"{w}.query", ids=True))}</td><td class="t">{_e(_str(wd.get("doc"), f"{w}.doc", ids=True))}</td>'
                f'<td>{_f(rank, 0)}</td><td>{_f(_num(wd.get("utility"), f"{w}.utility"), 3)}</td><td class="t">{_e(wd.get("why", ""))}</td></tr>'
            )
        if wrows:
            details.append(
                f"<details><summary>Worst distractors of {_swatch(idx)}{_e(name)} ({len(wrows)})</summary>"
                '<table class="plain"><thead><tr><th scope="col">query</th><th scope="col">doc</th><th scope="col">rank</th>'
                f'<th scope="col">utility</th><th scope="col">why flagged</th></tr></thead><tbody>{"".join(wrows)}</tbody></table></details>'
            )
    head = "".join(f'<th scope="col">{_e(m)}</th>' for m, _, _ in cols)
    head += "".join(
        f'<th scope="col">{h}</th>'
        for h in ("safety verdict", "optimal k (mean)", "optimal k (median)")
        + (("best fixed k",) if show_fixed else ())
        + ("nDCG &minus; ndDCG",)
    )
    rules = _map(dist.get("rules"), "distraction.rules")
    umap = dist.get("utility_map")
    source = dist.get("utility_source")
    settings = (
        '<table class="kv"><tbody>'
        f'<tr><th scope="row">k</th><td>{_e(ktxt)}</td></tr>'
        f'<tr><th scope="row">utility source</th><td>{_value_cell(source)}</td></tr>'
        f'<tr><th scope="row">utility map (grade &rarr; utility)</th><td>{_value_cell(umap)}</td></tr>'
        f'<tr><th scope="row">distractor rules</th><td>{_value_cell(dict(rules)) if rules else _value_cell(None)}</td></tr>'
        + "".join(
            f'<tr><th scope="row">{_e(key)}</th><td>{_value_cell(value)}</td></tr>'
            for key, value in dist.items()
            if key not in ("k", "rules", "utility_map", "utility_source", "rows")
        )
        + "</tbody></table>"
    )
    return (
        f'<section id="distraction"><h2>Distraction at k = {_e(ktxt)}</h2>'
        '<p class="note">Distractor rate: share of the top-k passages with negative utility; distractor harm: '
        "the sum of their negative utilities; the verdict follows the mean distractor rate "
        "(SAFE / RISKY / DANGEROUS). nDCG &minus; ndDCG is the harm the rank measures do not see. "
        "<b>Bold</b>: best value of the column.</p>"
        f'<table class="plain distraction"><thead><tr><th scope="col">run</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        f"{''.join(details)}<h3>Distraction settings</h3>{settings}</section>"
    )


def _section_strata(rep: _Report) -> str:
    strata = rep.raw.get("strata")
    if not strata:
        return ""
    strata = _map(strata, "strata")
    blocks = []
    for si, (name, st) in enumerate(strata.items()):
        w = f"strata[{name!r}]"
        st = _map(st, w, optional=False)
        runs = [_map(r, f"{w}.runs[{i}]", optional=False) for i, r in enumerate(_list(st.get("runs"), f"{w}.runs"))]
        comps = rep._comparisons(st.get("comparisons"), f"{w}.comparisons")
        n = _num(st.get("n_queries"), f"{w}.n_queries")
        small = bool(st.get("small"))
        flag = '<span class="warn">few queries: read with care</span>' if small else ""
        source = st.get("source")
        meta = f'<p class="meta">source: {_e(source if source is not None else "NA")}; {_f(n, 0)} queries {flag}</p>'
        table = _summary_table(rep, runs, comps, f"{w}.runs") if runs else '<p class="muted">no runs</p>'
        blocks.append(f'<div class="stratum" id="stratum-{si + 1}"><h3>{_e(name)}</h3>{meta}{table}</div>')
    return (
        '<section id="strata"><h2>Strata</h2>'
        '<p class="note">The summary per stratum of queries (markers as in the summary, tested within the '
        "stratum).</p>"
        f"{''.join(blocks)}</section>"
    )


def _section_settings(rep: _Report) -> str:
    srows = "".join(f'<tr><th scope="row">{_e(k)}</th><td>{_value_cell(v)}</td></tr>' for k, v in rep.settings.items())
    rrows = []
    for i, r in enumerate(rep.runs):
        queries = _map(r.get("queries"), f"runs[{i}].queries")
        acc = (
            "; ".join(f"{_e(k)}: {_e(_json_text(v))}" for k, v in queries.items())
            or '<span class="muted">not given</span>'
        )
        extra = {
            k: v
            for k, v in r.items()
            if k not in ("name", "path", "aggregate", "valid_queries", "queries", "ci", "per_query")
        }
        more = f"<pre>{_e(_json_text(extra))}</pre>" if extra else ""
        path = r.get("path")
        rrows.append(
            f'<tr>{_row_head(i, rep.names[i])}<td class="t">{_e(path) if path is not None else "NA"}</td><td class="t">{acc}{more}</td></tr>'
        )
    return (
        '<section id="settings"><h2>Runs and settings</h2>'
        '<table class="plain"><thead><tr><th scope="col">run</th><th scope="col">source</th>'
        f'<th scope="col">query accounting</th></tr></thead><tbody>{"".join(rrows)}</tbody></table>'
        f'<h3>Settings that produced every number</h3><table class="kv"><tbody>{srows or "<tr><td>none given</td></tr>"}</tbody></table></section>'
    )


_CSS = (
    """
:root{--fg:#1d1d1f;--muted:#6b6b70;--line:#d9d9de;--best:#fff3bf;--better:#2166ac;--worse:#b2182b}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);margin:0;background:#fff}
main{max-width:1440px;margin:0 auto;padding:24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:15px;margin:20px 0 6px}
nav ul{list-style:none;padding:0;margin:8px 0;display:flex;flex-wrap:wrap;gap:4px 14px}
nav a{color:var(--better)}
table{border-collapse:collapse;margin:8px 0;font-variant-numeric:tabular-nums}
th,td{border-bottom:1px solid var(--line);padding:4px 8px;text-align:right;vertical-align:top}
td{white-space:nowrap}
th[scope=row],td.m,td.t{text-align:left;white-space:nowrap}
th.long,td.long{white-space:normal;min-width:12em;max-width:24em;overflow-wrap:anywhere}
td.t{white-space:normal;overflow-wrap:anywhere}
section{overflow-x:auto}
thead th{text-align:center;border-bottom:2px solid #9a9aa0;font-weight:600}
table.kv th{text-align:left;font-weight:600;white-space:nowrap}table.kv td{text-align:left;white-space:normal;overflow-wrap:anywhere}
td.best{background:var(--best);font-weight:700}
.ci{display:block;color:var(--muted);font-size:11px;white-space:nowrap}
.dir{display:block;color:var(--muted);font-size:10px;font-weight:400}
.sig{margin-left:3px;font-size:11px}.sig.better,.better-text{color:var(--better)}.sig.worse,.worse-text{color:var(--worse)}
.sig.neutral{color:var(--muted)}
.tag{font-size:10px;border:1px solid var(--muted);border-radius:3px;padding:0 3px;color:var(--muted)}
.note,.meta{color:var(--muted);font-size:12.5px;max-width:900px}
.muted{color:var(--muted)}
.warn{background:#fde2e1;color:#8a1c14;border-radius:3px;padding:0 5px;font-size:12px}
pre{margin:0;font:12px/1.3 ui-monospace,"DejaVu Sans Mono",monospace;white-space:pre-wrap;text-align:left}
.sw{display:inline-block;width:16px;height:0;border-top:3px solid;margin:0 6px 3px 0;vertical-align:middle}
.d1{border-top-style:dashed}.d2{border-top-style:dotted}
"""
    + "".join(f".c{i}{{border-color:{c}}}" for i, c in enumerate(PALETTE))
    + """
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 16px;margin:6px 0}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:12px}
.grid.wide{grid-template-columns:minmax(330px,560px)}
figure{margin:0;border:1px solid var(--line);border-radius:4px;padding:6px}
figcaption{font-size:12.5px;margin-top:4px}
svg.plot{display:block;width:100%;height:auto}
.verdict{font-weight:700;border-radius:3px;padding:1px 6px;font-size:12px}
.v-safe{background:#d8f3dc;color:#1b5e20}.v-risky{background:#fff1c2;color:#7a5200}.v-danger{background:#fde2e1;color:#8a1c14}
.v-other{background:#eee;color:#333}
details{margin:6px 0}summary{cursor:pointer;color:var(--better)}
footer{margin-top:40px;color:var(--muted);font-size:12px}
"""
)


def render_html(report: Mapping[str, Any]) -> str:
    """Render a comparison report dict (contract C, ``Report.to_dict()``) as one self-contained HTML page.

    Optional parts (``comparisons``, ``curves``, ``pr_curves``, ``proc``, ``distraction``, ``strata``,
    ``per_query`` of the runs) are shown when present and left out otherwise. Raises
    :class:`~ctxeval.InputError` naming the place of a malformed value, and
    :class:`ReportDependencyError` when matplotlib is missing (``pip install 'ctxeval[report]'``).
    """
    from . import __version__

    rep = _Report(report)
    plot = _Plotter()
    ids = _Ids()
    mpl = plot.mpl
    with mpl.rc_context():
        mpl.rcdefaults()  # the user's matplotlibrc must not change the page
        mpl.rcParams.update(_RC)
        sections = [
            _section_summary(rep),
            _section_comparisons(rep),
            _section_curves(rep, plot, ids),
            _section_pr(rep, plot, ids),
            _section_per_query(rep, plot, ids),
            _section_proc(rep, plot, ids),
            _section_distraction(rep),
            _section_strata(rep),
            _section_settings(rep),
        ]
    titles = {
        "summary": "Summary",
        "comparisons": "Differences",
        "curves": "Metric@K",
        "pr": "Precision&ndash;recall",
        "per-query": "Per-query differences",
        "proc": "PROC vs %PROC",
        "distraction": "Distraction",
        "strata": "Strata",
        "settings": "Runs and settings",
    }
    present = [key for key in titles if f'<section id="{key}">' in "".join(sections)]
    missing = {
        "comparisons": "differences to the baseline",
        "pr": "precision-recall curves",
        "curves": "metric@K curves",
        "per-query": "per-query differences (no per-query values)",
        "proc": "PROC vs %PROC (no set-based runs)",
        "distraction": "distraction table",
        "strata": "strata",
    }
    absent = [text for key, text in missing.items() if key not in present]
    nav = "".join(f'<li><a href="#{key}">{titles[key]}</a></li>' for key in present)
    absent_html = f'<p class="note">Not in this report: {", ".join(absent)}.</p>' if absent else ""
    n_runs = len(rep.runs)
    head = (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>ctxeval report: {n_runs} run{'s' if n_runs != 1 else ''} against {_e(rep.baseline)}</title>"
        f"<style>{_CSS}</style></head>"
    )
    body = (
        "<body><main>"
        "<header><h1>ctxeval report</h1>"
        f'<p class="meta">Baseline: <b>{_e(rep.baseline)}</b> &middot; {n_runs} run{"s" if n_runs != 1 else ""} '
        f"&middot; {len(rep.measures)} measure{'s' if len(rep.measures) != 1 else ''}</p>"
        f"<nav><ul>{nav}</ul></nav>{absent_html}</header>"
        + "".join(sections)
        + f"<footer>Made by ctxeval {_e(__version__)} with matplotlib {_e(plot.version)}. "
        "This page is self-contained: it runs no scripts and loads nothing from the network.</footer>"
        "</main></body></html>\n"
    )
    return head + body
