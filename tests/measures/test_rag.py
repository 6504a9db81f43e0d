"""Set-based RAG measures: hand-worked examples, a reference implementation under Hypothesis, grade
maps, pools, the novelty variant, ``diagnose`` and the CLI's JSON contract."""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from ctxeval import ConfigError, PoolError, Qrels, Run, diagnose, evaluate, parse_measure
from ctxeval._cli import cli
from ctxeval._session import prepare

# --- the hand-worked example of the issue -------------------------------------------------------------

# Labelled pool grades [5, 4, 4, 3, 3, 3, 2, 1]; the run's top 4 has grades [4, 3, 3, 3].
HAND_QRELS = {"q": {"g5": 5, "g4a": 4, "g4b": 4, "g3a": 3, "g3b": 3, "g3c": 3, "g2": 2, "g1": 1}}
HAND_RUN = {"q": {"g4a": 4.0, "g3a": 3.0, "g3b": 2.0, "g3c": 1.0, "g5": 0.5}}  # g5 sits at rank 5


def _one(qrels: dict, run: dict, names: list[str], **rag: object) -> dict[str, float]:
    res = evaluate(qrels, run, names, rag=rag)
    return {str(m): res.runs[0].mean(m) for m in res.measures}


def test_hand_worked_example() -> None:
    # N = 8 labelled docs: n5 = 1, n4 = 2, n3 = 3, n2 = 1, n1 = 1
    # p5 = 1/8, p4 = 2/8, p3 = 3/8
    # rarity (alpha = 1): r5 = 1.0 / (1/8) = 8;  r4 = 0.5 / (2/8) = 2;  r3 = 0.1 / (3/8) = 0.2667
    # weights: w5 = 1;  w4 = min(2 / 8, cap4 = 1) = 0.25;  w3 = min(0.2667 / 8, cap3 = 0.25) = 1/30;  w2 = w1 = 0
    w5, w4, w3 = 1.0, 0.25, (0.1 / (3 / 8)) / 8
    assert w3 == pytest.approx(1 / 30)
    # G_obs  = w(4) + 3 w(3)              = 0.25 + 0.1      = 0.35
    # G_ideal = the 4 largest weights       = 1 + 0.25 + 0.25 + 1/30 = 1.5333
    g_obs = w4 + 3 * w3
    g_ideal = w5 + 2 * w4 + w3
    v = _one(HAND_QRELS, HAND_RUN, ["RA-nWG@4", "N-Recall4+@4", "N-Recall5@4", "Precision4+@4", "Harm@4", "GoldHit@4"])
    assert v["RA-nWG@4"] == pytest.approx(g_obs / g_ideal) == pytest.approx(0.228261, abs=1e-6)
    # N-Recall4+@4 = (# grade >= 4 in top 4 = 1) / min(4, n4 + n5 = 3) = 1/3
    assert v["N-Recall4+@4"] == pytest.approx(1 / 3)
    # N-Recall5@4 = (# grade 5 in top 4 = 0) / min(4, n5 = 1) = 0
    assert v["N-Recall5@4"] == 0.0
    # Precision4+@4 = 1 / 4;  Harm@4 = (# grade <= 2 in top 4 = 0) / 4 = 0
    assert v["Precision4+@4"] == 0.25 and v["Harm@4"] == 0.0
    # GoldHit@4: g5 and g4b are not in the top 4
    assert v["GoldHit@4"] == 0.0
    # Judged@4 is reported beside the RAG measures
    assert v["Judged@4"] == 1.0


def test_hand_worked_proc() -> None:
    # The retrieval pool holds g4a, g3a, g3b, g3c, g5 (the run itself) plus, at depth 6, g4b.
    pool = {"q": {"g4a": 6.0, "g3a": 5.0, "g5": 4.0, "g3b": 3.0, "g3c": 2.0, "g4b": 1.0}}
    # pool depth 5: the judged pool docs are g4a, g3a, g5, g3b, g3c: the 4 largest weights are
    # 1 + 0.25 + 1/30 + 1/30 -> PROC@4 = 1.3167 / 1.5333
    w4, w3 = 0.25, 1 / 30
    g_ideal = 1 + 2 * w4 + w3
    g_pool = 1 + w4 + 2 * w3
    g_obs = w4 + 3 * w3
    v = _one(
        HAND_QRELS,
        HAND_RUN,
        ["RA-nWG@4", "PROC@4", "%PROC@4", "PROC(of=N-Recall4+)@4", "PROC(of=N-Recall5)@4", "%PROC(of=N-Recall5)@4"],
        pool=pool,
        pool_depth=5,
    )
    assert v["PROC@4"] == pytest.approx(g_pool / g_ideal)
    assert v["%PROC@4"] == pytest.approx(g_obs / g_pool) == pytest.approx(v["RA-nWG@4"] / v["PROC@4"])
    # of=N-Recall4+: the pool (depth 5) holds g5 and g4a: min(4, 2) / min(4, 3) = 2/3; of=N-Recall5: 1/1
    assert v["PROC(of=N-Recall4+)@4"] == pytest.approx(2 / 3)
    assert v["PROC(of=N-Recall5)@4"] == 1.0 and v["%PROC(of=N-Recall5)@4"] == 0.0
    # the full pool holds every grade >= 4 doc: PROC is the ideal
    full = _one(HAND_QRELS, HAND_RUN, ["PROC@4"], pool=pool)
    assert full["PROC@4"] == pytest.approx(1.0)


def test_names_are_canonical() -> None:
    for text, canonical in [
        ("RA-nWG(alpha=0.5,cap3=0.33)@10", "RA-nWG(alpha=0.5,cap3=0.33)@10"),
        ("ra-nwg(alpha=1)@10", "RA-nWG@10"),
        ("PROC(of=RA-nWG)@10", "PROC@10"),
        ("PROC(of=N-Recall4+)@10", "PROC(of=N-Recall4+)@10"),
        ("%PROC(of=N-Recall5)@5", "%PROC(of=N-Recall5)@5"),
        ("pct_proc@5", "%PROC@5"),
        ("N-Recall4+@5", "N-Recall4+@5"),
        ("harm.5", "Harm@5"),
        ("RA-nWG(novelty=0.5)@10", "RA-nWG(novelty=0.5)@10"),
    ]:
        m = parse_measure(text)
        assert str(m) == canonical and parse_measure(str(m)) == m
    with pytest.raises(Exception, match="needs a cutoff"):
        parse_measure("RA-nWG")
    with pytest.raises(Exception, match="must be one of"):
        parse_measure("PROC(of=nDCG)@10")


# --- a reference implementation, and Hypothesis ---------------------------------------------------

BASE = {5: 1.0, 4: 0.5, 3: 0.1, 2: 0.0, 1: 0.0}


def ref_weights(
    grades: list[int], alpha: float = 1.0, cap4: float = 1.0, cap3: float = 0.25, fb4: float = 1.0, fb3: float = 0.2
) -> dict[int, float]:
    n = Counter(grades)
    big_n = len(grades)
    if n[5] == 0:
        return {5: 1.0, 4: fb4, 3: fb3, 2: 0.0, 1: 0.0}
    r = {g: (BASE[g] / (n[g] / big_n) ** alpha if n[g] else 0.0) for g in (3, 4, 5)}
    return {5: 1.0, 4: min(r[4] / r[5], cap4), 3: min(r[3] / r[5], cap3), 2: 0.0, 1: 0.0}


def ref_query(qrels: dict[str, int], ranking: list[str], pool: list[str], k: int, **kw: float) -> dict[str, float]:
    nan = math.nan
    w = ref_weights(list(qrels.values()), **kw)
    top = [d for d in ranking[:k] if d in qrels]
    g_obs = sum(w[qrels[d]] for d in top)
    g_ideal = sum(sorted((w[g] for g in qrels.values()), reverse=True)[:k])
    g_pool = sum(sorted((w[qrels[d]] for d in pool if d in qrels), reverse=True)[:k])
    n45 = sum(1 for g in qrels.values() if g >= 4)
    n5 = sum(1 for g in qrels.values() if g == 5)
    hit45 = sum(1 for d in top if qrels[d] >= 4)
    hit5 = sum(1 for d in top if qrels[d] == 5)
    proc = g_pool / g_ideal if g_ideal > 0 else nan
    return {
        "RA-nWG": g_obs / g_ideal if g_ideal > 0 else nan,
        "PROC": proc,
        "%PROC": g_obs / g_pool if g_pool > 0 else nan,
        "N-Recall4+": hit45 / min(k, n45) if n45 else nan,
        "N-Recall5": hit5 / min(k, n5) if n5 else nan,
        "Precision4+": hit45 / k,
        "Harm": sum(1 for d in top if qrels[d] <= 2) / k,
        "GoldHit": float(hit45 == n45) if n45 else nan,
    }


@st.composite
def rag_case(draw: st.DrawFn) -> tuple[dict, dict, dict, int]:
    qrels: dict = {}
    pool: dict = {}
    final: dict = {}
    for qi in range(draw(st.integers(1, 3))):
        q = f"q{qi}"
        docs = [f"d{i}" for i in range(draw(st.integers(1, 10)))]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        qrels[q] = {d: draw(st.integers(1, 5)) for d in judged}
        pool_docs = draw(st.lists(st.sampled_from([*docs, "u1", "u2"]), unique=True, min_size=1))
        pool[q] = {d: float(len(pool_docs) - i) for i, d in enumerate(pool_docs)}
        chosen = draw(st.permutations(pool_docs))[: draw(st.integers(0, len(pool_docs)))]
        if chosen:
            final[q] = {d: float(len(chosen) - i) for i, d in enumerate(chosen)}
    if not final:
        q = next(iter(pool))
        final[q] = {next(iter(pool[q])): 1.0}
    return qrels, pool, final, draw(st.integers(1, 12))


PARAMS = st.sampled_from(
    [
        {},
        {"alpha": 0.0},
        {"alpha": 0.5, "cap3": 0.33},
        {"alpha": 2.0, "cap4": 0.8},
        {"fallback4": 0.7, "fallback3": 0.1},
    ]
)
_KW = {"alpha": "alpha", "cap4": "cap4", "cap3": "cap3", "fallback4": "fb4", "fallback3": "fb3"}


def _name(fam: str, params: dict, k: int) -> str:
    inner = ",".join(f"{p}={v}" for p, v in params.items())
    return f"{fam}({inner})@{k}" if inner else f"{fam}@{k}"


@given(rag_case(), PARAMS)
def test_matches_reference_and_bounds(case: tuple, params: dict) -> None:
    qrels, pool, final, k = case
    weighted = ["RA-nWG", "PROC", "%PROC"]
    plain = ["N-Recall4+", "N-Recall5", "Precision4+", "Harm", "GoldHit"]
    names = [_name(f, params, k) for f in weighted] + [f"{f}@{k}" for f in plain]
    res = evaluate(qrels, final, names, rag={"pool": pool})
    r = res.runs[0]
    kw = {_KW[p]: v for p, v in params.items()}
    for i, q in enumerate(r.qids):
        ranking = sorted(final.get(q, {}), key=lambda d: -final[q][d])
        ref = ref_query(qrels[q], ranking, sorted(pool[q], key=lambda d: -pool[q][d]), k, **kw)
        for fam, name in zip(weighted + plain, names):
            got = float(r.values[parse_measure(name)][i])
            want = ref[fam]
            if math.isnan(want):
                assert math.isnan(got), (name, q, got)
            else:
                assert got == pytest.approx(want, abs=1e-12), (name, q, got, want)
                assert -1e-12 <= got <= 1 + 1e-12, (name, got)
        ra, proc = (float(r.values[parse_measure(n)][i]) for n in names[:2])
        if not math.isnan(ra):
            assert proc >= ra - 1e-12  # the pool bounds what selection can achieve


@given(rag_case(), st.randoms(use_true_random=False))
def test_invariant_to_order_inside_top_k(case: tuple, rnd: random.Random) -> None:
    qrels, pool, final, k = case
    shuffled = {}
    for q, docs in final.items():
        ranking = sorted(docs, key=lambda d: -docs[d])
        head, tail = ranking[:k], ranking[k:]
        rnd.shuffle(head)
        order = head + tail
        shuffled[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    names = [
        f"{f}@{k}" for f in ("RA-nWG", "PROC", "%PROC", "N-Recall4+", "N-Recall5", "Precision4+", "Harm", "GoldHit")
    ]
    a = evaluate(qrels, final, names, rag={"pool": pool}).runs[0]
    b = evaluate(qrels, shuffled, names, rag={"pool": pool}).runs[0]
    for n in names:
        np.testing.assert_array_equal(a.values[parse_measure(n)], b.values[parse_measure(n)], err_msg=n)


@given(rag_case(), PARAMS)
def test_oracle_scores_one(case: tuple, params: dict) -> None:
    qrels, _, _, k = case
    kw = {_KW[p]: v for p, v in params.items()}
    oracle = {}
    by_grade = {}
    for q, docs in qrels.items():
        w = ref_weights(list(docs.values()), **kw)
        order = sorted(docs, key=lambda d: (-w[docs[d]], d))
        oracle[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
        order = sorted(docs, key=lambda d: (-docs[d], d))
        by_grade[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    names = [_name(f, params, k) for f in ("RA-nWG", "PROC", "%PROC")]
    r = evaluate(qrels, oracle, names).runs[0]
    for n in names:
        vals = r.values[parse_measure(n)]
        np.testing.assert_allclose(vals[~np.isnan(vals)], 1.0, err_msg=n)
    r = evaluate(qrels, by_grade, [f"N-Recall4+@{k}", f"N-Recall5@{k}"]).runs[0]
    for n in (f"N-Recall4+@{k}", f"N-Recall5@{k}"):
        vals = r.values[parse_measure(n)]
        np.testing.assert_allclose(vals[~np.isnan(vals)], 1.0, err_msg=n)


def test_alpha_zero_turns_rarity_off() -> None:
    # alpha = 0: r_g = b_g, so w4 = min(0.5, cap4) = 0.5 and w3 = min(0.1, cap3) = 0.1, whatever the shares
    # top 4 = [4, 3, 3, 3]: G_obs = 0.5 + 0.3 = 0.8; G_ideal = 1 + 0.5 + 0.5 + 0.1 = 2.1
    v = _one(HAND_QRELS, HAND_RUN, ["RA-nWG(alpha=0)@4"])
    assert v["RA-nWG(alpha=0)@4"] == pytest.approx(0.8 / 2.1)


def test_no_grade5_falls_back() -> None:
    # no grade-5 doc: w4 = 1, w3 = 0.2 (fallback); N-Recall5 is NA and excluded from the mean
    qrels = {"q": {"a": 4, "b": 3, "c": 3, "d": 1}, "r": {"x": 5, "y": 4}}
    run = {"q": {"b": 3.0, "d": 2.0}, "r": {"x": 1.0}}
    res = evaluate(qrels, run, ["RA-nWG@2", "N-Recall5@2", "N-Recall4+@2", "GoldHit@2", "Harm@2"])
    r = res.runs[0]
    # q: G_obs = 0.2 + 0 ; G_ideal = 1 + 0.2
    assert r.per_query("RA-nWG@2")["q"] == pytest.approx(0.2 / 1.2)
    assert math.isnan(r.per_query("N-Recall5@2")["q"]) and r.valid("N-Recall5@2") == 1
    assert r.mean("N-Recall5@2") == 1.0  # only r counts
    assert r.per_query("Harm@2")["q"] == 0.5
    # r: n5 = n4 = 1, p5 = p4 = 1/2: w4 = min((0.5/0.5)/(1/0.5), 1) = 0.5; top 2 holds x only: 1 / 1.5
    assert r.per_query("RA-nWG@2")["r"] == pytest.approx(1 / 1.5)
    assert r.per_query("GoldHit@2") == {"q": 0.0, "r": 0.0}


def test_unjudged_docs_weigh_zero_and_are_not_harm() -> None:
    qrels = {"q": {"a": 5, "b": 1}}
    run = {"q": {"u1": 3.0, "u2": 2.0, "b": 1.0}}
    v = _one(qrels, run, ["RA-nWG@3", "Harm@3"])
    assert v["RA-nWG@3"] == 0.0 and v["Harm@3"] == pytest.approx(1 / 3) and v["Judged@3"] == pytest.approx(1 / 3)


def test_na_queries_are_excluded_and_counted() -> None:
    qrels = {"q1": {"a": 5}, "q2": {"b": 2, "c": 1}}  # q2: nothing of positive weight, RA-nWG NA
    res = evaluate(qrels, {"q1": {"a": 1.0}, "q2": {"b": 1.0}}, ["RA-nWG@5", "PROC@5", "%PROC@5"])
    d = res.to_dict()
    assert d["runs"][0]["aggregate"]["RA-nWG@5"] == 1.0
    assert d["runs"][0]["valid_queries"] == {"RA-nWG@5": 1, "PROC@5": 1, "%PROC@5": 1, "Judged@5": 2}


# --- grade maps --------------------------------------------------------------------------------------

DL_QRELS = {"q": {"a": 3, "b": 2, "c": 1, "d": 0}}
DL_RUN = {"q": {"c": 2.0, "d": 1.0}}


def test_trec_dl_preset_equals_mapped_qrels() -> None:
    names = ["RA-nWG@2", "Harm@2", "N-Recall4+@2"]
    mapped = _one({"q": {"a": 5, "b": 4, "c": 3, "d": 2}}, DL_RUN, names)
    for gm in ("trec-dl", "3:5,2:4,1:3,0:2", {3: 5, 2: 4, 1: 3, 0: 2}):
        assert _one(DL_QRELS, DL_RUN, names, grade_map=gm) == mapped
    res = evaluate(DL_QRELS, DL_RUN, names, rag={"grade_map": "trec-dl"})
    assert res.settings["grade_map"] == "trec-dl (3:5,2:4,1:3,0:2)"
    assert "grade map: trec-dl (3:5,2:4,1:3,0:2)" in res_table(res)


def res_table(res: object) -> str:
    from ctxeval._render.text import render

    return render(res, "table")  # type: ignore[arg-type]


def test_rel_thresholds_read_raw_grades() -> None:
    # raw grades of the top 2: 1 and 0; mapped: 3 and 2. P(rel=2) must read the raw grades.
    v = _one(DL_QRELS, DL_RUN, ["P(rel=2)@2", "P@2", "nDCG@2", "Harm@2"], grade_map="trec-dl")
    raw = _one(DL_QRELS, DL_RUN, ["P(rel=2)@2", "P@2", "nDCG@2"])
    assert v["P(rel=2)@2"] == 0.0 and v["P@2"] == 0.5
    assert {k: v[k] for k in raw} == raw
    assert v["Harm@2"] == 0.5  # mapped grade 2 (TREC 0) is weak, hence harm


def test_grade_scale_errors() -> None:
    with pytest.raises(ConfigError, match=r"1-5 utility scale.*grade\(s\) \[0\].*trec-dl"):
        evaluate(DL_QRELS, DL_RUN, ["RA-nWG@2"])
    with pytest.raises(ConfigError, match=r"does not map grade\(s\) \[0\]"):
        evaluate(DL_QRELS, DL_RUN, ["RA-nWG@2"], rag={"grade_map": "3:5,2:4,1:3"})
    with pytest.raises(ConfigError, match="after the grade map"):
        evaluate(DL_QRELS, DL_RUN, ["RA-nWG@2"], rag={"grade_map": "3:6,2:4,1:3,0:2"})
    # classical measures alone do not care about the scale
    assert evaluate(DL_QRELS, DL_RUN, ["P@2"]).runs[0].mean("P@2") == 0.5


# --- pools ---------------------------------------------------------------------------------------------


def test_outside_pool_is_an_error_unless_allowed() -> None:
    qrels = {"q1": {"a": 5, "b": 4, "z": 5}, "q2": {"c": 3}}
    pool = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
    final = {"q1": {"z": 3.0, "a": 2.0, "n": 1.0}, "q2": {"c": 1.0}}
    with pytest.raises(
        PoolError, match=r"run 'run': 2 docs in 1 query not in the retrieval pool 'run'.*query 'q1' doc '(z|n)'"
    ):
        evaluate(qrels, final, ["PROC@2"], rag={"pool": pool})
    res = evaluate(qrels, final, ["RA-nWG@2", "PROC@2", "%PROC@2"], rag={"pool": pool, "allow_outside_pool": True})
    d = res.to_dict()
    assert d["runs"][0]["pool"] == {"outside_pool_docs": 2, "outside_pool_queries": 1}
    assert d["settings"]["pool"]["allow_outside_pool"] is True
    r = res.runs[0]
    # the outside doc z (grade 5) in the top 2 joins the pool, so PROC >= RA-nWG and %PROC = 1
    assert r.per_query("RA-nWG@2")["q1"] == pytest.approx(1.0)
    assert r.per_query("PROC@2")["q1"] == pytest.approx(1.0) and r.per_query("%PROC@2")["q1"] == pytest.approx(1.0)
    assert "2 docs in 1 queries outside the pool (allowed)" in res_table(res)


def test_pool_depth_and_own_pool() -> None:
    qrels = {"q": {"a": 5, "b": 4, "c": 3}}
    run = {"q": {"x": 3.0, "c": 2.0, "a": 1.0}}
    # the run is its own pool; cut at depth 2 the pool lacks a
    v = _one(qrels, run, ["PROC@2"], pool_depth=2)
    w4, w3 = 0.5 / (1 / 3) / 3, min(0.1 / (1 / 3) / 3, 0.25)  # r4/r5 = 0.5, r3/r5 = 0.1
    assert v["PROC@2"] == pytest.approx(w3 / (1 + w4))
    # K beyond the pool depth: the top K is part of the pool
    v = _one(qrels, run, ["RA-nWG@3", "PROC@3"], pool_depth=2)
    assert v["PROC@3"] >= v["RA-nWG@3"]
    # an explicit pool cut at a depth: a run doc below the depth is outside
    with pytest.raises(PoolError, match=r"pool depth 1"):
        evaluate(qrels, run, ["PROC@2"], rag={"pool": run, "pool_depth": 1})
    with pytest.raises(ConfigError, match="pool_depth"):
        evaluate(qrels, run, ["PROC@2"], rag={"pool_depth": 0})


def test_one_pool_for_several_runs() -> None:
    qrels = {"q": {"a": 5, "b": 4, "c": 3}}
    pool = {"q": {"a": 3.0, "b": 2.0, "c": 1.0, "x": 0.5}}
    good = Run.from_dict({"q": {"a": 2.0, "b": 1.0}}, name="good")
    bad = Run.from_dict({"q": {"x": 2.0, "c": 1.0}}, name="bad")
    res = evaluate(qrels, [good, bad], ["PROC@2", "%PROC@2"], rag={"pool": pool})
    assert res["good"].mean("PROC@2") == res["bad"].mean("PROC@2") == pytest.approx(1.0)
    assert res["good"].mean("%PROC@2") == pytest.approx(1.0) and res["bad"].mean("%PROC@2") < 0.2


# --- novelty ------------------------------------------------------------------------------------------

NOV_QRELS = {"q": {"a": 5, "b": 5, "c": 4, "d": 4, "e": 3, "f": 2}}
GROUPS = {"a": "s1", "b": "s1", "c": "s1", "d": "s2", "e": "s3"}  # f has no group: its own


def test_novelty_hand_example() -> None:
    # N = 6: p5 = p4 = 1/3, p3 = 1/6 -> r5 = 3, r4 = 1.5, r3 = 0.6 -> w4 = 0.5, w3 = 0.2
    # novelty 0.5, ideal: group leaders a (1), d (0.5), e (0.2); repeats b (0.5 x 1), c (0.5 x 0.5)
    #   gains 1, 0.5, 0.5, 0.25, 0.2 -> G_ideal@3 = 2.0   (plain G_ideal@3 = 1 + 1 + 0.5 = 2.5)
    # run [a, b, c], all of source s1: G_obs = 1 + 0.5 + 0.25 = 1.75 -> 0.875 (plain: 2.5 / 2.5 = 1)
    same_source = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    v = _one(NOV_QRELS, same_source, ["RA-nWG@3", "RA-nWG(novelty=0.5)@3"], groups=GROUPS)
    assert v["RA-nWG@3"] == pytest.approx(1.0)
    assert v["RA-nWG(novelty=0.5)@3"] == pytest.approx(1.75 / 2.0)
    # run [c, d, a]: the best of s1 in the top 3 (a) counts fully, whatever its rank: 0.5 x 0.5 + 0.5 + 1
    v = _one(NOV_QRELS, {"q": {"c": 3.0, "d": 2.0, "a": 1.0}}, ["RA-nWG(novelty=0.5)@3"], groups=GROUPS)
    assert v["RA-nWG(novelty=0.5)@3"] == pytest.approx(1.75 / 2.0)
    # diverse run [a, d, b]: 1 + 0.5 + 0.5 = G_ideal
    v = _one(NOV_QRELS, {"q": {"a": 3.0, "d": 2.0, "b": 1.0}}, ["RA-nWG(novelty=0.5)@3"], groups=GROUPS)
    assert v["RA-nWG(novelty=0.5)@3"] == pytest.approx(1.0)


def test_novelty_needs_groups(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs a doc -> group mapping"):
        evaluate(NOV_QRELS, {"q": {"a": 1.0}}, ["RA-nWG(novelty=0.5)@3"])
    path = tmp_path / "groups.txt"
    path.write_text("# doc group\n" + "".join(f"{d} {g}\n" for d, g in GROUPS.items()), encoding="utf-8")
    v = _one(NOV_QRELS, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}, ["RA-nWG(novelty=0.5)@3"], groups=str(path))
    assert v["RA-nWG(novelty=0.5)@3"] == pytest.approx(0.875)


# --- diagnose -----------------------------------------------------------------------------------------

DIAG_QRELS = {
    "q1": {"a": 5, "b": 4, "c": 3, "x": 1},
    "q2": {"a": 5, "b": 4, "c": 3, "x": 1},
    "q3": {"a": 5, "b": 4},
    "q4": {"y": 2},
}
DIAG_POOL = {
    "q1": {"b": 3.0, "c": 2.0, "x": 1.0},  # a never retrieved
    "q2": {"x": 4.0, "c": 3.0, "b": 2.0, "a": 1.0},
    "q3": {"a": 2.0, "b": 1.0},
    "q4": {"y": 1.0},
}
DIAG_FINAL = {
    "q1": {"b": 2.0, "c": 1.0},
    "q2": {"x": 3.0, "c": 2.0, "a": 1.0},  # a at final rank 3, below K = 2
    "q3": {"a": 2.0, "b": 1.0},
    "q4": {"y": 1.0},
}


def test_diagnose_classifies() -> None:
    # q1: p_g = 1/4 -> w4 = 0.5, w3 = 0.1; G_ideal@2 = 1.5; the pool's best two are b, c: 0.6 -> PROC = 0.4
    # q2: the pool holds a and b: PROC = 1; top 2 = x, c: 0.1 -> %PROC = 0.1 / 1.5
    d = diagnose(DIAG_QRELS, DIAG_FINAL, DIAG_POOL, k=2)
    assert d.counts == {"retrieval": 1, "selection": 1, "both": 0, "healthy": 1, "undefined": 1}
    assert [(q.query_id, q.verdict) for q in d.queries] == [
        ("q1", "retrieval"),
        ("q2", "selection"),
        ("q3", "healthy"),
        ("q4", "undefined"),
    ]
    assert d["q1"].proc == pytest.approx(0.4) and d["q2"].pct_proc == pytest.approx(0.1 / 1.5)
    assert [q.query_id for q in d.worst()] == ["q2", "q1"]
    assert d["q1"].missed[0].where == "not in pool"
    assert d["q2"].missed[0].where == "pool rank 4, final rank 3"
    assert d["q3"].missed == ()
    # one against one: too few for the sign test ever to name a stage (issue 29, point 12)
    assert d.advice == (
        "cannot tell: 1 retrieval vs 1 selection failures are too few for the sign test to name a stage (even 2 "
        "against 0 would give p = 0.500); 2 queries whose top 2 holds their whole pool left out (no selection "
        "failure possible there)"
    )
    out = d.to_dict()
    assert out["counts"]["selection"] == 1 and out["valid_queries"]["RA-nWG@2"] == 3
    assert out["queries"][1]["missed_grade5"] == [{"doc_id": "a", "in_pool": True, "pool_rank": 4, "run_rank": 3}]
    json.dumps(out, allow_nan=False)
    # a looser PROC threshold: q1's top 2 is the best its pool allows (%PROC = 1), so it is healthy
    assert diagnose(DIAG_QRELS, DIAG_FINAL, DIAG_POOL, k=2, proc_threshold=0.3)["q1"].verdict == "healthy"


def test_diagnose_own_pool_and_errors() -> None:
    # the run is its own pool: for q2 it holds a (1) and c (0.1), PROC@2 = 1.1 / 1.5 = 0.733
    d = diagnose(DIAG_QRELS, DIAG_FINAL, k=2, proc_threshold=0.7)
    assert d["q2"].proc == pytest.approx(1.1 / 1.5) and d["q2"].pct_proc == pytest.approx(0.1 / 1.1)
    assert d["q2"].verdict == "selection" and d["q2"].missed[0].where == "pool rank 3, final rank 3"
    # at 0.8 the pool is thin (PROC .733) and the top 2 realised 9 % of it: both stages failed
    assert diagnose(DIAG_QRELS, DIAG_FINAL, k=2)["q2"].verdict == "both"
    with pytest.raises(PoolError):
        diagnose(DIAG_QRELS, {"q1": {"zz": 1.0}}, DIAG_POOL)
    with pytest.raises(ConfigError, match="k must be"):
        diagnose(DIAG_QRELS, DIAG_FINAL, k=0)


# --- CLI ----------------------------------------------------------------------------------------------


def _write_trec(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in DIAG_QRELS.items() for d, g in docs.items()), encoding="utf-8"
    )

    def run_file(name: str, run: dict) -> Path:
        p = tmp_path / name
        lines = []
        for q, docs in run.items():
            for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), 1):
                lines.append(f"{q} Q0 {d} {i} {s} {name.split('.')[0]}\n")
        p.write_text("".join(lines), encoding="utf-8")
        return p

    return qrels, run_file("final.txt", DIAG_FINAL), run_file("pool.txt", DIAG_POOL)


def test_cli_evaluate_json_contract(tmp_path: Path) -> None:
    qrels, final, pool = _write_trec(tmp_path)
    args = [
        "evaluate",
        str(qrels),
        str(final),
        "--pool",
        str(pool),
        "--pool-depth",
        "50",
        "-m",
        "RA-nWG@2",
        "-m",
        "PROC@2",
        "-m",
        "%PROC@2",
        "-m",
        "N-Recall5@2",
        "--format",
        "json",
    ]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["measures"] == ["RA-nWG@2", "PROC@2", "%PROC@2", "N-Recall5@2", "Judged@2"]
    run = out["runs"][0]
    assert run["valid_queries"] == {"RA-nWG@2": 3, "PROC@2": 3, "%PROC@2": 3, "N-Recall5@2": 3, "Judged@2": 4}
    assert run["pool"] == {"outside_pool_docs": 0, "outside_pool_queries": 0}
    assert out["settings"]["grade_map"] is None
    assert out["settings"]["pool"]["depth"] == 50 and out["settings"]["pool"]["name"] == "pool"
    table = CliRunner().invoke(cli, args[:-2])
    assert "grade map: none" in table.output and "pool: pool, depth 50" in table.output
    bad = CliRunner().invoke(cli, ["evaluate", str(qrels), str(pool), "--pool", str(final), "-m", "PROC@2"])
    assert bad.exit_code == 2 and "not in the retrieval pool" in bad.output


def test_cli_diagnose(tmp_path: Path) -> None:
    qrels, final, pool = _write_trec(tmp_path)
    res = CliRunner().invoke(
        cli, ["diagnose", str(qrels), str(final), "--pool", str(pool), "-k", "2", "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["counts"] == {"retrieval": 1, "selection": 1, "both": 0, "healthy": 1, "undefined": 1}
    assert out["sign_test_p"] == 1.0
    assert out["k"] == 2 and out["thresholds"] == {"PROC": 0.8, "%PROC": 0.8}
    table = CliRunner().invoke(cli, ["diagnose", str(qrels), str(final), "--pool", str(pool), "-k", "2"])
    assert table.exit_code == 0, table.output
    assert (
        "worst queries" in table.output
        and "a (not in pool)" in table.output
        and "advice: cannot tell: 1 retrieval vs 1 selection failures are too few" in table.output
        and "missed grade-5 docs" in table.output
    )
    target = tmp_path / "diag.json"
    CliRunner().invoke(cli, ["diagnose", str(qrels), str(final), "-k", "2", "--format", "json", "-o", str(target)])
    assert json.loads(target.read_text(encoding="utf-8"))["settings"]["pool"] is None


def test_prepare_keeps_raw_grades_for_classical_kernels() -> None:
    data = prepare(Qrels.from_dict(DL_QRELS), Run.from_dict(DL_RUN), rag={"grade_map": "trec-dl"}, extras=["grades"])
    grades = data.extra("grades")
    assert data.j_grade.tolist() == [1, 0] and grades.j_util.tolist() == [3, 2]
    assert sorted(grades.q_util.tolist()) == [2, 3, 4, 5]
