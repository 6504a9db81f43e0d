"""ctxeval chunking's offline retriever: BM25 as Lucene scores it, equal to bm25s' method="lucene" (the
oracle: another implementation of the same formula, with the same terms given to both) on generated
corpora and queries; rankings broken by row; repeated query terms counted as often as given."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxeval._chunking.bm25 import BM25

bm25s = pytest.importorskip("bm25s")
WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]


def _oracle(texts: list[str], query: str) -> np.ndarray:
    index = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    index.index([re.findall(r"\w+", t.lower()) for t in texts], show_progress=False)
    return np.asarray(index.get_scores(re.findall(r"\w+", query.lower())), dtype=np.float64)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=15).map(" ".join), min_size=2, max_size=12),
    st.lists(st.sampled_from([*WORDS, "missing"]), min_size=1, max_size=4).map(" ".join),
)
def test_scores_equal_bm25s_lucene(texts: list[str], query: str) -> None:
    ours = BM25(texts).scores(query)
    np.testing.assert_allclose(ours, _oracle(texts, query), rtol=2e-6, atol=1e-7)  # bm25s keeps float32


def test_search_ranks_by_score_then_row_and_leaves_out_zeros() -> None:
    texts = ["beta gamma", "alpha beta", "alpha beta", "delta", "alpha alpha beta"]
    rows, scores = BM25(texts).search("alpha", 10)
    assert rows.tolist() == [4, 1, 2] and scores[1] == scores[2] and scores[0] > scores[1]
    assert BM25(texts).search("nothing here", 3)[0].size == 0


def test_a_repeated_query_term_counts_twice_and_case_is_ignored() -> None:
    index = BM25(["Alpha beta", "gamma"])
    np.testing.assert_allclose(index.scores("alpha alpha"), 2 * index.scores("ALPHA"))
