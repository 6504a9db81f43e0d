"""Calibrated runtime policy (``ctxeval calibrate``) and the serving-time ``ContextSelector``.

Oracles: brute-force loops over every policy and query (the issue's definition: drop candidates
with relative score < tau, keep at most K_max), an independent choice/cross-validation loop,
``evaluate`` on runs physically cut to the selected passages, and the engine's own ranking.
"""

from __future__ import annotations

import json
import math
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import assume, given
from hypothesis import strategies as st

from ctxeval import (
    ConfigError,
    ContextSelector,
    FormatError,
    InputError,
    MeasureError,
    Qrels,
    QueryMismatchError,
    Run,
    evaluate,
)
from ctxeval._calibrate import TAUS, assign_folds, calibrate, fit, lead_lengths, prefix_measure, prefix_utility
from ctxeval._cli import cli
from ctxeval._context.utility import UtilityConfig, row_utilities
from ctxeval._core.relscore import relative_scores, relative_scores_one
from ctxeval._demo import example_path
from ctxeval._io.frames import frame_of
from ctxeval._measures import parse_measure
from ctxeval._session import prepare


def ranked_frame(run: Run):
    """The run's rows in rank order (queries by id, then trec's rule): query_id, doc_id, score."""
    return frame_of(run.columns, "score", input_order=False)[run.ranked_rows("trec")]


def ranked_pairs(data) -> list[tuple[str, str]]:
    """(query, doc) of every ranked row of an evaluation joined with its rows kept."""
    queries = np.repeat(np.array(data.qids, dtype=object), np.diff(data.r_off)).tolist()
    return list(zip(queries, data.rows.doc.to_list()))


ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "src" / "ctxeval" / "data" / "example"
TOL = 1e-12

# --- generated per-query lists ----------------------------------------------------------------------


@st.composite
def ranked_lists(draw: st.DrawFn, max_q: int = 7, max_len: int = 8) -> list[tuple[list[float], list[float]]]:
    """Per query: scores in rank order (descending) and utilities on a dyadic grid (sums are exact)."""
    n_q = draw(st.integers(2, max_q))
    out = []
    for _ in range(n_q):
        n = draw(st.integers(0, max_len))
        profile = draw(st.sampled_from(["positive", "signed", "rrf", "ties"]))
        if profile == "positive":
            s = draw(st.lists(st.floats(0.01, 50.0), min_size=n, max_size=n))
        elif profile == "signed":
            s = draw(st.lists(st.floats(-20.0, 20.0), min_size=n, max_size=n))
        elif profile == "rrf":
            s = [1.0 / (60 + r) for r in draw(st.lists(st.integers(1, 40), min_size=n, max_size=n))]
        else:
            s = draw(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 2.0]), min_size=n, max_size=n))
        u = draw(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), min_size=n, max_size=n))
        out.append((sorted(s, reverse=True), u))
    return out


def _arrays(lists: list[tuple[list[float], list[float]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    off = np.zeros(len(lists) + 1, dtype=np.int64)
    off[1:] = np.cumsum([len(s) for s, _ in lists])
    scores = np.array([x for s, _ in lists for x in s], dtype=np.float64)
    u = np.array([x for _, v in lists for x in v], dtype=np.float64)
    return off, scores, u


def _rel_lists(lists: list[tuple[list[float], list[float]]]) -> list[list[float]]:
    """Relative scores of one list, written out from the definition (not the library function)."""
    out = []
    for s, _ in lists:
        if not s:
            out.append([])
        elif max(s) == min(s):
            out.append([1.0] * len(s))
        else:
            out.append([(x - min(s)) / (max(s) - min(s)) for x in s])
    return out


def _brute_value(rel: list[float], u: list[float], k_max: int, tau: float) -> float:
    """The issue's policy, literally: drop those with relative score < tau, keep at most k_max."""
    kept = [v for r, v in zip(rel, u) if r >= tau][:k_max]
    return sum(kept)


def _brute_grid(rels: list[list[float]], lists: list, members: list[int], k: int) -> np.ndarray:
    grid = np.zeros((k, len(TAUS)))
    for ki in range(k):
        for tj, tau in enumerate(TAUS):
            grid[ki, tj] = sum(_brute_value(rels[q], lists[q][1], ki + 1, tau) for q in members) / len(members)
    return grid


def _brute_choose(grid: np.ndarray) -> tuple[int, float, int]:
    """The documented choice: best mean; ties -> smallest K_max, then the middle tied tau; best fixed
    K (tau = 0) -> the smallest among ties."""
    best = grid.max()
    for ki in range(grid.shape[0]):
        tied = [tj for tj in range(grid.shape[1]) if grid[ki, tj] >= best - TOL * max(1.0, abs(best))]
        if tied:
            policy = (ki + 1, TAUS[tied[(len(tied) - 1) // 2]])
            break
    col = grid[:, 0]
    fixed = next(ki + 1 for ki in range(len(col)) if col[ki] >= col.max() - TOL * max(1.0, abs(col.max())))
    return policy[0], policy[1], fixed


# --- kernels against brute force ----------------------------------------------------------------------


@given(ranked_lists(), st.integers(1, 6))
def test_relative_scores_match_definition(lists: list, k: int) -> None:
    off, scores, _ = _arrays(lists)
    got = relative_scores(off, scores)
    want = [x for r in _rel_lists(lists) for x in r]
    assert got.tolist() == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert bool(np.all((got >= 0) & (got <= 1)))
    # each query alone gives the very same bits (what the selector relies on)
    for q in range(len(lists)):
        alone = relative_scores(np.array([0, off[q + 1] - off[q]]), scores[off[q] : off[q + 1]])
        assert alone.tobytes() == got[off[q] : off[q + 1]].tobytes()
        if off[q + 1] > off[q]:  # the selector's single-list path
            seg = scores[off[q] : off[q + 1]]
            assert relative_scores_one(seg).tobytes() == alone.tobytes()
            rows = np.arange(seg.size)[::-1][: max(1, seg.size // 2)]
            assert relative_scores_one(seg, rows).tobytes() == alone[rows].tobytes()


@given(ranked_lists(), st.integers(1, 6))
def test_grid_equals_brute_force(lists: list, k: int) -> None:
    off, scores, u = _arrays(lists)
    rel = relative_scores(off, scores)
    lead = lead_lengths(off, rel, k)
    values = prefix_utility(off, u, k)
    res = fit(values, lead, folds=2, seed=3)
    # brute force on the library's relative scores (checked against the definition above; written-out
    # floats may differ in the last bit exactly at a threshold); utilities are dyadic: sums are exact
    rels_lib = [rel[off[q] : off[q + 1]].tolist() for q in range(len(lists))]
    want = _brute_grid(rels_lib, lists, list(range(len(lists))), k)
    np.testing.assert_array_equal(res.grid, want)
    assert res.grid_valid.min() == len(lists)
    k_max, tau, fixed = _brute_choose(want)
    assert (res.k_max, res.tau, res.best_fixed_k) == (k_max, tau, fixed)


@given(ranked_lists(max_q=9), st.integers(1, 5), st.integers(2, 4), st.integers(0, 5))
def test_cross_validation_equals_brute_force(lists: list, k: int, folds: int, seed: int) -> None:
    folds = min(folds, len(lists))
    assume(folds >= 2)
    off, scores, u = _arrays(lists)
    rel = relative_scores(off, scores)
    rels = [rel[off[q] : off[q + 1]].tolist() for q in range(len(lists))]
    res = fit(prefix_utility(off, u, k), lead_lengths(off, rel, k), folds=folds, seed=seed)
    fold = assign_folds(len(lists), folds, seed)
    held, held0, n = 0.0, 0.0, 0
    for f in range(folds):
        train = [q for q in range(len(lists)) if fold[q] != f]
        test = [q for q in range(len(lists)) if fold[q] == f]
        k_max, tau, fixed = _brute_choose(_brute_grid(rels, lists, train, k))
        entry = res.cross_validation["per_fold"][f]
        assert (entry["k_max"], entry["tau"], entry["best_fixed_k"]) == (k_max, tau, fixed)
        held += sum(_brute_value(rels[q], lists[q][1], k_max, tau) for q in test)
        held0 += sum(_brute_value(rels[q], lists[q][1], fixed, 0.0) for q in test)
        n += len(test)
    cv = res.cross_validation
    assert cv["objective"] == pytest.approx(held / n, abs=1e-12)
    assert cv["objective_at_best_fixed_k"] == pytest.approx(held0 / n, abs=1e-12)
    assert cv["gain"] == pytest.approx((held - held0) / n, abs=1e-12)
    # in-sample: the policy beats or equals every fixed K, which is one of its cells (tau = 0)
    assert res.in_sample["gain"] >= 0


def test_lead_lengths_hand_example() -> None:
    # rel in rank order [1, 0.8, 0.3, 0.9]: the 0.9 after the 0.3 does not count (a prefix is selected)
    lead = lead_lengths(np.array([0, 4]), np.array([1.0, 0.8, 0.3, 0.9]), 4, [0.0, 0.5, 0.85, 0.95])
    assert lead.tolist() == [[4, 2, 1, 1]]
    # U(L) for u = [1, -0.5, 0.5, -1]: 0, 1, 0.5, 1, 0 (and 0 beyond the list)
    assert prefix_utility(np.array([0, 4]), np.array([1.0, -0.5, 0.5, -1.0]), 5).tolist() == [[0, 1, 0.5, 1, 0, 0]]


def test_assign_folds_properties() -> None:
    f0 = assign_folds(53, 5, 0)
    assert sorted(np.bincount(f0).tolist()) == [10, 10, 11, 11, 11]
    np.testing.assert_array_equal(f0, assign_folds(53, 5, 0))
    assert not np.array_equal(f0, assign_folds(53, 5, 1))
    with pytest.raises(ConfigError, match="at least 5 queries"):
        assign_folds(4, 5, 0)
    with pytest.raises(ConfigError, match="folds"):
        assign_folds(10, 1, 0)


# --- a planted optimum ------------------------------------------------------------------------------------


def _planted(n_q: int = 60, seed: int = 11) -> tuple[dict, dict, list[int]]:
    """Queries whose m useful passages (grade 5) sit above a relative-score gap: rel >= (8 - 0.99) /
    (10 - 0.1) = 0.778 for the useful ones, <= (4 - 0.1) / (10 - 0.1) = 0.394 for the distractors
    (grade 1) and the unjudged filler below them. The
    best possible selection is exactly the useful passages, total utility m."""
    rng = random.Random(seed)
    qrels: dict = {}
    run: dict = {}
    ms = []
    for i in range(n_q):
        q = f"q{i:03d}"
        m = rng.randint(1, 5)
        ms.append(m)
        qrels[q] = {}
        run[q] = {}
        for j in range(m):
            d = f"{q}-good{j}"
            qrels[q][d] = 5
            run[q][d] = 10.0 if j == 0 else rng.uniform(8.0, 10.0)
        for j in range(rng.randint(0, 4)):
            d = f"{q}-bad{j}"
            qrels[q][d] = 1
            run[q][d] = rng.uniform(1.0, 4.0)
        for j in range(rng.randint(1, 6)):  # every list reaches down to filler, as a real depth does
            run[q][f"{q}-filler{j}"] = rng.uniform(0.1, 0.99)
    return qrels, run, ms


@pytest.mark.parametrize("objective", ["utility", "dDCG"])
def test_calibration_recovers_planted_optimum(objective: str) -> None:
    qrels, run, ms = _planted()
    cal = calibrate(qrels, run, objective=objective, k=10, folds=5, seed=0)
    assert cal.k_max == max(ms)  # the smallest K_max that keeps every useful passage
    assert 0.4 < cal.tau <= 0.8  # inside the gap
    ins = cal.policy["in_sample"]
    if objective == "utility":
        assert ins["objective"] == pytest.approx(sum(ms) / len(ms), abs=1e-12)
        assert ins["mean_selected"] == pytest.approx(sum(ms) / len(ms), abs=1e-12)
        # no fixed K can do as well: the useful counts vary per query
        assert ins["objective_at_best_fixed_k"] < ins["objective"] - 0.1
        cv = cal.policy["cross_validation"]
        assert all(0.4 < e["tau"] <= 0.8 for e in cv["per_fold"])
        assert cv["objective"] == pytest.approx(sum(ms) / len(ms), abs=1e-12)
        assert cv["gain"] > 0.1
    else:
        # dDCG of exactly the useful passages: sum_j 1 / log2(j + 1), j = 1..m
        want = np.mean([sum(1 / math.log2(j + 1) for j in range(1, m + 1)) for m in ms])
        assert ins["objective"] == pytest.approx(want, abs=1e-12)


def test_calibration_is_deterministic_and_seeded(tmp_path: Path) -> None:
    qrels, run, _ = _planted(40, seed=5)
    a = calibrate(qrels, run, k=8, folds=4, seed=7).to_json()
    b = calibrate(qrels, run, k=8, folds=4, seed=7).to_json()
    assert a == b
    c = json.loads(calibrate(qrels, run, k=8, folds=4, seed=8).to_json())
    assert c["cross_validation"]["seed"] == 8 and json.loads(a)["cross_validation"]["seed"] == 7
    # the CLI writes the same bytes twice
    runner = CliRunner()
    paths = []
    for name in ("p1.json", "p2.json"):
        out = tmp_path / name
        res = runner.invoke(
            cli, ["calibrate", str(EX / "qrels.txt"), str(EX / "runs" / "bm25.run"), "-k", "10", "-o", str(out)]
        )
        assert res.exit_code == 0, res.output
        paths.append(out.read_bytes())
    assert paths[0] == paths[1]


# --- the selector applies exactly what calibrate evaluated -------------------------------------------------


def _candidates(run_path: Path) -> dict[str, list[tuple[str, float]]]:
    """Every query's (doc, score) pairs from a TREC run file, shuffled (the selector must rank them)."""
    out: dict[str, list[tuple[str, float]]] = {}
    for line in run_path.read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        out.setdefault(q, []).append((d, float(s)))
    rng = random.Random(0)
    for pairs in out.values():
        rng.shuffle(pairs)
    return out


def _select_all(sel: ContextSelector, run_path: Path) -> dict[str, list[str]]:
    out = {}
    for q, pairs in _candidates(run_path).items():
        ids = [d for d, _ in pairs]
        out[q] = sel.select(ids, [s for _, s in pairs])
    return out


@pytest.mark.parametrize("run_name", ["bm25", "rrf-rerank"])
def test_selector_reproduces_calibrated_utility(tmp_path: Path, run_name: str) -> None:
    run_path = EX / "runs" / f"{run_name}.run"
    out = tmp_path / "policy.json"
    res = CliRunner().invoke(
        cli,
        [
            "calibrate",
            str(EX / "qrels.txt"),
            str(run_path),
            "-k",
            "20",
            "--distractors",
            str(EX / "distractors.txt"),
            "-o",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    policy = json.loads(out.read_text())
    sel = ContextSelector.from_json(out)
    assert (sel.k_max, sel.tau) == (policy["k_max"], policy["tau"])
    chosen = _select_all(sel, run_path)
    # utility of every (query, doc) under the same settings, from the utilities module
    qr, rn = Qrels.from_file(EX / "qrels.txt"), Run.from_file(run_path)
    data = prepare(qr, rn, keep_rows=True, extras=["grades"])
    rows = row_utilities(data, UtilityConfig.resolve(distractors=EX / "distractors.txt"), qr)
    util = dict(zip(ranked_pairs(data), rows.u.tolist()))
    per_query = [sum(util[(q, d)] for d in chosen.get(q, [])) for q in data.qids]
    assert policy["in_sample"]["objective"] == pytest.approx(np.mean(per_query), abs=1e-12)
    assert policy["in_sample"]["mean_selected"] == pytest.approx(
        np.mean([len(chosen.get(q, [])) for q in data.qids]), abs=1e-12
    )


@pytest.mark.parametrize(
    ("objective", "run_name"),
    [
        ("nDCG@10", "bm25-rerank"),
        ("AP", "tfidf"),
        ("RA-nWG@10", "bm25"),
        ("%PROC@10", "rrf"),
        ("dDCG", "bm25"),
        ("DistractorRate@5", "rrf"),
    ],
)
def test_selector_reproduces_calibrated_measure(objective: str, run_name: str) -> None:
    run_path = EX / "runs" / f"{run_name}.run"
    cal = calibrate(
        EX / "qrels.txt",
        run_path,
        objective=objective,
        k=15,
        folds=3,
        seed=1,
        utility={"distractors": EX / "distractors.txt"},
    )
    chosen = _select_all(cal.selector(), run_path)
    scores = {(q, d): s for q, pairs in _candidates(run_path).items() for d, s in pairs}
    cut = {q: {d: scores[(q, d)] for d in docs} for q, docs in chosen.items()}
    # the measure on the run physically cut to the selected passages; the pool stays the full run
    res = evaluate(
        EX / "qrels.txt",
        Run.from_dict(cut, name="cut"),
        [objective],
        rag={"pool": run_path},
        utility={"distractors": EX / "distractors.txt"},
    )
    assert cal.policy["in_sample"]["objective"] == pytest.approx(res.runs[0].mean(objective), abs=1e-12)


@st.composite
def small_collections(draw: st.DrawFn) -> tuple[dict, dict]:
    """A few queries with graded judgments (1-5) and scored runs (ties, negative scores, unjudged docs)."""
    docs = [f"d{i}" for i in range(9)]
    qrels: dict = {}
    run: dict = {}
    for qi in range(draw(st.integers(1, 4))):
        q = f"q{qi}"
        judged = draw(st.lists(st.sampled_from(docs), max_size=6, unique=True))
        qrels[q] = {d: draw(st.integers(1, 5)) for d in judged} or {docs[0]: 3}
        retrieved = draw(st.lists(st.sampled_from(docs), max_size=9, unique=True))
        if retrieved:
            run[q] = {d: draw(st.sampled_from([-1.0, 0.0, 0.25, 0.5, 1.5, 3.0])) for d in retrieved}
    if not run:
        run["q0"] = {docs[1]: 1.0}
    return qrels, run


@given(
    small_collections(),
    st.integers(1, 6),
    st.sampled_from(["nDCG", "AP", "P@3", "RR", "R@5", "Rprec", "RA-nWG@4", "Precision4+@3", "nDCG(dcg=exp-log2)@3"]),
)
def test_prefix_measure_equals_evaluate_on_cut_runs(coll: tuple[dict, dict], k: int, name: str) -> None:
    qrels, run = coll
    qr, rn = Qrels.from_dict(qrels), Run.from_dict(run)
    m = parse_measure(name)
    data = prepare(qr, rn, [m], keep_rows=True)
    got = prefix_measure(data, m, k)
    ranked = ranked_frame(rn)
    for length in range(k + 1):
        cut: dict = {}
        for q, d, s in ranked.select("query_id", "doc_id", "score").iter_rows():
            if len(cut.get(q, {})) < length:
                cut.setdefault(q, {})[d] = s
        if not cut:  # L = 0: every ranking empty; every query counts as missing from the run
            want = (
                evaluate(qrels, {"zz-none": {"x": 1.0}}, [name], rag={"pool": rn}, policies={"overlap": "any"})
                .runs[0]
                .values[m]
            )
        else:
            want = evaluate(qrels, Run.from_dict(cut), [name], rag={"pool": rn}).runs[0].values[m]
        np.testing.assert_allclose(got[:, length], want, rtol=1e-12, atol=1e-15, err_msg=f"L={length}")


# --- ContextSelector ----------------------------------------------------------------------------------


def test_selector_edge_cases() -> None:
    sel = ContextSelector(3, 0.5)
    assert sel.select([], []) == [] and sel.select_indices([], np.array([])).dtype == np.int64
    # all-equal scores: every relative score is 1; trec order among ties is doc id descending
    assert sel.select(["b", "d", "a", "c"], [0.2, 0.2, 0.2, 0.2]) == ["d", "c", "b"]
    assert ContextSelector(9, 0.95).select(["x", "y"], [-3.0, -3.0]) == ["y", "x"]
    # negative scores: (s - min) / (max - min) = (s + 4) / 6 -> 1, 0.5, 0.33, 0
    assert sel.select(["p", "q", "r", "s"], [2.0, -1.0, -2.0, -4.0]) == ["p", "q"]
    # RRF-like scores near 0.016: rel = (s - 1/124) / (1/61 - 1/124) = 1, 0.968, 0.908, 0.032, 0
    rrf = [1 / 61, 1 / 62, 1 / 64, 1 / 120, 1 / 124]
    assert ContextSelector(5, 0.5).select(list("abcde"), rrf) == ["a", "b", "c"]
    assert ContextSelector(5, 0.95).select(list("abcde"), rrf) == ["a", "b"]
    # the same scores after any increasing affine change select the same passages
    assert ContextSelector(5, 0.95).select(list("abcde"), [3 * x + 0.8 for x in rrf]) == ["a", "b"]
    # an absolute threshold of 0.5 would select nothing; K_max caps
    assert ContextSelector(2, 0.0).select(list("abcde"), rrf) == ["a", "b"]
    # one candidate is always selected (its relative score is 1)
    assert ContextSelector(1, 0.95).select(["only"], [-7.5]) == ["only"]
    # integer ids are compared as strings for ties (as doc ids in a run file): "9" > "10"
    assert ContextSelector(2, 0.0).select([10, 9], [1.0, 1.0]) == [9, 10]
    assert ContextSelector(2, 0.0).select_indices(np.array(["a", "b", "c"]), np.array([1.0, 3.0, 2.0])).tolist() == [
        1,
        2,
    ]


def test_selector_errors(tmp_path: Path) -> None:
    sel = ContextSelector(3, 0.5)
    with pytest.raises(InputError, match="2 ids but 3 scores"):
        sel.select(["a", "b"], [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match=r"candidate 1 \(id 'b'\) has score nan"):
        sel.select(["a", "b", "c"], [1.0, float("nan"), 0.5])
    with pytest.raises(InputError, match="inf"):
        sel.select(["a"], [float("inf")])
    with pytest.raises(InputError, match="numbers"):
        sel.select(["a"], ["high"])
    # a passage listed twice (e.g. by two retrievers) would take two prompt slots
    with pytest.raises(InputError, match=r"candidate id 'b' is given twice \(positions 1 and 3\)"):
        sel.select(["a", "b", "c", "b"], [0.9, 0.8, 0.1, 0.75])  # rel 1, .875, 0, .8125
    with pytest.raises(InputError, match=r"candidate id \['x'\] is given twice \(positions 0 and 2\)"):
        sel.select_indices([["x"], ["y"], ["x"]], [1.0, 1.0, 1.0])  # unhashable ids: compared as strings
    # a repeat below the cut selects nothing twice: the selection stands (only the selected are compared)
    assert sel.select(["a", "b", "c", "a"], [0.9, 0.8, 0.7, 0.1]) == ["a", "b", "c"]
    assert ContextSelector(3, 0.9).select(["a", "b", "a"], [0.9, 0.5, 0.4]) == ["a"]
    with pytest.raises(InputError, match="one-dimensional"):
        sel.select(["a"], [[1.0]])
    with pytest.raises(ConfigError, match="k_max"):
        ContextSelector(0, 0.5)
    with pytest.raises(ConfigError, match="tau"):
        ContextSelector(3, 1.5)
    with pytest.raises(ConfigError, match="policy_format"):
        ContextSelector.from_dict({"k_max": 3, "tau": 0.5})
    with pytest.raises(ConfigError, match="'tau'"):
        ContextSelector.from_dict({"policy_format": 2, "k_max": 3})
    # a policy of the earlier s / s_max rule: its tau means something else now
    with pytest.raises(
        ConfigError, match=r"policy_format 1 was written by an earlier ctxeval whose relative score was s / s_max"
    ):
        ContextSelector.from_dict({"policy_format": 1, "k_max": 3, "tau": 0.5})
    with pytest.raises(ConfigError, match="JSON object"):
        ContextSelector.from_dict([1, 2])  # type: ignore[arg-type]
    bad = tmp_path / "bad.json"
    bad.write_text('{"policy_format": 1,\n "k_max": 3,\n "tau": }\n')
    with pytest.raises(FormatError, match=r"bad.json:3: not valid JSON") as exc:
        ContextSelector.from_json(bad)
    assert exc.value.line == 3
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"policy_format": 2, "k_max": true, "tau": 0.5}')
    with pytest.raises(ConfigError, match=r"wrong\.json: policy: k_max"):
        ContextSelector.from_json(wrong)
    with pytest.raises(
        InputError, match=r"none\.json: no such file"
    ):  # in ctxeval's error hierarchy, like every reader
        ContextSelector.from_json(tmp_path / "none.json")


def test_selector_round_trip() -> None:
    sel = ContextSelector.from_dict({"policy_format": 2, "k_max": 4, "tau": 0.35, "objective": "utility"})
    again = ContextSelector.from_dict(sel.to_dict())
    assert again == sel and again.policy["objective"] == "utility" and repr(sel) == "ContextSelector(k_max=4, tau=0.35)"


@given(
    st.lists(
        st.tuples(
            st.text("abcxyz019", min_size=1, max_size=3), st.sampled_from([-2.0, 0.0, 0.1, 0.1000000001, 0.3, 1.0, 7.0])
        ),
        max_size=12,
        unique_by=lambda p: p[0],
    ),
    st.integers(1, 14),
    st.sampled_from(TAUS),
    st.randoms(use_true_random=False),
)
def test_selector_matches_engine_ranking(pairs: list, k_max: int, tau: float, rnd: random.Random) -> None:
    """The selector's order is the engine's trec order (float32 score desc, doc id desc), whatever the
    input order, and it selects the leading passages with rel >= tau, at most k_max."""
    sel = ContextSelector(k_max, tau)
    shuffled = pairs[:]
    rnd.shuffle(shuffled)
    got = sel.select([d for d, _ in shuffled], [s for _, s in shuffled])
    assume(pairs)  # the empty list: ContextSelector's doctest
    ranked = ranked_frame(Run.from_dict({"q": dict(pairs)}))
    order = ranked["doc_id"].to_list()
    scores = np.array(ranked["score"].to_list())
    rel = relative_scores(np.array([0, len(order)]), scores)
    want = []
    for d, r in zip(order, rel.tolist()):
        if r < tau or len(want) == k_max:
            break
        want.append(d)
    assert got == want
    # already-ranked input gives the same answer
    assert sel.select(order, scores.tolist()) == want


def test_selector_does_not_sort_ranked_input(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxeval._selector as mod

    def boom(*args: object) -> None:
        raise AssertionError("sorted an already ranked list")

    monkeypatch.setattr(mod, "_top", boom)
    sel = ContextSelector(3, 0.2)
    assert sel.select(["c", "b", "a", "z"], [3.0, 2.0, 2.0, 1.0]) == ["c", "b", "a"]  # tie b, a in id-desc order
    with pytest.raises(AssertionError):
        sel.select(["c", "a", "b"], [3.0, 2.0, 2.0])  # tie out of id order: must rank


def test_float32_tie_stops_at_first_passage_below_tau() -> None:
    """Scores equal as float32 but not as float64 are ordered by doc id, so a later passage can have a
    hair higher relative score; selector and calibrate both stop at the first one below tau."""
    v = float(np.float32(0.3))
    # z and a tie in float32; z > a by id; b (score 0) makes the relative score s / (2v)
    ids, scores = ["t", "z", "a", "b"], [2 * v, v - 1e-9, v, 0.0]
    assert np.float32(scores[1]) == np.float32(scores[2])
    rel = relative_scores(np.array([0, 4]), np.array(scores))
    assert rel[1] < 0.5 <= rel[2]
    assert ContextSelector(3, 0.5).select(ids, scores) == ["t"]
    assert ContextSelector(3, 0.45).select(ids, scores) == ["t", "z", "a"]
    data = prepare(
        Qrels.from_dict({"q": {"t": 5, "a": 5}}), Run.from_dict({"q": dict(zip(ids, scores))}), keep_rows=True
    )
    assert data.rows.doc.to_list() == ["t", "z", "a", "b"]
    lead = lead_lengths(data.r_off, relative_scores(data.r_off, data.r_score), 3, [0.45, 0.5])
    assert lead.tolist() == [[3, 1]]


def test_selector_imports_numpy_only() -> None:
    code = (
        "import sys\n"
        "from ctxeval import ContextSelector\n"
        "sel = ContextSelector.from_dict({'policy_format': 2, 'k_max': 2, 'tau': 0.3})\n"
        "assert sel.select(['a', 'b', 'c'], [0.3, 0.9, 0.5]) == ['b', 'c']  # rel 0, 1, 1/3\n"
        "heavy = ('polars', 'click', 'rich', 'pandas', 'pyarrow')\n"
        "machinery = ('ctxeval._engine', 'ctxeval._evaluate', 'ctxeval._data', 'ctxeval._io', 'ctxeval._measures',\n"
        "             'ctxeval._utility', 'ctxeval._calibrate', 'ctxeval._pool', 'ctxeval._cli')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in machinery)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"the selector imported: {out.stdout.strip()}"


# --- CLI and settings -----------------------------------------------------------------------------------


def test_cli_calibrate(tmp_path: Path) -> None:
    runner = CliRunner()
    args = [
        "calibrate",
        str(EX / "qrels.txt"),
        str(EX / "runs" / "bm25.run"),
        "-k",
        "12",
        "--folds",
        "3",
        "--seed",
        "2",
    ]
    res = runner.invoke(cli, [*args, "--distractor-rules", "strict", "--penalty", "-0.25"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["policy_format"] == 2 and doc["grid"] == {"k_max": [1, 12], "tau": list(TAUS)}
    assert doc["utility"]["rules"]["tau"] == 0.5 and doc["utility"]["rules"]["penalty"] == -0.25
    assert doc["cross_validation"]["folds"] == 3 and len(doc["cross_validation"]["per_fold"]) == 3
    assert sum(f["n_queries"] for f in doc["cross_validation"]["per_fold"]) == doc["in_sample"]["n_queries"] == 50
    assert 1 <= doc["k_max"] <= 12 and doc["tau"] in TAUS
    out = tmp_path / "p.json"
    res = runner.invoke(cli, [*args, "--objective", "nDCG@10", "-o", str(out)])
    # nDCG@10 of the selection is best with the most passages: the policy has no held-out gain
    assert res.exit_code == 1 and "policy not written" in res.stderr and not out.exists()
    assert "note: the policy does not beat the best fixed K" in res.stdout
    res = runner.invoke(cli, [*args, "--objective", "nDCG@10", "-o", str(out), "--force"])
    assert res.exit_code == 0 and "policy written to" in res.output and re.search(r"k_max=\d+ tau=", res.output)
    doc = json.loads(out.read_text())
    assert doc["objective"] == "nDCG@10" and doc["utility"] is None  # nDCG reads no utilities
    res = runner.invoke(cli, [*args, "--objective", "DistractorHarm@5", "--force"])
    assert res.exit_code == 0 and json.loads(res.output)["objective_direction"] == "minimise"
    res = runner.invoke(cli, [*args, "--objective", "nope"])
    assert res.exit_code == 2 and "objective must be 'utility' or a measure name" in res.output
    res = runner.invoke(cli, [*args, "--objective", "gm_map"])
    assert res.exit_code == 2 and "optimises a mean over queries; gm_map aggregates by its gmean" in res.output


def test_calibrate_rejects_bad_settings() -> None:
    qrels, run, _ = _planted(6)
    with pytest.raises(ConfigError, match="at least 7 queries"):
        calibrate(qrels, run, folds=7)
    with pytest.raises(ConfigError, match="largest K_max"):
        calibrate(qrels, run, k=0)
    with pytest.raises(MeasureError):
        calibrate(qrels, run, objective="nDCG@0")
    with pytest.raises(QueryMismatchError, match="shares no query with the qrels"):
        calibrate({"x": {"a": 5}}, run, policies={"missing": "ignore"})
    with pytest.raises(ConfigError, match="share no query; nothing to calibrate"):
        calibrate({"x": {"a": 5}}, run, policies={"missing": "ignore", "overlap": "any"})


# --- the distraction guide-----------------------------------------------------------------------------------------


def test_the_distraction_guide_s_calibrate_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The distraction guide's calibrate command runs as written (the bundled example copied as
    ``example/``) and its Python example is a doctest against the policy it writes."""
    import doctest
    import shlex

    text = (ROOT / "docs" / "guides" / "distraction.md").read_text(encoding="utf-8")
    section = text.split("## Runtime policy", 1)[1].split("\n## ", 1)[0]
    command = re.search(r"```bash\n(ctxeval calibrate .*?)\n```", section, re.S)
    assert command, "docs/guides/distraction.md: no ctxeval calibrate command in the Runtime policy section"
    argv = shlex.split(command.group(1).replace("\\\n", " "))
    assert argv[0] == "ctxeval"
    out = tmp_path / "policy.json"
    example = example_path("qrels.txt").parent
    argv = [str(example / a.removeprefix("example/")) if a.startswith("example/") else a for a in argv[1:]]
    argv = [str(out) if a == "policy.json" else a for a in argv]
    res = CliRunner().invoke(cli, argv)
    assert res.exit_code == 0, res.output
    block = re.search(r"```python\n(.*?)```", section, re.S)
    assert block
    monkeypatch.chdir(tmp_path)
    test = doctest.DocTestParser().get_doctest(block.group(1), {}, "guide", "docs/guides/distraction.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert test.examples, "docs/guides/distraction.md: the Python example has no doctest lines"


def test_every_public_name_resolves() -> None:
    """The package namespace is lazy (so the selector imports without polars): every name of
    ``__all__`` must still resolve, and ``dir()`` lists it."""
    code = (
        "import ctxeval\n"
        "missing = [n for n in ctxeval.__all__ if getattr(ctxeval, n, None) is None]\n"
        "assert not missing, missing\n"
        "assert set(ctxeval.__all__) <= set(dir(ctxeval))\n"
        "from ctxeval import *\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    import ctxeval

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ctxeval.nope  # noqa: B018


def test_selector_reproduces_calibrated_measure_with_groups_and_pool_depth() -> None:
    """Doc groups (RA-nWG's novelty discount) and a pool depth pass through the truncation."""
    run_path = EX / "runs" / "bm25.run"
    docs = {line.split()[2] for line in run_path.read_text().splitlines()}
    groups = {d: d.rsplit("-", 1)[0] + str(int(d.rsplit("-", 1)[1]) % 3) for d in docs}  # topic x residue
    objective = "RA-nWG(novelty=0.5)@8"
    cal = calibrate(
        EX / "qrels.txt", run_path, objective=objective, k=12, folds=3, rag={"groups": groups, "pool_depth": 30}
    )
    chosen = _select_all(cal.selector(), run_path)
    scores = {(q, d): s for q, pairs in _candidates(run_path).items() for d, s in pairs}
    cut = Run.from_dict({q: {d: scores[(q, d)] for d in ds} for q, ds in chosen.items()}, name="cut")
    res = evaluate(EX / "qrels.txt", cut, [objective], rag={"pool": run_path, "pool_depth": 30, "groups": groups})
    assert cal.policy["in_sample"]["objective"] == pytest.approx(res.runs[0].mean(objective), abs=1e-12)


@given(st.integers(1, 6), st.integers(0, 40), st.integers(0, 5), st.randoms(use_true_random=False))
def test_selector_sorts_at_most_k_max_candidates_even_when_all_tie(
    k_max: int, n_tied: int, n_top: int, rnd: random.Random
) -> None:
    """Linear in the number of candidates: however many candidates tie at the k_max-th score, only
    k_max of them are sorted, and the choice among the tied ones is the engine's (doc id descending)."""
    import ctxeval._selector as mod

    ids = [f"t{i:03d}" for i in range(n_tied)] + [f"h{i}" for i in range(n_top)]
    scores = [1.0] * n_tied + [2.0 + i for i in range(n_top)]
    pairs = list(zip(ids, scores))
    rnd.shuffle(pairs)
    sizes: list[int] = []
    real = np.lexsort

    def spy(keys: object, *a: object, **kw: object) -> np.ndarray:
        sizes.append(len(keys[0]))  # type: ignore[index]
        return real(keys, *a, **kw)  # type: ignore[arg-type]

    original = mod.np.lexsort
    mod.np.lexsort = spy  # type: ignore[assignment]
    try:
        got = ContextSelector(k_max, 0.0).select([d for d, _ in pairs], [s for _, s in pairs])
    finally:
        mod.np.lexsort = original  # type: ignore[assignment]
    want = [d for d, _ in sorted(pairs, key=lambda p: (p[1], p[0]), reverse=True)][:k_max]
    assert got == want
    assert all(n <= k_max for n in sizes)


def test_selector_from_json_errors_name_the_file(tmp_path: Path) -> None:
    from ctxeval import CtxevalError

    missing = tmp_path / "nope.json"
    with pytest.raises(InputError, match=r"nope.json: no such file \(policy written by 'ctxeval calibrate -o'\)"):
        ContextSelector.from_json(missing)
    with pytest.raises(InputError, match="is a directory, expected a policy JSON file"):
        ContextSelector.from_json(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'\xff\xfe{"k_max": 1}')
    with pytest.raises(CtxevalError, match=r"bad.json: not UTF-8 text"):
        ContextSelector.from_json(bad)


def test_calibrate_is_public_api() -> None:
    """The issue: everything is available from the CLI, the JSON output and the Python API."""
    import ctxeval
    import ctxeval._calibrate as mod

    assert "calibrate" in ctxeval.__all__ and "Calibration" in ctxeval.__all__
    assert ctxeval.calibrate is mod.calibrate and ctxeval.Calibration is mod.Calibration
    cal = ctxeval.calibrate(
        {"q1": {"a": 5}, "q2": {"c": 5}}, {"q1": {"a": 0.9, "x": 0.2}, "q2": {"c": 0.8, "y": 0.7}}, k=2, folds=2
    )
    assert isinstance(cal, ctxeval.Calibration) and ctxeval.ContextSelector.from_dict(cal.policy) == cal.selector()
