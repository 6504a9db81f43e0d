"""``ctxeval calibrate``: fit the runtime policy (K_max, τ) that ``ContextSelector`` applies.

Registered on the main group in ``_cli.py`` with ``cli.add_command(calibrate_cmd)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ._cli_distraction import utility_options

__all__ = ["calibrate_cmd"]

_OBJECTIVE_HELP = (
    "what the policy maximises: 'utility' (total utility of the selected passages) or a measure "
    "computed on the run cut to the selected passages (e.g. dDCG, nDCG, 'RA-nWG@20'; harm-like "
    "measures are minimised)"
)


@click.command("calibrate")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("run", type=click.Path(dir_okay=False))
@click.option("--objective", default="utility", show_default=True, help=_OBJECTIVE_HELP)
@click.option("-k", "k", type=click.IntRange(min=1), default=50, show_default=True, help="largest K_max tried (K_max = 1..k)")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True, help="k-fold cross-validation over queries")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="seed of the fold assignment")
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, help="write the policy JSON here (and a summary to stdout); default: the JSON to stdout")
@utility_options
@click.option("--grade-map", default=None, help="map qrels grades onto the 1-5 utility scale: FROM:TO,... or a preset (trec-dl)")
@click.option("--pool", "pool", type=click.Path(dir_okay=False), default=None, help="the retrieval pool RUN was selected from (PROC-type objectives); default: RUN itself, uncut")
@click.option("--pool-depth", type=click.IntRange(min=1), default=None, help="cut the pool at this depth")
@click.option("--allow-outside-pool", is_flag=True, help="accept RUN docs outside the pool (reported) instead of failing")
@click.option("--groups", type=click.Path(dir_okay=False), default=None, help="'doc_id group' lines for RA-nWG(novelty=...)")
@click.option("--missing", type=click.Choice(["zero", "ignore", "error"]), default="zero", show_default=True, help="judged queries absent from RUN")
@click.option("--duplicates", type=click.Choice(["error", "first", "best"]), default="error", show_default=True)
def calibrate_cmd(
    qrels: str,
    run: str,
    objective: str,
    k: int,
    folds: int,
    seed: int,
    output: str | None,
    grade_map: str | None,
    pool: str | None,
    pool_depth: int | None,
    allow_outside_pool: bool,
    groups: str | None,
    missing: str,
    duplicates: str,
    **utility: Any,
) -> None:
    """Fit how many passages to pass (K_max) and from which relative score (tau) on RUN.

    Grid search over K_max = 1..k and tau = 0, 0.05, ..., 0.95 (keep the candidates in rank order
    while their relative score s/s_max is >= tau, at most K_max), maximising the mean objective over
    queries, with k-fold cross-validation: the gain over the best fixed K is measured on held-out
    queries. The policy JSON is read by ctxeval.ContextSelector.from_json at serving time.

    The per-passage utilities take the options of 'ctxeval distraction' (--tau there is the
    hard-negative threshold of the rules; the policy's tau is searched on the grid).
    """
    from ._calibrate import calibrate

    cal = calibrate(
        qrels,
        run,
        objective=objective,
        k=k,
        folds=folds,
        seed=seed,
        **utility,
        grade_map=grade_map,
        pool=pool,
        pool_depth=pool_depth,
        allow_outside_pool=allow_outside_pool,
        groups=groups,
        missing=missing,
        duplicates=duplicates,
    )
    text = cal.to_json()
    if output and output != "-":
        Path(output).write_text(text, encoding="utf-8", newline="\n")
        click.echo("\n".join(cal.lines() + [f"policy written to {output}"]))
    else:
        click.echo(text, nl=False)
