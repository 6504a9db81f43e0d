"""Report dicts (contract C, ``ctxeval compare --format json``) for the HTML renderer's tests.

Until ``compare()`` exists, two stand-ins: :func:`hand_report`, small and written out by hand so tests
can state the expected page content, and :func:`example_report`, assembled from real
:func:`ctxeval.evaluate` results on the bundled example (per-query values, CIs by a seeded percentile
bootstrap, paired t-tests with Holm's correction, metric@K and precision-recall curves, PROC/%PROC with
each system's pool, a distraction table from the qrels grades, and strata from ``categories.tsv``).
"""

from __future__ import annotations

import copy
import functools
import math
from pathlib import Path
from typing import Any

import numpy as np

from ctxeval import evaluate
from ctxeval._demo import SYSTEMS, example_path

BASE, GOOD, BAD = "base", "better", "worse"
HAND_MEASURES = ["nDCG@10", "Harm@5", "MyScore@3"]  # MyScore: a name the measure registry does not know

#: per-query values of the hand report: {run: {qid: (nDCG@10, Harm@5, MyScore@3)}}
HAND_PER_QUERY: dict[str, dict[str, tuple[float | None, float | None, float | None]]] = {
    BASE: {"q1": (0.5, 0.4, 1.0), "q2": (0.2, 0.2, 2.0), "q3": (0.7, 0.0, None), "q4": (0.1, 0.6, 3.0)},
    GOOD: {"q1": (0.6, 0.2, 2.0), "q2": (0.2, 0.0, 1.0), "q3": (0.9, 0.2, 4.0), "q4": (0.3, None, 3.0)},
    BAD: {"q1": (0.4, 0.6, 0.5), "q2": (0.1, 0.4, 2.0), "q3": (0.7, 0.2, 1.0), "q4": (0.0, 0.8, 1.0)},
}


def _mean(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def hand_report() -> dict[str, Any]:
    """Three runs over four queries. Means (hand-checked in the tests):

    nDCG@10: base 0.375, better 0.5, worse 0.3; Harm@5: base 0.3, better 0.4/3 = 0.1333, worse 0.5;
    MyScore@3: base 2.0, better 2.5, worse 1.125.
    """
    runs = []
    for name, pq in HAND_PER_QUERY.items():
        agg = {m: _mean([v[j] for v in pq.values()]) for j, m in enumerate(HAND_MEASURES)}
        runs.append(
            {
                "name": name,
                "path": f"runs/{name}.run",
                "aggregate": agg,
                "valid_queries": {m: sum(v[j] is not None for v in pq.values()) for j, m in enumerate(HAND_MEASURES)},
                "queries": {"evaluated": 4, "missing_from_run": 0, "missing_policy": "zero"},
                "ci": {m: [a - 0.1, a + 0.1] if a is not None else None for m, a in agg.items()},
                "per_query": {q: dict(zip(HAND_MEASURES, v)) for q, v in pq.items()},
            }
        )
    means = {r["name"]: r["aggregate"] for r in runs}

    def comp(run: str, m: str, p: float, significant: bool) -> dict[str, Any]:
        return {
            "run": run,
            "measure": m,
            "mean": means[run][m],
            "baseline_mean": means[BASE][m],
            "diff": means[run][m] - means[BASE][m],
            "ci": [-0.05, 0.2],
            "p_value": p,
            "p_adjusted": min(1.0, 2 * p),
            "significant": significant,
            "wins": 2,
            "ties": 1,
            "losses": 1,
            "n_queries": 4,
            "n_dropped": 0,
        }

    comparisons = [
        comp(GOOD, "nDCG@10", 0.01, True),  # higher nDCG: ▲ better
        comp(GOOD, "Harm@5", 0.02, True),  # lower Harm: ▼ better
        comp(GOOD, "MyScore@3", 0.01, True),  # unknown direction: ▲ neutral
        comp(BAD, "nDCG@10", 0.2, False),  # not significant: no marker
        comp(BAD, "Harm@5", 0.001, True),  # higher Harm: ▲ worse
        comp(BAD, "MyScore@3", 0.3, False),
    ]
    ks = list(range(1, 6))
    return {
        "baseline": BASE,
        "measures": list(HAND_MEASURES),
        "runs": runs,
        "comparisons": comparisons,
        "strata": {
            "factoid": {
                "source": "file",
                "n_queries": 3,
                "small": True,
                "runs": [
                    {"name": r["name"], "aggregate": r["aggregate"], "valid_queries": r["valid_queries"], "ci": r["ci"]}
                    for r in runs
                ],
                "comparisons": [comp(GOOD, "nDCG@10", 0.04, True)],
            },
            "num_rel:2-5": {
                "source": "num_rel",
                "n_queries": 12,
                "small": False,
                "runs": [
                    {"name": r["name"], "aggregate": r["aggregate"], "valid_queries": r["valid_queries"], "ci": None}
                    for r in runs
                ],
                "comparisons": [],
            },
        },
        "curves": {
            "ks": ks,
            "series": [
                {"run": BASE, "measure": "nDCG", "values": [0.2, 0.3, 0.35, 0.37, 0.375]},
                {"run": GOOD, "measure": "nDCG", "values": [0.3, 0.4, 0.45, 0.48, 0.5]},
                {"run": BAD, "measure": "nDCG", "values": [None, 0.2, 0.25, 0.28, 0.3]},
                {"run": BASE, "measure": "Harm", "values": [0.5, 0.4, 0.35, 0.3, 0.3]},
                {"run": GOOD, "measure": "Harm", "values": [0.2, 0.2, 0.15, 0.14, 0.1333]},
            ],
        },
        "pr_curves": {
            "recall": [i / 10 for i in range(11)],
            "series": [
                {"run": BASE, "precision": [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]},
                {"run": GOOD, "precision": [1.0, 0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1]},
                {"run": BAD, "precision": [0.9, 0.8, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0, 0.0, 0.0]},
            ],
        },
        # verdicts with the default thresholds 0.8 / 0.8:
        # base: q1 healthy, q2 retrieval, q3 selection, q4 undefined; better: q1, q2 healthy, q3 retrieval (PROC 0), q4 selection
        "proc": {
            "k": 10,
            "thresholds": {"PROC": 0.8, "%PROC": 0.8},
            "series": [
                {
                    "run": BASE,
                    "per_query": {"q1": [1.0, 0.9], "q2": [0.5, 1.0], "q3": [0.8, 0.4], "q4": [None, None]},
                    "verdicts": {"retrieval": 1, "selection": 1, "both": 0, "healthy": 1, "undefined": 1},
                },
                {
                    "run": GOOD,
                    "per_query": {"q1": [1.0, 1.0], "q2": [0.9, 0.85], "q3": [0.0, None], "q4": [1.0, 0.1]},
                    "verdicts": {"retrieval": 1, "selection": 1, "both": 0, "healthy": 2, "undefined": 0},
                },
            ],
        },
        "distraction": {
            "k": 5,
            "rules": {"preset": "default", "tau": 0.9, "top_rank": 3, "penalty": -0.5},
            "utility_map": {"5": 1.0, "4": 1.0, "3": 0.5, "2": 0.0, "1": -1.0},
            "utility_source": "labels",
            "verdict_thresholds": {"safe": 0.1, "risky": 0.5},
            "notes": ["hard negatives: relative score >= 0.9"],
            "rows": [
                {
                    "run": BASE,
                    "measures": {"RR": 0.6, "nDCG@5": 0.4, "Harm@5": 0.3},
                    "distractor_rate": 0.3,
                    "distractor_harm": 0.9,
                    "verdict": "RISKY",
                    "optimal_k": {"mean": 3.25, "median": 3.0},
                    "hidden_harm": 0.12,
                    "worst_distractors": [{"query": "q4", "doc": "d9", "rank": 1, "utility": -1.0, "why": "label"}],
                },
                {
                    "run": GOOD,
                    "measures": {"RR": 0.8, "nDCG@5": 0.55, "Harm@5": 0.1333},
                    "distractor_rate": 0.05,
                    "distractor_harm": 0.2,
                    "verdict": "SAFE",
                    "optimal_k": {"mean": 4.0, "median": 4.0, "best_fixed_k": 4, "histogram": [0, 1, 0, 3]},
                    "hidden_harm": 0.02,
                    "worst_distractors": [],
                },
                {
                    "run": BAD,
                    "measures": {"RR": 0.5, "nDCG@5": 0.3, "Harm@5": 0.5},
                    "distractor_rate": 0.55,
                    "distractor_harm": 1.8,
                    "verdict": "DANGEROUS",
                    "optimal_k": {"mean": 1.5, "median": 1.0},
                    "hidden_harm": None,
                    "worst_distractors": [
                        {"query": "q1", "doc": "d3", "rank": 1, "utility": -1.0, "why": "known distractor"},
                        {"query": "q2", "doc": "d7", "rank": 2, "utility": -0.5, "why": "hard negative (score)"},
                    ],
                },
            ],
        },
        "settings": {
            "test": "randomization",
            "alpha": 0.05,
            "correction": "holm",
            "permutations": 10000,
            "resamples": 10000,
            "seed": 42,
            "ci_method": "percentile",
            "missing": "zero",
            "ties": "trec",
            "qrels": "qrels.txt",
            "grade_map": None,
            "pool": {"depth": None},
        },
    }


# --------------------------------------------------------------------------------------------------
# a report from real evaluate() results on the bundled example
# --------------------------------------------------------------------------------------------------

EXAMPLE_MEASURES = ["nDCG@10", "AP(rel=3)", "RR(rel=3)", "RA-nWG@5", "Harm@5"]
EXAMPLE_BASELINE = "bm25"
UTILITY_MAP = {5: 1.0, 4: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def _bootstrap_ci(values: np.ndarray, rng: np.random.Generator, resamples: int = 2000) -> list[float] | None:
    v = values[~np.isnan(values)]
    if v.size == 0:
        return None
    means = v[rng.integers(0, v.size, size=(resamples, v.size))].mean(axis=1)
    return [float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))]


def _compare(
    run: str, m: str, x: np.ndarray, b: np.ndarray, higher_better: bool, rng: np.random.Generator
) -> dict[str, Any]:
    from scipy import stats

    ok = ~(np.isnan(x) | np.isnan(b))
    d = x[ok] - b[ok]
    if d.size > 1 and np.any(d != d[0]):
        p = float(stats.ttest_rel(x[ok], b[ok]).pvalue)
    else:
        p = 1.0
    better = d > 0 if higher_better else d < 0
    worse = d < 0 if higher_better else d > 0
    return {
        "run": run,
        "measure": m,
        "mean": _num(float(np.nanmean(x))),
        "baseline_mean": _num(float(np.nanmean(b))),
        "diff": float(d.mean()) if d.size else None,
        "ci": _bootstrap_ci(d, rng),
        "p_value": p,
        "p_adjusted": None,
        "significant": False,
        "wins": int(better.sum()),
        "ties": int((d == 0).sum()),
        "losses": int(worse.sum()),
        "n_queries": int(d.size),
        "n_dropped": int((~ok).sum()),
    }


def _holm(comps: list[dict[str, Any]], alpha: float) -> None:
    order = sorted(range(len(comps)), key=lambda i: comps[i]["p_value"])
    n = len(comps)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (n - rank) * comps[i]["p_value"]))
        comps[i]["p_adjusted"] = running
        comps[i]["significant"] = running <= alpha


@functools.lru_cache(maxsize=1)
def _verdicts(pairs) -> dict[str, int]:
    """diagnose's rule written out: PROC NA undefined; PROC < 0.8 and %PROC < 0.8 both; PROC < 0.8
    retrieval; %PROC < 0.8 selection."""
    out = {"retrieval": 0, "selection": 0, "both": 0, "healthy": 0, "undefined": 0}
    for p, pct in pairs:
        low_pct = pct is not None and pct < 0.8
        if p is None:
            out["undefined"] += 1
        elif p < 0.8 and low_pct:
            out["both"] += 1
        elif p < 0.8:
            out["retrieval"] += 1
        elif low_pct:
            out["selection"] += 1
        else:
            out["healthy"] += 1
    return out


def _example() -> tuple[dict[str, Any], Any, dict[str, Any]]:
    from ctxeval import parse_measure

    qrels = str(example_path("qrels.txt"))
    run_paths = [str(example_path(f"runs/{name}")) for name in SYSTEMS]
    result = evaluate(qrels, run_paths, EXAMPLE_MEASURES)
    d = result.to_dict(per_query=True)
    measures = d["measures"]  # RAG measures bring Judged@5 with them
    rng = np.random.default_rng(20240611)
    by_name = {r.name: r for r in result.runs}
    for entry in d["runs"]:
        r = by_name[entry["name"]]
        entry["ci"] = {str(m): _bootstrap_ci(r.values[m], rng) for m in result.measures}
    base = by_name[EXAMPLE_BASELINE]
    comps = []
    for r in result.runs:
        if r.name == EXAMPLE_BASELINE:
            continue
        assert r.qids == base.qids
        for m in result.measures:
            comps.append(_compare(r.name, str(m), r.values[m], base.values[m], m.spec.higher_is_better, rng))
    _holm(comps, 0.05)

    # metric@K curves: nDCG and RA-nWG at K = 1..20
    ks = list(range(1, 21))
    curve_ms = [f"nDCG@{k}" for k in ks] + [f"RA-nWG@{k}" for k in ks]
    cres = evaluate(qrels, run_paths, curve_ms)
    series = []
    for fam in ("nDCG", "RA-nWG"):
        for r in cres.runs:
            series.append({"run": r.name, "measure": fam, "values": [_num(r.mean(f"{fam}@{k}")) for k in ks]})
    # 11-point interpolated precision-recall
    levels = [i / 10 for i in range(11)]
    pres = evaluate(qrels, run_paths, [f"IPrec(rel=3)@{lv:g}" for lv in levels])
    pr = [
        {"run": r.name, "precision": [_num(r.mean(str(parse_measure(f"IPrec(rel=3)@{lv:g}")))) for lv in levels]}
        for r in pres.runs
    ]
    # PROC / %PROC at 10, each system against its own pool
    proc_series = []
    for name, pool in SYSTEMS.items():
        pool_path = str(example_path(f"runs/{pool}")) if pool else None
        pr_res = evaluate(qrels, str(example_path(f"runs/{name}")), ["PROC@10", "%PROC@10"], rag={"pool": pool_path})
        rr = pr_res.runs[0]
        pv, cv = rr.values[parse_measure("PROC@10")], rr.values[parse_measure("%PROC@10")]
        per_query = {q: [_num(float(pv[i])), _num(float(cv[i]))] for i, q in enumerate(rr.qids)}
        proc_series.append({"run": rr.name, "per_query": per_query, "verdicts": _verdicts(per_query.values())})

    report = {
        "baseline": EXAMPLE_BASELINE,
        "measures": measures,
        "runs": d["runs"],
        "comparisons": comps,
        "strata": _strata(result, measures, rng),
        "curves": {"ks": ks, "series": series},
        "pr_curves": {"recall": levels, "series": pr},
        "proc": {"k": 10, "thresholds": {"PROC": 0.8, "%PROC": 0.8}, "series": proc_series},
        "distraction": _distraction(result),
        "settings": {
            "test": "t",
            "alpha": 0.05,
            "correction": "holm",
            "permutations": None,
            "resamples": 2000,
            "seed": 20240611,
            "ci_method": "percentile",
            **d["settings"],
        },
    }
    return report, result, {"qrels": qrels, "runs": run_paths}


def _strata(result: Any, measures: list[str], rng: np.random.Generator) -> dict[str, Any]:
    cats: dict[str, set[str]] = {}
    for line in example_path("categories.tsv").read_text(encoding="utf-8").splitlines():
        q, cat = line.split("\t")
        if not cat.startswith("topic:"):
            cats.setdefault(cat, set()).add(q)
    base = result[EXAMPLE_BASELINE]
    out = {}
    for cat in sorted(cats):
        qs = cats[cat]
        mask = np.array([q in qs for q in base.qids])
        runs, comps = [], []
        for r in result.runs:
            agg = {
                str(m): _num(float(np.nanmean(r.values[m][mask]))) if np.any(~np.isnan(r.values[m][mask])) else None
                for m in result.measures
            }
            runs.append(
                {
                    "name": r.name,
                    "aggregate": agg,
                    "valid_queries": {str(m): int((~np.isnan(r.values[m][mask])).sum()) for m in result.measures},
                    "ci": {str(m): _bootstrap_ci(r.values[m][mask], rng) for m in result.measures},
                }
            )
            if r.name != EXAMPLE_BASELINE:
                for m in result.measures:
                    comps.append(
                        _compare(r.name, str(m), r.values[m][mask], base.values[m][mask], m.spec.higher_is_better, rng)
                    )
        _holm(comps, 0.05)
        out[cat] = {
            "source": "file",
            "n_queries": int(mask.sum()),
            "small": bool(mask.sum() < 10),
            "runs": runs,
            "comparisons": comps,
        }
    return out


def _distraction(result: Any, k: int = 5) -> dict[str, Any]:
    """Distractor rate/harm at k from the qrels grades mapped through UTILITY_MAP (unjudged: utility 0)."""
    grades: dict[tuple[str, str], int] = {}
    for line in example_path("qrels.txt").read_text(encoding="utf-8").splitlines():
        q, _, doc, g = line.split()
        grades[(q, doc)] = int(g)
    rows = []
    for r in result.runs:
        path, name = r.source, r.name
        ranked: dict[str, list[tuple[int, str]]] = {}
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            q, _, doc, rank, _score, _tag = line.split()
            ranked.setdefault(q, []).append((int(rank), doc))
        rates, harms, opt, worst = [], [], [], []
        for q in sorted(ranked):
            docs = [doc for _, doc in sorted(ranked[q])]
            u = np.array([UTILITY_MAP.get(grades.get((q, doc), 0), 0.0) for doc in docs])
            top = u[:k]
            rates.append(float(np.sum(top < 0)) / k)
            harms.append(float(np.sum(np.maximum(0.0, -top))))
            cum = np.concatenate([[0.0], np.cumsum(u)])
            opt.append(int(np.argmax(cum)))
            worst.extend((q, docs[i], i + 1, float(u[i])) for i in range(min(k, len(docs))) if u[i] < 0)
        rate = float(np.mean(rates))
        verdict = "SAFE" if rate <= 0.10 else ("RISKY" if rate <= 0.50 else "DANGEROUS")
        worst.sort(key=lambda t: (t[2], t[0], t[1]))
        rows.append(
            {
                "run": name,
                "measures": {
                    "RR(rel=3)": _num(r.mean("RR(rel=3)")),
                    "Harm@5": _num(r.mean("Harm@5")),
                    "DistractorRate@5": rate,
                },
                "distractor_rate": rate,
                "distractor_harm": float(np.mean(harms)),
                "verdict": verdict,
                "optimal_k": {"mean": float(np.mean(opt)), "median": float(np.median(opt))},
                "hidden_harm": None,
                "worst_distractors": [
                    {"query": q, "doc": doc, "rank": rank, "utility": u, "why": "label"}
                    for q, doc, rank, u in worst[:5]
                ],
            }
        )
    return {
        "k": k,
        "rules": {"preset": "default"},
        "utility_map": {str(g): v for g, v in UTILITY_MAP.items()},
        "utility_source": "labels",
        "rows": rows,
    }


def example_report() -> dict[str, Any]:
    """A fresh deep copy of the example report (tests may modify it)."""
    return copy.deepcopy(_example()[0])


def example_result() -> Any:
    """The :class:`ctxeval.Result` the example report's runs come from."""
    return _example()[1]


def example_inputs() -> dict[str, Any]:
    return dict(_example()[2])


# --------------------------------------------------------------------------------------------------
# hostile names
# --------------------------------------------------------------------------------------------------

#: strings that would run code if they reached the page unescaped; each sets window.__xss and alerts
PAYLOADS = (
    "<script>window.__xss=1;alert(1)</script>",
    '"><img src=x onerror="window.__xss=2;alert(1)">',
    '\'><svg onload="window.__xss=3;alert(1)"></svg>',
    "</title></style><script>window.__xss=4;alert(1)</script>",
    "<a href=javascript:alert(1)>x</a><iframe srcdoc='<script>parent.__xss=5</script>'></iframe>",
    "-->&lt;<!--<img src=x onerror=window.__xss=6>",
)


def payload_report() -> dict[str, Any]:
    """The hand report with every name, id and free text replaced by a payload.

    Runs ``base``/``better``/``worse`` become PAYLOADS[0..2] (+ a suffix), queries q1..q4 become
    payload-laden ids, docs d3/d7/d9 too, the measure ``MyScore@3`` is renamed to a payload, and
    settings, stratum names, verdicts and 'why' texts carry payloads as well.
    """
    rep = hand_report()
    runs = {BASE: PAYLOADS[0] + " base", GOOD: PAYLOADS[1] + " better", BAD: PAYLOADS[2] + " worse"}
    qids = {f"q{i}": f"{PAYLOADS[(i + 2) % len(PAYLOADS)]} q{i}" for i in range(1, 5)}
    docs = {"d3": PAYLOADS[3] + " d3", "d7": PAYLOADS[4] + " d7", "d9": PAYLOADS[5] + " d9"}
    measure = {"MyScore@3": PAYLOADS[1] + "@3"}

    def m(name: str) -> str:
        return measure.get(name, name)

    rep["baseline"] = runs[rep["baseline"]]
    rep["measures"] = [m(x) for x in rep["measures"]]
    for r in rep["runs"]:
        r["name"] = runs[r["name"]]
        r["path"] = PAYLOADS[4]
        for key in ("aggregate", "valid_queries", "ci"):
            r[key] = {m(k): v for k, v in r[key].items()}
        r["per_query"] = {qids[q]: {m(k): v for k, v in vals.items()} for q, vals in r["per_query"].items()}
        r["queries"] = {PAYLOADS[0]: PAYLOADS[1]}
    for c in rep["comparisons"]:
        c["run"], c["measure"] = runs[c["run"]], m(c["measure"])
    strata = {}
    for i, (name, st) in enumerate(rep["strata"].items()):
        for r in st["runs"]:
            r["name"] = runs[r["name"]]
            for key in ("aggregate", "valid_queries", "ci"):
                if r[key] is not None:
                    r[key] = {m(k): v for k, v in r[key].items()}
        for c in st["comparisons"]:
            c["run"], c["measure"] = runs[c["run"]], m(c["measure"])
        st["source"] = PAYLOADS[5]
        strata[f"{PAYLOADS[i]} {name}"] = st
    rep["strata"] = strata
    for s in rep["curves"]["series"]:
        s["run"] = runs[s["run"]]
        s["measure"] = PAYLOADS[3] + s["measure"]
    for s in rep["pr_curves"]["series"]:
        s["run"] = runs[s["run"]]
    for s in rep["proc"]["series"]:
        s["run"] = runs[s["run"]]
        s["per_query"] = {qids[q]: v for q, v in s["per_query"].items()}
    dist = rep["distraction"]
    dist["rules"] = {"preset": PAYLOADS[2]}
    dist["utility_source"] = PAYLOADS[0]
    for row in dist["rows"]:
        row["run"] = runs[row["run"]]
        row["verdict"] = PAYLOADS[3] if row["verdict"] == "DANGEROUS" else row["verdict"]
        row["measures"][PAYLOADS[5]] = 0.5
        for w in row["worst_distractors"]:
            w["query"], w["doc"], w["why"] = qids[w["query"]], docs[w["doc"]], PAYLOADS[1]
    rep["settings"] = {**rep["settings"], "qrels": PAYLOADS[0], PAYLOADS[2]: [PAYLOADS[3], {"x": PAYLOADS[4]}]}
    return rep
