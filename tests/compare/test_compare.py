"""compare(), Report and the compare / curve commands: pairing, tests against scipy, strata, curves,
renderings and the JSON contract (contract C)."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

from ctxeval import ConfigError, CtxevalError, FormatError, Report, Strata, compare, evaluate, metric_at_k
from ctxeval._cli import cli
from ctxeval._compare.progress import show_progress
from ctxeval._demo import example_path

# 1-5 utility grades. q6 holds only grades 1-2, so RA-nWG is undefined (NA) there; q7 has 7 docs >= 3.
QRELS = {
    "q1": {"a": 5, "b": 3, "c": 1},
    "q2": {"d": 4, "e": 2},
    "q3": {"f": 5, "g": 4},
    "q4": {"h": 3, "i": 5},
    "q5": {"j": 5},
    "q6": {"k": 1, "l": 2},
    "q7": {f"r{i}": 4 for i in range(7)},
}
BASE = {
    "q1": {"c": 3, "a": 2, "b": 1},
    "q2": {"e": 2, "d": 1},
    "q3": {"x": 3, "f": 2, "g": 1},
    "q4": {"h": 2, "i": 1},
    "q5": {"j": 1},
    "q6": {"k": 2, "l": 1},
    "q7": {"r0": 3, "y": 2, "r1": 1},
}
NEW = {  # no q5: with missing="ignore" q5 is unpaired
    "q1": {"a": 3, "b": 2, "c": 1},
    "q2": {"d": 2, "e": 1},
    "q3": {"f": 3, "g": 2, "x": 1},
    "q4": {"i": 2, "h": 1},
    "q6": {"l": 2, "k": 1},
    "q7": {"r0": 3, "r1": 2, "r2": 1},
}
FAST_STATS = {"permutations": 500, "resamples": 500}
FAST = {"sections": {"curves_k": 0}, "stats": FAST_STATS}
_GROUPS = {
    "stats": ("test", "alpha", "correction", "permutations", "resamples", "seed", "ci", "confidence"),
    "policies": ("ties", "missing", "duplicates"),
    "rag": ("grade_map", "pool", "pool_depth", "allow_outside_pool", "groups"),
    "sections": ("curves_k", "curve_measures", "pr_rel", "proc_k", "distraction_k"),
}
_STRATA = {"strata": "by", "query_texts": "queries", "num_rel_level": "num_rel_level", "min_stratum": "min_size"}


def _rep(measures, runs=None, **kw):
    """compare() on the test data with fast statistics; settings may be given flat (test=, missing=,
    query_texts=...)."""
    opts: dict = {"sections": {"curves_k": 0}, "stats": dict(FAST_STATS)}
    strata = {_STRATA[k]: kw.pop(k) for k in list(kw) if k in _STRATA}
    if strata:
        opts["strata"] = Strata(**strata)
    for key, value in kw.items():
        group = next((g for g, keys in _GROUPS.items() if key in keys), None)
        if group is None:
            opts[key] = value
        else:
            opts.setdefault(group, {})[key] = value
    return compare(QRELS, runs or [BASE, NEW], measures, **opts)


def _per_query(run, measure, **policies):
    res = evaluate(QRELS, run, [measure], policies=policies)
    return res.runs[0].per_query(measure)


def _paired(m, **kw):
    b, n = _per_query(BASE, m, **kw), _per_query(NEW, m, **kw)
    qs = [q for q in sorted(set(b) & set(n)) if not (math.isnan(b[q]) or math.isnan(n[q]))]
    return qs, np.array([n[q] for q in qs]), np.array([b[q] for q in qs])


# --------------------------------------------------------------------------------------------------
# pairing, NA and the figures of a comparison
# --------------------------------------------------------------------------------------------------


def test_pairing_drops_na_pairwise_and_counts_unpaired_queries():
    rep = _rep(["RA-nWG@2", "nDCG@2"], missing="ignore")
    ra = rep.comparison("run#2", "RA-nWG@2")
    nd = rep.comparison("run#2", "nDCG@2")
    # both runs on q1-q4, q6, q7; q5 only in the baseline; RA-nWG undefined on q6 for both
    assert (ra.n_queries, ra.n_dropped) == (5, 1)
    assert (nd.n_queries, nd.n_dropped) == (6, 0)
    assert rep.settings["unpaired_queries"] == {"run#2": 1}
    assert any("only one of" in n for n in rep.notes)
    qs, new, base = _paired("RA-nWG@2", missing="ignore")
    assert qs == ["q1", "q2", "q3", "q4", "q7"]
    assert ra.mean == pytest.approx(new.mean()) and ra.baseline_mean == pytest.approx(base.mean())
    assert ra.diff == pytest.approx(new.mean() - base.mean())
    # the baseline's own aggregate is over all its queries, as evaluate reports it
    d = rep.to_dict()
    assert d["runs"][0]["aggregate"]["RA-nWG@2"] == pytest.approx(
        evaluate(QRELS, BASE, ["RA-nWG@2"]).runs[0].mean("RA-nWG@2")
    )


@pytest.mark.parametrize(("test", "oracle"), [("t", "ttest"), ("wilcoxon", "wilcoxon")])
def test_p_values_match_scipy_on_the_paired_values(test, oracle):
    rng = np.random.default_rng(4)
    qrels = {f"q{i:02d}": {f"d{j}": int(rng.integers(0, 3)) for j in range(12)} for i in range(40)}
    runs = [{q: {f"d{j}": float(rng.random()) for j in range(12)} for q in qrels} for _ in range(3)]
    rep = compare(
        qrels,
        runs,
        ["nDCG@5", "AP"],
        sections={"curves_k": 0},
        stats={**FAST_STATS, "test": test, "correction": "holm"},
    )
    raw = []
    for c in rep.comparisons:
        i = rep.run_names.index(c.run)
        a = evaluate(qrels, runs[i], [str(c.measure)]).runs[0].values[c.measure]
        b = evaluate(qrels, runs[0], [str(c.measure)]).runs[0].values[c.measure]
        ref = stats.ttest_rel(a, b).pvalue if oracle == "ttest" else stats.wilcoxon(a, b).pvalue
        assert c.p_value == pytest.approx(ref, rel=1e-9)
        raw.append(ref)
    # Holm by hand over the 4 comparisons
    order = np.argsort(raw)
    m = len(raw)
    running = 0.0
    expected = [0.0] * m
    for rank, idx in enumerate(order):
        running = max(running, min(1.0, (m - rank) * raw[idx]))
        expected[idx] = running
    assert [c.p_adjusted for c in rep.comparisons] == pytest.approx(expected, rel=1e-9)
    assert [c.significant for c in rep.comparisons] == [e < 0.05 for e in expected]


def test_win_tie_loss_and_lower_is_better():
    rep = _rep(["nDCG@2", "Harm@2"])
    for name in ("nDCG@2", "Harm@2"):
        qs, new, base = _paired(name)
        c = rep.comparison("run#2", name)
        better = new > base if name == "nDCG@2" else new < base
        worse = new < base if name == "nDCG@2" else new > base
        assert (c.wins, c.ties, c.losses) == (int(better.sum()), int((new == base).sum()), int(worse.sum()))
        assert c.wins + c.ties + c.losses == c.n_queries == len(qs)


def test_randomization_p_matches_exact_enumeration_on_the_example_pairs():
    rep = compare(
        QRELS, [BASE, NEW], ["nDCG@3"], sections={"curves_k": 0}, stats={"permutations": 50_000, "resamples": 200}
    )
    _, new, base = _paired("nDCG@3")
    d = new - base
    obs = abs(d.sum())
    flips = ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1) * -2 + 1
    exact = float(np.mean(np.abs(flips @ d) >= obs - 1e-12))
    p = rep.comparison("run#2", "nDCG@3").p_value
    assert abs(p - exact) < 5 * math.sqrt(exact * (1 - exact) / 50_000) + 1e-4


def test_cis_match_scipy_bootstrap_and_geometric_and_sum_summaries():
    rep = compare(
        QRELS,
        [BASE, NEW],
        ["nDCG@3", "gm_map", "NumRelRet"],
        sections={"curves_k": 0},
        stats={"resamples": 3000, "permutations": 100, "seed": 3},
    )
    base_vals = evaluate(QRELS, BASE, ["nDCG@3"]).runs[0].values
    x = next(iter(base_vals.values()))
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=3000, method="percentile", rng=np.random.default_rng(3)
    ).confidence_interval
    lo, hi = rep.overall.runs[0].ci[rep.measures[0]]
    assert (lo, hi) == pytest.approx((ref.low, ref.high), rel=1e-9)
    # the difference CI is the percentile interval of mean(new*) - mean(base*) over the same resamples
    qs, new, base = _paired("nDCG@3")
    idx = np.random.default_rng(3).integers(0, len(qs), (3000, len(qs)))
    diffs = new[idx].mean(axis=1) - base[idx].mean(axis=1)
    c = rep.comparison("run#2", "nDCG@3")
    assert c.ci == pytest.approx(tuple(np.quantile(diffs, [0.025, 0.975])), rel=1e-9)
    # geometric mean: resampled on the log scale, the estimate inside its interval
    gm = rep.comparison("run#2", "gm_map")
    ev_new = evaluate(QRELS, NEW, ["gm_map"]).runs[0]
    assert rep.overall.runs[1].aggregate[rep.measures[1]] == pytest.approx(ev_new.mean("gm_map"))
    lo, hi = rep.overall.runs[1].ci[rep.measures[1]]
    assert lo <= ev_new.mean("gm_map") <= hi
    qs, new, base = _paired("gm_map")
    lr, lb = np.log(np.maximum(new, 1e-5)), np.log(np.maximum(base, 1e-5))
    assert gm.diff == pytest.approx(math.exp(lr.mean()) - math.exp(lb.mean()))
    # a count: the sum over queries, and its interval around it
    s = rep.overall.runs[0]
    total = sum(evaluate(QRELS, BASE, ["NumRelRet"]).runs[0].values[rep.measures[2]])
    assert s.aggregate[rep.measures[2]] == total and s.ci[rep.measures[2]][0] <= total <= s.ci[rep.measures[2]][1]


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_difference_ci_matches_scipy_paired_bootstrap(method):
    rng = np.random.default_rng(99)
    qrels = {f"q{i:02d}": {f"d{j}": int(rng.integers(0, 3)) for j in range(10)} for i in range(35)}
    runs = [{q: {f"d{j}": float(rng.random()) for j in range(10)} for q in qrels} for _ in range(2)]
    rep = compare(
        qrels,
        runs,
        ["nDCG@5"],
        sections={"curves_k": 0},
        stats={"ci": method, "resamples": 3000, "permutations": 100, "seed": 7},
    )
    a, b = (evaluate(qrels, r, ["nDCG@5"]).runs[0].values[rep.measures[0]] for r in runs)
    ref = stats.bootstrap(
        (b, a),
        lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
        paired=True,
        n_resamples=3000,
        method="BCa" if method == "bca" else "percentile",
        rng=np.random.default_rng(7),
    ).confidence_interval
    assert rep.comparisons[0].ci == pytest.approx((ref.low, ref.high), rel=1e-9)


@pytest.mark.parametrize("test", ["randomization", "t", "wilcoxon", "bootstrap"])
def test_a_run_identical_to_the_baseline_is_never_different(test):
    rep = _rep(["nDCG@3", "RR", "Harm@2"], runs=[BASE, dict(BASE)], test=test)
    for c in rep.comparisons:
        assert c.diff == 0 and c.ci == (0.0, 0.0) and c.p_value == 1.0 and not c.significant
        assert (c.wins, c.ties, c.losses) == (0, c.n_queries, 0)


def test_one_and_two_queries_against_scipy_and_exact_enumeration():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    base = {"q1": {"x": 2, "a": 1}, "q2": {"b": 1}}
    new = {"q1": {"a": 1}, "q2": {"y": 3, "z": 2, "b": 1}}
    one = ({"q1": qrels["q1"]}, [{"q1": base["q1"]}, {"q1": new["q1"]}])
    # one query, d = 1 - 1/2: both sign flips reach |d|, p = 1 exactly; the t-test and the bootstrap
    # test need two queries (NA, not significant); scipy's Wilcoxon gives 1 for one difference
    for test, expected in (
        ("randomization", 1.0),
        ("t", None),
        ("wilcoxon", stats.wilcoxon([0.5]).pvalue),
        ("bootstrap", None),
    ):
        c = compare(*one, ["RR"], sections={"curves_k": 0}, stats={**FAST_STATS, "test": test}).comparisons[0]
        assert (c.n_queries, c.diff) == (1, 0.5)
        assert (
            (math.isnan(c.p_value) and math.isnan(c.p_adjusted))
            if expected is None
            else c.p_value == pytest.approx(expected)
        )
        assert not c.significant
    # two queries, d = (+1/2, -2/3): flips give |±1/2 ± 2/3| >= 1/6 always, p = 1; t and Wilcoxon as scipy
    a, b = np.array([1.0, 1 / 3]), np.array([0.5, 1.0])
    for test, ref in (
        ("randomization", 1.0),
        ("t", stats.ttest_rel(a, b).pvalue),
        ("wilcoxon", stats.wilcoxon(a, b).pvalue),
    ):
        c = compare(
            qrels, [base, new], ["RR"], sections={"curves_k": 0}, stats={**FAST_STATS, "test": test}
        ).comparisons[0]
        assert c.p_value == pytest.approx(ref, rel=1e-9) and (c.wins, c.ties, c.losses) == (1, 0, 1)


def test_wilcoxon_with_zeros_and_ties_matches_scipy_in_compare():
    # RR differences over 30 queries: many zeros (equal ranks) and tied magnitudes
    rng = np.random.default_rng(12)
    qrels = {f"q{i:02d}": {"a": 1} for i in range(30)}
    runs = [
        {q: {"a": 1.0, **{f"x{j}": 2.0 + j for j in range(int(rng.integers(0, 3)))}} for q in qrels} for _ in range(2)
    ]
    rep = compare(qrels, runs, ["RR"], sections={"curves_k": 0}, stats={**FAST_STATS, "test": "wilcoxon"})
    a, b = (evaluate(qrels, r, ["RR"]).runs[0].values[rep.measures[0]] for r in runs)
    assert np.any(a == b) and len(set(np.abs(a - b)[a != b])) < np.count_nonzero(a != b)  # zeros and ties
    assert rep.comparisons[0].p_value == pytest.approx(stats.wilcoxon(b, a).pvalue, rel=1e-10)


def test_t_test_on_geometric_mean_uses_log_differences():
    rep = _rep(["gm_map"], test="t")
    _, new, base = _paired("gm_map")
    ref = stats.ttest_rel(np.log(np.maximum(new, 1e-5)), np.log(np.maximum(base, 1e-5))).pvalue
    assert rep.comparisons[0].p_value == pytest.approx(ref, rel=1e-9)


def test_bootstrap_test_and_bca_run_end_to_end():
    rep = _rep(["nDCG@3", "RR"], test="bootstrap", ci="bca")
    for c in rep.comparisons:
        assert 0 < c.p_value <= 1 and c.p_value * 501 == pytest.approx(round(c.p_value * 501))
        assert c.ci is not None and c.ci[0] <= c.diff + 1e-12 and c.diff - 1e-12 <= c.ci[1]


def test_baseline_by_name_and_errors():
    rep = _rep(["nDCG@3"], baseline="run#2")
    assert rep.baseline == "run#2" and [c.run for c in rep.comparisons] == ["run"]
    with pytest.raises(ConfigError, match="baseline 'nope' is not one of the runs"):
        _rep(["nDCG@3"], baseline="nope")
    with pytest.raises(ConfigError, match="test must be one of"):
        _rep(["nDCG@3"], test="z")
    with pytest.raises(ConfigError, match="alpha"):
        _rep(["nDCG@3"], alpha=1.5)
    single = compare(QRELS, BASE, ["nDCG@3"], **FAST)
    assert single.comparisons == [] and "nDCG@3" in single.to_table()


# --------------------------------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------------------------------


def test_same_seed_same_bytes_and_another_seed_differs():
    a = _rep(["nDCG@3", "RR"], seed=11).to_json()
    b = _rep(["nDCG@3", "RR"], seed=11).to_json()
    c = _rep(["nDCG@3", "RR"], seed=12).to_json()
    assert a == b and a != c


def test_output_does_not_depend_on_the_number_of_threads(tmp_path):
    qrels = example_path("qrels.txt")
    runs = [str(example_path(f"runs/{n}")) for n in ("bm25.run", "rrf.run", "bm25-rerank.run")]
    cmd = [
        sys.executable,
        "-m",
        "ctxeval",
        "compare",
        str(qrels),
        *runs,
        "-m",
        "nDCG@10",
        "-m",
        "RA-nWG@5",
        "--permutations",
        "3000",
        "--resamples",
        "3000",
        "--strata",
        str(example_path("categories.tsv")),
        "--format",
        "json",
        "--quiet",
    ]
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        outs.append(subprocess.run(cmd, env=env, capture_output=True, check=True).stdout)
    assert outs[0] == outs[1] and len(outs[0]) > 1000


_SYNTHETIC_COMPARE = """
import hashlib, sys, numpy as np
from ctxeval import compare
rng = np.random.default_rng(2)
qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(8)} for i in range(2000)}
runs = [{q: {f"d{j}": float(rng.random()) for j in range(8)} for q in qrels} for _ in range(3)]
for ci in ("percentile", "bca"):
    rep = compare(qrels, runs, ["nDCG@5", "AP", "NumRelRet"], sections={"curves_k": 0}, stats={"permutations": 1000, "resamples": 1000, "ci": ci, "test": "bootstrap"})
    print(hashlib.sha1(rep.to_json().encode()).hexdigest())
"""


def test_many_queries_same_bytes_whatever_the_number_of_threads():
    # with 2000 queries the BLAS products are split over threads: the CIs must still be the same bits
    outs = set()
    for threads in ("1", "2"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        outs.add(
            subprocess.run(
                [sys.executable, "-c", _SYNTHETIC_COMPARE], env=env, capture_output=True, text=True, check=True
            ).stdout
        )
    assert len(outs) == 1, outs


# --------------------------------------------------------------------------------------------------
# strata
# --------------------------------------------------------------------------------------------------


def test_strata_from_file_and_builtins(tmp_path):
    f = tmp_path / "strata.tsv"
    f.write_text("# category file\nq1\tlong tail\nq2 head\nq1 head\nq99 head\n\n", encoding="utf-8")
    texts = {
        "q1": "a b",
        "q2": "one two three four five",
        "q3": "x y z w v u t s",
        "q4": " ".join("w" * 1 for _ in range(12)),
    }
    rep = _rep(["nDCG@3"], strata=[str(f), "num_rel"], query_texts=texts, num_rel_level=3, min_stratum=2)
    st = rep.strata
    assert list(st) == [
        "long tail",
        "head",
        "num_rel:0",
        "num_rel:1",
        "num_rel:2-5",
        "num_rel:>5",
        "query_length:1-3",
        "query_length:4-6",
        "query_length:7-10",
        "query_length:>10",
    ]
    # grade >= 3: q6 none; q2, q5 one; q1, q3, q4 two; q7 seven
    assert [st[k].block.n_queries for k in ("num_rel:0", "num_rel:1", "num_rel:2-5", "num_rel:>5")] == [1, 2, 3, 1]
    assert st["head"].block.n_queries == 2 and not st["head"].small and st["long tail"].small
    assert st["query_length:>10"].block.n_queries == 1
    file_info = rep.settings["strata"][0]
    assert file_info["unknown_queries"] == 1 and file_info["unassigned_queries"] == 5
    assert rep.settings["strata"][2]["queries_without_text"] == 3
    # a stratum's figures are the plain figures over its queries
    vals = _per_query(NEW, "nDCG@3")
    blk = st["num_rel:2-5"].block
    assert blk.runs[1].aggregate[rep.measures[0]] == pytest.approx(np.mean([vals[q] for q in ("q1", "q3", "q4")]))
    c = blk.comparisons[0]
    assert c.n_queries == 3
    d = rep.to_dict()["strata"]["head"]
    assert d["source"] == "file" and d["n_queries"] == 2 and d["small"] is False


def test_num_rel_strata_come_with_every_stratified_report(tmp_path):
    # issue 5: "--strata FILE ... reports every measure per stratum ...; built-in strata by number of
    # relevant docs (0, 1, 2-5, > 5) and, when queries' texts are given, by query length": only query
    # length is conditional, so the num_rel strata join every stratified report (a strata file or the
    # query texts), and a report without strata has none
    f = tmp_path / "strata.tsv"
    f.write_text("q1 head\nq2 head\nq3 tail\n", encoding="utf-8")
    # relevant = grade >= 1: q5 one; q2, q3, q4, q6 two; q1 three; q7 seven
    expected_num_rel = {"num_rel:1": ["q5"], "num_rel:2-5": ["q1", "q2", "q3", "q4", "q6"], "num_rel:>5": ["q7"]}
    rep = _rep(["nDCG@3"], strata=str(f))
    assert list(rep.strata) == ["head", "tail", *expected_num_rel]
    for name, qs in expected_num_rel.items():
        assert rep.strata[name].source == "num_rel" and rep.strata[name].block.n_queries == len(qs)
    assert [s["kind"] for s in rep.settings["strata"]] == ["file", "num_rel"]
    texts = dict.fromkeys(QRELS, "a b c")
    rep = _rep(["nDCG@3"], query_texts=texts)
    assert list(rep.strata) == [*expected_num_rel, "query_length:1-3"]
    # asked for by name: once, where asked
    rep = _rep(["nDCG@3"], strata=["num_rel", str(f)])
    assert list(rep.strata) == [*expected_num_rel, "head", "tail"]
    assert _rep(["nDCG@3"]).strata is None and "strata" not in _rep(["nDCG@3"]).to_dict()
    # the command line too
    qrels, runs = str(example_path("qrels.txt")), [str(example_path(f"runs/{n}")) for n in ("bm25.run", "rrf.run")]
    r = CliRunner().invoke(
        cli,
        [
            "compare",
            qrels,
            *runs,
            "-m",
            "RR",
            "--strata",
            str(example_path("categories.tsv")),
            "--permutations",
            "100",
            "--resamples",
            "100",
            "--curve-k",
            "0",
            "--format",
            "json",
        ],
    )
    assert r.exit_code == 0, r.output
    kinds = {st["source"] for st in json.loads(r.output)["strata"].values()}
    assert kinds == {"file", "num_rel"}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("q1 head\nq2\n", r"strata\.txt:2: expected 'qid category'"),
        ("q1 head\nq2 tail\nq1 head\n", r"strata\.txt:3: query q1 is already in category 'head' \(line 1\)"),
        ("# nothing\n\n", r"strata\.txt: no 'qid category' lines"),
    ],
)
def test_strata_file_errors_name_file_and_line(tmp_path, content, message):
    f = tmp_path / "strata.txt"
    f.write_text(content, encoding="utf-8")
    with pytest.raises(FormatError, match=message):
        _rep(["nDCG@3"], strata=str(f))


def test_strata_and_query_text_errors(tmp_path):
    bad = tmp_path / "strata.txt"
    bad.write_bytes(b"q1 caf\xe9\n")
    with pytest.raises(FormatError, match="not valid UTF-8"):
        _rep(["nDCG@3"], strata=str(bad))
    with pytest.raises(ConfigError, match="query_length strata need the query texts"):
        _rep(["nDCG@3"], strata="query_length")
    with pytest.raises(ConfigError, match="comes from both"):
        _rep(["nDCG@3"], strata=[{"q1": "num_rel:1"}, "num_rel"])
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("q1\tfirst\nq2 second\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"queries\.tsv:2: expected 'qid<TAB>text'"):
        _rep(["nDCG@3"], query_texts=str(tsv))
    jl = tmp_path / "queries.jsonl"
    jl.write_text('{"qid": "q1", "text": "a b"}\n{"qid": "q1", "text": "c"}\n', encoding="utf-8")
    with pytest.raises(FormatError, match=r"queries\.jsonl:2: query q1 already has a text"):
        _rep(["nDCG@3"], query_texts=str(jl))


def test_example_queries_jsonl_gives_length_strata():
    rep = compare(
        example_path("qrels.txt"),
        [str(example_path("runs/bm25.run")), str(example_path("runs/rrf.run"))],
        ["nDCG@10"],
        strata=Strata(queries=str(example_path("queries.jsonl"))),
        **FAST,
    )
    names = [k for k in rep.strata if k.startswith("query_length:")]
    assert names and sum(rep.strata[k].block.n_queries for k in names) == 50


# --------------------------------------------------------------------------------------------------
# curves and PROC
# --------------------------------------------------------------------------------------------------


def test_metric_at_k_by_hand():
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    run = {"q1": {"a": 0.9, "x": 0.8, "b": 0.7}, "q2": {"y": 0.9, "c": 0.5}}
    out = metric_at_k(qrels, run, ["P@10", "R"], "1:3")
    assert out["ks"] == [1, 2, 3]
    p, r = out["series"]
    assert p["measure"] == "P" and r["measure"] == "R"
    # P@k: q1 = 1, 1/2, 2/3; q2 = 0, 1/2, 1/3
    assert p["values"] == pytest.approx([0.5, 0.5, 0.5])
    # R@k: q1 = 1/2, 1/2, 1; q2 = 0, 1, 1
    assert r["values"] == pytest.approx([0.25, 0.75, 1.0])


def test_report_curves_pr_and_proc():
    rep = compare(QRELS, [BASE, NEW], ["nDCG@3", "RA-nWG@2"], sections={"curves_k": "1:4"}, stats=FAST_STATS)
    d = rep.to_dict()
    assert d["curves"]["ks"] == [1, 2, 3, 4]
    series = {(s["run"], s["measure"]): s["values"] for s in d["curves"]["series"]}
    assert set(series) == {(r, m) for r in ("run", "run#2") for m in ("nDCG", "RA-nWG")}
    for k in (1, 4):
        assert series[("run#2", "nDCG")][k - 1] == pytest.approx(
            evaluate(QRELS, NEW, [f"nDCG@{k}"]).runs[0].mean(f"nDCG@{k}")
        )
    # interpolated precision: q1 of NEW retrieves a (rel) at 1, b (rel) at 2: precision 1 at every level
    pr = {s["run"]: s["precision"] for s in d["pr_curves"]["series"]}
    assert d["pr_curves"]["recall"] == [i / 10 for i in range(11)] and len(pr["run"]) == 11
    # RA-nWG reads the 1-5 scale, so the curve counts grade >= 3 as relevant (grade 1 is a distractor)
    assert d["settings"]["pr_rel"] == 3 and d["settings"]["pr_relevance"] == "grade >= 3 on the 1-5 scale"
    ev = evaluate(QRELS, BASE, [f"IPrec(rel=3)@{r / 10:g}" for r in range(11)]).runs[0]
    assert pr["run"] == pytest.approx([ev.mean(f"IPrec(rel=3)@{r / 10:g}") for r in range(11)])
    ev1 = evaluate(QRELS, BASE, [f"IPrec@{r / 10:g}" for r in range(11)]).runs[0]
    assert pr["run"] != pytest.approx([ev1.mean(f"IPrec@{r / 10:g}") for r in range(11)])  # the level matters here
    # nDCG alone: no scale in force, trec_eval's default level 1; --pr-rel / pr_rel overrides
    d1 = compare(QRELS, [BASE, NEW], ["nDCG@3"], **FAST).to_dict()
    assert d1["settings"]["pr_rel"] == 1 and d1["settings"]["pr_relevance"] == "grade >= 1 (the qrels' own grades)"
    d2 = compare(
        QRELS,
        [BASE, NEW],
        ["nDCG@3"],
        sections={"curves_k": 0, "pr_rel": 2},
        rag={"grade_map": "1:2,2:3,3:4,4:5,5:5"},
        stats=FAST_STATS,
    ).to_dict()
    assert d2["settings"]["pr_relevance"] == (
        "qrels grade >= 2 (grade >= 3 on the 1-5 scale after the grade map 1:2,2:3,3:4,4:5,5:5)"
    )
    # PROC at the RAG measure's k, per query
    assert d["proc"]["k"] == 2
    proc = evaluate(QRELS, NEW, ["PROC@2", "%PROC@2"]).runs[0]
    got = d["proc"]["series"][1]["per_query"]
    for q in ("q1", "q7"):
        assert got[q] == pytest.approx([proc.per_query("PROC@2")[q], proc.per_query("%PROC@2")[q]])
    assert got["q6"] == [None, None]


def test_metric_at_k_curves_even_when_no_measure_asked_for_has_a_cutoff():
    # "Metric@K curves ... per run are part of the report data": with only measures without a cutoff
    # (gm_map, Rprec) the report falls back to nDCG@K and says so
    rep = compare(QRELS, [BASE, NEW], ["gm_map", "Rprec"], sections={"curves_k": "1:3"}, stats=FAST_STATS)
    series = {(s["run"], s["measure"]): s["values"] for s in rep.curves["series"]}
    assert set(series) == {("run", "nDCG"), ("run#2", "nDCG")}
    for k in (1, 3):
        assert series[("run", "nDCG")][k - 1] == pytest.approx(
            evaluate(QRELS, BASE, [f"nDCG@{k}"]).runs[0].mean(f"nDCG@{k}")
        )
    assert rep.settings["curve_measures"] == ["nDCG"]
    assert any("metric@K curves of nDCG" in n for n in rep.notes)
    assert _rep(["gm_map"]).curves is None  # curves_k=0: none asked for


def test_no_proc_without_rag_or_pool_and_pool_gives_proc():
    assert _rep(["nDCG@3"]).proc is None
    rep = _rep(["nDCG@3"], pool=BASE, allow_outside_pool=True)
    assert rep.proc is not None and rep.proc["k"] == 10


def test_curve_command_formats():
    qrels, run = str(example_path("qrels.txt")), str(example_path("runs/bm25.run"))
    r = CliRunner().invoke(
        cli, ["curve", qrels, run, "-m", "nDCG@10", "-m", "P(rel=3)", "-k", "1:3", "--format", "json"]
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data["ks"] == [1, 2, 3] and [s["measure"] for s in data["series"]] == ["nDCG", "P(rel=3)"]
    assert data["series"][1]["values"][0] == pytest.approx(
        evaluate(qrels, run, ["P(rel=3)@1"]).runs[0].mean("P(rel=3)@1")
    )
    r = CliRunner().invoke(cli, ["curve", qrels, run, "-m", "nDCG", "-k", "2,5", "--format", "csv"])
    rows = list(csv.reader(io.StringIO(r.output)))
    assert rows[0] == ["run", "measure", "k", "value"] and [row[2] for row in rows[1:]] == ["2", "5"]
    r = CliRunner().invoke(cli, ["curve", qrels, run, "-m", "Rprec"])
    assert r.exit_code == 2 and "no curve over K" in r.output
    r = CliRunner().invoke(cli, ["curve", qrels, run, "-m", "nDCG", "-k", "5:x"])
    assert r.exit_code == 2 and "cutoffs must look like" in r.output


# --------------------------------------------------------------------------------------------------
# renderings
# --------------------------------------------------------------------------------------------------


def _named_report():
    from ctxeval import Run

    runs = [Run.from_dict(BASE, name="base_1&co"), Run.from_dict(NEW, name="new|50%")]
    return compare(QRELS, runs, ["nDCG@3", "%PROC@2"], **FAST)


def test_latex_structure_and_escaping():
    rep = _named_report()
    tex = rep.to_latex()
    lines = tex.splitlines()
    assert "\\toprule" in lines and "\\midrule" in lines and "\\bottomrule" in lines
    assert "\\begin{tabular}{lrr}" in tex
    assert "Run & nDCG@3 & \\%PROC@2 \\\\" in lines
    body = lines[lines.index("\\midrule") + 1 : lines.index("\\bottomrule")]
    assert (
        len(body) == 2
        and body[0].startswith("base\\_1\\&co (baseline) & ")
        and body[1].startswith("new\\textbar{}50\\% & ")
    )
    # best per column in bold: one bold cell per column (unless tied)
    for j, m in enumerate(rep.measures):
        vals = [s.aggregate[m] for s in rep.overall.runs]
        best = max(vals)
        for row, v in zip(body, vals):
            cell = row.rstrip(" \\").split(" & ")[j + 1]
            assert cell.startswith("\\textbf{") == (v == best)
    cap = next(line for line in lines if line.startswith("\\caption{"))
    assert "$^{\\uparrow}$/$^{\\downarrow}$: significantly better/worse than the baseline" in cap and "Holm" in cap


def test_latex_rows_cannot_be_taken_for_optional_arguments_and_bars_are_text():
    # after \\\\ or \\midrule, a row starting with "[" would be read as their optional argument
    # ([length] / [width]) and break the table; "|" is an em dash in LaTeX's default font encoding
    from ctxeval import Run

    runs = [Run.from_dict(BASE, name="[v1]|base"), Run.from_dict(NEW, name="[v2]")]
    tex = compare(QRELS, runs, ["nDCG@3"], **FAST).to_latex()
    lines = tex.splitlines()
    body = lines[lines.index("\\midrule") + 1 : lines.index("\\bottomrule")]
    assert body[0].startswith("{[}v1{]}\\textbar{}base (baseline) & ") and body[1].startswith("{[}v2{]} & ")
    assert all(not line.lstrip().startswith("[") for line in lines)


def test_markdown_escapes_math_and_strikethrough_marks():
    from ctxeval._render.report import markdown_escape

    # GitHub renders $...$ as math and ~x~ as strikethrough
    assert markdown_escape("a$b$~c~") == "a\\$b\\$\\~c\\~"


def test_markdown_tables_keep_their_column_count_whatever_the_names():
    import re

    from ctxeval import Run

    runs = [Run.from_dict(BASE, name="b|a_s%e&#$"), Run.from_dict(NEW, name="n{e}w\\~^`*[x]<y>|")]
    rep = compare(QRELS, runs, ["nDCG@3", "%PROC@2", "NumRelRet"], strata={"q1": "a|b", "q2": ["x|y|z", "a|b"]}, **FAST)
    tables, cur = [], []
    for line in [*rep.to_markdown().splitlines(), ""]:
        if line.startswith("|"):
            cur.append(line)
        elif cur:
            tables.append(cur)
            cur = []
    assert len(tables) >= 3
    for t in tables:
        assert len({len(re.findall(r"(?<!\\)\|", line)) for line in t}) == 1, t


def test_markdown_structure_and_escaping():
    rep = _named_report()
    md = rep.to_markdown()
    lines = md.splitlines()
    start = lines.index("| run | nDCG@3 | %PROC@2 |")
    assert lines[start + 1] == "|:---|---:|---:|"
    assert lines[start + 2].startswith("| base\\_1&amp;co (baseline) | ")
    assert lines[start + 3].startswith("| new\\|50% | ")
    assert all(len(line.replace("\\|", "").split("|")) == 5 for line in lines[start : start + 4])
    assert "Bold: best value of the column" in md and "### Against the baseline" in md


def test_csv_is_long_and_complete():
    rep = _rep(["nDCG@3", "RA-nWG@2"], missing="ignore")
    rows = list(csv.DictReader(io.StringIO(rep.to_csv())))
    assert list(rows[0]) == ["run", "query", "measure", "value"]
    assert len(rows) == (7 + 6) * 2
    vals = _per_query(BASE, "RA-nWG@2")
    for row in rows:
        if row["run"] == "run" and row["measure"] == "RA-nWG@2":
            assert (row["value"] == "") if math.isnan(vals[row["query"]]) else float(row["value"]) == vals[row["query"]]


def test_pandas_table():
    rep = _rep(["nDCG@3", "RR"])
    df = rep.to_pandas()
    assert list(df["run"]) == ["run", "run", "run#2", "run#2"]
    row = df[(df.run == "run#2") & (df.measure == "RR")].iloc[0]
    c = rep.comparison("run#2", "RR")
    assert row["diff"] == c.diff and row["p_adjusted"] == c.p_adjusted and row["wins"] == c.wins
    assert math.isnan(df.iloc[0]["diff"])
    assert len(rep.to_pandas(per_query=True)) == 2 * 7 * 2


def test_table_marks_best_significance_and_cis():
    qrels = {f"q{i}": {"a": 1, "b": 1} for i in range(30)}
    bad = {q: {"x": 3, "y": 2, "a": 1} for q in qrels}
    good = {q: {"a": 3, "b": 2, "x": 1} for q in qrels}
    rep = compare(
        qrels, [bad, good], ["RR", "P@2"], sections={"curves_k": 0}, stats={"permutations": 999, "resamples": 300}
    )
    text = rep.to_table()
    row = next(line for line in text.splitlines() if line.startswith("│ run#2"))
    assert "1.0000 * ▲" in row
    assert "[0.3333, 0.3333]" in text  # the baseline's RR is 1/3 on every query: a degenerate CI
    assert "▲/▼ significantly better/worse than run" in text


def test_renderings_say_which_figures_are_sums_or_geometric_means():
    # "mean" is the measure's summary: a count (NumRelRet) is summed over queries and gm_map is a
    # geometric mean; every rendering that says "mean" must say so, and a count is not ranked "best"
    # (its total depends on how many queries each run was evaluated on)
    rep = _rep(["nDCG@3", "NumRelRet", "gm_map"])
    tex, md, table = rep.to_latex(), rep.to_markdown(), rep.to_table(width=200)
    cap = next(line for line in tex.splitlines() if line.startswith("\\caption{"))
    assert "NumRelRet: sum over queries" in cap and "gm\\_map: geometric mean" in cap
    assert "NumRelRet: sum over queries" in md and "gm\\_map: geometric mean" in md
    assert "NumRelRet: sum over queries" in table and "gm_map: geometric mean" in table
    body = tex.splitlines()
    rows = body[body.index("\\midrule") + 1 : body.index("\\bottomrule")]
    assert all("\\textbf" not in row.split(" & ")[2] for row in rows)  # the count column
    plain = _rep(["nDCG@3"]).to_latex()
    assert "sum over queries" not in plain and "geometric mean" not in plain


def test_correction_text_counts_only_the_comparisons_with_a_p_value():
    # RA-nWG needs docs of grade >= 3: undefined on every query here, so its comparison has no p-value
    # and is not in the corrected family (m = 1): the texts must say 1 comparison, not 2
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}, "q3": {"c": 1}}
    base = {"q1": {"x": 2, "a": 1}, "q2": {"x": 2, "b": 1}, "q3": {"c": 1}}
    new = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    rep = compare(qrels, [base, new], ["RR", "RA-nWG@2"], **FAST)
    rr, ra = rep.comparisons
    assert math.isnan(ra.p_value) and rr.p_adjusted == rr.p_value  # Holm over m = 1
    for text in (rep.to_table(width=200), rep.to_markdown(), rep.to_latex()):
        assert "over 1 comparison" in text and "over 2 comparisons" not in text, text
    assert "1 comparison without a p-value left out" in rep.to_table(width=200)


def test_text_reports_say_what_the_strata_and_query_texts_left_out(tmp_path):
    f = tmp_path / "strata.tsv"
    f.write_text("q1 head\nq2 head\nq98 head\nq99 tail\n", encoding="utf-8")
    rep = _rep(["nDCG@3"], strata=str(f), query_texts={"q1": "a b", "q2": "c d e", "q77": "not evaluated"})
    expected = [
        f"strata file {f}: 2 of its query ids were not evaluated (q98, q99); 5 evaluated queries are in none of its strata",
        "query texts <query texts mapping>: 5 evaluated queries have no text and are in no query_length stratum; "
        "1 text is of a query that was not evaluated (q77)",
    ]
    assert all(e in rep.notes for e in expected), rep.notes
    for text in (rep.to_table(width=300), rep.to_markdown()):
        assert "2 of its query ids were not evaluated" in text and "5 evaluated queries have no text" in text


def test_a_single_run_is_reported_with_a_note_instead_of_comparisons():
    rep = compare(QRELS, BASE, ["nDCG@3"], **FAST)
    assert rep.comparisons == []
    note = "only one run: nothing to compare with the baseline (give two or more runs for paired tests)"
    assert note in rep.notes and note in rep.to_table(width=200) and "over 0 comparisons" not in rep.to_table(width=200)


def test_missing_strata_and_queries_files_are_named(tmp_path):
    with pytest.raises(CtxevalError, match=r"nope\.tsv: no such file \(strata\)"):
        _rep(["nDCG@3"], strata=str(tmp_path / "nope.tsv"))
    with pytest.raises(CtxevalError, match=r"nope\.tsv: no such file \(query texts\)"):
        _rep(["nDCG@3"], query_texts=str(tmp_path / "nope.tsv"))
    qrels, run = str(example_path("qrels.txt")), str(example_path("runs/bm25.run"))
    r = CliRunner().invoke(cli, ["compare", qrels, run, "--strata", str(tmp_path / "nope.tsv")])
    assert r.exit_code == 2 and "no such file (strata)" in r.output


def test_to_html_delegates_to_the_html_renderer(monkeypatch):
    import ctxeval._render.html as html

    rep = _rep(["nDCG@3"])
    seen = {}

    def render_html(d):
        seen["d"] = d
        return "<html>ok</html>"

    monkeypatch.setattr(html, "render_html", render_html)
    assert rep.to_html() == "<html>ok</html>" and seen["d"] == rep.to_dict()


def test_progress_display_goes_to_stderr(capsys):
    with show_progress():
        rep = _rep(["nDCG@3"])
    assert isinstance(rep, Report)
    assert capsys.readouterr().out == ""


# --------------------------------------------------------------------------------------------------
# the command and contract C
# --------------------------------------------------------------------------------------------------

CONTRACT_TOP = {
    "baseline",
    "measures",
    "runs",
    "comparisons",
    "strata",
    "curves",
    "pr_curves",
    "proc",
    "distraction",
    "settings",
}
CONTRACT_RUN = {"name", "path", "aggregate", "valid_queries", "queries", "ci", "per_query"}
CONTRACT_CMP = {
    "run",
    "measure",
    "mean",
    "baseline_mean",
    "diff",
    "ci",
    "p_value",
    "p_adjusted",
    "significant",
    "wins",
    "ties",
    "losses",
    "n_queries",
    "n_dropped",
}
CONTRACT_SETTINGS = {
    "test",
    "alpha",
    "correction",
    "permutations",
    "resamples",
    "seed",
    "ci_method",
    "missing",
    "ties",
    "qrels",
    "grade_map",
    "pool",
}


def test_cli_json_follows_contract_c(tmp_path):
    qrels = str(example_path("qrels.txt"))
    runs = [str(example_path(f"runs/{n}")) for n in ("bm25.run", "bm25-rerank.run")]
    out = tmp_path / "report.json"
    r = CliRunner().invoke(
        cli,
        [
            "compare",
            qrels,
            *runs,
            "-m",
            "nDCG@10",
            "-m",
            "RA-nWG@5",
            "--pool",
            runs[0],
            "--strata",
            str(example_path("categories.tsv")),
            "--permutations",
            "500",
            "--resamples",
            "500",
            "--curve-k",
            "1:5",
            "--format",
            "json",
            "-o",
            str(out),
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(out.read_text(encoding="utf-8"))
    assert set(d) == CONTRACT_TOP
    assert d["baseline"] == "bm25" and d["measures"] == ["nDCG@10", "RA-nWG@5"]
    for run in d["runs"]:
        assert CONTRACT_RUN <= set(run) <= CONTRACT_RUN | {"pool", "dropped_duplicates"}
        assert set(run["ci"]) == set(d["measures"]) and len(run["per_query"]) == 50
        assert all(set(v) == set(d["measures"]) for v in run["per_query"].values())
    assert len(d["comparisons"]) == 2 and all(set(c) == CONTRACT_CMP for c in d["comparisons"])
    for st in d["strata"].values():
        assert set(st) == {"source", "n_queries", "small", "runs", "comparisons"}
        assert all(set(x) == {"name", "aggregate", "valid_queries", "ci"} for x in st["runs"])
        assert all(set(c) == CONTRACT_CMP for c in st["comparisons"])
    assert set(d["curves"]) == {"ks", "series"} and d["curves"]["ks"] == [1, 2, 3, 4, 5]
    assert all(set(s) == {"run", "measure", "values"} and len(s["values"]) == 5 for s in d["curves"]["series"])
    assert set(d["pr_curves"]) == {"recall", "series"} and all(
        set(s) == {"run", "precision"} and len(s["precision"]) == 11 for s in d["pr_curves"]["series"]
    )
    assert set(d["proc"]) == {"k", "thresholds", "series"} and d["proc"]["k"] == 5
    assert all(
        set(s) == {"run", "per_query", "verdicts"} and all(len(v) == 2 for v in s["per_query"].values())
        for s in d["proc"]["series"]
    )
    assert d["distraction"] is None
    assert set(d["settings"]) >= CONTRACT_SETTINGS
    assert "each stratum is its own family" in d["settings"]["correction_family"]
    # the JSON is exactly Report.to_dict() of the same call
    rep = compare(
        qrels,
        runs,
        ["nDCG@10", "RA-nWG@5"],
        strata=str(example_path("categories.tsv")),
        sections={"curves_k": "1:5"},
        rag={"pool": runs[0]},
        stats={"permutations": 500, "resamples": 500},
    )
    assert json.loads(rep.to_json()) == d


@pytest.mark.parametrize(
    ("fmt", "needle"),
    [
        ("table", "against the baseline"),
        ("markdown", "## Comparison with the baseline"),
        ("latex", "\\toprule"),
        ("csv", "run,query,measure,value"),
    ],
)
def test_cli_formats(fmt, needle):
    qrels = str(example_path("qrels.txt"))
    runs = [str(example_path(f"runs/{n}")) for n in ("bm25.run", "tfidf.run")]
    r = CliRunner().invoke(
        cli, ["compare", qrels, *runs, "-m", "nDCG@10", "--permutations", "200", "--resamples", "200", "--format", fmt]
    )
    assert r.exit_code == 0, r.output
    assert needle in r.output


def test_cli_reports_strata_errors(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("q01\n", encoding="utf-8")
    qrels, run = str(example_path("qrels.txt")), str(example_path("runs/bm25.run"))
    r = CliRunner().invoke(cli, ["compare", qrels, run, "--strata", str(f)])
    assert r.exit_code == 2 and f"{f}:1: expected 'qid category'" in r.output


def test_progress_only_on_a_terminal_and_never_with_quiet(monkeypatch):
    import ctxeval._cli.compare as cc
    import ctxeval._render.report as cm

    seen = []
    real = cm.compare

    def spy(*args, **kwargs):
        from ctxeval._compare.progress import _SHOW

        seen.append(_SHOW.get())  # the display is turned on around the call, not passed to it
        return real(*args, **kwargs)

    monkeypatch.setattr(cm, "compare", spy)
    qrels, runs = str(example_path("qrels.txt")), [str(example_path(f"runs/{n}")) for n in ("bm25.run", "rrf.run")]
    args = [
        "compare",
        qrels,
        *runs,
        "-m",
        "RR",
        "--permutations",
        "50",
        "--resamples",
        "50",
        "--curve-k",
        "0",
        "--format",
        "json",
    ]
    assert CliRunner().invoke(cli, args).exit_code == 0  # stdout captured: not a terminal
    monkeypatch.setattr(cc, "_stdout_is_terminal", lambda: True)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert cc._progress_wanted(False) is True and cc._progress_wanted(True) is False
    assert CliRunner().invoke(cli, [*args, "--quiet"]).exit_code == 0
    assert seen == [False, False]


def test_latex_label_is_written_as_given_and_checked():
    # \ref{tab:main_results} must find the label: an escaped \_ inside \label{} would not match it
    rep = _rep(["nDCG@3"])
    assert "\\label{tab:main_results}" in rep.to_latex(label="tab:main_results").splitlines()
    with pytest.raises(ConfigError, match="label"):
        rep.to_latex(label="tab:{bad}%")


# --------------------------------------------------------------------------------------------------
# the verb's shape: a real signature, settings grouped in validated values
# --------------------------------------------------------------------------------------------------


def test_compare_has_a_real_signature_and_refuses_a_misspelled_keyword():
    import inspect

    import ctxeval

    params = inspect.signature(ctxeval.compare).parameters
    assert len(params) <= 12
    assert all(p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values())
    assert inspect.signature(ctxeval.compare) == inspect.signature(ctxeval._compare.compare.compare).replace(
        return_annotation=inspect.signature(ctxeval.compare).return_annotation
    )
    with pytest.raises(TypeError, match="curves_k"):
        compare(QRELS, [BASE, NEW], ["RR"], curves_k=0)  # moved into sections=
    with pytest.raises(TypeError, match="baseline_run"):
        compare(QRELS, [BASE, NEW], ["RR"], baseline_run="run")


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (lambda: {"strata": Strata(min_size=-1)}, "min_size must be a whole number >= 0, got -1"),
        (lambda: {"strata": Strata(num_rel_level=1.5)}, r"num_rel_level must be a whole number \(a grade\), got 1.5"),
        (lambda: {"sections": {"distraction_k": 0}}, "distraction_k must be a whole number >= 1, got 0"),
        (lambda: {"sections": {"pr_rel": True}}, r"pr_rel must be a whole number \(a grade\), got True"),
        (lambda: {"sections": {"curve_k": 3}}, r"unknown report sections \['curve_k'\]"),
        (lambda: {"engine": "gpu"}, "engine must be one of 'local', .*got 'gpu'"),
        (lambda: {"engine": {"name": "local", "master": "local[2]"}}, "a master URL is for the spark engine"),
    ],
)
def test_settings_values_refuse_bad_fields_with_one_clear_message(kw, message):
    with pytest.raises(ConfigError, match=message):
        compare(QRELS, [BASE, NEW], ["RR"], **kw())


def test_strata_given_as_sources_or_as_a_value_give_the_same_report():
    cats = {"q1": "head", "q2": "head", "q3": "tail"}
    a = _rep(["nDCG@3"], strata=cats).to_dict()
    b = compare(QRELS, [BASE, NEW], ["nDCG@3"], strata=Strata(by=cats), **FAST).to_dict()
    assert a == b and "head" in a["strata"] and "num_rel:1" in a["strata"]
