"""The distraction table (``ctxeval distraction``) as a rich table, JSON or CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

from .._context.utility import DistractorRules, llm_rule
from .._distraction.table import no_verdict_why
from .._errors import ConfigError
from .text import by_runs, to_json

__all__ = ["render_distraction"]


def _f(x: float | None, digits: int = 4) -> str:
    return "NA" if x is None else f"{x:.{digits}f}"


def _settings_lines(t: dict[str, Any], brief: bool = False) -> list[str]:
    r = t["rules"]
    rules = DistractorRules(r["preset"], r["tau"], r["top_rank"], r["penalty"], r["based_on"], r.get("unlabelled"))
    umap = ",".join(f"{g}:{u:g}" for g, u in t["utility_map"].items())
    out = [
        f"k = {t['k']}; relevant for RR/R: {t.get('rel_relevance') or 'grade >= ' + str(t['rel'])}",
        f"utility map: {umap} (unjudged: 0)",
        f"distractor rules: {rules}; relative score = {r['relative_score']}",
    ]
    if t.get("known_distractors"):
        kd = t["known_distractors"]
        dup = f"; {kd['duplicate_lines']} duplicate lines ignored" if kd.get("duplicate_lines") else ""
        out.append(f"known distractors: {kd['pairs']} pairs from {kd['source']} (u = -1{dup})")
    if t.get("utilities"):
        ut = t["utilities"]
        out.append(
            f"utility source: LLM utilities, {ut['pairs']} pairs from {ut['source']} ({llm_rule(ut['threshold'])})"
        )
    else:
        out.append("utility source: labels")
    out.append(
        f"hidden harm: what the distractors in the top {t['k']} cost as a share of the ideal, "
        f"Σ max(-u_i, 0) / log2(i + 1) / IdDCG@{t['k']} (ndDCG without them minus ndDCG; >= 0)"
    )
    th = t["verdict_thresholds"]
    out.append(
        f"verdict from the mean DistractorRate@{t['k']}: SAFE <= {th['safe']:g} < RISKY <= {th['risky']:g} < DANGEROUS"
    )
    out.extend(f"note: {n}" for n in t.get("notes", []))
    out.extend(_reasons(t["rows"]))
    out.extend(_accounting_lines(t, brief))
    return out


def _reasons(rows: list[dict[str, Any]]) -> list[str]:
    """Why runs have no verdict, each run's counts on its line and the explanation they share once."""
    why = no_verdict_why()
    said = [(r["run"], r["verdict_reason"]) for r in rows if r.get("verdict_reason")]
    shared = [(run, reason) for run, reason in said if reason.endswith(why)]
    if len(shared) < 2:
        return [f"{run}: {reason}" for run, reason in said]
    out = [f"{run}: {reason}" for run, reason in said if not reason.endswith(why)]
    out += [f"{run}: {reason[: -len(why)]}" for run, reason in shared]
    return [*out, f"{', '.join(run for run, _ in shared)}: {why.removeprefix(', and ')}"]


def _accounting_lines(t: dict[str, Any], brief: bool = False) -> list[str]:
    """How each run's queries and rows were treated, and where ndDCG (and so the gap) is undefined;
    a line that holds for several runs is printed once."""
    out: list[str] = []
    pairs: list[tuple[str, str]] = []
    if t.get("qrels_dropped_duplicates"):
        out.append(f"qrels: {t['qrels_dropped_duplicates']} duplicate judgements dropped")
    for row in t["rows"]:
        a = row.get("accounting")
        if not a:
            continue
        parts = [f"{a['evaluated']} queries evaluated"]
        if a["missing_from_run"]:
            how = "scored 0" if a["missing_policy"] == "zero" else "ignored"
            parts.append(
                f"{a['missing_from_run']} judged but missing from the run ({how}, --missing {a['missing_policy']})"
            )
        if a["unjudged_in_run"]:
            parts.append(f"{a['unjudged_in_run']} in the run without judgments (ignored)")
        if row.get("dropped_duplicates"):
            parts.append(f"{row['dropped_duplicates']} duplicate rows dropped")
        pairs.append((row["run"], "; ".join(parts)))
    out.extend(by_runs(pairs, len(t["rows"])))
    for row in [] if brief else t["rows"]:
        c = row.get("utility_counts")
        line = (
            f"{row['run']}: passages by utility rule: " + ", ".join(f"{name} {n}" for name, n in c.items()) if c else ""
        )
        hn = row.get("hard_negatives")
        if hn:
            top, whole = hn["top_k"], hn["whole_list"]
            line += (
                f"{'; ' if line else row['run'] + ': '}hard negatives in the top {t['k']}: {top['judged']} judged, "
                f"{top['unlabelled']} unlabelled (whole lists: {whole['judged']} judged, {whole['unlabelled']} "
                f"unlabelled, of {whole['utility_0']} passages of utility 0)"
            )
        if line:
            out.append(line)
    for row in t["rows"]:
        valid = row.get("valid") or {}
        n_nd = next((v for name, v in valid.items() if name.startswith("ndDCG")), None)
        if n_nd is not None and n_nd < row["queries"]:
            name = next(name for name in valid if name.startswith("ndDCG"))
            out.append(
                f"{row['run']}: {name} and the hidden harm undefined (NA) on {row['queries'] - n_nd} queries "
                "(no judged passage of positive utility), excluded from their means"
            )
    return out


def render_distraction(t: dict[str, Any], fmt: str = "table", brief: bool = False) -> str:
    """The table as ``table`` (rich text), ``json`` or ``csv`` (one row per run). ``brief`` (table
    only): without the per-run counts of passages by utility rule and the optimal-k histograms (the
    notes, the settings and the worst distractors stay)."""
    if fmt == "json":
        return to_json(t)
    k = t["k"]
    names = list(t["rows"][0]["measures"]) if t["rows"] else []
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(
            [
                "run",
                *names,
                "verdict",
                "optimal_k_mean",
                "optimal_k_median",
                "best_fixed_k",
                "optimal_k_histogram",
                "hidden_harm",
            ]
        )
        for row in t["rows"]:
            cells = ["" if row["measures"][n] is None else repr(row["measures"][n]) for n in names]
            ok = row["optimal_k"]
            w.writerow(
                [
                    row["run"],
                    *cells,
                    row["verdict"],
                    repr(ok["mean"]),
                    repr(ok["median"]),
                    ok["best_fixed_k"],
                    " ".join(str(c) for c in ok["histogram"]),
                    "" if row["hidden_harm"] is None else repr(row["hidden_harm"]),
                ]
            )
        return buf.getvalue()
    if fmt != "table":
        raise ConfigError(f"format must be table, json or csv, got {fmt!r}")
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=160, color_system=None, highlight=False)
    table = Table(title=f"distraction at k = {k}")
    table.add_column("run", style="bold")
    short = {f"DistractorRate@{k}": "rate", f"DistractorHarm@{k}": "harm"}
    for n in names:
        table.add_column(short.get(n, n), justify="right")
    for col in ("verdict", "opt k mean/median", "best fixed k", "hidden harm"):
        table.add_column(col, justify="right")
    for row in t["rows"]:
        ok = row["optimal_k"]
        table.add_row(
            row["run"],
            *(_f(row["measures"][n]) for n in names),
            row["verdict"],
            f"{_f(ok['mean'], 2)} / {_f(ok['median'], 1)}",
            "NA" if ok["best_fixed_k"] is None else str(ok["best_fixed_k"]),
            _f(row["hidden_harm"]),
        )
    console.print(table)
    for line in _settings_lines(t, brief):
        console.print(line)
    for row in [] if brief else t["rows"]:
        ok = row["optimal_k"]
        hist = ", ".join(f"{k}: {c}" for k, c in enumerate(ok["histogram"]) if c)
        fixed = (
            ""
            if ok["best_fixed_k"] is None
            else f"; best fixed k {ok['best_fixed_k']} (mean U {_f(ok['mean_utility_at_best_fixed_k'])})"
        )
        console.print(f"{row['run']}: optimal k per query (k: queries): {hist or 'none'}{fixed}")
    if any(row["worst_distractors"] for row in t["rows"]):
        wt = Table(title=f"worst distractors in the top {k}")
        for col in ("run", "query", "doc", "rank", "utility", "why flagged"):
            wt.add_column(col, justify="right" if col in ("rank", "utility") else "left")
        for row in t["rows"]:
            for wd in row["worst_distractors"]:
                wt.add_row(row["run"], wd["query"], wd["doc"], str(wd["rank"]), f"{wd['utility']:g}", wd["why"])
        console.print(wt)
    return buf.getvalue()
