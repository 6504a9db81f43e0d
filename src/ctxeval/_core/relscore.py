"""Relative retrieval scores: the one definition shared by the evaluation and the serving-time selector.

Pure numpy (no polars, no evaluation machinery), so that :class:`ctxeval.ContextSelector` can import it
in a serving process.

A passage's *relative score* places its score within its own query's candidate list:

* ``s / s_max`` when every score of the list is > 0;
* ``(s - s_min) / (s_max - s_min)`` otherwise (some score is <= 0: negative logits, zero scores);
* ``1.0`` for every passage of a list whose scores are all equal (one candidate, or a flat list;
  with all scores > 0 the first rule gives 1.0 as well).

So a relative score lies in [0, 1] and the top-scored passage has 1.0. It is never an absolute
threshold: an absolute cut silently detects nothing when a ranking profile's scores live near 0.03
(reciprocal-rank fusion, RRF), while ``s / s_max`` reads the same on any scale.
"""

from __future__ import annotations

import numpy as np

__all__ = ["relative_scores", "relative_scores_one"]


def relative_scores(r_off: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Relative score of every row, per query segment ``[r_off[i], r_off[i+1])``.

    ``rel = s / s_max`` if all scores of the segment are > 0, else ``(s - s_min) / (s_max - s_min)``;
    a segment whose scores are all equal gets 1.0 everywhere. Empty segments are allowed. Every row
    gets the same float as when its segment is passed alone (``r_off = [0, n]``): the evaluation and
    :class:`ctxeval.ContextSelector` agree to the last bit.

    RRF-like scores (all > 0), a list with a negative score, an empty list, a flat list:

    >>> off = np.array([0, 3, 6, 6, 8])
    >>> relative_scores(off, np.array([0.033, 0.0165, 0.0311, 2.0, 0.0, -2.0, 5.0, 5.0])).round(4).tolist()
    [1.0, 0.5, 0.9424, 1.0, 0.5, 0.0, 1.0, 1.0]
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
    positive = smin > 0
    flat = smax == smin
    shift = np.where(positive, 0.0, smin)
    scale = np.where(positive, smax, smax - smin)
    scale[flat] = 1.0  # overwritten below; avoids 0/0
    reps = lengths[nonempty]
    np.subtract(s, np.repeat(shift, reps), out=out)
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
    if smin > 0:
        return (picked - 0.0) / smax
    return (picked - smin) / (smax - smin)
