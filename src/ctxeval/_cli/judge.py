"""``ctxeval judge``: labels from an LLM judge (or the offline lexical heuristic) (``ctxeval pool``, the
judgment pool to label: :mod:`.pool`; ``ctxeval agreement``: :mod:`.card`; ``ctxeval judge probe``: :mod:`.probe`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from .._errors import ConfigError
from .._judge.labels import LABELS, Labeling
from .options import emit, output_option

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["command"]


def _judge_options(f: F) -> F:
    opts = [
        click.option(
            "--judge",
            "kind",
            type=click.Choice(["openai", "lexical"]),
            default="openai",
            show_default=True,
            help="openai: a model behind an OpenAI-compatible /chat/completions endpoint; lexical: the offline "
            "word-overlap heuristic (labelled as such in every output)",
        ),
        click.option(
            "--judge-url", help="the endpoint's base URL, e.g. http://localhost:8000/v1 (else $CTXEVAL_JUDGE_URL)"
        ),
        click.option("--model", help="the model name the server knows"),
        click.option(
            "--api-key-env",
            default=None,
            help="the environment variable holding the API key (default CTXEVAL_JUDGE_API_KEY, then OPENAI_API_KEY); "
            "the key is never printed, logged or stored",
        ),
        click.option(
            "--cache",
            "cache_path",
            type=click.Path(dir_okay=False),
            help="the judgment cache (SQLite); default in the user's cache directory",
        ),
        click.option(
            "--concurrency", type=click.IntRange(min=1), default=8, show_default=True, help="requests in flight"
        ),
        click.option(
            "--max-cost", type=click.FloatRange(min=0.0), help="stop before the cost would exceed this (needs --price)"
        ),
        click.option(
            "--price",
            "prices",
            multiple=True,
            help="MODEL=PROMPT/COMPLETION per million tokens, e.g. gpt-4o-mini=0.15/0.6",
        ),
        click.option(
            "--votes", type=click.IntRange(min=1), default=1, show_default=True, help="judgments per item (majority)"
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            default=None,
            help="seconds to wait for a reply (a request that times out is not sent again: the server may still "
            "be working on it); default: 3 x the first reply's latency x --concurrency, at least 60 s",
        ),
        click.option(
            "--structured",
            type=click.Choice(["auto", "schema", "json", "off"]),
            default="auto",
            show_default=True,
            help="send the task's JSON schema so the server constrains its reply: auto detects the server's dialect "
            "(json_schema: OpenAI, vLLM, llama.cpp; json_object + schema: llama-cpp-python; format: Ollama); "
            "schema / json force the first two; off: the prompt alone",
        ),
        click.option(
            "--max-undecided",
            type=click.FloatRange(0.0, 1.0),
            default=0.5,
            show_default=True,
            help="fail (exit 2, nothing written) when a task's share of undecided judgments is over this",
        ),
        click.option("--retry-undecided", is_flag=True, help="ask the judgments the cache holds as undecided again"),
        click.option("--max-retries", type=click.IntRange(min=0), default=5, show_default=True),
        click.option(
            "--report",
            "report_path",
            type=click.Path(dir_okay=False),
            help="write the tally (counts, tokens, cost) as JSON here",
        ),
        click.option("-q", "--quiet", is_flag=True, help="no progress bar"),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _make_judge(kw: dict[str, Any]) -> Any:
    import os

    from .._judge.client import LexicalJudge, OpenAIJudge

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


def _opts(kw: dict[str, Any]) -> Any:
    from .._judge.labels import JudgeOptions
    from .._judge.runner import Prices

    return JudgeOptions(
        concurrency=kw["concurrency"],
        max_cost=kw.get("max_cost"),
        prices=Prices.parse(kw.get("prices") or ()),
        votes=kw["votes"],
        progress=not kw["quiet"] and sys.stderr.isatty(),
        retry_undecided=kw["retry_undecided"],
        notify=_say,
    )


def _say(msg: str) -> None:
    click.echo(msg, err=True)


def _cache(kw: dict[str, Any], write: bool = False) -> Any:
    from .._judge.cache import Cache, default_path

    return Cache(kw.get("cache_path") or default_path(), write=write, notify=_say)


def _guard_paths(kw: dict[str, Any], output: str | None, inputs: list[str | None]) -> None:
    """Refuse ``--report`` / ``-o`` paths that name an input, the cache or each other."""
    import os

    from .._errors import OutputError
    from .._judge.cache import default_path

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


def _finish(kw: dict[str, Any], tallies: list[Any], extra: dict[str, Any] | None = None) -> None:
    for t in tallies:
        click.echo(t.line(), err=True)
    if kw.get("report_path"):
        from .._io.writers import write_text

        doc = {"tallies": [t.to_dict() for t in tallies], **(extra or {})}
        write_text(kw["report_path"], json.dumps(doc, indent=2, sort_keys=True) + "\n")


def _settle(
    kw: dict[str, Any],
    tallies: list[Any],
    text: str,
    output: str | None,
    what: str,
    extra: dict[str, Any],
    sidecar: Callable[[], None] | None = None,
) -> None:
    """Fail, writing nothing but the report, when too much is undecided or nothing was judged; else
    write ``text``, then the tally and the report."""
    from .._errors import JudgeError
    from .._judge.runner import check_undecided

    try:
        check_undecided(tallies, kw["max_undecided"])
        if not text:
            not_sent = sum(t.not_sent for t in tallies)
            why = f"{not_sent} not sent (the budget)" if not_sent else "no judgment was decided"
            raise JudgeError(f"no {what} to write ({why}); nothing written")
    except JudgeError:
        _finish(kw, tallies, extra)
        raise
    emit(text, output)
    if sidecar is not None:
        sidecar()
    _finish(kw, tallies, extra)


def _sidecar(
    output: str | None,
    judge: Any,
    kw: dict[str, Any],
    task: str,
    scale: str,
    depth: int | None,
    got: list[Any],
    runs: tuple[str, ...],
) -> Callable[[], None]:
    """Write the provenance of judge-written labels beside ``output`` (the labels' sidecar, which
    every reader of that file understands): the judge, its model, the task and prompt version, how
    deep it judged, how many pairs it labelled, left undecided, tied and did not send, the runs pooled."""

    def write() -> None:
        from pathlib import Path

        from .._io.labels import LabelKind, Provenance, write_sidecar
        from .._judge.tasks import TASKS

        if not output or output == "-":
            click.echo("note: labels written to stdout carry no provenance; -o FILE writes it beside them", err=True)
            return
        status = [o.status for _, o in got]
        prov = Provenance(
            kw["kind"], judge.model, judge.heuristic, task.split("-")[0], TASKS[task].version, depth,
            status.count("decided"), status.count("undecided"), tuple(Path(r).stem for r in runs),
            status.count("tie"), status.count("not sent"),
        )  # fmt: skip
        write_sidecar(output, LabelKind("judged", scale, provenance=prov))

    return write


def _dry_run(kw: dict[str, Any], task: str, items: list[Any]) -> None:
    """What the run would ask, from the items and the cache alone (no server is contacted)."""
    from .._judge.budget import Prices, plan, plan_line
    from .._judge.labels import item_asks

    model = "lexical-1" if kw["kind"] == "lexical" else kw.get("model") or ""
    if not model:
        raise ConfigError("the judge needs a model name: --model NAME (the cache is keyed by it)")
    with _cache(kw) as cache:
        p = plan(
            model,
            item_asks(task, items),
            cache=cache,
            votes=kw["votes"],
            retry_undecided=kw["retry_undecided"],
            prices=Prices.parse(kw.get("prices") or ()),
            concurrency=kw["concurrency"],
        )
    click.echo(plan_line(p), err=True)
    if kw.get("report_path"):
        from .._io.writers import write_text

        write_text(kw["report_path"], json.dumps({"dry_run": p}, indent=2, sort_keys=True) + "\n")


def _list_open(got: list[Any]) -> list[dict[str, Any]]:
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


def _items(
    runs: tuple[str, ...], samples: str | None, queries: str | None, passages: str | None, depth: int | None
) -> list[Any]:
    from .._judge.labels import items_from_runs, items_from_samples

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


def _inputs(f: F) -> F:
    f = click.option(
        "--dry-run",
        is_flag=True,
        help="say what would be asked (judgments, already cached, to ask, estimated tokens, cost and time) and stop",
    )(f)
    f = click.option(
        "--depth", type=click.IntRange(min=1), default=None, help="the top K of each run / sample (runs: default 20)"
    )(f)
    f = click.option(
        "--passages", type=click.Path(dir_okay=False), help="passage texts: id<TAB>text lines or JSON lines {id, text}"
    )(f)
    f = click.option(
        "--queries", type=click.Path(dir_okay=False), help="query texts: qid<TAB>text lines or JSON lines {qid, text}"
    )(f)
    f = click.option("--samples", type=click.Path(dir_okay=False), help="a sample set with questions and chunk texts")(
        f
    )
    return click.argument("runs", nargs=-1, type=click.Path(dir_okay=False))(f)


@click.group("judge")
def command() -> None:
    """Labels from an LLM judge: grades, utilities, claims, relevance, nuggets; and its cache."""


@command.command("grade", help=LABELS["grade"].help)
@_inputs
@click.option(
    "--scale",
    type=click.Choice(["rag", "trec"]),
    default="rag",
    show_default=True,
    help="rag: 1-5 (RA-nWG); trec: 0-3 (UMBRELA)",
)
@_judge_options
@output_option(None, "the qrels to write (default stdout)")
def grade(
    runs: tuple[str, ...],
    samples: str | None,
    queries: str | None,
    passages: str | None,
    depth: int | None,
    dry_run: bool,
    scale: str,
    output: str | None,
    **kw: Any,
) -> None:
    from .._judge.labels import grades

    _guard_paths(kw, output, [*runs, samples, queries, passages])
    judge = None if dry_run else _make_judge(kw)
    items = _items(runs, samples, queries, passages, depth)
    if judge is None:
        return _dry_run(kw, "grade" if scale == "rag" else "grade-trec", items)
    with _cache(kw, write=True) as cache:
        got, tally = grades(judge, items, cache, _opts(kw), scale)
    open_ = _list_open(got)
    text = LABELS["grade"].write(got)
    task = "grade" if scale == "rag" else "grade-trec"
    seen = depth if samples else depth or 20
    prov = _sidecar(output, judge, kw, task, scale, seen, got, runs)
    _settle(kw, [tally], text, output, "grades", {"not_decided": open_, "scale": scale}, prov)


@command.command("utility", help=LABELS["utility"].help)
@_inputs
@_judge_options
@output_option(None, "the utility file to write: qid docid u lines (default stdout)")
def utility(
    runs: tuple[str, ...],
    samples: str | None,
    queries: str | None,
    passages: str | None,
    depth: int | None,
    dry_run: bool,
    output: str | None,
    **kw: Any,
) -> None:
    from .._judge.labels import utilities

    _guard_paths(kw, output, [*runs, samples, queries, passages])
    judge = None if dry_run else _make_judge(kw)
    items = _items(runs, samples, queries, passages, depth)
    if judge is None:
        return _dry_run(kw, "utility", items)
    with _cache(kw, write=True) as cache:
        got, tally = utilities(judge, items, cache, _opts(kw))
    open_ = _list_open(got)
    text = LABELS["utility"].write(got)
    prov = _sidecar(output, judge, kw, "utility", "utility", depth if samples else depth or 20, got, runs)
    _settle(kw, [tally], text, output, "utilities", {"not_decided": open_}, prov)


def _sample_labels(kind: Labeling) -> click.Command:
    @command.command(kind.name, help=kind.help)
    @click.option("--samples", required=True, type=click.Path(dir_okay=False), help="the sample set to label")
    @click.option("--depth", type=click.IntRange(min=1), default=None, help="judge the top K chunks only")
    @_judge_options
    @output_option(None, "the labelled sample set to write (JSON lines; default stdout)")
    def sub(samples: str, depth: int | None, output: str | None, **kw: Any) -> None:
        _guard_paths(kw, output, [samples])
        judge = _make_judge(kw)
        with _cache(kw, write=True) as cache:
            labels, *tallies = kind.collect(judge, samples, cache, _opts(kw), depth)
        by = {"judge": judge.describe, "model": judge.model, "heuristic": judge.heuristic, "task": kind.name}
        # samples with no judgment at all (every one not sent, say) are no labels: nothing is written
        text = kind.write(samples, labels, by) if any(t.decided for t in tallies) else ""
        _settle(kw, list(tallies), text, output, kind.name, _label_counts(labels))

    return sub


def _label_counts(labels: list[dict[str, Any]]) -> dict[str, Any]:
    """What the labelled samples hold beyond the tallies (which count every judgment as decided,
    undecided, tied or not sent): the samples whose claims / nuggets could not be made, by why, and
    the claims left open."""
    from .._io.samples.schema import OPEN

    out: dict[str, Any] = {}
    for name in ("claims", "nuggets"):
        why = [str(r.get(f"{name}_status") or "undecided").split(":")[0] for r in labels if r.get(name, []) is None]
        if why:
            counts = {k: why.count(k) for k in dict.fromkeys(why)}
            out[f"samples_without_{name}"] = counts
            words = ", ".join(f"{n} {k}" for k, n in counts.items())
            click.echo(f"samples without {name}: {len(why)} ({words}); they are written with {name}: null", err=True)
    claims = [c for r in labels for c in (r.get("claims") or [])]
    if claims:
        open_ = sum(1 for c in claims if not c["supported_by"] and any(c.get(k) for k in OPEN))
        out["claims"] = {"total": len(claims), "left_open": open_}
        click.echo(
            f"claims: {len(claims)}, {open_} left open (no supporting chunk and some chunks not judged: undecided, "
            "tied or not sent; left out of ContextRecall(method=judge))",
            err=True,
        )
    return out


for _kind in ("claims", "relevance", "attribution", "nuggets"):
    _sample_labels(LABELS[_kind])


@command.group("cache")
def cache_group() -> None:
    """The judgment cache: stats, export, prune."""


def _cache_option(f: F) -> F:
    return click.option(
        "--cache",
        "cache_path",
        type=click.Path(dir_okay=False),
        help="the cache (default in the user's cache directory)",
    )(f)


@cache_group.command("stats")
@_cache_option
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def cache_stats(cache_path: str | None, fmt: str) -> None:
    """Judgments per model, task and prompt version, with undecided ones, tokens and cost."""
    with _cache({"cache_path": cache_path}) as cache:
        rows = cache.stats()
        where = str(cache.path)
    if fmt == "json":
        click.echo(json.dumps({"cache": where, "groups": rows}, indent=2, sort_keys=True))
        return
    click.echo(f"cache: {where}")
    if not rows:
        click.echo("no judgments")
    for r in rows:
        click.echo(
            f"{r['model']}  {r['task']} ({r['version']}): {r['judgments']} judgments, {r['undecided']} undecided, "
            f"tokens {r['prompt_tokens']} in / {r['completion_tokens']} out, cost {r['cost']:.4f}"
        )


@cache_group.command("export")
@_cache_option
@output_option(None, "JSON lines, one judgment per line (default stdout)")
def cache_export(cache_path: str | None, output: str | None) -> None:
    """Every cached judgment as JSON lines (model, task, version, value, reply, tokens, cost)."""
    with _cache({"cache_path": cache_path}) as cache:
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in cache.export())
    emit(text, output)


@cache_group.command("prune")
@_cache_option
@click.option("--model", help="only this model's judgments")
@click.option("--task", help="only this task's judgments")
@click.option("--older-than", "older", type=click.FloatRange(min=0.0), help="only judgments older than this many days")
@click.option("--undecided", is_flag=True, help="only undecided judgments (so that a re-run asks again)")
def cache_prune(
    cache_path: str | None, model: str | None, task: str | None, older: float | None, undecided: bool
) -> None:
    """Delete cached judgments matching every filter given."""
    with _cache({"cache_path": cache_path}) as cache:
        n = cache.prune(model=model, task=task, older_than_days=older, undecided=undecided)
    click.echo(f"deleted {n} judgments")


def _register_probe() -> None:
    """``ctxeval judge probe`` lives in :mod:`.probe` (it reuses this module's options)."""
    from .probe import probe

    command.add_command(probe)


_register_probe()
