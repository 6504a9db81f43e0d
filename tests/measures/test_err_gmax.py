"""ERR's gmax is the top grade of the qrels' scale, which the user names: it is never taken from the
qrels, where one query's ERR moved from 0.5 to 0.125 when another query, judged on a wider scale, was
added. A query's value depends on its own judgments and the named scale alone."""

from __future__ import annotations

import pytest

import ctxeval
from ctxeval._errors import MeasureError


def test_err_needs_gmax_and_says_why() -> None:
    with pytest.raises(MeasureError) as err:
        ctxeval.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["ERR@5"])
    assert str(err.value).startswith("measure ERR needs gmax: the top grade of the qrels' scale, e.g. ERR(gmax=3)@10")


def test_a_query_s_err_does_not_move_when_another_query_is_added() -> None:
    # q1: its grade-1 doc at rank 1. With gmax = 1: R(1) = (2^1 - 1) / 2^1 = 1/2, ERR = 1/2 (the value the
    # issue saw before q2 came). q2 is judged 3; with the qrels' highest grade as gmax q1 would fall to
    # (2^1 - 1) / 2^3 = 1/8. Named, gmax keeps q1 at 1/2 whatever else is evaluated.
    one = ctxeval.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["ERR(gmax=1)@5"])
    two = ctxeval.evaluate({"q1": {"a": 1}, "q2": {"c": 3}}, {"q1": {"a": 1.0}, "q2": {"c": 1.0}}, ["ERR(gmax=1)@5"])
    assert one.runs[0].per_query("ERR(gmax=1)@5")["q1"] == pytest.approx(1 / 2)
    assert two.runs[0].per_query("ERR(gmax=1)@5")["q1"] == pytest.approx(1 / 2)
    # q2's grade 3 is above gmax: R = 1 (the user stops there)
    assert two.runs[0].per_query("ERR(gmax=1)@5")["q2"] == 1.0
    assert one.notes == [] and two.notes == []


def test_trec_eval_has_no_err() -> None:
    from click.testing import CliRunner

    from ctxeval._cli import cli

    # trec_eval 10.0 and 9.0.8: "trec_eval: illegal measure 'err'", status 1 (recorded: illegal.err in the shared trec_eval folder)
    res = CliRunner().invoke(cli, ["trec_eval", "-m", "err", "q", "r"])
    assert res.exit_code == 1 and "illegal measure 'err'" in res.stderr
