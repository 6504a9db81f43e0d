"""What the gate's verdicts say (issue 29, point 10): a drop beyond the tolerance that is not significant
is inconclusive, not holds; identical runs say there is no change at all; the annotation levels are the
CI guide's; a power question about a drop at the tolerance gets the reason it can never be flagged; runs
that share a tag are named by their files, and NAME=RUN names the candidate."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli
from shared_data import shared_folder

ROOT = Path(__file__).resolve().parents[2]


def shared_real() -> Path | None:
    """``real/`` in the shared data folder (see tests/shared_data.py), or None where it is absent."""
    real = shared_folder() / "real"
    return real if (real / "dl20").is_dir() else None


REAL = shared_real()
needs_real = pytest.mark.skipif(REAL is None, reason="../shared/data/real (TREC DL19/DL20 runs) is absent")


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def _files(tmp: Path, n: int, moved: set[int], tag_base: str = "rank", tag_new: str = "rank") -> dict[str, Path]:
    """qrels with one relevant doc per query; the base run has it at rank 1, the candidate at rank 2 on
    the queries in ``moved`` (RR drops by 0.5 there, exactly)."""
    qrels, base, new = [], [], []
    for i in range(n):
        q = f"q{i:03d}"
        qrels.append(f"{q} 0 rel 1\n")
        base += [f"{q} Q0 rel 1 3 {tag_base}\n", f"{q} Q0 x 2 2 {tag_base}\n"]
        first, second = ("x", "rel") if i in moved else ("rel", "x")
        new += [f"{q} Q0 {first} 1 3 {tag_new}\n", f"{q} Q0 {second} 2 2 {tag_new}\n"]
    out = {"qrels": tmp / "qrels.txt", "base": tmp / "main.run", "new": tmp / "new.run"}
    for key, lines in (("qrels", qrels), ("base", base), ("new", new)):
        out[key].write_text("".join(lines))
    return out


def test_a_drop_beyond_the_tolerance_that_is_not_significant_is_inconclusive(tmp_path):
    # 40 queries, 3 of them lose half their RR: the mean drops by 0.0375, beyond the 0.02 tolerated,
    # but three queries are not evidence of it (p well above 0.05)
    f = _files(tmp_path, 40, {3, 17, 31})
    base = ctxeval.snapshot(str(f["qrels"]), str(f["base"]), ["RR"])
    rep = ctxeval.gate(base, str(f["qrels"]), str(f["new"]), max_drop={"RR": 0.02})
    row = rep.row("RR")
    assert row.change == pytest.approx(-0.0375) and row.p_adjusted > 0.05 and row.low < -0.02 < row.high
    assert row.verdict == "inconclusive" and rep.exit_code == 0
    table = rep.to_table()
    assert "INCONCLUSIVE: RR dropped beyond the tolerance, not significantly" in table and "HOLDS" not in table
    assert rep.to_annotations().startswith("::warning title=ctxeval gate%3A RR::RR: inconclusive")
    # within the tolerance: holds
    rep = ctxeval.gate(base, str(f["qrels"]), str(f["new"]), max_drop={"RR": 0.05})
    assert rep.row("RR").verdict == "holds" and "HOLDS" in rep.to_table()


@needs_real
def test_the_dl20_case_of_the_issue_reads_inconclusive(tmp_path):
    qrels, runs = REAL / "dl20" / "qrels.dl20-passage.txt", REAL / "dl20" / "runs"
    base = ctxeval.snapshot(str(qrels), str(runs / "spladepp_ed.top100.txt"), ["nDCG@10"])
    rep = ctxeval.gate(base, str(qrels), str(runs / "tasb.top100.txt"), max_drop={"nDCG@10": 0.02})
    row = rep.row("nDCG@10")
    assert round(row.change, 4) == -0.0343 and row.verdict == "inconclusive" and rep.exit_code == 0
    assert row.low < -0.02 < row.high
    # both runs carry the tag "rank": the report names them by their files
    assert (rep.baseline, rep.candidate) == ("spladepp_ed.top100", "tasb.top100")
    assert "rank against the baseline rank" not in rep.to_table()


def test_identical_runs_say_there_is_no_change_at_all(tmp_path):
    f = _files(tmp_path, 43, set())
    base = ctxeval.snapshot(str(f["qrels"]), str(f["base"]), ["RR", "nDCG@10"])
    rep = ctxeval.gate(base, str(f["qrels"]), str(f["base"]), max_drop=0.02)
    text = rep.to_table()
    assert "too few" not in text, text
    for m in ("RR", "nDCG@10"):
        assert rep.row(m).verdict == "holds" and rep.row(m).change == 0.0
        assert f"{m}: no change at all: the runs agree on every one of the 43 queries" in text, text


def _guide_levels() -> dict[str, str]:
    """The annotation level the CI guide promises for each verdict."""
    text = (ROOT / "docs" / "guides" / "ci.md").read_text(encoding="utf-8")
    sentence = text.split("`--annotations` prints", 1)[1].split(";", 1)[0]
    levels = {}
    for level, what in re.findall(r"`::(\w+)` for ([^`]+?)(?:,|$)", sentence):
        for verdict in ("significant drop", "untested", "inconclusive", "holds"):
            if verdict in what:
                levels[verdict] = level
    return levels


def test_annotation_levels_are_the_guide_s(tmp_path):
    guide = _guide_levels()
    assert set(guide) == {"significant drop", "untested", "inconclusive", "holds"}, guide
    f = _files(tmp_path, 43, {3, 17, 31})
    base = ctxeval.snapshot(str(f["qrels"]), str(f["base"]), ["RR"])
    got = {}
    for tolerated, verdict in ((0.04, "holds"), (0.02, "inconclusive")):
        rep = ctxeval.gate(base, str(f["qrels"]), str(f["new"]), max_drop={"RR": tolerated})
        assert rep.row("RR").verdict == verdict and not rep.row("RR").enough  # 43 queries: too few to tell
        got[verdict] = rep.to_annotations().split()[0].strip(":")
    many = _files(tmp_path, 60, set(range(0, 60, 2)))
    base = ctxeval.snapshot(str(many["qrels"]), str(many["base"]), ["RR"])
    rep = ctxeval.gate(base, str(many["qrels"]), str(many["new"]), max_drop={"RR": 0.02})
    assert rep.row("RR").verdict == "drop"
    got["significant drop"] = rep.to_annotations().split()[0].strip(":")
    base = replace(base, queries=[base.queries[0]] + [f"gone{i}" for i in range(1, len(base.queries))])
    rep = ctxeval.gate(base, str(many["qrels"]), str(many["new"]), max_drop={"RR": 0.02})
    got["untested"] = rep.to_annotations().split()[0].strip(":")
    assert got == guide
    _code, out = _cli("gate", "--help")
    assert (
        "::error for a significant drop or an untested measure, ::warning for an inconclusive one, ::notice"
        in " ".join(out.split())
    )


def test_power_for_a_drop_at_the_tolerance_says_it_can_never_be_flagged(tmp_path):
    f = _files(tmp_path, 50, {3, 17, 31})
    _cli("snapshot", str(f["qrels"]), str(f["base"]), "-m", "nDCG@10", "-o", str(tmp_path / "b.json"))
    for drop in ("0.02", "0.01"):
        code, out = _cli("power", str(tmp_path / "b.json"), "--drop", drop, "--max-drop", "nDCG@10=0.02")
        assert code == 0, out
        assert "no practical number" not in out and "never flags this one, with any number of queries" in out, out
        assert "--drop 0.04" in out, out
    (plan,) = ctxeval.power(str(tmp_path / "b.json"), drop=0.02, max_drop={"nDCG@10": 0.02})
    assert plan.needed is None and plan.never and "at the tolerated drop (0.02)" in plan.never
    (plan,) = ctxeval.power(
        str(tmp_path / "b.json"), str(f["qrels"]), str(f["new"]), drop=0.03, max_drop={"nDCG@10": 0.02}
    )
    assert plan.never is None and plan.needed


def test_runs_sharing_a_tag_are_named_by_their_files_and_name_equals_file_names_them(tmp_path):
    f = _files(tmp_path, 40, {3})
    code, out = _cli("snapshot", str(f["qrels"]), str(f["base"]), "-m", "RR", "-o", str(tmp_path / "b.json"))
    assert code == 0 and "baseline of rank (main):" in out, out
    code, out = _cli("gate", str(tmp_path / "b.json"), str(f["qrels"]), str(f["new"]), "--max-drop", "RR=0.02")
    assert out.startswith("ctxeval gate: new against the baseline main:"), out
    assert "named by their files instead (main, new)" in out, out
    code, out = _cli(
        "gate", str(tmp_path / "b.json"), str(f["qrels"]), f"reranker-v2={f['new']}", "--max-drop", "RR=0.02"
    )
    assert out.startswith("ctxeval gate: reranker-v2 against the baseline rank:"), out
    code, out = _cli("snapshot", str(f["qrels"]), f"prod={f['base']}", "-m", "RR", "-o", str(tmp_path / "p.json"))
    code, out = _cli("gate", str(tmp_path / "p.json"), str(f["qrels"]), str(f["new"]), "--max-drop", "RR=0.02")
    assert out.startswith("ctxeval gate: rank against the baseline prod:"), out
    # documented: in the command's help and the CI guide
    code, out = _cli("gate", "--help")
    assert "[[NAME=]RUN]" in out and "NAME=RUN names the candidate" in " ".join(out.split())
    assert "NAME=" in (ROOT / "docs" / "guides" / "ci.md").read_text(encoding="utf-8")
