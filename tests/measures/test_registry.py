"""The measure registry: names, the grammar, aliases, and invariants over every registered measure."""

from __future__ import annotations

import math
import random

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ctxeval import MeasureError, Qrels, Run, families, parse_measure, parse_measures
from ctxeval._measures import Measure
from ctxeval._session import prepare

# --- names ------------------------------------------------------------------------------------------

CANONICAL = [
    ("nDCG@10", "nDCG@10"),
    ("ndcg_cut.10", "nDCG@10"),
    ("ndcg_cut_10", "nDCG@10"),
    ("ndcg@10", "nDCG@10"),
    ("NDCG@10", "nDCG@10"),
    ("P(rel=2)@5", "P(rel=2)@5"),
    ("P_5", "P@5"),
    ("precision@5", "P@5"),
    ("AP(rel=1)", "AP"),
    ("map", "AP"),
    ("map@100", "AP@100"),
    ("map_cut.100", "AP@100"),
    ("recip_rank", "RR"),
    ("MRR", "RR"),
    ("mrr", "RR"),
    ("recall.100", "R@100"),
    ("recall@100", "R@100"),
    ("hit_rate@5", "Success@5"),
    ("Hit@5", "Success@5"),
    ("success.5", "Success@5"),
    ("IPrec@0.5", "IPrec@0.5"),
    ("iprec_at_recall_0.10", "IPrec@0.1"),
    ("Rprec", "Rprec"),
    ("r-precision", "Rprec"),
    ("bpref", "Bpref"),
    ("ndcg@10-l2", None),  # ranx's level suffix does not apply to nDCG (no rel parameter)
    ("nDCG(gains={0:0,1:1,2:3,3:7})@10", "nDCG(gains={0:0,1:1,2:3,3:7})@10"),
    ("nDCG(dcg=exp-log2)@10", "nDCG(dcg=exp-log2)@10"),
    ("nDCG(dcg='exp-log2')@10", "nDCG(dcg=exp-log2)@10"),
    ("ERR(gmax=4)@10", "ERR(gmax=4)@10"),
    ("SetF(beta=1.0)", "SetF"),
    ("num_rel_ret", "NumRelRet"),
]


@pytest.mark.parametrize(("text", "canonical"), CANONICAL)
def test_names_resolve_to_canonical(text: str, canonical: str | None) -> None:
    if canonical is None:
        with pytest.raises(MeasureError):
            parse_measure(text)
        return
    m = parse_measure(text)
    assert str(m) == canonical
    assert parse_measure(str(m)) == m  # the canonical name round-trips
    assert hash(m) == hash(parse_measure(canonical))


def test_trec_list_syntax_and_python_api() -> None:
    assert [str(m) for m in parse_measures("P.5,10")] == ["P@5", "P@10"]
    ndcg = parse_measure("nDCG")
    assert str(ndcg @ 10) == "nDCG@10"
    assert str(parse_measure("P@5")(rel=2)) == "P(rel=2)@5"
    assert {parse_measure("map"): 1}[parse_measure("AP")] == 1


BAD = [
    ("nDCG@x", "cannot parse measure 'nDCG@x'"),
    ("Foo@10", "unknown measure 'Foo@10'"),
    ("P", "measure P needs a cutoff, e.g. P@10"),
    ("P@0", "measure P: cutoff must be a whole number >= 1, got 0"),
    ("P@2.5", "measure P: cutoff must be a whole number >= 1, got 2.5"),
    ("Rprec@5", "measure Rprec takes no @cutoff, got @5"),
    ("AP(foo=1)", "measure AP: unknown parameter 'foo' (parameters: rel, judged_only)"),
    ("AP(rel=x)", "measure AP: parameter rel must be an integer, got 'x'"),
    ("nDCG(dcg=cubic)", "measure nDCG: parameter dcg must be one of log2, exp-log2, got 'cubic'"),
    ("IPrec@1.5", "measure IPrec: cutoff must be a recall level in [0, 1], got 1.5"),
    ("AP(rel=__import__('os'))", "cannot parse measure"),
    ("", "empty measure name"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_names(text: str, message: str) -> None:
    with pytest.raises(MeasureError) as info:
        parse_measure(text)
    assert message in str(info.value)


def test_every_family_documented() -> None:
    for fam in families():
        assert fam.summary and fam.formula and fam.citation, fam.name
        for p in fam.params:
            assert p.doc, (fam.name, p.name)


# --- invariants over the whole registry -------------------------------------------------------------


def instances() -> list[Measure]:
    out = []
    for fam in families():
        if fam.requires:
            continue
        if fam.cutoff == "none":
            cuts: list = [None]
        elif fam.cutoff_kind == "float":
            cuts = [0.0, 0.3, 1.0]
        else:
            cuts = [1, 3, 10] + ([None] if fam.cutoff == "optional" else [])
        # ERR's gmax; the C/W/L measures' max_rel (without it grades above 1 are refused, as cwl_eval does)
        needed = ",".join(f"{p.name}=3" for p in fam.params if p.required or p.name == "max_rel")
        name = f"{fam.name}({needed})" if needed else fam.name
        for c in cuts:
            out.append(
                parse_measure(name)
                if c is None
                else parse_measure(name) @ c
                if fam.cutoff == "optional"
                else parse_measure(f"{name}@{c}")
            )
    return out


ALL = instances()

grades = st.integers(min_value=-1, max_value=3)


@st.composite
def qrels_and_run(draw: st.DrawFn) -> tuple[dict, dict]:
    n_q = draw(st.integers(1, 4))
    qrels: dict = {}
    run: dict = {}
    for qi in range(n_q):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 8)))]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        qrels[f"q{qi}"] = {d: draw(grades) for d in judged}
        retrieved = draw(st.lists(st.sampled_from([*docs, "u1", "u2"]), unique=True))
        if retrieved and draw(st.booleans()):
            run[f"q{qi}"] = {d: float(draw(st.sampled_from([0.1, 0.5, 0.5, 1.0, 2.0, -1.0]))) for d in retrieved}
    if not run:
        run["q0"] = {"d0": 1.0}
    return qrels, run


def _values(qrels: dict, run: dict | Run, measures: list[Measure], missing: str = "zero") -> dict[Measure, np.ndarray]:
    data = prepare(Qrels.from_dict(qrels), Run.coerce(run), policies={"missing": missing})
    return {m: m.compute(data) for m in measures}


@given(qrels_and_run())
def test_bounds_hold(case: tuple[dict, dict]) -> None:
    qrels, run = case
    for m, vals in _values(qrels, run, ALL).items():
        lo, hi = m.spec.bounds or (-math.inf, math.inf)
        defined = vals[~np.isnan(vals)]
        assert np.all(defined >= lo - 1e-12) and np.all(defined <= hi + 1e-12), (str(m), vals)


@given(qrels_and_run(), st.randoms(use_true_random=False))
def test_invariant_to_input_row_order(case: tuple[dict, dict], rnd: random.Random) -> None:
    qrels, run = case
    frame = Run.from_dict(run).frame
    perm = list(range(frame.height))
    rnd.shuffle(perm)
    shuffled = Run.from_frame(frame[perm], name="run")
    a = _values(qrels, run, ALL)
    b = _values(qrels, shuffled, ALL)
    for m in ALL:
        np.testing.assert_array_equal(a[m], b[m], err_msg=str(m))


@given(qrels_and_run())
def test_perfect_run_scores_one(case: tuple[dict, dict]) -> None:
    qrels, _ = case
    perfect = {}
    for q, docs in qrels.items():
        order = sorted(docs, key=lambda d: (-docs[d], d))
        perfect[q] = {d: float(len(order) - i) for i, d in enumerate(order) if docs[d] > 0}
    perfect = {q: v for q, v in perfect.items() if v}
    assume(perfect)
    # AP@k divides by all relevant docs (trec_eval), so only cutoffs beyond the judged pool give 1.
    ms = [m for m in ALL if m.spec.perfect_is_one and (m.cutoff is None or m.cutoff >= 10)]
    vals = _values({q: qrels[q] for q in perfect}, perfect, ms)
    for m in ms:
        np.testing.assert_allclose(vals[m], 1.0, err_msg=str(m))
    # P and R: 1 when the cutoff equals the number of relevant docs
    data = prepare(Qrels.from_dict({q: qrels[q] for q in perfect}), Run.from_dict(perfect))
    for i, q in enumerate(data.qids):
        n = sum(1 for g in qrels[q].values() if g >= 1)
        for name in ("P", "R"):
            assert parse_measure(f"{name}@{n}").compute(data)[i] == pytest.approx(1.0)


def test_hand_calculation_small_ranking() -> None:
    # ranking: d1 (grade 2), u (unjudged), d2 (0), d3 (1); d4 (grade 3) not retrieved
    qrels = {"q": {"d1": 2, "d2": 0, "d3": 1, "d4": 3}}
    run = {"q": {"d1": 4.0, "u": 3.0, "d2": 2.0, "d3": 1.0}}
    v = {
        str(m): float(x[0])
        for m, x in _values(
            qrels,
            run,
            parse_measures(["AP", "RR", "P@2", "R@4", "nDCG@4", "nDCG", "Rprec", "Bpref", "DCG@4", "ERR(gmax=3)@4"]),
        ).items()
    }
    R = 3  # d1, d3, d4 relevant at rel=1
    assert v["AP"] == pytest.approx((1 / 1 + 2 / 4) / R)
    assert v["RR"] == 1.0 and v["P@2"] == 0.5 and v["R@4"] == pytest.approx(2 / 3)
    dcg = 2 / math.log2(2) + 1 / math.log2(5)
    idcg4 = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert v["DCG@4"] == pytest.approx(dcg)
    assert v["nDCG@4"] == pytest.approx(dcg / idcg4) and v["nDCG"] == pytest.approx(dcg / idcg4)
    assert v["Rprec"] == pytest.approx(1 / 3)  # one relevant in the top 3
    # bpref: N = 1 judged non-relevant; d1 has none above (1), d3 has d2 above: 1 - min(1,3)/min(1,3) = 0
    assert v["Bpref"] == pytest.approx((1 + 0) / 3)
    # ERR with gmax = 3: R(2) = 3/8, R(1) = 1/8
    assert v["ERR(gmax=3)@4"] == pytest.approx(1 * 3 / 8 + (1 / 4) * (1 / 8) * (1 - 3 / 8))


def test_float32_ties_follow_trec_eval() -> None:
    # 1.0 and 1.0 + 1e-12 are distinct doubles but equal as float32: a tie, broken by doc id descending
    qrels = {"q": {"a": 1, "b": 0}}
    run = {"q": {"a": 1.0 + 1e-12, "b": 1.0}}
    assert _values(qrels, run, [parse_measure("RR")])[parse_measure("RR")][0] == 0.5
    data = prepare(Qrels.from_dict(qrels), Run.from_dict(run), policies={"ties": "input"})
    assert parse_measure("RR").compute(data)[0] == 1.0


def test_input_tie_policy_keeps_file_order() -> None:
    frame = pl.DataFrame({"query_id": ["q", "q", "q"], "doc_id": ["a", "b", "c"], "score": [1.0, 1.0, 1.0]})
    qrels = {"q": {"a": 1}}
    trec = prepare(Qrels.from_dict(qrels), Run.from_frame(frame, name="r"))
    inp = prepare(Qrels.from_dict(qrels), Run.from_frame(frame, name="r"), policies={"ties": "input"})
    rr = parse_measure("RR")
    assert rr.compute(trec)[0] == pytest.approx(1 / 3) and rr.compute(inp)[0] == 1.0


def test_trec_set_f_parameter_is_beta_squared() -> None:
    """trec_eval's set_F.x is (x + 1)·P·R / (x·P + R): x weighs recall as β² does, so set_F.x = SetF(β = √x)."""
    import pytrec_eval

    from ctxeval import evaluate

    qrels = {"q1": {"a": 1, "b": 1, "c": 0, "d": 1}, "q2": {"a": 1, "z": 1}}
    run = {"q1": {"a": 3.0, "c": 2.0, "x": 1.0}, "q2": {"a": 1.0, "b": 0.5, "c": 0.2}}
    for x in (0.5, 1.0, 2.0, 3.0):
        want = pytrec_eval.RelevanceEvaluator(qrels, {f"set_F.{x}"}).evaluate(run)
        got = evaluate(qrels, run, [f"set_F.{x}"]).runs[0]
        assert got.qids == ["q1", "q2"]
        values = next(iter(got.values.values()))
        assert values.tolist() == pytest.approx([want[q]["set_F"] for q in got.qids], abs=1e-12)
    # q2 by hand with x = 0.5: P = 1/3, R = 1/2 -> 1.5 * (1/6) / (0.5/3 + 1/2) = 0.375
    q2 = evaluate(qrels, run, ["set_F.0.5"]).runs[0].per_query("SetF(beta=0.7071067811865476)")["q2"]
    assert q2 == pytest.approx(0.375, abs=1e-12)
