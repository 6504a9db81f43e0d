"""ERR's default gmax is the highest grade of the whole qrels, not of the queries a run is evaluated
on, and every report says which value it used (issue 11)."""

from __future__ import annotations

import math

import pytest

import ctxeval

QRELS = {"q1": {"a": 1, "b": 0}, "q2": {"c": 3}}


def test_err_default_gmax_is_the_whole_qrels_and_is_said() -> None:
    # the run retrieves only q1, whose highest grade is 1; gmax is still 3 (q2's grade)
    r = ctxeval.evaluate(QRELS, {"q1": {"a": 2.0, "b": 1.0}}, ["ERR@5"], policies={"missing": "ignore"})
    # hand: R(1) = (2^1 - 1) / 2^3 = 1/8 at rank 1 -> ERR = 1/8
    assert r.runs[0].mean("ERR@5") == pytest.approx(1 / 8)
    assert r.runs[0].mean("ERR@5") == ctxeval.evaluate(
        QRELS, {"q1": {"a": 2.0, "b": 1.0}}, ["ERR(gmax=3)@5"], policies={"missing": "ignore"}
    ).runs[0].mean("ERR(gmax=3)@5")
    assert (
        "ERR@5: gmax = 3, the highest grade of the whole qrels (not of the queries evaluated); "
        "ERR(gmax=N)@k fixes it to the scale's top grade"
    ) in r.notes
    # an explicit gmax needs no note
    r2 = ctxeval.evaluate(QRELS, {"q1": {"a": 2.0}}, ["ERR(gmax=1)@5"], policies={"missing": "ignore"})
    assert r2.notes == [] and r2.runs[0].mean("ERR(gmax=1)@5") == pytest.approx((2**1 - 1) / 2**1)
    assert not math.isnan(r2.runs[0].mean("ERR(gmax=1)@5"))
