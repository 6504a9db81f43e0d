"""The gate never answers HOLDS for what it did not test (issue 29, point 8): a baseline file whose values
of a gated measure the gate cannot use is exit 2 with one line naming the file, the measure and the
query; a query left out is named; a measure that cannot be tested is exit 2 (an ``error`` in JUnit, never
``skipped``), and no numpy warning reaches the user."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

import ctxeval
from ctxeval import ConfigError
from ctxeval._cli import cli
from ctxeval._errors import FormatError
from ctxeval.testing import assert_no_regression

N = 40


def _write(tmp: Path) -> dict[str, Path]:
    """qrels with one relevant doc per query; a baseline run finding it at rank 1-3 and a candidate
    finding it one place lower on every third query (a planted drop of known size)."""
    rng = np.random.default_rng(7)
    qrels, base, cand = [], [], []
    for i in range(N):
        q = f"q{i:02d}"
        qrels.append(f"{q} 0 rel 1\n{q} 0 other 0\n")
        r = int(rng.integers(1, 4))
        docs = [f"x{k}" for k in range(6)]
        docs.insert(r - 1, "rel")
        base += [f"{q} Q0 {d} {j + 1} {10 - j} main\n" for j, d in enumerate(docs)]
        if i % 3 == 0:
            docs.remove("rel")
            docs.insert(r, "rel")
        cand += [f"{q} Q0 {d} {j + 1} {10 - j} new\n" for j, d in enumerate(docs)]
    paths = {"qrels": tmp / "qrels.txt", "main": tmp / "main.run", "new": tmp / "new.run"}
    for key, lines in (("qrels", qrels), ("main", base), ("new", cand)):
        paths[key].write_text("".join(lines))
    return paths


@pytest.fixture
def made(tmp_path):
    f = _write(tmp_path)
    code, out = _cli(
        "snapshot", str(f["qrels"]), str(f["main"]), "-m", "nDCG@10", "-m", "RR", "-o", str(tmp_path / "b.json")
    )
    assert code == 0, out
    f["baseline"] = tmp_path / "b.json"
    return f


def _cli(*args: str) -> tuple[int, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would raise here, not print
        r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def _edit(f: dict[str, Path], text_edit) -> Path:
    """The baseline with its JSON text edited (raw text: JSON's own tokens, Infinity and NaN included)."""
    doc = json.loads(f["baseline"].read_text())
    out = f["baseline"].with_name("edited.json")
    out.write_text(text_edit(doc))
    return out


def _gate(f: dict[str, Path], baseline: Path, *more: str) -> tuple[int, str]:
    return _cli("gate", str(baseline), str(f["qrels"]), str(f["new"]), "--max-drop", "nDCG@10=0.02", *more)


def _with_value(doc: dict, measure: str, i: int, token: str) -> str:
    """The document as JSON with value i of ``measure`` written as the raw token."""
    doc["values"][measure][i] = "@@"
    return json.dumps(doc).replace('"@@"', token)


@pytest.mark.parametrize(
    ("token", "problem"),
    [
        ("Infinity", "is inf, which is not a JSON number"),
        ("-Infinity", "is -inf, which is not a JSON number"),
        ("NaN", "is nan, which is not a JSON number"),
        ('"0.5"', "is '0.5', not a number"),
        ("7.5", "is 7.5, outside the measure's range [0, 1]"),
        ("true", "is True, not a number"),
        ("1e999", "is inf, which is not a JSON number"),
    ],
)
def test_a_value_the_gate_cannot_use_is_exit_2_naming_file_measure_and_query(made, token, problem):
    bad = _edit(made, lambda d: _with_value(d, "nDCG@10", 5, token))
    code, out = _gate(made, bad)
    assert code == 2, out
    assert out.count("\n") == 1 and "HOLDS" not in out and "Traceback" not in out, out
    assert str(bad) in out and "nDCG@10 of query 'q05'" in out and problem in out, out


def test_a_bad_value_of_a_measure_not_gated_is_still_refused_when_it_is_not_a_number(made):
    bad = _edit(made, lambda d: _with_value(d, "RR", 3, '"high"'))
    code, out = _gate(made, bad)
    assert code == 2 and "RR of query 'q03' is 'high', not a number" in out, out
    # a value out of RR's range is refused only where RR is gated: the file reads, nDCG@10 is gated alone
    ok = _edit(made, lambda d: _with_value(d, "RR", 3, "3.0"))
    code, out = _gate(made, ok)
    assert code in (0, 1) and "q03" not in out, out
    code, out = _cli("gate", str(ok), str(made["qrels"]), str(made["new"]), "--max-drop", "RR=0.02")
    assert code == 2 and "RR of query 'q03' is 3.0, outside the measure's range [0, 1]" in out, out


def test_a_query_listed_twice_is_refused(made):
    def twice(d: dict) -> str:
        d["queries"].append(d["queries"][7])
        for m in d["values"]:
            d["values"][m].append(d["values"][m][7])
        return json.dumps(d)

    code, out = _gate(made, _edit(made, twice))
    assert code == 2 and "query 'q07' is listed twice in the baseline" in out, out
    # the same through Python, on a Baseline built by hand
    base = ctxeval.Baseline.read(made["baseline"])
    base = replace(base, queries=[*base.queries[:-1], base.queries[0]])
    with pytest.raises(FormatError, match="query 'q00' is listed twice"):
        ctxeval.gate(base, str(made["qrels"]), str(made["new"]), max_drop={"nDCG@10": 0.02})


def test_every_value_null_is_exit_2_not_holds(made):
    def nulls(d: dict) -> str:
        d["values"]["nDCG@10"] = [None] * len(d["queries"])
        return json.dumps(d)

    code, out = _gate(made, _edit(made, nulls))
    assert code == 2 and out.count("\n") == 1, out
    assert f"nDCG@10 is undefined on {N} of the baseline's {N} queries (every value is null)" in out, out
    assert "the gate cannot test it" in out and "HOLDS" not in out, out

    def one_left(d: dict) -> str:
        d["values"]["nDCG@10"] = [None] * (len(d["queries"]) - 1) + [0.5]
        return json.dumps(d)

    code, out = _gate(made, _edit(made, one_left))
    assert code == 2 and "(only query 'q39' has a value)" in out, out


def test_a_single_null_leaves_its_query_out_and_says_so(made):
    doc = json.loads(made["baseline"].read_text())
    edited = _edit(made, lambda d: _with_value(d, "nDCG@10", 11, "null"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = ctxeval.gate(str(edited), str(made["qrels"]), str(made["new"]), max_drop={"nDCG@10": 0.02})
    row = rep.row("nDCG@10")
    assert (row.n, row.n_dropped) == (N - 1, 1)
    assert any("nDCG@10: 1 of 40 paired queries left out" in n and "in the baseline ('q11')" in n for n in rep.notes), (
        rep.notes
    )
    # the test is over the other 39 queries, as an independent computation gives
    cand = ctxeval.evaluate(str(made["qrels"]), str(made["new"]), ["nDCG@10"]).runs[0].per_query("nDCG@10")
    d = np.array([cand[q] - v for q, v in zip(doc["queries"], doc["values"]["nDCG@10"]) if q != "q11"])
    assert row.change == pytest.approx(d.mean(), abs=1e-12)
    _code, out = _gate(made, edited)
    assert "1 of 40 paired queries left out" in out, out


def _partial_baseline(made, keep: int) -> ctxeval.Baseline:
    """The baseline with all but ``keep`` of its queries renamed to ids the candidate does not have."""
    base = ctxeval.Baseline.read(made["baseline"])
    return replace(base, queries=[q if i < keep else f"gone{i}" for i, q in enumerate(base.queries)])


def test_a_measure_that_cannot_be_tested_is_exit_2_and_a_junit_error(made):
    base = _partial_baseline(made, 1)  # one query paired: nothing to test
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rep = ctxeval.gate(base, str(made["qrels"]), str(made["new"]), max_drop={"nDCG@10": 0.02})
    row = rep.row("nDCG@10")
    assert row.verdict == "untested" and row.n == 1 and "a test needs 2" in row.why
    assert rep.exit_code == 2 and not rep.holds and repr(rep).startswith("GateReport(UNTESTED")
    assert "CANNOT TELL: nDCG@10 untested" in rep.to_table() and "HOLDS" not in rep.to_table()
    root = ET.fromstring(rep.to_junit().encode())
    suite = root.find("testsuite")
    assert suite.get("errors") == "1" and suite.get("skipped") == "0" and suite.get("failures") == "0"
    (case,) = suite.findall("testcase")
    assert case.find("skipped") is None and case.find("error").get("type") == "Untested"
    assert rep.to_annotations().startswith("::error title=ctxeval gate%3A nDCG@10::nDCG@10: UNTESTED")
    with pytest.raises(ConfigError, match="could not be tested against the baseline main"):  # an error, not a pass
        assert_no_regression(base, str(made["qrels"]), str(made["new"]), max_drop={"nDCG@10": 0.02})
    base.write(made["baseline"].with_name("partial.json"))
    code, out = _gate(made, made["baseline"].with_name("partial.json"))
    assert code == 2 and "CANNOT TELL" in out and "HOLDS" not in out, out
    # a second gated measure, untested too; on the full baseline the same measure is tested as scipy does
    rep = ctxeval.gate(base, str(made["qrels"]), str(made["new"]), max_drop={"nDCG@10": 0.02, "RR": 0.0})
    assert rep.row("RR").verdict == "untested" and rep.exit_code == 2
    full = ctxeval.gate(str(made["baseline"]), str(made["qrels"]), str(made["new"]), max_drop={"RR": 0.0})
    d = np.array(
        ctxeval.evaluate(str(made["qrels"]), str(made["new"]), ["RR"]).runs[0].values[ctxeval.parse_measure("RR")]
    )
    d = d - ctxeval.Baseline.read(made["baseline"]).values["RR"]
    assert full.row("RR").p_value == pytest.approx(_lower_tail(d), rel=1e-9)


def _lower_tail(d: np.ndarray) -> float:
    """The gate's p at margin 0 by scipy: Student's t at Hall's statistic (see test_gate)."""
    n, g = d.size, float(stats.skew(d))
    u = d.mean() / d.std(ddof=1)
    return float(stats.t.cdf(math.sqrt(n) * (u + g * u**2 / 3 + g**2 * u**3 / 27 + g / (6 * n)), n - 1))


def test_a_baseline_without_a_gated_measure_s_values_is_refused_before_evaluating(made):
    base = ctxeval.Baseline.read(made["baseline"])
    base = replace(base, values={**base.values, "nDCG@10": np.full(N, math.nan)})
    with pytest.raises(ConfigError, match="nDCG@10 is undefined on 40 of the baseline's 40 queries"):
        ctxeval.gate(base, str(made["qrels"]), str(made["new"]), max_drop={"nDCG@10": 0.02})
    base = replace(base, values={**base.values, "nDCG@10": np.r_[np.full(N - 1, 0.5), math.inf]})
    with pytest.raises(FormatError, match="nDCG@10 of query 'q39' is inf"):
        ctxeval.gate(base, str(made["qrels"]), str(made["new"]), max_drop={"nDCG@10": 0.02})
