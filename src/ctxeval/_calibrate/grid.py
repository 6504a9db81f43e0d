"""Calibrated runtime policy: how many passages to pass to the LLM, and from which relative score.

A policy is a pair (K_max, τ): keep the candidates in rank order, drop those whose relative score
(:mod:`ctxeval._relscore`) is < τ, keep at most K_max. ``calibrate`` grid-searches K_max ∈ 1..K and
τ ∈ {0, 0.05, …, 0.95}, maximising the mean objective over queries, with k-fold cross-validation
over queries so that the gain over the best fixed K is measured on held-out queries.

**Prefix structure.** Within a query, relative scores never increase down the ranking, so a policy
selects a *prefix* of the ranking, of length ``L_q = min(K_max, #{i : rel_i >= τ})``. (Scores that
tie as float32 but differ as float64 are ranked by doc id and may break the monotonicity by a hair;
the policy then stops at the first passage below τ, here and in :class:`ctxeval.ContextSelector`, so
``L_q`` = the number of *leading* passages with rel ≥ τ, capped at K_max.) Hence the objective of
every policy is read off one table per query, ``C[q, L]`` = the objective of the first L passages,
L = 0..K: the whole grid costs one gather ``C[q, min(K_max, lead_q(τ))]`` per τ, no loop over
policies or queries.

**Objectives** (``C[q, L]``):

* ``utility`` (default): the total utility of the selected set, ``U_q(L) = Σ_{i<=L} u_i`` with the
  per-passage utilities of :func:`ctxeval._utility.row_utilities` (labels through the utility map,
  known distractors, detection rules, LLM utilities). ``U_q(0) = 0``: selecting nothing is neutral.
* any registered measure M: ``C[q, L]`` = M computed on the run *truncated to its first L passages*
  (the selected set, in rank order, as the LLM would read it), i.e. exactly what
  ``evaluate(qrels, truncated_run, M)`` gives for that query. Everything that is not the run stays
  fixed: the qrels (recall-type denominators count every judged doc), M's own cutoff (``nDCG@10``
  of a 20-passage selection reads its top 10; give no cutoff, or one >= K, to score the whole
  selection), the retrieval pool of PROC/%PROC (``pool``, or by default the *untruncated* run: the
  candidates the selector chose from), and the per-passage utilities of the distraction measures
  (computed once on the full candidate list, so a passage's utility does not depend on which others
  were selected). Measures with ``higher_is_better=False`` are minimised; queries where M is
  undefined (NaN) for a policy are left out of that policy's mean, as :func:`ctxeval.evaluate` does.

**Cross-validation.** Queries (byte-wise sorted ids) are dealt into ``folds`` folds by a permutation
drawn from ``numpy.random.default_rng(seed)`` (query ``perm[j]`` goes to fold ``j % folds``). For
each fold, the policy and the best fixed K (the policy (K, τ = 0): every relative score is >= 0) are
chosen on the other folds and scored on it. The cross-validated objective pools the held-out
queries of all folds (each query is scored once, by the policy chosen without it); the reported
``gain`` is the cross-validated objective of the policy minus that of the best fixed K (signed so
that positive = better). The policy written is the one fitted on all queries.

**Checks** (:func:`checks`), because a grid search always returns *some* cell:

* *edge*: the optimum lies on the grid's edge when the policy's K_max or the best fixed K is the
  largest K tried, or the fixed-K objective at that largest K is within :data:`EDGE_SHARE` of the
  fixed-K column's range of its best: more passages keep helping (or cost nothing) up to ``k``, and
  the true optimum may lie beyond it;
* *no-op threshold*: τ selects exactly what τ = 0 selects at the same K_max on every query (the policy
  is the fixed K = K_max);
* *no held-out gain*: the cross-validated objective of the policy is not better than that of the
  best fixed K (gain <= 0 or undefined); the fixed K (fitted on all queries) is then the
  recommendation.

**Ties** between grid cells (means within 1e-12, relative) go to the smallest K_max, then to the
middle of the tied thresholds at that K_max (the threshold farthest from both ends of the plateau;
the lower middle for an even count); the best fixed K is the smallest among ties.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._core.segments import ratio
from .._errors import ConfigError

__all__ = [
    "EDGE_SHARE",
    "POLICY_RULE",
    "TAUS",
    "Checks",
    "Fit",
    "assign_folds",
    "checks",
    "fit",
    "grid_sums",
    "lead_lengths",
    "prefix_utility",
]

#: the τ grid: 0, 0.05, ..., 0.95 (each i / 20, so every τ is the double nearest to its decimal)
TAUS: tuple[float, ...] = tuple(i / 20 for i in range(20))
POLICY_RULE = "rank the candidates; keep them in rank order while their relative score >= tau; keep at most k_max"
_TIE_TOL = 1e-12
#: the fixed-K objective at the largest K tried counts as "as good as the best" within this share of
#: the fixed-K column's range
EDGE_SHARE = 0.01


# --------------------------------------------------------------------------------------------------
# pure kernels over per-query segments (r_off: int64[n_q + 1] offsets into rows in rank order)
# --------------------------------------------------------------------------------------------------


def _dense(r_off: np.ndarray, values: np.ndarray, k: int, fill: float) -> np.ndarray:
    """``float64[n_q, k]``: the first k values of every segment, padded with ``fill``."""
    r_off = np.asarray(r_off, dtype=np.int64)
    n_q = r_off.size - 1
    lens = np.minimum(np.diff(r_off), k)
    out = np.full((n_q, k), fill, dtype=np.float64)
    cols = np.arange(k, dtype=np.int64)
    mask = cols[None, :] < lens[:, None]
    out[mask] = np.asarray(values, dtype=np.float64)[(r_off[:-1, None] + cols[None, :])[mask]]
    return out


def lead_lengths(r_off: np.ndarray, rel: np.ndarray, k: int, taus: Sequence[float] = TAUS) -> np.ndarray:
    """``int64[n_q, len(taus)]``: per query and τ, how many leading passages (within the first ``k``)
    have relative score >= τ; the policy (K_max, τ) selects the first ``min(K_max, lead)`` passages.

    >>> lead_lengths(np.array([0, 4, 5]), np.array([1.0, 0.8, 0.3, 0.9, 1.0]), 3, [0.0, 0.5, 0.85]).tolist()
    [[3, 2, 1], [1, 1, 1]]
    """
    dense = _dense(r_off, rel, k, -np.inf)
    runmin = np.minimum.accumulate(dense, axis=1) if k else dense
    out = np.empty((dense.shape[0], len(taus)), dtype=np.int64)
    for j, t in enumerate(taus):
        out[:, j] = np.count_nonzero(runmin >= t, axis=1)
    return out


def prefix_utility(r_off: np.ndarray, u: np.ndarray, k: int) -> np.ndarray:
    """``float64[n_q, k + 1]``: ``C[q, L] = Σ_{i<=L} u_i``, the utility of the first L passages
    (L = 0..k; a list shorter than L contributes all its rows).

    >>> prefix_utility(np.array([0, 3, 3]), np.array([1.0, -0.5, 0.5]), 4).tolist()
    [[0.0, 1.0, 0.5, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0, 0.0]]
    """
    dense = _dense(r_off, u, k, 0.0)
    out = np.zeros((dense.shape[0], k + 1), dtype=np.float64)
    np.cumsum(dense, axis=1, out=out[:, 1:])
    return out


def assign_folds(n_queries: int, folds: int, seed: int) -> np.ndarray:
    """``int64[n_queries]``: the fold of every query; query ``perm[j]`` goes to fold ``j % folds`` for
    ``perm = numpy.random.default_rng(seed).permutation(n_queries)``, so fold sizes differ by at most 1."""
    if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ConfigError(f"folds must be a whole number >= 2, got {folds!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed must be a whole number >= 0, got {seed!r}")
    if n_queries < folds:
        raise ConfigError(f"{folds}-fold cross-validation needs at least {folds} queries, got {n_queries}")
    perm = np.random.default_rng(int(seed)).permutation(n_queries)
    out = np.empty(n_queries, dtype=np.int64)
    out[perm] = np.arange(n_queries, dtype=np.int64) % folds
    return out


def grid_sums(
    values: np.ndarray, lead: np.ndarray, fold: np.ndarray, folds: int, caps: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per fold, the sum and the count of the defined (non-NaN) objective values of every policy.

    ``values``: ``C[n_q, K + 1]`` (objective of each prefix length), ``lead``: ``[n_q, n_tau]`` from
    :func:`lead_lengths`, ``fold``: ``int64[n_q]`` in 0..folds-1, every fold non-empty. Returns
    ``S, N`` of shape ``[folds, K, n_tau]``: cell ``[f, K_max - 1, j]`` sums ``C[q, min(K_max, lead[q, j])]``
    over the queries q of fold f. Rows are added in a fixed order (query order within each fold), so
    equal inputs give equal bits. ``caps`` (``int64[n_q, n_axis]``): the prefix length each point of
    the axis allows each query (a budget of tokens: :func:`ctxeval._core.budget.budget_caps`) in
    place of K_max = 1..K; the cells are then ``[f, axis point, j]``.
    """
    k = values.shape[1] - 1
    n_t = lead.shape[1]
    order = np.argsort(fold, kind="stable")
    starts = np.searchsorted(fold[order], np.arange(folds))
    if np.unique(fold).size != folds:
        raise ConfigError("every fold needs at least one query")
    vs, ls = values[order], lead[order]
    cs = np.arange(1, k + 1, dtype=np.int64)[None, :] if caps is None else np.asarray(caps, dtype=np.int64)[order]
    n_a = cs.shape[1]
    S = np.empty((folds, n_a, n_t), dtype=np.float64)
    N = np.empty((folds, n_a, n_t), dtype=np.int64)
    for j in range(n_t):
        g = np.take_along_axis(vs, np.minimum(cs, ls[:, j : j + 1]), axis=1)
        ok = ~np.isnan(g)
        S[:, :, j] = np.add.reduceat(np.where(ok, g, 0.0), starts, axis=0)
        N[:, :, j] = np.add.reduceat(ok.astype(np.int64), starts, axis=0)
    return S, N


def _best(mean: np.ndarray, sign: float) -> tuple[int, int] | None:
    """(K_max index, τ index) of the best cell of ``mean[K, n_tau]`` under the tie rule."""
    v = np.where(np.isnan(mean), -np.inf, sign * mean)
    top = float(v.max())
    if not math.isfinite(top):
        return None
    tied = v >= top - _TIE_TOL * max(1.0, abs(top))
    ki = int(np.flatnonzero(tied.any(axis=1))[0])
    tj = np.flatnonzero(tied[ki])
    return ki, int(tj[(tj.size - 1) // 2])


def _best_fixed(mean: np.ndarray, sign: float) -> int | None:
    """K index of the best fixed K (column τ = 0), the smallest among ties."""
    v = np.where(np.isnan(mean[:, 0]), -np.inf, sign * mean[:, 0])
    top = float(v.max())
    if not math.isfinite(top):
        return None
    return int(np.flatnonzero(v >= top - _TIE_TOL * max(1.0, abs(top)))[0])


def _num(x: float) -> float | None:
    x = float(x) + 0.0  # -0.0 -> 0.0
    return None if math.isnan(x) else x


@dataclass
class Fit:
    """The outcome of :func:`fit` (see :func:`calibrate`)."""

    k_max: int
    tau: float
    grid: np.ndarray  #: ``[K, n_tau]`` in-sample mean objective of every policy (NaN: undefined everywhere)
    grid_valid: np.ndarray  #: ``[K, n_tau]`` queries where the objective is defined
    best_fixed_k: int
    in_sample: dict[str, Any]
    cross_validation: dict[str, Any]
    taus: tuple[float, ...] = TAUS
    fold: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)
    #: the first axis of the grid: K_max = 1..K, or budgets of tokens (``unit="tokens"``)
    axis: tuple[int, ...] = ()
    unit: str = "K"
    #: the prefix length each axis point allows each query (budgets); None: K_max itself
    caps: np.ndarray | None = field(default=None, repr=False)

    def selected(self, point: int, tau_index: int, lead: np.ndarray) -> np.ndarray:
        """How many passages the policy (axis point, τ) keeps on every query."""
        i = self.axis.index(point)
        cap = self.caps[:, i] if self.caps is not None else point
        return np.minimum(cap, lead[:, tau_index])


def fit(
    values: np.ndarray,
    lead: np.ndarray,
    *,
    folds: int = 5,
    seed: int = 0,
    sign: float = 1.0,
    taus: Sequence[float] = TAUS,
    caps: np.ndarray | None = None,
    axis: Sequence[int] | None = None,
) -> Fit:
    """Choose the policy on all queries, and cross-validate the choice (see the module docstring).

    ``values``: ``C[n_q, K + 1]``; ``lead``: ``[n_q, len(taus)]`` with ``taus[0] == 0`` (so that
    column 0 holds the fixed-K policies); ``sign``: +1 to maximise, -1 to minimise. ``caps`` and
    ``axis``: a budget axis (the budgets of tokens, and the prefix length each allows each query) in
    place of K_max = 1..K; the fit's ``k_max`` and ``best_fixed_k`` are then budgets.
    """
    values = np.asarray(values, dtype=np.float64)
    lead = np.asarray(lead, dtype=np.int64)
    n_q, k1 = values.shape
    k = k1 - 1
    if k < 1:
        raise ConfigError(f"the largest K must be >= 1, got {k}")
    if not taus or taus[0] != 0.0:
        raise ConfigError("the tau grid must start at 0 (the fixed-K policies)")
    points = tuple(range(1, k + 1)) if caps is None else tuple(int(b) for b in axis or ())
    cap = (lambda i: i + 1) if caps is None else (lambda i: caps[:, i])
    fold = assign_folds(n_q, folds, seed)
    S, N = grid_sums(values, lead, fold, folds, caps)
    s_all, n_all = S.sum(axis=0), N.sum(axis=0)
    grid = ratio(s_all, n_all)
    best = _best(grid, sign)
    fixed = _best_fixed(grid, sign)
    if best is None or fixed is None:
        raise ConfigError("the objective is undefined (NaN) for every query under every policy; nothing to calibrate")
    ki, tj = best
    in_sample = {
        "n_queries": int(n_q),
        "valid_queries": int(n_all[ki, tj]),
        "objective": _num(grid[ki, tj]),
        "mean_selected": float(np.minimum(cap(ki), lead[:, tj]).mean()) if n_q else 0.0,
        "best_fixed_k": points[fixed],
        "objective_at_best_fixed_k": _num(grid[fixed, 0]),
        "mean_selected_at_best_fixed_k": float(np.minimum(cap(fixed), lead[:, 0]).mean()) if n_q else 0.0,
        "gain": _num(sign * (grid[ki, tj] - grid[fixed, 0])),
    }
    per_fold = []
    tot = {"s": 0.0, "n": 0, "s0": 0.0, "n0": 0, "sel": 0.0, "sel0": 0.0}
    for f in range(folds):
        others = np.arange(folds) != f
        train = ratio(S[others].sum(axis=0), N[others].sum(axis=0))
        b = _best(train, sign)
        b0 = _best_fixed(train, sign)
        members = fold == f
        entry: dict[str, Any] = {"fold": f, "n_queries": int(members.sum())}
        if b is None or b0 is None:  # undefined on every training query: nothing chosen for this fold
            entry.update(
                {"k_max": None, "tau": None, "best_fixed_k": None, "objective": None, "objective_at_best_fixed_k": None}
            )
            per_fold.append(entry)
            continue
        fk, ft = b
        sel = float(np.minimum(cap(fk), lead[:, ft])[members].sum())
        sel0 = float(np.minimum(cap(b0), lead[:, 0])[members].sum())
        tot["s"] += float(S[f, fk, ft])
        tot["n"] += int(N[f, fk, ft])
        tot["s0"] += float(S[f, b0, 0])
        tot["n0"] += int(N[f, b0, 0])
        tot["sel"] += sel
        tot["sel0"] += sel0
        entry.update(
            {
                "k_max": points[fk],
                "tau": float(taus[ft]),
                "best_fixed_k": points[b0],
                "objective": _num(S[f, fk, ft] / N[f, fk, ft]) if N[f, fk, ft] else None,
                "objective_at_best_fixed_k": _num(S[f, b0, 0] / N[f, b0, 0]) if N[f, b0, 0] else None,
            }
        )
        per_fold.append(entry)
    cv_obj = tot["s"] / tot["n"] if tot["n"] else math.nan
    cv_fixed = tot["s0"] / tot["n0"] if tot["n0"] else math.nan
    cross_validation = {
        "folds": int(folds),
        "seed": int(seed),
        "objective": _num(cv_obj),
        "mean_selected": tot["sel"] / n_q,
        "objective_at_best_fixed_k": _num(cv_fixed),
        "mean_selected_at_best_fixed_k": tot["sel0"] / n_q,
        "gain": _num(sign * (cv_obj - cv_fixed)),
        "per_fold": per_fold,
    }
    unit = "K" if caps is None else "tokens"
    return Fit(
        points[ki], float(taus[tj]), grid, n_all, points[fixed], in_sample, cross_validation, tuple(taus), fold,
        points, unit, None if caps is None else np.asarray(caps, dtype=np.int64),
    )  # fmt: skip


@dataclass(frozen=True)
class Checks:
    """What the grid's answer rests on (see the module docstring); ``notes`` say it in words."""

    at_edge: bool
    tau_changes_selection: bool
    beats_best_fixed_k: bool
    recommended_fixed_k: int | None  #: the fixed K to use instead of the policy, when it does not beat it
    notes: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "optimum_at_grid_edge": self.at_edge,
            "tau_changes_selection": self.tau_changes_selection,
            "beats_best_fixed_k_held_out": self.beats_best_fixed_k,
            "recommended_fixed_k": self.recommended_fixed_k,
        }


def checks(f: Fit, lead: np.ndarray, sign: float = 1.0, cost_free: bool = False) -> Checks:
    """The three checks of a fit: the optimum on the grid's edge, a threshold that changes nothing, no
    held-out gain over the best fixed K. ``cost_free``: no passage can lower the objective (utilities of
    binary labels), so a flat tail says nothing of what lies beyond ``k``: only an optimum at ``k``
    itself (the objective still rising there) is on the edge.

    >>> values = np.array([[0.0, 1.0, 2.0, 3.0]] * 4)     # every passage adds 1: more always helps
    >>> lead = np.full((4, len(TAUS)), 3)                 # every relative score >= 0.95: tau cuts nothing
    >>> c = checks(fit(values, lead, folds=2), lead)
    >>> c.at_edge, c.tau_changes_selection, c.beats_best_fixed_k, c.recommended_fixed_k
    (True, False, False, 3)
    """
    points = f.axis or tuple(range(1, f.grid.shape[0] + 1))
    last = points[-1]
    col = np.where(np.isnan(f.grid[:, 0]), -np.inf, sign * f.grid[:, 0])
    finite = col[np.isfinite(col)]
    best_fixed = col[points.index(f.best_fixed_k)]
    spread = float(finite.max() - finite.min()) if finite.size else 0.0
    edge_fixed = not cost_free and bool(col[-1] >= best_fixed - EDGE_SHARE * spread)
    at_edge = f.k_max == last or f.best_fixed_k == last or edge_fixed
    tj = f.taus.index(f.tau)
    fit_ = replace(f, axis=points)
    changes = bool(np.any(fit_.selected(f.k_max, tj, lead) != fit_.selected(f.k_max, 0, lead)))
    gain = f.cross_validation.get("gain")
    beats = gain is not None and gain > 0
    tokens = f.unit == "tokens"
    notes = []
    if at_edge:
        notes.append(
            f"the optimum lies on the grid's edge: a budget of {last} tokens, the largest tried, does as well as any "
            "smaller, so more context keeps helping or costs nothing; try larger budgets before trusting the budget"
            if tokens
            else f"the optimum lies on the grid's edge: {last} passages, the most tried (-k {last}), do as well as any "
            "fewer, so more passages keep helping or cost nothing; try a larger -k before trusting K_max"
        )
    if not changes:
        fixed = f"a fixed budget of {f.k_max} tokens" if tokens else f"the fixed K={f.k_max}"
        notes.append(
            f"the threshold tau={f.tau:g} changes nothing: on every query it keeps what tau=0 keeps, so the policy is {fixed}"
        )
    if not beats:
        shown = "undefined" if gain is None else f"{gain:.4f}"
        use = (
            f"budget of {f.best_fixed_k} tokens"
            if tokens
            else f"K={f.best_fixed_k} (the top {f.best_fixed_k} passages)"
        )
        notes.append(
            f"the policy does not beat the best fixed {'budget' if tokens else 'K'} on held-out queries (gain "
            f"{shown}): use the fixed {use}; the policy file is written only with --force"
        )
    return Checks(at_edge, changes, beats, None if beats else f.best_fixed_k, tuple(notes))
