"""Measure names as ir_measures writes them read as ctxeval's measures and give ir_measures' numbers;
``ctxeval measures`` lists them beside ctxeval's names (from one table, :mod:`ctxeval._measures.names`)."""

from __future__ import annotations

import math

import ir_measures  # the oracle (the test extra installs it)
import numpy as np
import pytest

import ctxeval
from ctxeval._measures import REGISTRY
from ctxeval._measures.names import IR_MEASURES
from ctxeval._render.measures import measure_list


def _spelled(template: str) -> str:
    """A template of the table as a name: cut-off 10 (recall level 0.5), N = 2 (ir_measures' RBP without
    rel needs trectools, which the test extra does not install)."""
    name = template.replace("[,rel=N]", ",rel=N").replace("[@k]", "").replace("@k", "@10").replace("@r", "@0.5")
    return name.replace("=N", "=2")


@pytest.mark.parametrize("family", sorted(IR_MEASURES))
def test_each_ir_measures_name_reads_as_its_family_in_both(family: str) -> None:
    name = _spelled(IR_MEASURES[family])
    assert family in REGISTRY
    assert ctxeval.parse_measure(name).family == family
    ir_measures.parse_measure(name)  # ir_measures reads it too


def test_the_issue_s_names() -> None:
    got = [str(ctxeval.parse_measure(n)) for n in
           ("alpha_nDCG(alpha=0.5)@20", "ERR_IA@20", "INST(T=3)", "RBP(p=0.8)", "Compat(p=0.95)", "SDCG@10")]  # fmt: skip
    assert got == ["alpha-nDCG@20", "ERR-IA@20", "INST(T=3)", "RBP", "Compat", "SDCG@10"]


def _data(seed: int = 9):
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(150):
        docs = [f"d{j}" for j in rng.choice(50, int(rng.integers(1, 25)), replace=False)]
        qrels[f"q{i}"] = {d: int(rng.choice([0, 0, 1, 2, 3])) for d in docs}
        pool = docs + [f"u{j}" for j in range(int(rng.integers(0, 30)))]
        ranked = rng.choice(pool, int(rng.integers(1, len(pool) + 1)), replace=False)
        run[f"q{i}"] = {str(d): float(s) for d, s in zip(ranked, rng.permutation(len(ranked)) + 0.25)}
    return qrels, run


def test_ir_measures_names_give_ir_measures_numbers() -> None:
    """Every name of the table but the diversity ones (subtopic qrels: test_diversity_oracle) on one
    generated graded run, one ir_measures call per measure."""
    qrels, run = _data()
    names = [_spelled(t) for f, t in IR_MEASURES.items() if REGISTRY[f].group != "diversity"]
    res = ctxeval.evaluate(qrels, run, names).runs[0]
    irq = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    irr = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    for n in names:
        want = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(n)], irq, irr)}
        got = res.per_query(n)
        bad = [(q, want[q], got[q]) for q in want if not math.isclose(want[q], got[q], rel_tol=1e-9, abs_tol=1e-12)]
        assert want and not bad, (n, bad[:3])


def test_ctxeval_measures_lists_the_ir_measures_names() -> None:
    text = measure_list("text")
    assert (
        "  alpha-nDCG(rel=1,alpha=0.5,judged_only=false)@k    ir_measures: alpha_nDCG(alpha=0.5,rel=1,judged_only=False)@k"
        in text
    )
    assert "ir_measures: Compat(p=0.95,normalize=True)" in text and "(ir_measures: `SDCG(" in measure_list("markdown")
