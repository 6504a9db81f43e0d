"""A diagnosis (``ctxeval diagnose``) as a table or JSON."""

from __future__ import annotations

import io

from .._diagnose import Diagnosis
from .._errors import ConfigError
from .._json import num as _num
from .text import fmt_value, to_json

__all__ = ["render"]


_EXPLAIN = {
    "retrieval": "PROC < {p}, %PROC >= {c}: the best evidence never reached the pool",
    "selection": "PROC >= {p}, %PROC < {c}: the pool had it, the top K lost it",
    "both": "PROC < {p}, %PROC < {c}: the pool lacked some, the top K lost much of the rest",
    "healthy": "PROC >= {p}, %PROC >= {c}",
    "undefined": "no judged doc with a positive weight (PROC NA)",
}


def render(d: Diagnosis, fmt: str = "table", per_query: bool = False) -> str:
    """A diagnosis as a table or JSON."""
    if fmt == "json":
        return to_json(d.to_dict())
    if fmt == "table":
        return _table(d, per_query)
    raise ConfigError(f"format must be 'table' or 'json', got {fmt!r}")


def _table(d: Diagnosis, per_query: bool) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=110, color_system=None, highlight=False)
    st = d.settings
    pool = st["pool"] or "(the run itself)"
    depth = f", depth {st['pool_depth']}" if st["pool_depth"] else ", full depth"
    console.print(f"run {d.run}, K = {d.k}; pool: {pool}{depth}")
    console.print(f"grade map: {st['grade_map'] or 'none (qrels grades read as the 1-5 utility scale)'}")
    n = len(d.queries)
    summary = Table(title=None)
    summary.add_column("verdict")
    summary.add_column("queries", justify="right")
    summary.add_column("share", justify="right")
    summary.add_column("meaning")
    for v, c in d.counts.items():
        share = f"{100.0 * c / n:.1f}%" if n else "NA"
        summary.add_row(v, str(c), share, _EXPLAIN[v].format(p=f"{d.proc_threshold:g}", c=f"{d.pct_threshold:g}"))
    console.print(summary)
    means = d.means()
    console.print(
        "mean "
        + "; ".join(f"{name}@{d.k} {fmt_value(_num(v))} ({valid} queries)" for name, (v, valid) in means.items()),
        soft_wrap=True,
    )
    console.print(f"advice: {d.advice}")
    for note in d.notes:
        console.print(f"note: {note}", soft_wrap=True)
    if d.pool_report and d.pool_report.get("outside_pool_docs"):
        console.print(
            f"{d.pool_report['outside_pool_docs']} docs in {d.pool_report['outside_pool_queries']} queries outside the pool (allowed)"
        )
    rows = d.queries if per_query else d.worst()
    if rows:
        t = Table(title="per query" if per_query else "worst queries")
        t.add_column("query")
        t.add_column("verdict")
        for name in ("RA-nWG", "PROC", "%PROC"):
            t.add_column(f"{name}@{d.k}", justify="right")
        top = d.settings.get("top_grade") or {"label": "grade-5"}
        t.add_column(f"missed {top['label']} docs")
        for q in rows:
            shown = ", ".join(f"{m.doc_id} ({m.where})" for m in q.missed[:4]) + (
                f", +{len(q.missed) - 4} more" if len(q.missed) > 4 else ""
            )
            t.add_row(
                q.query_id,
                q.verdict,
                fmt_value(_num(q.ra_nwg)),
                fmt_value(_num(q.proc)),
                fmt_value(_num(q.pct_proc)),
                shown or "-",
            )
        console.print(t)
    return buf.getvalue()
