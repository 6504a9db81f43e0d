"""``calibrate``: fit the runtime policy (K_max, τ) that :class:`ctxeval.ContextSelector` applies.

The grid, the objectives and the cross-validation are described in :mod:`.grid`; this module reads
the inputs through the session, computes the objective of every prefix length and writes the policy
document.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._context.settings import RagConfig
from .._context.utility import UtilityConfig
from .._core.evaldata import EvalData
from .._core.relscore import relative_scores
from .._errors import ConfigError, MeasureError
from .._measures import Measure, parse_measure
from .._policies import Policies
from .._selector import POLICY_FORMAT, RANKING_RULE, RELATIVE_SCORE_RULE, ContextSelector
from .._session import open_session
from .._version import __version__
from .grid import POLICY_RULE, TAUS, Checks, Fit, checks, fit, lead_lengths, prefix_utility

__all__ = ["Calibration", "calibrate", "prefix_measure"]


def prefix_measure(data: EvalData, measure: Measure, k: int) -> np.ndarray:
    """``float64[n_q, k + 1]``: ``C[q, L]`` = ``measure`` on the run cut to its first L passages
    (L = 0..k; the measure is computed once per L, for all queries at once). The side data is cut
    with the run (:meth:`EvalData.prefix`): the qrels, the pool of a run that is its own pool (the
    untruncated candidates) and the per-passage utilities of the full list stay as they were."""
    longest = int(np.diff(data.r_off).max()) if data.n_queries else 0
    top = min(k, longest)
    base = data.prefix(top)
    out = np.empty((data.n_queries, k + 1), dtype=np.float64)
    for length in range(top + 1):
        d = base if length == top else base.prefix(length)
        out[:, length] = measure.compute(d)
    out[:, top + 1 :] = out[:, top : top + 1]
    return out


@dataclass
class Calibration:
    """The outcome of :func:`calibrate`: the policy document and the figures behind it."""

    policy: dict[str, Any]  #: the policy JSON document (``ContextSelector.from_dict`` reads it)
    fit: Fit
    qids: list[str]
    values: np.ndarray = field(repr=False)  #: ``C[n_q, K + 1]``: objective of every prefix length
    lead: np.ndarray = field(repr=False)  #: ``[n_q, n_tau]`` leading passages with rel >= τ
    checks: Checks | None = None  #: the optimum on the grid's edge, a no-op τ, no held-out gain

    @property
    def notes(self) -> list[str]:
        """What the policy rests on, in words (empty when it has a real, held-out optimum)."""
        return list(self.checks.notes) if self.checks is not None else []

    @property
    def beats_fixed_k(self) -> bool:
        """Whether the policy beats the best fixed K on held-out queries (else use that fixed K)."""
        return self.checks is None or self.checks.beats_best_fixed_k

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


def calibrate(
    qrels: Any,
    run: Any,
    *,
    objective: str | Measure = "utility",
    k: int = 50,
    folds: int = 5,
    seed: int = 0,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
) -> Calibration:
    """Fit a runtime policy (K_max, τ) on ``run`` against ``qrels`` (see :mod:`ctxeval._calibrate.grid`).

    ``objective``: ``"utility"`` (total utility of the selected set) or a measure name; ``k``: the
    largest K_max tried; ``folds``, ``seed``: the cross-validation. The per-passage utilities come from
    ``utility`` (a :class:`~ctxeval.UtilityConfig`, as for :func:`ctxeval.evaluate`; its ``tau`` is
    the rules' hard-negative threshold, the policy's τ is searched on the grid :data:`TAUS`).
    ``policies`` and ``rag`` are as for :func:`ctxeval.evaluate`; the ranking is always trec_eval's
    (``ties="trec"``), the one :class:`ctxeval.ContextSelector` applies.

    Relative scores: q1 a 1, b 0.143, x 0; q2 c 1, d 0.857, y 0. Utilities: a, c, d 1; b (grade 1) -1;
    x, y (unlabelled at rank 3) -0.5. Best: keep a, c and d (mean 1.5) with K_max = 2 and τ in
    (0.143, 0.857]; of the 15 tied grid values 0.15 .. 0.85 the middle one, 0.5:

    >>> qrels = {"q1": {"a": 5, "b": 1}, "q2": {"c": 5, "d": 5}}
    >>> run = {"q1": {"a": 0.9, "b": 0.3, "x": 0.2}, "q2": {"c": 0.8, "d": 0.7, "y": 0.1}}
    >>> cal = calibrate(qrels, run, k=3, folds=2)
    >>> cal.k_max, cal.tau, cal.policy["in_sample"]["objective"]
    (2, 0.5, 1.5)
    """
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
            raise ConfigError(
                f"calibrate optimises a mean over queries; {measure} aggregates by its {measure.spec.aggregate}"
            )
    pol = Policies.coerce(policies)
    if pol.ties != "trec":
        raise ConfigError("calibrate ranks as ContextSelector does, by trec_eval's rule: ties must be 'trec'")
    session, (rn,) = open_session(
        qrels, [run], [measure] if measure is not None else [], policies=pol, rag=rag, utility=utility
    )
    if measure is not None:
        measure = session.measures[0]
    cfg = session.utility
    qr = session.qrels
    used_utilities = measure is None or "utility" in measure.requires
    data = session.prepare(
        rn, [measure] if measure is not None else [], keep_rows=True, extras=["utility"] if measure is None else []
    )
    if data.n_queries == 0:
        raise ConfigError(f"run {rn.name!r} and the qrels share no query; nothing to calibrate")
    rel = relative_scores(data.r_off, data.r_score)
    lead = lead_lengths(data.r_off, rel, k, TAUS)
    if measure is None:
        values = prefix_utility(data.r_off, data.extra("utility").u, k)
        sign = 1.0
    else:
        values = prefix_measure(data, measure, k)
        sign = 1.0 if measure.spec.higher_is_better else -1.0
    result = fit(values, lead, folds=folds, seed=seed, sign=sign)
    found = checks(result, lead, sign)
    rcfg = session.rag
    gm = rcfg.grade_map
    pool_run = session.pool_for(rn)
    groups = session.settings.groups
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
        "checks": found.to_dict(),
        "notes": list(found.notes),
        "utility": cfg.describe() if used_utilities else None,
        "data": {
            "qrels": qr.source,
            "run": rn.source,
            "run_name": rn.name,
            "queries": data.accounting.to_dict(),
            "dropped_duplicates": {"qrels": qr.dropped_duplicates, "run": rn.dropped_duplicates},
            "grade_map": gm.describe() if gm is not None else None,
            "pool": None
            if pool_run is None and rcfg.pool_depth is None
            else {"source": None if pool_run is None else pool_run.source, "depth": rcfg.pool_depth},
            "groups": groups.source if groups is not None else None,
        },
        "ctxeval_version": __version__,
    }
    return Calibration(policy, result, list(data.qids), values, lead, found)
