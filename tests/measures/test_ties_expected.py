"""``ties="expected"`` (issue 32, point 4): every measure of the registry equals the brute-force mean over
every order of its tied scores, on small generated runs.

The oracle does not read ctxeval's tie code: it lists every order of every tie group by hand
(itertools), writes each order of a query as a query of its own (``q#0``, ``q#1``, ...) with the rows
in that order and ``ties="input"``, evaluates them in one call, and averages per query. Four scenarios
cover the registry: TREC grades -1..3 (classical and trec_eval's measures), the 1-5 utility scale (the
set-based RAG and distraction measures, with doc groups, a pool cut at a depth and a positional UDCG
fit), and a sample set with scores, facets, nuggets, citations and texts (the context measures). A
family that none of them names is tried at @3 with its defaults, so a new family is checked too.
"""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ctxeval
from ctxeval import ConfigError, Policies
from ctxeval._measures.base import REGISTRY, make

EXPECTED = Policies(ties="expected", missing="ignore")
BY_ORDER = Policies(ties="input", missing="ignore")

TREC = [
    *["P@2", "P(rel=2)@3", "R@3", "AP", "AP(rel=2)@3", "RR", "RR(rel=2)@2", "Rprec", "Success@2", "Bpref"],
    *["IPrec@0.5", "AUCPR", "nDCG@3", "nDCG", "nDCG(dcg=exp-log2)@4", "DCG@3", "ERR(gmax=3)@3", "Judged@3"],
    *["SetP", "SetR", "SetF", "NumQ", "NumRet", "NumRel", "NumRelRet"],
    *["gm_map", "gm_bpref", "infAP", "Rprec_mult(mult=0.5)", "utility", "11pt_avg", "binG", "G", "ndcg_rel"],
    *["Rndcg", "ideal_dcg", "relative_P@3", "set_relative_P", "SetAP", "num_nonrel_judged_ret", "yaap"],
    *["RBP(p=0.8)", "RBP(p=0.8)@3", "RBP(p=0.5,rel=2)", "rbp_resid", "unj@3"],
    *["IDBasedContextPrecision@3", "IDBasedContextRecall@3", "RankWeightedPrecision@3", "RankWeightedPrecision"],
    *["ContextPrecision@2", "ContextRecall@3"],
    *["INST(max_rel=3)", "INSQ(T=2,max_rel=3)", "BPM(max_rel=3)@3", "SDCG(max_rel=3)@3", "NERR8(max_rel=3)@3"],
    *["NERR9(max_rel=3)@3", "NERR10(max_rel=3)", "NERR11(max_rel=3)", "RBP-CWL(max_rel=3)", "Compat"],
]
DIVERSITY = [
    *["alpha-nDCG@3", "alpha-DCG(alpha=0.3)@2", "ERR-IA@3", "nERR-IA@3", "NRBP", "nNRBP(beta=0.7)", "P-IA@3"],
    *["S-recall@2", "MAP-IA"],
]
RAG = [
    *["RA-nWG@3", "RA-nWG(novelty=0.5)@3", "N-Recall4+@3", "N-Recall5@2", "Precision4+@3", "Harm@3", "GoldHit@3"],
    *["PROC@2", "%PROC@3", "dDCG@3", "ndDCG@3", "UDCG@3", "DistractorRate@3", "DistractorHarm@3"],
]
SAMPLES = [
    *["CoverageRecall@2", "NuggetRecall@3", "NuggetRecall(score=all)@2", "AttributionRate@3"],
    *["ContextPrecision(method=similarity)@3", "ContextRecall(method=similarity)@2", "IDBasedContextPrecision@2"],
]


def _f32(x: float) -> float:
    return float(np.float32(x))


def _orders(docs: dict[str, float]) -> list[list[str]]:
    """Every order of a query's rows that leaves the scores (as float32) descending."""
    ranked = sorted(docs, key=lambda d: (-_f32(docs[d]), d))
    groups = [list(g) for _, g in itertools.groupby(ranked, key=lambda d: _f32(docs[d]))]
    return [[d for g in combo for d in g] for combo in itertools.product(*(itertools.permutations(g) for g in groups))]


def _trec_case(rnd: random.Random, grades: list[int], limit: int = 60) -> tuple[dict, dict]:
    """Three queries of up to six retrieved docs with scores drawn from three values (so ties), some
    judged docs not retrieved and some retrieved docs not judged; at most ``limit`` orders a query."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    docs = list("abcdefgh")
    for q in ("q1", "q2", "q3"):
        while True:
            got = {d: float(rnd.choice([1, 2, 3])) for d in rnd.sample(docs, rnd.randint(2, 6))}
            if len(_orders(got)) <= limit:
                break
        run[q] = got
        qrels[q] = {d: rnd.choice(grades) for d in rnd.sample(docs, rnd.randint(2, 6))}
    return qrels, run


def _brute(qrels: dict, run: dict, names: list[str], **kw: Any) -> dict[str, dict[str, float]]:
    """Per measure and query: the mean over every order of the query's ties (NaN when some order is)."""
    copies_q: dict[str, dict[str, int]] = {}
    copies_r: dict[str, dict[str, float]] = {}
    of: dict[str, str] = {}
    for q, docs in run.items():
        for i, order in enumerate(_orders(docs)):
            key = f"{q}#{i}"
            of[key] = q
            copies_q[key] = dict(qrels[q])
            copies_r[key] = {d: float(len(order) - j) for j, d in enumerate(order)}
    res = ctxeval.evaluate(copies_q, copies_r, names, policies=BY_ORDER, **kw).runs[0]
    return _means(res, of)


def _means(res: Any, of: dict[str, str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for m, v in res.values.items():
        acc: dict[str, list[float]] = {}
        for q, x in zip(res.qids, v):
            acc.setdefault(of[q], []).append(float(x))
        out[str(m)] = {q: float(np.mean(xs)) for q, xs in acc.items()}
    return out


def _check(exp: Any, brute: dict[str, dict[str, float]]) -> None:
    assert exp.ties["tie_groups"] > 0  # the case holds ties (else the test could not fail)
    for m, v in exp.values.items():
        want = np.array([brute[str(m)][q] for q in exp.qids])
        np.testing.assert_allclose(v, want, rtol=1e-9, atol=1e-12, err_msg=f"{m} under ties='expected'")


#: named by a test below (its fit file is written there)
FITTED = {"UDCG-pos"}


def _names(base: list[str]) -> list[str]:
    """``base`` plus one default example (@3) of every family that none of the scenarios names."""
    named = {make_name(n) for n in TREC + RAG + SAMPLES + DIVERSITY} | FITTED
    extra = []
    for fam in REGISTRY.values():
        if fam.name not in named:
            extra.append(str(make(fam.name, None, 3 if fam.cutoff != "none" else None)))
    return base + extra


def make_name(name: str) -> str:
    return ctxeval._measures.parse_measure(name).family


def test_the_scenarios_name_every_family_or_try_it() -> None:
    named = {make_name(n) for n in TREC + RAG + SAMPLES + DIVERSITY} | FITTED
    assert named <= set(REGISTRY)
    # every family is covered: by name here, or by its default example in the TREC scenario
    assert set(REGISTRY) <= named | {make_name(n) for n in _names(TREC)}


@pytest.mark.parametrize("seed", range(3))
def test_trec_grades_equal_the_brute_force_mean(seed: int) -> None:
    qrels, run = _trec_case(random.Random(seed), [-1, 0, 0, 1, 2, 3])
    names = _names(TREC)
    exp = ctxeval.evaluate(qrels, run, names, policies=EXPECTED).runs[0]
    _check(exp, _brute(qrels, run, names))


@pytest.mark.parametrize("seed", range(3))
def test_diversity_measures_equal_the_brute_force_mean(seed: int) -> None:
    rnd = random.Random(300 + seed)
    _, run = _trec_case(rnd, [0], limit=36)
    subs = [
        (q, s, d, rnd.choice([-1, 0, 1, 1, 2])) for q in run for s in ("1", "2", "3") for d in rnd.sample("abcdefgh", 3)
    ]
    exp = ctxeval.evaluate(ctxeval.Qrels.from_subtopics(subs), run, DIVERSITY, policies=EXPECTED).runs[0]
    copies_q, copies_r, of = [], {}, {}
    for q, docs in run.items():
        for i, order in enumerate(_orders(docs)):
            key = f"{q}#{i}"
            of[key] = q
            copies_q += [(key, s, d, g) for qq, s, d, g in subs if qq == q]
            copies_r[key] = {d: float(len(order) - j) for j, d in enumerate(order)}
    res = ctxeval.evaluate(ctxeval.Qrels.from_subtopics(copies_q), copies_r, DIVERSITY, policies=BY_ORDER).runs[0]
    _check(exp, _means(res, of))


def _fit(tmp: Path) -> str:
    path = tmp / "fit.json"
    path.write_text(json.dumps({"alpha": [1.0, 0.5, 0.25], "beta": [-1.0, -0.5, -2.0], "bias": 0.1}), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("seed", range(3))
def test_rag_and_distraction_measures_equal_the_brute_force_mean(seed: int, tmp_path: Path) -> None:
    rnd = random.Random(100 + seed)
    qrels, run = _trec_case(rnd, [1, 2, 3, 4, 5, 5], limit=36)
    names = [*RAG, f"UDCG-pos(fit='{_fit(tmp_path)}')@3"]
    groups = {d: rnd.choice(["g1", "g2"]) for d in "abcdefgh"}
    for rag in ({"groups": groups}, {"groups": groups, "pool_depth": 3}):
        exp = ctxeval.evaluate(qrels, run, names, policies=EXPECTED, rag=rag).runs[0]
        _check(exp, _brute(qrels, run, names, rag=rag))


def _sample_case(rnd: random.Random) -> list[dict]:
    chunks = list("abcdef")
    text = {c: f"passage {c} about topic {ord(c) % 3}" for c in chunks}
    out = []
    for q in ("q1", "q2", "q3"):
        while True:
            ids = rnd.sample(chunks, rnd.randint(2, 5))
            scores = {c: float(rnd.choice([1, 2, 3])) for c in ids}
            if len(_orders(scores)) <= 36:
                break
        # scores are kept only when they rank the list as it is: ties by id descending (the samples' rule)
        ids.sort(key=lambda c: (-scores[c], -ord(c)))
        refs = rnd.sample(chunks, 2)
        out.append(
            {
                "query_id": q,
                "retrieved_ids": ids,
                "retrieved_scores": [scores[c] for c in ids],
                "retrieved_contexts": [text[c] for c in ids],
                "reference_ids": refs,
                "reference_contexts": [text[c] for c in refs],
                "facets": [{"name": f"f{j}", "ids": rnd.sample(chunks, 2)} for j in range(2)],
                "nuggets": [
                    {
                        "text": f"n{j}",
                        "importance": rnd.choice(["vital", "okay"]),
                        "supported_by": rnd.sample(chunks, 1),
                        "partially_supported_by": rnd.sample(chunks, 1),
                    }
                    for j in range(3)
                ],
                "citations": rnd.sample(ids, 1),
            }
        )
    return out


@pytest.mark.parametrize("seed", range(3))
def test_sample_set_measures_equal_the_brute_force_mean(seed: int) -> None:
    samples = _sample_case(random.Random(200 + seed))
    exp = ctxeval.evaluate(samples=samples, measures=SAMPLES, policies=EXPECTED).runs[0]
    copies, of = [], {}
    for s in samples:
        scores = dict(zip(s["retrieved_ids"], s["retrieved_scores"]))
        texts = dict(zip(s["retrieved_ids"], s["retrieved_contexts"]))
        for i, order in enumerate(_orders(scores)):
            key = f"{s['query_id']}#{i}"
            of[key] = s["query_id"]
            copy = {k: v for k, v in s.items() if k != "retrieved_scores"}
            copies.append(
                {**copy, "query_id": key, "retrieved_ids": order, "retrieved_contexts": [texts[c] for c in order]}
            )
    res = ctxeval.evaluate(samples=copies, measures=SAMPLES, policies=BY_ORDER).runs[0]
    _check(exp, _means(res, of))


def test_best_and_worst_orders_bound_every_order() -> None:
    qrels, run = _trec_case(random.Random(7), [0, 0, 1, 2, 3])
    names = ["AP", "nDCG@3", "RR", "P@2", "Bpref"]
    res = ctxeval.evaluate(qrels, run, names, policies=EXPECTED).runs[0]
    for q, docs in run.items():
        orders = _orders(docs)
        # best: within each tie group the judged docs by grade, highest first, unjudged last
        grade = {d: qrels[q].get(d, -99) for d in docs}
        best = sorted(orders, key=lambda o: [(-_f32(docs[d]), -grade[d]) for d in o])[0]
        worst = sorted(orders, key=lambda o: [(-_f32(docs[d]), grade[d]) for d in o])[0]
        i = res.qids.index(q)
        for m in res.values:
            vals = [
                ctxeval.evaluate(
                    {q: qrels[q]}, {q: {d: float(len(o) - j) for j, d in enumerate(o)}}, [m], policies=BY_ORDER
                )
                .runs[0]
                .values[m][0]
                for o in (best, worst)
            ]
            b, w = res.extremes[m][0][i], res.extremes[m][1][i]
            assert (b, w) == pytest.approx(vals), (m, q)
            assert w - 1e-12 <= res.values[m][i] <= b + 1e-12


def test_a_run_without_ties_reads_as_trec_evals_order() -> None:
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    run = {"q1": {"a": 3.0, "b": 2.0, "x": 1.0}, "q2": {"c": 0.5, "y": 0.25}}
    names = ["AP", "nDCG@2", "ERR(gmax=2)@2", "IPrec@0.5"]
    exp = ctxeval.evaluate(qrels, run, names, policies=EXPECTED).runs[0]
    base = ctxeval.evaluate(qrels, run, names, policies={"missing": "ignore"}).runs[0]
    for m in exp.values:
        assert exp.values[m].tolist() == base.values[m].tolist()
        assert exp.spread(m)[2] == 0
    assert exp.ties == {"tie_groups": 0, "tied_rows": 0, "queries_with_ties": 0}


def test_an_average_past_the_budget_is_refused_never_sampled() -> None:
    # 60 tied docs of which 20 relevant: IPrec (no closed form) would enumerate C(60, 20) orders
    qrels = {"q": {f"d{i}": int(i % 3 == 0) for i in range(60)}}
    run = {"q": {f"d{i}": 1.0 for i in range(60)}}
    with pytest.raises(ConfigError, match=r"IPrec@0\.5 has no closed form under tied scores.*never samples"):
        ctxeval.evaluate(qrels, run, ["IPrec@0.5"], policies=EXPECTED)
    # a closed form has no such limit: of a random order of n docs, R relevant, E[AP] is
    # (R - 1)/(n - 1) + (n - R)/(n (n - 1)) H_n, and E[P@10] = R / n
    ap = ctxeval.evaluate(qrels, run, ["AP", "P@10"], policies=EXPECTED).runs[0]
    n, r = 60, 20
    h = sum(1 / i for i in range(1, n + 1))
    assert ap.mean("AP") == pytest.approx((r - 1) / (n - 1) + (n - r) / (n * (n - 1)) * h, rel=1e-12)
    assert ap.mean("P@10") == pytest.approx(r / n, rel=1e-12)


def test_the_stream_engine_gives_the_same_expected_values_and_orders(tmp_path: Path) -> None:
    qrels, run = _trec_case(random.Random(11), [0, 1, 2, 3])
    path = tmp_path / "run.txt"
    path.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in run.items() for d, s in docs.items()))
    names = ["AP", "nDCG@3", "ERR(gmax=3)@3"]
    local = ctxeval.evaluate(qrels, str(path), names, policies=EXPECTED).runs[0]
    streamed = ctxeval.evaluate(qrels, str(path), names, policies=EXPECTED, engine={"name": "stream"}).runs[0]
    assert streamed.qids == local.qids and streamed.ties == local.ties
    for m in local.values:
        assert streamed.values[m].tolist() == local.values[m].tolist()
        assert [v.tolist() for v in streamed.extremes[m]] == [v.tolist() for v in local.extremes[m]]


def test_spark_refuses_expected_ties_before_it_starts() -> None:
    with pytest.raises(ConfigError, match="ties='expected' runs on the local and stream engines, not on Spark"):
        ctxeval.evaluate_spark({"q": {"a": 1}}, [{"q": {"a": 1.0}}], ["AP"], policies=EXPECTED)
