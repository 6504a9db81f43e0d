"""Evaluation results as text: table (rich), JSON, CSV and JSON lines; deterministic bytes."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

from .._evaluate import Result, RunResult
from .._measures import Measure
from .._stats.summary import CI

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


def _none(x: float) -> float | None:
    return None if math.isnan(x) else x


def _extra(r: RunResult, m: Measure) -> dict[str, Any]:
    """The interval and the best / worst tie orders of a summary, when the result holds them."""
    out: dict[str, Any] = {}
    if r.ci is not None:
        iv = r.ci.get(m)
        out["ci"] = None if iv is None else [iv[0], iv[1]]
    if r.extremes is not None:
        best, worst, _ = r.spread(m)
        out["best"], out["worst"] = _none(best), _none(worst)
    return out


def _extra_query(r: RunResult, m: Measure, i: int) -> dict[str, Any]:
    if r.extremes is None:
        return {}
    return {"best": _none(float(r.extremes[m][0][i])), "worst": _none(float(r.extremes[m][1][i]))}


def _cell(x: float | None) -> str:
    return "" if x is None or math.isnan(x) else repr(x)


def render(result: Result, fmt: str, per_query: bool = False) -> str:
    if fmt == "json":
        return to_json(result.to_dict(per_query=per_query))
    if fmt == "jsonl":
        lines = []
        for r in result.runs:
            for m in result.measures:
                mean, valid = r.summary[m]
                row = {"run": r.name, "query": "all", "measure": str(m), "value": _none(mean), "valid_queries": valid}
                lines.append(json.dumps({**row, **_extra(r, m)}, ensure_ascii=False))
            if per_query:
                for i, q in enumerate(r.qids):
                    for m in result.measures:
                        v = float(r.values[m][i])
                        row = {"run": r.name, "query": q, "measure": str(m), "value": _none(v)}
                        lines.append(json.dumps({**row, **_extra_query(r, m, i)}, ensure_ascii=False))
        return "\n".join(lines) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        with_ci = any(r.ci is not None for r in result.runs)
        with_ties = any(r.extremes is not None for r in result.runs)
        w.writerow(
            ["run", "query", "measure", "value", "valid_queries"]
            + (["ci_low", "ci_high"] if with_ci else [])
            + (["best", "worst"] if with_ties else [])
        )
        for r in result.runs:
            for m in result.measures:
                mean, valid = r.summary[m]
                x = _extra(r, m)
                iv = x.get("ci") or [None, None]
                w.writerow(
                    [r.name, "all", str(m), _cell(mean), valid]
                    + ([_cell(iv[0]), _cell(iv[1])] if with_ci else [])
                    + ([_cell(x.get("best")), _cell(x.get("worst"))] if with_ties else [])
                )
            if per_query:
                for i, q in enumerate(r.qids):
                    for m in result.measures:
                        x = _extra_query(r, m, i)
                        w.writerow(
                            [r.name, q, str(m), _cell(float(r.values[m][i])), ""]
                            + (["", ""] if with_ci else [])
                            + ([_cell(x.get("best")), _cell(x.get("worst"))] if with_ties else [])
                        )
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
    from rich.markup import escape

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
        if r.ci is not None:
            table.add_row("  CI", *(escape(_interval(r.ci.get(m), m)) for m in result.measures))
    console.print(table)
    ci = result.settings.get("ci")
    if ci:
        console.print(f"CI [lo, hi]: {CI(**ci).text()}", markup=False)
    if any(r.extremes is not None for r in result.runs):
        _tie_table(console, result)
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
    if per_query and any(r.extremes is not None for r in result.runs):
        _tie_queries(console, result)
    if per_query:
        pq = _measure_table("per query", ["run", "query"], result.measures)
        for r in result.runs:
            for i, q in enumerate(r.qids):
                pq.add_row(
                    r.name,
                    q,
                    *(fmt_value(float(r.values[m][i]), count=m.spec.aggregate == "sum") for m in result.measures),
                )
        console.print(pq)
    return buf.getvalue()


def _measure_table(title: str, heads: list[str], measures: list[Measure]) -> Any:
    """A rich table titled ``title``: the columns ``heads``, then one right-aligned column per measure."""
    from rich.table import Table

    table = Table(title=title)
    for h in heads:
        table.add_column(h)
    for m in measures:
        table.add_column(str(m), justify="right")
    return table


def _interval(iv: tuple[float, float] | None, m: Measure) -> str:
    if iv is None:
        return "NA"
    count = m.spec.aggregate == "sum"
    return f"[{fmt_value(iv[0], count=count)}, {fmt_value(iv[1], count=count)}]"


def _tie_table(console: Any, result: Result) -> None:
    """Under ties="expected": each run's summaries under the best and the worst order of its ties, how
    many queries the order moves, and how many ties there are."""
    table = _measure_table("tied scores: best and worst orders", ["run", "order"], result.measures)
    for r in result.runs:
        if r.extremes is None:
            continue
        spreads = [r.spread(m) for m in result.measures]
        count = [m.spec.aggregate == "sum" for m in result.measures]
        table.add_row(r.name, "best", *(fmt_value(s[0], count=c) for s, c in zip(spreads, count)))
        table.add_row("", "worst", *(fmt_value(s[1], count=c) for s, c in zip(spreads, count)))
        table.add_row("", "queries moved", *(str(s[2]) for s in spreads))
    console.print(table)
    for r in result.runs:
        if r.ties is not None:
            t = r.ties
            console.print(
                f"{r.name}: {t['tie_groups']} groups of tied scores ({t['tied_rows']} rows) in "
                f"{t['queries_with_ties']} of {len(r.qids)} queries"
            )
    console.print(
        "--ties expected: the figures above are expected values over every order of the tied scores; best / "
        "worst: within every group of tied scores the judged docs by grade, highest first / last (for harm "
        "measures the reverse); queries moved: where the two differ"
    )


def _tie_queries(console: Any, result: Result) -> None:
    """Per query, where the order of its ties moves a measure: best / worst."""
    table = _measure_table(
        "per query, where the order of the ties matters: best / worst", ["run", "query"], result.measures
    )
    for r in result.runs:
        moved = r.per_query_ties(result.measures)
        for q, row in moved.items():
            cells = []
            for m in result.measures:
                bw = row.get(str(m))
                cells.append("" if bw is None else f"{fmt_value(bw[0])} / {fmt_value(bw[1])}")
            table.add_row(r.name, q, *cells)
    console.print(table)


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
