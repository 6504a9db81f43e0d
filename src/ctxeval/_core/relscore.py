"""Relative retrieval scores: the one definition shared by the evaluation and the serving-time selector.

Pure numpy (no polars, no evaluation machinery), so that :class:`ctxeval.ContextSelector` can import it
in a serving process.

A passage's *relative score* places its score within the range of its own query's candidate list:

* ``(s - s_min) / (s_max - s_min)`` over the list's scores;
* ``1.0`` for every passage of a list whose scores are all equal (one candidate, or a flat list).

So a relative score lies in [0, 1], the top-scored passage has 1.0 and the lowest 0.0, and it is the
same under any increasing affine change of a run's scores (``a * s + b``, ``a > 0``): the unit and the
origin of a retriever's scores say nothing about how close a passage came to the top.

Why neither an absolute threshold nor ``s / s_max``: the seed's own story is a distractor rule with an
absolute cut (score >= 0.5) on a ranking profile whose scores lived near 0.03 (reciprocal-rank fusion):
it flagged nothing, and the run read SAFE with 67 % of its top 5 distractors. ``s / s_max`` cures the
scale but not the origin: dense retrievers' cosine scores sit in a narrow band far from 0 (on TREC DL
the lowest ``s / s_max`` of a top 100 is 0.86 for a dense run, 0.27 for BM25), so "within 70 % of the
top score" held for every passage of the dense run and none of the signal was left. The position
within the list's own range reads the same on every retriever.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RELATIVE_SCORE_RULE", "relative_scores", "relative_scores_one"]

#: the rule in one line, for reports and policy files
RELATIVE_SCORE_RULE = "(s - s_min) / (s_max - s_min) over the query's candidate list; all equal: 1.0"


def relative_scores(r_off: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Relative score of every row, per query segment ``[r_off[i], r_off[i+1])``.

    ``rel = (s - s_min) / (s_max - s_min)`` over the segment; a segment whose scores are all equal gets
    1.0 everywhere. Empty segments are allowed. Every row
    gets the same float as when its segment is passed alone (``r_off = [0, n]``): the evaluation and
    :class:`ctxeval.ContextSelector` agree to the last bit.

    RRF-like scores, a list with a negative score, an empty list, a flat list, and the first list's
    scores after ``s -> 100 * s + 7`` (the same relative scores):

    >>> off = np.array([0, 3, 6, 6, 8, 11])
    >>> s = np.array([0.033, 0.0165, 0.0311, 2.0, 0.0, -2.0, 5.0, 5.0, 10.3, 8.65, 10.11])
    >>> relative_scores(off, s).round(4).tolist()
    [1.0, 0.0, 0.8848, 1.0, 0.5, 0.0, 1.0, 1.0, 1.0, 0.0, 0.8848]
    """
    off = np.asarray(r_off, dtype=np.int64)
    s = np.asarray(scores, dtype=np.float64)
    if (
        off.ndim != 1
        or off.size == 0
        or s.ndim != 1
        or off[0] != 0
        or off[-1] != s.size
        or bool(np.any(np.diff(off) < 0))
    ):
        raise ValueError("relative_scores: r_off must be non-decreasing offsets from 0 to len(scores)")
    lengths = np.diff(off)
    nonempty = lengths > 0
    starts = off[:-1][nonempty]
    out = np.empty(s.size, dtype=np.float64)
    if s.size == 0:
        return out
    smax = np.maximum.reduceat(s, starts)
    smin = np.minimum.reduceat(s, starts)
    flat = smax == smin
    scale = smax - smin
    scale[flat] = 1.0  # overwritten below; avoids 0/0
    reps = lengths[nonempty]
    np.subtract(s, np.repeat(smin, reps), out=out)
    np.divide(out, np.repeat(scale, reps), out=out)
    out[np.repeat(flat, reps)] = 1.0
    return out


def relative_scores_one(scores: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Relative scores of one query's candidate list (``float64[n]``, n >= 1), at positions ``rows``
    (default: all). The same floats as :func:`relative_scores` with ``r_off = [0, n]`` (the same IEEE
    operations on the same values), without the segment bookkeeping: the serving-time path.

    >>> relative_scores_one(np.array([2.0, 0.0, -2.0]), np.array([2, 0])).tolist()
    [0.0, 1.0]
    """
    s = np.asarray(scores, dtype=np.float64)
    smax = s.max()
    smin = s.min()
    picked = s if rows is None else s[rows]
    if smax == smin:
        return np.ones(picked.size, dtype=np.float64)
    return (picked - smin) / (smax - smin)
