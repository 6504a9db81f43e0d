"""Measure names as ir_measures writes them read as ctxeval's measures and give ir_measures' numbers;
``ctxeval measures`` lists them beside ctxeval's names (from one table, :mod:`ctxeval._measures.names`)."""

from __future__ import annotations

import math
import shutil

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
    # Accuracy: ir_measures divides by zero on a query whose retrieved docs are all relevant (test_accuracy)
    names = [_spelled(t) for f, t in IR_MEASURES.items() if REGISTRY[f].group != "diversity" and f != "Accuracy"]
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


def _irm(qrels, run, names: list[str]) -> dict[str, dict[str, float]]:
    irq = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    irr = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return {
        n: {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(n)], irq, irr)} for n in names
    }


def _same(want: dict[str, float], got: dict[str, float], tol: float = 1e-9) -> list:
    return [(q, want[q], got[q]) for q in want if not math.isclose(want[q], got[q], rel_tol=tol, abs_tol=tol)]


def test_judged_only_gives_ir_measures_numbers() -> None:
    """``judged_only=True`` on every family that has it (trec_eval's -J through pytrec_eval), docs judged
    below 0 among the dropped ones."""
    qrels, run = _data(11)
    for docs in list(qrels.values())[::7]:
        docs[next(iter(docs))] = -1
    names = [
        _spelled(t).replace("judged_only=False", "judged_only=True")
        for f, t in IR_MEASURES.items()
        if "judged_only=False" in t and REGISTRY[f].group != "diversity" and f != "RR"
    ] + ["RR(judged_only=True)"]
    assert len(names) == 12
    res = ctxeval.evaluate(qrels, run, names).runs[0]
    plain = ctxeval.evaluate(qrels, run, [n.replace("True", "False") for n in names]).runs[0]
    # where -J leaves a ranking empty, pytrec_eval's IPrec divides 0 by 0 (NaN): ctxeval scores it 0, as
    # any query without results
    emptied = {q for q in qrels if not any(qrels[q].get(d, -1) >= 0 for d in run[q])}
    assert emptied
    for n, want in _irm(qrels, run, names).items():
        got = res.per_query(n)
        bad = _same(want, got)
        if n.startswith("IPrec"):
            assert {q for q, w, g in bad} <= emptied and all(math.isnan(w) and g == 0.0 for _, w, g in bad), bad
            bad = []
        assert want and not bad, (n, bad[:3])
        assert got != plain.per_query(n.replace("True", "False")), n  # the unjudged docs did count before


def test_accuracy_gives_ir_measures_numbers() -> None:
    """Accuracy on queries whose top k holds a non-relevant doc (ir_measures divides by zero on the
    others and stops: ctxeval says NaN there), at a cut-off and without, at two relevance levels."""
    rng = np.random.default_rng(4)
    qrels, run = {}, {}
    for i in range(300):
        docs = [f"d{j}" for j in rng.choice(40, int(rng.integers(1, 20)), replace=False)]
        qrels[f"q{i}"] = {d: int(rng.choice([0, 1, 2])) for d in docs}
        ranked = [f"u{i}"] + [
            str(d) for d in rng.choice([*docs, "x", "y"], int(rng.integers(0, len(docs) + 2)), replace=False)
        ]
        ranked = [str(d) for d in rng.permutation(ranked)]
        run[f"q{i}"] = {d: float(len(ranked) - r) for r, d in enumerate(ranked)}
    # the unjudged u{i} is in every top k below: every query has a non-relevant doc there
    for q, docs in run.items():
        top = max(docs.values()) + 1.0
        docs[f"u{q[1:]}"] = top
    names = ["Accuracy", "Accuracy@5", "Accuracy(rel=2)@10"]
    res = ctxeval.evaluate(qrels, run, names).runs[0]
    for n, want in _irm(qrels, run, names).items():
        got = res.per_query(n)
        assert len(want) > 100 and not _same(want, got, 1e-12), (n, _same(want, got, 1e-12)[:3])
        assert all(math.isnan(got[q]) for q in got if q not in want)  # no relevant doc in the top k
    every_relevant = ({"q": {"a": 1}}, {"q": {"a": 1.0}})
    with pytest.raises(ZeroDivisionError):
        _irm(*every_relevant, ["Accuracy"])
    assert math.isnan(ctxeval.evaluate(*every_relevant, ["Accuracy"]).runs[0].per_query("Accuracy")["q"])


@pytest.mark.skipif(shutil.which("perl") is None, reason="ir_measures runs gdeval.pl with perl, which is not installed")
def test_gdeval_s_err_and_ndcg() -> None:
    """ir_measures' ERR@k and nDCG(dcg='exp-log2')@k are gdeval's (gdeval.pl, bundled with ir_measures;
    it prints 5 decimals and reads numeric topics only): ctxeval's ERR(gmax=4)@k and nDCG(dcg=exp-log2)@k."""
    qrels, run = _data(5)
    qrels, run = ({q[1:]: v for q, v in x.items()} for x in (qrels, run))
    pairs = {"ERR@10": "ERR(gmax=4)@10", "ERR@20": "ERR(gmax=4)@20", "nDCG(dcg='exp-log2')@10": "nDCG(dcg=exp-log2)@10"}
    res = ctxeval.evaluate(qrels, run, list(pairs.values())).runs[0]
    assert str(ctxeval.parse_measure("nDCG(dcg='exp-log2')@10")) == "nDCG(dcg=exp-log2)@10"
    for irn, want in _irm(qrels, run, list(pairs)).items():
        got = res.per_query(pairs[irn])
        bad = [(q, w, got[q]) for q, w in want.items() if f"{w:.5f}" != f"{got[q]:.5f}"]  # gdeval's printf
        assert len(want) == 150 and not bad, (irn, bad[:3])
