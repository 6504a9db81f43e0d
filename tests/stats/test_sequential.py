"""Labelling that stops when the decision is settled: the confidence sequence against a brute-force
computation of its martingale, its error over simulated A/A comparisons at every look (real DL19 /
DL20 changes where the data is there, else generated), the decisions, and UntilDecided with people's
labels on planted truth and through ``judge grade --until-decided``.

(``bench/sequential.py`` runs the full check: 10,000 A/A comparisons, and the queries saved against
``ctxeval power``'s plan at power 0.8 on every ordered pair of real runs.)"""

from __future__ import annotations

import glob
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxeval
from ctxeval._cli import cli
from ctxeval._demo import example_path
from ctxeval._stats.sequential import Rule, decide, first_decision, t_mixture_cs
from shared_data import shared_folder


def _martingale(x: np.ndarray, mu: float, c2: float) -> float:
    """Lai's mixture, computed directly: sqrt(c2/(n+c2)) (1 - S^2/((n+c2) V))^(-n/2)."""
    y = x - mu
    n, s, v = len(y), float(y.sum()), float((y * y).sum())
    return math.sqrt(c2 / (n + c2)) * (1.0 - s * s / ((n + c2) * v)) ** (-n / 2.0)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1, 1, allow_nan=False), min_size=4, max_size=40),
    st.sampled_from([0.01, 0.05, 0.1]),
    st.integers(2, 200),
)
def test_the_ends_are_where_the_martingale_reaches_one_over_alpha(xs: list[float], alpha: float, tuned: int) -> None:
    x = np.array(xs)
    lo, hi = t_mixture_cs(x, alpha, tuned)
    c2 = tuned / (2 * math.log(1 / alpha) + 1)
    for n in range(2, len(x) + 1):
        if not np.isfinite(lo[n - 1]) or np.ptp(x[:n]) < 1e-6:
            continue
        for end in (lo[n - 1], hi[n - 1]):
            assert _martingale(x[:n], end, c2) == pytest.approx(1 / alpha, rel=1e-6)
        mid = x[:n].mean()
        assert _martingale(x[:n], mid, c2) < 1 / alpha  # the mean is inside


def _population() -> list[np.ndarray]:
    """Per-query nDCG@10 changes between the real DL19 runs (all pairs), else generated ones."""
    data = shared_folder()
    if data is not None and (data / "real" / "dl19" / "runs").is_dir():
        runs = sorted(glob.glob(str(data / "real" / "dl19" / "runs" / "*.txt")))
        qrels = str(data / "real" / "dl19" / "qrels.dl19-passage.txt")
        res = ctxeval.evaluate(qrels, [f"r{i}={p}" for i, p in enumerate(runs)], ["nDCG@10"])
        per = [np.array(list(r.per_query("nDCG@10").values())) for r in res.runs]
        return [b - a for i, a in enumerate(per) for b in per[i + 1 :]]
    rng = np.random.default_rng(0)
    return [np.clip(rng.normal(0, 0.2, 43) * rng.random(43), -1, 1) for _ in range(10)]


def test_the_error_stays_under_alpha_at_every_look_over_4000_aa_comparisons() -> None:
    """A/A: the changes' signs flipped at random (true mean 0), 150 looks each; the share of
    comparisons decided wrongly by look n stays under alpha for every n (the t-test read after every
    query exceeds it several times over on the same draws)."""
    pop = _population()
    rng = np.random.default_rng(7)
    looks, reps = 150, 4000
    x = np.empty((reps, looks))
    for i in range(reps):
        d = pop[i % len(pop)]
        x[i] = d[rng.integers(0, d.size, looks)] * rng.choice([-1.0, 1.0], looks)
    for rule in (Rule("compare", 0.05), Rule("gate", 0.05), Rule("compare", 0.1)):
        stop, code = first_decision(x, rule, tuned_for=40)
        wrong = (code != 0) & (code != 2) if rule.kind == "compare" else code == -1
        by_look = np.array([np.mean(wrong & (stop <= n)) for n in range(1, looks + 1)])
        assert by_look.max() <= rule.alpha, (rule, by_look.max())
    n = np.arange(1, looks + 1)
    mean = np.cumsum(x, axis=1) / n
    sd = np.sqrt(np.maximum(np.cumsum(x * x, axis=1) - n * mean**2, 0) / np.maximum(n - 1, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        naive = (np.abs(mean) * np.sqrt(n) / sd > 1.96) & (n >= 5)
    assert naive.any(axis=1).mean() > 3 * 0.05


def test_the_decisions() -> None:
    assert decide(0.001, 0.3, Rule()) == "better" and decide(-0.3, -0.001, Rule()) == "worse"
    assert decide(-0.04, 0.04, Rule(effect=0.05)) == "no difference" and decide(-0.06, 0.04, Rule(effect=0.05)) is None
    assert (
        decide(-0.3, -0.03, Rule("gate", margin=0.02)) == "fail"
        and decide(-0.3, -0.01, Rule("gate", margin=0.02)) is None
    )
    assert Rule("gate", 0.05).level == 0.1 and Rule("compare", 0.05).level == 0.05


def _planted(n: int = 60, seed: int = 3) -> tuple[dict, dict, dict]:
    """People's labels and two runs: the candidate puts the relevant doc first on 70 % of the queries,
    the baseline on 30 %."""
    rng = random.Random(seed)
    qrels, base, cand = {}, {}, {}
    for i in range(n):
        q = f"q{i:02d}"
        docs = [f"{q}d{j}" for j in range(5)]
        qrels[q] = {docs[0]: 1}
        base[q] = {d: float(rng.random()) for d in docs}
        cand[q] = {d: float(rng.random()) for d in docs}
        base[q][docs[0]] = 2.0 if rng.random() < 0.3 else -1.0
        cand[q][docs[0]] = 2.0 if rng.random() < 0.7 else -1.0
    return qrels, base, cand


def test_until_decided_with_peoples_labels_stops_early_on_planted_truth() -> None:
    qrels, base, cand = _planted()
    plan = ctxeval.UntilDecided(base, cand, measure="P@1", seed=1)
    asked = []
    for q in plan:
        asked.append(q)
        assert set(plan.pool(q)) <= set(base[q]) | set(cand[q])
        plan.add(q, {d: qrels[q].get(d, 0) for d in plan.pool(q)})  # people grade every pooled doc
    done = plan.result()
    assert done.decision == "better" and done.labelled == len(asked) < 60
    assert done.low > 0 and done.saved == done.pairs_total - done.pairs_labelled > 0
    # the interval it stopped on is the confidence sequence of the changes seen, recomputed here
    d = np.array(
        [int(max(cand[q], key=cand[q].get) in qrels[q]) - int(max(base[q], key=base[q].get) in qrels[q]) for q in asked]
    )
    lo, hi = t_mixture_cs(d, 0.05, 30)
    assert (done.low, done.high) == pytest.approx((lo[-1], hi[-1]))
    same = ctxeval.UntilDecided(base, base, measure="P@1", seed=1)
    for q in same:
        same.add(q, qrels[q])
    assert same.result().decision is None and same.result().labelled == 60  # never settled: all labelled


def test_judge_grade_until_decided_on_the_bundled_example(tmp_path: Path) -> None:
    runs = [str(example_path(f"runs/{n}.run")) for n in ("bm25", "rrf-rerank")]
    args = ["judge", "grade", *runs, "--queries", str(example_path("queries.jsonl")), "--passages",
            str(example_path("passages.jsonl")), "--judge", "lexical", "--depth", "10", "--until-decided", "--cache",
            str(tmp_path / "c.sqlite"), "--report", str(tmp_path / "r.json"), "-o", str(tmp_path / "j.qrels")]  # fmt: skip
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    rep = json.loads((tmp_path / "r.json").read_text())["until_decided"]
    assert "until decided (compare, nDCG@10, anytime-valid at alpha 0.05)" in done.stderr
    written = {ln.split()[0] for ln in (tmp_path / "j.qrels").read_text().splitlines()}
    assert len(written) == rep["queries_labelled"] - rep["queries_skipped"] <= rep["queries"]
    assert rep["pairs_saved"] == rep["pairs_total"] - rep["pairs_labelled"]
    one = CliRunner().invoke(cli, [*args[:3], *args[4:]])
    assert one.exit_code == 2 and "--until-decided decides about two runs" in one.output
