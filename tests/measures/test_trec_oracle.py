"""trec_eval's measures against pytrec_eval (which wraps trec_eval 9.0.x), and hand calculations for
the measures pytrec_eval lacks.

Differential: Hypothesis-generated and seeded-random qrels and runs (ties, scores equal only as C
floats, graded and negative labels, unjudged docs, topics missing on either side, tiny topics) for
every measure both have, at every threshold, relevance levels 1-3, relative tolerance 1e-9. Level 0
(which pytrec_eval refuses) is checked through an equivalent shifted qrels at level 1.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest
import pytrec_eval  # the oracle (the test extra installs it)
from hypothesis import given
from hypothesis import strategies as st

from ctxeval import MeasureError, Qrels, Run, parse_measure, parse_measures
from ctxeval._measures import REGISTRY, make
from ctxeval._measures import trec_kernels as T
from ctxeval._measures import trec_support as S
from ctxeval._session import prepare

CUTS = (1, 2, 3, 5, 10, 20)
IPREC = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
_C = ",".join(map(str, CUTS))
PYTREC_MEASURES = {
    f"P.{_C}", f"recall.{_C}", f"ndcg_cut.{_C}", f"map_cut.{_C}", f"relative_P.{_C}", f"success.{_C}",
    "iprec_at_recall", "Rprec_mult", "map", "gm_map", "Rprec", "bpref", "recip_rank", "ndcg", "ndcg_rel",
    "Rndcg", "G", "binG", "infAP", "gm_bpref", "11pt_avg", "utility", "set_P", "set_recall", "set_F",
    "set_map", "set_relative_P", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "num_q",
}  # fmt: skip
# measures where only the relevance threshold matters (level 0 == level 1 on grades shifted by one)
BINARY = ("P_", "recall_", "map", "relative_P_", "success_", "iprec_at_recall_", "Rprec", "bpref", "recip_rank",
          "binG", "infAP", "gm_bpref", "11pt_avg", "utility", "set_", "num_rel", "num_nonrel")  # fmt: skip


def ours(qrels: dict, run: dict, L: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """Every pytrec_eval measure, computed through the ctxeval registry."""
    d = prepare(Qrels.from_dict(qrels), Run.from_dict(run), policies={"missing": "ignore"})
    rel = {"rel": L}

    def m(name: str, params: dict | None = None, cut: float | None = None) -> np.ndarray:
        return make(name, params or {}, cut).compute(d)

    out: dict[str, np.ndarray] = {}
    for k in CUTS:
        out[f"P_{k}"] = m("P", rel, k)
        out[f"recall_{k}"] = m("R", rel, k)
        out[f"ndcg_cut_{k}"] = m("nDCG", None, k)
        out[f"map_cut_{k}"] = m("AP", rel, k)
        out[f"relative_P_{k}"] = m("relative_P", rel, k)
        out[f"success_{k}"] = m("Success", rel, k)
    for p in IPREC:
        out[f"iprec_at_recall_{p:3.2f}"] = m("IPrec", {"rel": L, "rounding": "v9"}, p)
    for x in MULTS:
        out[f"Rprec_mult_{x:3.2f}"] = m("Rprec_mult", {"rel": L, "mult": x})
    out.update(
        map=m("AP", rel),
        gm_map=np.log(np.maximum(m("gm_map", rel), T.MIN_GEO_MEAN)),  # pytrec_eval reports the log per query
        Rprec=m("Rprec", rel),
        bpref=m("Bpref", rel),
        recip_rank=m("RR", rel),
        ndcg=m("nDCG"),
        ndcg_rel=m("ndcg_rel"),
        Rndcg=m("Rndcg", rel),
        G=m("G"),
        binG=m("binG", rel),
        infAP=m("infAP", rel),
        gm_bpref=np.log(np.maximum(m("gm_bpref", rel), T.MIN_GEO_MEAN)),
        utility=m("utility", rel),
        set_P=m("SetP", rel),
        set_recall=m("SetR", rel),
        set_F=m("SetF", rel),
        set_map=m("SetAP", rel),
        set_relative_P=m("set_relative_P", rel),
        num_ret=m("NumRet"),
        num_rel=m("NumRel", rel),
        num_rel_ret=m("NumRelRet", rel),
        num_nonrel_judged_ret=m("num_nonrel_judged_ret", rel),
        num_q=m("NumQ"),
    )
    out["11pt_avg"] = m("11pt_avg", {**rel, "rounding": "v9"})  # pytrec_eval wraps trec_eval 9.x
    return d.qids, out


def theirs(qrels: dict, run: dict, L: int) -> dict[str, dict[str, float]]:
    return pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES, relevance_level=L).evaluate(run)


def mismatches(qrels: dict, run: dict, L: int, their_L: int | None = None, their_qrels: dict | None = None,
               only: tuple[str, ...] | None = None) -> list[tuple]:  # fmt: skip
    qids, mine = ours(qrels, run, L)
    ref = theirs(their_qrels or qrels, run, their_L or L)
    assert sorted(ref) == qids
    bad = []
    for qi, q in enumerate(qids):
        for name, want in ref[q].items():
            if name not in mine or (only and not name.startswith(only)):
                continue
            got = float(mine[name][qi])
            if not (math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(got) and math.isnan(want))):
                bad.append((q, name, want, got))
    return bad


# --------------------------------------------------------------------------------------------------
# generated data
# --------------------------------------------------------------------------------------------------

SCORES = (0.5, 1.0, 2.0, 3.0, 0.1 + 0.2, 1 / 3)


def c_float_twin(x: float) -> float:
    """A double that differs from ``x`` but is the same C float (a tie only trec_eval sees)."""
    return float(np.float32(x)) + 1e-12


def random_case(rng: random.Random, max_docs: int = 14, max_q: int = 5) -> tuple[dict, dict]:
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for qi in range(rng.randint(1, max_q)):
        q = f"q{qi}"
        docs = [f"d{j}" for j in range(rng.randint(1, max_docs))]
        if rng.random() < 0.85:  # judged topic (sometimes absent from the run below)
            judged = {d: rng.choice((-1, 0, 0, 1, 1, 2, 3)) for d in docs if rng.random() < 0.7}
            if judged and max(judged.values()) >= 0:  # trec_eval errors on a topic judged only < 0
                qrels[q] = judged
        if rng.random() < 0.85:  # topic in the run (sometimes without judgments)
            ret = {}
            for d in docs:
                if rng.random() < 0.75:
                    s = rng.choice(SCORES) if rng.random() < 0.6 else rng.random()
                    ret[d] = c_float_twin(s) if rng.random() < 0.2 else s
            if rng.random() < 0.3:
                ret[f"unjudged{qi}"] = rng.random()
            if ret:
                run[q] = ret
    if not set(qrels) & set(run):
        qrels["tiny"] = {"a": 1, "b": 0}
        run["tiny"] = {"a": 0.25}
    return qrels, run


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict, dict]:
    n_docs = draw(st.integers(1, 12))
    docs = [f"d{i:02d}" for i in range(n_docs)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    score = st.one_of(
        st.sampled_from(SCORES), st.floats(-5, 5, allow_nan=False, width=32), st.sampled_from(SCORES).map(c_float_twin)
    )
    for q in ("q1", "q2", "q3"):
        judged = draw(st.dictionaries(st.sampled_from(docs), st.integers(-1, 3), max_size=n_docs))
        if judged and max(judged.values()) >= 0:
            qrels[q] = judged
        ret = draw(st.dictionaries(st.sampled_from([*docs, "x1", "x2"]), score, max_size=n_docs + 2))
        if ret:
            run[q] = ret
    if not set(qrels) & set(run):
        qrels["q0"] = {"d00": 1}
        run["q0"] = {"d00": 1.0, "x9": 1.0}
    return qrels, run


@given(cases(), st.sampled_from((1, 2, 3)))
def test_matches_pytrec_eval_generated(case: tuple[dict, dict], level: int) -> None:
    qrels, run = case
    assert mismatches(qrels, run, level) == []


@pytest.mark.parametrize("seed", range(40))
def test_matches_pytrec_eval_seeded(seed: int) -> None:
    rng = random.Random(seed)
    qrels, run = random_case(rng, max_docs=60 if seed % 4 == 0 else 14, max_q=8)
    for level in (1, 2, 3):
        assert mismatches(qrels, run, level) == [], (seed, level)


@pytest.mark.parametrize("seed", range(15))
def test_level_zero_is_level_one_on_shifted_grades(seed: int) -> None:
    """-l0: every judged doc with a grade >= 0 is relevant; pytrec_eval refuses level 0, so compare
    with level 1 on the qrels whose non-negative grades are raised by one."""
    qrels, run = random_case(random.Random(1000 + seed))
    shifted = {q: {d: (g + 1 if g >= 0 else g) for d, g in j.items()} for q, j in qrels.items()}
    assert mismatches(qrels, run, 0, their_L=1, their_qrels=shifted, only=BINARY) == []


def test_float32_ties_are_broken_by_docno_descending() -> None:
    qrels = {"q": {"a": 1, "b": 0, "c": 0}}
    run = {"q": {"a": 1.0, "b": c_float_twin(1.0), "c": 1.0}}  # all tied as C floats: c, b, a
    _qids, mine = ours(qrels, run, 1)
    assert float(mine["recip_rank"][0]) == pytest.approx(1 / 3)
    assert mismatches(qrels, run, 1) == []


# --------------------------------------------------------------------------------------------------
# hand calculations for what pytrec_eval lacks (trec_eval 10.0 rbp, rbp_resid, unj; AUCPR, ERR, yaap)
# --------------------------------------------------------------------------------------------------

QRELS = {"q": {"a": 2, "b": 0, "c": 1, "d": -1, "e": 3}}
RUN = {"q": {"a": 0.9, "b": 0.8, "x": 0.7, "c": 0.6, "d": 0.5}}  # ranks: a b x c d; x not in the qrels


def one(name: str) -> float:
    d = prepare(Qrels.from_dict(QRELS), Run.from_dict(RUN), policies={"missing": "ignore"})
    return float(parse_measure(name).compute(d)[0])


def test_rbp_graded_is_rescaled_by_the_top_grade() -> None:
    # gain table 0..3 leaves [0, 1], so gains are g/3: a=2/3 (rank 1), c=1/3 (rank 4); d (judged -1) is 0
    p = 0.9
    want = (1 - p) * (2 / 3 * 1 + 1 / 3 * p**3)
    assert one("rbp") == pytest.approx(want, rel=1e-12)
    assert one("RBP(p=0.9)") == one("rbp")
    assert one("rbp.0.5") == pytest.approx(0.5 * (2 / 3 + 1 / 3 * 0.5**3), rel=1e-12)
    assert one("rbp.p=0.5") == one("rbp.0.5")


def test_rbp_binary_and_cutoff() -> None:
    # rel=1: a and c relevant; ir_measures' default p = 0.8
    assert one("RBP(rel=1)") == pytest.approx(0.2 * (1 + 0.8**3), rel=1e-12)
    assert one("RBP(rel=1)@3") == pytest.approx(0.2 * 1, rel=1e-12)
    assert one("RBP(rel=2)") == pytest.approx(0.2, rel=1e-12)


def test_rbp_binary_grades_are_not_rescaled() -> None:
    qrels = {"q": {"a": 1, "b": 0}}
    d = prepare(Qrels.from_dict(qrels), Run.from_dict({"q": {"b": 2.0, "a": 1.0}}), policies={"missing": "ignore"})
    assert float(parse_measure("rbp").compute(d)[0]) == pytest.approx(0.1 * 0.9, rel=1e-12)


def test_rbp_resid() -> None:
    # unjudged retrieved: x (rank 3, not in qrels) and d (rank 5, judged -1); 5 retrieved
    p = 0.9
    assert one("rbp_resid") == pytest.approx(p**5 + (1 - p) * (p**2 + p**4), rel=1e-12)
    judged_only = prepare(
        Qrels.from_dict({"q": {"a": 1}}), Run.from_dict({"q": {"a": 1.0}}), policies={"missing": "ignore"}
    )
    assert float(parse_measure("rbp_resid").compute(judged_only)[0]) == 0.0  # no unjudged doc: 0


def test_unj() -> None:
    assert one("unj@2") == 0.0
    assert one("unj@3") == pytest.approx(1 / 3)
    assert one("unj@5") == pytest.approx(2 / 5)
    assert one("unj@10") == pytest.approx(2 / 10)  # ranks past the end count as judged
    assert [str(m) for m in parse_measures("unj.5,10")] == ["unj@5", "unj@10"]


def test_aucpr_trapezoid_by_hand() -> None:
    # rel=1: relevant a (rank 1), c (rank 4), e (not retrieved); R = 3
    # lround(p*3) relevant docs: p=0,.1 -> 0/1: 1.0; .2..0.5 -> 1: 1.0; .6 (1.8)..0.8 (2.4) -> 2: 0.5; >= .9 -> 3: 0
    ip = {0.0: 1.0, 0.1: 1.0, 0.2: 1.0, 0.3: 1.0, 0.4: 1.0, 0.5: 0.5, 0.6: 0.5, 0.7: 0.5, 0.8: 0.5, 0.9: 0.0, 1.0: 0.0}
    for p, v in ip.items():
        assert one(f"IPrec@{p}") == pytest.approx(v), p
    pts = [ip[p] for p in sorted(ip)]
    want = sum(0.1 * (a + b) / 2 for a, b in itertools.pairwise(pts))
    assert one("AUCPR") == pytest.approx(want, rel=1e-12)


def test_err_gdeval_by_hand() -> None:
    # gmax = 4 (gdeval): R(g) = (2^g - 1) / 16; a=2 -> 3/16, b=0, x=0, c=1 -> 1/16
    r_a, r_c = 3 / 16, 1 / 16
    want = r_a / 1 + (1 - r_a) * r_c / 4
    assert one("ERR(gmax=4)@10") == pytest.approx(want, rel=1e-12)
    assert one("ERR(gmax=4)@3") == pytest.approx(r_a, rel=1e-12)


def test_yaap_and_ideal_dcg_by_hand() -> None:
    s = 1 / 1 + 2 / 4  # precision at the relevant retrieved docs a, c (rel=1)
    assert one("yaap") == pytest.approx(math.log((1 + s) / (1 + 3 - s)), rel=1e-12)
    assert one("ideal_dcg") == pytest.approx(3 / 1 + 2 / math.log2(3) + 1 / 2, rel=1e-12)
    assert one("ideal_dcg(gains={3:0})") == pytest.approx(2 / 1 + 1 / math.log2(3), rel=1e-12)


def test_relstring_characters() -> None:
    d = prepare(
        Qrels.from_dict({"q": {"a": 12, "b": 0, "d": -1}}),
        Run.from_dict({"q": {"a": 4.0, "b": 3.0, "x": 2.0, "d": 1.0}}),
        policies={"missing": "ignore"},
    )
    assert T.relstrings(d, 10) == [">0-."]
    assert T.relstrings(d, 2) == [">0"]


# --------------------------------------------------------------------------------------------------
# names and helpers
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("map_cut.5,10", ["AP@5", "AP@10"]),
        ("ndcg_cut_10", ["nDCG@10"]),
        ("iprec_at_recall_0.10", ["IPrec@0.1"]),
        ("rbp.0.5", ["RBP(p=0.5)"]),
        ("rbp", ["RBP(p=0.9)"]),
        ("Rprec_mult_0.20", ["Rprec_mult(mult=0.2)"]),
        ("Rprec_mult.0.2,2", ["Rprec_mult(mult=0.2)", "Rprec_mult(mult=2)"]),
        ("relative_P.5", ["relative_P@5"]),
        ("ndcg.1=3,2=9", ["nDCG(gains={1:3,2:9})"]),
        ("set_map", ["SetAP"]),
        ("gm_ap", ["gm_map"]),
        ("infap", ["infAP"]),
        ("11-pt_avg", ["11pt_avg"]),
        ("unj_20", ["unj@20"]),
    ],
)
def test_trec_names_resolve(text: str, names: list[str]) -> None:
    assert [str(m) for m in parse_measures(text)] == names


def test_families_are_registered_in_the_trec_group() -> None:
    for name in ("gm_map", "gm_bpref", "infAP", "Rprec_mult", "utility", "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg",
                 "ideal_dcg", "relative_P", "set_relative_P", "SetAP", "num_nonrel_judged_ret", "yaap", "RBP", "rbp_resid", "unj"):  # fmt: skip
        assert REGISTRY[name].group == "trec_eval"
    assert REGISTRY["gm_map"].aggregate == "gmean"
    with pytest.raises(MeasureError):
        parse_measure("ndcg.1=x=2")


def test_sequential_prefix_sums_are_exact() -> None:
    rng = np.random.default_rng(7)
    seg = np.sort(rng.integers(0, 50, 3000))
    vals = rng.random(3000) / 7
    got = S.seg_prefix(vals, seg, 50)
    for s in range(50):
        acc, want = 0.0, []
        for v in vals[seg == s].tolist():
            acc += v
            want.append(acc)
        assert got[seg == s].tolist() == want


def test_lround_is_exact() -> None:
    x = np.array([0.49999999999999994, 0.5, 1.5, 2.5, 2.4999999999999996, 7.7, -0.5, 0.0])
    assert S.lround(x).tolist() == [0, 1, 2, 3, 2, 8, -1, 0]


def test_rbp_custom_gains_join_the_rescaling() -> None:
    # gain table: 0 -> 0, 1 -> 0.5 (given), 2 -> 2; it leaves [0, 1], so every gain is divided by 2
    d = prepare(
        Qrels.from_dict({"q": {"a": 2, "b": 1, "c": 0}}),
        Run.from_dict({"q": {"b": 3.0, "a": 2.0, "c": 1.0}}),
        policies={"missing": "ignore"},
    )
    got = float(parse_measure("rbp.p=0.5,1=0.5").compute(d)[0])
    assert got == pytest.approx(0.5 * (0.25 * 1 + 1.0 * 0.5), rel=1e-12)
