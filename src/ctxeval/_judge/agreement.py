"""How far to trust judge labels: agreement with people, effect on the system ranking, and the
prediction-powered estimate of a measure's mean.

* Cohen's kappa over the (query, doc) pairs both label: κ = (p_o - p_e) / (1 - p_e) with weights
  w_ij = 1 - |i - j|^p / (G - 1)^p over the G grades seen (p = 0: unweighted, 1: linear, 2:
  quadratic), p_o = Σ w_ij O_ij / n, p_e = Σ w_ij E_ij / n, E the product of the margins / n
  (Cohen 1960, 1968; sklearn's ``cohen_kappa_score`` computes the same).
* System ranking: each run's mean of a measure under the human labels and under the judge's; Kendall's
  τ-b between the two orders and the largest rank swap (what decides whether judge labels can replace
  human ones for comparing systems; Voorhees 2000).
* Prediction-powered inference of each run's mean (Angelopoulos et al., Science 2023; as ARES,
  Saad-Falcon et al., NAACL 2024, uses it): :mod:`ctxeval._core.ppi`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError

__all__ = ["Kappa", "cohen_kappa", "ranking_agreement"]


@dataclass(frozen=True)
class Kappa:
    n: int
    grades: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]  #: rows: human grade, columns: judge grade
    unweighted: float
    linear: float
    quadratic: float
    exact: float  #: share of pairs with the same grade

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs": self.n,
            "grades": list(self.grades),
            "confusion": [list(r) for r in self.confusion],
            "kappa": self.unweighted,
            "kappa_linear": self.linear,
            "kappa_quadratic": self.quadratic,
            "exact_agreement": self.exact,
        }


def cohen_kappa(human: Mapping[tuple[str, str], int], judge: Mapping[tuple[str, str], int]) -> Kappa:
    """Kappa over the pairs both label.

    >>> k = cohen_kappa({("q", "a"): 1, ("q", "b"): 0, ("q", "c"): 1, ("q", "d"): 0},
    ...                 {("q", "a"): 1, ("q", "b"): 0, ("q", "c"): 0, ("q", "d"): 0})
    >>> round(k.unweighted, 4)   # p_o = 3/4, p_e = (2*1 + 2*3)/16 = 1/2: (0.75 - 0.5) / 0.5
    0.5
    """
    both = sorted(set(human) & set(judge))
    if not both:
        raise ConfigError("no (query, doc) pair is labelled by both: nothing to compare")
    h = np.array([human[p] for p in both], dtype=np.int64)
    j = np.array([judge[p] for p in both], dtype=np.int64)
    grades = np.unique(np.concatenate([h, j]))
    g = grades.size
    hi, ji = np.searchsorted(grades, h), np.searchsorted(grades, j)
    conf = np.zeros((g, g), dtype=np.int64)
    np.add.at(conf, (hi, ji), 1)
    n = len(both)
    expected = np.outer(conf.sum(axis=1), conf.sum(axis=0)) / n
    diff = np.abs(np.subtract.outer(np.arange(g), np.arange(g)))

    def kappa(power: int) -> float:
        if g == 1:
            return 1.0
        w = 1.0 - ((diff > 0).astype(float) if power == 0 else diff.astype(float) ** power / (g - 1) ** power)
        po, pe = float((w * conf).sum() / n), float((w * expected).sum() / n)
        return 1.0 if pe == 1.0 else (po - pe) / (1.0 - pe)

    return Kappa(
        n,
        tuple(int(x) for x in grades),
        tuple(tuple(int(x) for x in row) for row in conf),
        kappa(0),
        kappa(1),
        kappa(2),
        float((h == j).mean()),
    )


def ranking_agreement(human: Mapping[str, float], judge: Mapping[str, float]) -> dict[str, Any]:
    """Kendall's τ-b between the runs' orders under the two labelings (best first), and the largest
    rank swap. Ranks are 1 = best; ties share the average rank."""
    names = sorted(set(human) & set(judge))
    if len(names) < 2:
        raise ConfigError("the system ranking needs at least two runs")
    h = np.array([human[n] for n in names])
    j = np.array([judge[n] for n in names])
    tau = kendall_tau_b(h, j)
    rh, rj = _average_ranks(-h), _average_ranks(-j)
    swap = np.abs(rh - rj)
    worst = int(np.argmax(swap))
    return {
        "runs": len(names),
        "kendall_tau": None if tau is None or math.isnan(tau) else float(tau),
        "largest_swap": {
            "run": names[worst],
            "human_rank": float(rh[worst]),
            "judge_rank": float(rj[worst]),
            "by": float(swap[worst]),
        },
        "ranks": {n: {"human": float(a), "judge": float(b)} for n, a, b in zip(names, rh, rj)},
    }


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b over all pairs (a handful of runs: O(n²) is nothing), as scipy's ``kendalltau``:
    (concordant - discordant) / sqrt((n0 - ties in x) (n0 - ties in y)); NaN when either side is constant.

    >>> kendall_tau_b(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0]))
    0.333...
    """
    dx = np.sign(np.subtract.outer(x, x))
    dy = np.sign(np.subtract.outer(y, y))
    iu = np.triu_indices(x.size, k=1)
    s = float((dx * dy)[iu].sum())
    n0 = iu[0].size
    tx = float((dx[iu] == 0).sum())
    ty = float((dy[iu] == 0).sum())
    den = math.sqrt((n0 - tx) * (n0 - ty))
    return s / den if den > 0 else float("nan")


def _average_ranks(v: np.ndarray) -> np.ndarray:
    """1-based ranks, ties sharing the average rank (scipy's ``rankdata``)."""
    order = np.argsort(v, kind="stable")
    sv = v[order]
    ranks = np.empty(v.size)
    i = 0
    while i < v.size:
        j = i
        while j + 1 < v.size and sv[j + 1] == sv[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks
