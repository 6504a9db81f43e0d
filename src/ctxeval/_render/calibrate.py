"""A calibration's summary lines (the policy itself is JSON: ``Calibration.to_json``)."""

from __future__ import annotations

from .._calibrate import Calibration
from .._calibrate.calibrate import cost_line
from .._context.utility import describe_lines

__all__ = ["calibration_lines"]


def calibration_lines(cal: Calibration, settings: bool = True) -> list[str]:
    """A short human-readable summary; ``settings``: followed by the utility map, the rules and the
    utility source in force (when the objective used per-passage utilities)."""
    p, ins, cv = cal.policy, cal.policy["in_sample"], cal.policy["cross_validation"]

    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.4f}"

    budget = p.get("budget_tokens")
    what = f"budget_tokens={budget} ({p.get('tokenizer')}) " if budget is not None else ""
    fixed = f"budget={ins['best_fixed_k']} tokens" if budget is not None else f"K={ins['best_fixed_k']}"
    unit = "budget" if budget is not None else "K"
    return (
        [
            f"policy: {what}k_max={p['k_max']} tau={p['tau']:g} (objective {p['objective']}, "
            f"{'higher' if p['objective_direction'] == 'maximise' else 'lower'} is better)",
            f"in-sample ({ins['n_queries']} queries): {f(ins['objective'])} with {ins['mean_selected']:.2f} passages on average; "
            f"best fixed {fixed}: {f(ins['objective_at_best_fixed_k'])}; gain {f(ins['gain'])}",
            f"{cv['folds']}-fold cross-validation (seed {cv['seed']}), held-out queries: {f(cv['objective'])} with "
            f"{cv['mean_selected']:.2f} passages; best fixed {unit}: {f(cv['objective_at_best_fixed_k'])}; gain {f(cv['gain'])}",
        ]
        + ([f"cost: {cost_line(p['irrelevant_cost'])}"] if p.get("irrelevant_cost") is not None else [])
        + [f"note: {n}" for n in cal.notes]
        + (describe_lines(p["utility"]) if settings and p.get("utility") else [])
    )
