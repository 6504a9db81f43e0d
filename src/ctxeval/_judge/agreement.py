"""How far judge labels agree with people's: the statistics of the judge card (:mod:`.card`).

Labels (over the (query, doc) pairs both label):

* **Cohen's kappa** (Cohen 1960; weighted, Cohen 1968): κ = (p_o − p_e) / (1 − p_e) with agreement
  weights w_ij = 1 − |i − j|^p / (G − 1)^p, i and j the places of two grades among the G grades of the
  scale (p = 0: unweighted, w_ij = [i = j]; 1: linear; 2: quadratic), p_o = Σ w_ij O_ij / n, p_e = Σ w_ij E_ij / n, O the
  confusion counts and E_ij = (row i total)(column j total) / n. Equal to scikit-learn's
  ``cohen_kappa_score(h, j, labels=grades, weights=...)``. **Undefined** (None) when p_e = 1, i.e.
  when one grade is all anyone used: chance agreement is then total and nothing is left to measure
  (scikit-learn returns NaN). A judge that gives one grade to everything, against people who used
  several, gets κ = 0 exactly: p_o = p_e.
* **Krippendorff's alpha, ordinal** (Krippendorff, "Computing Krippendorff's alpha-reliability", 2011):
  α = 1 − D_o / D_e over the coincidence matrix o_ck (each pair of values (a, b) adds 1 to o_ab and 1
  to o_ba), n_c = Σ_k o_ck, n = Σ_c n_c, and the ordinal distance δ²_ck = (Σ_{g=c..k} n_g − (n_c +
  n_k) / 2)²: D_o = Σ o_ck δ²_ck / n, D_e = Σ n_c n_k δ²_ck / (n (n − 1)). Undefined when D_e = 0
  (one value only). Equal to the ``krippendorff`` package's ``alpha(level_of_measurement="ordinal")``.

System rankings (each run's mean of a measure under people's labels and under the judge's):

* **Kendall's τ-b** (Kendall 1945): (concordant − discordant) / √((n₀ − t_x)(n₀ − t_y)) over the n₀ =
  N(N − 1)/2 pairs of runs, t the pairs tied on one side; scipy's ``kendalltau``. Undefined when a
  side gives every run the same value.
* **AP correlation τ_AP** (Yilmaz, Aslam, Robertson, "A new rank correlation coefficient for
  information retrieval", SIGIR 2008): with the runs in the judge's order, τ_AP = 2/(N − 1)
  Σ_{i=2..N} C(i)/(i − 1) − 1, C(i) the runs above position i that people also rank above the run at
  position i. A swap near the top costs more than one near the bottom; people's order is the truth
  (τ_AP is not symmetric). Ties are broken uniformly at random and τ_AP is its expectation, computed
  exactly: with ties in the judge's order only, this is Urbano and Marrero's τ_AP,a ("The treatment
  of ties in AP correlation", ICTIR 2017; 0.39903 on the example of their R package ``ircor``);
  a pair tied in people's order counts as half right.
* The **largest swap among the top systems**: of the runs in either side's top ``top``, the one whose
  ranks differ most.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError

__all__ = [
    "Kappa",
    "cohen_kappa",
    "grade_bits",
    "kendall_tau_b",
    "krippendorff_alpha_ordinal",
    "ranking_agreement",
    "tau_ap",
]


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa, plain and weighted, with the confusion matrix; None where undefined."""

    n: int
    grades: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]  #: rows: human grade, columns: judge grade
    unweighted: float | None
    linear: float | None
    quadratic: float | None
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


def grade_bits(values: Sequence[int]) -> float:
    """The entropy of a grade distribution in bits (0 for one grade).

    >>> grade_bits([1, 1, 2, 2]), grade_bits([3, 3])
    (1.0, 0.0)
    """
    _, counts = np.unique(np.asarray(values, dtype=np.int64), return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log2(p)).sum()) + 0.0


def _paired(human: Sequence[int] | np.ndarray, judge: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = np.asarray(human, dtype=np.int64)
    j = np.asarray(judge, dtype=np.int64)
    if h.shape != j.shape or h.ndim != 1:
        raise ConfigError("agreement needs one human and one judge label per pair")
    if h.size == 0:
        raise ConfigError("no (query, doc) pair is labelled by both: nothing to compare")
    return h, j


def cohen_kappa(
    human: Sequence[int] | np.ndarray, judge: Sequence[int] | np.ndarray, grades: Sequence[int] | None = None
) -> Kappa:
    """Kappa of paired labels; ``grades`` is the scale the weights run over (default: the grades seen).

    >>> k = cohen_kappa([1, 0, 1, 0], [1, 0, 0, 0])
    >>> k.unweighted   # p_o = 3/4, p_e = (2*1 + 2*3)/16 = 1/2: (0.75 - 0.5) / 0.5
    0.5
    >>> cohen_kappa([4, 4, 4], [4, 4, 4]).unweighted is None   # one grade is all anyone used
    True
    """
    h, j = _paired(human, judge)
    seen = np.unique(np.concatenate([h, j]))
    scale = np.unique(np.asarray(grades, dtype=np.int64)) if grades is not None else seen
    if not np.isin(seen, scale).all():
        raise ConfigError(
            f"grades {sorted(set(seen.tolist()) - set(scale.tolist()))} are not on the scale {scale.tolist()}"
        )
    g = scale.size
    hi, ji = np.searchsorted(scale, h), np.searchsorted(scale, j)
    conf = np.zeros((g, g), dtype=np.int64)
    np.add.at(conf, (hi, ji), 1)
    n = h.size
    expected = np.outer(conf.sum(axis=1), conf.sum(axis=0)) / n
    pos = np.arange(g, dtype=float)  # distances between places on the scale, as scikit-learn counts them
    diff = np.abs(np.subtract.outer(pos, pos))
    span = float(g - 1) if g > 1 else 1.0

    def kappa(power: int) -> float | None:
        w = (diff == 0).astype(float) if power == 0 else 1.0 - (diff / span) ** power
        po, pe = float((w * conf).sum() / n), float((w * expected).sum() / n)
        if 1.0 - pe <= 1e-12:
            return None
        return (po - pe) / (1.0 - pe)

    return Kappa(
        n,
        tuple(int(x) for x in scale),
        tuple(tuple(int(x) for x in row) for row in conf),
        kappa(0),
        kappa(1),
        kappa(2),
        float((h == j).mean()),
    )


def krippendorff_alpha_ordinal(human: Sequence[int] | np.ndarray, judge: Sequence[int] | np.ndarray) -> float | None:
    """Krippendorff's ordinal alpha of two coders over paired labels (None when undefined).

    One disagreement between neighbours: n_1, n_2, n_3 = 2, 3, 3 (n = 8); δ²_23 = (3 + 3 - 3)² = 9,
    δ²_12 = (5 - 2.5)² = 6.25, δ²_13 = (8 - 2.5)² = 30.25; Σ o δ² = 2 * 9, Σ n_c n_k δ² = 2 (6 * 6.25 +
    6 * 30.25 + 9 * 9) = 600: α = 1 - 7 * 18 / 600.

    >>> round(krippendorff_alpha_ordinal([1, 2, 3, 3], [1, 2, 3, 2]), 12)
    0.79
    """
    h, j = _paired(human, judge)
    values = np.unique(np.concatenate([h, j]))
    v = values.size
    if v < 2:
        return None
    hi, ji = np.searchsorted(values, h), np.searchsorted(values, j)
    o = np.zeros((v, v))
    np.add.at(o, (hi, ji), 1.0)
    np.add.at(o, (ji, hi), 1.0)
    nc = o.sum(axis=1)
    n = nc.sum()
    cum = np.concatenate([[0.0], np.cumsum(nc)])
    lo = np.minimum.outer(np.arange(v), np.arange(v))
    hi2 = np.maximum.outer(np.arange(v), np.arange(v))
    delta2 = (cum[hi2 + 1] - cum[lo] - (nc[:, None] + nc[None, :]) / 2.0) ** 2
    de = float((np.outer(nc, nc) * delta2).sum())
    if de <= 0:
        return None
    return 1.0 - float((n - 1) * (o * delta2).sum() / de)


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b over all pairs (a handful of runs: O(n²) is nothing), as scipy's ``kendalltau``;
    NaN when either side is constant.

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


def tau_ap(truth: Sequence[float] | np.ndarray, estimate: Sequence[float] | np.ndarray) -> float:
    """AP correlation of ``estimate``'s order against ``truth``'s (higher values first), ties broken
    uniformly at random and averaged exactly (see the module docstring).

    >>> tau_ap([4, 3, 2, 1], [4, 3, 2, 1]), tau_ap([4, 3, 2, 1], [1, 2, 3, 4])
    (1.0, -1.0)
    >>> round(tau_ap([4, 3, 2, 1], [4, 3, 1, 2]), 4)   # the last two swapped: 2/3 (1 + 1 + 2/3) - 1
    0.7778
    """
    x = np.asarray(truth, dtype=float)
    y = np.asarray(estimate, dtype=float)
    n = x.size
    if n < 2 or y.size != n:
        raise ConfigError("tau_AP needs two rankings of the same two or more items")
    above = np.sign(np.subtract.outer(x, x)).T  # above[a, b] = sign(x_b - x_a)
    right = np.where(above > 0, 1.0, np.where(above == 0, 0.5, 0.0))
    np.fill_diagonal(right, 0.0)
    total = 0.0
    for a in range(n):
        higher = y > y[a]
        tied = (y == y[a]) & (np.arange(n) != a)
        s, g = int(higher.sum()), int(tied.sum()) + 1
        big_a = float(right[a][higher].sum())
        big_b = float(right[a][tied].sum())
        for k in range(1, g + 1):  # a at position s + k, each order of its tie group equally likely
            if s + k - 1 == 0:
                continue
            share = (k - 1) / (g - 1) if g > 1 else 0.0
            total += (big_a + big_b * share) / (s + k - 1) / g
    return round(2.0 / (n - 1) * total - 1.0, 12) + 0.0  # the expectation's last-bit noise (and -0.0) out


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


def ranking_agreement(human: Mapping[str, float], judge: Mapping[str, float], top: int = 5) -> dict[str, Any]:
    """Kendall's τ-b and τ_AP between the runs' orders under the two labelings (best first), and the
    largest rank swap among the runs in either side's top ``top``. Ranks are 1 = best; ties share the
    average rank. τ-b is None when a side gives every run the same value.

    >>> r = ranking_agreement({"A": 0.9, "B": 0.8, "C": 0.7}, {"A": 0.8, "B": 0.5, "C": 0.6})
    >>> round(r["kendall_tau"], 4), round(r["tau_ap"], 4), r["largest_swap"]["run"]
    (0.3333, 0.5, 'B')
    """
    names = sorted(set(human) & set(judge))
    if len(names) < 2:
        raise ConfigError("the system ranking needs at least two runs")
    h = np.array([human[n] for n in names], dtype=float)
    j = np.array([judge[n] for n in names], dtype=float)
    tau = kendall_tau_b(h, j)
    rh, rj = _average_ranks(-h), _average_ranks(-j)
    swap = np.abs(rh - rj)
    at_top = (rh <= top) | (rj <= top)
    worst = int(np.argmax(np.where(at_top, swap, -1.0)))
    return {
        "runs": len(names),
        "kendall_tau": None if math.isnan(tau) else float(tau),
        "tau_ap": tau_ap(h, j),
        "top": top,
        "largest_swap": {
            "run": names[worst],
            "human_rank": float(rh[worst]),
            "judge_rank": float(rj[worst]),
            "by": float(swap[worst]),
        },
        "ranks": {n: {"human": float(a), "judge": float(b)} for n, a, b in zip(names, rh, rj)},
    }
