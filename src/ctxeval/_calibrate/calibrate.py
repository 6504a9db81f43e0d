"""``calibrate``: fit the runtime policy (K_max, τ) that :class:`ctxeval.ContextSelector` applies.

The grid, the objectives and the cross-validation are described in :mod:`.grid`; this module reads
the inputs through the session, computes the objective of every prefix length and writes the policy
document.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._context.labels import HOW_TO_JUDGE
from .._context.settings import RagConfig
from .._context.spans import tokenizer_of
from .._context.utility import UtilityConfig, flag_counts, unlabelled_note
from .._core.budget import budget_caps, budget_grid
from .._core.evaldata import EvalData
from .._core.extras import Utilities
from .._core.relscore import relative_scores
from .._core.segments import top_rows
from .._engines.base import provider
from .._engines.blocks import Block
from .._errors import ConfigError, MeasureError
from .._measures import Measure, parse_measure
from .._policies import Policies
from .._selector import BUDGET_FORMAT, POLICY_FORMAT, RANKING_RULE, RELATIVE_SCORE_RULE, ContextSelector
from .._session import one_run_inputs, open_session
from .._show import fmt, html_table, pandas, pyplot
from .._version import __version__
from .grid import POLICY_RULE, TAUS, Checks, Fit, checks, fit, lead_lengths, prefix_utility

__all__ = ["IRRELEVANT_COST", "Calibration", "calibrate", "cost_line", "prefix_measure", "with_cost"]

#: the default cost of a passage of utility 0 under the utility objective: UDCG's weight of an
#: irrelevant passage (Trappolini et al.'s released compute_udcg_score: -1/3)
IRRELEVANT_COST = 1 / 3


def with_cost(urows: Utilities, cost: float) -> np.ndarray:
    """The per-passage utilities of the utility objective: a passage of utility 0 that the labels say
    adds nothing (judged irrelevant or useless, unjudged on graded labels, an LLM utility below the
    distractor threshold) counts ``-cost``; an unlabelled chunk of binary labels that nothing decided
    keeps 0 (whether it is irrelevant is unknown); every other utility stays.

    >>> u = Utilities(np.array([1.0, 0.0, -1.0, 0.0]), *([np.zeros(4)] * 3), None, None, None,
    ...               unknown=np.array([False, False, False, True]))
    >>> with_cost(u, 0.5).tolist()
    [1.0, -0.5, -1.0, 0.0]
    """
    nothing = urows.u == 0.0
    if urows.unknown is not None:
        nothing &= ~urows.unknown
    return np.where(nothing, -cost, urows.u)


def cost_line(cost: float) -> str:
    """What the utility objective charges for a passage that adds nothing, for reports.

    >>> cost_line(1 / 3)[:45]
    'a passage the labels say adds nothing (utilit'
    """
    what = "UDCG's weight of an irrelevant passage, 1/3" if cost == IRRELEVANT_COST else "given"
    return (
        f"a passage the labels say adds nothing (utility 0: irrelevant, or unjudged on graded labels) costs "
        f"{cost:.4g} ({what}; --irrelevant-cost, 0 for none): the best K weighs what each further passage adds "
        "against that cost"
    )


def _input_notes(
    session: Any, acc: Any, utils: Iterable[float] | None, cfg: UtilityConfig, measure: Measure | None
) -> list[str]:
    """What the inputs make of the objective: the kind of the labels (binary labels give the utility
    objective no cost to weigh), judged queries the run lacks, and a utility map under which nothing
    is relevant while judged passages are distractors."""
    notes = list(session.label_notes([measure] if measure is not None else [], scale_read=True))
    kind = session.qrels.labels
    decided = cfg.llm is not None or cfg.known is not None or cfg.rules.unlabelled
    if kind.binary and measure is None and not decided:
        notes.append(
            "on binary labels no passage costs anything: the utility objective counts the references kept, so the "
            "best K is where the last reference sits, not a trade-off with distractors (an unlabelled chunk is not "
            "known to be irrelevant, so it bears no irrelevant cost either). For a K that weighs distractors, get "
            f"labels that say which chunks distract: {HOW_TO_JUDGE}"
        )
    total = acc.evaluated + acc.missing
    if acc.missing and 2 * acc.missing > total:
        how = "scored 0" if acc.missing_policy == "zero" else "left out"
        notes.append(
            f"{acc.missing} of the {total} judged queries have no line in the run ({how}, --missing "
            f"{acc.missing_policy}): the policy rests on the {acc.evaluated} {'query' if acc.evaluated == 1 else 'queries'} the run answers; check that the "
            "run and the qrels belong together"
        )
    if measure is None and utils is not None:
        umap = cfg.map
        util = [umap.get(int(g)) for g in sorted(utils)]
        said = any("every relevant passage counts as one" in n for n in notes)
        if not said and util and not any((u or 0.0) > 0 for u in util) and any((u or 0.0) < 0 for u in util):
            notes.append(
                "no judged passage has a positive utility under the utility map and the grade map in force, and some "
                "have a negative one: every relevant passage counts as a distractor. Binary labels (relevant or "
                "not)? --labels binary, or a grade map such as --grade-map 1:5,0:2"
            )
    return notes


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
        """What the policy rests on, in words (empty when it has a real, held-out optimum on labels
        that can say what helps and what hurts)."""
        return list(self.policy.get("notes", []))

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

    @property
    def budget(self) -> int | None:
        """The policy's budget of tokens (None: a policy over K_max alone)."""
        b = self.policy.get("budget_tokens")
        return None if b is None else int(b)

    def selector(self) -> ContextSelector:
        return ContextSelector.from_dict(self.policy)

    def __repr__(self) -> str:
        ins = self.policy["in_sample"]
        rec = self.policy["checks"].get("recommended_fixed_k")
        unit = "K" if self.budget is None else "budget"
        fixed = f"K={rec}" if self.budget is None else f"budget of {rec} tokens"
        use = f"use the fixed {fixed}" if rec is not None and not self.beats_fixed_k else f"beats the best fixed {unit}"
        budget = "" if self.budget is None else f"budget={self.budget}, "
        return (
            f"Calibration({budget}k_max={self.k_max}, tau={self.tau:g}, objective {self.policy['objective']} "
            f"{fmt(ins['objective'])} in sample; {use}; {len(self.notes)} notes)"
        )

    def _repr_html_(self) -> str:
        ins, cv = self.policy["in_sample"], self.policy["cross_validation"]
        rows = [
            ["policy", f"K_max={self.k_max}, tau={self.tau:g}", ins["objective"], cv["objective"]],
            [
                "best fixed K",
                f"K={ins['best_fixed_k']}",
                ins["objective_at_best_fixed_k"],
                cv["objective_at_best_fixed_k"],
            ],
        ]
        cap = "; ".join(self.notes[-1:]) or f"objective {self.policy['objective']}"
        return html_table(["", "setting", "in sample", "held out"], rows, cap)

    def to_pandas(self) -> Any:
        """The grid: one row per (K_max, tau) with its in-sample ``objective`` (the mean over queries)."""
        pd = pandas("Calibration.to_pandas")
        grid = self.fit.grid
        rows = [(k + 1, t, float(grid[k, j])) for k in range(grid.shape[0]) for j, t in enumerate(self.fit.taus)]
        return pd.DataFrame(rows, columns=["k_max", "tau", "objective"])

    def plot(self, ax: Any = None) -> Any:
        """The objective of every fixed K (tau = 0) against K, the policy's value marked; on
        matplotlib ``ax`` (default: a new figure). Returns the axes. Needs the ``report`` extra."""
        plt = pyplot("Calibration.plot")
        if ax is None:
            _, ax = plt.subplots()
        grid = self.fit.grid
        ks = list(range(1, grid.shape[0] + 1))
        ax.plot(ks, grid[:, 0], marker="o", label="fixed K (tau = 0)")
        ax.axhline(
            self.policy["in_sample"]["objective"], linestyle="--", label=f"policy K_max={self.k_max}, tau={self.tau:g}"
        )
        ax.set_xlabel("K")
        ax.set_ylabel(f"mean {self.policy['objective']}")
        ax.legend()
        return ax

    def to_json(self) -> str:
        """The policy as JSON: deterministic bytes (fixed key order, NaN as null, ``\\n`` at the end)."""
        return json.dumps(self.policy, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


#: how a policy with a budget of tokens ends the selection (the stop rule, as calibrate evaluated it)
BUDGET_RULE = (
    "then keep them while their tokens add up to at most budget_tokens, stopping at the first that would exceed it"
)


def _budgets(k: Any) -> list[int] | None:
    """The budgets of a spec ending in ``tok`` (``"256:4096:256tok"``), else None (K_max = 1..k)."""
    if not isinstance(k, str):
        return None
    try:
        out = budget_grid(k)
    except ValueError as exc:
        raise ConfigError(f"k: {exc}") from None
    if out is None:
        raise ConfigError(f"k must be a whole number, or budgets of tokens such as 256:4096:256tok, got {k!r}")
    return out


def _budget_entries(budget: int, session: Any) -> dict[str, Any]:
    """What a budget policy says beside its budget: the tokenizer the serving side must count with."""
    return {
        "budget_tokens": int(budget),
        "tokenizer": tokenizer_of(session.settings.chunks, session.rag),
        "overflow": "stop",
    }


def calibrate(
    qrels: Any = None,
    run: Any = None,
    *,
    samples: Any = None,
    objective: str | Measure = "utility",
    k: int | str = 50,
    folds: int = 5,
    seed: int = 0,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    irrelevant_cost: float = IRRELEVANT_COST,
    engine: Any = "local",
) -> Calibration:
    """Fit a runtime policy (K_max, τ) on ``run`` against ``qrels`` (the README's "Runtime policy" section).

    ``objective``: ``"utility"`` (total utility of the selected set) or a measure name; ``k``: the
    largest K_max tried, or budgets of tokens (``"256:4096:256tok"``, ``"512,1024,2048tok"``, or
    ``"4096tok"``: 32 equal steps up to it) with a chunk table in ``rag`` (its tokens, or the tokenizer
    over its texts): the policy is then (budget, τ), "pass B tokens": keep the candidates in rank order
    while rel ≥ τ and their tokens fit B, stopping at the first that does not (``policy_format`` 3,
    naming the tokenizer; :class:`ctxeval.ContextSelector` applies it given each candidate's tokens);
    ``folds``, ``seed``: the cross-validation. The per-passage utilities come from
    ``utility`` (a :class:`~ctxeval.UtilityConfig`, as for :func:`ctxeval.evaluate`; its ``tau`` is
    the rules' hard-negative threshold, the policy's τ is searched on the grid :data:`TAUS`).
    ``policies`` and ``rag`` are as for :func:`ctxeval.evaluate`; the ranking is always trec_eval's
    (``ties="trec"``), the one :class:`ctxeval.ContextSelector` applies. ``samples`` (instead of
    ``qrels`` and ``run``): one sample set; on its reference ids (binary labels) no label says which
    chunks distract, and the notes say so and how to get labels that do. ``engine``: where the
    prefixes are computed, as for :func:`ctxeval.evaluate`.

    ``irrelevant_cost`` (utility objective): what a passage the labels say adds nothing costs (utility
    0: judged irrelevant or useless, unjudged on graded labels, an LLM utility below the distractor
    threshold; not an unlabelled chunk of binary labels, which nothing says is irrelevant): it counts
    ``-irrelevant_cost`` instead of 0 (:func:`with_cost`). Default 1/3, UDCG's weight of an irrelevant passage (the
    released ``compute_udcg_score``: relevant 1, irrelevant -1/3): without a cost, passages that add
    nothing cost nothing, so on graded labels whose lists hold relevant passages deep down the answer
    is always the largest K tried. 0 restores that reading. Distractors keep their own, negative,
    utility.

    Relative scores: q1 a 1, b 0.143, x 0; q2 c 1, d 0.857, y 0. Utilities: a, c, d 1; b (grade 1) -1;
    x, y (unlabelled at rank 3) -0.5. Best: keep a, c and d (mean 1.5) with K_max = 2 and τ in
    (0.143, 0.857]; of the 15 tied grid values 0.15 .. 0.85 the middle one, 0.5:

    >>> qrels = {"q1": {"a": 5, "b": 1}, "q2": {"c": 5, "d": 5}}
    >>> run = {"q1": {"a": 0.9, "b": 0.3, "x": 0.2}, "q2": {"c": 0.8, "d": 0.7, "y": 0.1}}
    >>> cal = calibrate(qrels, run, k=3, folds=2)
    >>> cal.k_max, cal.tau, cal.policy["in_sample"]["objective"]
    (2, 0.5, 1.5)
    """
    budgets = _budgets(k)
    if budgets is None and (isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
        raise ConfigError(f"k (the largest K_max tried) must be a whole number >= 1, got {k!r}")
    if (
        isinstance(irrelevant_cost, bool)
        or not isinstance(irrelevant_cost, (int, float))
        or not 0.0 <= float(irrelevant_cost) < float("inf")
    ):
        raise ConfigError(f"irrelevant_cost must be a number >= 0, got {irrelevant_cost!r}")
    cost = float(irrelevant_cost)
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
    eng = provider(engine)
    qrels, run, input_notes, sets = one_run_inputs("calibrate", qrels, run, samples, pol, eng)
    session, (rn,) = open_session(
        qrels,
        [run],
        [measure] if measure is not None else [],
        policies=pol,
        rag=rag,
        utility=utility,
        samples=sets,
        engine=eng,
        extras=["utility"] if measure is None else [],
    )
    if measure is not None:
        measure = session.measures[0]
    cfg = session.utility
    qr = session.qrels
    used_utilities = measure is None or "utility" in measure.requires
    extras = ["utility"] if measure is None else []
    caps = None
    if budgets is not None:  # a budget of tokens: each budget allows each query the prefix that fits it
        capped = session.blocks(rn, [], _Caps(tuple(budgets)), keep_rows=True, extras=["chunks"])
        caps = capped.block.values["caps"]
        k = max(1, int(caps[:, -1].max())) if caps.size else 1
    k = int(k)
    mapped = session.blocks(
        rn,
        [measure] if measure is not None else [],
        _Prefixes(measure, k, cost),
        keep_rows=True,
        extras=extras,
    )
    block = mapped.block
    if not block.qids:
        raise ConfigError(f"run {mapped.name!r} and the qrels share no query; nothing to calibrate")
    values, lead = block.values["C"], block.values["lead"]
    flagged = None
    if measure is None:
        sign = 1.0
        flagged = unlabelled_note(mapped.name, block.totals["flags"], k)
    else:
        sign = 1.0 if measure.spec.higher_is_better else -1.0
    result = fit(values, lead, folds=folds, seed=seed, sign=sign, caps=caps, axis=budgets)
    decided = cfg.llm is not None or cfg.known is not None or cfg.rules.unlabelled
    found = checks(result, lead, sign, cost_free=measure is None and qr.labels.binary and not decided)
    utils = block.totals.get("grades")
    notes = [*input_notes, *_input_notes(session, mapped.accounting, utils, cfg, measure), *found.notes]
    if flagged:
        notes.insert(len(input_notes), flagged)
    rcfg = session.rag
    gm = rcfg.grade_map
    pool_run = session.pool_for(rn)
    groups = session.settings.groups
    policy = {
        "policy_format": POLICY_FORMAT if budgets is None else BUDGET_FORMAT,
        "k_max": result.k_max if budgets is None else k,
        "tau": result.tau,
        **({} if budgets is None else _budget_entries(result.k_max, session)),
        "objective": "utility" if measure is None else str(measure),
        "objective_direction": "maximise" if sign > 0 else "minimise",
        "rule": POLICY_RULE if budgets is None else f"{POLICY_RULE}; {BUDGET_RULE}",
        "ranking": RANKING_RULE,
        "relative_score": RELATIVE_SCORE_RULE,
        # with budgets, the grid's first axis is the budget: best_fixed_k / recommended_fixed_k hold budgets
        "grid": {"k_max": [1, k], "tau": list(TAUS)}
        if budgets is None
        else {"budget_tokens": budgets, "tau": list(TAUS), "fixed_k_is": "a budget of tokens"},
        "in_sample": result.in_sample,
        "cross_validation": result.cross_validation,
        "checks": found.to_dict(),
        "notes": notes,
        "utility": cfg.describe() if used_utilities else None,
        "irrelevant_cost": cost if measure is None else None,
        "data": {
            "qrels": qr.source,
            "run": mapped.source,
            "run_name": mapped.name,
            "queries": mapped.accounting.to_dict(),
            "dropped_duplicates": {"qrels": qr.dropped_duplicates, "run": mapped.dropped_duplicates},
            "grade_map": gm.describe() if gm is not None else None,
            "pool": None
            if pool_run is None and rcfg.pool_depth is None
            else {"source": None if pool_run is None else pool_run.source, "depth": rcfg.pool_depth},
            "groups": groups.source if groups is not None else None,
        },
        "ctxeval_version": __version__,
    }
    return Calibration(policy, result, list(block.qids), values, lead, found)


@dataclass(frozen=True)
class _Caps:
    """calibrate's first block function at a budget of tokens: per query, for each budget, the most
    leading chunks that fit it (:func:`budget_caps`), which sets the deepest prefix the fit reads."""

    budgets: tuple[int, ...]

    def __call__(self, session: Any, data: EvalData) -> Block:
        caps = budget_caps(data.r_off, data.extra("chunks").tokens, list(self.budgets))
        return Block(list(data.qids), values={"caps": caps})


@dataclass(frozen=True)
class _Prefixes:
    """calibrate's block function (:mod:`ctxeval._engines.blocks`): per query the objective of every
    prefix length (``C``) and the leading passages at each τ (``lead``); the utility objective's
    flagged hard negatives in the top k and the grades' utilities of the judged passages."""

    measure: Measure | None
    k: int
    cost: float

    def __call__(self, session: Any, data: EvalData) -> Block:
        rel = relative_scores(data.r_off, data.r_score)
        block = Block(list(data.qids), values={"lead": lead_lengths(data.r_off, rel, self.k, TAUS)})
        if self.measure is None:
            u = data.extra("utility")
            block.values["C"] = prefix_utility(data.r_off, with_cost(u, self.cost), self.k)
            block.totals["flags"] = flag_counts(u, data.r_judged, top_rows(data.r_off, self.k)[0])
            if data.has("grades"):
                block.totals["grades"] = frozenset(np.unique(np.asarray(data.extra("grades").q_util)).tolist())
        else:
            block.values["C"] = prefix_measure(data, self.measure, self.k)
        return block
