"""BM25 over chunk texts, in numpy: the offline retriever of ``ctxeval chunking``.

Okapi BM25 as Lucene scores it (``BM25Similarity``; Robertson et al., "Okapi at TREC-3", 1994): for a
query q and a chunk c,

    score(q, c) = Σ_{t ∈ q} idf(t) · tf(t, c) / (tf(t, c) + k1 · (1 − b + b · |c| / avgdl)),
    idf(t) = ln(1 + (N − n_t + 0.5) / (n_t + 0.5)),

with N the chunks, n_t the chunks holding t, |c| the chunk's terms and avgdl their mean; k1 = 1.2,
b = 0.75 (Lucene's defaults). As in Lucene 8 and later, and bm25s' ``method="lucene"`` (whose scores
these are), without the classic constant factor (k1 + 1), which changes no ranking. A query term given twice
counts twice. Terms: lowercase runs of word characters (the regex ``\\w+``), no stemming, no stop
words; the same rule for chunks and queries. Ties are broken by the chunk's row in the table
(documents by id, chunks in document order), so a ranking is the same bytes on every machine.

>>> index = BM25(["the cat sat", "the dog sat down", "a cat and a dog"])
>>> index.search("cat", 3)
(array([0, 2]), array([0.2379..., 0.1938...]))
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

__all__ = ["BM25"]

_TERMS = re.compile(r"\w+")


def terms(text: str) -> list[str]:
    """The terms of a text (see the module docstring)."""
    return _TERMS.findall(text.lower())


class BM25:
    """An index of ``texts`` (see the module docstring); :meth:`search` ranks them for a query."""

    def __init__(self, texts: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        vocab: dict[str, int] = {}
        rows, cols = [], []
        lengths = np.zeros(len(texts), dtype=np.float64)
        for i, text in enumerate(texts):
            ts = terms(text)
            lengths[i] = len(ts)
            for t in ts:
                rows.append(i)
                cols.append(vocab.setdefault(t, len(vocab)))
        self.vocab = vocab
        self.n = len(texts)
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
        # (term, chunk) pairs with their counts, grouped by term: the postings
        key = np.unique(c * max(self.n, 1) + r, return_counts=True)
        term, chunk = np.divmod(key[0], max(self.n, 1))
        tf = key[1].astype(np.float64)
        self.post_off = np.r_[0, np.cumsum(np.bincount(term, minlength=len(vocab)))].astype(np.int64)
        self.post_chunk = chunk
        df = np.diff(self.post_off).astype(np.float64)
        self.idf = np.log1p((self.n - df + 0.5) / (df + 0.5))
        avgdl = float(lengths.mean()) if self.n and lengths.sum() else 1.0
        norm = k1 * (1.0 - b + b * lengths / avgdl)
        self.post_weight = tf / (tf + norm[chunk]) * self.idf[term]

    def scores(self, query: str) -> np.ndarray:
        """Every chunk's score for ``query`` (float64[N])."""
        out = np.zeros(self.n, dtype=np.float64)
        for t in terms(query):
            j = self.vocab.get(t)
            if j is None:
                continue
            lo, hi = self.post_off[j], self.post_off[j + 1]
            np.add.at(out, self.post_chunk[lo:hi], self.post_weight[lo:hi])
        return out

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the (at most) ``k`` best chunks with a positive score, best first (ties by
        row), and their scores."""
        s = self.scores(query)
        hits = np.flatnonzero(s > 0)
        order = np.lexsort((hits, -s[hits]))[:k]
        return hits[order], s[hits[order]]
