"""compare with several baselines in one multiple-testing family (issue 32, point 5), on real runs (TREC
DL19, ../shared/data/real): the p-values are scipy's paired t-tests on the per-query values, and the
adjusted ones Holm's step-down (written out here) or scipy's Benjamini-Hochberg over every test shown,
never baseline by baseline. Every renderer names the run each comparison is against."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

import ctxeval
from ctxeval import ConfigError, Stats
from ctxeval._cli import cli
from real_data import real

RUNS = ("bm25", "tasb", "spladepp_ed", "openai_ada2")
MEASURES = ["nDCG@10", "AP", "RR"]
FAST = {"curves_k": 0}


def _paths() -> tuple[str, list[str]]:
    """DL19's qrels and runs as NAME=PATH (the test skips, saying why, without the shared data)."""
    return str(real("dl19", "qrels.dl19-passage.txt")), [f"{r}={real('dl19', 'runs', f'{r}.top100.txt')}" for r in RUNS]


def _holm(p: list[float]) -> list[float]:
    """Holm (1979), step down: the i-th smallest p times (m - i + 1), made monotone, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_two_baselines_form_one_family_of_scipy_tests(correction: str) -> None:
    qrels, runs = _paths()
    rep = ctxeval.compare(
        qrels, runs, MEASURES, baseline=["bm25", "tasb"], stats=Stats(test="t", correction=correction), sections=FAST
    )
    values = {r.name: r.values for r in rep.result.runs}
    # every run against each baseline; the two baselines once (tasb against bm25)
    want = [(r, b) for b in ("bm25", "tasb") for r in RUNS if r != b and not (b == "tasb" and r == "bm25")]
    got = [(c.run, c.against) for c in rep.comparisons]
    assert got == [pair for pair in want for _ in MEASURES]
    raw = []
    for c in rep.comparisons:
        x, y = values[c.run][c.measure], values[c.against][c.measure]
        raw.append(float(stats.ttest_rel(x, y).pvalue))
    assert [c.p_value for c in rep.comparisons] == pytest.approx(raw, rel=1e-9)
    adjusted = _holm(raw) if correction == "holm" else list(stats.false_discovery_control(raw, method="bh"))
    assert [c.p_adjusted for c in rep.comparisons] == pytest.approx(adjusted, rel=1e-9)
    # one family: adjusting each baseline's tests on their own gives other numbers
    first = [p for p, c in zip(raw, rep.comparisons) if c.against == "bm25"]
    alone = _holm(first) if correction == "holm" else list(stats.false_discovery_control(first, method="bh"))
    together = [c.p_adjusted for c in rep.comparisons if c.against == "bm25"]
    assert not np.allclose(alone, together)
    assert rep.settings["baselines"] == ["bm25", "tasb"]
    assert rep.settings["correction_family"].startswith("every (run, baseline, measure) comparison")


def test_the_randomization_tests_of_two_baselines_are_holm_adjusted_together() -> None:
    qrels, runs = _paths()
    rep = ctxeval.compare(
        qrels, runs, MEASURES, baseline=["tasb", "bm25"], stats=Stats(permutations=2000, resamples=200), sections=FAST
    )
    raw = [c.p_value for c in rep.comparisons]
    assert len(raw) == 3 * len(MEASURES) + 2 * len(MEASURES)  # 3 runs against tasb, 2 more against bm25
    assert [c.p_adjusted for c in rep.comparisons] == pytest.approx(_holm(raw), rel=1e-12)
    assert [c.significant for c in rep.comparisons] == [p < 0.05 for p in _holm(raw)]


def test_every_format_names_the_baseline_of_each_comparison(tmp_path) -> None:
    qrels, runs = _paths()
    args = ["compare", qrels, *runs, "-m", "nDCG@10", "--baseline", "bm25", "--baseline", "tasb", "--curve-k", "0"]
    args += ["--permutations", "500", "--resamples", "200"]
    out = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    pairs = [(c["run"], c["against"]) for c in data["comparisons"]]
    against_bm25 = [("tasb", "bm25"), ("spladepp_ed", "bm25"), ("openai_ada2", "bm25")]
    assert pairs == [*against_bm25, ("spladepp_ed", "tasb"), ("openai_ada2", "tasb")]
    table = CliRunner().invoke(cli, args).output
    assert "Comparison with the baselines bm25, tasb" in table
    assert "Holm correction over 5 comparisons" in table
    md = CliRunner().invoke(cli, [*args, "--format", "markdown"]).output
    assert "spladepp\\_ed vs tasb" in md and "### Against the baselines" in md
    html = CliRunner().invoke(cli, [*args, "--format", "html", "-o", str(tmp_path / "r.html")])
    assert html.exit_code == 0, html.output
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Differences to the baselines (bm25, tasb; one family of tests)" in page
    assert page.count('<span class="tag">vs tasb</span>') == 2
    frame = ctxeval.compare(
        qrels,
        runs,
        ["nDCG@10"],
        baseline=["bm25", "tasb"],
        stats={"permutations": 200, "resamples": 200},
        sections=FAST,
    ).to_pandas()
    assert frame[frame.run == "spladepp_ed"]["against"].tolist() == ["bm25", "tasb"]


def test_baselines_are_runs_named_once() -> None:
    qrels = {"q": {"a": 1}}
    runs = {"x": {"q": {"a": 1.0}}, "y": {"q": {"a": 2.0}}}
    with pytest.raises(ConfigError, match="baseline 'z' is not one of the runs"):
        ctxeval.compare(qrels, list(runs.values()), ["RR"], baseline=["run", "z"], sections=FAST)
    with pytest.raises(ConfigError, match="named twice"):
        ctxeval.compare(qrels, list(runs.values()), ["RR"], baseline=["run", "run"], sections=FAST)
    with pytest.raises(ConfigError, match="name one baseline at most"):
        ctxeval.compare(qrels, list(runs.values()), ["RR"], baseline=["run", "run#2"], stats={"pairs": "all"})


def test_all_pairs_render_as_html() -> None:
    # every pair of three runs: two comparisons of the last run on one measure (a report the page refused)
    qrels = {f"q{i}": {"a": 1, "b": i % 2} for i in range(8)}
    runs = [{f"q{i}": {"a": float(i % k), "b": 1.0} for i in range(8)} for k in (2, 3, 4)]
    rep = ctxeval.compare(qrels, runs, ["RR"], stats={"pairs": "all", "permutations": 100, "resamples": 100})
    page = rep.to_html()
    assert page.count('<span class="tag">vs run</span>') == 2


def test_compare_under_expected_ties_leaves_out_a_curve_it_cannot_average() -> None:
    # 40 tied docs of which 10 relevant: the tables' measures have closed forms, the precision-recall
    # curve's IPrec would need C(40, 10) orders: it is left out, with a note, and the report is made
    qrels = {f"q{i}": {f"d{j}": int(j % 4 == 0) for j in range(40)} for i in range(3)}
    tied = {q: {f"d{j}": 1.0 for j in range(40)} for q in qrels}
    ranked = {q: {f"d{j}": float(40 - j) for j in range(40)} for q in qrels}
    rep = ctxeval.compare(
        qrels,
        [tied, ranked],
        ["AP", "P@10"],
        policies={"ties": "expected"},
        stats={"permutations": 100, "resamples": 100},
    )
    assert rep.pr_curves is None
    assert any(
        n.startswith("the precision-recall curve left out: measure IPrec@0 has no closed form") for n in rep.notes
    )
    assert rep.result.runs[0].mean("P@10") == pytest.approx(10 / 40)
    assert rep.to_html()  # the page holds no curve and says nothing is wrong
