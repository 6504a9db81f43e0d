"""``ctxeval judge``: labels from an LLM judge (or the offline lexical heuristic): one command per kind
of label in the registry (:data:`ctxeval._judge.kinds.LABELS`), generated here; ``judge probe``
(:mod:`.probe`) and ``judge cache``. The options they share are in :mod:`.judging`; ``ctxeval pool``
(the judgment pool to label) is :mod:`.pool`, ``ctxeval agreement`` :mod:`.card`."""

from __future__ import annotations

import json
from typing import Any

import click

from .._errors import ConfigError
from .._io.samples.schema import OPEN
from .._judge.cache import Cache
from .._judge.interface import Judge
from .._judge.items import Item, JudgeOptions, Labeling, judgment_pool
from .._judge.kinds import LABELS
from .._judge.runner import Tally
from .._judge.sequential import UntilDecided
from .judging import (
    cache_of,
    dry_run,
    guard_paths,
    input_options,
    items_of,
    judge_options,
    list_open,
    make_judge,
    options_of,
    reported,
    settle,
    sidecar,
    until_options,
)
from .options import File, emit, format_option, output_option, shown
from .probe import probe

__all__ = ["command"]


@click.group("judge", help=f"Labels from an LLM judge: {', '.join(LABELS)}; and its cache.")
def command() -> None:
    """Labels from an LLM judge, one command per kind the registry holds; and its cache."""


def _pairs_command(kind: Labeling) -> click.Command:
    """``ctxeval judge KIND`` for a kind that judges (question, passage) pairs: runs with their texts,
    or a sample set; ``--scale`` when the kind has more than one."""
    default = next(iter(kind.scales))

    def run(**kw: Any) -> None:
        runs, samples, queries, passages, depth, dry, output = (
            kw.pop(k) for k in ("runs", "samples", "queries", "passages", "depth", "dry_run", "output")
        )
        scale = kw.pop("scale", default)
        until: dict[str, Any] = {
            k: kw.pop(k) for k in ("until_decided", "measure", "max_drop", "effect", "alpha", "seed") if k in kw
        }
        task = kind.tasks[kind.scales[scale]]
        spans = {k: kw.pop(k, None) for k in ("chunks", "documents", "spans", "spans_out")}
        if spans["chunks"] is not None:
            if samples or passages or until.get("until_decided"):
                raise ConfigError("--chunks judges RUN [RUN ...] with --queries (the texts come from the chunks), "
                                  "without --samples, --passages or --until-decided")  # fmt: skip
            guard_paths(kw, output, [*runs, queries, *spans.values()])
            return _by_spans(kind, kw, task, scale, runs, queries, depth, dry, output, spans)
        if spans["spans"] is not None or spans["spans_out"] is not None:
            raise ConfigError("--spans and --spans-out place the pooled chunks by their chunk table: give --chunks")
        guard_paths(kw, output, [*runs, samples, queries, passages])
        judge = None if dry else make_judge(kw)
        items = items_of(runs, samples, queries, passages, depth)
        if judge is None:
            return dry_run(kw, task, items)
        extra: dict[str, Any] = {**({"scale": scale} if len(kind.scales) > 1 else {})}
        with reported(kw), cache_of(kw, write=True) as cache:
            if until.get("until_decided"):
                got, tally = _until_decided(kind, judge, items, cache, options_of(kw), scale, runs, depth, until, extra)
            else:
                got, tally = kind.collect(judge, items, cache, options_of(kw), scale)
        extra["not_decided"] = list_open(got)
        text = kind.write(got)
        seen = depth if samples else depth or 20
        prov = sidecar(output, judge, kw, task, scale, seen, got, runs)
        settle(kw, [tally], text, output, kind.noun, extra, prov)

    f: Any = output_option(None, f"the {kind.writes} to write (default stdout)")(run)
    f = judge_options(f)
    if kind.decides:
        f = until_options(f)
        f = span_options(f)
    if len(kind.scales) > 1:
        f = shown("--scale", type=click.Choice(list(kind.scales)), default=default, help=kind.scale_help)(f)
    return command.command(kind.name, help=kind.help)(input_options(f))


def span_options(f: Any) -> Any:
    """Judge once, re-chunk freely (:mod:`ctxeval._judge.reuse`): the runs' chunks placed by a chunk table,
    earlier judgments read as span labels, the new ones written as span labels."""
    opts = [
        ("--chunks", False, "the runs' chunk table (chunk_id, doc_id, start, end): the pooled chunks' texts come "
         "from it and the documents, and their judgments become span labels"),
        ("--documents", True, "the documents' texts (a folder, or JSON lines of doc_id and text)"),
        ("--spans", False, "span labels of earlier judgments (a chunking judged before): the judge is asked only "
         "about text they do not cover"),
        ("--spans-out", False, "write the span labels after this run (the earlier ones and the new judgments) here"),
    ]  # fmt: skip
    types = {
        "--chunks": File("chunk table"),
        "--documents": click.Path(),  # a folder of files, or JSON lines
        "--spans": File("span labels"),
        "--spans-out": File("span labels", writable=True),
    }
    for flag, _, text in reversed(opts):
        f = click.option(flag, type=types[flag], help=text)(f)
    return f


def _by_spans(
    kind: Labeling, kw: dict[str, Any], task: Any, scale: str, runs: tuple[str, ...], queries: str | None,
    depth: int | None, dry: bool, output: str | None, spans: dict[str, Any],
) -> None:  # fmt: skip
    """Judge the runs' pool where earlier span labels do not cover it; grade every pooled chunk by the labels."""
    from .._io.chunks import Chunks
    from .._io.side import read_query_texts
    from .._io.spans import SpanLabels
    from .._judge.reuse import plan_reuse, scale_check

    if not runs or not queries:
        raise ConfigError("--chunks judges RUN [RUN ...] --queries QUERIES")
    if spans["documents"] is None:
        raise ConfigError("--chunks needs --documents (the chunks' texts are the documents' at their offsets)")
    table = Chunks.coerce(spans["chunks"], spans["documents"])
    earlier = SpanLabels.from_file(spans["spans"]) if spans["spans"] is not None else None
    if earlier is not None:
        scale_check(earlier, scale)
    pairs, _ = judgment_pool(runs, depth or 20)
    plan = plan_reuse(pairs, read_query_texts(queries)[0], table, earlier)
    click.echo(plan.line(), err=True)
    judge = None if dry else make_judge(kw)
    if judge is None:
        return dry_run(kw, task, plan.asks)
    extra: dict[str, Any] = {"reuse": plan.counts(), **({"scale": scale} if len(kind.scales) > 1 else {})}
    with reported(kw), cache_of(kw, write=True) as cache:
        got, tally = kind.collect(judge, plan.asks, cache, options_of(kw), scale) if plan.asks else ([], None)
    extra["not_decided"] = list_open(got)
    merged, graded = plan.labels(got, table)
    text = "".join(f"{q} 0 {c} {g}\n" for q, c, g in graded)
    prov = sidecar(output, judge, kw, task, scale, depth or 20, got, runs)
    if tally is None:  # nothing to ask: every pooled chunk was judged before
        tally = Tally(judge.describe, judge.heuristic, kind.name)
    settle(kw, [tally], text, output, kind.noun, extra, prov)
    if spans["spans_out"] is not None:
        merged.write(spans["spans_out"])


def _until_decided(
    kind: Labeling,
    judge: Judge,
    items: list[Item],
    cache: Cache,
    opts: JudgeOptions,
    scale: str,
    runs: tuple[str, ...],
    depth: int | None,
    until: dict[str, Any],
    extra: dict[str, Any],
) -> tuple[list[Any], Tally]:
    """Judge the pool query by query, in random order, until the decision about the two runs is settled."""
    if len(runs) != 2:
        raise ConfigError("--until-decided decides about two runs: give the baseline, then the candidate")
    plan = UntilDecided(
        runs[0], runs[1], measure=until["measure"], alpha=until["alpha"], max_drop=until["max_drop"],
        effect=until["effect"], depth=depth or 20, seed=until["seed"],
    )  # fmt: skip
    by_query: dict[str, list[Item]] = {}
    for it in items:
        by_query.setdefault(it.query_id, []).append(it)
    got: list[Any] = []
    tallies = []
    for q in plan:
        mine, tally = kind.collect(judge, by_query.get(q, []), cache, opts, scale)
        got.extend(mine)
        tallies.append(tally)
        plan.add(q, {it.doc_id: o.value for it, o in mine if o.decided})
    done = plan.result()
    click.echo(done.line(), err=True)
    merged = Tally.merged(tallies) if tallies else Tally(judge.describe, judge.heuristic, kind.name)
    extra["until_decided"] = done.to_dict()
    if merged.priced and merged.decided + merged.undecided:
        per = merged.cost / max(merged.asked, 1)
        extra["until_decided"]["cost_saved_estimate"] = round(per * done.saved, 6)
    return got, merged


def _samples_command(kind: Labeling) -> click.Command:
    """``ctxeval judge KIND`` for a kind that labels a sample set's samples."""

    @command.command(kind.name, help=kind.help)
    @click.option("--samples", required=True, type=File("sample set"), help="the sample set to label")
    @click.option("--depth", type=click.IntRange(min=1), help="judge the top K chunks only")
    @judge_options
    @output_option(None, "the labelled sample set to write (JSON lines; default stdout)")
    def sub(samples: str, depth: int | None, output: str | None, **kw: Any) -> None:
        guard_paths(kw, output, [samples])
        judge = make_judge(kw)
        with reported(kw), cache_of(kw, write=True) as cache:
            labels, *tallies = kind.collect(judge, samples, cache, options_of(kw), depth)
        by = {"judge": judge.describe, "model": judge.model, "heuristic": judge.heuristic, "task": kind.name}
        # samples with no judgment at all (every one not sent, say) are no labels: nothing is written
        text = kind.write(samples, labels, by) if any(t.decided for t in tallies) else ""
        settle(kw, list(tallies), text, output, kind.noun, _label_counts(labels))

    return sub


def _label_counts(labels: list[dict[str, Any]]) -> dict[str, Any]:
    """What the labelled samples hold beyond the tallies (which count every judgment as decided,
    undecided, tied or not sent): the samples whose claims / nuggets could not be made, by why, and
    the claims left open."""
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


for _kind in LABELS.values():
    (_pairs_command if _kind.reads == "pairs" else _samples_command)(_kind)


@command.group("cache")
def cache_group() -> None:
    """The judgment cache: stats, export, prune."""


_cache_option = click.option(
    "--cache", "cache_path", type=File("cache"), help="the cache (default in the user's cache directory)"
)


@cache_group.command("stats")
@_cache_option
@format_option("table", "json")
def cache_stats(cache_path: str | None, fmt: str) -> None:
    """Judgments per model, task and prompt version, with undecided ones, tokens and cost."""
    with cache_of({"cache_path": cache_path}) as cache:
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
    with cache_of({"cache_path": cache_path}) as cache:
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
    with cache_of({"cache_path": cache_path}) as cache:
        n = cache.prune(model=model, task=task, older_than_days=older, undecided=undecided)
    click.echo(f"deleted {n} judgments")


command.add_command(probe)
