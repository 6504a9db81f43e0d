"""Comparing ranking profiles by the harm they do to an LLM reader: ``ctxeval distraction``.

:func:`distraction_table` evaluates every run at one k and returns the ``distraction`` object of the
report contract: per run RR, R@k, nDCG@k, dDCG@k, ndDCG@k, UDCG@k, the distractor rate and harm, the
safety verdict, the optimal k (mean, median, histogram, best fixed K), the gap nDCG@k - ndDCG@k
("harm the rank metrics do not see") and the worst distractors with the reason each was flagged,
plus the utility map and the detection rules in force.

Safety verdict from the mean DistractorRate@k over queries: SAFE when <= ``safe`` (0.10), RISKY when
<= ``risky`` (0.50), DANGEROUS above. A mean within 1e-9 of a threshold counts as equal to it: the mean
of per-query rates carries float noise (0.2, 0.1 and 0.0 average to 0.10000000000000002, not 0.1), and
a rate is a multiple of 1/(k·queries), far coarser than that.

>>> safety_verdict(0.1), safety_verdict(0.2), safety_verdict(0.51), safety_verdict(0.3, safe=0.3)
('SAFE', 'RISKY', 'DANGEROUS', 'SAFE')
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

import numpy as np

from ._data import Qrels, Run
from ._engine import prepare
from ._errors import ConfigError
from ._measures import Measure, make
from ._measures._distraction import top_rows
from ._utility import (
    WHY_KNOWN,
    WHY_LLM,
    WHY_RANK,
    WHY_SCORE,
    UtilityConfig,
    attach_utilities,
    dynamic_k_summary,
)

__all__ = ["distraction_table", "safety_verdict", "render_distraction", "SAFE", "RISKY"]

SAFE, RISKY = 0.10, 0.50
_VERDICT_TOL = 1e-9
VERDICTS = ("SAFE", "RISKY", "DANGEROUS")


def _check_thresholds(safe: float, risky: float) -> None:
    for name, v in (("safe", safe), ("risky", risky)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            raise ConfigError(f"verdict threshold {name} must be a number in [0, 1], got {v!r}")
    if safe > risky:
        raise ConfigError(f"verdict thresholds: safe ({safe:g}) must not exceed risky ({risky:g})")


def safety_verdict(rate: float | None, safe: float = SAFE, risky: float = RISKY) -> str:
    """SAFE when rate <= safe, RISKY when safe < rate <= risky, DANGEROUS above; NA when undefined."""
    _check_thresholds(safe, risky)
    if rate is None or (isinstance(rate, float) and math.isnan(rate)):
        return "NA"
    return "SAFE" if rate <= safe + _VERDICT_TOL else "RISKY" if rate <= risky + _VERDICT_TOL else "DANGEROUS"


def _num(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _mean(v: np.ndarray) -> float:
    ok = v[~np.isnan(v)]
    return float(ok.mean()) if ok.size else math.nan


def auto_rel(qrels: Qrels, config: UtilityConfig, grade_map: Any) -> tuple[int, list[str]]:
    """The smallest qrels grade whose utility (after the grade map) is positive, for RR and R@k; a note
    when a higher grade has a utility <= 0 (a non-monotone map)."""
    from ._pool import coerce_grade_map

    gm = coerce_grade_map(grade_map)
    grades = sorted(set(qrels.frame["relevance"].unique().to_list()))
    umap = config.map
    notes: list[str] = []

    def util(g: int) -> float | None:
        mapped = gm.mapping.get(g, g) if gm is not None and gm.mapping else g
        return umap.get(mapped)

    positive = [g for g in grades if (util(g) or 0.0) > 0]
    if not positive:
        raise ConfigError(f"no qrels grade has a positive utility under the utility map {config.map}; nothing is relevant")
    rel = min(positive)
    odd = [g for g in grades if g > rel and (util(g) or 0.0) <= 0]
    if odd:
        notes.append(f"grades {odd} lie above rel={rel} but have utility <= 0: RR and R count them as relevant")
    return rel, notes


def _why_text(
    code: int, grade: int | None, rel_score: float, rank: int, llm: float | None, known: bool, label: float, config: UtilityConfig
) -> str:
    rules = config.rules
    if code == WHY_KNOWN:
        return "known distractor" + (f" (grade {grade})" if grade is not None else " (unjudged)")
    if code == WHY_SCORE:
        judged = f"grade {grade}" if grade is not None else "unjudged"
        return f"hard negative: relative score {rel_score:.3f} >= tau {rules.tau:g} ({judged})"
    if code == WHY_RANK:
        what = f"utility 0 (grade {grade})" if grade is not None else "unlabelled passage"
        return f"hard negative: {what} at rank {rank} <= {rules.top_rank}"
    if code == WHY_LLM:
        if known:
            return f"LLM utility {llm:.3g} of a known distractor"
        what = f"grade {grade}" if grade is not None else "unjudged"
        return f"LLM utility {llm:.3g} >= {config.llm_threshold:g} of a non-relevant passage ({what})"
    return f"label: grade {grade} has utility {label:g}" if grade is not None else "label"


def distraction_table(
    qrels: Any,
    runs: Any,
    k: int = 5,
    *,
    utility_map: Any = None,
    distractors: Any = None,
    utilities: Any = None,
    distractor_rules: Any = "default",
    tau: float | None = None,
    top_rank: int | None = None,
    penalty: float | None = None,
    rel: int | None = None,
    grade_map: Any = None,
    safe: float = SAFE,
    risky: float = RISKY,
    worst: int = 5,
    discount: bool = False,
    ties: str = "trec",
    missing: str = "zero",
    duplicates: str = "error",
    llm_threshold: float | None = None,
) -> dict[str, Any]:
    """One row per run: rank measures next to the distraction-aware ones, the safety verdict, the
    optimal k and the worst distractors. Returns the ``distraction`` object of the report contract
    (``k``, ``rules``, ``utility_map``, ``utility_source``, ``rows``) plus the settings that shaped it
    (``rel``, ``verdict_thresholds``, ``known_distractors``, ``utilities``, ``notes``).

    ``llm_threshold`` (with ``utilities``): an irrelevant passage counts as a distractor (u = -LLM
    utility) only when its LLM utility is >= this (default 0.5), else its utility is 0; UDCG reads the
    LLM utilities as given. ``rel`` (for RR and R@k; also passed to UDCG when given) defaults to the smallest grade whose
    utility is positive. ``ndcg_minus_nddcg`` is the mean over queries where ndDCG@k is defined of
    nDCG@k - ndDCG@k. Every row says how many queries its means cover (``queries``: with
    ``missing="zero"`` the judged queries absent from the run count, with an empty list), how the
    run's queries were treated (``accounting``), the duplicate rows dropped, on how many queries
    ndDCG and the gap are defined (``valid``) and which rule set how many utilities
    (``utility_counts``); the text table prints the same. The optimal k is computed over the whole ranked list (``discount``: U(k) with
    log2 discounts).
    """
    from ._evaluate import _unique_names
    from ._pool import coerce_grade_map

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise ConfigError(f"worst must be a whole number >= 0, got {worst!r}")
    _check_thresholds(safe, risky)
    qr = Qrels.coerce(qrels, duplicates=duplicates)
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    if not run_list:
        raise ConfigError("distraction needs at least one run")
    run_objs = [Run.coerce(r, duplicates=duplicates) for r in run_list]
    config = UtilityConfig.resolve(utility_map, distractors, utilities, distractor_rules, tau, top_rank, penalty, llm_threshold)
    gm = coerce_grade_map(grade_map)
    notes: list[str] = []
    if rel is None:
        rel_used, notes = auto_rel(qr, config, gm)
    else:
        rel_used = rel
    ms: dict[str, Measure] = {
        "RR": make("RR", {"rel": rel_used}),
        "R": make("R", {"rel": rel_used}, k),
        "nDCG": make("nDCG", None, k),
        "dDCG": make("dDCG", None, k),
        "ndDCG": make("ndDCG", None, k),
        "UDCG": make("UDCG", {"rel": rel} if rel is not None else None, k),
        "DistractorRate": make("DistractorRate", None, k),
        "DistractorHarm": make("DistractorHarm", None, k),
    }
    if config.llm is None:
        notes.append("UDCG uses label-derived stand-in utilities (relevant 1, others the size of their negative utility): no LLM utilities file")
    else:
        notes.append(f"UDCG reads the LLM utilities as given; the threshold {config.llm_threshold:g} only decides which irrelevant passages count as distractors")
    rows_out = []
    for run, name in zip(run_objs, _unique_names(run_objs)):
        data = prepare(qr, run, ties=ties, missing=missing, grade_map=gm, keep_frame=True)
        urows = attach_utilities(data, config, qr)
        values = {key: m.compute(data) for key, m in ms.items()}
        rate = _mean(values["DistractorRate"])
        both = ~np.isnan(values["ndDCG"]) & ~np.isnan(values["nDCG"])
        gap = float(np.mean(values["nDCG"][both] - values["ndDCG"][both])) if both.any() else math.nan
        dyn = dynamic_k_summary(data.r_off, urows.u, discount=discount)
        tidx, tseg, trank = top_rows(data, k)
        neg = urows.u[tidx] < 0
        idx, qseg, nrank = tidx[neg], tseg[neg], trank[neg]
        docs = data.frame["doc_id"].gather(idx).to_numpy() if idx.size else np.zeros(0, dtype=object)  # type: ignore[index]
        order = np.lexsort((docs, qseg, nrank, urows.u[idx]))
        worst_rows = []
        grades = data.r_grade
        judged = data.r_judged
        for j in idx[order[:worst]].tolist():
            g = int(grades[j]) if judged[j] else None
            llm = None if urows.llm_u is None or math.isnan(urows.llm_u[j]) else float(urows.llm_u[j])
            known = bool(urows.known[j]) if urows.known is not None else False
            worst_rows.append(
                {
                    "query": data.qids[int(data.r_seg[j])],
                    "doc": str(data.frame["doc_id"][j]),  # type: ignore[index]
                    "rank": int(data.r_rank[j]),
                    "utility": float(urows.u[j]),
                    "why": _why_text(int(urows.why[j]), g, float(urows.rel[j]), int(data.r_rank[j]), llm, known, float(urows.label[j]), config),
                    "grade": g,
                }
            )
        rows_out.append(
            {
                "run": name,
                "measures": {str(m): _num(_mean(values[key])) for key, m in ms.items()},
                "distractor_rate": _num(rate),
                "distractor_harm": _num(_mean(values["DistractorHarm"])),
                "verdict": safety_verdict(rate, safe, risky),
                "optimal_k": {
                    "mean": dyn["mean"],
                    "median": dyn["median"],
                    "histogram": dyn["histogram"],
                    "best_fixed_k": dyn["best_fixed_k"],
                    "mean_utility_at_best_fixed_k": dyn["mean_utility_at_best_fixed_k"],
                    "mean_utility_at_optimal_k": dyn["mean_utility_at_optimal_k"],
                },
                "ndcg_minus_nddcg": _num(gap),
                "worst_distractors": worst_rows,
                "queries": int(data.n_queries),
                "accounting": data.accounting.to_dict(),
                "dropped_duplicates": int(run.dropped_duplicates),
                "valid": {str(ms["ndDCG"]): int((~np.isnan(values["ndDCG"])).sum()), "nDCG-ndDCG": int(both.sum())},
                "utility_counts": urows.counts(),
            }
        )
    return {
        "k": k,
        "rules": config.rules.describe(),
        "utility_map": {str(g): u for g, u in config.utility_map},
        "utility_source": config.source,
        "rel": rel_used,
        "verdict_thresholds": {"safe": float(safe), "risky": float(risky)},
        "known_distractors": config.describe()["known_distractors"],
        "utilities": config.describe()["utilities"],
        "grade_map": gm.describe() if gm is not None else None,
        "qrels_dropped_duplicates": int(qr.dropped_duplicates),
        "discount": bool(discount),
        "notes": notes,
        "rows": rows_out,
    }


# --------------------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------------------


def _f(x: float | None, digits: int = 4) -> str:
    return "NA" if x is None else f"{x:.{digits}f}"


def _settings_lines(t: dict[str, Any]) -> list[str]:
    from ._utility import DistractorRules, llm_rule

    r = t["rules"]
    rules = DistractorRules(r["preset"], r["tau"], r["top_rank"], r["penalty"], r["based_on"])
    umap = ",".join(f"{g}:{u:g}" for g, u in t["utility_map"].items())
    out = [
        f"k = {t['k']}; relevant for RR/R: grade >= {t['rel']}" + (f"; grade map {t['grade_map']}" if t.get("grade_map") else ""),
        f"utility map: {umap} (unjudged: 0)",
        f"distractor rules: {rules}; relative score = {r['relative_score']}",
    ]
    if t.get("known_distractors"):
        kd = t["known_distractors"]
        dup = f"; {kd['duplicate_lines']} duplicate lines ignored" if kd.get("duplicate_lines") else ""
        out.append(f"known distractors: {kd['pairs']} pairs from {kd['source']} (u = -1{dup})")
    if t.get("utilities"):
        ut = t["utilities"]
        out.append(f"utility source: LLM utilities, {ut['pairs']} pairs from {ut['source']} ({llm_rule(ut['threshold'])})")
    else:
        out.append("utility source: labels")
    th = t["verdict_thresholds"]
    out.append(f"verdict from the mean DistractorRate@{t['k']}: SAFE <= {th['safe']:g} < RISKY <= {th['risky']:g} < DANGEROUS")
    out.extend(f"note: {n}" for n in t.get("notes", []))
    out.extend(_accounting_lines(t))
    return out


def _accounting_lines(t: dict[str, Any]) -> list[str]:
    """How each run's queries and rows were treated, and where ndDCG (and so the gap) is undefined."""
    out = []
    if t.get("qrels_dropped_duplicates"):
        out.append(f"qrels: {t['qrels_dropped_duplicates']} duplicate judgements dropped")
    for row in t["rows"]:
        a = row.get("accounting")
        if not a:
            continue
        parts = [f"{a['evaluated']} queries evaluated"]
        if a["missing_from_run"]:
            how = "scored 0" if a["missing_policy"] == "zero" else "ignored"
            parts.append(f"{a['missing_from_run']} judged but missing from the run ({how}, --missing {a['missing_policy']})")
        if a["unjudged_in_run"]:
            parts.append(f"{a['unjudged_in_run']} in the run without judgments (ignored)")
        if row.get("dropped_duplicates"):
            parts.append(f"{row['dropped_duplicates']} duplicate rows dropped")
        out.append(f"{row['run']}: " + "; ".join(parts))
    for row in t["rows"]:
        c = row.get("utility_counts")
        if c:
            out.append(f"{row['run']}: passages by utility rule: " + ", ".join(f"{name} {n}" for name, n in c.items()))
    for row in t["rows"]:
        valid = row.get("valid") or {}
        n_nd = next((v for name, v in valid.items() if name.startswith("ndDCG")), None)
        if n_nd is not None and n_nd < row["queries"]:
            name = next(name for name in valid if name.startswith("ndDCG"))
            out.append(
                f"{row['run']}: {name} and nDCG-ndDCG undefined (NA) on {row['queries'] - n_nd} queries "
                "(no judged passage of positive utility), excluded from their means"
            )
    return out


def render_distraction(t: dict[str, Any], fmt: str = "table") -> str:
    """The table as ``table`` (rich text), ``json`` or ``csv`` (one row per run)."""
    if fmt == "json":
        from ._output import to_json

        return to_json(t)
    k = t["k"]
    names = list(t["rows"][0]["measures"]) if t["rows"] else []
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["run", *names, "verdict", "optimal_k_mean", "optimal_k_median", "best_fixed_k", "optimal_k_histogram", "ndcg_minus_nddcg"])
        for row in t["rows"]:
            cells = ["" if row["measures"][n] is None else repr(row["measures"][n]) for n in names]
            ok = row["optimal_k"]
            w.writerow(
                [
                    row["run"], *cells, row["verdict"], repr(ok["mean"]), repr(ok["median"]), ok["best_fixed_k"],
                    " ".join(str(c) for c in ok["histogram"]), "" if row["ndcg_minus_nddcg"] is None else repr(row["ndcg_minus_nddcg"]),
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
    for col in ("verdict", "opt k mean/median", "best fixed k", "nDCG-ndDCG"):
        table.add_column(col, justify="right")
    for row in t["rows"]:
        ok = row["optimal_k"]
        table.add_row(
            row["run"],
            *(_f(row["measures"][n]) for n in names),
            row["verdict"],
            f"{_f(ok['mean'], 2)} / {_f(ok['median'], 1)}",
            "NA" if ok["best_fixed_k"] is None else str(ok["best_fixed_k"]),
            _f(row["ndcg_minus_nddcg"]),
        )
    console.print(table)
    for line in _settings_lines(t):
        console.print(line)
    for row in t["rows"]:
        ok = row["optimal_k"]
        hist = ", ".join(f"{k}: {c}" for k, c in enumerate(ok["histogram"]) if c)
        fixed = "" if ok["best_fixed_k"] is None else f"; best fixed k {ok['best_fixed_k']} (mean U {_f(ok['mean_utility_at_best_fixed_k'])})"
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
