"""The ``agreement`` verb: judge labels against human ones (see :mod:`.agreement`)."""

from __future__ import annotations

from typing import Any

from .._core.ppi import ppi_mean
from .._errors import ConfigError
from .agreement import cohen_kappa, ranking_agreement

__all__ = ["agreement_report", "render_agreement"]


def agreement_report(
    human: Any, judged: Any, runs: list[Any], measure: str = "nDCG@10", alpha: float = 0.05
) -> dict[str, Any]:
    """Kappa and the confusion matrix over the pairs both label; given runs, each run's mean of
    ``measure`` under either labeling, the ranking agreement, and the prediction-powered estimate of
    each run's mean (human labels on their queries, judge labels on all)."""
    from .._evaluate import evaluate
    from .._io.model import Qrels

    h, j = Qrels.coerce(human), Qrels.coerce(judged)
    hd, jd = h.to_dict(), j.to_dict()
    hp = {(q, d): g for q, docs in hd.items() for d, g in docs.items()}
    jp = {(q, d): g for q, docs in jd.items() for d, g in docs.items()}
    kappa = cohen_kappa(hp, jp)
    notes = []
    if set(hp.values()) - set(jp.values()) or set(jp.values()) - set(hp.values()):
        notes.append(
            f"the labels use different grades (human {sorted(set(hp.values()))}, judge {sorted(set(jp.values()))}): "
            "kappa compares them as given; map one scale onto the other first if they differ"
        )
    doc: dict[str, Any] = {
        "human": h.source,
        "judge": j.source,
        "pairs": {"human": len(hp), "judge": len(jp), "both": kappa.n},
        "kappa": kappa.to_dict(),
        "notes": notes,
    }
    if not runs:
        return doc
    if len(runs) < 2:
        raise ConfigError("the system ranking needs at least two runs")
    by_h = evaluate(h, runs, [measure], policies={"missing": "zero"})
    by_j = evaluate(j, runs, [measure], policies={"missing": "zero"})
    m = by_h.measures[0]
    hm = {r.name: r.mean(m) for r in by_h.runs}
    jm = {r.name: r.mean(m) for r in by_j.runs}
    doc["measure"] = str(m)
    doc["means"] = {name: {"human": hm[name], "judge": jm[name]} for name in hm}
    doc["ranking"] = ranking_agreement(hm, jm)
    ppi = {}
    for rh, rj in zip(by_h.runs, by_j.runs):
        try:
            ppi[rh.name] = ppi_mean(rj.per_query(m), rh.per_query(m), alpha=alpha).to_dict()
        except ConfigError as e:
            notes.append(f"{rh.name}: no prediction-powered estimate: {e}")
    doc["ppi"] = ppi
    doc["alpha"] = alpha
    return doc


def render_agreement(doc: dict[str, Any]) -> str:
    k = doc["kappa"]
    lines = [
        f"human: {doc['human']} ({doc['pairs']['human']} pairs); judge: {doc['judge']} ({doc['pairs']['judge']} pairs); "
        f"both label {doc['pairs']['both']}",
        f"Cohen's kappa {k['kappa']:.4f} (linear {k['kappa_linear']:.4f}, quadratic {k['kappa_quadratic']:.4f}); "
        f"exact agreement {k['exact_agreement']:.1%}",
        "confusion (rows: human grade, columns: judge grade)",
        "        " + "".join(f"{g:>7}" for g in k["grades"]),
    ]
    for g, row in zip(k["grades"], k["confusion"]):
        lines.append(f"{g:>7} " + "".join(f"{x:>7}" for x in row))
    if "ranking" in doc:
        r = doc["ranking"]
        tau = "n/a" if r["kendall_tau"] is None else f"{r['kendall_tau']:.4f}"
        sw = r["largest_swap"]
        lines.append(
            f"system ranking by {doc['measure']}: Kendall's tau {tau} over {r['runs']} runs; largest swap "
            f"{sw['run']} (human rank {sw['human_rank']:g}, judge rank {sw['judge_rank']:g})"
        )
        lines.append(
            f"{'run':<20} {'human':>8} {'judge':>8} {'PPI mean':>9}  {100 * (1 - doc['alpha']):.0f}% interval (human-only interval)"
        )
        for name, mm in doc["means"].items():
            p = doc["ppi"].get(name)
            est = (
                f"{p['mean']:>9.4f}  [{p['low']:.4f}, {p['high']:.4f}] ([{p['human_low']:.4f}, {p['human_high']:.4f}], "
                f"{p['labelled']} labelled of {p['judged']})"
                if p
                else f"{'-':>9}"
            )
            lines.append(f"{name:<20} {mm['human']:>8.4f} {mm['judge']:>8.4f} {est}")
    lines.extend(f"note: {n}" for n in doc["notes"])
    return "\n".join(lines) + "\n"
