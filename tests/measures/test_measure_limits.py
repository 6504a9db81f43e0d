"""Measure parameters are checked when the name is parsed, before any file is read, and a misspelled
name gets the closest known name."""

from __future__ import annotations

import pytest

import ctxeval


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("RBP(p=1)@10", "parameter p must be < 1, got 1.0"),
        ("RBP(p=0)@10", "parameter p must be > 0, got 0.0"),
        ("RBP(p=1.5)", "parameter p must be < 1, got 1.5"),
        ("rbp_resid(p=-0.1)", "parameter p must be > 0, got -0.1"),
        ("nDGC@10", "unknown measure 'nDGC@10' (did you mean 'nDCG'?)"),
        ("recip_rnk", "unknown measure 'recip_rnk' (did you mean 'recip_rank'?)"),
        ("ndcg_ct.10", "unknown measure 'ndcg_ct.10' (did you mean 'ndcg_cut'?)"),
    ],
)
def test_bad_measures_are_refused_with_a_reason(name: str, message: str) -> None:
    with pytest.raises(ctxeval.MeasureError) as err:
        ctxeval.parse_measure(name)
    assert message in str(err.value)


def test_a_name_far_from_every_measure_gets_no_suggestion() -> None:
    with pytest.raises(ctxeval.MeasureError) as err:
        ctxeval.parse_measure("zzzz@3")
    assert "did you mean" not in str(err.value)


def test_persistence_inside_the_open_interval_is_accepted() -> None:
    assert str(ctxeval.parse_measure("RBP(p=0.5)@10")) == "RBP(p=0.5)@10"


def test_a_bad_measure_is_refused_before_the_files_are_read(tmp_path) -> None:
    # the files do not exist: the measure error must come first
    with pytest.raises(ctxeval.MeasureError):
        ctxeval.evaluate(tmp_path / "no-qrels.txt", tmp_path / "no-run.txt", "RBP(p=1)@10")


def test_err_with_large_grades_is_finite_and_warns_nothing(tmp_path) -> None:
    import math
    import warnings

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 2000\nq1 0 b 1999\nq1 0 c 0\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 b 1 3 t\nq1 Q0 a 2 2 t\nq1 Q0 c 3 1 t\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = ctxeval.evaluate(qrels, run, "ERR(gmax=2000)@3").runs[0].mean("ERR(gmax=2000)@3")
    # gmax = 2000: R(1999) = 2^-1 - 2^-2000 = 0.5, R(2000) = 1 - 2^-2000 = 1 (in doubles);
    # ERR = 1/1 * 0.5 + 1/2 * (1 - 0.5) * 1 = 0.75
    assert math.isfinite(value)
    assert value == pytest.approx(0.75, abs=1e-15)


def test_err_is_unchanged_for_ordinary_grades(tmp_path) -> None:
    # R(g) = (2^g - 1) / 2^gmax with gmax = 3: R(3) = 7/8, R(1) = 1/8
    # ERR@3 for grades 1, 3, 0 = 1/1 * 1/8 + 1/2 * (7/8) * (7/8) = 0.125 + 0.3828125
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 3\nq1 0 b 1\nq1 0 c 0\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 b 1 3 t\nq1 Q0 a 2 2 t\nq1 Q0 c 3 1 t\n")
    got = ctxeval.evaluate(qrels, run, "ERR(gmax=3)@3").runs[0].mean("ERR(gmax=3)@3")
    assert got == 0.125 + 0.5 * (7 / 8) * (7 / 8)


def test_err_with_a_grade_above_gmax_stops_the_user_there(tmp_path) -> None:
    # gmax = 1: grade 3 gives R = 1 (clipped): ERR = 1/1 * 1 and nothing below is reached
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 3\nq1 0 b 1\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\n")
    assert ctxeval.evaluate(qrels, run, "ERR(gmax=1)@2").runs[0].mean("ERR(gmax=1)@2") == 1.0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("1:10000000", "cutoffs must lie in 1..100000, got 10000000 (in '1:10000000')"),
        ("1:5000", "'1:5000' gives 5000 cutoffs, more than a curve needs (at most 1000); give a step, e.g. 1:5000:5"),
        ("3000", "'3000' gives 3000 cutoffs"),
    ],
)
def test_a_curve_too_long_to_compute_is_refused_at_once(spec: str, message: str) -> None:
    from ctxeval._curve import parse_ks

    with pytest.raises(ctxeval.ConfigError) as err:
        parse_ks(spec)
    assert message in str(err.value)


def test_the_suggested_step_is_accepted() -> None:
    from ctxeval._curve import parse_ks

    ks = parse_ks("1:5000:5")
    assert (len(ks), ks[0], ks[-1]) == (1000, 1, 4996)
