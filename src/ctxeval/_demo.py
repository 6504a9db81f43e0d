"""``ctxeval demo``: the main job on the bundled example data set, as a readable report."""

from __future__ import annotations

import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

from ._calibrate import calibrate
from ._context.settings import RagConfig
from ._context.utility import UtilityConfig
from ._diagnose import diagnose
from ._distraction import distraction_table
from ._errors import CtxevalError, DependencyError
from ._evaluate import Result, evaluate
from ._io.writers import write_text
from ._judge.cache import Cache
from ._judge.client import LexicalJudge
from ._judge.labels import JudgeOptions, grades, items_from_runs
from ._judge.verbs import agreement
from ._render.diagnose import render as render_diagnosis
from ._render.distraction import render_distraction
from ._render.text import render

__all__ = ["demo_report", "example_path", "example_runs"]

CLASSICAL = ("nDCG@10", "RR", "AP", "P@5", "R@50", "Judged@10")


def example_path(name: str = "") -> Path:
    """Path of a file of the bundled example (``qrels.txt``, ``runs/bm25.run``, ...)."""
    base = Path(str(resources.files("ctxeval") / "data" / "example"))
    path = base / name if name else base
    if not path.exists():
        raise CtxevalError(f"the bundled example has no {name or 'data'} (looked in {base})")
    return path


def example_runs() -> list[Path]:
    """The example's final runs (pools first), sorted by file name."""
    return sorted(example_path("runs").glob("*.run"))


SET_VIEW = ("RA-nWG@5", "RA-nWG@10", "N-Recall4+@10", "Precision4+@5", "Harm@5", "PROC@10", "%PROC@10")
#: the example's systems: final ordering -> the retrieval pool it reranks (None: the run is its own pool)
SYSTEMS = {
    "bm25.run": None,
    "tfidf.run": None,
    "rrf.run": None,
    "bm25-rerank.run": "bm25.run",
    "rrf-rerank.run": "rrf.run",
}


def demo_report(html: str | Path | None = None, policy: str | Path | None = None) -> str:
    """The demo's text. With ``html``, section 6 compares the runs with bm25 (paired randomization
    tests, bootstrap CIs, strata by query category) and writes the self-contained HTML report there;
    with ``policy``, section 5 writes the policy of the run with the best held-out objective there."""
    qrels = example_path("qrels.txt")
    runs = [example_path(f"runs/{name}") for name in SYSTEMS]
    lines = [
        "ctxeval demo: the bundled example (337 passages on 8 topics, 50 queries, graded 1-5)",
        f"  qrels: {qrels}",
        "  systems: bm25, tfidf, rrf (first-stage runs, each its own pool);",
        "           bm25-rerank and rrf-rerank (reranked orderings of the bm25 and rrf top-50 pools)",
        "",
        "1. Rank view: classical measures (trec_eval semantics; relevant = grade >= 3 here)",
    ]
    measures = [m if m.startswith("Judged") else _with_rel(m, 3) for m in CLASSICAL]
    result = evaluate(qrels, [str(p) for p in runs], measures)
    lines.append(render(result, "table"))
    lines.append("2. Set view: what the LLM's K slots hold (RA-nWG family, PROC = best possible from the pool)")
    parts = []
    for path in runs:
        pool = SYSTEMS[path.name]
        parts.append(
            evaluate(
                qrels, str(path), SET_VIEW, rag=RagConfig(pool=str(example_path(f"runs/{pool}")) if pool else None)
            )
        )
    merged = Result(parts[0].measures, [r for p in parts for r in p.runs], parts[0].settings)
    lines.append(render(merged, "table"))
    lines.append("3. Fix the retriever or the reranker? (rrf-rerank over the rrf pool, K = 5)")
    report = diagnose(qrels, str(example_path("runs/rrf-rerank.run")), pool=str(example_path("runs/rrf.run")), k=5)
    lines.append(render_diagnosis(report, "table"))
    lines.extend(_distraction_section(qrels, runs, Path(policy) if policy is not None else None))
    if html is not None:
        lines.extend(_html_section(qrels, runs, Path(html)))
    lines.extend(_samples_section(result))
    lines.extend(_judge_section(qrels))
    return "\n".join(lines)


def _judge_section(qrels: Path) -> list[str]:
    """Section 8: labels from a judge (the offline lexical heuristic here), and the agreement
    statistics that decide whether they may replace people's."""
    runs = [example_path(f"runs/{n}.run") for n in ("bm25", "rrf", "rrf-rerank")]
    items, counts = items_from_runs(runs, example_path("queries.jsonl"), example_path("passages.jsonl"), 5)
    with tempfile.TemporaryDirectory() as tmp:
        with Cache(Path(tmp) / "judgments.sqlite") as cache:
            got, tally = grades(LexicalJudge(), items, cache, JudgeOptions())
        judged = Path(tmp) / "judged.qrels"
        judged.write_text(
            "".join(f"{it.query_id} 0 {it.doc_id} {o.value}\n" for it, o in got if o.decided), encoding="utf-8"
        )
        card = agreement(qrels, judged, [str(r) for r in runs], measure="nDCG@5")
    k, r = card.labels["kappa"], card.ranking or {}
    return [
        "8. No human labels? A judge grades the pool, and agreement says how far to trust it",
        f"  ctxeval judge grade RUN ... --queries Q --passages P --depth 5 --judge lexical   "
        f"({counts['pairs']} pairs over {counts['queries']} queries)",
        f"  {tally.line()}",
        f"  ctxeval agreement qrels.txt judged.qrels RUN ... : kappa {k['kappa']:.2f} (quadratic "
        f"{k['kappa_quadratic']:.2f}), exact agreement {k['exact_agreement']:.0%}; system ranking by nDCG@5: "
        f"Kendall's tau {r['kendall_tau']:.2f}",
        f"  verdict: {card.verdict['text']}",
        "  The word-overlap heuristic agrees poorly with the people who wrote qrels.txt: its labels are a first",
        "  look. Point --judge-url / --model at a model (OpenAI, vLLM, Ollama, llama.cpp) and read its judge",
        "  card (ctxeval agreement) the same way before letting it replace human labels.",
        "",
    ]


def _samples_section(classical: Any) -> list[str]:
    """Section 7: the same pipeline as a sample set (samples.jsonl: rrf-rerank's top 10 with the
    judgments), the way a team without TREC files starts."""
    path = example_path("samples.jsonl")
    res = evaluate(samples=str(path), measures=["ContextPrecision(rel=3)", "ContextRecall(rel=3)", "nDCG@10"])
    trec = next(r for r in classical.runs if r.name == "rrf-rerank").mean("nDCG@10")
    return [
        "7. No qrels? The same pipeline as a sample set (retrieved chunk ids + the ids that should be there)",
        f"  ctxeval evaluate --samples {path} -m 'ContextPrecision(rel=3)' ...",
        render(res, "table").rstrip("\n"),
        f"  nDCG@10 through the samples ({res.runs[0].mean('nDCG@10'):.4f}) is rrf-rerank's from the TREC files "
        f"({trec:.4f}): one engine, either input.",
        "",
    ]


COMPARE_VIEW = ("nDCG@10", "RA-nWG@5", "%PROC@10", "dDCG@5", "DistractorRate@5")


def _html_section(qrels: Path, runs: list[Path], out: Path) -> list[str]:
    from ._render.report import compare  # looked up when it runs (tests stand a stub in for it)

    lines = ["6. Did a change help? Paired tests against bm25 (randomization test, Holm; 95% bootstrap CIs)"]
    report = compare(
        qrels,
        [str(p) for p in runs],
        COMPARE_VIEW,
        baseline="bm25",
        strata=str(example_path("categories.tsv")),
        utility=UtilityConfig.resolve(distractors=str(example_path("distractors.txt"))),
    )
    for c in report.to_dict()["comparisons"]:
        if c["significant"]:
            lines.append(
                f"  {c['run']:<12} {c['measure']:<17} {c['diff']:+.4f} [{c['ci'][0]:+.4f}, {c['ci'][1]:+.4f}]  p_adj {c['p_adjusted']:.4f}"
            )
    lines.append("  (only significant differences are listed; 'ctxeval compare' prints them all)")
    try:
        page = report.to_html()
    except DependencyError as exc:
        lines.append(f"  HTML report not written: {exc}")
        return [*lines, ""]

    write_text(out, page)  # atomically, as every output
    lines.append(f"  HTML report (self-contained, opens offline): {out.resolve()}")
    return [*lines, ""]


def _distraction_section(qrels: Path, runs: list[Path], policy_out: Path | None = None) -> list[str]:
    """Sections 4 and 5: distraction at K = 5 with the known distractors, and each run's calibrated
    runtime policy (K_max, tau) with its cross-validated gain over the best fixed K; the policy of the
    run with the best held-out objective is written to ``policy_out`` when it beats its fixed K."""
    known = UtilityConfig.resolve(distractors=str(example_path("distractors.txt")))
    lines = ["4. Distraction: passages that pull the LLM off (utility < 0), which rank metrics do not see (K = 5)"]
    table = distraction_table(qrels, [str(p) for p in runs], 5, utility=known, worst=2)
    lines.append(render_distraction(table, "table", brief=True))
    rows = table["rows"]
    worst = max(rows, key=lambda r: (r["distractor_rate"], r["run"]))
    recall = evaluate_recall(qrels, runs)
    best_recall = max(recall.values())
    leaders = sorted(n for n, v in recall.items() if v == best_recall)
    lines.append(
        f"  Recall of grade >= 4 passages in the top 50 is highest for {', '.join(leaders)} ({best_recall:.4f}); "
        f"the most dangerous run at K = 5 is {worst['run']} ({worst['verdict']}, distractor rate {worst['distractor_rate']:.4f})."
    )
    lines.append("")
    lines.append(
        "5. Calibrated runtime policy per run: keep candidates in rank order while relative score >= tau, at most K_max"
    )
    lines.append(
        "   (objective: total utility of the selected passages; grid K_max 1..20 x tau 0..0.95; 5-fold CV, seed 0)"
    )
    cals = {path.stem: calibrate(qrels, str(path), k=20, utility=known) for path in runs}
    lines.append("   (per-passage utilities as in section 4)")
    lines.append(f"  {'run':<12} {'K_max':>5} {'tau':>5}  {'held-out':>8}  {'best fixed K':>12}  {'gain':>7}  passages")
    for name, cal in cals.items():
        cv = cal.policy["cross_validation"]
        fixed = f"{cv['objective_at_best_fixed_k']:.4f} (K={cal.policy['in_sample']['best_fixed_k']})"
        lines.append(
            f"  {name:<12} {cal.k_max:>5} {cal.tau:>5g}  {cv['objective']:>8.4f}  {fixed:>12}  {cv['gain']:>+7.4f}  "
            f"{cv['mean_selected']:.2f}"
        )
    for name, cal in cals.items():
        lines.extend(f"  note: {n}" if n.startswith(f"{name}: ") else f"  note ({name}): {n}" for n in cal.notes)
    best = max(cals, key=lambda n: (cals[n].policy["cross_validation"]["objective"], n))
    chosen = cals[best]
    if policy_out is not None and chosen.beats_fixed_k:
        write_text(str(policy_out), chosen.to_json())
        lines.append(
            f"  The best held-out policy is {best}'s (K_max={chosen.k_max}, tau={chosen.tau:g}), written to "
            f"{policy_out.resolve()};"
        )
        lines.append(f"  at serving time: ctxeval.ContextSelector.from_json({str(policy_out)!r}).select(ids, scores)")
    else:
        lines.append(
            f"  The best held-out policy is {best}'s (K_max={chosen.k_max}, tau={chosen.tau:g}); "
            f"'ctxeval calibrate QRELS RUN -k 20 -o policy.json' writes one for ContextSelector.from_json"
        )
    lines.append("")
    return lines


def evaluate_recall(qrels: Path, runs: list[Path]) -> dict[str, float]:
    """Mean recall of grade >= 4 passages in the top 50 (the candidate pool depth) per run."""
    res = evaluate(qrels, [str(p) for p in runs], ["R(rel=4)@50"])
    return {r.name: r.mean("R(rel=4)@50") for r in res.runs}


def _with_rel(name: str, rel: int) -> str:
    base, at, cut = name.partition("@")
    return f"{base}(rel={rel}){at}{cut}" if base != "nDCG" else name
