"""``ctxeval distraction`` and ``ctxeval fit-udcg``, and the per-passage utility options they share with
``ctxeval evaluate``. Registered on the main group in ``_cli.py``'s ``_register``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = ["distraction_cmd", "fit_udcg_cmd", "utility_options", "UTILITY_KEYS"]

UTILITY_KEYS = ("distractor_rules", "tau", "top_rank", "penalty", "distractors", "utilities", "llm_threshold", "utility_map")


def utility_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """The options deciding per-passage utilities (see ``ctxeval._utility``)."""
    opts = [
        click.option(
            "--distractor-rules",
            type=click.Choice(["default", "strict", "lenient", "off"]),
            default="default",
            show_default=True,
            help="hard-negative detection preset: default (tau 0.7, top rank 3, penalty -0.5), strict (0.5, 3, -1.0), "
            "lenient (0.9, 3, -0.2), off (labels and the known list only)",
        ),
        click.option("--tau", type=click.FloatRange(0.0, 1.0), default=None, help="override: a passage of utility 0 whose relative score is >= TAU is a hard negative"),
        click.option("--top-rank", type=click.IntRange(min=0), default=None, help="override: a passage of utility 0 (judged or unlabelled) at rank <= N is a hard negative (0: off)"),
        click.option("--penalty", type=click.FloatRange(-1.0, 0.0), default=None, help="override: the utility of a hard negative, in [-1, 0)"),
        click.option("--distractors", type=click.Path(dir_okay=False), default=None, help="file of known distractors, 'qid docid' lines (u = -1 whatever the label)"),
        click.option(
            "--utilities",
            type=click.Path(dir_okay=False),
            default=None,
            help="file of LLM utilities, 'qid docid u' lines with u in [0, 1] (e.g. 1 - P(NO-RESPONSE)); they replace the label utilities",
        ),
        click.option(
            "--llm-threshold",
            type=click.FloatRange(0.0, 1.0),
            default=None,
            help="with --utilities: an irrelevant passage is a distractor (u = -LLM utility) only when its LLM utility is >= this; "
            "below, its utility is 0 (junk the LLM ignores)  [default: 0.5; 0: every irrelevant passage with u > 0]. UDCG reads u as given",
        ),
        click.option("--utility-map", default=None, help="grade -> utility, GRADE:U,... (default 5:1,4:1,3:0.5,2:0,1:-1, on the grades after --grade-map)"),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _utility_kwargs(kw: dict[str, Any]) -> dict[str, Any]:
    return {key: kw.pop(key) for key in UTILITY_KEYS}


def _emit(text: str, output: str | None) -> None:
    if output and output != "-":
        Path(output).write_text(text, encoding="utf-8", newline="\n")
    else:
        click.echo(text, nl=False)


_GRADE_MAP_HELP = "map qrels grades onto the 1-5 scale first: FROM:TO,... (e.g. 3:5,2:4,1:3,0:2) or a preset (trec-dl)"


def _common(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option("--grade-map", default=None, help=_GRADE_MAP_HELP),
        click.option("--missing", type=click.Choice(["zero", "ignore", "error"]), default="zero", show_default=True, help="judged queries absent from a run"),
        click.option("--ties", type=click.Choice(["trec", "input"]), default="trec", show_default=True),
        click.option("--duplicates", type=click.Choice(["error", "first", "best"]), default="error", show_default=True),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


@click.command("distraction")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="the number of passages the LLM reads")
@utility_options
@click.option("--rel", type=int, default=None, help="grade >= REL counts as relevant for RR, R@k and UDCG (default: the smallest grade of positive utility)")
@click.option("--safe", type=click.FloatRange(0.0, 1.0), default=0.10, show_default=True, help="verdict SAFE when the mean distractor rate is <= this")
@click.option("--risky", type=click.FloatRange(0.0, 1.0), default=0.50, show_default=True, help="verdict RISKY up to this rate, DANGEROUS above")
@click.option("--worst", type=click.IntRange(min=0), default=5, show_default=True, help="how many worst distractors to list per run")
@click.option("--discount", is_flag=True, help="optimal k from the log2-discounted cumulative utility")
@_common
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default=None, help="write here instead of stdout")
def distraction_cmd(qrels: str, runs: tuple[str, ...], k: int, fmt: str, output: str | None, **kw: Any) -> None:
    """Compare ranking profiles by the harm they do to an LLM reader.

    One row per RUN: RR, R@K, nDCG@K next to dDCG@K, ndDCG@K, UDCG@K, the distractor rate and harm,
    a safety verdict, the optimal number of passages, the nDCG - ndDCG gap (harm the rank metrics do
    not see) and the worst distractors with the reason each was flagged.
    """
    from ._distraction import distraction_table, render_distraction

    ukw = _utility_kwargs(kw)
    table = distraction_table(qrels, list(runs), k, **ukw, **kw)
    _emit(render_distraction(table, fmt), output)


@click.command("fit-udcg")
@click.argument("qrels", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--answers", type=click.Path(dir_okay=False), required=True, help="CSV/TSV with a header: qid, run, correct (0/1)")
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="ranks 1..K get a weight each")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True, help="cross-validation folds over queries")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the fold assignment")
@click.option("--l2", type=click.FloatRange(min=0.0), default=1.0, show_default=True, help="ridge penalty on alpha and beta (not the bias)")
@utility_options
@_common
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), default="udcg_fit.json", show_default=True, help="where to write the fitted weights (JSON)")
def fit_udcg_cmd(qrels: str, runs: tuple[str, ...], answers: str, k: int, folds: int, seed: int, l2: float, fmt: str, output: str, **kw: Any) -> None:
    """Fit the positional UDCG's weights to answer correctness and compare predictors.

    Logistic regression of each (run, query)'s answer correctness on the utilities of ranks 1..K
    (alpha per rank for positive utilities, beta for negative ones, a bias). Prints how well the fitted
    UDCG, UDCG@K, nDCG@K and RA-nWG@K predict correctness on held-out queries, and writes the weights
    to --output for -m "UDCG-pos(fit='FILE')@K".
    """
    from ._fit_udcg import fit_udcg

    ukw = _utility_kwargs(kw)
    result = fit_udcg(qrels, list(runs), answers, k, folds=folds, seed=seed, l2=l2, **ukw, **kw)
    Path(output).write_text(result.fit_json(), encoding="utf-8", newline="\n")
    result.report["output"] = output
    click.echo(result.render(fmt), nl=False)
