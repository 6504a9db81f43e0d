"""``ctxeval demo``: the main job on the bundled example data set, as a readable report."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from ._errors import CtxevalError

__all__ = ["example_path", "example_runs", "demo_report"]

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
SYSTEMS = {"bm25.run": None, "tfidf.run": None, "rrf.run": None, "bm25-rerank.run": "bm25.run", "rrf-rerank.run": "rrf.run"}


def demo_report() -> str:
    from ._diagnose import diagnose
    from ._evaluate import Result, evaluate
    from ._output import render

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
        parts.append(evaluate(qrels, str(path), SET_VIEW, pool=str(example_path(f"runs/{pool}")) if pool else None))
    merged = Result(parts[0].measures, [r for p in parts for r in p.runs], parts[0].settings)
    lines.append(render(merged, "table"))
    lines.append("3. Fix the retriever or the reranker? (rrf-rerank over the rrf pool, K = 5)")
    report = diagnose(qrels, str(example_path("runs/rrf-rerank.run")), pool=str(example_path("runs/rrf.run")), k=5)
    lines.append(report.render("table"))
    return "\n".join(lines)


def _with_rel(name: str, rel: int) -> str:
    base, at, cut = name.partition("@")
    return f"{base}(rel={rel}){at}{cut}" if base != "nDCG" else name
