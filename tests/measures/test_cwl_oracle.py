"""The C/W/L measures against cwl_eval 1.0.12's own classes (its RankingMaker and metrics, with
residuals), ir_measures' cwl_eval provider (the names and the min_rel / max_rel scaling), and the
values ir_measures' tests record from a manual cwl_eval run (../shared/data/oracles/ir_measures).

Generated runs (seeded): graded qrels -1..3, unjudged docs, rankings shorter and longer than the
user model's depth, T, K, p and k drawn; every family, every figure cwl_eval prints (EU, ETU, ETC,
ED and their residuals). The 10,000-query runs are slow; a smaller one is fast.
"""

from __future__ import annotations

import json
import math

import ir_measures  # the oracle of the names and of the gain scaling (the test extra installs it)
import numpy as np
import pytest
from cwl.ruler.cwl_ruler import (  # the oracle (the test extra installs cwl-eval)
    BPMCWLMetric,
    INSQCWLMetric,
    INSTCWLMetric,
    NDCGCWLMetric,
    NERReq8CWLMetric,
    NERReq9CWLMetric,
    NERReq10CWLMetric,
    NERReq11CWLMetric,
    RBPCWLMetric,
)
from cwl.ruler.ranking import RankingMaker
from cwl.seeker.trec_qrel_handler import TrecQrelHandler
from ir_measures.providers.cwl_eval import IrmQrelHandler

import ctxeval
from ctxeval import MeasureError, Qrels, Run
from shared_data import shared_data

FIGURES = {"EU": "expected_utility", "ETU": "expected_total_utility", "ETC": "expected_total_cost",
           "ED": "expected_items"}  # fmt: skip


def _families(rng: np.random.Generator):
    """(ctxeval name without its gain parameters and cut-off, cut-off, cwl_eval metric) per family."""
    T = float(rng.choice([0.5, 1.0, 2.0, 3.0, float(rng.uniform(0.2, 4))]))
    k = int(rng.integers(1, 25))
    p = float(rng.uniform(0.05, 0.99))
    return [
        (f"INST(T={T!r}", None, INSTCWLMetric(T)),
        (f"INSQ(T={T!r}", None, INSQCWLMetric(T)),
        (f"BPM(T={T!r}", k, BPMCWLMetric(T, k)),
        ("SDCG(", k, NDCGCWLMetric(k)),
        ("NERR8(", k, NERReq8CWLMetric(k)),
        ("NERR9(", k, NERReq9CWLMetric(k)),
        (f"NERR10(p={p!r}", None, NERReq10CWLMetric(p)),
        (f"NERR11(T={T!r}", None, NERReq11CWLMetric(T)),
        (f"RBP-CWL(p={p!r}", None, RBPCWLMetric(p)),
    ]


def _batch(rng: np.random.Generator, n_q: int, depth: int):
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_q):
        q = f"q{i}"
        docs = [f"d{j}" for j in rng.choice(60, int(rng.integers(1, 20)), replace=False)]
        qrels[q] = {d: int(rng.choice([-1, 0, 0, 1, 1, 2, 3])) for d in docs}
        pool = docs + [f"u{j}" for j in range(int(rng.integers(0, 3 * depth // 2 + 2)))]
        ranked = list(rng.choice(pool, int(rng.integers(1, len(pool) + 1)), replace=False))
        run[q] = {str(d): float(len(ranked) - r) for r, d in enumerate(ranked)}  # distinct scores, in order
    return qrels, run


def _expected(qrels, run, metric, handler, depth: int) -> dict[str, dict[str, float]]:
    """cwl_eval's figures, with residuals, per query (the run's docs in rank order)."""
    out = {}
    metric.residuals = True
    for q, docs in run.items():
        maker = RankingMaker(q, handler, None, max_gain=1.0, min_gain=0.0, max_cost=1.0, min_cost=1.0, max_n=depth)
        for d in sorted(docs, key=lambda d: -docs[d]):
            maker.add(d, "_")
        metric.measure(maker.get_ranking())
        row = {f: getattr(metric, a) for f, a in FIGURES.items()}
        row |= {"Res" + f: getattr(metric, "residual_" + a) for f, a in FIGURES.items()}
        out[q] = row
    return out


def _handler(qrels, min_rel: int | None, max_rel: int | None):
    """ir_measures' handler: grades clipped to [min_rel, max_rel] and scaled onto [0, 1] (negative
    grades 0 first); with no max_rel, cwl_eval's own reading of 0/1 grades."""
    h = TrecQrelHandler(None) if max_rel is None else IrmQrelHandler(None, min_rel, max_rel)
    for q, docs in qrels.items():
        for d, g in docs.items():
            h.put_value(q, d, max(g, 0))
    return h


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _check_batch(seed: int, n_q: int) -> int:
    rng = np.random.default_rng(seed)
    depth = int(rng.choice([1, 5, 20, 50, 80])) if seed % 7 else 1000
    qrels, run = _batch(rng, n_q, depth)
    binary = seed % 4 == 3
    if binary:  # cwl_eval's own reading: grades are gains, within [0, 1]
        qrels = {q: {d: int(g >= 1) for d, g in docs.items()} for q, docs in qrels.items()}
        min_rel, max_rel, gain = 0, None, ""
    else:
        min_rel, max_rel = int(rng.integers(0, 2)), int(rng.integers(2, 4))
        gain = f"min_rel={min_rel},max_rel={max_rel}"
    handler = _handler(qrels, min_rel, max_rel)
    names, checks = [], []
    for head, cut, metric in _families(rng):
        expected = _expected(qrels, run, metric, handler, depth)
        for figure in (*FIGURES, *("Res" + f for f in FIGURES)):
            params = ",".join(x for x in (head.partition("(")[2], gain, f"depth={depth}", f"figure={figure}") if x)
            name = f"{head.partition('(')[0]}({params})" + (f"@{cut}" if cut is not None else "")
            names.append(name)
            checks.append((name, figure, expected))
    res = ctxeval.evaluate(qrels, run, names).runs[0]
    for name, figure, expected in checks:
        got = res.per_query(name)
        bad = [(q, e[figure], got[q]) for q, e in expected.items() if not _same(e[figure], got[q])]
        assert not bad, f"seed {seed}, {name}: {len(bad)} of {len(expected)} differ, e.g. {bad[:3]}"
    return n_q


def test_cwl_equals_cwl_eval_on_generated_queries() -> None:
    assert sum(_check_batch(seed, 40) for seed in range(7)) == 280


@pytest.mark.slow
def test_cwl_equals_cwl_eval_on_ten_thousand_queries() -> None:
    # depths 1 to 80 (cwl_eval's Python loops over 1,000 ranks took most of this test's 200 s: the fast
    # tier's seed 0 reads 1,000 deep)
    seeds = [s for s in range(100, 125) if s % 7][:20]
    assert sum(_check_batch(seed, 500) for seed in seeds) == 10_000


IRM_NAMES = ["INST(T=3.0,max_rel=3)", "INSQ(T=2.0,max_rel=3)", "BPM(T=2.0,max_rel=3)@10", "SDCG(max_rel=3)@10",
             "NERR8(max_rel=3)@5", "NERR9(min_rel=1,max_rel=3)@10", "NERR10(p=0.8,max_rel=2)", "NERR11(T=2.0,max_rel=3)",
             "INST(max_rel=1)"]  # fmt: skip


def test_ir_measures_names_give_ir_measures_numbers() -> None:
    rng = np.random.default_rng(5)
    qrels, run = _batch(rng, 60, 1000)
    irq = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    irr = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    res = ctxeval.evaluate(qrels, run, IRM_NAMES).runs[0]
    assert ctxeval.parse_measure("INST(T=3,max_rel=3)") == ctxeval.parse_measure(IRM_NAMES[0])  # T=3 reads too
    for n in IRM_NAMES:
        want = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(n)], irq, irr)}
        got = res.per_query(n)
        assert len(want) == 60 and all(_same(want[q], got[q]) for q in want), n
    # ir_measures' RBP with rel goes to cwl_eval: ctxeval's RBP (trec_eval's) and RBP-CWL give its number
    want = {
        m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.parse_measure("RBP(p=0.8,rel=2)")], irq, irr)
    }
    both = ctxeval.evaluate(qrels, run, ["RBP(p=0.8,rel=2)", "RBP-CWL(p=0.8,rel=2)"]).runs[0]
    for n in ("RBP(p=0.8,rel=2)", "RBP-CWL(p=0.8,rel=2)"):
        assert all(_same(want[q], both.per_query(n)[q]) for q in want), n


def test_cwl_eval_reads_grades_as_gains_and_says_to_give_max_rel() -> None:
    with pytest.raises(MeasureError) as err:
        ctxeval.evaluate({"q1": {"a": 3, "b": 1}}, {"q1": {"a": 1.0}}, ["SDCG@10"])
    assert "cwl_eval reads grades as gains in [0, 1], and the qrels hold grades up to 3" in str(err.value)
    assert "SDCG(max_rel=3)" in str(err.value)


def test_recorded_cwl_eval_run() -> None:
    """The values ir_measures' tests record from a manual cwl_eval run (4 decimals)."""
    folder = shared_data("oracles", "ir_measures")
    cases = json.loads((folder / "expected.json").read_text(encoding="utf-8"))["cwl"]
    qrels, run = Qrels.from_file(folder / "cwl.qrels"), Run.from_file(folder / "cwl.run")
    names = [c["measure"] for c in cases["cases"]]
    res = ctxeval.evaluate(qrels, run, names).runs[0]
    for c in cases["cases"]:
        got = res.per_query(c["measure"])
        assert {q: round(got[q], 4) for q in c["expected_per_query"]} == c["expected_per_query"], c["measure"]


def test_file_order_is_cwl_eval_s_reading() -> None:
    """cwl_eval reads the run in file order; ties="input" does so (trec_eval's rule would sort)."""
    qrels = {"q1": {"a": 1, "b": 0, "c": 1}}
    run = {"q1": {"b": 1.0, "a": 1.0, "c": 1.0}}  # tied: file order b, a, c; trec_eval's order c, b, a
    h = _handler(qrels, 0, None)
    expected = _expected(qrels, {"q1": {"b": 3.0, "a": 2.0, "c": 1.0}}, INSTCWLMetric(1.0), h, 1000)
    got = ctxeval.evaluate(qrels, run, ["INST"], policies={"ties": "input"}).runs[0].per_query("INST")
    assert _same(got["q1"], expected["q1"]["EU"])
    trec = ctxeval.evaluate(qrels, run, ["INST"]).runs[0].per_query("INST")
    assert not _same(trec["q1"], got["q1"])
