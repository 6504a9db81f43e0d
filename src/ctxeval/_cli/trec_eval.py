"""``ctxeval trec_eval``: the trec_eval command line, byte-identical output (see :mod:`ctxeval._trec_eval`)."""

from __future__ import annotations

import click

from .._errors import DuplicateError, MeasureError
from .options import File, shown

_MEASURE_HELP = (
    "measure to compute, repeatable, in trec_eval syntax: NAME or NAME.PARAMS "
    "(P.5,10  ndcg_cut.10  iprec_at_recall..1,.5  ndcg.1=3,2=9  rbp.p=0.8) or a set: "
    "official (the default), all_trec, set"
)


@click.command("trec_eval", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("qrels", type=File("qrels"))
@click.argument("results", type=File("run", allow_dash=True))
@click.option("-q", "--query_eval_wanted", "query", is_flag=True, help="also print every topic's values")
@click.option("-m", "--measure", "measures", multiple=True, metavar="MEASURE", help=_MEASURE_HELP)
@click.option(
    "-c",
    "--complete_rel_info_wanted",
    "complete",
    is_flag=True,
    help="average over every judged topic; topics without results score 0 (missing='zero')",
)
@shown("-l", "--level_for_rel", "level", type=int, default=1, help="minimum grade counted as relevant")
@click.option("-n", "--nosummary", "nosummary", is_flag=True, help="do not print the summary ('all') lines")
@click.option(
    "-M",
    "--Max_retrieved_per_topic",
    "max_docs",
    type=int,
    help="use only the first N docs of each topic (after ranking)",
)
@click.option(
    "-J",
    "--Judged_docs_only",
    "judged_only",
    is_flag=True,
    help="drop unjudged docs before evaluating (not recommended)",
)
@click.option(
    "-N", "--Number_docs_in_coll", "n_docs", type=int, default=0, help="number of docs in the collection (utility)"
)
@shown(
    "-R",
    "--Rel_info_format",
    "rel_format",
    type=click.Choice(["qrels", "qrels_jg", "prefs", "qrels_prefs"]),
    default="qrels",
    help="the format of QRELS: qrels, qrels_jg (qid jg docid grade: judgments in groups), prefs (qid jg jsg "
    "docid rel_level: preferences, -m all_prefs) or qrels_prefs (a qrels file read as preferences)",
)
@click.option(
    "-Z",
    "--Zscore",
    "zscores",
    type=File("Z-score"),
    metavar="FILE",
    help="print z-scores: FILE holds 'qid measure mean stddev' lines",
)
@shown(
    "--trec-eval-version",
    "version",
    type=click.Choice(["9", "10"]),
    default="10",
    help="10: trec_eval 10.0; 9: trec_eval 9.0.x (what pytrec_eval wraps): v9 recall cut-offs, no rbp/unj",
)
def command(
    qrels: str,
    results: str,
    query: bool,
    measures: tuple[str, ...],
    complete: bool,
    level: int,
    nosummary: bool,
    max_docs: int | None,
    judged_only: bool,
    n_docs: int,
    rel_format: str,
    zscores: str | None,
    version: str,
) -> None:
    """Evaluate RESULTS against QRELS exactly as trec_eval does (same options, same output).

    RESULTS may be '-' for standard input. Missing topics are ignored unless -c.
    """
    from .._trec_eval import TrecEvalStop, trec_eval

    notes: list[str] = []
    try:
        text = trec_eval(
            qrels,
            results,
            measures,
            query=query,
            complete=complete,
            level=level,
            max_docs=max_docs,
            summary=not nosummary,
            judged_only=judged_only,
            n_docs=n_docs,
            version=int(version),
            zscores=zscores,
            rel_format=rel_format,
            notes=notes,
        )
    except TrecEvalStop as stop:  # trec_eval 10.0's own way out: what it printed, its message, status 4
        click.echo(stop.printed, nl=False)
        for note in notes:
            click.echo(f"note: {note}", err=True)
        click.echo(str(stop), err=True)
        raise SystemExit(stop.exit_code) from None
    except (MeasureError, DuplicateError) as exc:  # trec_eval's exit status: 1 a name, 2 its parameter,
        click.echo(f"ctxeval: error: {exc}", err=True)  # 4 what it cannot calculate (a doc given twice)
        raise SystemExit(4 if isinstance(exc, DuplicateError) else getattr(exc, "exit_code", 1)) from None
    for note in notes:
        click.echo(f"note: {note}", err=True)
    click.echo(text, nl=False)
