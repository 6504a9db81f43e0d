"""What the judge labels, and how a kind of label is declared.

Inputs are *items*: (query id, question, doc id, passage text) for the kinds that judge pairs
(grades, utilities), taken from each run's top ``depth`` (the judgment pool: the union over the runs)
with the texts from ``queries`` and ``passages``, or from a sample set's retrieved chunks (its
``question`` and chunk texts); the other kinds read a sample set whole. A missing text is an error
naming the id and the file. Every judgment goes through the runner, so through the cache.

A kind of label is one :class:`Labeling` in a module of :mod:`ctxeval._judge.kinds`: its tasks, the
function that asks them, the function that writes the labels, and the help of its ``ctxeval judge``
command (generated from the registry).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from .._errors import ConfigError, InputError
from .._io.model import Run
from .._io.samples import Samples, record
from .._io.side import read_passages, read_query_texts
from .cache import Cache
from .interface import Judge
from .prompt import Ask, Task
from .runner import TIE, UNSENT, Outcome, Prices, Tally, judge_many

__all__ = [
    "Item",
    "JudgeOptions",
    "Labeling",
    "item_asks",
    "items_from_runs",
    "items_from_samples",
    "judge_pairs",
    "judgment_pool",
    "merged",
    "open_field",
    "samples_text",
]


@dataclass(frozen=True)
class Item:
    query_id: str
    question: str
    doc_id: str
    text: str


@dataclass(frozen=True)
class JudgeOptions:
    concurrency: int = 8
    max_cost: float | None = None
    prices: Prices | None = None
    votes: int = 1
    progress: bool = False
    retry_undecided: bool = False  #: ask cached undecided judgments again
    notify: Callable[[str], None] | None = None  #: one-line messages (the probe, waits) go here

    def runner_kw(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~ctxeval._judge.runner.judge_many` these options give."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # each field is one of its keywords


@dataclass(frozen=True)
class Labeling:
    """One kind of label the judge writes, in one registry entry: the ``tasks`` it asks (registry
    name -> :class:`~.prompt.Task`, each with its prompt, reply shape and offline rule), the function
    that asks them and builds the labels (``collect``), the one that writes them (``write``), the file
    or fields they become (``writes``) and the command's ``help``.

    ``reads``: ``"pairs"`` (question, passage pairs from runs or a sample set: ``collect(judge, items,
    cache, opts, scale)`` gives ``[(Item, Outcome)]`` and a tally) or ``"samples"`` (a sample set:
    ``collect(judge, samples, cache, opts, depth)`` gives the label records and a tally per task).
    ``scales``: for pairs, ``--scale`` value -> task name (the first is the default; one value: no
    ``--scale`` option); the scale is recorded in the labels' sidecar."""

    name: str
    tasks: Mapping[str, Task]
    collect: Callable[..., tuple[Any, ...]]
    write: Callable[..., str]
    writes: str
    help: str
    reads: str = "samples"
    scales: Mapping[str, str] = field(default_factory=dict)
    scale_help: str = ""
    noun: str = ""  #: what the labels are called in messages ("no grades to write"); default the name
    decides: bool = False  #: its labels are grades: ``--until-decided`` may stop once a decision is settled

    def __post_init__(self) -> None:
        if not self.noun:
            object.__setattr__(self, "noun", self.name)


#: what the answer-based tasks need of a sample, in the sample format's own field names
NEEDS_ANSWER = (
    "no sample has both a reference answer (the field reference_answer, or RAGAS's reference) and chunk texts "
    "(retrieved as [{id, text}], or retrieved_contexts)"
)


def ranked(r: Any) -> tuple[Run, list[str], list[str], list[float]]:
    """A run's rows in its ranking order: the run, and their query ids, doc ids and scores."""
    run = Run.coerce(r)
    c = run.columns
    rows = run.ranked_rows()
    return run, c.query_of_rows()[rows].tolist(), c.doc.to_list(rows), c.values[rows].tolist()


def judgment_pool(runs: Sequence[Any], depth: int) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The judgment pool: per query (byte-wise order), the union of every run's top ``depth`` docs, in
    order of their best rank (then doc id); with counts (queries, pairs, and per run the docs only it
    contributes) and each pair's best rank (``best_rank``)."""
    if depth < 1:
        raise ConfigError(f"--depth must be >= 1, got {depth}")
    best: dict[tuple[str, str], int] = {}
    by_run: dict[str, set[tuple[str, str]]] = {}
    for r in runs:
        run, q, d, _ = ranked(r)
        rank: dict[str, int] = {}
        mine = by_run.setdefault(run.name, set())
        for qid, doc in zip(q, d):
            n = rank.get(qid, 0) + 1
            rank[qid] = n
            if n <= depth:
                key = (str(qid), doc)
                mine.add(key)
                best[key] = min(best.get(key, n), n)
    pairs = sorted(best, key=lambda k: (k[0].encode(), best[k], k[1].encode()))
    only = {name: len(s - set().union(*(o for n, o in by_run.items() if n != name))) for name, s in by_run.items()}
    counts = {"queries": len({q for q, _ in pairs}), "pairs": len(pairs), "depth": depth, "unique_per_run": only}
    counts["best_rank"] = best  # (qid, doc) -> its best rank over the runs
    return pairs, counts


def items_from_runs(runs: Sequence[Any], queries: Any, passages: Any, depth: int) -> tuple[list[Item], dict[str, Any]]:
    pairs, counts = judgment_pool(runs, depth)
    qtext, qsrc = read_query_texts(queries)
    ptext, psrc = read_passages(passages)
    out = []
    for q, d in pairs:
        if q not in qtext:
            raise InputError(f"{qsrc}: no text for query {q!r} (judging needs every pooled query's text)")
        if d not in ptext:
            raise InputError(
                f"{psrc}: no text for passage {d!r} (query {q!r}; judging needs every pooled passage's text)"
            )
        out.append(Item(q, qtext[q], d, ptext[d]))
    return out, counts


def items_from_samples(samples: Any, depth: int | None) -> list[Item]:
    st = Samples.coerce(samples)
    out: list[Item] = []
    for s in st.samples:
        if s.retrieved_texts is None or s.question is None:
            raise InputError(
                f"{st.source}: sample {s.query_id!r} lacks the question or the chunk texts the judge reads"
            )
        n = len(s.retrieved_ids) if depth is None else min(depth, len(s.retrieved_ids))
        out.extend(Item(s.query_id, s.question, s.retrieved_ids[i], s.retrieved_texts[i]) for i in range(n))
    return out


def item_asks(task: Task, items: Sequence[Item]) -> list[Ask]:
    """One ask of ``task`` per item: its question and passage, with its ids."""
    return [
        Ask(task, {"question": it.question, "passage": it.text}, {"query_id": it.query_id, "doc_id": it.doc_id})
        for it in items
    ]


def judge_pairs(
    judge: Judge, items: Sequence[Item], cache: Cache, opts: JudgeOptions, task: Task
) -> tuple[list[tuple[Item, Outcome]], Tally]:
    """Each item's :class:`~.runner.Outcome` under ``task`` (asked of its question and passage)."""
    outcomes, tally = judge_many(judge, item_asks(task, items), cache=cache, **opts.runner_kw())
    return list(zip(items, outcomes)), tally


def pair_lines(got: Sequence[tuple[Item, Outcome]], fmt: Callable[[Item, Any], str]) -> str:
    """One line per decided pair, ``fmt(item, value)``."""
    return "".join(fmt(it, o.value) + "\n" for it, o in got if o.decided)


def open_field(o: Outcome) -> str:
    """Where a judgment that has no value is listed: ``undecided``, ``tied`` (its votes split evenly)
    or ``not_sent`` (the budget stopped before it was asked); the sample format reads all three."""
    return "tied" if o.status == TIE else "not_sent" if o.status == UNSENT else "undecided"


def status_of(o: Outcome) -> str:
    """Why a sample's first step (its claims, its nuggets) has no value: its outcome and reason."""
    return f"{o.status}: {o.reason}" if o.reason else o.status


def top(s: Any, depth: int | None) -> int:
    """How many of a sample's retrieved chunks are judged: all, or the top ``depth``."""
    return len(s.retrieved_ids) if depth is None else min(depth, len(s.retrieved_ids))


def with_answer(samples: Any, what: str) -> tuple[Samples, list[Any]]:
    """The sample set and its samples that have a reference answer and chunk texts (else an error
    saying there is ``what``: nothing to ...)."""
    st = Samples.coerce(samples)
    have = [s for s in st.samples if s.reference_answer and s.retrieved_texts is not None]
    if not have:
        raise InputError(f"{st.source}: {NEEDS_ANSWER}: {what}")
    return st, have


def chunk_flags(
    judge: Judge, have: Sequence[Any], task: Task, answer: Any, cache: Cache, opts: JudgeOptions, depth: int | None
) -> tuple[list[list[str]], list[dict[str, list[str]]], Tally]:
    """One yes/no judgment per (sample, chunk of its top ``depth``) with the sample's question, the
    text ``answer(sample)`` and the chunk: per sample the chunk ids judged yes, and those without a
    judgment by why (``{"undecided": [...], "tied"?: [...], "not_sent"?: [...]}``)."""
    asks, where = [], []
    for si, s in enumerate(have):
        for di in range(top(s, depth)):
            fields = {"question": s.question or "", "answer": answer(s), "passage": (s.retrieved_texts or ())[di]}
            asks.append(Ask(task, fields, {"query_id": s.query_id, "doc_id": s.retrieved_ids[di]}))
            where.append((si, di))
    values, tally = judge_many(judge, asks, cache=cache, **opts.runner_kw())
    yes: list[list[str]] = [[] for _ in have]
    open_: list[dict[str, list[str]]] = [{"undecided": []} for _ in have]
    for (si, di), o in zip(where, values):
        doc = have[si].retrieved_ids[di]
        if o.decided:
            if o.value is True:
                yes[si].append(doc)
        else:
            open_[si].setdefault(open_field(o), []).append(doc)
    return yes, open_, tally


def merged(
    samples: Any, labels: Sequence[Mapping[str, Any]], labelled_by: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The sample set's records (as read) with the label fields of ``labels`` added, by query id, and
    ``labelled_by`` (the judge, its model, whether it is a heuristic, the task) on each labelled one."""
    st = Samples.coerce(samples)
    by_q = {r["query_id"]: r for r in labels}
    out = []
    for s in st.samples:
        rec = record(s)
        extra = by_q.get(s.query_id)
        if extra:
            rec.update({k: v for k, v in extra.items() if k != "query_id"})
            if labelled_by:
                rec["labelled_by"] = [*rec.get("labelled_by", []), dict(labelled_by)]
        out.append(rec)
    return out


def samples_text(samples: Any, labels: Sequence[Mapping[str, Any]], labelled_by: Mapping[str, Any]) -> str:
    """The sample set with its new label fields, as JSON lines (through the sample format's writer)."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in merged(samples, labels, labelled_by))
