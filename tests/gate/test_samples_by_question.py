"""The gate pairs RAGAS text-only sample sets by their questions (issue 29 point 14's leftover): a
baseline made from a file without query_id keeps each sample's question, and a candidate file whose
rows come in another order (a filtered or asynchronous export) gives the same verdict and figures as
the same rows in order; files that disagree on their questions are refused, naming the rows.

The truth is planted (the RAG guide's corpus): the good pipeline ranks a reference first on every
question; the weak one on the H questions only, a reference at rank 3 on the others."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli
from scenario import planted

MEASURES = ["RR", "IDBasedContextRecall"]


def _rows(p: Path) -> list[dict]:
    return [json.loads(line) for line in p.read_text().splitlines()]


def _write(p: Path, rows: list[dict]) -> Path:
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = planted.write(planted.make(), tmp_path)
    rows = _rows(out["ragas_weak.jsonl"])
    out["shuffled"] = _write(tmp_path / "weak_shuffled.jsonl", random.Random(11).sample(rows, len(rows)))
    good = _rows(out["ragas_good.jsonl"])
    out["good_shuffled"] = _write(tmp_path / "good_shuffled.jsonl", random.Random(12).sample(good, len(good)))
    return out


def _figures(rep: ctxeval.GateReport) -> list[tuple]:
    return [(r.measure, r.n, r.change, r.p_value, r.p_adjusted, r.low, r.high, r.verdict) for r in rep.rows]


def test_a_candidate_in_another_order_gives_the_same_verdict_and_figures(
    files: dict[str, Path], tmp_path: Path
) -> None:
    corpus = planted.make()
    base = ctxeval.snapshot(samples=str(files["ragas_good.jsonl"]), measures=MEASURES)
    assert base.questions is not None and len(base.questions) == len(corpus.qids)
    margins = {"RR": 0.02, "IDBasedContextRecall": 0.02}
    in_order = ctxeval.gate(base, samples=str(files["ragas_weak.jsonl"]), max_drop=margins)
    shuffled = ctxeval.gate(base, samples=str(files["shuffled"]), max_drop=margins)
    assert _figures(shuffled) == _figures(in_order)
    assert shuffled.exit_code == in_order.exit_code == 1
    # the planted truth, question by question: RR 1 -> 1 (H) or 1/3 (S, Rt); recall@10 1 -> 1, or 1/3 (Rt)
    n = len(corpus.qids)
    rr = sum(0.0 if c == "H" else 1 / 3 - 1 for c in corpus.cls.values()) / n
    recall = sum(1 / 3 - 1 if c == "Rt" else 0.0 for c in corpus.cls.values()) / n
    assert shuffled.row("RR").change == pytest.approx(rr, abs=1e-12)
    assert shuffled.row("IDBasedContextRecall").change == pytest.approx(recall, abs=1e-12)
    assert any("paired by their questions" in n for n in shuffled.notes)
    # a baseline made from the good rows in another order, through its file: the same again
    other = ctxeval.snapshot(samples=str(files["good_shuffled"]), measures=MEASURES)
    other.write(tmp_path / "base.json")
    again = ctxeval.gate(str(tmp_path / "base.json"), samples=str(files["shuffled"]), max_drop=margins)
    assert _figures(again) == _figures(in_order)
    (plan,) = ctxeval.power(str(tmp_path / "base.json"), samples=str(files["shuffled"]), max_drop={"RR": 0.02})
    (plan_in_order,) = ctxeval.power(base, samples=str(files["ragas_weak.jsonl"]), max_drop={"RR": 0.02})
    assert (plan.n, plan.sd) == (plan_in_order.n, plan_in_order.sd)


def test_the_command_line_gives_the_same_report(files: dict[str, Path], tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    made = CliRunner().invoke(
        cli, ["snapshot", "--samples", str(files["ragas_good.jsonl"]), "-m", "RR", "-o", str(base)]
    )
    assert made.exit_code == 0, made.output
    assert len(json.loads(base.read_text())["questions"]) == 40
    got = {}
    for name in ("ragas_weak.jsonl", "shuffled"):
        res = CliRunner().invoke(
            cli, ["gate", str(base), "--samples", f"weak={files[name]}", "--max-drop", "RR=0.02", "--format", "json"]
        )
        assert res.exit_code == 1, res.output
        got[name] = json.loads(res.stdout)["measures"]
    assert got["shuffled"] == got["ragas_weak.jsonl"]


def test_files_that_disagree_are_refused_naming_the_rows(files: dict[str, Path], tmp_path: Path) -> None:
    base = ctxeval.snapshot(samples=str(files["ragas_good.jsonl"]), measures=["RR"])
    rows = _rows(files["shuffled"])
    missing = _write(tmp_path / "missing.jsonl", rows[1:])
    asked = rows[0]["user_input"]
    with pytest.raises(
        ctxeval.InputError, match=r"1 question\(s\) of the baseline <baseline> \(line-\d+: '" + asked[:10]
    ):
        ctxeval.gate(base, samples=str(missing), max_drop={"RR": 0.02})
    twice = _write(tmp_path / "twice.jsonl", [*rows[:-1], {**rows[-1], "user_input": rows[0]["user_input"]}])
    with pytest.raises(ctxeval.InputError, match=r"twice\.jsonl: samples line-1 and line-40 ask the same question"):
        ctxeval.gate(base, samples=str(twice), max_drop={"RR": 0.02})
    by_id = _write(tmp_path / "by_id.jsonl", [{**r, "query_id": f"q{i}"} for i, r in enumerate(rows)])
    with pytest.raises(
        ctxeval.InputError, match=r"names its samples by position \(no query_id\) and .*by_id\.jsonl by"
    ):
        ctxeval.gate(base, samples=str(by_id), max_drop={"RR": 0.02})
    # a baseline named by query id, a candidate by position
    named = ctxeval.snapshot(samples=str(by_id), measures=["RR"])
    assert named.questions is None
    with pytest.raises(ctxeval.ConfigError, match=r"weak_shuffled\.jsonl names its samples by position"):
        ctxeval.gate(named, samples=str(files["shuffled"]), max_drop={"RR": 0.02})
    # a file without query_id whose samples lack a question cannot be paired: its snapshot says so
    no_q = _write(tmp_path / "no_q.jsonl", [{k: v for k, v in r.items() if k != "user_input" or i > 1}
                                             for i, r in enumerate(rows)])  # fmt: skip
    with pytest.raises(ctxeval.ConfigError, match=r"no_q\.jsonl: samples line-1, line-2 have no question"):
        ctxeval.snapshot(samples=str(no_q), measures=["RR"])


def test_a_baseline_file_s_questions_are_checked(files: dict[str, Path], tmp_path: Path) -> None:
    base = ctxeval.snapshot(samples=str(files["ragas_good.jsonl"]), measures=["RR"])
    doc = base.to_dict()
    for questions, error in (
        ({k: v for k, v in doc["questions"].items() if k != "line-7"}, "not a mapping of line-1 .. line-n"),
        ({**doc["questions"], "line-3": 3}, "not a mapping of line-1 .. line-n"),
        ({f"line-{i}": "q" for i in range(1, 40)}, "baseline query 'line-40' has no question"),
    ):
        (tmp_path / "b.json").write_text(json.dumps({**doc, "questions": questions}))
        with pytest.raises(ctxeval.FormatError, match=error):
            ctxeval.Baseline.read(tmp_path / "b.json")
