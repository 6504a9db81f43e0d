"""fit-udcg's report as a table or JSON."""

from __future__ import annotations

from .._context.utility import describe_lines
from .._errors import ConfigError
from .._fit_udcg import FitResult
from .text import to_json

__all__ = ["render_fit"]


def render_fit(result: FitResult, fmt: str = "table") -> str:
    """The outcome of fit-udcg as a table or JSON (the report; the weights are ``result.fit_json()``)."""
    if fmt == "json":
        return to_json(result.report)
    if fmt != "table":
        raise ConfigError(f"format must be table or json, got {fmt!r}")
    r = result.report
    out = [
        f"fit-udcg: k = {r['k']}, {r['n_observations']} observations ({r['n_queries']} queries x runs {', '.join(r['runs'])}), "
        f"{r['positive_rate']:.1%} answered correctly",
        f"held-out prediction of answer correctness ({r['folds']}-fold over queries, seed {r['seed']}, l2 {r['l2']:g}):",
        f"  {'measure':<22}{'r (point-biserial)':>20}{'AUC':>9}{'fold mean r':>13}{'fold mean AUC':>15}",
    ]
    for name, s in r["held_out"].items():

        def f(x: float | None, d: int = 3) -> str:
            return "NA" if x is None else f"{x:.{d}f}"

        out.append(f"  {name:<22}{f(s['r']):>20}{f(s['auc']):>9}{f(s['fold_mean_r']):>13}{f(s['fold_mean_auc']):>15}")
    fit = result.fit
    out.append(f"fitted on all observations: bias {fit['bias']:.4f}")
    out.append("  rank " + "".join(f"{i + 1:>9}" for i in range(fit["k"])))
    out.append("  alpha" + "".join(f"{a:>9.4f}" for a in fit["alpha"]))
    out.append("  beta " + "".join(f"{b:>9.4f}" for b in fit["beta"]))
    out.extend(describe_lines(r["utility"]))
    out.extend(f"note: {n}" for n in r["notes"])
    if r.get("output"):
        out.append(f"weights written to {r['output']}; evaluate with -m \"UDCG-pos(fit='{r['output']}')@{r['k']}\"")
    return "\n".join(out) + "\n"
