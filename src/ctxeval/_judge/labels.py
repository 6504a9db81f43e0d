"""Labels from the judge: what to judge (the pool of a set of runs, or the chunks of a sample set),
and the files the judgments become (qrels, a utility file, samples with claim / relevance / nugget
labels), always through the cache.

Inputs are *items*: (query id, question, doc id, passage text) for grades and utilities, taken from
each run's top ``depth`` (the judgment pool: the union over the runs) with the texts from
``queries`` and ``passages``, or from a sample set's retrieved chunks (its ``question`` and chunk
texts). A missing text is an error naming the id and the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError, InputError
from .cache import Cache
from .client import Judge
from .runner import TIE, UNSENT, Ask, Outcome, Prices, Tally, judge_many
from .tasks import TASKS

__all__ = [
    "LABELS",
    "Item",
    "JudgeOptions",
    "Labeling",
    "item_asks",
    "items_from_runs",
    "items_from_samples",
    "judgment_pool",
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


#: what the answer-based tasks need of a sample, in the sample format's own field names
_NEEDS_ANSWER = (
    "no sample has both a reference answer (the field reference_answer, or RAGAS's reference) and chunk texts "
    "(retrieved as [{id, text}], or retrieved_contexts)"
)


def judgment_pool(runs: Sequence[Any], depth: int) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """The judgment pool: per query (byte-wise order), the union of every run's top ``depth`` docs, in
    order of their best rank (then doc id); with counts (queries, pairs, and per run the docs only it
    contributes) and each pair's best rank (``best_rank``)."""
    from .._io.model import Run

    if depth < 1:
        raise ConfigError(f"--depth must be >= 1, got {depth}")
    best: dict[tuple[str, str], int] = {}
    by_run: dict[str, set[tuple[str, str]]] = {}
    for r in runs:
        run = Run.coerce(r)
        c = run.columns
        rows = run.ranked_rows()
        q = c.query_of_rows()[rows].tolist()
        d = c.doc.to_list(rows)
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
    from .._io.side import read_passages, read_query_texts

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
    from .._io.samples import Samples

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


def item_asks(task: str, items: Sequence[Item]) -> list[Ask]:
    return [
        Ask(TASKS[task], {"question": it.question, "passage": it.text}, {"query_id": it.query_id, "doc_id": it.doc_id})
        for it in items
    ]


def grades(
    judge: Judge, items: Sequence[Item], cache: Cache, opts: JudgeOptions, scale: str = "rag"
) -> tuple[list[tuple[Item, Outcome]], Tally]:
    """Each item's :class:`Outcome`: its grade (1-5 on the ``rag`` scale, 0-3 on the ``trec`` scale)
    when decided."""
    outcomes, tally = judge_many(
        judge, item_asks("grade" if scale == "rag" else "grade-trec", items), cache=cache, **_kw(opts)
    )
    return list(zip(items, outcomes)), tally


def utilities(
    judge: Judge, items: Sequence[Item], cache: Cache, opts: JudgeOptions
) -> tuple[list[tuple[Item, Outcome]], Tally]:
    """Each item's :class:`Outcome`: its utility u = 1 - P(first token NO-RESPONSE) when decided."""
    outcomes, tally = judge_many(judge, item_asks("utility", items), cache=cache, **_kw(opts))
    return list(zip(items, outcomes)), tally


def _kw(opts: JudgeOptions) -> dict[str, Any]:
    return {
        "concurrency": opts.concurrency,
        "max_cost": opts.max_cost,
        "prices": opts.prices,
        "votes": opts.votes,
        "progress": opts.progress,
        "retry_undecided": opts.retry_undecided,
        "notify": opts.notify,
    }


def claims(
    judge: Judge, samples: Any, cache: Cache, opts: JudgeOptions, depth: int | None
) -> tuple[list[dict[str, Any]], Tally, Tally]:
    """Per sample with a reference answer: its claims (split by the judge) and, per claim, the chunks of
    the top ``depth`` that support it / that the judge could not decide. Returns the label records
    ``{query_id, claims: [{text, supported_by, undecided}]}`` and the two tallies (split, support)."""
    from .._io.samples import Samples

    st = Samples.coerce(samples)
    have = [s for s in st.samples if s.reference_answer and s.retrieved_texts is not None]
    if not have:
        raise InputError(f"{st.source}: {_NEEDS_ANSWER}: nothing to split into claims")
    split_task, support_task = TASKS["claims-split"], TASKS["claims-support"]
    split, t1 = judge_many(
        judge,
        [
            Ask(
                split_task, {"question": s.question or "", "answer": s.reference_answer or ""}, {"query_id": s.query_id}
            )
            for s in have
        ],
        cache=cache,
        **_kw(opts),
    )
    asks, where = [], []
    for si, (s, cl) in enumerate(zip(have, split)):
        if not cl.decided:
            continue
        n = len(s.retrieved_ids) if depth is None else min(depth, len(s.retrieved_ids))
        for ci, claim in enumerate(cl.value):
            for di in range(n):
                ref = {"query_id": s.query_id, "claim": ci, "doc_id": s.retrieved_ids[di]}
                asks.append(Ask(support_task, {"claim": claim, "passage": (s.retrieved_texts or ())[di]}, ref))
                where.append((si, ci, di))
    support, t2 = judge_many(judge, asks, cache=cache, **_kw(opts))
    out = []
    for si, s in enumerate(have):
        cl = split[si]
        rec: dict[str, Any] = {"query_id": s.query_id}
        if not cl.decided:
            rec["claims"] = None
            rec["claims_status"] = _status(cl)
        else:
            rec["claims"] = [{"text": c, "supported_by": [], "undecided": []} for c in cl.value]
        out.append(rec)
    for (si, ci, di), o in zip(where, support):
        claim = out[si]["claims"][ci]
        doc = have[si].retrieved_ids[di]
        if o.decided:
            if o.value is True:
                claim["supported_by"].append(doc)
        else:
            claim.setdefault(open_field(o), []).append(doc)
    return out, t1, t2


def open_field(o: Outcome) -> str:
    """Where a judgment that has no value is listed: ``undecided``, ``tied`` (its votes split evenly)
    or ``not_sent`` (the budget stopped before it was asked); the sample format reads all three."""
    return "tied" if o.status == TIE else "not_sent" if o.status == UNSENT else "undecided"


def _status(o: Outcome) -> str:
    """Why a sample's first step (its claims, its nuggets) has no value: its outcome and reason."""
    return f"{o.status}: {o.reason}" if o.reason else o.status


def _chunk_flags(
    judge: Judge, have: Sequence[Any], task: str, answer: Any, cache: Cache, opts: JudgeOptions, depth: int | None
) -> tuple[list[list[str]], list[dict[str, list[str]]], Tally]:
    """One yes/no judgment per (sample, chunk of its top ``depth``) with the sample's question, the
    text ``answer(sample)`` and the chunk: per sample the chunk ids judged yes, and those without a
    judgment by why (``{"undecided": [...], "tied"?: [...], "not_sent"?: [...]}``)."""
    asks, where = [], []
    for si, s in enumerate(have):
        n = len(s.retrieved_ids) if depth is None else min(depth, len(s.retrieved_ids))
        for di in range(n):
            fields = {"question": s.question or "", "answer": answer(s), "passage": (s.retrieved_texts or ())[di]}
            asks.append(Ask(TASKS[task], fields, {"query_id": s.query_id, "doc_id": s.retrieved_ids[di]}))
            where.append((si, di))
    values, tally = judge_many(judge, asks, cache=cache, **_kw(opts))
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


def relevance(
    judge: Judge, samples: Any, cache: Cache, opts: JudgeOptions, depth: int | None
) -> tuple[list[dict[str, Any]], Tally]:
    """Per sample with a reference answer: which of its top ``depth`` chunks the judge finds useful
    to arrive at the answer, and which have no judgment, by why: ``{query_id, judged: {relevant, undecided,
    tied?, not_sent?}}``."""
    from .._io.samples import Samples

    st = Samples.coerce(samples)
    have = [s for s in st.samples if s.reference_answer and s.retrieved_texts is not None]
    if not have:
        raise InputError(f"{st.source}: {_NEEDS_ANSWER}: nothing to judge the chunks against")
    rel, und, tally = _chunk_flags(judge, have, "relevance", lambda s: s.reference_answer or "", cache, opts, depth)
    out = [{"query_id": s.query_id, "judged": {"relevant": r, **u}} for s, r, u in zip(have, rel, und)]
    return out, tally


def nuggets(
    judge: Judge, samples: Any, cache: Cache, opts: JudgeOptions, depth: int | None
) -> tuple[list[dict[str, Any]], Tally, Tally]:
    """Per sample: nuggets created from its question and reference material (reference answer and
    reference contexts), each assigned support / partial support against the top ``depth`` chunks:
    ``{query_id, nuggets: [{text, importance, supported_by, partially_supported_by, undecided}]}``,
    the shape :class:`~ctxeval.Samples` reads for ``NuggetRecall``."""
    from .._io.samples import Samples

    st = Samples.coerce(samples)
    have = [s for s in st.samples if (s.reference_answer or s.reference_contexts) and s.retrieved_texts is not None]
    if not have:
        raise InputError(
            f"{st.source}: no sample has reference material (reference_answer or reference_contexts) and chunk texts"
        )
    ctx = [
        "\n\n".join([*(s.reference_contexts or ()), *([s.reference_answer] if s.reference_answer else [])])
        for s in have
    ]
    made, t1 = judge_many(
        judge,
        [
            Ask(TASKS["nuggets-create"], {"question": s.question or "", "context": c}, {"query_id": s.query_id})
            for s, c in zip(have, ctx)
        ],
        cache=cache,
        **_kw(opts),
    )
    asks, where = [], []
    for si, (s, made_i) in enumerate(zip(have, made)):
        if not made_i.decided:
            continue
        n = len(s.retrieved_ids) if depth is None else min(depth, len(s.retrieved_ids))
        for ni, (text, _) in enumerate(made_i.value):
            for di in range(n):
                asks.append(
                    Ask(
                        TASKS["nuggets-assign"],
                        {"question": s.question or "", "nugget": text, "passage": (s.retrieved_texts or ())[di]},
                        {"query_id": s.query_id, "nugget": ni, "doc_id": s.retrieved_ids[di]},
                    )
                )
                where.append((si, ni, di))
    support, t2 = judge_many(judge, asks, cache=cache, **_kw(opts))
    out: list[dict[str, Any]] = []
    for si, s in enumerate(have):
        if not made[si].decided:
            out.append({"query_id": s.query_id, "nuggets": None, "nuggets_status": _status(made[si])})
            continue
        ns = made[si].value
        out.append(
            {
                "query_id": s.query_id,
                "nuggets": [
                    {
                        "text": t,
                        "importance": "vital" if v else "okay",
                        "supported_by": [],
                        "partially_supported_by": [],
                        "undecided": [],
                    }
                    for t, v in ns
                ],
            }
        )
    for (si, ni, di), o in zip(where, support):
        n = out[si]["nuggets"][ni]
        doc = have[si].retrieved_ids[di]
        if not o.decided:
            n.setdefault(open_field(o), []).append(doc)
        elif o.value == "support":
            n["supported_by"].append(doc)
        elif o.value == "partial_support":
            n["partially_supported_by"].append(doc)
    return out, t1, t2


def attribution(
    judge: Judge, samples: Any, cache: Cache, opts: JudgeOptions, depth: int | None
) -> tuple[list[dict[str, Any]], Tally]:
    """Per sample with a response: which of its top ``depth`` chunks the response used, written as the
    sample's ``citations`` (what ``AttributionRate`` reads), those without a judgment as
    ``citations_undecided``, ``citations_tied`` and ``citations_not_sent`` (the last two when any)."""
    from .._io.samples import Samples

    st = Samples.coerce(samples)
    have = [s for s in st.samples if s.response and s.retrieved_texts is not None]
    if not have:
        raise InputError(f"{st.source}: no sample has a response and chunk texts: nothing to attribute")
    used, und, tally = _chunk_flags(judge, have, "attribution", lambda s: s.response or "", cache, opts, depth)
    out = [
        {"query_id": s.query_id, "citations": u, **{f"citations_{k}": v for k, v in x.items()}}
        for s, u, x in zip(have, used, und)
    ]
    return out, tally


def merged(
    samples: Any, labels: Sequence[Mapping[str, Any]], labelled_by: Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The sample set's records (as read) with the label fields of ``labels`` added, by query id, and
    ``labelled_by`` (the judge, its model, whether it is a heuristic, the task) on each labelled one."""
    from .._io.samples import Samples

    st = Samples.coerce(samples)
    by_q = {r["query_id"]: r for r in labels}
    out = []
    for s in st.samples:
        rec = sample_record(s)
        extra = by_q.get(s.query_id)
        if extra:
            rec.update({k: v for k, v in extra.items() if k != "query_id"})
            if labelled_by:
                rec["labelled_by"] = [*rec.get("labelled_by", []), dict(labelled_by)]
        out.append(rec)
    return out


def sample_record(s: Any) -> dict[str, Any]:
    """A :class:`Sample` as the JSON object it reads back from (the sample format's writer)."""
    from .._io.samples import record

    return record(s)


def qrels_text(got: Sequence[tuple[Item, Outcome]]) -> str:
    """The decided grades as qrels lines (``qid 0 docid grade``)."""
    return "".join(f"{it.query_id} 0 {it.doc_id} {o.value}\n" for it, o in got if o.decided)


def utility_text(got: Sequence[tuple[Item, Outcome]]) -> str:
    """The decided utilities as the utility file UDCG reads (``qid docid u``)."""
    return "".join(f"{it.query_id} {it.doc_id} {o.value!r}\n" for it, o in got if o.decided)


def samples_text(samples: Any, labels: Sequence[Mapping[str, Any]], labelled_by: Mapping[str, Any]) -> str:
    """The sample set with its new label fields, as JSON lines (through the sample format's writer)."""
    import json

    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in merged(samples, labels, labelled_by))


@dataclass(frozen=True)
class Labeling:
    """One kind of label the judge writes, in one registry entry: the tasks it asks (entries of
    :data:`~ctxeval._judge.tasks.TASKS`, each with its prompt, schema, parser and offline rule), the
    function that asks them and builds the labels, the function that writes them, the file or
    fields they become, and the command's help."""

    name: str
    tasks: tuple[str, ...]
    collect: Callable[..., tuple[Any, ...]]
    write: Callable[..., str]
    writes: str
    help: str


#: every kind of label, by the name of its ``ctxeval judge`` command
LABELS: dict[str, Labeling] = {
    "grade": Labeling(
        "grade", ("grade", "grade-trec"), grades, qrels_text, "qrels",
        "Grade each (question, passage) pair and write qrels (pairs not decided are listed on stderr and in "
        "--report with their reason, never written as a grade).",
    ),
    "utility": Labeling(
        "utility", ("utility",), utilities, utility_text, "a utility file (qid docid u)",
        "u = 1 - P(first token is NO-RESPONSE) for each (question, passage), from the server's logprobs, written "
        "as the utility file UDCG reads (--utilities).",
    ),
    "claims": Labeling(
        "claims", ("claims-split", "claims-support"), claims, samples_text, "the samples' claims field",
        "Split each reference answer into claims and decide which of the top-K chunks support each: the samples "
        "with a claims field, for ContextRecall(method=judge).",
    ),
    "relevance": Labeling(
        "relevance", ("relevance",), relevance, samples_text, "the samples' judged field",
        "Decide which of the top-K chunks are useful for the reference answer: the samples with a judged field, "
        "for ContextPrecision(method=judge).",
    ),
    "attribution": Labeling(
        "attribution", ("attribution",), attribution, samples_text, "the samples' citations field",
        "Decide which of the top-K chunks the response used: the samples with a citations field, for "
        "AttributionRate[@k].",
    ),
    "nuggets": Labeling(
        "nuggets", ("nuggets-create", "nuggets-assign"), nuggets, samples_text, "the samples' nuggets field",
        "Create vital/okay nuggets from each question and its reference material and assign each support / "
        "partial support against the top-K chunks: the samples with a nuggets field, for "
        "NuggetRecall(score=...)@k.",
    ),
}  # fmt: skip
