"""Metric@K curves (``ctxeval curve``) as a table, JSON or CSV."""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from .._context.utility import describe_lines
from .text import to_json

__all__ = ["render_curves"]


def _fmt(x: float | None) -> str:
    return "NA" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.4f}"


def render_curves(data: dict[str, Any], fmt: str) -> str:
    """A metric@K result (see :func:`ctxeval._curve.metric_at_k`) as table, JSON or CSV."""
    if fmt == "json":
        return to_json(data)
    series = data["series"]
    runs = list(dict.fromkeys(s["run"] for s in series))
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", "measure", "tokens" if data.get("axis") == "tokens" else "k", "value"])
        for s in series:
            for k, v in zip(data["ks"], s["values"]):
                w.writerow([s["run"], s["measure"], k, "" if v is None else repr(float(v))])
        return buf.getvalue()
    from rich.console import Console
    from rich.table import Table

    heads = [s["measure"] if len(runs) == 1 else f"{s['run']}: {s['measure']}" for s in series]
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=max(80, 8 + sum(max(len(h), 8) + 3 for h in heads)),
        color_system=None,
        highlight=False,
        markup=False,
    )
    tokens = data.get("axis") == "tokens"
    title = "metric at a budget of tokens" if tokens else "metric@K"
    table = Table(title=f"{title} ({runs[0]})" if len(runs) == 1 else title)
    table.add_column("tokens" if tokens else "k", justify="right")
    for h in heads:
        table.add_column(h, justify="right")
    for i, k in enumerate(data["ks"]):
        table.add_row(str(k), *(_fmt(s["values"][i]) for s in series))
    console.print(table)
    utility = (data.get("settings") or {}).get("utility")
    if utility:
        for line in describe_lines(utility):
            console.print(line)
    return buf.getvalue()
