"""``ctxeval agreement``: the judge card (how far a judge's labels can stand in for people's)."""

from __future__ import annotations

import json

import click

from .._judge.verbs import agreement as card_of
from .options import File, emit, format_option, output_option, shown

__all__ = ["agreement"]


@click.command("agreement")
@click.argument("human", type=File("qrels"))
@click.argument("judged", type=File("qrels"))
@click.argument("runs", nargs=-1, type=File("run"))
@shown("-m", "--measure", default="nDCG@10", help="the measure the system ranking and the estimates use")
@click.option(
    "--grade-map",
    help="[human=|judge=]MAP: map one side's grades onto the other's scale (FROM:TO,... or a preset: trec-dl); "
    "without a side, the side whose grades the map covers",
)
@click.option(
    "--level",
    type=int,
    help="relevant = grade >= LEVEL on the scale compared (default: 1 binary, 2 on TREC's 0-3, 4 on 1-5)",
)
@shown("--top", type=click.IntRange(min=1), default=5, help="the top systems the largest swap is sought in")
@shown("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.05)
@shown(
    "--draws",
    type=click.IntRange(min=0),
    default=200,
    help="draws of each random null judge the figures stand beside (0: none)",
)
@shown("--seed", type=int, default=0, help="the null judges' draws")
@format_option("table", "json")
@output_option()
def agreement(
    human: str,
    judged: str,
    runs: tuple[str, ...],
    measure: str,
    grade_map: str | None,
    level: int | None,
    top: int,
    alpha: float,
    draws: int,
    seed: int,
    fmt: str,
    output: str | None,
) -> None:
    """The judge card: how far JUDGED labels can stand in for HUMAN ones. Coverage, Cohen's kappa
    (unweighted, linear, quadratic) with the confusion matrix, a binarized kappa, Krippendorff's
    ordinal alpha, leniency and a degenerate-judge check; given two or more runs, the system ranking
    under each (Kendall's tau, tau_AP, the largest swap among the top systems) and each run's
    prediction-powered mean with its interval (people's labels on a subset of queries, the judge's on
    all), and each run's rank under either labelling (a run that rises under the judge's beyond the
    others may be fitted to it); every figure beside null judges (permuted, constant, random); a
    verdict listing every failing rule, its threshold beside the published figure it comes from. HUMAN and
    JUDGED are qrels or sample sets (their grades, or reference ids: relevant, the rest unlabelled);
    RUNS are runs or sample sets (their retrieved lists)."""
    card = card_of(
        human, judged, list(runs), measure=measure, alpha=alpha, grade_map=grade_map, level=level, top=top,
        draws=draws, seed=seed,
    )  # fmt: skip
    if fmt == "json":
        emit(json.dumps(card.to_dict(), indent=2, sort_keys=True) + "\n", output)
    else:
        emit(str(card), output)
