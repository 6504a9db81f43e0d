"""Relative scores (the selector's and the detection rules' min-max within a query's list)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ctxeval._context.utility import UtilityConfig
from ctxeval._core.extras import WHY_LABEL, WHY_SCORE
from ctxeval._core.relscore import relative_scores
from distraction_cases import rows_for

# --- relative scores ------------------------------------------------------------------------------------


def test_relative_score_rrf_like_scores_near_003() -> None:
    # RRF scores: 1/(60+1) + 1/(60+1), 1/(60+1) + 1/(60+3), 1/(60+2), 1/(60+40)
    s = [2 / 61, 1 / 61 + 1 / 63, 1 / 62, 1 / 100]
    rel = relative_scores(np.array([0, 4]), np.array(s))
    lo, span = 1 / 100, 2 / 61 - 1 / 100
    assert rel.tolist() == pytest.approx([1.0, (1 / 61 + 1 / 63 - lo) / span, (1 / 62 - lo) / span, 0.0])
    assert rel.round(4).tolist() == [1.0, 0.9772, 0.269, 0.0]
    # an absolute threshold of 0.7 flags nothing at this scale; the relative rule flags ranks 1-2
    assert not any(x >= 0.7 for x in s)
    qrels = {"q": {"x": 2}}  # one judged non-relevant doc, at rank 4; the rest unjudged
    run = {"q": {"a": s[0], "b": s[1], "c": s[2], "x": s[3]}}
    _, rows = rows_for(qrels, run, UtilityConfig.resolve(rules="default", top_rank=0))
    assert rows.why.tolist() == [WHY_SCORE, WHY_SCORE, WHY_LABEL, WHY_LABEL]
    assert rows.u.tolist() == [-0.5, -0.5, 0.0, 0.0]


def test_relative_score_negative_and_mixed_scores() -> None:
    off = np.array([0, 3, 6, 8, 10, 11])
    s = np.array([-1.0, -2.0, -5.0, 2.0, 0.0, -2.0, 0.5, 0.5, -3.0, -3.0, 7.0])
    # query 0: all <= 0 -> min-max: (-1+5)/4, (-2+5)/4, 0;  query 1: a zero -> min-max: 1, 0.5, 0;
    # query 2: equal -> 1, 1;  query 3: all equal, negative -> 1, 1;  query 4: single row -> 1
    assert relative_scores(off, s).tolist() == [1.0, 0.75, 0.0, 1.0, 0.5, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]


@given(
    st.lists(st.lists(st.floats(-50, 50, allow_nan=False), min_size=0, max_size=6), min_size=1, max_size=5),
    st.floats(0.01, 100),
)
def test_relative_score_invariants(segs: list[list[float]], c: float) -> None:
    off = np.r_[0, np.cumsum([len(x) for x in segs])].astype(np.int64)
    s = np.array([v for x in segs for v in x], dtype=np.float64)
    rel = relative_scores(off, s)
    assert np.all((rel >= -1e-12) & (rel <= 1 + 1e-12))
    for i, x in enumerate(segs):
        if not x:
            continue
        r = rel[off[i] : off[i + 1]]
        assert r[int(np.argmax(x))] == pytest.approx(1.0)  # the best-scored row of a query is 1
        order = np.argsort(x, kind="stable")
        assert np.all(np.diff(r[order]) >= -1e-12)  # monotone in the score
        if max(x) > min(x):
            assert r.tolist() == pytest.approx([(v - min(x)) / (max(x) - min(x)) for v in x])
            assert r[int(np.argmin(x))] == 0.0  # the lowest-scored row is 0
    # any increasing affine change of the scores changes nothing (a relative rule, never an absolute one),
    # as long as the change keeps distinct scores distinct in floating point (no spread near the last bit)
    assume(all(max(x) == min(x) or max(x) - min(x) > 1e-6 for x in segs if x))
    assert relative_scores(off, s * c) == pytest.approx(rel, abs=1e-9)
    assert relative_scores(off, s * c + 3.5 * c) == pytest.approx(rel, abs=1e-6)
