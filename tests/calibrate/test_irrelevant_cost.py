"""calibrate's utility objective gives a passage that adds nothing a stated cost (issue 29, point 17):
1/3 by default, UDCG's weight of an irrelevant passage (-1/3 in the released compute_udcg_score). On
graded TREC labels an irrelevant or unjudged passage used to cost nothing, so on every real DL19 run
the answer was "use the top K_max"; the best fixed K is now what the cost implies, computed here by
brute force from the labels."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import ctxeval
from ctxeval._cli import cli
from real_data import dl19_grades, dl19_ranked, real

UTILITY = {5: 1.0, 4: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}  # the documented default utility map
TREC_DL = {3: 5, 2: 4, 1: 3, 0: 2}
TOL = 1e-9


def best_fixed_k(lists: list[list[float]], cost: float, depth: int) -> int:
    """The smallest K whose mean total utility of the top K is the largest, a passage of utility 0
    counting -cost."""
    means = []
    for k in range(1, depth + 1):
        means.append(sum(sum(u if u != 0.0 else -cost for u in us[:k]) for us in lists) / len(lists))
    top = max(means)
    return 1 + next(i for i, m in enumerate(means) if m >= top - TOL * max(1.0, abs(top)))


grades = st.one_of(st.none(), st.integers(1, 5))


@given(
    queries=st.lists(st.lists(grades, min_size=1, max_size=8), min_size=2, max_size=6),
    cost=st.sampled_from([0.0, 0.2, 1 / 3, 0.5, 1.0, 2.5]),
)
def test_the_best_fixed_k_is_what_the_cost_implies(queries: list[list[int | None]], cost: float) -> None:
    """Graded labels 1-5, unjudged passages among them (None), the detection rules off: a passage's
    utility is the map's, 0 for grade 2 and for an unjudged one, which then costs ``cost``."""
    qrels = {f"q{i}": {f"d{j}": g for j, g in enumerate(gs) if g is not None} for i, gs in enumerate(queries)}
    qrels = {q: docs or {"elsewhere": 5} for q, docs in qrels.items()}
    run = {f"q{i}": {f"d{j}": float(len(gs) - j) for j in range(len(gs))} for i, gs in enumerate(queries)}
    depth = max(len(gs) for gs in queries)
    cal = ctxeval.calibrate(qrels, run, k=depth, folds=2, utility={"rules": "off"}, irrelevant_cost=cost)
    lists = [[UTILITY[g] if g is not None else 0.0 for g in gs] for gs in queries]
    assert cal.policy["in_sample"]["best_fixed_k"] == best_fixed_k(lists, cost, depth)
    assert cal.policy["irrelevant_cost"] == cost


def _dl19(run: Path) -> list[list[float]]:
    """Each judged query's list of utilities under trec-dl and the default map (unjudged: 0)."""
    judged = dl19_grades()
    ranked = dl19_ranked(run.name)
    return [
        [UTILITY[TREC_DL[judged[q][d]]] if d in judged[q] else 0.0 for d in ranked[q]]
        for q in sorted(ranked)
        if q in judged
    ]


def test_real_dl19_runs_no_longer_answer_the_largest_k_tried() -> None:
    runs = sorted(real("dl19", "runs").glob("*.txt"))
    assert len(runs) == 10
    qrels = real("dl19", "qrels.dl19-passage.txt")
    answers = {}
    for path in runs:
        lists = _dl19(path)
        for cost in (0.0, 1 / 3):
            cal = ctxeval.calibrate(qrels, path, k=100, rag={"grade_map": "trec-dl"}, utility={"rules": "off"},
                                    irrelevant_cost=cost)  # fmt: skip
            got = cal.policy["in_sample"]["best_fixed_k"]
            assert got == best_fixed_k(lists, cost, 100), (path.name, cost)
            answers[(path.name, cost)] = got
    # without a cost more passages never hurt: K_max on every run (the issue); with UDCG's cost, on none
    assert {k for (_, c), k in answers.items() if c == 0.0} == {100}
    assert all(k < 100 for (_, c), k in answers.items() if c > 0)
    # and by default (the default detection rules too) no run answers K_max = 100 either
    default = [ctxeval.calibrate(qrels, p, k=100, rag={"grade_map": "trec-dl"}).k_max for p in runs]
    assert max(default) < 100


def test_the_cost_is_printed_and_is_an_option(tmp_path: Path) -> None:
    q, r = tmp_path / "q.txt", tmp_path / "r.txt"
    q.write_text("".join(f"q{i} 0 d{i}a 5\nq{i} 0 d{i}b 2\n" for i in range(6)))
    r.write_text("".join(f"q{i} Q0 d{i}{x} {n} {10 - n} s\n" for i in range(6) for n, x in enumerate("abcd", 1)))
    res = CliRunner().invoke(
        cli, ["calibrate", str(q), str(r), "-k", "4", "--folds", "2", "-o", str(tmp_path / "p.json"), "--force"]
    )
    assert res.exit_code == 0, res.output
    assert "costs 0.3333 (UDCG's weight of an irrelevant passage, 1/3; --irrelevant-cost, 0 for none)" in res.stdout
    res = CliRunner().invoke(
        cli, ["calibrate", str(q), str(r), "-k", "4", "--folds", "2", "--irrelevant-cost", "0", "--force"]
    )
    assert '"irrelevant_cost": 0.0' in res.stdout
    with pytest.raises(ctxeval.ConfigError, match="irrelevant_cost must be a number >= 0"):
        ctxeval.calibrate(str(q), str(r), k=4, folds=2, irrelevant_cost=-1)
    assert not math.isnan(ctxeval.calibrate(str(q), str(r), k=4, folds=2).policy["irrelevant_cost"])
