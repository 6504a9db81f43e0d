"""AWRF with planted truths (a ranking whose every doc carries the target's mix is perfectly fair; a
ranking exposing one group alone scores what the formula gives by hand) and invariants over generated
inputs: the values' ranges, relabelling the groups, and the same bits whatever the order of every
input's rows."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import ctxeval

LN2 = math.log(2.0)


def _one_group_awrf(q: list[float]) -> float:
    """1 − JSD((1, 0, ...), q) by hand: the first group alone exposed, the target q."""
    m0 = (1 + q[0]) / 2
    left = math.log(1 / m0)  # the exposed group's term of P against M
    right = sum(x * math.log(x / ((x + (i == 0)) / 2)) for i, x in enumerate(q) if x > 0)
    return 1 - (left + right) / 2


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 9), min_size=2, max_size=5),
    st.integers(1, 12),
    st.sampled_from([None, 0.5, 0.05, 0.9]),
    st.integers(1, 15),
)
def test_planted_fair_and_one_sided_rankings(counts: list[int], n_ranked: int, p: float | None, k: int) -> None:
    """The relevant docs hold the groups in proportion ``counts``: the target. A run whose docs each
    carry that mix as their weights is perfectly fair at every depth (AWRF 1); a run of docs of the
    first group alone scores 1 − JSD((1, 0, ...), target), worked out by hand."""
    groups = [f"g{i}" for i in range(len(counts))]
    labels: dict[str, object] = {}
    qrels: dict[str, int] = {}
    for g, c in zip(groups, counts):
        for j in range(c):
            labels[f"rel-{g}-{j}"] = g
            qrels[f"rel-{g}-{j}"] = 1
    mix = {g: float(c) for g, c in zip(groups, counts)}
    fair_run, one_run = {}, {}
    for i in range(n_ranked):
        labels[f"mix{i}"] = mix
        labels[f"one{i}"] = groups[0]
        fair_run[f"mix{i}"] = float(n_ranked - i)
        one_run[f"one{i}"] = float(n_ranked - i)
    name = ("AWRF" if p is None else f"AWRF(p={p})") + f"@{k}"
    res = ctxeval.evaluate(
        {"q": qrels},
        [ctxeval.Run.from_dict({"q": fair_run}, name="fair"), ctxeval.Run.from_dict({"q": one_run}, name="one")],
        [name],
        rag={"fair_groups": labels},
    )
    total = sum(counts)
    want = _one_group_awrf([c / total for c in counts])
    assert res.runs[0].mean(name) == pytest.approx(1.0, abs=1e-12)
    assert res.runs[1].mean(name) == pytest.approx(want, rel=1e-12)
    assert res.runs[1].mean(name) < 1.0


def test_disjoint_exposure_scores_one_minus_ln2() -> None:
    """A ranking of one group against a target of the other: JSD = ln 2 (nats), its largest value."""
    got = ctxeval.evaluate(
        {"q": {"r": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["AWRF"], rag={"fair_groups": {"r": "x", "a": "y", "b": "y"}}
    )
    assert got.runs[0].mean("AWRF") == pytest.approx(1 - LN2, rel=1e-15)


def test_ranks_one_and_two_weigh_alike_under_the_tracks_discount() -> None:
    """1 / log2(max(i, 2)): the first two ranks count the same, so a and b (one group each, the target
    half and half) are fair in either order; the geometric attention favours the first."""
    qrels = {"q": {"a": 1, "b": 1}}
    groups = {"a": "x", "b": "y"}
    res = ctxeval.evaluate(qrels, {"q": {"a": 2.0, "b": 1.0}}, ["AWRF", "AWRF(p=0.5)"], rag={"fair_groups": groups})
    assert res.runs[0].mean("AWRF") == 1.0
    P = np.array([1 / 1.5, 0.5 / 1.5])  # p = 0.5: attention 0.5 and 0.25
    M = (P + 0.5) / 2
    js = (np.sum(P * np.log(P / M)) + np.sum(0.5 * np.log(0.5 / M))) / 2
    assert res.runs[0].mean("AWRF(p=0.5)") == pytest.approx(1 - js, rel=1e-14)


def test_the_tracks_task_score_is_ndcg_times_awrf() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 1}}
    run = {"q": {"a": 3.0, "z": 2.0, "b": 1.0}}
    groups = {"a": "x", "b": "x", "c": "y", "z": "y"}
    res = ctxeval.evaluate(qrels, run, ["nDCG-AWRF@3", "AWRF@3"], rag={"fair_groups": groups}).runs[0]
    ndcg = (1 + 1 / math.log2(3)) / (1 + 1 + 1 / math.log2(3))  # ranks 1 and 3 of an ideal of 3
    assert res.mean("nDCG-AWRF@3") == pytest.approx(ndcg * res.mean("AWRF@3"), rel=1e-14)


def test_given_targets_and_the_star_line(tmp_path) -> None:
    """target=given reads the file; '*' serves every query without lines of its own."""
    qrels = {"q1": {"a": 1}, "q2": {"a": 1}}
    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"b": 2.0}}
    t = tmp_path / "target.txt"
    t.write_text("* x 1\n* y 1\nq2 y 3\nq2 x 1\n")
    res = ctxeval.evaluate(
        qrels, run, ["AWRF(target=given)", "AWRF"], rag={"fair_groups": {"a": "x", "b": "y"}, "fair_target": str(t)}
    ).runs[0]
    given_v = res.per_query("AWRF(target=given)")
    assert given_v["q1"] == 1.0  # a and b at ranks 1 and 2: half and half, as '*' asks
    assert given_v["q2"] == pytest.approx(_one_group_awrf([0.75, 0.25]), rel=1e-14)  # y alone, target 3:1
    assert res.per_query("AWRF")["q2"] == pytest.approx(1 - LN2, rel=1e-14)  # the relevant doc a is x


def test_a_ranking_without_labelled_docs_is_undefined() -> None:
    res = ctxeval.evaluate(
        {"q1": {"a": 1}, "q2": {"a": 1}},
        {"q1": {"u": 1.0}, "q2": {"a": 1.0}},
        ["AWRF", "AWRF-FRT(p=0.5)", "nDCG-AWRF"],
        rag={"fair_groups": {"a": "x"}},
    )
    r = res.runs[0]
    assert math.isnan(r.per_query("AWRF")["q1"]) and r.per_query("AWRF")["q2"] == 1.0
    assert math.isnan(r.per_query("AWRF-FRT(p=0.5)")["q1"])
    assert r.per_query("nDCG-AWRF")["q1"] == 0.0  # nothing relevant retrieved: the score is 0 whatever the exposure
    assert r.summary[ctxeval.parse_measure("AWRF")] == (1.0, 1)  # the mean over the one query where it is defined
    assert any("1 of its 2 ranked docs have no group label" in n for n in res.notes)


# --------------------------------------------------------------------------------------------------
# invariants over generated inputs
# --------------------------------------------------------------------------------------------------

NAMES = [
    "AWRF",
    "AWRF@3",
    "AWRF(p=0.3)@5",
    "AWRF(rel=2)",
    "AWRF(target=given)@4",
    "nDCG-AWRF@5",
    "AWRF-FRT(p=0.4)",
    "AWRF-FRT(p=0.2)@3",
    "AWRF-FRT-gap(p=0.4,combo=MeanAbsDev)@4",
    "AWRF-FRT-gap(p=0.4,combo=Variance)",
]


@st.composite
def _cases(draw: st.DrawFn):
    n_docs = draw(st.integers(2, 14))
    n_groups = draw(st.integers(1, 4))
    docs = [f"d{i}" for i in range(n_docs)]
    dims = draw(st.sampled_from([[""], ["u", "v"]]))
    labels: list[tuple[str, str, float]] = []
    for d in docs:
        if draw(st.booleans()) and draw(st.booleans()):
            continue  # a quarter of the docs have no label
        for dim in dims:
            chosen = draw(st.sets(st.integers(0, n_groups - 1), min_size=1, max_size=n_groups))
            for g in sorted(chosen):
                labels.append((d, f"{dim}={dim}{g}" if dim else f"g{g}", float(draw(st.sampled_from([1, 2, 0.5])))))
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(draw(st.integers(1, 3))):
        judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=n_docs, unique=True))
        qrels[f"q{q}"] = {d: draw(st.integers(0, 2)) for d in judged}
        ranked = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=n_docs, unique=True))
        run[f"q{q}"] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    combos = sorted({g for _, g, _ in labels})
    assume(labels)
    spots = [((0, 0), 1.0)] + ([((1, 0), 2.0)] if n_groups > 1 else [])
    target = [("*", "&".join(f"{d}={d}{i}" for d, i in zip(dims, idx)) if dims != [""] else f"g{idx[0]}", w)
              for idx, w in spots]  # fmt: skip
    return labels, qrels, run, target, combos


def _write(tmp, labels, target, order: random.Random | None = None, rename=None):
    lines = [f"{d} {rename(g) if rename else g} {w!r}\n" for d, g, w in labels]
    tlines = [f"{q} {'&'.join(map(rename, t.split('&'))) if rename else t} {w!r}\n" for q, t, w in target]
    if order is not None:
        order.shuffle(lines)
        order.shuffle(tlines)
    gp, tp = tmp / f"g{id(lines)}.txt", tmp / f"t{id(lines)}.txt"
    gp.write_text("".join(lines))
    tp.write_text("".join(tlines))
    return {"fair_groups": str(gp), "fair_target": str(tp)}


def _evaluate(qrels, run, rag):
    res = ctxeval.evaluate(qrels, run, NAMES, rag=rag).runs[0]
    return {n: res.per_query(n) for n in NAMES}


@settings(max_examples=80, deadline=None)
@given(_cases(), st.randoms(use_true_random=False))
def test_ranges_relabelling_and_row_order(tmp_path_factory, case, rnd) -> None:
    labels, qrels, run, target, _ = case
    tmp = tmp_path_factory.mktemp("fair")
    base = _evaluate(qrels, run, _write(tmp, labels, target))
    lo = 1 - LN2 - 1e-12
    for n, per_q in base.items():
        for v in per_q.values():
            if math.isnan(v):
                continue
            if n.startswith("AWRF-FRT-gap"):
                assert v >= -1e-12
            elif n.startswith(("AWRF-FRT", "nDCG")):
                assert -1e-12 <= v <= 1 + 1e-12
            else:
                assert lo <= v <= 1 + 1e-12, (n, v)
    # the same bits whatever the order of the qrels', the run's and the side files' rows
    shuffled_q = {
        q: dict(rnd.sample(sorted(d.items()), len(d))) for q, d in rnd.sample(sorted(qrels.items()), len(qrels))
    }
    shuffled_r = {q: dict(rnd.sample(sorted(d.items()), len(d))) for q, d in rnd.sample(sorted(run.items()), len(run))}
    again = _evaluate(shuffled_q, shuffled_r, _write(tmp, labels, target, order=rnd))
    assert repr(again) == repr(base)

    # the groups renamed by a bijection (levels reversed and prefixed): the same values
    def rename(g: str) -> str:
        dim, sep, lv = g.rpartition("=")
        return f"{dim}{sep}zz{lv[::-1]}"

    renamed = _evaluate(qrels, run, _write(tmp, labels, target, rename=rename))
    for n in NAMES:
        for q, v in base[n].items():
            w = renamed[n][q]
            assert (math.isnan(v) and math.isnan(w)) or w == pytest.approx(v, rel=1e-12, abs=1e-12), (n, q)


def test_a_prefix_of_the_rankings_reads_as_the_cutoff() -> None:
    """The fairness side data follows a cut of the rankings (EvalData.prefix, as the curve and the
    engines cut them): AWRF of the first k rows equals AWRF@k; FairRankTune's groups stay those of the
    whole ranking."""
    from ctxeval._session import open_session

    qrels = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"x": 1, "y": 2}}
    run = {"q1": {"a": 5.0, "u": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}, "q2": {"y": 3.0, "z": 2.0, "x": 1.0}}
    groups = {"a": "g1", "b": "g2", "c": "g1", "d": ["g1", "g2"], "x": "g2", "y": "g1", "z": "g3"}
    # (not nDCG-AWRF: its nDCG@k's ideal is cut at k too, a prefix's is not)
    names = ["AWRF", "AWRF(p=0.3)", "AWRF-FRT(p=0.3)", "AWRF-FRT-gap(p=0.3,combo=MeanAbsDev)"]
    session, runs = open_session(qrels, [run], names, rag={"fair_groups": groups})
    data = session.prepare(runs[0])
    for k in (1, 2, 3, 4):
        cut = data.prefix(k)
        for n in names:
            m = ctxeval.parse_measure(n)
            np.testing.assert_array_equal(m.compute(cut), (m @ k).compute(data), err_msg=f"{n} @{k}")
