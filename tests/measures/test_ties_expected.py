"""``ties="expected"`` (issue 32, point 4): every measure of the registry equals the brute-force mean over
every order of its tied scores, on small generated runs.

The oracle does not read ctxeval's tie code: it lists every order of every tie group by hand
(itertools), writes each order of a query as a query of its own (``q#0``, ``q#1``, ...) with the rows
in that order and ``ties="input"``, evaluates them in one call, and averages per query. The scenarios
cover the registry: TREC grades -1..3 (classical and trec_eval's measures, Accuracy, the ``judged_only``
readings), subtopic qrels (diversity), the 1-5 utility scale (the set-based RAG and distraction
measures, with doc groups, a pool cut at a depth and a positional UDCG fit), a sample set with scores,
facets, nuggets, citations and texts (the context measures), fairness group labels and targets (AWRF),
span labels over a chunk table of unequal, overlapping chunks (the span measures and every span
reading, at cutoffs and at budgets of tokens), and budgets over chunks of unequal token counts where the
order of tied chunks changes what fits (both overflow rules). A family that none of them names is tried
at @3 with its defaults, so a new family is checked too.
"""

from __future__ import annotations

import itertools
import json
import math
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
ACCURACY = ["Accuracy", "Accuracy@3", "Accuracy(rel=2)@4", "Accuracy(rel=2)"]
#: the rankings without their unjudged docs (trec_eval -J): the judged rows of a tie group tie among themselves
JUDGED_ONLY = [
    *["P(judged_only=true)@2", "R(judged_only=true)@3", "AP(judged_only=true)", "AP(judged_only=true,rel=2)@3"],
    *["RR(judged_only=true)", "Rprec(judged_only=true)", "Success(judged_only=true)@2", "nDCG(judged_only=true)@3"],
    *["nDCG(judged_only=true)", "IPrec(judged_only=true)@0.5", "SetP(judged_only=true)", "SetF(judged_only=true)"],
    *["SetAP(judged_only=true)", "SetRelP(judged_only=true)"],
]
DIVERSITY = [
    *["alpha-nDCG@3", "alpha-DCG(alpha=0.3)@2", "ERR-IA@3", "nERR-IA@3", "NRBP", "nNRBP(beta=0.7)", "P-IA@3"],
    *["S-recall@2", "MAP-IA", "alpha-nDCG(judged_only=true)@3", "P-IA(judged_only=true)@2"],
]
RAG = [
    *["RA-nWG@3", "RA-nWG(novelty=0.5)@3", "N-Recall4+@3", "N-Recall5@2", "Precision4+@3", "Harm@3", "GoldHit@3"],
    *["PROC@2", "%PROC@3", "dDCG@3", "ndDCG@3", "UDCG@3", "DistractorRate@3", "DistractorHarm@3"],
]
SAMPLES = [
    *["CoverageRecall@2", "NuggetRecall@3", "NuggetRecall(score=all)@2", "AttributionRate@3"],
    *["ContextPrecision(method=similarity)@3", "ContextRecall(method=similarity)@2", "IDBasedContextPrecision@2"],
]

#: AWRF's families over fairness group labels (one group, several, weighted; some docs unlabelled)
FAIRNESS = [
    *["AWRF", "AWRF@2", "AWRF(p=0.5)@3", "AWRF(target=given)@3", "AWRF(rel=2)", "nDCG-AWRF@3", "nDCG-AWRF"],
    *["AWRF-FRT(p=0.5)", "AWRF-FRT(p=0.3)@2", "AWRF-FRT-gap(p=0.5)@3", "AWRF-FRT-gap(p=0.5,combo=Variance)"],
    *["AWRF-FRT-gap(p=0.8,combo=MeanAbsDev)@4"],
]
#: over span labels and a chunk table: the span measures, the rank measures' span readings, the chunk-grade
#: reading, and budgets of tokens (words-v1 over the documents' text)
SPANS = [
    *["SpanRecall", "SpanRecall@2", "SpanPrecision@3", "SpanIoU@2", "SpanIoU(mode=chroma)@3", "SpanCoverage@2"],
    *["SpanRecall(unit=tokens)@2", "SpanPrecision(mode=chroma)", "PrecisionOmega", "nDCG@3", "DCG@2", "RA-nWG@3"],
    *["UDCG@3", "P@2", "AP", "RR", "SpanRecall@12tok", "SpanIoU@9tok", "nDCG@15tok", "RA-nWG@20tok", "UDCG@12tok"],
]
#: every reading at a budget of chunk ids, by a chunk table of token counts (no spans)
BUDGET = 12
BUDGET_FAMILIES = [
    *["R", "AP", "RR", "Success", "nDCG", "DCG", "ERR(gmax=5)", "RA-nWG", "N-Recall4+", "N-Recall5", "GoldHit"],
    *["dDCG", "UDCG", "DistractorRate", "DistractorHarm", "IDBasedContextPrecision", "IDBasedContextRecall"],
    *["RankWeightedPrecision", "ContextPrecision", "ContextRecall", "RBP", "P", "Judged", "unj", "Precision4+"],
    *["Harm", "relative_P"],
]
BUDGETS = [f"{f}@{BUDGET}tok" for f in BUDGET_FAMILIES]
SCENARIOS = TREC + ACCURACY + JUDGED_ONLY + RAG + SAMPLES + DIVERSITY + FAIRNESS + SPANS + BUDGETS


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


#: per measure and query, over every order of the query's ties: the mean, and the highest and lowest value
Orders = dict[str, dict[str, tuple[float, float, float]]]


def _brute(qrels: dict, run: dict, names: list[str], **kw: Any) -> Orders:
    """Per measure and query: the mean over every order of the query's ties (NaN when some order is),
    the highest and the lowest value of any order."""
    copies_r, of = _copies(run)
    copies_q = {key: dict(qrels[q]) for key, q in of.items()}
    res = ctxeval.evaluate(copies_q, copies_r, names, policies=BY_ORDER, **kw).runs[0]
    return _means(res, of)


def _copies(run: dict) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Every order of every query's ties as a query of its own (``q#i``), and the query of each."""
    copies, of = {}, {}
    for q, docs in run.items():
        for i, order in enumerate(_orders(docs)):
            of[f"{q}#{i}"] = q
            copies[f"{q}#{i}"] = {d: float(len(order) - j) for j, d in enumerate(order)}
    return copies, of


def _means(res: Any, of: dict[str, str]) -> Orders:
    out: Orders = {}
    for m, v in res.values.items():
        acc: dict[str, list[float]] = {}
        for q, x in zip(res.qids, v):
            acc.setdefault(of[q], []).append(float(x))
        out[str(m)] = {q: (float(np.mean(xs)), _best(xs, max), _best(xs, min)) for q, xs in acc.items()}
    return out


def _best(xs: list[float], pick: Any) -> float:
    defined = [x for x in xs if not math.isnan(x)]
    return float(pick(defined)) if defined else math.nan


def _check(exp: Any, brute: Orders, spread: bool | list[str] = False) -> None:
    """The expected values equal the brute-force means; for the measures of ``spread`` (True: all), the
    best and worst orders' values equal the highest and lowest of any order (the lowest and highest
    where lower is better)."""
    assert exp.ties["tie_groups"] > 0  # the case holds ties (else the test could not fail)
    named = {str(ctxeval.parse_measure(n)) for n in spread} if isinstance(spread, list) else set()
    for m, v in exp.values.items():
        want = np.array([brute[str(m)][q] for q in exp.qids]).reshape(-1, 3)
        np.testing.assert_allclose(v, want[:, 0], rtol=1e-9, atol=1e-12, err_msg=f"{m} under ties='expected'")
        if spread is True or str(m) in named:
            hi, lo = (want[:, 1], want[:, 2]) if m.spec.higher_is_better else (want[:, 2], want[:, 1])
            best, worst = exp.extremes[m]
            np.testing.assert_allclose(best, hi, rtol=1e-9, atol=1e-12, err_msg=f"{m}: the best order")
            np.testing.assert_allclose(worst, lo, rtol=1e-9, atol=1e-12, err_msg=f"{m}: the worst order")


#: named by a test below (its fit file is written there)
FITTED = {"UDCG-pos"}


def _names(base: list[str]) -> list[str]:
    """``base`` plus one default example (@3) of every family that none of the scenarios names."""
    named = {make_name(n) for n in SCENARIOS} | FITTED
    extra = []
    for fam in REGISTRY.values():
        if fam.name not in named:
            extra.append(str(make(fam.name, None, 3 if fam.cutoff != "none" else None)))
    return base + extra


def make_name(name: str) -> str:
    return ctxeval._measures.parse_measure(name).family


def test_the_scenarios_name_every_family_or_try_it() -> None:
    named = {make_name(n) for n in SCENARIOS} | FITTED
    assert named <= set(REGISTRY)
    # every family is covered: by name here, or by its default example in the TREC scenario
    assert set(REGISTRY) <= named | {make_name(n) for n in _names(TREC)}


@pytest.mark.parametrize("seed", range(3))
def test_trec_grades_equal_the_brute_force_mean(seed: int) -> None:
    qrels, run = _trec_case(random.Random(seed), [-1, 0, 0, 1, 2, 3])
    names = _names(TREC + ACCURACY + JUDGED_ONLY)
    exp = ctxeval.evaluate(qrels, run, names, policies=EXPECTED).runs[0]
    # Accuracy and the judged_only readings: the grade order is the best (at a cutoff Accuracy's
    # best and worst are searched: there the grade order can leave no pair, NaN, or the most)
    _check(exp, _brute(qrels, run, names), spread=ACCURACY + JUDGED_ONLY)


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


@pytest.mark.parametrize("seed", range(3))
def test_fairness_measures_equal_the_brute_force_mean(seed: int) -> None:
    rnd = random.Random(400 + seed)
    qrels, run = _trec_case(rnd, [0, 1, 1, 2], limit=36)
    kinds: list[object] = ["x", "y", "y", ["x", "y"], {"x": 3, "z": 1}, {"y": 1, "z": 2}]
    labels = {d: rnd.choice(kinds) for d in "abcdefg"}  # h has no label
    rag = {"fair_groups": labels, "fair_target": {"*": {"x": 0.5, "y": 0.3, "z": 0.2}}}
    exp = ctxeval.evaluate(qrels, run, FAIRNESS, policies=EXPECTED, rag=rag).runs[0]
    _check(exp, _brute(qrels, run, FAIRNESS, rag=rag), spread=True)


DOCUMENTS = {"A": " ".join(f"w{i:02d}" for i in range(40)), "B": " ".join(f"v{i:02d}" for i in range(30))}


def _span_case(rnd: random.Random) -> tuple[dict, list[tuple], dict]:
    """Eight chunks of unequal lengths (some overlapping) over two documents, one to three spans of
    evidence per query, and runs with ties as :func:`_trec_case`'s."""
    table = {}
    for i in range(8):
        d = rnd.choice("AB")
        s = rnd.randrange(0, len(DOCUMENTS[d]) - 5)
        table[f"c{i}"] = (d, s, min(len(DOCUMENTS[d]), s + rnd.randint(4, 40)))
    spans: dict[tuple, int] = {}
    for q in ("q1", "q2", "q3"):
        for _ in range(rnd.randint(1, 3)):
            d = rnd.choice("AB")
            s = rnd.randrange(0, len(DOCUMENTS[d]) - 3)
            spans[(q, d, s, min(len(DOCUMENTS[d]), s + rnd.randint(3, 30)))] = rnd.choice([1, 1, 2, 3])
    run = {}
    for q in ("q1", "q2", "q3"):
        while True:
            got = {c: float(rnd.choice([1, 2, 3])) for c in rnd.sample(sorted(table), rnd.randint(2, 6))}
            if len(_orders(got)) <= 36:
                break
        run[q] = got
    return table, [(*k, g) for k, g in spans.items()], run


def _span_labels(spans: list[tuple], of: dict[str, str] | None = None) -> ctxeval.SpanLabels:
    """The span labels, each query's given again for every copy of it (``of``: copy -> query)."""
    copies = of or {q: q for q, *_ in spans}
    return ctxeval.SpanLabels.from_records(
        [
            {"query_id": key, "doc_id": d, "start": s, "end": e, "grade": g}
            for key, q0 in copies.items()
            for q, d, s, e, g in spans
            if q == q0
        ]
    )


@pytest.mark.parametrize("seed", range(3))
def test_span_measures_and_readings_equal_the_brute_force_mean(seed: int) -> None:
    table, spans, run = _span_case(random.Random(500 + seed))
    chunks = ctxeval.Chunks.from_dict(table, documents=DOCUMENTS)
    kw: dict[str, Any] = {"chunks": chunks, "rag": {"grade_map": {1: 3, 2: 4, 3: 5}}}
    exp = ctxeval.evaluate(_span_labels(spans), run, SPANS, policies=EXPECTED, **kw).runs[0]
    copies, of = _copies(run)
    res = ctxeval.evaluate(_span_labels(spans, of), copies, SPANS, policies=BY_ORDER, **kw).runs[0]
    # P, AP and RR read the chunk grades: there the grade order is the best, as searching finds
    _check(exp, _means(res, of), spread=True)


def _packed(order: list[str], tokens: dict[str, int], budget: int, rule: str) -> tuple[str, ...]:
    out, left = [], budget
    for d in order:
        if tokens[d] <= left:
            out.append(d)
            left -= tokens[d]
        elif rule == "stop":
            break
    return tuple(out)


@pytest.mark.parametrize(("seed", "rule"), [(s, r) for s in range(4) for r in ("stop", "skip")])
def test_budgets_equal_the_brute_force_mean_where_the_order_changes_what_fits(seed: int, rule: str) -> None:
    rnd = random.Random(600 + seed)
    while True:  # a case that can fail: some query's context (which chunks fit) depends on the order of its ties
        qrels, run = _trec_case(rnd, [1, 2, 3, 4, 5, 5], limit=36)
        tokens = {d: rnd.randint(1, 9) for d in "abcdefgh"}
        if any(len({frozenset(_packed(o, tokens, BUDGET, rule)) for o in _orders(d)}) > 1 for d in run.values()):
            break
    table = ctxeval.Chunks.from_records(
        [{"chunk_id": d, "doc_id": "D", "start": 0, "end": 1, "tokens": n} for d, n in tokens.items()]
    )
    groups = {d: "g" + str(ord(d) % 2) for d in tokens}
    kw: dict[str, Any] = {"chunks": table, "rag": {"overflow": rule, "groups": groups}}
    exp = ctxeval.evaluate(qrels, run, BUDGETS, policies=EXPECTED, **kw).runs[0]
    _check(exp, _brute(qrels, run, BUDGETS, **kw), spread=True)


def test_a_budget_reads_the_ranks_its_chunks_can_fill() -> None:
    """Chunks of 5 tokens or more and a budget of 10: under ``stop`` the context is at most the first
    two ranks. The relevant c ties with b at ranks 2-3 (in the context or not, half and half); the 30
    tied chunks past rank 3 (of 5, 6 and 7 tokens: 30! / (10!)^3 orders) are never read, so never
    enumerated. Under ``skip`` a 12-token chunk ranked first is left out and the next two enter."""
    tail = {f"t{i:02d}": 1.0 for i in range(30)}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, **tail}}
    tokens = {d: 5 + i % 3 if d in tail else 5 for i, d in enumerate(run["q"])}
    table = ctxeval.Chunks.from_records(
        [{"chunk_id": d, "doc_id": "D", "start": 0, "end": 1, "tokens": n} for d, n in tokens.items()]
    )
    qrels = {"q": {"a": 1, "c": 1}}
    res = ctxeval.evaluate(qrels, run, ["R@10tok", "P@10tok", "nDCG@10tok"], chunks=table, policies=EXPECTED)
    r = res.runs[0]
    assert r.mean("R@10tok") == pytest.approx(0.75) and r.mean("P@10tok") == pytest.approx(0.75)
    assert r.spread("R@10tok")[:2] == (1.0, 0.5)
    ideal = 1 + 1 / math.log2(3)
    assert r.mean("nDCG@10tok") == pytest.approx((1 + 0.5 / math.log2(3)) / ideal, rel=1e-12)
    short = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}}
    big = ctxeval.Chunks.from_records(
        [{"chunk_id": d, "doc_id": "D", "start": 0, "end": 1, "tokens": 12 if d == "a" else 5} for d in short["q"]]
    )
    skip = ctxeval.evaluate(qrels, short, ["R@10tok"], chunks=big, policies=EXPECTED, rag={"overflow": "skip"})
    assert skip.runs[0].mean("R@10tok") == pytest.approx(0.5)  # b and c enter, whatever their order


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


def test_span_measures_at_a_cutoff_take_the_subsets_of_a_tie_not_its_orders() -> None:
    """10 tied chunks, 5 of them each holding a fifth of the evidence: SpanRecall@5 counts the evidence
    chunks among the top 5, hypergeometric with mean 5 · 5/10 / 5 = 1/2. Its orders of 5 ranks would be
    30,240 (past the limit); it reads the set of them, C(10, 5) = 252. Whole lists are sets: one order;
    precision_Omega does not read the run."""
    doc = "x" * 100
    table = ctxeval.Chunks.from_dict({f"c{i}": ("D", 10 * i, 10 * i + 10) for i in range(10)}, documents={"D": doc})
    labels = ctxeval.SpanLabels.from_records(
        [{"query_id": "q", "doc_id": "D", "start": 20 * i, "end": 20 * i + 10, "grade": 1} for i in range(5)]
    )
    run = {"q": {f"c{i}": 1.0 for i in range(10)}}
    names = ["SpanRecall@5", "SpanRecall", "SpanPrecision", "PrecisionOmega"]
    res = ctxeval.evaluate(labels, run, names, chunks=table, policies=EXPECTED).runs[0]
    assert res.mean("SpanRecall@5") == pytest.approx(0.5, rel=1e-12)
    assert res.spread("SpanRecall@5")[:2] == (1.0, 0.0)  # the five evidence chunks on top, or none
    assert (res.mean("SpanRecall"), res.mean("SpanPrecision"), res.mean("PrecisionOmega")) == (1.0, 0.5, 1.0)


def test_fairness_tells_apart_only_rows_of_other_groups() -> None:
    """12 tied docs, 6 of group x and 6 of y (4 relevant): AWRF reads the groups of the ranks alone, so
    its orders are the C(12, 6) = 924 sequences of groups (12! orders of the docs are past the limit),
    each equally likely: their mean, each sequence evaluated as a query of its own, is the expected
    value; nDCG-AWRF also reads relevance, and refuses (one line, no sampling) past the limit."""
    docs = [f"d{i}" for i in range(12)]
    groups = {d: "x" if i % 2 else "y" for i, d in enumerate(docs)}
    qrels = {"q": {d: int(i < 4) for i, d in enumerate(docs)}}
    rag = {"fair_groups": groups}
    res = ctxeval.evaluate(qrels, {"q": dict.fromkeys(docs, 1.0)}, ["AWRF", "AWRF@5"], policies=EXPECTED, rag=rag)
    xs, ys = [d for d in docs if groups[d] == "x"], [d for d in docs if groups[d] == "y"]
    copies_q, copies_r = {}, {}
    for j, at in enumerate(itertools.combinations(range(12), 6)):  # the ranks of group x
        xi, yi = iter(xs), iter(ys)
        order = [next(xi) if r in at else next(yi) for r in range(12)]
        copies_q[f"q{j}"] = qrels["q"]
        copies_r[f"q{j}"] = {d: float(12 - r) for r, d in enumerate(order)}
    brute = ctxeval.evaluate(copies_q, copies_r, ["AWRF", "AWRF@5"], policies=BY_ORDER, rag=rag).runs[0]
    for m in ("AWRF", "AWRF@5"):
        every = brute.values[ctxeval.parse_measure(m)]
        assert res.runs[0].mean(m) == pytest.approx(float(np.mean(every)), rel=1e-12)
        assert res.runs[0].spread(m)[:2] == pytest.approx((np.max(every), np.min(every)), rel=1e-12)
    with pytest.raises(ConfigError, match=r"^measure nDCG-AWRF has no closed form under tied scores[^\n]*$"):
        ctxeval.evaluate(qrels, {"q": dict.fromkeys(docs, 1.0)}, ["nDCG-AWRF"], policies=EXPECTED, rag=rag)


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
