"""The site's figures and suggestions hold: the distraction guide's table of the bundled example is
what ``distraction_table`` computes, every grade map of the concepts page's grade-scale table parses
onto 1-5, and the RAG guide's walk gives the answers the planted truth implies."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxeval import GradeMap, distraction_table
from ctxeval._demo import example_path

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _section(page: str, title: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8").split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_distraction_guide_s_table_is_the_example_s() -> None:
    text = _section("guides/distraction.md", "Distraction-aware evaluation")
    rows = [line.strip("|").split("|") for line in text.splitlines() if re.match(r"\| (bm25|rrf)", line)]
    assert len(rows) == 3
    runs = [str(example_path(f"runs/{r[0].strip()}.run")) for r in rows]
    t = distraction_table(
        str(example_path("qrels.txt")), runs, 5, utility={"distractors": str(example_path("distractors.txt"))}
    )
    for cells, row in zip(rows, t["rows"]):
        name, ndcg, ddcg, udcg, rate, harm, verdict, opt, hidden = (c.strip() for c in cells)
        assert name == row["run"]
        m = row["measures"]
        assert (ndcg, ddcg, udcg) == (f"{m['nDCG@5']:.3f}", f"{m['dDCG@5']:.3f}", f"{m['UDCG@5']:.3f}")
        assert (rate, harm, verdict) == (
            f"{row['distractor_rate']:.3f}",
            f"{row['distractor_harm']:.2f}",
            row["verdict"],
        )
        assert opt == f"{row['optimal_k']['mean']:.2f} / {row['optimal_k']['median']:g}"
        assert hidden == f"{row['hidden_harm']:.3f}"


@pytest.mark.parametrize("text", re.findall(r"\| `([0-9:,]+|trec-dl)`", _section("concepts.md", "Grade scales")))
def test_every_suggested_grade_map_lands_on_the_1_5_scale(text: str) -> None:
    gm = GradeMap.parse(text)
    assert gm.mapping and all(1 <= v <= 5 for v in gm.mapping.values())
    assert max(gm.mapping.values()) == 5  # the top grade of the source is decisive


@pytest.mark.slow
def test_the_rag_guide_s_sample_walk_runs_as_written(tmp_path: Path) -> None:
    """The walk's commands, run one by one as a shell runs them, on the planted corpus of the scenario
    test (bm25.jsonl: the weak pipeline, dense.jsonl: the good one), each giving the answer the planted
    truth implies."""
    import os
    import shutil
    import subprocess
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent / "scenario"))
    import planted

    files = planted.write(planted.make(), tmp_path)
    shutil.copy(files["refs_weak.jsonl"], tmp_path / "bm25.jsonl")
    shutil.copy(files["refs_good.jsonl"], tmp_path / "dense.jsonl")
    block = re.search(r"```bash\n(.*?)```", _section("guides/rag.md", "The walk"), re.S)
    assert block
    commands = [line.split("  #")[0].strip() for line in block.group(1).splitlines() if not line.startswith("#")]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}
    out = []
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode == (1 if command.startswith("ctxeval calibrate") else 0), (command, done.stderr)
        out.append(done.stdout + done.stderr)
    _, compare, diagnose, blind, _, _, _, judged, calibrate = out  # (0: ctxeval demo --samples writes the two files)
    assert "▲" in compare.split("dense", 1)[1].split("\n", 2)[0]  # dense significantly better than bm25
    assert "fix the reranker first: 18 selection vs 6 retrieval failures" in diagnose
    assert "bm25: no verdict" in blind and "judge utility --samples" in blind
    rows: dict[str, str] = {}
    for line in judged.splitlines():  # the distraction table first, then the worst distractors
        if line.startswith("│ "):
            rows.setdefault(line.split()[1], line)
    assert "DANGEROUS" in rows["bm25"] and "SAFE" in rows["dense"]  # planted rates 2/3 and 0
    assert "use the top 3 passages" in calibrate  # the planted best K
