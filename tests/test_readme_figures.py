"""The README's figures and suggestions hold: the distraction table of the bundled example is what
``distraction_table`` computes, and every grade map of the grade-scale table parses onto 1-5."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ctxeval import GradeMap, distraction_table
from ctxeval._demo import example_path

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    return README.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_readme_distraction_table_is_the_example_s() -> None:
    text = _section("Distraction-aware evaluation")
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


@pytest.mark.parametrize("text", re.findall(r"\| `([0-9:,]+|trec-dl)`", _section("Grade scales")))
def test_every_suggested_grade_map_lands_on_the_1_5_scale(text: str) -> None:
    gm = GradeMap.parse(text)
    assert gm.mapping and all(1 <= v <= 5 for v in gm.mapping.values())
    assert max(gm.mapping.values()) == 5  # the top grade of the source is decisive


def test_the_readme_samples_command_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    from click.testing import CliRunner

    from ctxeval._cli import cli

    block = re.search(r"```bash\n(.*?)```", _section("No qrels? Start from samples"), re.S)
    assert block
    command = " ".join(line for line in block.group(1).replace("\\\n", " ").splitlines() if not line.startswith("#"))
    argv = shlex.split(command)
    assert argv[:3] == ["ctxeval", "evaluate", "--samples"]
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)
    res = CliRunner().invoke(cli, [*argv[1:], "--format", "json"])
    assert res.exit_code == 0, res.output
    assert '"ContextPrecision(rel=3)"' in res.output
