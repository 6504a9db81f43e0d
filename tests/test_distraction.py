"""Distraction-aware evaluation (issue 4): per-passage utilities, detection rules, dDCG/ndDCG/UDCG,
distractor rate and harm, optimal k, the safety verdict, the ``distraction`` and ``fit-udcg``
commands. Oracles are hand calculations written out below, brute-force reimplementations (the
released UDCG code's loop, U(k) by enumeration) and invariants under Hypothesis."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from ctxeval import ConfigError, FormatError, InputError, Qrels, Run, evaluate, parse_measure
from ctxeval._engine import prepare
from ctxeval._errors import DuplicateError, EmptyInputError, MeasureError
from ctxeval._utility import (
    WHY_KNOWN,
    WHY_LABEL,
    WHY_LLM,
    WHY_RANK,
    WHY_SCORE,
    DistractorRules,
    UtilityConfig,
    dynamic_k_summary,
    optimal_k,
    parse_utility_map,
    read_distractors,
    read_utilities,
    relative_scores,
    row_utilities,
)

EXAMPLE = Path(__file__).resolve().parent.parent / "src" / "ctxeval" / "data" / "example"


def sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def rows_for(qrels: dict, run: dict, config: UtilityConfig | None = None, **kw: object):
    qr = Qrels.from_dict(qrels)
    data = prepare(qr, Run.from_dict(run), keep_frame=True, **kw)  # type: ignore[arg-type]
    return data, row_utilities(data, config, qr)


def means(qrels: dict, run: dict, names: list[str], **kw: object) -> dict[str, float]:
    res = evaluate(qrels, run, names, **kw)
    return {name: res.runs[0].mean(parse_measure(name)) for name in names}


# --- the hand calculation of the issue ------------------------------------------------------------------

# Ranks 1-5 hold grades 5, 3, 2, 4, 2 with scores 1.0 .. 0.3, so relative scores s / s_max = 1, .9, .5, .4, .3.
# Default rules (tau 0.7, top_rank 3, penalty -0.5):
#   rank 1 grade 5 -> 1;  rank 2 grade 3 -> 0.5;  rank 3 grade 2 (utility 0, relative score 0.5 < 0.7,
#   judged, rank 3 <= 3) -> hard negative -0.5;  rank 4 grade 4 -> 1;  rank 5 grade 2 (0.3 < 0.7, rank 5 > 3) -> 0.
# An unretrieved grade-5 doc "x5" belongs to the ideal.
HAND_QRELS = {"q": {"a": 5, "b": 3, "c": 2, "d": 4, "e": 2, "x5": 5}}
HAND_RUN = {"q": {"a": 1.0, "b": 0.9, "c": 0.5, "d": 0.4, "e": 0.3}}


def test_hand_utilities_and_ddcg() -> None:
    _, rows = rows_for(HAND_QRELS, HAND_RUN)
    assert rows.u.tolist() == [1.0, 0.5, -0.5, 1.0, 0.0]
    assert rows.why.tolist() == [WHY_LABEL, WHY_LABEL, WHY_RANK, WHY_LABEL, WHY_LABEL]
    # dDCG@5 = 1/log2(2) + 0.5/log2(3) - 0.5/log2(4) + 1/log2(5) + 0/log2(6)
    #        = 1 + 0.315465 - 0.25 + 0.430677 + 0 = 1.496142
    ddcg = 1 / math.log2(2) + 0.5 / math.log2(3) - 0.5 / math.log2(4) + 1 / math.log2(5) + 0 / math.log2(6)
    # the issue quotes "≈ 1.4962"; the exact value 1.496141... rounds to 1.4961 (the issue rounded up)
    assert ddcg == pytest.approx(1.496141, abs=1e-6) and ddcg == pytest.approx(1.4962, abs=1e-4)
    # ideal: positive utilities of the judged docs, descending: 1 (a), 1 (x5), 1 (d), 0.5 (b)
    ideal = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4) + 0.5 / math.log2(5)
    # UDCG stand-ins (rel unset: relevant = positive label utility): a, b, d relevant -> u = 1, w = 1;
    # c is a hard negative -> u = 0.5, w = -1/3; e -> u = 0. Mean over |C| = 5: (3 - 0.5/3) / 5.
    udcg = sig((3 - 0.5 / 3) / 5)
    got = means(HAND_QRELS, HAND_RUN, ["dDCG@5", "ndDCG@5", "UDCG@5", "DistractorRate@5", "DistractorHarm@5", "dDCG@2"])
    assert got["dDCG@5"] == pytest.approx(ddcg, abs=1e-12)
    assert got["ndDCG@5"] == pytest.approx(ddcg / ideal, abs=1e-12)
    assert got["UDCG@5"] == pytest.approx(udcg, abs=1e-12)
    assert got["DistractorRate@5"] == pytest.approx(1 / 5)
    assert got["DistractorHarm@5"] == pytest.approx(0.5)
    assert got["dDCG@2"] == pytest.approx(1 + 0.5 / math.log2(3), abs=1e-12)


def test_udcg_rel_threshold_reads_raw_grades() -> None:
    # rel=4: only a (5) and d (4) are relevant (u = 1, w = 1); b (grade 3) becomes irrelevant with u = 0
    # (its utility 0.5 is not negative), c stays a hard negative (u = 0.5), e 0.
    got = means(HAND_QRELS, HAND_RUN, ["UDCG(rel=4)@5", "UDCG(rel=4,w_irr=-1)@5"])
    assert got["UDCG(rel=4)@5"] == pytest.approx(sig((2 - 0.5 / 3) / 5), abs=1e-12)
    assert got["UDCG(rel=4,w_irr=-1)@5"] == pytest.approx(sig((2 - 0.5) / 5), abs=1e-12)


# --- relative scores ------------------------------------------------------------------------------------


def test_relative_score_rrf_like_scores_near_003() -> None:
    # RRF scores: 1/(60+1) + 1/(60+1), 1/(60+1) + 1/(60+3), 1/(60+2), 1/(60+40)
    s = [2 / 61, 1 / 61 + 1 / 63, 1 / 62, 1 / 100]
    rel = relative_scores(np.array([0, 4]), np.array(s))
    assert rel.tolist() == pytest.approx([1.0, (1 / 61 + 1 / 63) / (2 / 61), (1 / 62) / (2 / 61), (1 / 100) / (2 / 61)])
    # an absolute threshold of 0.7 flags nothing at this scale; the relative rule flags ranks 1-2
    assert not any(x >= 0.7 for x in s)
    qrels = {"q": {"x": 2}}  # one judged non-relevant doc, at rank 4; the rest unjudged
    run = {"q": {"a": s[0], "b": s[1], "c": s[2], "x": s[3]}}
    _, rows = rows_for(qrels, run, UtilityConfig.resolve(rules="default", top_rank=0))
    assert rows.why.tolist() == [WHY_SCORE, WHY_SCORE, WHY_LABEL, WHY_LABEL]
    assert rows.u.tolist() == [-0.5, -0.5, 0.0, 0.0]


def test_relative_score_negative_and_mixed_scores() -> None:
    off = np.array([0, 3, 6, 8, 10, 11])
    s = np.array([-1.0, -2.0, -5.0, 2.0, 0.0, -2.0, 0.5, 0.5, -3.0, -3.0, 7.0])
    # query 0: all <= 0 -> min-max: (-1+5)/4, (-2+5)/4, 0;  query 1: a zero -> min-max: 1, 0.5, 0;
    # query 2: all > 0 and equal -> 1, 1;  query 3: all equal, negative -> 1, 1;  query 4: single row -> 1
    assert relative_scores(off, s).tolist() == [1.0, 0.75, 0.0, 1.0, 0.5, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]


@given(
    st.lists(st.lists(st.floats(-50, 50, allow_nan=False), min_size=0, max_size=6), min_size=1, max_size=5),
    st.floats(0.01, 100),
)
def test_relative_score_invariants(segs: list[list[float]], c: float) -> None:
    off = np.r_[0, np.cumsum([len(x) for x in segs])].astype(np.int64)
    s = np.array([v for x in segs for v in x], dtype=np.float64)
    rel = relative_scores(off, s)
    assert np.all((rel >= -1e-12) & (rel <= 1 + 1e-12))
    for i, x in enumerate(segs):
        if not x:
            continue
        r = rel[off[i] : off[i + 1]]
        assert r[int(np.argmax(x))] == pytest.approx(1.0)  # the best-scored row of a query is 1
        order = np.argsort(x, kind="stable")
        assert np.all(np.diff(r[order]) >= -1e-12)  # monotone in the score
        if all(v > 0 for v in x):
            assert r.tolist() == pytest.approx([v / max(x) for v in x])
    # positive scaling changes nothing (a relative rule, never an absolute one)
    assert relative_scores(off, s * c) == pytest.approx(rel, abs=1e-9)


# --- rules, presets, known list, LLM utilities -------------------------------------------------------------


def test_presets_and_overrides() -> None:
    assert [(r.tau, r.top_rank, r.penalty) for r in map(DistractorRules.resolve, ["default", "strict", "lenient", "off"])] == [
        (0.7, 3, -0.5),
        (0.5, 3, -1.0),
        (0.9, 3, -0.2),
        (None, 0, -0.5),
    ]
    custom = DistractorRules.resolve("strict", top_rank=1, penalty=-0.25)
    assert (custom.preset, custom.based_on, custom.tau, custom.top_rank, custom.penalty) == ("custom", "strict", 0.5, 1, -0.25)
    assert DistractorRules.resolve("lenient", tau=0.9).preset == "lenient"  # an override equal to the preset
    assert not DistractorRules.resolve("off").active
    for bad, msg in [
        (dict(preset="paranoid"), "distractor rules must be one of default, strict, lenient, off"),
        (dict(tau=1.5), "tau (relative-score threshold) must be in [0, 1], got 1.5"),
        (dict(penalty=0.5), "penalty (utility of a hard negative) must be in [-1, 0], got 0.5"),
        (dict(penalty=0), "penalty must be < 0"),
        (dict(top_rank=-1), "top_rank must be a whole number >= 0"),
    ]:
        with pytest.raises(ConfigError, match=None) as info:
            DistractorRules.resolve(**bad)  # type: ignore[arg-type]
        assert msg in str(info.value)


def test_presets_change_detection() -> None:
    # rank 1 grade 5; then judged non-relevant docs with relative scores .8, .6, .4 at ranks 2-4
    qrels = {"q": {"a": 5, "b": 2, "c": 2, "d": 2}}
    run = {"q": {"a": 1.0, "b": 0.8, "c": 0.6, "d": 0.4}}
    got = {}
    for preset in ["default", "strict", "lenient", "off"]:
        _, rows = rows_for(qrels, run, UtilityConfig.resolve(rules=preset))
        got[preset] = rows.u.tolist()
    assert got["default"] == [1.0, -0.5, -0.5, 0.0]  # b by score (.8 >= .7), c by rank (3 <= 3)
    assert got["strict"] == [1.0, -1.0, -1.0, 0.0]  # b, c by score (>= .5), d: rank 4 > 3
    assert got["lenient"] == [1.0, -0.2, -0.2, 0.0]  # b, c by rank only (.8 < .9)
    assert got["off"] == [1.0, 0.0, 0.0, 0.0]
    _, rows = rows_for(qrels, run, UtilityConfig.resolve(rules="off", tau=0.5))
    assert rows.u.tolist() == [1.0, -0.5, -0.5, 0.0]  # off + tau: the score rule alone, default penalty


def test_rank_rule_touches_every_passage_of_utility_0_judged_or_unlabelled() -> None:
    # The issue: "For passages whose utility is still 0 (judged not relevant, or unlabelled), detection
    # rules ...: a passage whose relative score is >= tau is a hard negative; a non-relevant passage at
    # rank <= r is a hard negative too; otherwise its labelled utility stands (0 if unlabelled)."
    # Ranks 1-5: a (grade 5), u1 (unlabelled, rel .5), j2 (grade 2, rel .4), u3 (unlabelled, rank 4, rel .3),
    # c (grade 3, utility .5, rank 5). Default rules: tau .7, r = 3, penalty -.5.
    qrels = {"q": {"a": 5, "j2": 2, "c": 3}}
    run = {"q": {"a": 1.0, "u1": 0.5, "j2": 0.4, "u3": 0.3, "c": 0.2}}
    _, rows = rows_for(qrels, run)
    #  a: utility 1, untouched;  u1: unlabelled, rank 2 <= 3 -> -0.5;  j2: grade 2 (utility 0), rank 3 -> -0.5
    #  u3: unlabelled, rank 4 > 3, relative score .3 < .7 -> 0 (unlabelled);  c: utility 0.5, never touched
    assert rows.u.tolist() == [1.0, -0.5, -0.5, 0.0, 0.5]
    assert rows.why.tolist() == [WHY_LABEL, WHY_RANK, WHY_RANK, WHY_LABEL, WHY_LABEL]
    _, rows = rows_for({"q": {"a": 5}}, {"q": {"a": 1.0, "u1": 0.9}})
    assert rows.why.tolist() == [WHY_LABEL, WHY_SCORE]  # the score rule applies to unlabelled rows as well
    # passages whose utility is not 0 are never touched: grade 1 (-1), grade 3 (0.5), at any score or rank
    _, rows = rows_for({"q": {"b": 1, "c": 3}}, {"q": {"b": 1.0, "c": 0.99}}, UtilityConfig.resolve(rules="strict"))
    assert rows.u.tolist() == [-1.0, 0.5] and rows.why.tolist() == [WHY_LABEL, WHY_LABEL]
    # the reason given for an unlabelled rank-rule hit says so
    from ctxeval._distraction import distraction_table

    t = distraction_table(qrels, run, 5)
    whys = {w["doc"]: w["why"] for w in t["rows"][0]["worst_distractors"]}
    assert whys == {"u1": "hard negative: unlabelled passage at rank 2 <= 3", "j2": "hard negative: utility 0 (grade 2) at rank 3 <= 3"}


def test_known_list_overrides_labels() -> None:
    known = {"q": ["a", "c"]}
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(distractors=known))
    assert rows.u.tolist() == [-1.0, 0.5, -1.0, 1.0, 0.0]  # a is grade 5 but listed
    assert rows.why.tolist() == [WHY_KNOWN, WHY_LABEL, WHY_KNOWN, WHY_LABEL, WHY_LABEL]
    # the listed grade-5 doc leaves the ideal: positives 1 (x5), 1 (d), 0.5 (b)
    ideal = 1 + 1 / math.log2(3) + 0.5 / math.log2(4)
    ddcg = -1 + 0.5 / math.log2(3) - 1 / math.log2(4) + 1 / math.log2(5)
    got = means(HAND_QRELS, HAND_RUN, ["ndDCG@5", "UDCG@5"], distractors=known)
    assert got["ndDCG@5"] == pytest.approx(ddcg / ideal)
    # UDCG: a and c are known distractors -> irrelevant with u = 1; b, d relevant; e 0
    assert got["UDCG@5"] == pytest.approx(sig((2 - 2 / 3) / 5))


def test_llm_utilities_replace_labels_and_are_signed_by_relevance() -> None:
    llm = {"q": {"a": 0.9, "c": 0.6, "e": 0.1, "x5": 0.8}}  # b and d have none
    # threshold 0: every irrelevant passage with an LLM utility is a distractor (the default 0.5 is tested below)
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm, llm_threshold=0.0))
    assert rows.u.tolist() == [0.9, 0.5, -0.6, 1.0, -0.1]
    assert rows.why.tolist() == [WHY_LLM, WHY_LABEL, WHY_LLM, WHY_LABEL, WHY_LLM]
    assert rows.counts()["without LLM utility"] == 2
    # UDCG with LLM utilities: relevant a (0.9), b (none), d (none); irrelevant c (0.6), e (0.1)
    # non-reference: b, d left out of C -> (0.9 - (0.6 + 0.1)/3) / 3;  reference: counted in |C| = 5
    got = means(HAND_QRELS, HAND_RUN, ["UDCG@5", "UDCG(reference=true)@5", "ndDCG@5"], utilities=llm, llm_threshold=0.0)
    assert got["UDCG@5"] == pytest.approx(sig((0.9 - 0.7 / 3) / 3))
    assert got["UDCG(reference=true)@5"] == pytest.approx(sig((0.9 - 0.7 / 3) / 5))
    # ideal from the same per-doc utilities: a 0.9, x5 0.8, d 1 (label), b 0.5 (label) -> 1, .9, .8, .5
    ideal = 1 + 0.9 / math.log2(3) + 0.8 / math.log2(4) + 0.5 / math.log2(5)
    ddcg = 0.9 + 0.5 / math.log2(3) - 0.6 / math.log2(4) + 1 / math.log2(5) - 0.1 / math.log2(6)
    assert got["ndDCG@5"] == pytest.approx(ddcg / ideal)
    res = evaluate(HAND_QRELS, HAND_RUN, ["UDCG@5"], utility={"utilities": llm})
    assert res.settings["utility"]["utility_source"] == "llm"
    assert res.to_dict()["runs"][0]["utility"]["without LLM utility"] == 2


def test_reference_edge_cases() -> None:
    qrels = {"q1": {"a": 5}, "q2": {"b": 5}}
    run = {"q1": {"a": 1.0}}  # q2 is judged but absent from the run: an empty list (missing="zero")
    res = evaluate(qrels, run, ["UDCG@5", "UDCG(reference=true)@5"])
    vals = {str(m): res.runs[0].per_query(m) for m in res.measures}
    assert vals["UDCG(reference=true)@5"]["q2"] == 0.0  # the released code: empty list -> 0.0
    assert vals["UDCG@5"]["q2"] == 0.5  # sigma(0): neither help nor harm
    assert vals["UDCG@5"]["q1"] == vals["UDCG(reference=true)@5"]["q1"] == pytest.approx(sig(1.0))


def released_udcg(passages: list[dict], w_rel: float = 1.0, w_irr: float = -1 / 3) -> float:
    """The released compute_udcg_score, re-written from its description (../shared/notes): one mean
    over all passages, a passage with a missing score or label skipped in the sum but counted."""
    if len(passages) == 0:
        return 0.0
    total = 0.0
    for p in passages:
        if p.get("score") is None or p.get("is_relevant") is None:
            continue
        total += (w_rel if p["is_relevant"] else w_irr) * p["score"]
    return 1.0 / (1.0 + math.exp(-total / len(passages)))


@st.composite
def graded_case(draw: st.DrawFn) -> tuple[dict, dict, dict]:
    n_q = draw(st.integers(1, 3))
    qrels: dict = {}
    run: dict = {}
    llm: dict = {}
    for qi in range(n_q):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 8)))]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        qrels[f"q{qi}"] = {d: draw(st.integers(1, 5)) for d in judged}
        retrieved = draw(st.lists(st.sampled_from(docs), unique=True))
        if retrieved:
            run[f"q{qi}"] = {d: float(draw(st.integers(-3, 10))) for d in retrieved}
        with_u = draw(st.lists(st.sampled_from(docs), unique=True))
        if with_u:
            llm[f"q{qi}"] = {d: draw(st.sampled_from([0.0, 0.125, 0.5, 0.75, 1.0])) for d in with_u}
    if not run:
        run["q0"] = {"d0": 1.0}
    if not llm:
        llm["q0"] = {"d0": 0.5}
    return qrels, run, llm


LO, HI = sig(-1 / 3), sig(1.0)


@given(graded_case(), st.sampled_from([1, 3, 5]), st.sampled_from([None, 3, 4]), st.booleans())
def test_udcg_range_and_released_code(case: tuple, k: int, rel: int | None, use_llm: bool) -> None:
    qrels, run, llm = case
    kw = {"utilities": llm} if use_llm else {}
    rel_txt = "" if rel is None else f"rel={rel}"
    plain = parse_measure(f"UDCG({rel_txt})@{k}") if rel_txt else parse_measure(f"UDCG@{k}")
    ref = parse_measure(f"UDCG({rel_txt + ',' if rel_txt else ''}reference=true)@{k}")
    res = evaluate(qrels, run, [plain, ref], **kw)
    r = res.runs[0]
    for v in r.values[plain]:
        assert LO - 1e-12 <= v <= HI + 1e-12
    for v in r.values[ref]:
        assert v == 0.0 or LO - 1e-12 <= v <= HI + 1e-12
    if use_llm:  # the released code's loop on the top k, with the LLM utilities as scores
        for i, q in enumerate(r.qids):
            ranked = sorted(sorted(run.get(q, {}).items(), reverse=True), key=lambda kv: -kv[1])[:k]  # score desc, doc id desc
            umap = {5: 1, 4: 1, 3: 0.5, 2: 0, 1: -1}
            passages = []
            for d, _ in ranked:
                g = qrels[q].get(d)
                is_rel = (umap[g] > 0) if (rel is None and g is not None) else (g is not None and rel is not None and g >= rel)
                passages.append({"score": llm.get(q, {}).get(d), "is_relevant": bool(is_rel)})
            assert r.values[ref][i] == pytest.approx(released_udcg(passages), abs=1e-12)


@given(graded_case(), st.sampled_from([1, 2, 5, 10]), st.sampled_from(["default", "strict", "off"]), st.booleans(), st.randoms())
def test_distraction_measure_invariants(case: tuple, k: int, rules: str, use_llm: bool, rnd: random.Random) -> None:
    qrels, run, llm = case
    kw: dict = {"distractor_rules": rules, **({"utilities": llm} if use_llm else {})}
    names = [f"dDCG@{k}", f"ndDCG@{k}", f"DistractorRate@{k}", f"DistractorHarm@{k}", "dDCG"]
    res = evaluate(qrels, run, names, **kw)
    r = res.runs[0]
    qr = Qrels.from_dict(qrels)
    data = prepare(qr, Run.from_dict(run), keep_frame=True)
    rows = row_utilities(data, UtilityConfig.resolve(rules=rules, utilities=llm if use_llm else None), qr)
    for i, q in enumerate(r.qids):
        u = rows.u[data.r_off[i] : data.r_off[i + 1]]
        top = u[:k]
        assert r.values[parse_measure(f"dDCG@{k}")][i] == pytest.approx(sum(x / math.log2(j + 2) for j, x in enumerate(top)))
        assert r.values[parse_measure("dDCG")][i] == pytest.approx(sum(x / math.log2(j + 2) for j, x in enumerate(u)))
        assert r.values[parse_measure(f"DistractorRate@{k}")][i] == sum(x < 0 for x in top) / k
        assert r.values[parse_measure(f"DistractorHarm@{k}")][i] == pytest.approx(sum(max(0.0, -x) for x in top))
        assert 0 <= r.values[parse_measure(f"DistractorHarm@{k}")][i] <= k
        nd = r.values[parse_measure(f"ndDCG@{k}")][i]
        assert math.isnan(nd) or nd <= 1 + 1e-12
        assert np.all((u >= -1) & (u <= 1))
    # shuffling the run's rows changes nothing
    items = [(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    rnd.shuffle(items)
    shuffled: dict = {}
    for q, d, s in items:
        shuffled.setdefault(q, {})[d] = s
    again = evaluate(qrels, shuffled, names, **kw).runs[0]
    for m in res.measures:
        assert np.array_equal(r.values[m], again.values[m], equal_nan=True)


@given(graded_case(), st.sampled_from([1, 3, 10]))
def test_ideal_run_scores_one_on_nddcg(case: tuple, k: int) -> None:
    qrels, _, _ = case
    umap = {5: 1.0, 4: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}
    run = {}
    for q, docs in qrels.items():
        pos = sorted(((umap[g], d) for d, g in docs.items() if umap[g] > 0), reverse=True)
        if pos:
            run[q] = {d: float(len(pos) - j) for j, (_, d) in enumerate(pos)}
    if not run:
        return
    vals = evaluate(qrels, run, [f"ndDCG@{k}"]).runs[0].values[parse_measure(f"ndDCG@{k}")]
    for v in vals:
        assert math.isnan(v) or v == pytest.approx(1.0)


def test_ndddcg_na_and_missing_queries() -> None:
    # q1 has no judged doc of positive utility: ndDCG is NA there and left out of the mean
    res = evaluate({"q0": {"a": 5}, "q1": {"b": 2}}, {"q0": {"a": 1.0}, "q1": {"b": 1.0}}, ["ndDCG@3"])
    r = res.runs[0]
    assert r.per_query("ndDCG@3")["q0"] == 1.0 and math.isnan(r.per_query("ndDCG@3")["q1"])
    assert r.valid("ndDCG@3") == 1


def test_utility_map_other_scales() -> None:
    qrels = {"q": {"a": 3, "b": 0, "c": 1}}
    run = {"q": {"b": 1.0, "a": 0.5, "c": 0.1}}
    with pytest.raises(ConfigError, match=r"gives no utility for grade\(s\) \[0\]"):
        evaluate(qrels, run, ["dDCG@3"])
    # through the grade map (trec-dl: 3->5, 1->3, 0->2) or with a utility map on the own grades
    via_gm = means(qrels, run, ["dDCG@3"], grade_map="trec-dl", distractor_rules="off")
    via_map = means(qrels, run, ["dDCG@3"], utility_map="3:1,1:0.5,0:0", distractor_rules="off")
    assert via_gm["dDCG@3"] == via_map["dDCG@3"] == pytest.approx(0 + 1 / math.log2(3) + 0.5 / math.log2(4))
    assert parse_utility_map({2: 1, 1: -0.5}) == {2: 1.0, 1: -0.5}
    for bad, msg in [("5:2", "must be in [-1, 1], got 2.0"), ("5=1", "is not GRADE:UTILITY"), ({}, "utility map is empty")]:
        with pytest.raises(ConfigError) as info:
            parse_utility_map(bad)
        assert msg in str(info.value)


def test_settings_carry_map_and_rules() -> None:
    res = evaluate(HAND_QRELS, HAND_RUN, ["dDCG@5"], utility={"rules": "strict", "tau": 0.6, "utility_map": "5:1,4:0.8,3:0.4,2:0,1:-1"})
    u = res.to_dict()["settings"]["utility"]
    assert u["utility_map"] == {"5": 1.0, "4": 0.8, "3": 0.4, "2": 0.0, "1": -1.0}
    assert (u["rules"]["preset"], u["rules"]["based_on"], u["rules"]["tau"], u["rules"]["penalty"]) == ("custom", "strict", 0.6, -1.0)
    assert "utility" not in evaluate(HAND_QRELS, HAND_RUN, ["nDCG@5"]).settings  # only when used


# --- optimal k --------------------------------------------------------------------------------------------


def test_optimal_k_hand_examples() -> None:
    # U(k) for [1, -0.5, 1, -1, 0]: 1, 0.5, 1.5, 0.5, 0.5 -> k = 3
    # [-1, 0.5]: -1, -0.5 -> every prefix < 0 -> k = 0;  empty -> 0;  [0, 0] -> U = 0 everywhere -> 0
    # [0.5, -0.5, 0.5]: 0.5, 0, 0.5 -> the smallest maximiser, 1
    off = np.array([0, 5, 7, 7, 9, 12])
    u = np.array([1, -0.5, 1, -1, 0, -1, 0.5, 0, 0, 0.5, -0.5, 0.5])
    assert optimal_k(off, u).tolist() == [3, 0, 0, 0, 1]
    # discounted: [0.2, 1, -0.1]: 0.2, 0.2 + 1/log2(3) = 0.831, 0.831 - 0.1/2 -> k = 2
    assert optimal_k(np.array([0, 3]), np.array([0.2, 1.0, -0.1]), discount=True).tolist() == [2]
    assert optimal_k(off, u, max_k=2).tolist() == [1, 0, 0, 0, 1]


@given(st.lists(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 0.25]), max_size=8), min_size=1, max_size=6), st.booleans())
def test_optimal_k_maximises_u(segs: list[list[float]], discount: bool) -> None:
    off = np.r_[0, np.cumsum([len(x) for x in segs])].astype(np.int64)
    u = np.array([v for x in segs for v in x], dtype=np.float64)
    ks = optimal_k(off, u, discount=discount)
    for x, k in zip(segs, ks.tolist()):
        prefix = [0.0]
        for j, v in enumerate(x):
            prefix.append(prefix[-1] + (v / math.log2(j + 2) if discount else v))
        best = max(prefix)
        assert prefix[k] == pytest.approx(best, abs=1e-9)  # it maximises U
        assert all(p < best - 1e-9 for p in prefix[:k])  # and is the smallest that does
    s = dynamic_k_summary(off, u, discount=discount)
    assert s["mean"] == pytest.approx(float(np.mean(ks))) and s["median"] == pytest.approx(float(np.median(ks)))
    assert sum(s["histogram"]) == len(segs) and s["histogram"][int(ks.max())] > 0
    # best fixed K by enumeration: mean over queries of U(min(K, len)), smallest maximiser
    longest = max(len(x) for x in segs)

    def U(x: list[float], K: int) -> float:
        return sum((v / math.log2(j + 2) if discount else v) for j, v in enumerate(x[:K]))

    fixed = [sum(U(x, K) for x in segs) / len(segs) for K in range(longest + 1)]
    best_fixed = max(fixed)
    assert fixed[s["best_fixed_k"]] == pytest.approx(best_fixed, abs=1e-9)
    assert all(f < best_fixed - 1e-9 for f in fixed[: s["best_fixed_k"]])
    assert s["mean_utility_at_optimal_k"] == pytest.approx(sum(max(0.0, max(U(x, K) for K in range(len(x) + 1))) for x in segs) / len(segs))
    assert s["mean_utility_at_optimal_k"] >= s["mean_utility_at_best_fixed_k"] - 1e-9


# --- readers ------------------------------------------------------------------------------------------------


def test_reader_errors_name_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "dist.txt"
    p.write_text("# known\nq1 d1\nq1 d2 extra\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_distractors(p)
    assert str(info.value) == f"{p}:3: expected two fields (qid docid), found 3 (line: 'q1 d2 extra')"
    p.write_text("# only a comment\n\n", encoding="utf-8")
    with pytest.raises(EmptyInputError, match="no known-distractor lines"):
        read_distractors(p)
    u = tmp_path / "u.txt"
    for text, line, problem in [
        ("q1 d1 0.5\nq1 d2\n", 2, "expected three fields (qid docid u), found 2"),
        ("q1 d1 0.5\nq1 d2 high\n", 2, "utility 'high' is not a number"),
        ("q1 d1 1.5\n", 1, "utility '1.5' is outside [0, 1]"),
        ("q1 d1 nan\n", 1, "utility 'nan' is outside [0, 1]"),
    ]:
        u.write_text(text, encoding="utf-8")
        with pytest.raises(FormatError) as info:
            read_utilities(u)
        assert str(info.value).startswith(f"{u}:{line}: {problem}")
    u.write_text("q1 d1 0.5\n# c\nq1 d2 0.1\nq1 d1 0.7\n", encoding="utf-8")
    with pytest.raises(DuplicateError, match=r"doc 'd1' given twice \(lines 1 and 4\)"):
        read_utilities(u)
    with pytest.raises(InputError, match="no such file"):
        read_utilities(tmp_path / "nope.txt")
    # the CLI reports the same error on one line with exit status 2
    from ctxeval._cli import cli

    out = CliRunner().invoke(cli, ["evaluate", str(EXAMPLE / "qrels.txt"), str(EXAMPLE / "runs" / "bm25.run"), "-m", "dDCG@5", "--utilities", str(u)])
    assert out.exit_code == 2 and "given twice (lines 1 and 4)" in out.output


def test_example_files_read() -> None:
    known, _ = read_distractors(EXAMPLE / "distractors.txt")
    llm, _ = read_utilities(EXAMPLE / "utilities.txt")
    assert known.height == 32 and llm.height == 769


# --- the positional form --------------------------------------------------------------------------------


def test_udcg_pos_hand_example(tmp_path: Path) -> None:
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps({"alpha": [1.0, 0.5, 0.25], "beta": [-1.0, -0.5, -2.0], "bias": 0.1}), encoding="utf-8")
    # utilities [1, 0.5, -0.5, 1, 0]: z@2 = 0.1 + 1*1 + 0.5*0.5;  z@3 = z@2 + (-2.0)*0.5 (u- = 0.5 at rank 3)
    got = means(HAND_QRELS, HAND_RUN, [f"UDCG-pos(fit='{fit}')@2", f"UDCG-pos(fit='{fit}')"])
    assert got[f"UDCG-pos(fit='{fit}')@2"] == pytest.approx(sig(0.1 + 1.0 + 0.25))
    assert got[f"UDCG-pos(fit='{fit}')"] == pytest.approx(sig(0.1 + 1.0 + 0.25 - 1.0))  # default k = the fit's 3
    with pytest.raises(MeasureError, match="has weights for ranks 1..3 only"):
        evaluate(HAND_QRELS, HAND_RUN, [f"UDCG-pos(fit='{fit}')@4"])
    with pytest.raises(MeasureError, match="needs a fit file"):
        evaluate(HAND_QRELS, HAND_RUN, ["UDCG-pos@2"])
    fit.write_text(json.dumps({"alpha": [1.0], "beta": []}), encoding="utf-8")
    with pytest.raises(ConfigError, match="must be non-empty lists of numbers of equal length"):
        evaluate(HAND_QRELS, HAND_RUN, [f"UDCG-pos(fit='{fit}')"])


def test_logistic_solver_kkt_and_planted_coefficients() -> None:
    from ctxeval._fit_udcg import logistic_fit

    rng = np.random.default_rng(11)
    n = 20000
    X = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.integers(0, 2, n), rng.normal(0, 1, n)])
    w_true, b_true = np.array([2.0, -1.5, 0.8, 0.5]), -0.3
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(b_true + X @ w_true)))).astype(float)
    w, b, _ = logistic_fit(X, y, l2=1e-6)
    assert np.max(np.abs(w - w_true)) < 0.12 and abs(b - b_true) < 0.12
    # first-order optimality of the penalised objective: X^T (p - y) + l2 w = 0, 1^T (p - y) = 0
    for l2 in (1e-6, 5.0):
        w, b, _ = logistic_fit(X, y, l2=l2)
        p = 1 / (1 + np.exp(-(b + X @ w)))
        assert abs(np.sum(p - y)) < 1e-6
        assert np.max(np.abs(X.T @ (p - y) + l2 * w)) < 1e-6
    # separable data stays finite under the ridge
    w, b, _ = logistic_fit(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), l2=1.0)
    assert np.all(np.isfinite(w)) and math.isfinite(b)


def test_auc_and_point_biserial_against_scipy() -> None:
    from scipy import stats

    from ctxeval._fit_udcg import auc, point_biserial

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    s = np.round(rng.normal(size=200) + y, 1)  # rounded: ties across classes
    u = stats.mannwhitneyu(s[y == 1], s[y == 0]).statistic
    assert auc(y, s) == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()))
    assert point_biserial(y, s) == pytest.approx(stats.pointbiserialr(y, s).statistic)


def test_fit_udcg_recovers_planted_coefficients(tmp_path: Path) -> None:
    from ctxeval._fit_udcg import fit_udcg

    rng = np.random.default_rng(2024)
    alpha, beta, bias = np.array([2.0, 1.0, 0.5]), np.array([-2.0, -1.0, -0.5]), -0.5
    umap = {5: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}
    qrels: dict = {}
    runs: dict = {"A": {}, "B": {}}
    lines = ["qid\trun\tcorrect"]
    for qi in range(1500):
        q = f"q{qi:04d}"
        qrels[q] = {}
        for name in runs:
            grades = rng.choice([5, 3, 2, 1], size=3)
            runs[name][q] = {}
            z = bias
            for i, g in enumerate(grades.tolist()):
                d = f"{name}{i}"
                qrels[q][d] = g
                runs[name][q][d] = float(3 - i)
                u = umap[g]
                z += alpha[i] * max(u, 0.0) + beta[i] * max(-u, 0.0)
            lines.append(f"{q}\t{name}\t{int(rng.uniform() < sig(z))}")
    answers = tmp_path / "answers.tsv"
    answers.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_objs = [Run.from_dict(r, name=n) for n, r in runs.items()]
    res = fit_udcg(qrels, run_objs, answers, 3, folds=3, seed=1, l2=1e-3, utility={"rules": "off"})
    fit = res.fit
    assert np.max(np.abs(np.array(fit["alpha"]) - alpha)) < 0.35
    assert np.max(np.abs(np.array(fit["beta"]) - beta)) < 0.35
    assert abs(fit["bias"] - bias) < 0.35
    assert fit["n_observations"] == 3000 and fit["n_queries"] == 1500
    held = res.report["held_out"]
    # the planted model is the positional one: fitted held-out AUC beats the order-free UDCG's
    assert held["UDCG-pos@3 (fitted)"]["auc"] > held["UDCG@3"]["auc"]
    # the file round-trips into the measure: UDCG-pos equals the fitted model's probability
    path = tmp_path / "fit.json"
    path.write_text(res.fit_json(), encoding="utf-8")
    q0 = evaluate(qrels, run_objs[0], [f"UDCG-pos(fit='{path}')@3"], utility={"rules": "off"}).runs[0].per_query(f"UDCG-pos(fit='{path}')@3")["q0000"]
    us = [umap[g] for _, g in sorted(((runs["A"]["q0000"][d], qrels["q0000"][d]) for d in runs["A"]["q0000"]), reverse=True)]
    z = fit["bias"] + sum(a * max(u, 0) + b * max(-u, 0) for a, b, u in zip(fit["alpha"], fit["beta"], us))
    assert q0 == pytest.approx(sig(z))


def test_answers_errors(tmp_path: Path) -> None:
    from ctxeval._fit_udcg import read_answers

    a = tmp_path / "a.tsv"
    a.write_text("qid\trun\tcorrect\nq1\tbm25\t1\nq2\tbm25\tmaybe\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"a.tsv:3: correct 'maybe' is not 0/1"):
        read_answers(a)
    a.write_text("qid\trun\tcorrect\nq1\tbm25\t1\nq1\tbm25\t0\n", encoding="utf-8")
    with pytest.raises(DuplicateError, match=r"query 'q1', run 'bm25' has two answers \(lines 2 and 3\)"):
        read_answers(a)
    a.write_text("qid\tsystem_x\tcorrect\nq1\tbm25\t1\n", encoding="utf-8")
    with pytest.raises(FormatError, match="no run column"):
        read_answers(a)


# --- verdict and the distraction command --------------------------------------------------------------------


def test_verdict_thresholds() -> None:
    from ctxeval._distraction import safety_verdict

    assert [safety_verdict(x) for x in (0.0, 0.10, 0.1000001, 0.5, 0.5000001, 1.0)] == ["SAFE", "SAFE", "RISKY", "RISKY", "DANGEROUS", "DANGEROUS"]
    assert [safety_verdict(x, safe=0.2, risky=0.3) for x in (0.2, 0.25, 0.31)] == ["SAFE", "RISKY", "DANGEROUS"]
    assert safety_verdict(float("nan")) == "NA"
    with pytest.raises(ConfigError, match="must not exceed risky"):
        safety_verdict(0.1, safe=0.6, risky=0.5)


def test_distraction_cli_json(tmp_path: Path) -> None:
    from ctxeval._cli import cli

    runs = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "rrf", "rrf-rerank")]
    args = ["distraction", str(EXAMPLE / "qrels.txt"), *runs, "-k", "5", "--distractors", str(EXAMPLE / "distractors.txt"), "--format", "json"]
    out = CliRunner().invoke(cli, [*args, "--risky", "0.45"])
    assert out.exit_code == 0, out.output
    again = CliRunner().invoke(cli, [*args, "--risky", "0.45"])
    assert out.output == again.output  # deterministic bytes
    t = json.loads(out.output)
    assert {"k", "rules", "utility_map", "utility_source", "rows"} <= set(t)
    assert t["k"] == 5 and t["utility_source"] == "labels" and t["rules"]["tau"] == 0.7 and t["rel"] == 3
    assert t["utility_map"] == {"5": 1.0, "4": 1.0, "3": 0.5, "2": 0.0, "1": -1.0}
    known = {tuple(line.split()) for line in (EXAMPLE / "distractors.txt").read_text().splitlines() if line.strip()}
    ref = evaluate(EXAMPLE / "qrels.txt", runs, ["RR(rel=3)", "R(rel=3)@5", "nDCG@5", "dDCG@5", "ndDCG@5", "UDCG@5", "DistractorRate@5", "DistractorHarm@5"], utility={"distractors": EXAMPLE / "distractors.txt"})
    for row, r in zip(t["rows"], ref.runs):
        assert {"run", "measures", "distractor_rate", "distractor_harm", "verdict", "optimal_k", "ndcg_minus_nddcg", "worst_distractors"} <= set(row)
        assert row["run"] == r.name
        for m in ref.measures:
            assert row["measures"][str(m)] == pytest.approx(r.mean(m))
        rate = r.mean("DistractorRate@5")
        assert row["distractor_rate"] == pytest.approx(rate)
        assert row["verdict"] == ("SAFE" if rate <= 0.10 else "RISKY" if rate <= 0.45 else "DANGEROUS")
        nd = r.values[parse_measure("ndDCG@5")]
        ok = ~np.isnan(nd)
        assert row["ndcg_minus_nddcg"] == pytest.approx(float(np.mean(r.values[parse_measure("nDCG@5")][ok] - nd[ok])))
        wd = row["worst_distractors"]
        assert len(wd) == 5 and all(w["utility"] < 0 and 1 <= w["rank"] <= 5 for w in wd)
        assert [w["utility"] for w in wd] == sorted(w["utility"] for w in wd)
        for w in wd:
            if w["why"].startswith("known distractor"):
                assert (w["query"], w["doc"]) in known
    assert {row["verdict"] for row in t["rows"]} == {"RISKY", "DANGEROUS"}
    csv_out = CliRunner().invoke(cli, [*args[:-1], "csv"])
    assert csv_out.exit_code == 0 and csv_out.output.splitlines()[0].startswith("run,RR(rel=3),R(rel=3)@5,nDCG@5,dDCG@5")
    table = CliRunner().invoke(cli, [*args[:-1], "table"])
    assert "distractor rules: default" in table.output and "utility map: 5:1,4:1,3:0.5,2:0,1:-1" in table.output


def test_fit_udcg_cli(tmp_path: Path) -> None:
    from ctxeval._cli import cli

    out_path = tmp_path / "fit.json"
    runs = [str(p) for p in sorted((EXAMPLE / "runs").glob("*.run"))]
    res = CliRunner().invoke(cli, ["fit-udcg", str(EXAMPLE / "qrels.txt"), *runs, "--answers", str(EXAMPLE / "answers.tsv"), "-o", str(out_path), "--format", "json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["n_observations"] == 250 and set(report["held_out"]) == {"UDCG-pos@5 (fitted)", "UDCG@5", "nDCG@5", "RA-nWG@5"}
    for s in report["held_out"].values():
        assert -1 <= s["r"] <= 1 and 0 <= s["auc"] <= 1 and s["n"] == 250
    fit = json.loads(out_path.read_text())
    assert len(fit["alpha"]) == len(fit["beta"]) == 5
    bad = CliRunner().invoke(cli, ["fit-udcg", str(EXAMPLE / "qrels.txt"), str(tmp_path / "x.run"), "--answers", str(EXAMPLE / "answers.tsv")])
    assert bad.exit_code == 2 and "ctxeval: error:" in bad.output


def test_pair_lookup_survives_hash_collisions(monkeypatch: pytest.MonkeyPatch) -> None:
    import polars as pl

    import ctxeval._io as io_mod
    from ctxeval._utility import _pair_values

    frame = pl.DataFrame({"query_id": ["q1", "q2", "q2"], "doc_id": ["d1", "d1", "d2"]})
    table = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "u": [0.25]})
    expected = [0.25, None, None]
    for keyfun in (
        lambda df: df.select(pl.col("doc_id").hash(1)).to_series(),  # (q2, d1) collides with (q1, d1)
        lambda df: pl.Series([0] * df.height, dtype=pl.UInt64),  # every pair collides
    ):
        monkeypatch.setattr(io_mod, "pair_keys", keyfun)
        got = _pair_values(frame, table, "u")
        assert [None if math.isnan(x) else x for x in got] == expected
        assert _pair_values(frame, table, None).tolist() == [True, False, False]


# --- audit of issue 4 ---------------------------------------------------------------------------------------


def _rate_case(bad_per_query: list[int], k: int) -> tuple[dict, dict]:
    """One query per entry: k retrieved docs, the first ``bad`` of them grade 1 (u = -1), the rest grade 5."""
    qrels: dict = {}
    run: dict = {}
    for qi, bad in enumerate(bad_per_query):
        q = f"q{qi}"
        qrels[q] = {f"d{i}": 1 if i < bad else 5 for i in range(k)}
        run[q] = {f"d{i}": float(k - i) for i in range(k)}
    return qrels, run


def test_verdict_at_the_exact_thresholds_despite_float_noise() -> None:
    from ctxeval._distraction import distraction_table

    # 3 queries, k = 10, with 2, 1 and 0 distractors: the mean rate is exactly 3/30 = 0.10, which is SAFE
    # (SAFE <= 0.10). The float mean of the per-query rates 0.2, 0.1, 0.0 is 0.10000000000000002.
    qrels, run = _rate_case([2, 1, 0], 10)
    t = distraction_table(qrels, run, 10, utility={"rules": "off"})
    assert t["rows"][0]["distractor_rate"] == pytest.approx(0.1, abs=1e-15)
    assert t["rows"][0]["verdict"] == "SAFE"
    # exactly 0.5 (15 of 30: 6, 5, 4) is RISKY (RISKY <= 0.50), one more distractor is DANGEROUS
    qrels, run = _rate_case([6, 5, 4], 10)
    assert distraction_table(qrels, run, 10, utility={"rules": "off"})["rows"][0]["verdict"] == "RISKY"
    qrels, run = _rate_case([6, 5, 5], 10)
    assert distraction_table(qrels, run, 10, utility={"rules": "off"})["rows"][0]["verdict"] == "DANGEROUS"


def test_distraction_table_accounts_for_every_query_and_row(tmp_path: Path) -> None:
    from ctxeval._cli import cli
    from ctxeval._distraction import distraction_table

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 5\nq1 0 b 2\nq2 0 d 2\nq3 0 e 5\n", encoding="utf-8")
    run = tmp_path / "r.run"
    # q1: a, b, then a repeated (dropped with --duplicates first); q2: d; q9: unjudged query; q3: absent
    run.write_text("q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 a 3 1.0 r\nq2 Q0 d 1 0.5 r\nq9 Q0 z 1 1.0 r\n", encoding="utf-8")
    t = distraction_table(str(qrels), [str(run)], 5, policies={"duplicates": "first"})
    row = t["rows"][0]
    # q1, q2 evaluated; q3 judged but absent (scored as zero: an empty list, in every mean); q9 ignored
    assert row["accounting"] == {
        "evaluated": 2, "missing_from_run": 1, "missing_policy": "zero", "scored_as_zero": 1, "ignored_missing": 0, "unjudged_in_run": 1,
    }
    assert row["queries"] == 3  # the queries every mean is taken over
    assert row["dropped_duplicates"] == 1
    # q1: u = [1, -0.5 (grade 2 at rank 2)], q2: d grade 2 at rank 1 -> -0.5, q3: nothing -> rate (1/5 + 1/5 + 0) / 3
    assert row["distractor_rate"] == pytest.approx((1 / 5 + 1 / 5) / 3)
    # ndDCG@5 is NA on q2 (no judged doc of positive utility): the gap is over q1 and q3 only
    assert row["valid"] == {"ndDCG@5": 2, "nDCG-ndDCG": 2}
    out = CliRunner().invoke(cli, ["distraction", str(qrels), str(run), "--duplicates", "first", "--missing", "zero"])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "r: 2 queries evaluated; 1 judged but missing from the run (scored 0, --missing zero); 1 in the run without judgments (ignored); 1 duplicate rows dropped" in text
    assert "r: ndDCG@5 and nDCG-ndDCG undefined (NA) on 1 queries (no judged passage of positive utility), excluded from their means" in text
    ignore = distraction_table(str(qrels), [str(run)], 5, policies={"duplicates": "first", "missing": "ignore"})["rows"][0]
    assert ignore["queries"] == 2 and ignore["accounting"]["ignored_missing"] == 1


def test_utility_inputs_nothing_dropped_silently(tmp_path: Path) -> None:
    from ctxeval._distraction import distraction_table

    # a known-distractor file listing one pair twice, and one pair the run never retrieves
    known = tmp_path / "known.txt"
    known.write_text("q c\n# again\nq c\nq zz\nq7 a\n", encoding="utf-8")
    df, _ = read_distractors(known)
    assert df.height == 3  # (q, c), (q, zz), (q7, a)
    cfg = UtilityConfig.resolve(distractors=known)
    assert cfg.describe()["known_distractors"] == {"source": str(known), "pairs": 3, "duplicate_lines": 1}
    assert any("1 duplicate line ignored" in line for line in cfg.lines())
    # LLM utilities for pairs the run does not retrieve: (q, x5) is judged (used by the ideal), (q, nope), (q9, a)
    llm = tmp_path / "u.txt"
    llm.write_text("q a 0.9\nq c 0.6\nq x5 0.8\nq nope 0.3\nq9 a 0.5\n", encoding="utf-8")
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(distractors=known, utilities=llm))
    c = rows.counts()
    assert c["LLM pairs not retrieved"] == 3 and c["without LLM utility"] == 3  # b, d, e have none
    assert c["known pairs not retrieved"] == 2
    t = distraction_table(HAND_QRELS, HAND_RUN, 5, utility={"distractors": str(known), "utilities": str(llm)})
    assert t["rows"][0]["utility_counts"]["LLM pairs not retrieved"] == 3
    # a utility map naming a grade twice is an error, not "the last one wins"
    with pytest.raises(ConfigError, match=r"utility map '5:1,4:1,5:0.5': grade 5 is given twice"):
        parse_utility_map("5:1,4:1,5:0.5")
    # the text reports print the same counts
    from ctxeval._cli import cli

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q 0 {d} {g}\n" for d, g in HAND_QRELS["q"].items()), encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text("".join(f"q Q0 {d} {i + 1} {s} r\n" for i, (d, s) in enumerate(HAND_RUN["q"].items())), encoding="utf-8")
    out = CliRunner().invoke(cli, ["distraction", str(qrels), str(run), "--distractors", str(known), "--utilities", str(llm)])
    text = " ".join(out.output.split())
    assert out.exit_code == 0 and "(u = -1; 1 duplicate lines ignored)" in text
    assert "LLM pairs not retrieved 3" in text and "known pairs not retrieved 2" in text and "without LLM utility 3" in text
    ev = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "-m", "dDCG@5", "--distractors", str(known)])
    assert "(1 duplicate lines ignored)" in " ".join(ev.output.split())
    ev = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "-m", "dDCG@5", "--utilities", str(llm)])
    # a and c have LLM utilities; b, d, e keep their label utilities
    assert "r: passages by utility rule: label 3, known distractor 0," in " ".join(ev.output.split())
    assert "LLM utility 2, negative 1, without LLM utility 3, LLM utility below threshold 0, LLM pairs not retrieved 3" in " ".join(ev.output.split())


def test_llm_threshold_decides_which_irrelevant_passages_distract(tmp_path: Path) -> None:
    # HAND_RUN ranks a (5), b (3), c (2), d (4), e (2). LLM utilities: a .9, c .6, e .1 (x5 .8, not retrieved).
    # Irrelevant passages (c, e) count as distractors (u = -LLM u) only when their LLM utility is >= the
    # threshold (default 0.5); below it they are junk the LLM ignores: u = 0. Relevant ones keep +u.
    llm = {"q": {"a": 0.9, "c": 0.6, "e": 0.1, "x5": 0.8}}
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm))
    assert rows.u.tolist() == [0.9, 0.5, -0.6, 1.0, 0.0]
    assert rows.why.tolist() == [WHY_LLM, WHY_LABEL, WHY_LLM, WHY_LABEL, WHY_LLM]
    assert rows.counts()["LLM utility below threshold"] == 1
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm, llm_threshold=0.0))
    assert rows.u.tolist() == [0.9, 0.5, -0.6, 1.0, -0.1]  # threshold 0: every irrelevant passage distracts
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm, llm_threshold=0.7))
    assert rows.u.tolist() == [0.9, 0.5, 0.0, 1.0, 0.0]
    # a listed known distractor is a distractor whatever its LLM utility: -u
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm, distractors={"q": ["c", "e"]}, llm_threshold=0.7))
    assert rows.u.tolist() == [0.9, 0.5, -0.6, 1.0, -0.1]
    # the measures built on u follow: DistractorRate@5 = 1/5 (c only), harm 0.6, dDCG without e's -0.1
    got = means(HAND_QRELS, HAND_RUN, ["DistractorRate@5", "DistractorHarm@5", "dDCG@5"], utilities=llm)
    assert got["DistractorRate@5"] == pytest.approx(1 / 5) and got["DistractorHarm@5"] == pytest.approx(0.6)
    assert got["dDCG@5"] == pytest.approx(0.9 + 0.5 / math.log2(3) - 0.6 / math.log2(4) + 1 / math.log2(5))
    # UDCG (released form) reads the LLM utilities as given: the threshold changes nothing
    # relevant a (.9); irrelevant c (.6), e (.1); b, d without a utility are left out of C
    for th in (0.0, 0.5, 0.95):
        got = means(HAND_QRELS, HAND_RUN, ["UDCG@5", "UDCG(reference=true)@5"], utilities=llm, llm_threshold=th)
        assert got["UDCG@5"] == pytest.approx(sig((0.9 - 0.7 / 3) / 3))
        assert got["UDCG(reference=true)@5"] == pytest.approx(sig((0.9 - 0.7 / 3) / 5))
    # so does the positional form: u- of e is its LLM utility .1 at any threshold
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps({"alpha": [1.0, 1.0, 1.0, 1.0, 1.0], "beta": [0.0, 0.0, 0.0, 0.0, -2.0], "bias": 0.0}), encoding="utf-8")
    for th in (0.0, 0.5):
        got = means(HAND_QRELS, HAND_RUN, [f"UDCG-pos(fit='{fit}')@5"], utilities=llm, llm_threshold=th)
        assert got[f"UDCG-pos(fit='{fit}')@5"] == pytest.approx(sig(0.9 + 0.5 + 1.0 - 2.0 * 0.1))
    # the threshold is validated and reported
    with pytest.raises(ConfigError, match=r"llm_threshold .* must be in \[0, 1\], got 1.5"):
        UtilityConfig.resolve(utilities=llm, llm_threshold=1.5)
    res = evaluate(HAND_QRELS, HAND_RUN, ["dDCG@5"], utility={"utilities": llm})
    assert res.settings["utility"]["utilities"]["threshold"] == 0.5
    assert "LLM utilities from <utilities> (relevant: u; other passages: -u when u >= 0.5, else 0; known distractors: -u; UDCG reads u as given)" in " ".join(
        __import__("ctxeval._output", fromlist=["render"]).render(res, "table").split()
    )


def test_llm_threshold_on_the_cli_and_fit_udcg_reads_utilities_as_given(tmp_path: Path) -> None:
    from ctxeval._cli import cli
    from ctxeval._fit_udcg import fit_udcg

    runs = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "rrf")]
    base = ["distraction", str(EXAMPLE / "qrels.txt"), *runs, "-k", "5", "--utilities", str(EXAMPLE / "utilities.txt"), "--format", "json"]
    t0 = json.loads(CliRunner().invoke(cli, [*base, "--llm-threshold", "0"]).output)
    t5 = json.loads(CliRunner().invoke(cli, base).output)
    assert t5["utilities"]["threshold"] == 0.5 and t0["utilities"]["threshold"] == 0.0
    ref0 = evaluate(EXAMPLE / "qrels.txt", runs, ["DistractorRate@5", "UDCG@5"], utility={"utilities": EXAMPLE / "utilities.txt", "llm_threshold": 0.0})
    ref5 = evaluate(EXAMPLE / "qrels.txt", runs, ["DistractorRate@5", "UDCG@5"], utility={"utilities": EXAMPLE / "utilities.txt"})
    for a, b, r0, r5 in zip(t0["rows"], t5["rows"], ref0.runs, ref5.runs):
        assert a["distractor_rate"] == pytest.approx(r0.mean("DistractorRate@5"))
        assert b["distractor_rate"] == pytest.approx(r5.mean("DistractorRate@5"))
        assert b["distractor_rate"] < a["distractor_rate"]  # junk below 0.5 no longer counts
        assert a["measures"]["UDCG@5"] == b["measures"]["UDCG@5"] == pytest.approx(r5.mean("UDCG@5"))
    bad = CliRunner().invoke(cli, [*base, "--llm-threshold", "1.5"])
    assert bad.exit_code == 2 and "1.5" in bad.output
    # the positional UDCG's features are the LLM utilities as given: the fit does not depend on the threshold
    fits = [
        fit_udcg(EXAMPLE / "qrels.txt", runs, EXAMPLE / "answers.tsv", 3, folds=2, utility={"utilities": EXAMPLE / "utilities.txt", "llm_threshold": th}).fit
        for th in (0.0, 0.9)
    ]
    assert fits[0]["alpha"] == fits[1]["alpha"] and fits[0]["beta"] == fits[1]["beta"] and fits[0]["bias"] == fits[1]["bias"]


def test_every_report_prints_the_utility_settings(tmp_path: Path) -> None:
    from ctxeval._cli import cli

    qrels, run = str(EXAMPLE / "qrels.txt"), str(EXAMPLE / "runs" / "bm25.run")
    known = ["--distractors", str(EXAMPLE / "distractors.txt")]
    expect = [
        "utility map: 5:1,4:1,3:0.5,2:0,1:-1 (unjudged: 0); distractor rules strict: a passage of utility 0 (judged or unlabelled) "
        "is a hard negative if relative score >= 0.5 or rank <= 3, penalty -1",
        f"known distractors: 32 pairs from {EXAMPLE / 'distractors.txt'}",
        "utility source: labels (UDCG: label-derived stand-ins)",
    ]
    outputs = {
        "curve": CliRunner().invoke(cli, ["curve", qrels, run, "-m", "dDCG", "-k", "1:3", "--distractor-rules", "strict", *known]),
        "calibrate": CliRunner().invoke(cli, ["calibrate", qrels, run, "-k", "5", "--distractor-rules", "strict", *known, "-o", str(tmp_path / "p.json")]),
        "fit-udcg": CliRunner().invoke(
            cli, ["fit-udcg", qrels, run, "--answers", str(EXAMPLE / "answers.tsv"), "-k", "3", "--distractor-rules", "strict", *known, "-o", str(tmp_path / "f.json")]
        ),
        "evaluate": CliRunner().invoke(cli, ["evaluate", qrels, run, "-m", "dDCG@5", "--distractor-rules", "strict", *known]),
    }
    for name, out in outputs.items():
        assert out.exit_code == 0, (name, out.output)
        text = " ".join(out.output.split())
        for line in expect:
            assert line in text, (name, line)
    # a curve of measures that read no utilities has none to print
    plain = CliRunner().invoke(cli, ["curve", qrels, run, "-m", "nDCG", "-k", "1:3"])
    assert plain.exit_code == 0 and "utility map" not in plain.output


def test_distraction_text_and_csv_report_the_whole_optimal_k_summary() -> None:
    from ctxeval._distraction import distraction_table, render_distraction

    # q0: u = [1, -1, 1, 1] -> U = 1, 0, 1, 2 -> k = 4;  q1: [-1, 1] -> -1, 0 -> k = 0;  q2: [1, 1, -1] -> k = 2
    # best fixed K: mean U(K) over queries (a shorter list gives all its rows) for K = 0..4:
    # K=1 (1 - 1 + 1)/3, K=2 (0 + 0 + 2)/3, K=3 (1 + 0 + 1)/3, K=4 (2 + 0 + 1)/3 = 1 -> 4
    qrels = {"q0": {"a": 5, "b": 1, "c": 5, "d": 5}, "q1": {"e": 1, "f": 5}, "q2": {"g": 5, "h": 5, "i": 1}}
    run = {"q0": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, "q1": {"e": 2.0, "f": 1.0}, "q2": {"g": 3.0, "h": 2.0, "i": 1.0}}
    t = distraction_table(qrels, run, 5, utility={"rules": "off"})
    ok = t["rows"][0]["optimal_k"]
    assert (ok["mean"], ok["median"], ok["histogram"], ok["best_fixed_k"]) == (2.0, 2.0, [1, 0, 1, 0, 1], 4)
    text = " ".join(render_distraction(t, "table").split())
    assert "best fixed k" in text and "run: optimal k per query (k: queries): 0: 1, 2: 1, 4: 1; best fixed k 4 (mean U 1.0000)" in text
    csv_text = render_distraction(t, "csv").splitlines()
    assert csv_text[0].endswith("best_fixed_k,optimal_k_histogram,ndcg_minus_nddcg")
    assert csv_text[1].split(",")[-2] == "1 0 1 0 1"


def test_fit_and_answers_readers_reject_directories(tmp_path: Path) -> None:
    from ctxeval import CtxevalError
    from ctxeval._fit_udcg import read_answers
    from ctxeval._measures._distraction import load_fit

    with pytest.raises(CtxevalError, match=f"{tmp_path}: is a directory, expected a fit JSON file"):
        load_fit(tmp_path)
    with pytest.raises(CtxevalError, match=f"{tmp_path}: is a directory, expected an answers file"):
        read_answers(tmp_path)


def test_markdown_comparison_report_states_the_utility_settings() -> None:
    from ctxeval import compare

    runs = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "rrf")]
    rep = compare(EXAMPLE / "qrels.txt", runs, ["dDCG@5"], curves_k=0, utility={"rules": "lenient"}, stats={"permutations": 100, "resamples": 100})
    md = rep.to_markdown()
    assert "- utility map: 5:1,4:1,3:0.5,2:0,1:-1 (unjudged: 0); distractor rules lenient: a passage of utility 0 (judged or unlabelled) is a hard negative if relative score &gt;= 0.9 or rank &lt;= 3, penalty -0.2" in md
    assert "- utility source: labels (UDCG: label-derived stand-ins)" in md
    plain = compare(EXAMPLE / "qrels.txt", runs, ["nDCG@5"], curves_k=0, stats={"permutations": 100, "resamples": 100}).to_markdown()
    assert "utility map" not in plain
    tex = rep.to_latex()
    assert "\n% utility map: 5:1,4:1,3:0.5,2:0,1:-1 (unjudged: 0); distractor rules lenient:" in tex
    assert "\n% utility source: labels (UDCG: label-derived stand-ins)\n" in tex
    assert "% utility" not in compare(EXAMPLE / "qrels.txt", runs, ["nDCG@5"], curves_k=0, stats={"permutations": 100, "resamples": 100}).to_latex()
