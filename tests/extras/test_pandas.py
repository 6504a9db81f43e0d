"""ctxeval[pandas] alone: pandas frames in, the results as pandas frames out. The values are worked
out by hand below."""

from __future__ import annotations

import pandas as pd
import pytest

import ctxeval

# q1: relevant d1 (grade 1) and d3 (grade 2), retrieved at ranks 1 and 3:
#     AP = (1/1 + 2/3) / 2 = 5/6, P@2 = 1/2
# q2: relevant d2, retrieved at rank 2: AP = (1/2) / 1 = 1/2, P@2 = 1/2
QRELS = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d3", "d2"], "relevance": [1, 2, 1]})
RUN = pd.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["d1", "d2", "d3", "d1", "d2"],
        "score": [0.9, 0.8, 0.7, 0.5, 0.4],
    }
)


def test_frames_in_and_out() -> None:
    result = ctxeval.evaluate(QRELS, ctxeval.Run.from_frame(RUN, name="bm25"), ["AP", "P@2"])
    per_query = result.to_pandas(per_query=True)
    assert isinstance(per_query, pd.DataFrame)
    got = {(r.query, r.measure): r.value for r in per_query.itertuples()}
    assert got == pytest.approx({("q1", "AP"): 5 / 6, ("q2", "AP"): 1 / 2, ("q1", "P@2"): 1 / 2, ("q2", "P@2"): 1 / 2})
    means = result.to_pandas().set_index("measure")["value"]
    assert means["AP"] == pytest.approx((5 / 6 + 1 / 2) / 2)
    assert set(per_query["run"]) == {"bm25"}
