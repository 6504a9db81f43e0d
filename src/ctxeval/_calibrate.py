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

**Ties** between grid cells (means within 1e-12, relative) go to the smallest K_max, then to the
middle of the tied thresholds at that K_max (the threshold farthest from both ends of the plateau;
the lower middle for an even count); the best fixed K is the smallest among ties.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from ._engine import EvalData
from ._errors import ConfigError, MeasureError
from ._pool import pool_of
from ._relscore import relative_scores
from ._selector import POLICY_FORMAT, RANKING_RULE, RELATIVE_SCORE_RULE, ContextSelector

if TYPE_CHECKING:
    from ._measures import Measure
    from ._utility import UtilityConfig, UtilityRows

__all__ = [
    "TAUS",
    "Calibration",
    "calibrate",
    "lead_lengths",
    "prefix_utility",
    "prefix_measure",
    "grid_sums",
    "assign_folds",
    "fit",
    "truncate",
]

#: the τ grid: 0, 0.05, ..., 0.95 (each i / 20, so every τ is the double nearest to its decimal)
TAUS: tuple[float, ...] = tuple(i / 20 for i in range(20))
POLICY_RULE = "rank the candidates; keep them in rank order while their relative score >= tau; keep at most k_max"
_TIE_TOL = 1e-12


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


def grid_sums(values: np.ndarray, lead: np.ndarray, fold: np.ndarray, folds: int) -> tuple[np.ndarray, np.ndarray]:
    """Per fold, the sum and the count of the defined (non-NaN) objective values of every policy.

    ``values``: ``C[n_q, K + 1]`` (objective of each prefix length), ``lead``: ``[n_q, n_tau]`` from
    :func:`lead_lengths`, ``fold``: ``int64[n_q]`` in 0..folds-1, every fold non-empty. Returns
    ``S, N`` of shape ``[folds, K, n_tau]``: cell ``[f, K_max - 1, j]`` sums ``C[q, min(K_max, lead[q, j])]``
    over the queries q of fold f. Rows are added in a fixed order (query order within each fold), so
    equal inputs give equal bits.
    """
    n_q, k1 = values.shape
    k = k1 - 1
    n_t = lead.shape[1]
    order = np.argsort(fold, kind="stable")
    starts = np.searchsorted(fold[order], np.arange(folds))
    if np.unique(fold).size != folds:
        raise ConfigError("every fold needs at least one query")
    vs, ls = values[order], lead[order]
    ks = np.arange(1, k + 1, dtype=np.int64)
    S = np.empty((folds, k, n_t), dtype=np.float64)
    N = np.empty((folds, k, n_t), dtype=np.int64)
    for j in range(n_t):
        g = np.take_along_axis(vs, np.minimum(ks[None, :], ls[:, j : j + 1]), axis=1)
        ok = ~np.isnan(g)
        S[:, :, j] = np.add.reduceat(np.where(ok, g, 0.0), starts, axis=0)
        N[:, :, j] = np.add.reduceat(ok.astype(np.int64), starts, axis=0)
    return S, N


def _ratio(s: np.ndarray, n: np.ndarray) -> np.ndarray:
    out = np.full(s.shape, np.nan)
    np.divide(s, n, out=out, where=n > 0)
    return out


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


def fit(
    values: np.ndarray,
    lead: np.ndarray,
    *,
    folds: int = 5,
    seed: int = 0,
    sign: float = 1.0,
    taus: Sequence[float] = TAUS,
) -> Fit:
    """Choose the policy on all queries, and cross-validate the choice (see the module docstring).

    ``values``: ``C[n_q, K + 1]``; ``lead``: ``[n_q, len(taus)]`` with ``taus[0] == 0`` (so that
    column 0 holds the fixed-K policies); ``sign``: +1 to maximise, -1 to minimise.
    """
    values = np.asarray(values, dtype=np.float64)
    lead = np.asarray(lead, dtype=np.int64)
    n_q, k1 = values.shape
    k = k1 - 1
    if k < 1:
        raise ConfigError(f"the largest K must be >= 1, got {k}")
    if not taus or taus[0] != 0.0:
        raise ConfigError("the tau grid must start at 0 (the fixed-K policies)")
    fold = assign_folds(n_q, folds, seed)
    S, N = grid_sums(values, lead, fold, folds)
    s_all, n_all = S.sum(axis=0), N.sum(axis=0)
    grid = _ratio(s_all, n_all)
    best = _best(grid, sign)
    fixed = _best_fixed(grid, sign)
    if best is None or fixed is None:
        raise ConfigError("the objective is undefined (NaN) for every query under every policy; nothing to calibrate")
    ki, tj = best
    in_sample = {
        "n_queries": int(n_q),
        "valid_queries": int(n_all[ki, tj]),
        "objective": _num(grid[ki, tj]),
        "mean_selected": float(np.minimum(ki + 1, lead[:, tj]).mean()) if n_q else 0.0,
        "best_fixed_k": fixed + 1,
        "objective_at_best_fixed_k": _num(grid[fixed, 0]),
        "mean_selected_at_best_fixed_k": float(np.minimum(fixed + 1, lead[:, 0]).mean()) if n_q else 0.0,
        "gain": _num(sign * (grid[ki, tj] - grid[fixed, 0])),
    }
    per_fold = []
    tot = {"s": 0.0, "n": 0, "s0": 0.0, "n0": 0, "sel": 0.0, "sel0": 0.0}
    for f in range(folds):
        others = np.arange(folds) != f
        train = _ratio(S[others].sum(axis=0), N[others].sum(axis=0))
        b = _best(train, sign)
        b0 = _best_fixed(train, sign)
        members = fold == f
        entry: dict[str, Any] = {"fold": f, "n_queries": int(members.sum())}
        if b is None or b0 is None:  # undefined on every training query: nothing chosen for this fold
            entry.update({"k_max": None, "tau": None, "best_fixed_k": None, "objective": None, "objective_at_best_fixed_k": None})
            per_fold.append(entry)
            continue
        fk, ft = b
        sel = float(np.minimum(fk + 1, lead[members, ft]).sum())
        sel0 = float(np.minimum(b0 + 1, lead[members, 0]).sum())
        tot["s"] += float(S[f, fk, ft])
        tot["n"] += int(N[f, fk, ft])
        tot["s0"] += float(S[f, b0, 0])
        tot["n0"] += int(N[f, b0, 0])
        tot["sel"] += sel
        tot["sel0"] += sel0
        entry.update(
            {
                "k_max": fk + 1,
                "tau": float(taus[ft]),
                "best_fixed_k": b0 + 1,
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
    return Fit(ki + 1, float(taus[tj]), grid, n_all, fixed + 1, in_sample, cross_validation, tuple(taus), fold)


# --------------------------------------------------------------------------------------------------
# measures on truncated runs
# --------------------------------------------------------------------------------------------------

_PER_QUERY_FIELDS = ("pos_off", "pos_u")  #: ``UtilityRows`` arrays over the qrels (kept); every other array is per row (cut)


def _prefix_index(r_off: np.ndarray, length: int) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of every segment cut to its first ``length`` rows, and the kept rows' indices."""
    n = np.minimum(np.diff(r_off), length)
    off = np.zeros(r_off.size, dtype=np.int64)
    np.cumsum(n, out=off[1:])
    rows = np.arange(int(off[-1]), dtype=np.int64) - np.repeat(off[:-1] - r_off[:-1], n)
    return off, rows


class _Prefix(EvalData):
    """An :class:`EvalData` whose rankings are prefixes of another's (see :func:`truncate`)."""

    _full_utility: Callable[[], UtilityRows] | None = None
    _rows: np.ndarray | None = None

    @cached_property
    def utility(self) -> UtilityRows:
        if self._full_utility is None or self._rows is None:
            raise ConfigError("this truncated EvalData has no per-passage utilities")
        full, rows = self._full_utility(), self._rows
        cut = {
            f.name: getattr(full, f.name)[rows]
            for f in fields(full)
            if f.name not in _PER_QUERY_FIELDS and isinstance(getattr(full, f.name), np.ndarray)
        }
        return replace(full, **cut)


def truncate(data: EvalData, length: int, utility: Callable[[], UtilityRows] | None = None) -> EvalData:
    """``data`` with every query's ranking cut to its first ``length`` rows.

    Qrels-side arrays, the grade map, the doc groups and the retrieval pool are kept (the pool of a
    run that is its own pool stays the *untruncated* run); the judged rows, the ranked frame and the
    pool membership of judged rows are cut. ``utility`` (a zero-argument function returning the
    full data's :class:`~ctxeval._utility.UtilityRows`) is called only if a measure reads the
    truncated data's ``utility``, which then holds the full rows' utilities cut the same way.
    """
    off, rows = _prefix_index(data.r_off, length)
    keep = data.j_rank <= length
    seg = data.j_seg[keep]
    j_idx = data.j_idx[keep] - data.r_off[:-1][seg] + off[:-1][seg]
    frame = data.frame[rows] if data.frame is not None else None
    out = _Prefix(
        data.qids,
        off,
        j_idx,
        data.j_grade[keep],
        data.q_off,
        data.q_grade,
        data.has_run,
        data.accounting,
        frame,
        data.ties,
        data.max_grade,
    )
    out._full_utility = utility
    out._rows = rows
    out.j_util = np.asarray(data.j_util)[keep]  # type: ignore[misc]
    out.q_util = data.q_util  # type: ignore[misc]
    out.grade_map = data.grade_map
    pool = pool_of(data)
    out.pool = replace(pool, j_in_pool=pool.j_in_pool[keep])
    if data.groups is not None:
        out.groups = replace(data.groups, j_group=data.groups.j_group[keep])  # type: ignore[type-var]
    return out


def prefix_measure(data: EvalData, measure: Measure, k: int, utility: Callable[[], UtilityRows] | None = None) -> np.ndarray:
    """``float64[n_q, k + 1]``: ``C[q, L]`` = ``measure`` on the run cut to its first L passages
    (L = 0..k; the measure is computed once per L, for all queries at once)."""
    longest = int(np.diff(data.r_off).max()) if data.n_queries else 0
    top = min(k, longest)
    base = truncate(data, top, utility)
    out = np.empty((data.n_queries, k + 1), dtype=np.float64)
    for length in range(top + 1):
        d = base if length == top else truncate(base, length, lambda: base.utility)
        out[:, length] = measure.compute(d)
    out[:, top + 1 :] = out[:, top : top + 1]
    return out


# --------------------------------------------------------------------------------------------------
# the glue: files in, policy out
# --------------------------------------------------------------------------------------------------


@dataclass
class Calibration:
    """The outcome of :func:`calibrate`: the policy document and the figures behind it."""

    policy: dict[str, Any]  #: the policy JSON document (``ContextSelector.from_dict`` reads it)
    fit: Fit
    qids: list[str]
    values: np.ndarray = field(repr=False)  #: ``C[n_q, K + 1]``: objective of every prefix length
    lead: np.ndarray = field(repr=False)  #: ``[n_q, n_tau]`` leading passages with rel >= τ

    @property
    def k_max(self) -> int:
        return int(self.policy["k_max"])

    @property
    def tau(self) -> float:
        return float(self.policy["tau"])

    def selector(self) -> ContextSelector:
        return ContextSelector.from_dict(self.policy)

    def to_json(self) -> str:
        """The policy as JSON: deterministic bytes (fixed key order, NaN as null, ``\\n`` at the end)."""
        return json.dumps(self.policy, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    def lines(self, settings: bool = True) -> list[str]:
        """A short human-readable summary; ``settings``: followed by the utility map, the rules and the
        utility source in force (when the objective used per-passage utilities)."""
        p, ins, cv = self.policy, self.policy["in_sample"], self.policy["cross_validation"]

        def f(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.4f}"

        from ._utility import describe_lines

        return [
            f"policy: k_max={p['k_max']} tau={p['tau']:g} (objective {p['objective']}, "
            f"{'higher' if p['objective_direction'] == 'maximise' else 'lower'} is better)",
            f"in-sample ({ins['n_queries']} queries): {f(ins['objective'])} with {ins['mean_selected']:.2f} passages on average; "
            f"best fixed K={ins['best_fixed_k']}: {f(ins['objective_at_best_fixed_k'])}; gain {f(ins['gain'])}",
            f"{cv['folds']}-fold cross-validation (seed {cv['seed']}), held-out queries: {f(cv['objective'])} with "
            f"{cv['mean_selected']:.2f} passages; best fixed K: {f(cv['objective_at_best_fixed_k'])}; gain {f(cv['gain'])}",
        ] + (describe_lines(p["utility"]) if settings and p.get("utility") else [])


def calibrate(
    qrels: Any,
    run: Any,
    *,
    objective: str | Measure = "utility",
    k: int = 50,
    folds: int = 5,
    seed: int = 0,
    config: UtilityConfig | None = None,
    utility_map: Any = None,
    distractors: Any = None,
    utilities: Any = None,
    distractor_rules: Any = "default",
    tau: float | None = None,
    top_rank: int | None = None,
    penalty: float | None = None,
    grade_map: Any = None,
    pool: Any = None,
    pool_depth: int | None = None,
    allow_outside_pool: bool = False,
    groups: Any = None,
    missing: str = "zero",
    duplicates: str = "error",
    llm_threshold: float | None = None,
) -> Calibration:
    """Fit a runtime policy (K_max, τ) on ``run`` against ``qrels`` (see the module docstring).

    ``objective``: ``"utility"`` (total utility of the selected set) or a measure name; ``k``: the
    largest K_max tried; ``folds``, ``seed``: the cross-validation. The per-passage utilities come
    from ``config`` (a :class:`~ctxeval._utility.UtilityConfig`) or, as for :func:`ctxeval.evaluate`,
    from ``utility_map``, ``distractors`` (known ``qid docid`` pairs), ``utilities`` (LLM utilities)
    and the detection rules ``distractor_rules`` with their ``tau``, ``top_rank`` and ``penalty``
    overrides, and ``llm_threshold`` (LLM utility from which an irrelevant passage distracts). (That ``tau`` is the rules' hard-negative threshold; the policy's τ is searched on the
    grid :data:`TAUS`.) ``grade_map``,
    ``pool``, ``pool_depth``, ``allow_outside_pool``, ``groups``, ``missing`` and ``duplicates`` are
    as for :func:`ctxeval.evaluate`; the ranking is always trec_eval's (``ties="trec"``), the one
    :class:`ctxeval.ContextSelector` applies.

    >>> qrels = {"q1": {"a": 5, "b": 1}, "q2": {"c": 5, "d": 5}}
    >>> run = {"q1": {"a": 0.9, "b": 0.3, "x": 0.2}, "q2": {"c": 0.8, "d": 0.7, "y": 0.1}}
    >>> cal = calibrate(qrels, run, k=3, folds=2)
    >>> cal.k_max, cal.tau, cal.policy["in_sample"]["objective"]
    (2, 0.6, 1.5)
    """
    from . import __version__
    from ._data import Qrels, Run
    from ._engine import prepare
    from ._measures import parse_measure
    from ._pool import check_scale, coerce_grade_map, load_groups
    from ._utility import UtilityConfig, row_utilities

    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError(f"k (the largest K_max tried) must be a whole number >= 1, got {k!r}")
    k = int(k)
    measure = None
    if not (isinstance(objective, str) and objective.strip().lower() == "utility"):
        try:
            measure = parse_measure(objective)
        except MeasureError as exc:
            raise MeasureError(f"objective must be 'utility' or a measure name: {exc}") from None
        if measure.spec.aggregate != "mean":
            raise ConfigError(f"calibrate optimises a mean over queries; {measure} aggregates by its {measure.spec.aggregate}")
    cfg = config
    if cfg is None:
        cfg = UtilityConfig.resolve(utility_map, distractors, utilities, distractor_rules, tau, top_rank, penalty, llm_threshold)
    qr = Qrels.coerce(qrels, duplicates=duplicates)
    rn = Run.coerce(run, duplicates=duplicates)
    gm = coerce_grade_map(grade_map)
    pool_run = Run.coerce(pool, duplicates=duplicates) if pool is not None else None
    grp = load_groups(groups)
    data = prepare(
        qr, rn, ties="trec", missing=missing, keep_frame=True, grade_map=gm, pool=pool_run, pool_depth=pool_depth,
        allow_outside_pool=allow_outside_pool, groups=grp,
    )
    if data.n_queries == 0:
        raise ConfigError(f"run {rn.name!r} and the qrels share no query; nothing to calibrate")
    rel = relative_scores(data.r_off, data.r_score)
    lead = lead_lengths(data.r_off, rel, k, TAUS)
    used_utilities = measure is None
    if measure is None:
        rows = row_utilities(data, cfg, qr)
        values = prefix_utility(data.r_off, rows.u, k)
        sign = 1.0
    else:
        check_scale(data, [measure])
        cache: list[UtilityRows] = []

        def full_rows() -> UtilityRows:
            if not cache:
                cache.append(row_utilities(data, cfg, qr))
            return cache[0]

        values = prefix_measure(data, measure, k, full_rows)
        used_utilities = bool(cache)
        sign = 1.0 if measure.spec.higher_is_better else -1.0
    result = fit(values, lead, folds=folds, seed=seed, sign=sign)
    policy = {
        "policy_format": POLICY_FORMAT,
        "k_max": result.k_max,
        "tau": result.tau,
        "objective": "utility" if measure is None else str(measure),
        "objective_direction": "maximise" if sign > 0 else "minimise",
        "rule": POLICY_RULE,
        "ranking": RANKING_RULE,
        "relative_score": RELATIVE_SCORE_RULE,
        "grid": {"k_max": [1, k], "tau": list(TAUS)},
        "in_sample": result.in_sample,
        "cross_validation": result.cross_validation,
        "utility": cfg.describe() if used_utilities else None,
        "data": {
            "qrels": qr.source,
            "run": rn.source,
            "run_name": rn.name,
            "queries": data.accounting.to_dict(),
            "dropped_duplicates": {"qrels": qr.dropped_duplicates, "run": rn.dropped_duplicates},
            "grade_map": gm.describe() if gm is not None else None,
            "pool": None
            if pool_run is None and pool_depth is None
            else {"source": None if pool_run is None else pool_run.source, "depth": pool_depth},
            "groups": grp[1] if grp else None,
        },
        "ctxeval_version": __version__,
    }
    return Calibration(policy, result, list(data.qids), values, lead)
