"""Calibration without a real optimum (issue 12, point 3): the optimum on the grid's edge, a threshold
that changes nothing, a policy that does not beat the best fixed K on held-out queries."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from ctxeval import calibrate
from ctxeval._calibrate.grid import TAUS, checks, fit
from ctxeval._cli import cli


def _more_always_helps(n_q: int = 20, depth: int = 30) -> tuple[dict, dict]:
    """Every retrieved passage is relevant (grade 5, utility 1): each extra passage adds 1, so the
    best K is the largest tried, and no threshold can help."""
    qrels: dict = {}
    run: dict = {}
    for q in range(n_q):
        qid = f"q{q:02d}"
        docs = [f"{qid}-d{i:02d}" for i in range(depth)]
        qrels[qid] = dict.fromkeys(docs, 5)
        run[qid] = {d: 100.0 - i for i, d in enumerate(docs)}
    return qrels, run


def test_more_passages_always_help_is_said_three_ways() -> None:
    qrels, run = _more_always_helps()
    cal = calibrate(qrels, run, k=20, folds=5)
    # hand: utility of the first L passages = L, so every policy with K_max = 20 and lead >= 20 scores 20
    assert cal.k_max == 20 and cal.policy["in_sample"]["objective"] == 20.0
    assert cal.policy["in_sample"]["best_fixed_k"] == 20 and cal.policy["cross_validation"]["gain"] == 0.0
    assert cal.policy["checks"] == {
        "optimum_at_grid_edge": True,
        "tau_changes_selection": False,
        "beats_best_fixed_k_held_out": False,
        "recommended_fixed_k": 20,
    }
    assert not cal.beats_fixed_k
    assert [n.split(":")[0] for n in cal.notes] == [
        "the optimum lies on the grid's edge",
        f"the threshold tau={cal.tau:g} changes nothing",
        "the policy does not beat the best fixed K on held-out queries (gain 0.0000)",
    ]
    assert "20 passages, the most tried (-k 20), do as well as any fewer" in cal.notes[0]
    assert cal.notes[2].endswith(
        "use the fixed K=20 (the top 20 passages); the policy file is written only with --force"
    )


def test_a_real_optimum_raises_no_check() -> None:
    # 2 useful passages per query at the top (rel 1, ~0.9), then distractors (grade 1) far below
    qrels: dict = {}
    run: dict = {}
    for q in range(20):
        qid = f"q{q:02d}"
        qrels[qid] = {f"{qid}-g0": 5, f"{qid}-g1": 5} | {f"{qid}-b{i}": 1 for i in range(5)}
        run[qid] = {f"{qid}-g0": 10.0, f"{qid}-g1": 9.0 + q / 100} | {f"{qid}-b{i}": 2.0 - i / 10 for i in range(5)}
    cal = calibrate(qrels, run, k=6, folds=5)
    assert (cal.k_max, cal.policy["in_sample"]["objective"]) == (2, 2.0)
    assert cal.policy["checks"]["optimum_at_grid_edge"] is False and cal.notes[:1] != ["the optimum"]
    # tau 0 would give K_max=2 the same: here the policy is a fixed K, and says so; fixed K = 2 ties with it
    assert cal.policy["checks"]["tau_changes_selection"] is False
    assert cal.policy["checks"]["beats_best_fixed_k_held_out"] is False


def _lead(rel: list[float], t: float) -> int:
    """Leading passages with relative score >= t (written out)."""
    n = 0
    while n < len(rel) and rel[n] >= t:
        n += 1
    return n


def test_the_checks_on_a_grid_written_out() -> None:
    # queries of 3 passages; A: utilities 1, -1, -1 (rel 1, .5, .2); B: 1, 1, -1 (rel 1, .9, .1).
    # C[q, L] prefix sums: A 0, 1, 0, -1;  B 0, 1, 2, 1.
    values = np.array([[0.0, 1.0, 0.0, -1.0], [0.0, 1.0, 2.0, 1.0]] * 3)
    rel = ([1.0, 0.5, 0.2], [1.0, 0.9, 0.1])
    lead = np.array([[_lead(r, t) for t in TAUS] for r in rel] * 3)
    assert lead[0, TAUS.index(0.55)] == 1 and lead[1, TAUS.index(0.55)] == 2
    f = fit(values, lead, folds=2, seed=0)
    # policy (K_max 2, tau in (0.5, 0.9]): A 1, B 2 -> mean 1.5; fixed K: K=1 -> 1, K=2 -> (0 + 2) / 2 = 1,
    # K=3 -> 0: the best fixed K is the smallest of the tied, 1; K=3 is worse, so not at the edge
    assert (f.k_max, f.best_fixed_k) == (2, 1) and f.in_sample["objective"] == 1.5
    c = checks(f, lead)
    assert c.at_edge is False and c.tau_changes_selection is True
    assert c.beats_best_fixed_k is (f.cross_validation["gain"] > 0)
    assert c.notes == (() if c.beats_best_fixed_k else c.notes[-1:])


def test_cli_writes_a_policy_without_held_out_gain_only_with_force(tmp_path: Path) -> None:
    qrels, run = _more_always_helps(n_q=10, depth=8)
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    rp.write_text("".join(f"{q} Q0 {d} 1 {s} r\n" for q, docs in run.items() for d, s in docs.items()))
    out = tmp_path / "policy.json"
    res = CliRunner().invoke(cli, ["calibrate", str(qp), str(rp), "-k", "5", "-o", str(out)])
    assert res.exit_code == 1 and not out.exists()
    assert res.stderr == (
        "ctxeval: policy not written: it does not beat the best fixed K on held-out queries; use the top 5 "
        "passages, or --force to write the policy anyway\n"
    )
    assert "note: the optimum lies on the grid's edge" in res.stdout
    forced = CliRunner().invoke(cli, ["calibrate", str(qp), str(rp), "-k", "5", "-o", str(out), "--force"])
    assert forced.exit_code == 0 and json.loads(out.read_text())["checks"]["recommended_fixed_k"] == 5
