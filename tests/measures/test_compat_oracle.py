"""Compatibility against ir_measures 0.4.3's compat provider (the oracle) on generated queries, on the
recorded values of ir_measures' tests (../shared/data/oracles/ir_measures), and where the two part on
purpose: ties in the ideal ordering that ir_measures leaves in the qrels' line order."""

from __future__ import annotations

import json
import math

import ir_measures  # the oracle (the test extra installs it)
import numpy as np
import pytest

import ctxeval
from ctxeval import Qrels, Run
from shared_data import shared_data


def _batch(rng: np.random.Generator, n_q: int):
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_q):
        q = f"q{i}"
        docs = [f"d{j}" for j in rng.choice(80, int(rng.integers(1, 30)), replace=False)]
        qrels[q] = {d: int(rng.choice([-1, 0, 0, 1, 1, 2, 3, 4])) for d in docs}
        pool = docs + [f"u{j}" for j in range(int(rng.integers(0, 40)))]
        ranked = rng.choice(pool, int(rng.integers(1, len(pool) + 1)), replace=False)
        # distinct scores, some negative (an unretrieved doc counts as 0 in the ideal), never 0 itself
        scores = rng.permutation(len(ranked)) - len(ranked) // 3 + 0.5
        run[q] = {str(d): float(s) for d, s in zip(ranked, scores)}
    return qrels, run


def _irm(qrels, run, name: str) -> dict[str, float]:
    irq = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    irr = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(name)], irq, irr)}


def _check(seed: int, n_q: int) -> int:
    rng = np.random.default_rng(seed)
    qrels, run = _batch(rng, n_q)
    p = float(rng.choice([0.95, 0.9, 0.8, float(rng.uniform(0.05, 0.99))]))
    names = [f"Compat(p={p!r})", f"Compat(p={p!r},normalize=False)"]
    res = ctxeval.evaluate(qrels, run, names).runs[0]
    for n in names:
        want, got = _irm(qrels, run, n), res.per_query(n)
        bad = [(q, want[q], got[q]) for q in want if not math.isclose(want[q], got[q], rel_tol=1e-12, abs_tol=1e-15)]
        assert len(want) == n_q and not bad, f"seed {seed}, {n}: {bad[:3]}"
    return n_q


def test_compat_equals_ir_measures_on_generated_queries() -> None:
    assert sum(_check(seed, 200) for seed in range(4)) == 800


@pytest.mark.slow
def test_compat_equals_ir_measures_on_ten_thousand_queries() -> None:
    assert sum(_check(seed, 1000) for seed in range(100, 110)) == 10_000


def test_recorded_compatibility() -> None:
    folder = shared_data("oracles", "ir_measures")
    cases = json.loads((folder / "expected.json").read_text(encoding="utf-8"))["compat"]
    qrels, run = Qrels.from_file(folder / "compat.qrels"), Run.from_file(folder / "compat.run")
    for c in cases["cases"]:
        got = ctxeval.evaluate(qrels, run, [c["measure"]]).runs[0].per_query(c["measure"])
        assert got == pytest.approx(c["expected_per_query"], rel=1e-12), c["measure"]
    assert ctxeval.evaluate(qrels, run, ["Compat(p=0.95)"]).runs[0].mean("Compat(p=0.95)") == pytest.approx(
        cases["cases"][0]["expected_mean"], abs=1e-9
    )


def test_ideal_ties_do_not_follow_the_qrels_line_order() -> None:
    """A retrieved doc of score 0 and a doc the run lacks, both grade 1, tie in the ideal: ir_measures
    keeps them in the qrels' order; ctxeval puts the retrieved one first, whatever that order."""
    run = {"q1": {"a": 0.0, "y": -1.0}}
    first = {"q1": {"a": 1, "b": 1, "x": 0}}
    second = {"q1": {"b": 1, "a": 1, "x": 0}}
    ours = [ctxeval.evaluate(q, run, ["Compat"]).runs[0].per_query("Compat")["q1"] for q in (first, second)]
    assert ours[0] == ours[1] == pytest.approx(_irm(first, run, "Compat")["q1"], rel=1e-12)
    assert _irm(second, run, "Compat")["q1"] != pytest.approx(ours[0], rel=1e-6)  # the qrels' order moved it


def test_ir_measures_breaks_score_ties_by_doc_id_ascending() -> None:
    """ctxeval ranks tied scores by trec_eval's rule (doc id descending); ties="input" with the run in
    ir_measures' order (doc id ascending) gives ir_measures' number."""
    qrels = {"q1": {"a": 2, "b": 1, "c": 0}}
    run = {"q1": {"c": 1.0, "b": 1.0, "a": 1.0}}
    want = _irm(qrels, run, "Compat")["q1"]
    asc = {"q1": dict(sorted(run["q1"].items()))}
    got = ctxeval.evaluate(qrels, asc, ["Compat"], policies={"ties": "input"}).runs[0].per_query("Compat")["q1"]
    assert got == pytest.approx(want, rel=1e-12)
    trec = ctxeval.evaluate(qrels, run, ["Compat"]).runs[0].per_query("Compat")["q1"]
    assert trec != pytest.approx(want, rel=1e-6)
