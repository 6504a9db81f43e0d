"""``ctxeval fit-udcg``: fit the positional UDCG to answer correctness."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .options import (
    File,
    engine_options,
    format_option,
    output_option,
    policy_options,
    rag_options,
    settings_from,
    shown,
    utility_options,
)


@click.command("fit-udcg")
@click.argument("qrels", type=File("qrels"))
@click.argument("runs", nargs=-1, required=True, type=File("run"))
@click.option("--answers", type=File("answers"), required=True, help="CSV/TSV with a header: qid, run, correct (0/1)")
@shown("-k", "k", type=click.IntRange(min=1), default=5, help="ranks 1..K get a weight each")
@shown("--folds", type=click.IntRange(min=2), default=5, help="cross-validation folds over queries")
@shown("--seed", type=int, default=0, help="seed of the fold assignment")
@shown("--l2", type=click.FloatRange(min=0.0), default=1.0, help="ridge penalty on alpha and beta (not the bias)")
@utility_options
@rag_options(pool=False, groups=False)
@policy_options()
@format_option("table", "json")
@engine_options
@output_option("udcg_fit.json", "where to write the fitted weights (JSON)")
def command(
    qrels: str,
    runs: tuple[str, ...],
    answers: str,
    k: int,
    folds: int,
    seed: int,
    l2: float,
    fmt: str,
    output: str,
    **kw: Any,
) -> None:
    """Fit the positional UDCG's weights to answer correctness and compare predictors.

    Logistic regression of each (run, query)'s answer correctness on the utilities of ranks 1..K
    (alpha per rank for positive utilities, beta for negative ones, a bias). Prints how well the fitted
    UDCG, UDCG@K, nDCG@K and RA-nWG@K predict correctness on held-out queries, and writes the weights
    to --output for -m "UDCG-pos(fit='FILE')@K".
    """
    from .._fit_udcg import fit_udcg
    from .._io.writers import write_text
    from .._render.fit import render_fit

    result = fit_udcg(
        qrels,
        list(runs),
        answers,
        k,
        folds=folds,
        seed=seed,
        l2=l2,
        **settings_from(kw),
    )
    write_text(Path(output), result.fit_json())
    result.report["output"] = output
    click.echo(render_fit(result, fmt), nl=False)
