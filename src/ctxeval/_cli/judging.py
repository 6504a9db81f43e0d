"""The options and steps every judging command shares, declared once (``ctxeval judge <kind>`` for
each kind of label, ``ctxeval judge probe``): which judge, its server, cache, budget and flow; the
inputs (runs with query and passage texts, or a sample set); the guard on output paths; the dry run;
and the end of a run (too much undecided, the tally, the report)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from .._errors import ConfigError, CtxevalError, JudgeError, OutputError
from .._io.labels import LabelKind, Provenance, write_sidecar
from .._io.writers import write_text
from .._judge.budget import Prices, plan, plan_line
from .._judge.cache import Cache, default_path
from .._judge.client import LexicalJudge, OpenAIJudge, endpoint_id
from .._judge.interface import Judge
from .._judge.items import Item, JudgeOptions, item_asks, items_from_runs, items_from_samples
from .._judge.prompt import Task
from .._judge.runner import check_undecided
from .options import F, File, apply_options, emit, shown

__all__ = [
    "cache_of",
    "dry_run",
    "finish",
    "guard_paths",
    "input_options",
    "items_of",
    "judge_options",
    "list_open",
    "make_judge",
    "options_of",
    "settle",
    "sidecar",
]


def judge_options(f: F) -> F:
    """The judge, its server, the cache, the budget and the flow of requests."""
    options = [
        shown(
            "--judge",
            "kind",
            type=click.Choice(["openai", "lexical"]),
            default="openai",
            help="openai: a model behind an OpenAI-compatible /chat/completions endpoint; lexical: the offline "
            "word-overlap heuristic (labelled as such in every output)",
        ),
        click.option(
            "--judge-url", help="the endpoint's base URL, e.g. http://localhost:8000/v1 (else $CTXEVAL_JUDGE_URL)"
        ),
        click.option("--model", help="the model name the server knows"),
        click.option(
            "--api-key-env",
            help="the environment variable holding the API key (default CTXEVAL_JUDGE_API_KEY, then "
            "OPENAI_API_KEY); the key is never printed, logged or stored",
        ),
        click.option(
            "--cache",
            "cache_path",
            type=File("cache"),
            help="the judgment cache (SQLite); default in the user's cache directory",
        ),
        shown("--concurrency", type=click.IntRange(min=1), default=8, help="requests in flight"),
        click.option(
            "--max-cost", type=click.FloatRange(min=0.0), help="stop before the cost would exceed this (needs --price)"
        ),
        click.option(
            "--price",
            "prices",
            multiple=True,
            help="MODEL=PROMPT/COMPLETION per million tokens, e.g. gpt-4o-mini=0.15/0.6",
        ),
        shown("--votes", type=click.IntRange(min=1), default=1, help="judgments per item (majority)"),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            help="seconds to wait for a reply (a request that times out is not sent again: the server may still "
            "be working on it); default: 3 x the first reply's latency x --concurrency, at least 60 s",
        ),
        shown(
            "--structured",
            type=click.Choice(["auto", "schema", "json", "off"]),
            default="auto",
            help="send the task's JSON schema so the server constrains its reply: auto detects the server's "
            "dialect (json_schema: OpenAI, vLLM, llama.cpp; json_object + schema: llama-cpp-python; format: "
            "Ollama); schema / json force the first two; off: the prompt alone",
        ),
        shown(
            "--max-undecided",
            type=click.FloatRange(0.0, 1.0),
            default=0.5,
            help="fail (exit 2, nothing written) when a task's share of undecided judgments is over this",
        ),
        click.option("--retry-undecided", is_flag=True, help="ask the judgments the cache holds as undecided again"),
        shown("--max-retries", type=click.IntRange(min=0), default=5),
        click.option(
            "--report",
            "report_path",
            type=File("report", writable=True),
            help="write the tally (counts, tokens, cost) as JSON here, whatever ends the run (its reason in "
            "'ended': finished, failed, interrupted)",
        ),
        click.option("-q", "--quiet", is_flag=True, help="no progress bar"),
    ]
    return apply_options(f, options)


def input_options(f: F) -> F:
    """What to judge: RUN [RUN ...] with --queries and --passages, or --samples; --depth; --dry-run."""
    options = [
        click.option("--samples", type=File("sample set"), help="a sample set with questions and chunk texts"),
        click.option(
            "--queries", type=File("queries"), help="query texts: qid<TAB>text lines or JSON lines {qid, text}"
        ),
        click.option(
            "--passages", type=File("passages"), help="passage texts: id<TAB>text lines or JSON lines {id, text}"
        ),
        click.option("--depth", type=click.IntRange(min=1), help="the top K of each run / sample (runs: default 20)"),
        click.option(
            "--dry-run",
            is_flag=True,
            help="say what would be asked (judgments, already cached, to ask, estimated tokens, cost and time) "
            "and stop",
        ),
    ]
    f = apply_options(f, options)
    return click.argument("runs", nargs=-1, type=File("run"))(f)


def make_judge(kw: dict[str, Any]) -> Judge:
    if kw["kind"] == "lexical":
        return LexicalJudge()
    key = os.environ.get(kw["api_key_env"]) if kw.get("api_key_env") else None
    if kw.get("api_key_env") and key is None:
        raise ConfigError(f"--api-key-env {kw['api_key_env']}: that environment variable is not set")
    return OpenAIJudge(
        kw.get("model") or "",
        base_url=kw.get("judge_url"),
        api_key=key,
        timeout=kw["timeout"],
        max_retries=kw["max_retries"],
        concurrency=kw["concurrency"],
        structured=kw["structured"],
    )


def options_of(kw: dict[str, Any]) -> JudgeOptions:
    return JudgeOptions(
        concurrency=kw["concurrency"],
        max_cost=kw.get("max_cost"),
        prices=Prices.parse(kw.get("prices") or ()),
        votes=kw["votes"],
        progress=not kw["quiet"] and sys.stderr.isatty(),
        retry_undecided=kw["retry_undecided"],
        notify=say,
    )


def say(msg: str) -> None:
    click.echo(msg, err=True)


def cache_of(kw: dict[str, Any], write: bool = False) -> Cache:
    return Cache(kw.get("cache_path") or default_path(), write=write, notify=say)


def guard_paths(kw: dict[str, Any], output: str | None, inputs: list[str | None]) -> None:
    """Refuse ``--report`` / ``-o`` paths that name an input, the cache or each other."""

    def same(a: str, b: str) -> bool:
        try:
            return os.path.samefile(a, b)
        except OSError:
            return os.path.realpath(a) == os.path.realpath(b)

    cache = str(kw.get("cache_path") or default_path())
    named = [(p, "an input") for p in inputs if p] + [
        (cache, "the judgment cache"),
        (cache + "-wal", "the cache's log"),
    ]
    outs = [(o, flag) for o, flag in ((output, "-o"), (kw.get("report_path"), "--report")) if o and o != "-"]
    for o, flag in outs:
        for p, what in named:
            if same(o, p):
                raise OutputError(f"{flag} {o}: that is {what} ({p}); it would be overwritten: write elsewhere")
    if len(outs) == 2 and same(outs[0][0], outs[1][0]):
        raise OutputError(f"-o and --report both name {outs[0][0]}: give them different files")


def write_report(kw: dict[str, Any], doc: dict[str, Any]) -> None:
    if kw.get("report_path"):
        write_text(kw["report_path"], json.dumps(doc, indent=2, sort_keys=True) + "\n")


@contextlib.contextmanager
def reported(kw: dict[str, Any]) -> Iterator[None]:
    """Write ``--report`` when the run ends early (a failure, a timeout, Ctrl-C), with the reason: the
    judgments finished before it are in the cache, and a re-run asks only the rest."""
    try:
        yield
    except KeyboardInterrupt:
        write_report(kw, {"ended": "interrupted (Ctrl-C)", "tallies": [], "kept": _KEPT})
        raise
    except CtxevalError as exc:
        write_report(kw, {"ended": f"failed: {exc}", "tallies": [], "kept": _KEPT})
        raise


_KEPT = "the judgments finished before the end are in the cache: the same command asks only the rest"


def until_options(f: F) -> F:
    """``--until-decided`` and the decision it waits for (``judge grade`` over two runs)."""
    options: list[Callable[[F], F]] = [
        click.option(
            "--until-decided",
            is_flag=True,
            help="judge the queries in random order and stop as soon as the decision about the two runs (the "
            "first the baseline, the second the candidate) is settled: compare, or with --max-drop the gate's "
            "(anytime-valid: its error holds at every look)",
        ),
        shown("-m", "--measure", default="nDCG@10", help="the measure the decision is on"),
        click.option(
            "--max-drop",
            type=click.FloatRange(min=0.0),
            help="decide the gate's question instead: does the candidate drop by more than this",
        ),
        click.option(
            "--effect",
            type=click.FloatRange(min=0.0, min_open=True),
            help="compare: also stop once no difference of this size or more is left",
        ),
        shown("--alpha", type=click.FloatRange(0.0, 0.5, min_open=True, max_open=True), default=0.05),
        shown("--seed", type=int, default=0, help="the order of the queries (--until-decided)"),
    ]
    return apply_options(f, options)


def finish(kw: dict[str, Any], tallies: list[Any], extra: dict[str, Any] | None = None) -> None:
    for t in tallies:
        click.echo(t.line(), err=True)
    write_report(kw, {"tallies": [t.to_dict() for t in tallies], **(extra or {})})


def settle(
    kw: dict[str, Any],
    tallies: list[Any],
    text: str,
    output: str | None,
    what: str,
    extra: dict[str, Any],
    write_sidecar: Callable[[], None] | None = None,
) -> None:
    """Fail, writing nothing but the report, when too much is undecided or nothing was judged; else
    write ``text``, then the tally and the report."""
    try:
        check_undecided(tallies, kw["max_undecided"])
        if not text:
            not_sent = sum(t.not_sent for t in tallies)
            why = f"{not_sent} not sent (the budget)" if not_sent else "no judgment was decided"
            raise JudgeError(f"no {what} to write ({why}); nothing written")
    except JudgeError as exc:
        finish(kw, tallies, {**extra, "ended": f"failed: {exc}"})
        raise
    emit(text, output)
    if write_sidecar is not None:
        write_sidecar()
    finish(kw, tallies, {**extra, "ended": "finished"})


def sidecar(
    output: str | None,
    judge: Judge,
    kw: dict[str, Any],
    task: Task,
    scale: str,
    depth: int | None,
    got: list[Any],
    runs: tuple[str, ...],
) -> Callable[[], None]:
    """Write the provenance of judge-written labels beside ``output`` (the labels' sidecar, which
    every reader of that file understands): the judge, its model, the task and prompt version, how
    deep it judged, how many pairs it labelled, left undecided, tied and did not send, the runs pooled."""

    def write() -> None:
        if not output or output == "-":
            click.echo("note: labels written to stdout carry no provenance; -o FILE writes it beside them", err=True)
            return
        status = [o.status for _, o in got]
        prov = Provenance(
            kw["kind"], judge.model, judge.heuristic, task.name, task.version, depth,
            status.count("decided"), status.count("undecided"), tuple(Path(r).stem for r in runs),
            status.count("tie"), status.count("not sent"),
        )  # fmt: skip
        write_sidecar(output, LabelKind("judged", scale, provenance=prov))

    return write


def dry_run(kw: dict[str, Any], task: Task, items: list[Item]) -> None:
    """What the run would ask, from the items and the cache alone (no server is contacted)."""
    model = "lexical-1" if kw["kind"] == "lexical" else kw.get("model") or ""
    if not model:
        raise ConfigError("the judge needs a model name: --model NAME (the cache is keyed by it)")
    url = kw.get("judge_url") or os.environ.get("CTXEVAL_JUDGE_URL") or os.environ.get("OPENAI_BASE_URL") or ""
    endpoint = endpoint_id(url, model) if kw["kind"] != "lexical" and url else None
    with cache_of(kw) as cache:
        p = plan(
            model,
            item_asks(task, items),
            cache=cache,
            votes=kw["votes"],
            retry_undecided=kw["retry_undecided"],
            prices=Prices.parse(kw.get("prices") or ()),
            concurrency=kw["concurrency"],
            endpoint=endpoint,
        )
    click.echo(plan_line(p), err=True)
    write_report(kw, {"dry_run": p, "ended": "dry run: nothing sent"})


def list_open(got: list[Any]) -> list[dict[str, Any]]:
    """The items without a value, each with its state and reason, on stderr (20 at most) and for
    --report."""
    open_ = [
        {"query_id": it.query_id, "doc_id": it.doc_id, "status": o.status, "reason": o.reason}
        for it, o in got
        if not o.decided
    ]
    for r in open_[:20]:
        click.echo(f"{r['status']}: {r['query_id']} {r['doc_id']}: {r['reason']}", err=True)
    if len(open_) > 20:
        click.echo(f"... {len(open_) - 20} more not decided (see --report)", err=True)
    return open_


def items_of(
    runs: tuple[str, ...], samples: str | None, queries: str | None, passages: str | None, depth: int | None
) -> list[Item]:
    if samples:
        if runs or queries or passages:
            raise ConfigError("give --samples FILE, or RUN [RUN ...] with --queries and --passages, not both")
        return items_from_samples(samples, depth)
    if not runs or not queries or not passages:
        raise ConfigError("give RUN [RUN ...] --queries QUERIES --passages PASSAGES, or --samples FILE")
    items, counts = items_from_runs(runs, queries, passages, depth or 20)
    click.echo(
        f"pool: {counts['pairs']} (query, passage) pairs over {counts['queries']} queries, depth {counts['depth']}",
        err=True,
    )
    return items
