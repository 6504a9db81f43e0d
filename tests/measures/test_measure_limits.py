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
