"""Agreement against chance: what judges that know nothing get on the same pairs and runs.

Three null judges label exactly the pairs the judge labelled:

* **permuted**: the judge's own labels shuffled within each query (its grade distribution per query
  kept, the link to the passages cut);
* **constant**: the judge's commonest grade on every pair;
* **random**: grades drawn independently from people's grade distribution (over the pairs people
  labelled).

The permuted and random judges are drawn ``draws`` times (seeded: the same inputs give the same
draws), the constant judge once. Each card figure (Cohen's kappa, the binarized kappa, ordinal alpha
on the pairs both label; Kendall's tau, tau_AP and the largest top swap between the runs' orders) is
computed for every draw exactly as for the judge. A figure is **not informative here** when a null
judge reaches it: the judge's figure is no better than the null's ``quantile`` (95th percentile; for
the swap, where smaller is better, no smaller than its 5th), or than the constant judge's value.
With 200 draws the share of draws at or above a figure has a standard error of at most 0.035 (0.015
near 0.05): a figure within that of the line is said to be borderline.

What would make a figure informative comes from the same draws: for the label figures, the pairs
both label at which the nulls' 95th percentile (which shrinks as 1/√pairs) falls below the judge's
figure; for the ranking, the topics: the queries resampled with replacement to 2, 4, 8 and 16 times
their number (100 resamples each), the smallest number at which the judge's median tau is above
every null's 95th percentile, or none ("deeper labels": when shallow labels decide the ranking by
how many labelled pairs each run retrieves, more topics do not help a judge that a constant judge
matches).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .agreement import cohen_kappa, kendall_tau_b, krippendorff_alpha_ordinal, ranking_agreement

__all__ = ["NULLS", "NullSettings", "label_nulls", "null_labels", "ranking_nulls"]

NULLS = ("permuted", "constant", "random")
Pairs = dict[tuple[str, str], int]


@dataclass(frozen=True)
class NullSettings:
    """How many draws of each random null judge, the seed, and the null quantile a figure must beat
    (``draws=0``: no null judges)."""

    draws: int = 200
    seed: int = 0
    quantile: float = 0.95


def null_labels(kind: str, judge: Pairs, human: Pairs, rng: np.random.Generator) -> Pairs:
    """One draw of the null judge ``kind`` over the pairs ``judge`` labelled (see the module docstring).

    >>> j = {("q", "a"): 3, ("q", "b"): 1, ("q", "c"): 3}
    >>> null_labels("constant", j, {("q", "a"): 0}, np.random.default_rng(0))
    {('q', 'a'): 3, ('q', 'b'): 3, ('q', 'c'): 3}
    >>> sorted(null_labels("permuted", j, {}, np.random.default_rng(0)).values())
    [1, 3, 3]
    """
    keys = sorted(judge)
    grades = np.array([judge[k] for k in keys], dtype=np.int64)
    if kind == "constant":
        values, counts = np.unique(grades, return_counts=True)
        return dict.fromkeys(keys, int(values[int(np.argmax(counts))]))
    if kind == "random":
        pool = np.array(sorted(human.values()), dtype=np.int64)
        return dict(zip(keys, (int(g) for g in pool[rng.integers(0, pool.size, len(keys))])))
    out = grades.copy()
    queries = np.array([q for q, _ in keys], dtype=object)
    for q in dict.fromkeys(queries.tolist()):
        at = np.flatnonzero(queries == q)
        out[at] = grades[rng.permutation(at)]
    return dict(zip(keys, (int(g) for g in out)))


def _draws(kind: str, settings: NullSettings) -> int:
    return 1 if kind == "constant" else settings.draws


def _q(draws: Sequence[float | None], level: float) -> float | None:
    xs = np.array([x for x in draws if x is not None], dtype=float)
    return float(np.quantile(xs, level)) if xs.size else None


def judge_line(
    observed: float | None, nulls: Mapping[str, Sequence[float | None]], level: float, lower: bool = False
) -> dict[str, Any]:
    """The judge's figure beside each null's quantile (``level``; 1 - level when ``lower`` is better),
    the share of draws at least as good as the judge's (its p-value), and whether it is informative."""
    row: dict[str, Any] = {"judge": observed, "nulls": {}, "informative": observed is not None}
    for kind, draws in nulls.items():
        q = _q(draws, 1.0 - level if lower else level)
        vals = [d for d in draws if d is not None]
        if observed is None or not vals:
            share = None
        else:
            share = sum(1 for d in vals if (d <= observed if lower else d >= observed)) / len(vals)
        reached = q is not None and observed is not None and (observed >= q if lower else observed <= q)
        row["nulls"][kind] = {"quantile": q, "at_least_as_good": share, "draws": len(draws)}
        if reached:
            row["informative"] = False
            row.setdefault("reached_by", []).append(kind)
    return row


def label_nulls(
    judge: Pairs,
    human: Pairs,
    both: Sequence[tuple[str, str]],
    grades: Sequence[int],
    level: int,
    settings: NullSettings,
    figures: Callable[[np.ndarray, np.ndarray], dict[str, float | None]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per label figure (kappa, kappa_binary, alpha): the judge's value beside the null judges' on
    the pairs ``both`` label (``judge`` and ``human`` on one scale, ``grades`` that scale, ``level`` the
    binarizing one), and the pairs it would take for each figure to be informative."""
    figures = figures or _label_figures(grades, level)
    h = np.array([human[p] for p in both], dtype=np.int64)
    j = np.array([judge[p] for p in both], dtype=np.int64)
    mine = figures(h, j)
    rng = np.random.default_rng(settings.seed)
    draws: dict[str, dict[str, list[float | None]]] = {f: {} for f in mine}
    inside = {p: judge[p] for p in both}
    for kind in NULLS:
        for _ in range(_draws(kind, settings)):
            nj = null_labels(kind, inside, human, rng)
            got = figures(h, np.array([nj[p] for p in both], dtype=np.int64))
            for f, v in got.items():
                draws[f].setdefault(kind, []).append(v)
    out = {}
    n = len(both)
    for f, v in mine.items():
        row = judge_line(v, draws[f], settings.quantile)
        row["pairs"] = n
        if not row["informative"]:
            qs = [x["quantile"] for k, x in row["nulls"].items() if k != "constant" and x["quantile"] is not None]
            top = max(qs, default=None)
            # the random nulls' spread shrinks as 1/sqrt(pairs): where their quantile falls below the judge's figure
            row["pairs_needed"] = (
                math.ceil(n * (top / v) ** 2)
                if v is not None
                and v > 0
                and top is not None
                and top > 0
                and "constant" not in row.get("reached_by", [])
                else None
            )
        out[f] = row
    return out


def _label_figures(grades: Sequence[int], level: int) -> Callable[[np.ndarray, np.ndarray], dict[str, float | None]]:
    def figures(h: np.ndarray, j: np.ndarray) -> dict[str, float | None]:
        kb = cohen_kappa((h >= level).astype(np.int64), (j >= level).astype(np.int64), grades=(0, 1)).unweighted
        return {
            "kappa": cohen_kappa(h, j, grades=grades).unweighted,
            "kappa_binary": kb,
            "alpha_ordinal": krippendorff_alpha_ordinal(h, j),
        }

    return figures


def _ranking_figures(h: np.ndarray, j: np.ndarray, names: Sequence[str], top: int) -> dict[str, float | None]:
    r = ranking_agreement(dict(zip(names, h.tolist())), dict(zip(names, j.tolist())), top)
    return {"kendall_tau": r["kendall_tau"], "tau_ap": r["tau_ap"], "largest_swap": r["largest_swap"]["by"]}


def ranking_nulls(
    values_h: np.ndarray,
    values_j: np.ndarray,
    values_null: Mapping[str, np.ndarray],
    names: Sequence[str],
    top: int,
    settings: NullSettings,
    common: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, dict[str, Any]]:
    """Per ranking figure (kendall_tau, tau_ap, largest_swap): the judge's value beside the null
        judges'. ``values_h`` and ``values_j`` are (runs, queries) per-query values under people's and
        the judge's labels, ``values_null[kind]`` (draws, runs, queries) under each null's; the runs'
        means are taken over the queries (the columns). Adds, for tau, the topics it would take (resampling
    the queries both sides have values for: ``common`` gives their columns in ``values_h`` and in the
    others; default: the same columns)."""
    mine = _ranking_figures(values_h.mean(axis=1), values_j.mean(axis=1), names, top)
    draws: dict[str, dict[str, list[float | None]]] = {f: {} for f in mine}
    hm = values_h.mean(axis=1)
    for kind, v in values_null.items():
        for b in range(v.shape[0]):
            got = _ranking_figures(hm, v[b].mean(axis=1), names, top)
            for f, x in got.items():
                draws[f].setdefault(kind, []).append(x)
    out = {f: judge_line(x, draws[f], settings.quantile, lower=f == "largest_swap") for f, x in mine.items()}
    out["kendall_tau"]["topics"] = values_h.shape[1]
    if not out["kendall_tau"]["informative"] and out["kendall_tau"]["judge"] is not None:
        ih, ij = common if common is not None else (np.arange(values_h.shape[1]), np.arange(values_j.shape[1]))
        nulls_b = {k: v[:, :, ij] for k, v in values_null.items()}
        out["kendall_tau"]["topics_needed"] = topics_needed(values_h[:, ih], values_j[:, ij], nulls_b, settings)
    return out


def topics_needed(
    values_h: np.ndarray, values_j: np.ndarray, values_null: Mapping[str, np.ndarray], settings: NullSettings
) -> int | None:
    """The fewest topics (2, 4, 8, 16 times today's, resampled with replacement, 100 resamples) at
    which the judge's median tau is above every null's ``quantile``; None if none of them."""
    rng = np.random.default_rng(settings.seed + 1)
    n = values_h.shape[1]
    if n < 2:
        return None
    for factor in (2, 4, 8, 16):
        t = n * factor
        idx = rng.integers(0, n, (100, t))
        mine = [kendall_tau_b(values_h[:, i].mean(axis=1), values_j[:, i].mean(axis=1)) for i in idx]
        med = float(np.nanmedian(mine)) if not all(math.isnan(x) for x in mine) else math.nan
        worst = -math.inf
        for v in values_null.values():
            picks = np.asarray(rng.integers(0, v.shape[0], idx.shape[0])).tolist()
            taus = [
                kendall_tau_b(values_h[:, idx[r]].mean(axis=1), v[b][:, idx[r]].mean(axis=1))
                for r, b in enumerate(picks)
            ]
            taus = [x for x in taus if not math.isnan(x)]
            if taus:
                worst = max(worst, float(np.quantile(taus, settings.quantile)))
        if not math.isnan(med) and med > worst:
            return t
    return None
