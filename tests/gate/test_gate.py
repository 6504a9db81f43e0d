"""The regression gate: exit codes, refusal of a mismatched baseline, Holm over the measures, the
one-sided p-values and intervals against scipy, the Markdown and JUnit outputs read back, the pytest
helper, the planning formulas against scipy's noncentral t, and the CI guide's recipe run as written."""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner
from scipy import stats

import ctxeval
from ctxeval import ConfigError
from ctxeval._cli import cli
from ctxeval._stats.onesided import one_sided
from ctxeval._stats.power import detectable_drop, needed_queries, power_at, simulated_power
from ctxeval.testing import RegressionError, assert_no_regression

ROOT = Path(__file__).resolve().parents[2]


def _data(n: int = 60, seed: int = 0, drop_every: int = 0):
    """qrels with one relevant doc per query; a base run finding it at rank 1-3, a candidate that
    (every ``drop_every``-th query) pushes it down to rank 5."""
    rng = np.random.default_rng(seed)
    qrels = {f"q{i:03d}": {"rel": 1, "other": 0} for i in range(n)}
    base, cand = {}, {}
    for i in range(n):
        q = f"q{i:03d}"
        r = int(rng.integers(1, 4))
        docs = [f"x{k}" for k in range(6)]
        docs.insert(r - 1, "rel")
        base[q] = {d: 10.0 - j for j, d in enumerate(docs)}
        docs2 = list(docs)
        if drop_every and i % drop_every == 0:
            docs2.remove("rel")
            docs2.insert(4, "rel")
        cand[q] = {d: 10.0 - j for j, d in enumerate(docs2)}
    return qrels, base, cand


def _write_trec(path: Path, run: dict, tag: str) -> None:
    lines = [
        f"{q} Q0 {d} {i + 1} {s} {tag}"
        for q, docs in run.items()
        for i, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1]))
    ]
    path.write_text("\n".join(lines) + "\n")


def _write_qrels(path: Path, qrels: dict) -> None:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))


@pytest.fixture
def files(tmp_path):
    qrels, base, cand = _data(drop_every=2)
    _write_qrels(tmp_path / "qrels.txt", qrels)
    _write_trec(tmp_path / "base.run", base, "base")
    _write_trec(tmp_path / "same.run", base, "same")
    _write_trec(tmp_path / "worse.run", cand, "worse")
    return tmp_path


def _cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def test_exit_codes_hold_drop_and_error(files):
    f = files
    code, _ = _cli(
        "snapshot", str(f / "qrels.txt"), str(f / "base.run"), "-m", "RR", "-m", "nDCG@10", "-o", str(f / "b.json")
    )
    assert code == 0 and json.loads((f / "b.json").read_text())["format"] == "ctxeval-baseline"
    code, out = _cli("gate", str(f / "b.json"), str(f / "qrels.txt"), str(f / "same.run"), "--max-drop", "RR=0.02")
    assert code == 0 and "HOLDS" in out, out
    code, out = _cli("gate", str(f / "b.json"), str(f / "qrels.txt"), str(f / "worse.run"), "--max-drop", "RR=0.02")
    assert code == 1 and "FAILS: a significant drop in RR" in out, out
    code, out = _cli("gate", str(f / "b.json"), str(f / "qrels.txt"), str(f / "worse.run"), "--max-drop", "P@5=0.02")
    assert code == 2 and "the baseline holds RR, nDCG@10, not P@5" in out, out


def test_a_baseline_made_under_other_labels_or_settings_is_refused_naming_what_differs(files):
    f = files
    base = ctxeval.snapshot(str(f / "qrels.txt"), str(f / "base.run"), ["RR"])
    qrels = (f / "qrels.txt").read_text().replace("q001 0 rel 1", "q001 0 rel 0")
    (f / "other.txt").write_text(qrels)
    with pytest.raises(ConfigError) as err:
        ctxeval.gate(base, str(f / "other.txt"), str(f / "same.run"), policies={"missing": "ignore"})
    msg = str(err.value)
    assert "other labels or settings" in msg
    assert re.search(r"labels\.sha256: [0-9a-f]{64} in the baseline, [0-9a-f]{64} now", msg)
    assert "settings.missing: zero in the baseline, ignore now" in msg
    assert "labels.judgments" not in msg  # the same number of judgments: only what differs is named
    # the same judgments in another order and format hash alike
    lines = (f / "qrels.txt").read_text().splitlines()
    (f / "shuffled.tsv").write_text(
        "query_id\tdoc_id\trelevance\n"
        + "\n".join("\t".join(x.split()[i] for i in (0, 2, 3)) for x in reversed(lines))
        + "\n"
    )
    assert ctxeval.gate(base, str(f / "shuffled.tsv"), str(f / "same.run")).holds
    code, out = _cli("gate", str(f / "nope.json"), str(f / "qrels.txt"), str(f / "same.run"))
    assert code == 2 and "nope.json: no such file (baseline; make one with ctxeval snapshot)" in out, out


def _hall_t(d: np.ndarray, mu: float) -> float:
    """Hall's (1992) skew-corrected statistic of H0: E[d] = mu, from the paper's formula with scipy's
    sample skewness: sqrt(n) (u + g u^2/3 + g^2 u^3/27 + g/(6n)), u = (mean - mu)/s."""
    n, g = d.size, float(stats.skew(d))
    u = (d.mean() - mu) / d.std(ddof=1)
    return math.sqrt(n) * (u + g * u**2 / 3 + g**2 * u**3 / 27 + g / (6 * n))


def _hall(d: np.ndarray, margin: float, alpha: float = 0.05) -> tuple[float, float, float]:
    """(p, low, high) of the gate's test by scipy: the lower tail of Student's t at Hall's statistic, and
    the interval's ends found by root-finding (the means at which the statistic meets the quantiles)."""
    from scipy.optimize import brentq

    n, c = d.size, stats.t.ppf(1 - alpha, d.size - 1)
    p = float(stats.t.cdf(_hall_t(d, -margin), n - 1))
    span = 10 * (np.ptp(d) + 1)
    low = brentq(lambda mu: _hall_t(d, mu) - c, d.mean() - span, d.mean() + span, xtol=1e-14)
    high = brentq(lambda mu: _hall_t(d, mu) + c, d.mean() - span, d.mean() + span, xtol=1e-14)
    return p, low, high


def test_one_sided_p_values_and_intervals_match_scipy():
    rng = np.random.default_rng(4)
    for n, margin, alpha in [(30, 0.0, 0.05), (97, 0.02, 0.05), (500, 0.01, 0.1), (8, 0.05, 0.025)]:
        d = rng.normal(-0.015, 0.2, n)
        got = one_sided(d, margin, alpha)
        p, lo, hi = _hall(d, margin, alpha)
        assert got.p == pytest.approx(p, rel=1e-9, abs=1e-14)
        assert (got.low, got.high) == pytest.approx((lo, hi), rel=1e-9)
        # changes without skew (mirrored about their mean): the paired t-test and its interval, as scipy's
        sym = np.r_[d, 2 * d.mean() - d]
        got = one_sided(sym, margin, alpha)
        ref = stats.ttest_1samp(sym, -margin, alternative="less")
        assert got.p == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-14)
        lo, hi = stats.t.interval(1 - 2 * alpha, sym.size - 1, loc=sym.mean(), scale=stats.sem(sym))
        assert (got.low, got.high) == pytest.approx((lo, hi), rel=1e-9)
    # strongly skewed changes, both ways: the interval inverts the statistic; the test fails exactly when
    # the interval lies beyond the tolerated drop
    for g in (1.0, -1.0):
        d = g * (rng.exponential(0.1, 40) - 0.1) - 0.03
        for margin in (0.0, 0.01, 0.03, 0.06):
            got = one_sided(d, margin, 0.05)
            p, lo, hi = _hall(d, margin)
            assert got.p == pytest.approx(p, rel=1e-9) and (got.low, got.high) == pytest.approx((lo, hi), rel=1e-9)
            assert (got.p < 0.05) == (got.high < -margin)


def test_the_gate_tests_each_measure_on_paired_changes_and_holm_adjusts_across_them(files):
    f = files
    base = ctxeval.snapshot(str(f / "qrels.txt"), str(f / "base.run"), ["RR", "nDCG@10", "P@3"])
    rep = ctxeval.gate(
        base, str(f / "qrels.txt"), str(f / "worse.run"), max_drop={"RR": 0.05, "nDCG@10": 0.05, "P@3": 0.2}
    )
    ev_b = ctxeval.evaluate(str(f / "qrels.txt"), str(f / "base.run"), ["RR", "nDCG@10", "P@3"]).runs[0]
    ev_c = ctxeval.evaluate(str(f / "qrels.txt"), str(f / "worse.run"), ["RR", "nDCG@10", "P@3"]).runs[0]
    raw = []
    for m, margin in (("RR", 0.05), ("nDCG@10", 0.05), ("P@3", 0.2)):
        d = ev_c.values[ctxeval.parse_measure(m)] - ev_b.values[ctxeval.parse_measure(m)]
        p = _hall(d, margin)[0]
        assert rep.row(m).p_value == pytest.approx(p, rel=1e-9)
        assert rep.row(m).change == pytest.approx(d.mean(), abs=1e-12)
        raw.append(p)
    # Holm by hand: sorted p times (m - i + 1), running maximum, capped at 1
    order = np.argsort(raw)
    adj = np.empty(3)
    running = 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, (3 - i) * raw[k]))
        adj[k] = running
    assert [rep.row(m).p_adjusted for m in ("RR", "nDCG@10", "P@3")] == pytest.approx(adj.tolist(), rel=1e-12)
    assert rep.exit_code == (1 if any(a < 0.05 for a in adj) else 0)


def test_a_measure_where_lower_is_better_drops_when_it_rises():
    qrels = {f"q{i}": {"a": 5, "b": 1} for i in range(40)}  # b: a distractor on the 1-5 scale
    good = {f"q{i}": {"a": 2.0, "z": 1.0} for i in range(40)}
    bad = {f"q{i}": {"b": 2.0, "a": 1.0} if i % 2 else {"a": 2.0, "z": 1.0} for i in range(40)}
    base = ctxeval.snapshot(qrels, good, ["Harm@2"])
    rep = ctxeval.gate(base, qrels, bad, max_drop="Harm@2=0.01")
    assert rep.row("Harm@2").change > 0 and rep.exit_code == 1


def _markdown_rows(text: str) -> list[dict[str, str]]:
    lines = [x for x in text.splitlines() if x.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(header, [c.strip() for c in x.strip("|").split("|")])) for x in lines[2:]]


def test_markdown_and_junit_read_back(files):
    f = files
    base = ctxeval.snapshot(str(f / "qrels.txt"), str(f / "base.run"), ["RR", "nDCG@10"])
    rep = ctxeval.gate(base, str(f / "qrels.txt"), str(f / "worse.run"), max_drop={"RR": 0.02, "nDCG@10": 0.3})
    rows = {r["measure"].replace("\\", ""): r for r in _markdown_rows(rep.to_markdown())}
    for r in rep.rows:
        md = rows[r.measure]
        assert float(md["change"]) == pytest.approx(r.change, abs=5e-5)
        assert float(md["tolerated drop"]) == r.margin
        assert md["verdict"].strip("*") == r.verdict
        assert int(md["queries"]) == r.n
    # JUnit: parsed with a real XML parser, checked for the elements and attributes its schema requires
    root = ET.fromstring(rep.to_junit().encode())
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    for attr in ("name", "tests", "failures", "errors", "skipped", "time"):
        assert attr in suite.attrib, attr
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases) == 2
    assert all({"name", "classname", "time"} <= set(c.attrib) for c in cases)
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == {r.measure for r in rep.rows if r.verdict == "drop"} and int(suite.get("failures")) == len(failed)
    for c in cases:
        fail = c.find("failure")
        if fail is not None:
            assert fail.get("message") and fail.get("type") == "SignificantDrop"
            assert "SIGNIFICANT DROP" in fail.text
    # JSON: the same rows, the interval against scipy's t
    doc = json.loads(rep.to_json())
    assert doc["exit_code"] == rep.exit_code and [x["measure"] for x in doc["measures"]] == [
        r.measure for r in rep.rows
    ]
    for x, r in zip(doc["measures"], rep.rows):
        assert (x["change"], x["p_value"], x["verdict"]) == (r.change, r.p_value, r.verdict)
        d = (
            ctxeval.evaluate(str(f / "qrels.txt"), str(f / "worse.run"), [r.measure])
            .runs[0]
            .values[ctxeval.parse_measure(r.measure)]
            - ctxeval.evaluate(str(f / "qrels.txt"), str(f / "base.run"), [r.measure])
            .runs[0]
            .values[ctxeval.parse_measure(r.measure)]
        )
        _, lo, hi = _hall(d, r.margin)
        assert x["interval"] == pytest.approx([lo, hi], rel=1e-9)
    # annotations: one workflow command per measure, properties escaped
    lines = rep.to_annotations().splitlines()
    assert len(lines) == 2 and all(
        re.match(r"::(error|warning|notice) title=ctxeval gate%3A [^:]+::", x) for x in lines
    )
    assert any(x.startswith("::error") for x in lines)


def test_the_pytest_helper_fails_with_the_gate_report_and_passes(files):
    f = files
    base = ctxeval.snapshot(str(f / "qrels.txt"), str(f / "base.run"), ["RR"])
    rep = assert_no_regression(base, str(f / "qrels.txt"), str(f / "same.run"), max_drop={"RR": 0.02})
    assert rep.holds
    with pytest.raises(AssertionError) as err:
        assert_no_regression(base, str(f / "qrels.txt"), str(f / "worse.run"), max_drop={"RR": 0.02})
    assert isinstance(err.value, RegressionError) and not err.value.report.holds
    msg = str(err.value)
    assert msg.startswith("ctxeval gate: worse dropped against the baseline base")
    assert re.search(r"RR: SIGNIFICANT DROP: [0-9.]+ -> [0-9.]+, change -[0-9.]+ \(90% interval", msg)
    # and inside a real pytest run, the failure shows the report
    test = f / "test_ranking.py"
    test.write_text(
        "import ctxeval\nfrom ctxeval.testing import assert_no_regression\n"
        f"def test_rerank():\n    base = ctxeval.Baseline.read({str(f / 'b.json')!r})\n"
        f"    assert_no_regression(base, {str(f / 'qrels.txt')!r}, {str(f / 'worse.run')!r}, max_drop={{'RR': 0.02}})\n"
    )
    base.write(f / "b.json")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        capture_output=True,
        text=True,
        cwd=f,
    )
    assert done.returncode == 1 and "RR: SIGNIFICANT DROP" in done.stdout, done.stdout[-2000:]


def test_power_formula_matches_scipy_noncentral_t_and_inverts():
    for n, sd, drop, margin, alpha in [
        (50, 0.2, 0.04, 0.0, 0.05),
        (200, 0.15, 0.03, 0.01, 0.05),
        (500, 0.25, 0.02, 0.0, 0.025),
    ]:
        tc = stats.t.ppf(1 - alpha, n - 1)
        exact = stats.nct.sf(tc, n - 1, (drop - margin) * math.sqrt(n) / sd)
        assert power_at(n, sd, drop, margin, alpha) == pytest.approx(exact, abs=0.005)
        need = needed_queries(sd, drop, margin, alpha, 0.8)
        assert power_at(need, sd, drop, margin, alpha) >= 0.8 > power_at(need - 1, sd, drop, margin, alpha)
        mde = detectable_drop(n, sd, margin, alpha, 0.8)
        assert power_at(n, sd, mde, margin, alpha) == pytest.approx(0.8, abs=1e-6)
    d = np.random.default_rng(1).normal(0, 0.2, 400)
    sd = float(d.std(ddof=1))
    assert simulated_power(d, 100, 0.05, 0.0, 0.05, draws=4000) == pytest.approx(
        power_at(100, sd, 0.05, 0.0, 0.05), abs=0.03
    )


def test_power_command_plans_from_a_candidate(files):
    f = files
    _cli("snapshot", str(f / "qrels.txt"), str(f / "base.run"), "-m", "nDCG@10", "-o", str(f / "b.json"))
    code, out = _cli("power", str(f / "b.json"), str(f / "qrels.txt"), str(f / "worse.run"), "--drop", "0.05")
    assert code == 0 and "observed between base and worse" in out and "bootstrap check" in out, out
    plans = ctxeval.power(str(f / "b.json"), str(f / "qrels.txt"), str(f / "worse.run"), drop=0.05)
    (p,) = plans
    assert p.needed and power_at(p.needed, p.sd, 0.05, 0.0, 0.05) >= 0.8
    code, out = _cli("power", str(f / "b.json"))
    assert code == 0 and "assumed" in out


def _recipe() -> list[str]:
    text = (ROOT / "docs" / "guides" / "ci.md").read_text(encoding="utf-8")
    block = text.split("<!-- ci-recipe -->", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [re.sub(r"\s+#.*$", "", c).strip() for c in block.replace("\\\n", " ").splitlines() if c.strip()]


def test_the_ci_guide_s_recipe_runs_as_written(tmp_path):
    qrels, base, cand = _data(n=80, drop_every=2)
    _write_qrels(tmp_path / "qrels.txt", {q: {"rel": 2, "other": 0} for q in qrels})
    _write_trec(tmp_path / "main.run", base, "main")
    _write_trec(tmp_path / "new.run", base, "new")
    exe = str(Path(sys.executable).with_name("ctxeval"))
    for command in _recipe():
        args = shlex.split(command)
        assert args[0] == "ctxeval"
        done = subprocess.run([exe, *args[1:]], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, (command, done.stdout, done.stderr)
    assert "HOLDS" in done.stdout and (tmp_path / "gate.xml").exists() and (tmp_path / "gate.md").exists()
    _write_trec(tmp_path / "new.run", cand, "new")  # the same recipe on a worse run: exit 1
    done = subprocess.run([exe, *shlex.split(_recipe()[1])[1:]], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "::error title=ctxeval gate%3A nDCG@10::" in done.stdout


def test_one_m_option_may_name_several_measures_as_ir_measures_reads_them(files):
    f = files
    code, out = _cli(
        "evaluate", str(f / "qrels.txt"), str(f / "base.run"), "-m", "nDCG@10 AP(rel = 1)", "--format", "json"
    )
    assert code == 0, out
    assert json.loads(out)["measures"] == ["nDCG@10", "AP"]


def test_rel_sets_the_relevance_level_of_every_measure_that_names_none(tmp_path):
    qrels = {f"q{i}": {"a": 2, "b": 1} for i in range(5)}
    run = {f"q{i}": {"b": 2.0, "a": 1.0} for i in range(5)}
    _write_qrels(tmp_path / "q.txt", qrels)
    _write_trec(tmp_path / "r.run", run, "r")
    args = ["evaluate", str(tmp_path / "q.txt"), str(tmp_path / "r.run"), "--format", "json"]
    code, out = _cli(*args, "-l", "2", "-m", "AP RR P(rel=1)@1 nDCG@2")
    assert code == 0, out
    d = json.loads(out)
    assert d["measures"] == ["AP(rel=2)", "RR(rel=2)", "P@1", "nDCG@2"]  # P@1 named its own level
    means = d["runs"][0]["aggregate"]
    assert means["RR(rel=2)"] == 0.5 and means["AP(rel=2)"] == 0.5 and means["P@1"] == 1.0
    ev = ctxeval.evaluate(qrels, run, ["nDCG@2"]).runs[0].mean("nDCG@2")
    assert means["nDCG@2"] == pytest.approx(ev)  # graded: -l changes nothing
    code, out = _cli(
        "compare", str(tmp_path / "q.txt"), str(tmp_path / "r.run"), "-l", "2", "--format", "json", "--curve-k", "0"
    )
    assert code == 0 and "AP(rel=2)" in json.loads(out)["measures"], out


def test_all_pairs_compares_every_pair_with_holm_over_all_of_them(files):
    f = files
    runs = [str(f / "base.run"), str(f / "worse.run"), str(f / "same.run")]
    rep = ctxeval.compare(
        str(f / "qrels.txt"), runs, ["RR", "nDCG@10"], stats={"pairs": "all", "test": "t"}, sections={"curves_k": 0}
    )
    got = {(c.run, c.against, str(c.measure)): c for c in rep.comparisons}
    assert set(got) == {
        (r, a, m) for r, a in (("worse", "base"), ("same", "base"), ("same", "worse")) for m in ("RR", "nDCG@10")
    }
    ev = {
        n: ctxeval.evaluate(str(f / "qrels.txt"), str(f / f"{n}.run"), ["RR", "nDCG@10"]).runs[0]
        for n in ("base", "worse", "same")
    }
    raw = {}
    for (r, a, m), c in got.items():
        d = ev[r].values[ctxeval.parse_measure(m)] - ev[a].values[ctxeval.parse_measure(m)]
        assert c.diff == pytest.approx(d.mean(), abs=1e-12)
        p = stats.ttest_rel(ev[r].values[ctxeval.parse_measure(m)], ev[a].values[ctxeval.parse_measure(m)]).pvalue
        raw[(r, a, m)] = 1.0 if math.isnan(p) else p  # scipy: NaN when every difference is 0 (ctxeval: p = 1)
    keys = sorted(raw, key=lambda k: raw[k])
    running, adj = 0.0, {}
    for i, k in enumerate(keys):  # Holm over the 6 comparisons
        running = max(running, min(1.0, (len(keys) - i) * raw[k]))
        adj[k] = running
    for k, c in got.items():
        assert c.p_adjusted == pytest.approx(adj[k], rel=1e-9, abs=1e-15), k
    code, out = _cli(
        "compare",
        str(f / "qrels.txt"),
        *runs,
        "-m",
        "RR",
        "--all-pairs",
        "--curve-k",
        "0",
        "--permutations",
        "200",
        "--resamples",
        "200",
    )
    assert code == 0 and "all pairs" in out and "same vs worse" in out, out
    # the matrix (ranx's view): row − column, antisymmetric, marked by the Holm-adjusted test
    text = rep.to_table(color=False, width=200)
    for m in ("RR", "nDCG@10"):
        block = text.split(f"{m}: row − column", 1)[1]
        rows = {}
        for line in block.splitlines()[4:7]:
            cells = [c.strip() for c in line.strip("│").split("│")]
            rows[cells[0]] = cells[1:]
        names = ["base", "worse", "same"]
        for r in names:
            for j, a in enumerate(names):
                cell = rows[r][j]
                if r == a:
                    assert cell == "—"
                    continue
                d = (ev[r].values[ctxeval.parse_measure(m)] - ev[a].values[ctxeval.parse_measure(m)]).mean()
                assert float(cell.split()[0]) == pytest.approx(d, abs=5e-5), (m, r, a, cell)
                c = got.get((r, a, m)) or got[(a, r, m)]
                sig = c.p_adjusted < 0.05
                assert cell.endswith(("▲", "▼")) == sig and (not sig or cell.endswith("▲") == (d > 0))


def test_judged_labels_are_named_and_people_s_labels_on_a_subset_give_prediction_powered_tests(tmp_path):
    from ctxeval._io.labels import LabelKind, Provenance
    from ctxeval._stats.ppi import ppi_mean

    rng = np.random.default_rng(3)
    n = 120
    human = {f"q{i:03d}": {f"d{j}": int(rng.integers(0, 2)) for j in range(8)} for i in range(n)}
    judged = {q: {d: (g if rng.random() > 0.2 else 1 - g) for d, g in docs.items()} for q, docs in human.items()}
    kind = LabelKind("judged", "binary", provenance=Provenance(judge="llama.cpp", model="SmolLM2-135M"))
    judge_q = ctxeval.Qrels.from_dict(judged, labels=kind)
    subset = {q: human[q] for q in list(human)[:40]}
    base = {q: {f"d{j}": float(rng.random()) for j in range(8)} for q in human}
    cand = {q: {d: s + rng.normal(0, 0.1) for d, s in docs.items()} for q, docs in base.items()}
    snap = ctxeval.snapshot(judge_q, base, ["P@3"], human=subset)
    assert snap.settings["human_labels"]["queries"] == 40 and len(snap.human["P@3"]) == 40
    rep = ctxeval.gate(snap, judge_q, cand, max_drop={"P@3": 0.02}, human=subset)
    assert any("judged by SmolLM2-135M" in n and "include the judge's error" in n for n in rep.notes), rep.notes
    row = rep.row("P@3")
    assert "PPI" in row.method
    ev = {k: ctxeval.evaluate(judge_q, r, ["P@3"]).runs[0].per_query("P@3") for k, r in (("b", base), ("c", cand))}
    hv = {
        k: ctxeval.evaluate(subset, {q: r[q] for q in subset}, ["P@3"]).runs[0].per_query("P@3")
        for k, r in (("b", base), ("c", cand))
    }
    est = ppi_mean({q: ev["c"][q] - ev["b"][q] for q in human}, {q: hv["c"][q] - hv["b"][q] for q in subset}, alpha=0.1)
    assert row.change == pytest.approx(est.mean) and (row.low, row.high) == pytest.approx((est.low, est.high))
    assert row.p_value == pytest.approx(stats.t.cdf((est.mean + 0.02) / est.se, est.df), rel=1e-9)
    # without people's labels the report says the intervals leave the judge's error out
    snap2 = ctxeval.snapshot(judge_q, base, ["P@3"])
    rep2 = ctxeval.gate(snap2, judge_q, cand, max_drop={"P@3": 0.02})
    assert any("not the judge's errors" in n for n in rep2.notes)
    with pytest.raises(ConfigError, match="human labels: the gate has people's labels and the baseline none"):
        ctxeval.gate(snap2, judge_q, cand, human=subset)


def test_the_command_refuses_a_mismatched_baseline_with_exit_2_naming_each_difference(files):
    f = files
    code, _ = _cli("snapshot", str(f / "qrels.txt"), str(f / "base.run"), "-m", "RR", "-o", str(f / "b.json"))
    assert code == 0
    (f / "other.txt").write_text((f / "qrels.txt").read_text().replace("q001 0 rel 1", "q001 0 rel 0"))
    code, out = _cli("gate", str(f / "b.json"), str(f / "other.txt"), str(f / "same.run"), "--missing", "ignore")
    assert code == 2, out
    assert re.search(r"labels\.sha256: [0-9a-f]{64} in the baseline, [0-9a-f]{64} now", out), out
    assert "settings.missing: zero in the baseline, ignore now" in out and "Traceback" not in out, out
    code, out = _cli("gate", str(f / "b.json"), str(f / "qrels.txt"), str(f / "same.run"))
    assert code == 0, out  # the same labels and settings: accepted


def _nct_power(n: int, sd: float, drop: float, margin: float, alpha: float) -> float:
    """Exact power of the one-sided paired t-test: scipy's noncentral t."""
    return float(stats.nct.sf(stats.t.ppf(1 - alpha, n - 1), n - 1, (drop - margin) * math.sqrt(n) / sd))


def test_the_report_says_whether_the_queries_are_enough_as_scipy_s_noncentral_t_does(files):
    f = files
    base = ctxeval.snapshot(str(f / "qrels.txt"), str(f / "base.run"), ["RR", "nDCG@10"])
    rep = ctxeval.gate(base, str(f / "qrels.txt"), str(f / "worse.run"), max_drop={"RR": 0.05, "nDCG@10": 0.3})
    ev = {
        n: ctxeval.evaluate(str(f / "qrels.txt"), str(f / f"{n}.run"), ["RR", "nDCG@10"]).runs[0]
        for n in ("base", "worse")
    }
    for m, margin in (("RR", 0.05), ("nDCG@10", 0.3)):
        r = rep.row(m)
        d = ev["worse"].values[ctxeval.parse_measure(m)] - ev["base"].values[ctxeval.parse_measure(m)]
        sd, n, a = float(np.std(d, ddof=1)), len(d), 0.05 / 2  # Holm's first step over 2 measures
        assert r.detect == 2 * margin
        # the smallest drop caught 80 % of the time, and the fewest queries that catch twice the margin
        assert _nct_power(n, sd, r.detectable, margin, a) == pytest.approx(0.8, abs=0.005)
        # (the gate's power is a close approximation to the noncentral t: within half a point here)
        assert _nct_power(r.needed, sd, r.detect, margin, a) >= 0.795
        assert _nct_power(r.needed - 1, sd, r.detect, margin, a) < 0.805
        assert r.enough == (n >= r.needed)
    assert not rep.row("RR").enough and rep.row("nDCG@10").enough  # 60 queries: 0.1 is too small, 0.6 is not
    md = {x["measure"]: {k: v.replace("\\", "") for k, v in x.items()} for x in _markdown_rows(rep.to_markdown())}
    assert md["RR"]["large enough to tell?"].startswith("60 queries catch a drop of")
    assert "too few to tell a drop of 0.1" in md["RR"]["large enough to tell?"]
    assert "enough to tell a drop of 0.6" in md["nDCG@10"]["large enough to tell?"]


def _sample_set(path: Path, qrels: dict, run: dict) -> Path:
    """One sample per query: the run's ranking as retrieved ids, the relevant docs as reference ids."""
    rows = [
        {
            "query_id": q,
            "retrieved_ids": [d for d, _ in sorted(docs.items(), key=lambda x: -x[1])],
            "reference_ids": [d for d, g in qrels[q].items() if g > 0],
        }
        for q, docs in run.items()
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_snapshot_gate_and_power_read_one_sample_set_as_the_run_and_its_references(tmp_path):
    qrels, base, cand = _data(drop_every=2)
    main_set = _sample_set(tmp_path / "main.jsonl", qrels, base)
    new_set = _sample_set(tmp_path / "new.jsonl", qrels, cand)
    snap = ctxeval.snapshot(samples=str(main_set), measures=["RR"])
    assert snap.run == "main" and snap.values["RR"].tolist() == [
        1.0 / (sorted(base[q], key=lambda d: -base[q][d]).index("rel") + 1) for q in snap.queries
    ]
    rep = ctxeval.gate(snap, samples=str(new_set), max_drop={"RR": 0.02})
    d = np.array([rep_c - rep_b for rep_b, rep_c in zip(snap.values["RR"], _rr(cand, snap.queries))])
    assert rep.row("RR").p_value == pytest.approx(_hall(d, 0.02)[0], rel=1e-9)
    assert rep.exit_code == 1
    (plan,) = ctxeval.power(snap, samples=str(new_set), drop=0.05)
    assert plan.sd == pytest.approx(float(np.std(d, ddof=1))) and "observed between main and new" in plan.sd_source
    snap.write(tmp_path / "b.json")
    code, out = _cli("power", str(tmp_path / "b.json"), "--samples", str(new_set), "--drop", "0.05")
    assert code == 0 and "observed between main and new" in out, out
    code, out = _cli("gate", str(tmp_path / "b.json"), "--samples", str(new_set), "--max-drop", "RR=0.02")
    assert code == 1 and "SIGNIFICANT DROP" in out.upper(), out
    code, out = _cli("power", str(tmp_path / "b.json"), "--samples")
    assert code == 2 and "--samples needs one sample set" in out, out


def _rr(run: dict, queries: list[str]) -> list[float]:
    """Reciprocal rank of the one relevant doc ('rel'), by hand."""
    return [1.0 / (sorted(run[q], key=lambda d: -run[q][d]).index("rel") + 1) for q in queries]


def test_the_same_judgments_read_from_elsewhere_pass_and_an_older_baseline_s_label_origin_is_ignored(files):
    f = files
    base = ctxeval.snapshot(str(f / "qrels.txt"), str(f / "base.run"), ["RR"])
    (f / "elsewhere").mkdir()
    (f / "elsewhere" / "judgments.txt").write_text((f / "qrels.txt").read_text())
    assert ctxeval.gate(base, str(f / "elsewhere" / "judgments.txt"), str(f / "same.run")).holds
    base.write(f / "b.json")
    doc = json.loads((f / "b.json").read_text())
    doc["settings"]["labels"] = {**doc["settings"].get("labels", {}), "origin": "qrels /old/place/qrels.txt"}
    (f / "old.json").write_text(json.dumps(doc))
    assert ctxeval.gate(str(f / "old.json"), str(f / "qrels.txt"), str(f / "same.run")).holds
