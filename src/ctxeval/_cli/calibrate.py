"""``ctxeval calibrate``: fit the runtime policy (K_max, τ) that ``ContextSelector`` applies."""

from __future__ import annotations

from typing import Any

import click

from .._errors import ConfigError
from .options import (
    File,
    engine_options,
    inputs_from,
    policy_options,
    rag_options,
    run_arguments,
    settings_from,
    shown,
    utility_options,
)

_OBJECTIVE_HELP = (
    "what the policy maximises: 'utility' (total utility of the selected passages) or a measure "
    "computed on the run cut to the selected passages (e.g. dDCG, nDCG, 'RA-nWG@20'; harm-like "
    "measures are minimised)"
)


@click.command("calibrate")
@run_arguments(one=True)
@shown("--objective", default="utility", help=_OBJECTIVE_HELP)
@shown(
    "-k",
    "k",
    default="50",
    help="largest K_max tried (K_max = 1..k), or budgets of tokens (256:4096:256tok, 512,1024tok, or 4096tok: 32 "
    "steps up to it) with --chunks: the policy is then 'pass B tokens' (and tau)",
)
@click.option(
    "--spans",
    is_flag=True,
    help="QRELS is a file of span labels (qid 0 doc_id start end grade, or JSONL/CSV/Parquet); needs --chunks",
)
@shown("--folds", type=click.IntRange(min=2), default=5, help="k-fold cross-validation over queries")
@shown("--seed", type=click.IntRange(min=0), default=0, help="seed of the fold assignment")
@click.option(
    "-o",
    "--output",
    type=File("output", writable=True),
    help="write the policy JSON here (and a summary to stdout); default: the JSON to stdout",
)
@click.option(
    "--force", is_flag=True, help="write the policy even when it does not beat the best fixed K on held-out queries"
)
@click.option(
    "--irrelevant-cost",
    type=click.FloatRange(min=0),
    default=1 / 3,
    show_default="1/3, UDCG's weight of an irrelevant passage",
    help="utility objective: what a passage the labels say adds nothing (utility 0: irrelevant, or unjudged on "
    "graded labels) costs; 0 for nothing",
)
@utility_options
@rag_options()
@policy_options(ties=False)
@engine_options
def command(
    objective: str,
    k: str,
    spans: bool,
    folds: int,
    seed: int,
    output: str | None,
    force: bool,
    irrelevant_cost: float,
    **kw: Any,
) -> None:
    """Fit how many passages to pass (K_max) and from which relative score (tau) on RUN.

    Grid search over K_max = 1..k and tau = 0, 0.05, ..., 0.95 (keep the candidates in rank order
    while their relative score (s - s_min) / (s_max - s_min) is >= tau, at most K_max), maximising the
    mean objective over queries, with k-fold cross-validation: the gain over the best fixed K is
    measured on held-out queries. The policy JSON is read by ctxeval.ContextSelector.from_json at
    serving time. A policy that does not beat the best fixed K on held-out queries is not written
    (exit status 1; the fixed K is recommended) unless --force is given.

    The per-passage utilities take the options of 'ctxeval distraction' (--tau there is the
    hard-negative threshold of the rules; the policy's tau is searched on the grid).
    """
    from .._calibrate import calibrate
    from .._io.writers import write_text
    from .._render.calibrate import calibration_lines

    inputs = inputs_from(kw, one=True)
    if spans:
        from .._io.spans import SpanLabels

        if "samples" in inputs:
            raise ConfigError("--spans reads QRELS as span labels, not a sample set")
        inputs["qrels"] = SpanLabels.from_file(inputs["qrels"])
    cal = calibrate(
        **inputs,
        objective=objective,
        k=int(k) if k.strip().isdigit() else k,
        folds=folds,
        seed=seed,
        irrelevant_cost=irrelevant_cost,
        **settings_from(kw),
    )
    text = cal.to_json()
    if not cal.beats_fixed_k and not force:
        click.echo("\n".join(calibration_lines(cal)))
        fixed = cal.policy["checks"]["recommended_fixed_k"]
        use = f"pass {fixed} tokens" if cal.budget is not None else f"use the top {fixed} passages"
        click.echo(
            f"ctxeval: policy not written: it does not beat the best fixed {'budget' if cal.budget else 'K'} on "
            f"held-out queries; {use}, or --force to write the policy anyway",
            err=True,
        )
        raise SystemExit(1)
    if output and output != "-":
        write_text(output, text)
        click.echo("\n".join([*calibration_lines(cal), f"policy written to {output}"]))
    else:
        click.echo(text, nl=False)
