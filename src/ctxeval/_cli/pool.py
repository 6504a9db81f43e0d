"""``ctxeval pool``: what to label, from runs or from sample sets."""

from __future__ import annotations

import json
from typing import Any

import click

from .._errors import ConfigError
from .options import File, emit, output_option, shown


@click.command("pool")
@click.argument("runs", nargs=-1, type=File("run"))
@click.option(
    "--samples",
    "samples",
    multiple=True,
    metavar="[NAME=]FILE",
    help="a sample set whose retrieved lists are a run of the pool (repeatable; NAME=FILE names it; with "
    "--samples, the other files that are sample sets are read as such); its questions and chunk texts serve --texts",
)
@shown("--depth", type=click.IntRange(min=1), default=20)
@click.option("--queries", type=File("queries"), help="with --passages: write JSON lines with the texts, for labelling")
@click.option("--passages", type=File("passages"))
@click.option("--texts", is_flag=True, help="with --samples: write JSON lines with the samples' questions and texts")
@output_option(None, "where to write the pool (default stdout)")
def command(
    runs: tuple[str, ...],
    samples: tuple[str, ...],
    depth: int,
    queries: str | None,
    passages: str | None,
    texts: bool,
    output: str | None,
) -> None:
    """The judgment pool: per query, the union of the top DEPTH docs of every RUN (or sample set,
    --samples FILE), as 'qid docid best_rank' lines, best_rank the best rank any run gave the doc
    (or, with --queries and --passages, or --samples with --texts, JSON lines with the texts), with
    counts on stderr."""
    from .._judge.labels import items_from_runs, judgment_pool

    if not runs and not samples:
        raise ConfigError("give RUN [RUN ...] or --samples FILE [--samples FILE ...]")
    if samples:  # --samples a.jsonl b.jsonl, as the other commands take it: b is a sample set too
        from .._io.model import split_named
        from .._judge.verbs import is_sample_set

        more = [r for r in runs if is_sample_set(split_named(r)[1])]
        runs = tuple(r for r in runs if r not in more)
        samples = (*samples, *more)
    if (queries is None) != (passages is None):
        raise ConfigError("--queries and --passages go together")
    if texts and not samples:
        raise ConfigError("--texts writes the texts the sample sets hold: give --samples FILE")
    if samples and queries is not None:
        raise ConfigError("--queries and --passages are for runs; sample sets hold their texts (--texts)")
    notes: list[str] = []
    run_list: list[Any] = list(runs)
    texts_of: dict[tuple[str, str], str] = {}
    questions: dict[str, str] = {}
    if samples:
        from .._io.samples import pair_by_question
        from .._session import merge_notes, sample_sets

        sets, paired = pair_by_question(sample_sets(list(samples)))
        notes = [*merge_notes([st.notes for st in sets]), *paired]
        run_list += [st.run() for st in sets]
        for st in sets:
            questions.update(st.query_texts())
            for s in st.samples:
                for d, t in zip(s.retrieved_ids, s.retrieved_texts or ()):
                    texts_of.setdefault((s.query_id, d), t)
    pairs, counts = judgment_pool(run_list, depth)
    best = counts["best_rank"]
    if queries is not None:
        items, _ = items_from_runs(run_list, queries, passages, depth)
        lines = [
            {"query_id": it.query_id, "question": it.question, "doc_id": it.doc_id, "text": it.text} for it in items
        ]
        text = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    elif texts:
        missing = [(q, d) for q, d in pairs if (q, d) not in texts_of or q not in questions]
        if missing:
            q, d = missing[0]
            raise ConfigError(
                f"--texts: {len(missing)} pooled pairs have no question or chunk text in the sample sets "
                f"(e.g. query {q!r}, chunk {d!r})"
            )
        text = "".join(
            json.dumps(
                {
                    "query_id": q,
                    "question": questions[q],
                    "doc_id": d,
                    "text": texts_of[(q, d)],
                    "best_rank": best[(q, d)],
                },
                ensure_ascii=False,
            )
            + "\n"
            for q, d in pairs
        )
    else:
        text = "".join(f"{q} {d} {best[(q, d)]}\n" for q, d in pairs)
    emit(text, output)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    per_run = ", ".join(f"{name} {n}" for name, n in counts["unique_per_run"].items())
    click.echo(
        f"pool: {counts['pairs']} (query, doc) pairs over {counts['queries']} queries at depth {depth}; "
        f"docs only one run contributes: {per_run}",
        err=True,
    )
