"""Evaluation results as text: table (rich), JSON, CSV and JSON lines; deterministic bytes."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from .._evaluate import Result, RunResult
from .._measures import Measure

__all__ = ["FORMATS", "accounting_lines", "by_runs", "fmt_value", "render", "to_json"]

FORMATS = ("table", "json", "csv", "jsonl")


def fmt_value(x: float | None, digits: int = 4, count: bool = False) -> str:
    """``NA`` for an undefined value; whole numbers for counts; else fixed decimals."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "NA"
    if count and float(x).is_integer():
        return str(int(x))
    return f"{x:.{digits}f}"


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render(result: Result, fmt: str, per_query: bool = False) -> str:
    if fmt == "json":
        return to_json(result.to_dict(per_query=per_query))
    if fmt == "jsonl":
        lines = []
        for r in result.runs:
            for m in result.measures:
                mean, valid = r.summary[m]
                lines.append(
                    json.dumps(
                        {
                            "run": r.name,
                            "query": "all",
                            "measure": str(m),
                            "value": None if math.isnan(mean) else mean,
                            "valid_queries": valid,
                        },
                        ensure_ascii=False,
                    )
                )
            if per_query:
                for i, q in enumerate(r.qids):
                    for m in result.measures:
                        v = float(r.values[m][i])
                        lines.append(
                            json.dumps(
                                {"run": r.name, "query": q, "measure": str(m), "value": None if math.isnan(v) else v},
                                ensure_ascii=False,
                            )
                        )
        return "\n".join(lines) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", "query", "measure", "value", "valid_queries"])
        for r in result.runs:
            for m in result.measures:
                mean, valid = r.summary[m]
                w.writerow([r.name, "all", str(m), "" if math.isnan(mean) else repr(mean), valid])
            if per_query:
                for i, q in enumerate(r.qids):
                    for m in result.measures:
                        v = float(r.values[m][i])
                        w.writerow([r.name, q, str(m), "" if math.isnan(v) else repr(v), ""])
        return buf.getvalue()
    if fmt == "table":
        return _table(result, per_query)
    raise ValueError(fmt)


def _rag_notes(result: Result) -> list[str]:
    """The grade map in force and the pool, when RAG measures or a pool are involved."""
    st = result.settings
    pool = st.get("pool")
    if pool is None and not st.get("grade_map"):
        return []
    out = [f"grade map: {st.get('grade_map') or 'none (qrels grades read as the 1-5 utility scale)'}"]
    if pool is not None:
        depth = f", depth {pool['depth']}" if pool.get("depth") else ", full depth"
        out.append(f"pool: {pool['name']}{depth}" + (f"; groups: {pool['groups']}" if pool.get("groups") else ""))
    for r in result.runs:
        if r.pool and r.pool.get("outside_pool_docs"):
            out.append(
                f"{r.name}: {r.pool['outside_pool_docs']} docs in {r.pool['outside_pool_queries']} queries outside the pool (allowed)"
            )
    return out


def _utility_notes(result: Result) -> list[str]:
    """The utility map, the distractor rules and the utility source, when distraction measures ran."""
    u = result.settings.get("utility")
    if not u:
        return []
    from .._context.utility import describe_lines

    out = describe_lines(u)
    for r in result.runs:
        if r.utility:
            out.append(
                f"{r.name}: passages by utility rule: " + ", ".join(f"{name} {n}" for name, n in r.utility.items())
            )
    return out


def _table(result: Result, per_query: bool) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(
        file=buf,
        width=max(100, 20 + sum(max(len(str(m)), 8) + 3 for m in result.measures)),
        color_system=None,
        highlight=False,
    )
    table = Table(title=None, show_lines=False)
    table.add_column("run", style="bold")
    for m in result.measures:
        table.add_column(str(m), justify="right")
    best: dict[Measure, float | None] = {}
    for m in result.measures:
        vals = [r.summary[m][0] for r in result.runs if not math.isnan(r.summary[m][0])]
        if not vals or m.spec.bounds is None:
            best[m] = None
        else:
            best[m] = max(vals) if m.spec.higher_is_better else min(vals)
    for r in result.runs:
        cells = []
        for m in result.measures:
            mean = r.summary[m][0]
            text = fmt_value(mean, count=m.spec.aggregate == "sum")
            if len(result.runs) > 1 and best[m] is not None and mean == best[m]:
                text += "*"
            cells.append(text)
        table.add_row(r.name, *cells)
    console.print(table)
    for line in accounting_lines(result.runs, result.measures):
        console.print(line)
    for line in result.notes:
        console.print(line)
    for line in _rag_notes(result):
        console.print(line)
    for line in _utility_notes(result):
        console.print(line)
    if len(result.runs) > 1:
        console.print("* best value of the column (lowest for harm measures)")
    if per_query:
        pq = Table(title="per query")
        pq.add_column("run")
        pq.add_column("query")
        for m in result.measures:
            pq.add_column(str(m), justify="right")
        for r in result.runs:
            for i, q in enumerate(r.qids):
                pq.add_row(
                    r.name,
                    q,
                    *(fmt_value(float(r.values[m][i]), count=m.spec.aggregate == "sum") for m in result.measures),
                )
        console.print(pq)
    return buf.getvalue()


def by_runs(pairs: list[tuple[str, str]], n_runs: int) -> list[str]:
    """``(run, message)`` pairs as lines, one per message, naming the runs it holds for ("all 5 runs"
    when it holds for every run), in the order the messages first appear.

    >>> by_runs([("a", "50 queries"), ("b", "50 queries"), ("b", "1 dropped")], 2)
    ['all 2 runs: 50 queries', 'b: 1 dropped']
    """
    runs_of: dict[str, list[str]] = {}
    for run, msg in pairs:
        runs_of.setdefault(msg, []).append(run)
    out = []
    for msg, names in runs_of.items():
        who = f"all {n_runs} runs" if n_runs > 1 and len(names) == n_runs else ", ".join(names)
        out.append(f"{who}: {msg}")
    return out


def accounting_lines(runs: list[RunResult], measures: list[Measure]) -> list[str]:
    """How each run's queries were treated, and where a measure is undefined (NA); a line that holds
    for several runs is printed once, naming them."""
    pairs: list[tuple[str, str]] = []
    for r in runs:
        a = r.accounting
        parts = [f"{a.evaluated} queries evaluated"]
        if a.missing:
            how = "scored 0" if a.missing_policy == "zero" else "ignored"
            parts.append(f"{a.missing} judged but missing from the run ({how}, --missing {a.missing_policy})")
        if a.unjudged:
            parts.append(f"{a.unjudged} in the run without judgments (ignored)")
        if r.dropped_duplicates:
            parts.append(f"{r.dropped_duplicates} duplicate rows dropped")
        if a.beyond_float32:
            parts.append(
                f"{a.beyond_float32} scores beyond the float32 range rank as +-inf (--ties trec, as trec_eval 9; "
                "--ties trec10 compares scores as float64)"
            )
        pairs.append((r.name, "; ".join(parts)))
    for r in runs:
        na: dict[int, list[str]] = {}
        for m in measures:
            valid = r.summary[m][1]
            if valid < len(r.qids) and m.spec.aggregate != "sum":
                na.setdefault(len(r.qids) - valid, []).append(str(m))
        for n, names in na.items():
            what = f"{names[0]} undefined" if len(names) == 1 else f"{', '.join(names)} undefined"
            pairs.append(
                (
                    r.name,
                    f"{what} (NA) on {n} quer{'y' if n == 1 else 'ies'}, excluded from "
                    f"{'its mean' if len(names) == 1 else 'their means'}",
                )
            )
    return by_runs(pairs, len(runs))
