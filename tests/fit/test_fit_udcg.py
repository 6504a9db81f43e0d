"""Fitting the positional UDCG: the logistic solver, AUC and point-biserial against scipy, planted coefficients, the answers reader and the fit-udcg command."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ctxeval import FormatError, Run, evaluate
from ctxeval._errors import DuplicateError
from distraction_cases import EXAMPLE, sig


def test_logistic_solver_kkt_and_planted_coefficients() -> None:
    from ctxeval._fit_udcg import logistic_fit

    rng = np.random.default_rng(11)
    n = 20000
    X = np.column_stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.integers(0, 2, n), rng.normal(0, 1, n)])
    w_true, b_true = np.array([2.0, -1.5, 0.8, 0.5]), -0.3
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(b_true + X @ w_true)))).astype(float)
    w, b, _ = logistic_fit(X, y, l2=1e-6)
    assert np.max(np.abs(w - w_true)) < 0.12 and abs(b - b_true) < 0.12
    # first-order optimality of the penalised objective: X^T (p - y) + l2 w = 0, 1^T (p - y) = 0
    for l2 in (1e-6, 5.0):
        w, b, _ = logistic_fit(X, y, l2=l2)
        p = 1 / (1 + np.exp(-(b + X @ w)))
        assert abs(np.sum(p - y)) < 1e-6
        assert np.max(np.abs(X.T @ (p - y) + l2 * w)) < 1e-6
    # separable data stays finite under the ridge
    w, b, _ = logistic_fit(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), l2=1.0)
    assert np.all(np.isfinite(w)) and math.isfinite(b)


def test_auc_and_point_biserial_against_scipy() -> None:
    from scipy import stats

    from ctxeval._fit_udcg import auc, point_biserial

    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    s = np.round(rng.normal(size=200) + y, 1)  # rounded: ties across classes
    u = stats.mannwhitneyu(s[y == 1], s[y == 0]).statistic
    assert auc(y, s) == pytest.approx(u / ((y == 1).sum() * (y == 0).sum()))
    assert point_biserial(y, s) == pytest.approx(stats.pointbiserialr(y, s).statistic)


def test_fit_udcg_recovers_planted_coefficients(tmp_path: Path) -> None:
    from ctxeval._fit_udcg import fit_udcg

    rng = np.random.default_rng(2024)
    alpha, beta, bias = np.array([2.0, 1.0, 0.5]), np.array([-2.0, -1.0, -0.5]), -0.5
    umap = {5: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}
    qrels: dict = {}
    runs: dict = {"A": {}, "B": {}}
    lines = ["qid\trun\tcorrect"]
    for qi in range(1500):
        q = f"q{qi:04d}"
        qrels[q] = {}
        for name in runs:
            grades = rng.choice([5, 3, 2, 1], size=3)
            runs[name][q] = {}
            z = bias
            for i, g in enumerate(grades.tolist()):
                d = f"{name}{i}"
                qrels[q][d] = g
                runs[name][q][d] = float(3 - i)
                u = umap[g]
                z += alpha[i] * max(u, 0.0) + beta[i] * max(-u, 0.0)
            lines.append(f"{q}\t{name}\t{int(rng.uniform() < sig(z))}")
    answers = tmp_path / "answers.tsv"
    answers.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run_objs = [Run.from_dict(r, name=n) for n, r in runs.items()]
    res = fit_udcg(qrels, run_objs, answers, 3, folds=3, seed=1, l2=1e-3, utility={"rules": "off"})
    fit = res.fit
    assert np.max(np.abs(np.array(fit["alpha"]) - alpha)) < 0.35
    assert np.max(np.abs(np.array(fit["beta"]) - beta)) < 0.35
    assert abs(fit["bias"] - bias) < 0.35
    assert fit["n_observations"] == 3000 and fit["n_queries"] == 1500
    held = res.report["held_out"]
    # the planted model is the positional one: fitted held-out AUC beats the order-free UDCG's
    assert held["UDCG-pos@3 (fitted)"]["auc"] > held["UDCG@3"]["auc"]
    # the file round-trips into the measure: UDCG-pos equals the fitted model's probability
    path = tmp_path / "fit.json"
    path.write_text(res.fit_json(), encoding="utf-8")
    pos_res = evaluate(qrels, run_objs[0], [f"UDCG-pos(fit='{path}')@3"], utility={"rules": "off"})
    (named,) = pos_res.measures  # named by the fit's content: UDCG-pos(fit='sha256:...')@3
    assert str(named).startswith("UDCG-pos(fit='sha256:")
    q0 = pos_res.runs[0].per_query(named)["q0000"]
    us = [
        umap[g]
        for _, g in sorted(((runs["A"]["q0000"][d], qrels["q0000"][d]) for d in runs["A"]["q0000"]), reverse=True)
    ]
    z = fit["bias"] + sum(a * max(u, 0) + b * max(-u, 0) for a, b, u in zip(fit["alpha"], fit["beta"], us))
    assert q0 == pytest.approx(sig(z))


ANSWERS_ERRORS = [
    ("qid\trun\tcorrect\nq1\tbm25\t1\nq2\tbm25\tmaybe\n", FormatError, r"a.tsv:3: correct 'maybe' is not 0/1"),
    (
        "qid\trun\tcorrect\nq1\tbm25\t1\nq1\tbm25\t0\n",
        DuplicateError,
        r"query 'q1', run 'bm25' has two answers \(lines 2 and 3\)",
    ),
    ("qid\tsystem_x\tcorrect\nq1\tbm25\t1\n", FormatError, "no run column"),
    # comments and blank lines passed over, the header's line named, a column named twice refused
    (
        "# answers\n\nqid,run,correct\nq1, bm25 ,1\nq2,bm25\n",
        FormatError,
        r"a.tsv:5: expected 3 fields as in the header \(line 3\), found 2",
    ),
    ("qid,run,correct,run\nq1,bm25,1,x\n", FormatError, r"a.tsv:1: the header names the column 'run' twice"),
]


@pytest.mark.parametrize(("text", "error", "message"), ANSWERS_ERRORS)
def test_answers_errors(tmp_path: Path, text: str, error: type[Exception], message: str) -> None:
    from ctxeval._io.side import read_answers

    a = tmp_path / "a.tsv"
    a.write_text(text, encoding="utf-8")
    with pytest.raises(error, match=message):
        read_answers(a)


def test_answers_comments_and_spaces(tmp_path: Path) -> None:
    from ctxeval._io.side import read_answers

    a = tmp_path / "a.tsv"
    a.write_text("# answers\nqid,run,correct\nq1, bm25 ,1\n", encoding="utf-8")
    assert read_answers(a).correct == {("bm25", "q1"): 1}


def test_fit_udcg_cli(tmp_path: Path) -> None:
    from ctxeval._cli import cli

    out_path = tmp_path / "fit.json"
    runs = [str(p) for p in sorted((EXAMPLE / "runs").glob("*.run"))]
    res = CliRunner().invoke(
        cli,
        [
            "fit-udcg",
            str(EXAMPLE / "qrels.txt"),
            *runs,
            "--answers",
            str(EXAMPLE / "answers.tsv"),
            "-o",
            str(out_path),
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["n_observations"] == 250 and set(report["held_out"]) == {
        "UDCG-pos@5 (fitted)",
        "UDCG@5",
        "nDCG@5",
        "RA-nWG@5",
    }
    for s in report["held_out"].values():
        assert -1 <= s["r"] <= 1 and 0 <= s["auc"] <= 1 and s["n"] == 250
    fit = json.loads(out_path.read_text())
    assert len(fit["alpha"]) == len(fit["beta"]) == 5
    bad = CliRunner().invoke(
        cli,
        ["fit-udcg", str(EXAMPLE / "qrels.txt"), str(tmp_path / "x.run"), "--answers", str(EXAMPLE / "answers.tsv")],
    )
    assert bad.exit_code == 2 and "ctxeval: error:" in bad.output


def test_llm_threshold_on_the_cli_and_fit_udcg_reads_utilities_as_given(tmp_path: Path) -> None:
    from ctxeval._cli import cli
    from ctxeval._fit_udcg import fit_udcg

    runs = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "rrf")]
    base = [
        "distraction",
        str(EXAMPLE / "qrels.txt"),
        *runs,
        "-k",
        "5",
        "--utilities",
        str(EXAMPLE / "utilities.txt"),
        "--format",
        "json",
    ]
    t0 = json.loads(CliRunner().invoke(cli, [*base, "--llm-threshold", "0"]).output)
    t5 = json.loads(CliRunner().invoke(cli, base).output)
    assert t5["utilities"]["threshold"] == 0.5 and t0["utilities"]["threshold"] == 0.0
    ref0 = evaluate(
        EXAMPLE / "qrels.txt",
        runs,
        ["DistractorRate@5", "UDCG@5"],
        utility={"utilities": EXAMPLE / "utilities.txt", "llm_threshold": 0.0},
    )
    ref5 = evaluate(
        EXAMPLE / "qrels.txt", runs, ["DistractorRate@5", "UDCG@5"], utility={"utilities": EXAMPLE / "utilities.txt"}
    )
    for a, b, r0, r5 in zip(t0["rows"], t5["rows"], ref0.runs, ref5.runs):
        assert a["distractor_rate"] == pytest.approx(r0.mean("DistractorRate@5"))
        assert b["distractor_rate"] == pytest.approx(r5.mean("DistractorRate@5"))
        assert b["distractor_rate"] < a["distractor_rate"]  # junk below 0.5 no longer counts
        assert a["measures"]["UDCG@5"] == b["measures"]["UDCG@5"] == pytest.approx(r5.mean("UDCG@5"))
    bad = CliRunner().invoke(cli, [*base, "--llm-threshold", "1.5"])
    assert bad.exit_code == 2 and "1.5" in bad.output
    # the positional UDCG's features are the LLM utilities as given: the fit does not depend on the threshold
    fits = [
        fit_udcg(
            EXAMPLE / "qrels.txt",
            runs,
            EXAMPLE / "answers.tsv",
            3,
            folds=2,
            utility={"utilities": EXAMPLE / "utilities.txt", "llm_threshold": th},
        ).fit
        for th in (0.0, 0.9)
    ]
    assert (
        fits[0]["alpha"] == fits[1]["alpha"]
        and fits[0]["beta"] == fits[1]["beta"]
        and fits[0]["bias"] == fits[1]["bias"]
    )


def test_fit_and_answers_readers_reject_directories(tmp_path: Path) -> None:
    from ctxeval import CtxevalError
    from ctxeval._io.side import read_answers
    from ctxeval._io.side import read_fit as load_fit

    with pytest.raises(CtxevalError, match=f"{tmp_path}: is a directory, expected a fit JSON file"):
        load_fit(tmp_path)
    with pytest.raises(CtxevalError, match=f"{tmp_path}: is a directory, expected an answers file"):
        read_answers(tmp_path)
