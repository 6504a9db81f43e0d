"""evaluate's interval on every figure (issue 32, point 5): scipy's bootstrap and t intervals are the
oracle of each method on its own draws; coverage at nominal 0.95 is checked by simulation on skewed,
zero-inflated and binary per-query values (the full grid, 50-500 queries, is bench/ci_coverage.py);
the intervals reach every output format and to_pandas()."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

import ctxeval
from ctxeval._cli import cli
from ctxeval._stats.summary import CI, summary_intervals

#: per-query values as IR measures give them: binary (P@1, Success@1), zero-inflated (RR, nDCG@10 of hard
#: queries), skewed (AP); each with its true mean
POPULATIONS = {
    "bernoulli(0.2)": (lambda r, s: (r.random(s) < 0.2).astype(float), 0.2),
    "zero-inflated beta": (lambda r, s: np.where(r.random(s) < 0.4, 0.0, r.beta(2, 3, s)), 0.6 * 0.4),
    "beta(0.5, 2)": (lambda r, s: r.beta(0.5, 2, s), 0.2),
}


def coverage(population: str, n: int, method: str, trials: int, resamples: int, seed: int = 7) -> float:
    """The share of ``trials`` intervals (n queries drawn from ``population``) that hold its true mean;
    each block of 250 trials shares one seed of the bootstrap's draws."""
    draw, mu = POPULATIONS[population]
    rng = np.random.default_rng(seed)
    hits = 0
    block = 250
    for b in range(trials // block):
        x = draw(rng, (n, block))
        found = summary_intervals([x[:, j] for j in range(block)], ["mean"] * block, CI(method, 0.95, resamples, b))
        hits += sum(iv is not None and iv[0] <= mu <= iv[1] for iv in found)
    return hits / (trials // block * block)


@pytest.mark.parametrize(
    "n", [50, pytest.param(200, marks=pytest.mark.slow), pytest.param(500, marks=pytest.mark.slow)]
)
@pytest.mark.parametrize("method", ["percentile", "bca", "t"])
@pytest.mark.parametrize("population", list(POPULATIONS))
def test_coverage_at_nominal_95(population: str, method: str, n: int) -> None:
    assert coverage(population, n, method, trials=2000, resamples=1000) >= 0.93


def _scipy(x: np.ndarray, method: str, stat=np.mean, seed: int = 3, resamples: int = 2000) -> tuple[float, float]:
    res = stats.bootstrap(
        (x,), stat, n_resamples=resamples, method=method, confidence_level=0.9, rng=np.random.default_rng(seed)
    )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_bootstrap_intervals_are_scipys(method: str) -> None:
    x = np.random.default_rng(0).beta(0.5, 2, 60)
    cfg = CI(method.lower(), 0.9, 2000, 3)
    mean, gmean, total = summary_intervals([x, x, x], ["mean", "gmean", "sum"], cfg)
    assert mean == pytest.approx(_scipy(x, method), rel=1e-9)
    geo = _scipy(x, method, lambda v, axis=-1: np.exp(np.mean(np.log(np.maximum(v, 1e-5)), axis=axis)))
    assert gmean == pytest.approx(geo, rel=1e-9)
    assert total == pytest.approx(_scipy(x, method, lambda v, axis=-1: np.sum(v, axis=axis)), rel=1e-9)


def test_t_intervals_are_scipys() -> None:
    x = np.random.default_rng(1).beta(2, 5, 40)
    x[[3, 9]] = np.nan  # undefined queries are left out
    v = x[~np.isnan(x)]
    want = stats.t.interval(0.95, v.size - 1, loc=v.mean(), scale=stats.sem(v))
    mean, total, gmean = summary_intervals([x, x, x], ["mean", "sum", "gmean"], CI("t"))
    assert mean == pytest.approx(want, rel=1e-12)
    assert total == pytest.approx(tuple(w * v.size for w in want), rel=1e-12)
    logs = np.log(v)
    geo = stats.t.interval(0.95, v.size - 1, loc=logs.mean(), scale=stats.sem(logs))
    assert gmean == pytest.approx(tuple(math.exp(g) for g in geo), rel=1e-12)
    assert summary_intervals([np.array([0.5])], ["mean"], CI("t")) == [None]  # one query: no interval


QRELS = {f"q{i}": {"a": 1, "b": i % 3} for i in range(30)}
RUN = {f"q{i}": {"a": float(i % 4), "b": 2.0, "c": 1.0} for i in range(30)}


def test_evaluate_puts_an_interval_on_every_figure_in_every_format() -> None:
    cfg = CI("bca", 0.9, 500, 4)
    res = ctxeval.evaluate(QRELS, RUN, ["nDCG@2", "RR", "NumRet", "gm_map"], ci=cfg)
    run = res.runs[0]
    want = summary_intervals([run.values[m] for m in res.measures], [m.spec.aggregate for m in res.measures], cfg)
    assert [run.ci[m] for m in res.measures] == want
    assert res.settings["ci"] == {"method": "bca", "confidence": 0.9, "resamples": 500, "seed": 4}
    as_json = res.to_dict()["runs"][0]["ci"]
    assert as_json == {str(m): list(iv) for m, iv in zip(res.measures, want)}
    frame = res.to_pandas()
    assert frame["ci_low"].tolist() == [iv[0] for iv in want]
    assert frame["ci_high"].tolist() == [iv[1] for iv in want]
    for lo, hi, v in zip(frame["ci_low"], frame["ci_high"], frame["value"]):
        assert lo <= v <= hi


def test_the_command_line_prints_the_method_level_and_seed(tmp_path) -> None:
    from click.testing import CliRunner

    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    run.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in RUN.items() for d, s in docs.items()))
    base = ["evaluate", str(qrels), str(run), "-m", "RR", "--ci", "--seed", "5", "--confidence", "0.9"]
    table = CliRunner().invoke(cli, base).output
    assert "CI [lo, hi]: 90% percentile bootstrap intervals over queries (10000 resamples, seed 5)" in table
    want = ctxeval.evaluate(QRELS, RUN, ["RR"], ci=CI(confidence=0.9, seed=5)).runs[0].ci
    lo, hi = next(iter(want.values()))
    assert f"[{lo:.4f}, {hi:.4f}]" in table
    as_json = json.loads(CliRunner().invoke(cli, [*base, "--format", "json"]).output)
    assert as_json["runs"][0]["ci"] == {"RR": [lo, hi]}
    assert as_json["settings"]["ci"] == {"method": "percentile", "confidence": 0.9, "resamples": 10000, "seed": 5}
    rows = CliRunner().invoke(cli, [*base, "--format", "csv"]).output.splitlines()
    assert rows[0] == "run,query,measure,value,valid_queries,ci_low,ci_high"
    assert rows[1].endswith(f",{lo!r},{hi!r}")
    line = json.loads(CliRunner().invoke(cli, [*base, "--format", "jsonl"]).output.splitlines()[0])
    assert line["ci"] == [lo, hi]
    bad = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "--seed", "5"])
    assert bad.exit_code != 0 and "set the intervals of --ci" in bad.output
