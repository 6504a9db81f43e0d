"""calibrate's budget axis: "pass 1,500 tokens" is a policy. With every chunk of one length L, the budgets
K·L give exactly the K_max grid (the same objective in every cell, the budget K·L where K_max was K); the
policy file names the budget and the tokenizer, and ContextSelector applies it to each query's
candidates to give the very selection calibrate scored (checked query by query on generated runs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxeval
from ctxeval import ConfigError, ContextSelector, InputError


@st.composite
def runs(draw: st.DrawFn) -> tuple[dict, dict, dict[str, int]]:
    n_q = draw(st.integers(4, 8))
    qrels, run, tokens = {}, {}, {}
    for q in range(n_q):
        n = draw(st.integers(1, 8))
        scores = draw(st.lists(st.integers(0, 20), min_size=n, max_size=n))
        run[f"q{q}"] = {f"q{q}d{i}": float(s) for i, s in enumerate(scores)}
        qrels[f"q{q}"] = {f"q{q}d{i}": draw(st.integers(0, 3)) for i in range(n) if i == 0 or draw(st.booleans())}
        for i in range(n):
            tokens[f"q{q}d{i}"] = draw(st.integers(1, 40))
    return qrels, run, tokens


def _table(tokens: dict[str, int]) -> list[dict]:
    return [{"chunk_id": c, "doc_id": c, "start": 0, "end": 1, "tokens": n} for c, n in tokens.items()]


@settings(max_examples=30, deadline=None)
@given(runs(), st.integers(1, 30))
def test_equal_lengths_give_the_k_grid(data: tuple[dict, dict, dict[str, int]], length: int) -> None:
    qrels, run, tokens = data
    table = _table(dict.fromkeys(tokens, length))
    by_k = ctxeval.calibrate(qrels, run, objective="nDCG", k=8, folds=2, rag={"chunks": table})
    budgets = ",".join(str(length * k) for k in range(1, 9))
    by_b = ctxeval.calibrate(qrels, run, objective="nDCG", k=f"{budgets}tok", folds=2, rag={"chunks": table})
    np.testing.assert_array_equal(by_b.fit.grid, by_k.fit.grid)
    assert by_b.budget == by_k.k_max * length and by_b.tau == by_k.tau
    assert by_b.policy["in_sample"] == {
        **by_k.policy["in_sample"],
        "best_fixed_k": by_k.policy["in_sample"]["best_fixed_k"] * length,
    }


@settings(max_examples=30, deadline=None)
@given(runs())
def test_the_selector_applies_the_policy_calibrate_scored(data: tuple[dict, dict, dict[str, int]]) -> None:
    qrels, run, tokens = data
    cal = ctxeval.calibrate(qrels, run, objective="R@100", k="10:80:10tok", folds=2, rag={"chunks": _table(tokens)})
    doc = json.loads(cal.to_json())
    assert doc["policy_format"] == 3 and doc["tokenizer"] == "the tokens column of <records>"
    sel = ContextSelector.from_dict(doc)
    assert sel.budget == cal.budget == doc["budget_tokens"]
    selected = {}
    for q, cands in run.items():
        ids = list(cands)
        picked = sel.select(ids, [cands[i] for i in ids], tokens=[tokens[i] for i in ids])
        assert sum(tokens[i] for i in picked) <= sel.budget
        selected[q] = {d: cands[d] for d in picked}
    # the mean of R over the selections is the in-sample objective calibrate reports for the policy
    got = ctxeval.evaluate(qrels, {q: s for q, s in selected.items() if s}, ["R@100"], policies={"missing": "zero"})
    values = dict(zip(got.runs[0].qids, got.runs[0].values[got.measures[0]].tolist())) if got.runs[0].qids else {}
    judged = [q for q in run if qrels.get(q)]
    mean = np.mean([values.get(q, 0.0) for q in judged])
    assert mean == pytest.approx(cal.policy["in_sample"]["objective"], abs=1e-12)


def test_a_budget_policy_needs_tokens_and_its_format() -> None:
    sel = ContextSelector(k_max=5, tau=0.0, budget=100)
    with pytest.raises(InputError, match="passes at most 100 tokens: give each candidate's tokens"):
        sel.select(["a"], [1.0])
    with pytest.raises(InputError, match="got 1 token counts for 2 candidates"):
        sel.select(["a", "b"], [1.0, 0.5], tokens=[3])
    with pytest.raises(InputError, match="whole numbers >= 0: candidate 0"):
        sel.select(["a"], [1.0], tokens=[-1])
    assert sel.select(["a", "b", "c"], [3.0, 2.0, 1.0], tokens=[60, 50, 10]) == ["a"]  # stops at b, skips not
    doc = sel.to_dict()
    assert doc["policy_format"] == 3 and ContextSelector.from_dict(doc) == sel
    with pytest.raises(ConfigError, match="the policy has no 'budget_tokens'"):
        ContextSelector.from_dict({"policy_format": 3, "k_max": 5, "tau": 0.0})
    with pytest.raises(ConfigError, match="a policy with budget_tokens is policy_format 3"):
        ContextSelector.from_dict({"policy_format": 2, "k_max": 5, "tau": 0.0, "budget_tokens": 9})
    with pytest.raises(ConfigError, match="k must be a whole number, or budgets of tokens"):
        ctxeval.calibrate({"q": {"a": 1}}, {"q": {"a": 1.0}}, k="abc")
