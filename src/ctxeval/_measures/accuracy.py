"""Accuracy: of the (relevant, non-relevant) pairs among the docs a run retrieved, the share it ranks
relevant first, as ir_measures' ``accuracy`` provider computes it (``ir_measures`` 0.4.3 is the
oracle): ``Accuracy@k = 1 − Σ_{relevant d in the top k} (non-relevant docs above d) / (N · R)``, ``R``
the relevant and ``N`` the non-relevant docs of the top k (unjudged docs count as grade 0). A diagnosis
measure (train, validation and test accuracy should match), blind to unretrieved relevant docs. NaN
where the top k holds no relevant doc (ir_measures leaves the query out) or no non-relevant one
(ir_measures divides by zero there and stops).

>>> import ctxeval
>>> res = ctxeval.evaluate({"q": {"a": 1, "b": 1}}, {"q": {"a": 4.0, "x": 3.0, "b": 2.0, "y": 1.0}}, ["Accuracy"])
>>> res.runs[0].mean("Accuracy")  # pairs (a, x) (a, y) (b, y) in order, (b, x) not: 1 - 1 / (2 * 2)
0.75
"""

from __future__ import annotations

import numpy as np

from .._core.evaldata import EvalData
from .._core.segments import rank_among, top_rows
from .base import Family, Measure, register
from .classical import REL

__all__ = ["IR_MEASURES_ACCURACY"]

IR_MEASURES_ACCURACY = "ir_measures 0.4.3 (accuracy provider)"


def _accuracy(d: EvalData, m: Measure) -> np.ndarray:
    k = int(m.cutoff) if m.cutoff is not None else None
    rows, seg, rank = top_rows(d.r_off, k)
    relevant = d.r_grade[rows] >= int(m["rel"])  # an unjudged doc has grade 0, as in ir_measures
    order = rank_among(relevant, seg)  # 1-based among the relevant docs of the query
    n_q = d.n_queries
    n_rel = np.bincount(seg[relevant], minlength=n_q)
    above = np.bincount(seg[relevant], weights=(rank[relevant] - order).astype(np.float64), minlength=n_q)
    n_non = np.bincount(seg, minlength=n_q) - n_rel
    pairs = (n_non * n_rel).astype(np.float64)
    out = np.full(n_q, np.nan)
    np.divide(above, pairs, out=out, where=pairs > 0)
    return np.where(pairs > 0, 1.0 - out, np.nan)


register(
    Family(
        "Accuracy",
        "The share of (relevant, non-relevant) pairs of the retrieved docs ranked relevant first",
        "Accuracy@k = 1 − Σ_{relevant d in the top k} (non-relevant above d) / (N · R), N and R the non-relevant and "
        "relevant docs of the top k; NaN where N · R = 0",
        IR_MEASURES_ACCURACY,
        _accuracy,
        (REL,),  # a perfect run of relevant docs alone has no pair: NaN, not 1
    )
)
