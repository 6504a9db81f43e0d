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
  %PROC < t_%PROC a *selection* failure (the reranker or the cut lost it), one with both low a failure
  of *both* stages, else *healthy*; undefined
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

from collections.abc import Mapping
from typing import Any

from ..._version import __version__
from .cells import PALETTE, _e, _Ids
from .figures import _section_curves, _section_per_query, _section_pr, _section_proc
from .plots import _RC, _Plotter
from .tables import _section_comparisons, _section_distraction, _section_settings, _section_strata, _section_summary
from .validate import _list, _Report, _str

#: The page's Content-Security-Policy: nothing may load or run; inline styles and data: images only.
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


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


def _section_decision(rep: _Report) -> str:
    """The answer of a verb that decides (``decision``: lines of text, the first the headline), first."""
    lines = [_str(x, f"decision[{i}]") for i, x in enumerate(_list(rep.raw.get("decision"), "decision"))]
    if not lines:
        return ""
    rest = "".join(f"<li>{_e(x)}</li>" for x in lines[1:])
    return f'<section id="decision"><h2>Answer</h2><p><b>{_e(lines[0])}</b></p><ul>{rest}</ul></section>'


def render_html(report: Mapping[str, Any]) -> str:
    """Render a comparison report dict (contract C, ``Report.to_dict()``) as one self-contained HTML page.

    Optional parts (``comparisons``, ``curves``, ``pr_curves``, ``proc``, ``distraction``, ``strata``,
    ``per_query`` of the runs) are shown when present and left out otherwise. Raises
    :class:`~ctxeval.InputError` naming the place of a malformed value, and
    :class:`DependencyError` when matplotlib is missing (``pip install 'ctxeval[report]'``).
    """
    rep = _Report(report)
    plot = _Plotter()
    ids = _Ids()
    mpl = plot.mpl
    with mpl.rc_context():
        mpl.rcdefaults()  # the user's matplotlibrc must not change the page
        mpl.rcParams.update(_RC)
        sections = [
            _section_decision(rep),
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
        "decision": "Answer",
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
