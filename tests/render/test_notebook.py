"""Result objects a notebook can live with: a short repr (never the per-query arrays), an escaped HTML
table, ``to_pandas()`` with the same numbers as the object, and ``plot()`` for curves (or a one-line
error naming the extra that installs matplotlib)."""

from __future__ import annotations

import sys

import matplotlib
import pytest

import ctxeval

matplotlib.use("Agg")

N = 300  # queries: a repr that printed per-query arrays would be thousands of characters long
QRELS = {f"q{i}": {"a": 5, "b": 4, "d": 1} for i in range(N)}
GOOD = {f"q{i}": {"a": 3.0, "b": 2.0, "x": 1.0, "d": 0.5} for i in range(N)}
WEAK = {f"q{i}": {"d": 3.0, "x": 2.0, "a": 1.0, "b": 0.5} for i in range(N)}
NAMED = [ctxeval.Run.from_dict(GOOD, name="good"), ctxeval.Run.from_dict(WEAK, name="<b>weak</b>")]


def _short(obj: object) -> str:
    text = repr(obj)
    assert len(text) < 300 and "\n" not in text, text
    return text


def test_results_show_briefly_and_escape_names() -> None:
    res = ctxeval.evaluate(QRELS, NAMED, ["RR(rel=4)", "nDCG@2"])
    assert _short(res).startswith("Result(2 runs x 2 measures")
    assert _short(res.runs[0]) == "RunResult('good', 300 queries: RR(rel=4) 1.0000, nDCG@2 1.0000)"
    html = res._repr_html_()
    assert "&lt;b&gt;weak&lt;/b&gt;" in html and "<b>weak" not in html
    # RR(rel=4): good 1; weak's first doc of grade >= 4 (a) is at rank 3: 1/3
    frame = res.runs[1].to_pandas().set_index("measure")
    assert frame.loc["RR(rel=4)", "value"] == pytest.approx(1 / 3) and frame.loc["RR(rel=4)", "valid_queries"] == N


def test_every_verb_result_has_repr_html_and_frame() -> None:
    d = ctxeval.diagnose(QRELS, WEAK, k=2)
    assert _short(d).startswith("Diagnosis('run', K=2")
    assert "<table>" in d._repr_html_()
    # weak's top 2 hold d (grade 1) and x: the pool (itself) has a and b -> every query a selection failure
    assert set(d.to_pandas()["verdict"]) == {"selection"}
    t = ctxeval.distraction_table(QRELS, NAMED, k=2)
    assert _short(t).startswith("DistractionTable(k=2: good SAFE")
    assert list(t.to_pandas()["verdict"]) == [row["verdict"] for row in t["rows"]]
    assert "&lt;b&gt;" in t._repr_html_()
    cal = ctxeval.calibrate(QRELS, GOOD, k=4, folds=2)
    assert _short(cal).startswith("Calibration(k_max=")
    grid = cal.to_pandas()
    assert len(grid) == 4 * len(cal.fit.taus) and "<table>" in cal._repr_html_()
    rep = ctxeval.compare(QRELS, NAMED, ["RR(rel=4)"], stats={"permutations": 200, "resamples": 200})
    assert "▼" in rep._repr_html_()  # weak is significantly worse on RR


def test_the_judge_card_shows_briefly_and_gives_a_frame() -> None:
    """The judge's labels equal people's on half the queries and are missing on the rest: the card's
    frame gives each run's mean under both, by hand (RR(rel=4): good 1, weak 1/3 on every query)."""
    judged = {q: g for i, (q, g) in enumerate(QRELS.items()) if i % 2 == 0}
    card = ctxeval.agreement(QRELS, judged, NAMED, measure="RR(rel=4)")
    assert _short(card).startswith("JudgeCard(")
    html = card._repr_html_()
    assert "&lt;b&gt;weak&lt;/b&gt;" in html and "<b>weak" not in html and "judge card" in html
    frame = card.to_pandas().set_index("run")
    assert list(frame.index) == ["good", "<b>weak</b>"]
    assert frame.loc["good", "people"] == 1.0 and frame.loc["<b>weak</b>", "people"] == pytest.approx(1 / 3)
    assert frame.loc["<b>weak</b>", "judge"] == pytest.approx(1 / 3)
    assert {"ppi_mean", "ppi_low", "ppi_high", "judged"} <= set(frame.columns)


def test_the_gate_report_shows_briefly_and_gives_a_frame() -> None:
    """The candidate is the weak run against a snapshot of the good one: RR(rel=4) falls from 1 to 1/3
    on every query (by hand), a drop far beyond the tolerated 0.02, so the frame's row says so."""
    base = ctxeval.snapshot(QRELS, NAMED[0], ["RR(rel=4)"])
    rep = ctxeval.gate(base, QRELS, ctxeval.Run.from_dict(WEAK, name="<b>weak</b>"), max_drop={"RR(rel=4)": 0.02})
    assert _short(rep).startswith("GateReport(DROP")
    html = rep._repr_html_()
    assert "&lt;b&gt;weak&lt;/b&gt;" in html and "<b>weak" not in html and "significant drop" in html
    row = rep.to_pandas().set_index("measure").loc["RR(rel=4)"]
    assert row["baseline"] == 1.0 and row["candidate"] == pytest.approx(1 / 3)
    assert row["change"] == pytest.approx(-2 / 3) and row["margin"] == 0.02
    assert row["verdict"] == "drop" and row["n"] == N


def test_curves_frame_and_plot() -> None:
    curves = ctxeval.metric_at_k(QRELS, NAMED, ["R"], "1:3")
    assert _short(curves) == "Curves(R over K = 1..3; runs: good, <b>weak</b>)"
    frame = curves.to_pandas()
    # R@k of good: a, b are 2 of the 3 judged docs... relevant at rel=1 are a, b, d: 1/3, 2/3, 2/3
    assert list(frame[frame.run == "good"]["value"]) == pytest.approx([1 / 3, 2 / 3, 2 / 3])
    ax = curves.plot()
    assert [line.get_label() for line in ax.get_lines()] == ["good", "<b>weak</b>"]
    assert list(ax.get_lines()[0].get_ydata()) == pytest.approx([1 / 3, 2 / 3, 2 / 3])
    with pytest.raises(ctxeval.ConfigError, match="no curve of 'nDCG'"):
        curves.plot("nDCG")


def test_plot_without_matplotlib_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    curves = ctxeval.metric_at_k(QRELS, NAMED, ["R"], "1:2")
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ctxeval.DependencyError, match=r"pip install 'ctxeval\[report\]'"):
        curves.plot()


def test_public_docstrings_do_not_point_into_private_modules() -> None:
    for name in ctxeval.__all__:
        obj = getattr(ctxeval, name)
        doc = getattr(obj, "__doc__", None) or ""
        if not callable(obj) or name == "__version__":
            continue
        assert ":mod:`ctxeval._" not in doc and "ctxeval._" not in doc, name


def test_print_shows_the_numbers_and_a_sample_set_shows_briefly(tmp_path) -> None:
    """Issue 29, point 18: print(result) gives the means (it gave the repr), repr(samples) stays short
    whatever the set's texts (it printed every sample), metric_at_k takes measures= and k=."""
    res = ctxeval.evaluate(QRELS, NAMED, ["RR(rel=4)", "nDCG@2"])
    lines = str(res).splitlines()
    assert lines[0].split() == ["run", "RR(rel=4)", "nDCG@2"]
    assert lines[1].split() == ["good", "1.0000", "1.0000"]
    assert lines[2].split() == ["<b>weak</b>", f"{1 / 3:.4f}", f"{res.runs[1].mean('nDCG@2'):.4f}"]
    long_text = "x" * 2000
    records = [{"query_id": f"q{i}", "retrieved": [{"id": f"c{j}", "text": long_text} for j in range(10)],
                "reference_ids": ["c1"]} for i in range(100)]  # fmt: skip
    s = ctxeval.Samples.from_records(records, name="big")
    assert _short(s).startswith("Samples('big', 100 samples from <samples>; labels: binary")
    new = ctxeval.metric_at_k(QRELS, NAMED, measures=["R"], k="1:2")
    with pytest.warns(DeprecationWarning, match="measures= and k="):
        old = ctxeval.metric_at_k(QRELS, NAMED, measure_families=["R"], ks="1:2")
    assert new["series"] == old["series"] and new["ks"] == [1, 2]
