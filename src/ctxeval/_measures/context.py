"""Context measures as RAG toolkits (RAGAS) define them, on ids: how much of the retrieved context is
relevant, weighted by rank, and how much of the reference context was retrieved.

Relevance is ``grade >= rel`` on the qrels (default 1): with samples, the reference ids carry grade 1
unless the samples give grades. Without @k the whole retrieved list counts (RAGAS scores the whole
list it is given).

* ``ContextPrecision@k`` = Σ_{i<=k, chunk i relevant} (relevant chunks in the top i / i) / (relevant
  chunks in the top k); 0 when none of the top k is relevant (RAGAS divides by that count + 1e-10, so
  it reads 0 there too). Unlike AP, the denominator counts the relevant chunks *retrieved*, not all the
  relevant ones: a list holding one relevant chunk at rank 1 scores 1 however many it missed.
* ``ContextRecall@k`` = (relevant chunks in the top k) / (relevant chunks of the query); NA when the
  query has none (RAGAS's ID-based recall divides by the number of reference ids and fails on 0).
"""

from __future__ import annotations

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import ratio
from .base import Family, Measure, register
from .classical import REL, precision_sums, rel_rows

RAGAS = "Es, James, Espinosa-Anke & Schockaert, EACL 2024 (RAGAS); ragas 0.2 context precision / recall"


def _context_precision(d: EvalData, m: Measure) -> np.ndarray:
    mask = rel_rows(d, m)
    found = d.seg_count(mask)
    out = np.zeros(d.n_queries, dtype=np.float64)
    np.divide(precision_sums(d, mask), found, out=out, where=found > 0)
    return out


def _context_recall(d: EvalData, m: Measure) -> np.ndarray:
    return ratio(d.seg_count(rel_rows(d, m)), d.num_rel(m["rel"]))


for fam in (
    Family(
        "ContextPrecision",
        "Rank-weighted precision of the retrieved context (RAGAS)",
        "ContextPrecision@k = Σ_{i≤k, i relevant} (relevant in top i / i) / (relevant in top k); 0 when none "
        "of the top k is relevant",
        RAGAS,
        _context_precision,
        (REL,),
        cutoff="optional",
        group="context",
        aliases=("context_precision",),
    ),
    Family(
        "ContextRecall",
        "Share of the reference context retrieved (RAGAS, ID-based)",
        "ContextRecall@k = (relevant in top k) / (relevant judged); NA when the query has no relevant chunk",
        RAGAS,
        _context_recall,
        (REL,),
        cutoff="optional",
        group="context",
        aliases=("context_recall",),
    ),
):
    register(fam)
