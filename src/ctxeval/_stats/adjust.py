"""Adjusted p-values for a family of tests (multiple comparisons).

Corrections of m p-values (NaN p-values are not counted in m and stay NaN): **Holm** (1979) step-down,
p_(i) ← max_{j≤i} min(1, (m − j + 1) p_(j)); **Bonferroni** min(1, m p); **Benjamini–Hochberg** (1995)
step-up, p_(i) ← min_{j≥i} min(1, m p_(j) / j); **none**.

A family is any set of tests: :func:`adjust_pvalues` takes an array (NaN entries are not tests),
:func:`adjust_family` a mapping from any key (a run, a baseline, a measure, a stratum) to a p-value, so
several baselines, runs and measures can form one family.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TypeVar

import numpy as np

from .._errors import ConfigError

__all__ = ["CORRECTIONS", "CORRECTION_NAMES", "adjust_family", "adjust_pvalues"]

#: the adjustments, by the name compare's ``correction`` setting takes
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "no correction"}

K = TypeVar("K", bound=Hashable)


def adjust_pvalues(p: np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values for the family of all non-NaN entries of ``p``.

    >>> adjust_pvalues(np.array([0.01, 0.04, 0.03]), "holm").round(6).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues(np.array([0.01, 0.04, 0.03]), "bh").round(6).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in CORRECTIONS:
        raise ConfigError(f"correction must be one of {', '.join(CORRECTIONS)}, got {method!r}")
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if m == 0:
        return out
    v = p[ok]
    if method == "none":
        adj = v.copy()
    elif method == "bonferroni":
        adj = np.minimum(1.0, v * m)
    else:
        order = np.argsort(v, kind="stable")
        s = v[order]
        i = np.arange(1, m + 1)
        if method == "holm":
            steps = np.maximum.accumulate(np.minimum(1.0, (m - i + 1) * s))
        else:  # bh
            steps = np.minimum.accumulate(np.minimum(1.0, m * s / i)[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = steps
    out[ok] = adj
    return out


def adjust_family(p: Mapping[K, float], method: str = "holm") -> dict[K, float]:
    """Adjusted p-values of a family given as ``{key: p}`` (any keys: e.g. ``(run, baseline, measure)``),
    in the mapping's order; NaN p-values are not tests and stay NaN.

    >>> adjust_family({("a", "nDCG@10"): 0.01, ("b", "nDCG@10"): 0.04, ("a", "AP"): 0.03})
    {('a', 'nDCG@10'): 0.03, ('b', 'nDCG@10'): 0.06, ('a', 'AP'): 0.06}
    """
    keys = list(p)
    adj = adjust_pvalues(np.array([p[k] for k in keys], dtype=np.float64), method)
    return {k: float(v) for k, v in zip(keys, adj)}
