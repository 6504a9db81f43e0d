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


def demo_report() -> str:
    from ._evaluate import evaluate
    from ._output import render

    qrels = example_path("qrels.txt")
    runs = example_runs()
    lines = [
        "ctxeval demo: the bundled example (passages on several topics, graded 1-5)",
        f"  qrels: {qrels}",
        f"  runs:  {', '.join(p.name for p in runs)}",
        "",
        "Rank view: classical measures (trec_eval semantics; relevant = grade >= 3 here)",
    ]
    measures = [m if m.startswith("Judged") else _with_rel(m, 3) for m in CLASSICAL]
    result = evaluate(qrels, [str(p) for p in runs], measures)
    lines.append(render(result, "table"))
    return "\n".join(lines)


def _with_rel(name: str, rel: int) -> str:
    base, at, cut = name.partition("@")
    return f"{base}(rel={rel}){at}{cut}" if base != "nDCG" else name
