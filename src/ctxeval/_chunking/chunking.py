"""``chunking``: which chunker, at the token budget the LLM really has? One corpus, one question set
with span labels, several chunkers, one retriever: chunk, index, retrieve, score at equal budgets,
compare.

1. Every chunker cuts every document (:func:`ctxeval._io.chunkers.chunk_corpus`: a framework's
   splitter, a function, a chunk table or a spec such as ``tokens:256/32``); each chunk knows its
   document and offsets, so the same span labels score every chunking.
2. One retriever ranks each chunker's chunks for every question (:mod:`.retrieve`: BM25 by default,
   or the team's own through :func:`ctxeval.collect`).
3. The decision measure (``SpanRecall`` by default: the share of the evidence's characters in the
   context) is read at every budget B (``SpanRecall@Btok``: the ranked chunks in order while their
   tokens fit, :mod:`ctxeval._core.budget`), each chunker's run with its own chunk table
   (``RagConfig.chunk_tables``), and compared by :func:`ctxeval.compare` over every pair of chunkers
   at every budget: paired tests (randomization by default), one family adjusted by Holm.
4. The answer (:mod:`.model`): at each budget, the chunker that beats every other significantly, or
   "cannot tell" with the reason; SpanPrecision and SpanIoU at each budget and precision_Omega (the
   chunking's ceiling: the best IoU any retriever could reach with its chunks) beside each chunker.
5. The equal-K view: the decision measure at K chunks with the tokens those K chunks hold, which is
   why K compares unlike things: a chunker of big chunks reads more text at the same K.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .._compare.compare import compare
from .._compare.settings import Sections, Stats
from .._context.settings import RagConfig
from .._core.budget import number_list
from .._errors import ConfigError, MeasureError
from .._evaluate import evaluate
from .._io.chunkers import chunk_corpus
from .._io.chunks import Chunks
from .._io.locate import read_documents
from .._io.side import read_texts
from .._io.spans import SpanLabels
from .._io.tokenizers import Tokenizer
from .._measures import parse_measure
from .model import ChunkerRow, ChunkingModel
from .retrieve import bm25_run, collected_run, depth_for
from .verdicts import at_k_text, headline, verdicts

__all__ = ["DEFAULT_BUDGETS", "chunking", "parse_budgets"]

#: the budgets of the curve when none are given (tokens)
DEFAULT_BUDGETS = (128, 256, 512, 1024, 2048, 4096)


def parse_budgets(spec: Any) -> list[int]:
    """Budgets in tokens: an int, a list, ``"256,512,1024"`` or ``"256:4096:256"`` (from, to, step);
    sorted, without repeats.

    >>> parse_budgets("256:1024:256"), parse_budgets("512,128"), parse_budgets(300)
    ([256, 512, 768, 1024], [128, 512], [300])
    """
    if isinstance(spec, bool):
        raise ConfigError(f"budgets must be whole numbers of tokens, got {spec!r}")
    if isinstance(spec, int):
        out = [spec]
    elif isinstance(spec, str):
        found = number_list(spec.strip().removesuffix("tok"))
        if found is None:
            raise ConfigError(f"budgets must look like 512, 256,512,1024 or 256:4096:256, got {spec!r}")
        out = found
    elif isinstance(spec, Iterable):
        out = list(spec)
        if not all(isinstance(b, int) and not isinstance(b, bool) for b in out):
            raise ConfigError(f"budgets must be whole numbers of tokens, got {spec!r}")
    else:
        raise ConfigError(f"budgets must be whole numbers of tokens, got {spec!r}")
    if not out or min(out) < 1:
        raise ConfigError(f"budgets must be whole numbers >= 1, got {spec!r}")
    return sorted(set(out))


def _questions(spans: SpanLabels, questions: Any) -> tuple[dict[str, str], list[str]]:
    """The text of every labelled question (from ``questions``, else the labels' own), and notes."""
    given, source = read_texts(questions, "questions", ("qid", "query_id", "id"), ("question", "text", "query"))
    texts = given if questions is not None else dict(spans.queries)
    where = source if questions is not None else f"the span labels {spans.source}"
    labelled = spans.query_ids
    missing = [q for q in labelled if not texts.get(q, "").strip()]
    if missing:
        shown = ", ".join(map(repr, missing[:5])) + (" ..." if len(missing) > 5 else "")
        raise ConfigError(
            f"{len(missing)} labelled questions have no text in {where} ({shown}): give questions=... "
            "(a mapping, a qid<TAB>text file or JSON lines of query_id and question)"
        )
    extra = sorted(set(texts) - set(labelled))
    notes = [f"{where}: {len(extra)} questions without span labels are left out"] if extra else []
    return {q: texts[q] for q in labelled}, notes


def _named(chunkers: Any) -> dict[str, Any]:
    if isinstance(chunkers, Mapping):
        named = {str(k): v for k, v in chunkers.items()}
    elif isinstance(chunkers, (list, tuple)):
        named = {}
        for c in chunkers:
            key = c if isinstance(c, str) else getattr(c, "__name__", None) or type(c).__name__
            if key in named:
                raise ConfigError(f"two chunkers would both be named {key!r}: give a mapping {{name: chunker}}")
            named[key] = c
    else:
        raise ConfigError(f"chunkers must be a mapping {{name: chunker}} or a list, got {type(chunkers).__name__}")
    if not named:
        raise ConfigError("chunking needs at least one chunker")
    return named


def chunking(
    documents: Any,
    labels: Any,
    chunkers: Any,
    *,
    questions: Any = None,
    retriever: Callable[[Chunks], Any] | None = None,
    budgets: Any = DEFAULT_BUDGETS,
    budget: int | None = None,
    measure: str = "SpanRecall",
    k: int = 5,
    tokenizer: Any = None,
    stats: Stats | Mapping[str, Any] | None = None,
) -> ChunkingModel:
    """Which chunker at which token budget (see the module docstring).

    ``documents``: the corpus (a folder of files, a JSON-lines file of ``doc_id`` and ``text``, or a
    mapping). ``labels``: span labels (:class:`~ctxeval.SpanLabels`, a file of them, or Chroma's
    ``questions_df.csv``); ``questions``: the question texts when the labels do not carry them (a
    mapping, a ``qid<TAB>text`` file or JSON lines). ``chunkers``: ``{name: chunker}`` (or a list of
    specs); a chunker is a LangChain text splitter, a LlamaIndex node parser, a chonkie or semchunk chunker,
    a Haystack ``DocumentSplitter``, a function ``str -> list`` of ``(start, end)`` pairs or texts, a
    chunk table (:class:`~ctxeval.Chunks` or its file) or a spec (``tokens:256/32``,
    ``langchain:RecursiveCharacterTextSplitter(chunk_size=1000)``, ``chonkie:RecursiveChunker()``,
    ``semchunk:512``: the command line's ``--chunker``); offsets are read from the framework, else
    located by search (counted in the notes). ``retriever``: None
    for BM25, or a function given a chunker's :class:`~ctxeval.Chunks` and returning a retriever
    :func:`ctxeval.collect` runs. ``budgets``: the curve's budgets in tokens; ``budget``: the one the
    answer is about (default: each of ``budgets``). ``measure``: the family compared at each budget;
    ``k``: the equal-K view. ``tokenizer``: what counts tokens (default ``words-v1``, offline; named in
    the report). ``stats``: the tests (a :class:`~ctxeval.Stats`; every pair of chunkers is tested).
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
    grid = parse_budgets(budgets)
    if budget is not None:
        grid = sorted(set(grid) | set(parse_budgets(budget)))
    try:
        asked = [parse_measure(f"{measure}@{b}tok") for b in grid]
    except MeasureError as exc:
        raise MeasureError(f"measure {measure!r} at a budget: {exc}") from None
    cfg = replace(Stats.coerce(stats), pairs="all")
    tok = Tokenizer.coerce(tokenizer)
    docs = read_documents(documents)
    spans = SpanLabels.coerce(labels)
    spans.check(docs)
    texts, notes = _questions(spans, questions)
    named = _named(chunkers)
    tables: dict[str, Chunks] = {}
    runs = []
    for name, chunker in named.items():
        table = chunk_corpus(chunker, docs, name=name if not isinstance(chunker, str) else None, tokenizer=tok)
        tables[name] = table
        tokens = table.token_counts(tok)[0]
        if retriever is None:
            run, empty = bm25_run(name, table, texts, tokens, grid[-1], k)
            if empty:
                notes.append(
                    f"{name}: {empty} of {len(texts)} questions share no term with any chunk (nothing retrieved)"
                )
        else:
            depth, cut = depth_for(tokens, grid[-1], k)
            if cut:
                notes.append(f"{name}: the retriever was asked for at most {depth} chunks per question")
            run = collected_run(name, table, texts, retriever, depth)
        runs.append(run)
    rag = RagConfig(chunk_tables=tables, documents=docs, tokenizer=tok)
    report = compare(spans, runs, asked, stats=cfg, sections=Sections(curves_k=0), rag=rag)
    side = [parse_measure(f"{fam}@{b}tok") for fam in ("SpanPrecision", "SpanIoU") for b in grid]
    at_k = parse_measure(f"{measure}@{k}")
    omega = parse_measure("PrecisionOmega")
    more = evaluate(spans, runs, [*side, at_k, omega], rag=rag)
    rows = []
    for i, (name, table) in enumerate(tables.items()):
        summary = report.overall.runs[i]
        values = more.runs[i].values
        tokens = table.token_counts(tok)[0]
        rows.append(
            ChunkerRow(
                name=name,
                source=table.source,
                chunks=len(table),
                mean_tokens=float(tokens.mean()),
                precision_omega=float(np.nanmean(values[omega])),
                curve=tuple(summary.aggregate[m] for m in asked),
                ci=tuple(summary.ci[m] for m in asked),
                precision=tuple(float(np.nanmean(values[m])) for m in side[: len(grid)]),
                iou=tuple(float(np.nanmean(values[m])) for m in side[len(grid) :]),
                at_k=float(np.nanmean(values[at_k])),
                tokens_at_k=_tokens_at_k(runs[i], table, tokens, k, len(texts)),
            )
        )
    found = verdicts(rows, grid, asked, report, cfg)
    focus = [budget] if budget is not None else grid
    settings = {
        "documents": len(docs),
        "questions": len(texts),
        "span_labels": spans.source,
        "retriever": "BM25 (Lucene's, k1=1.2, b=0.75; ctxeval's own)" if retriever is None else "the team's (collect)",
        "tokenizer": tok.name,
        "overflow": "stop",
        "test": cfg.test,
        "correction": cfg.correction,
        "alpha": cfg.alpha,
        "seed": cfg.seed,
        "tests_in_family": len(report.comparisons),
        "chunks_per_run": {n: t.source for n, t in tables.items()},
    }
    return ChunkingModel(
        measure=measure,
        budgets=tuple(grid),
        k=k,
        chunkers=tuple(rows),
        verdicts=tuple(found),
        answer=headline(found, focus, measure),
        at_k=at_k_text(rows, k, measure),
        comparisons=tuple(c.to_dict() for c in report.comparisons),
        settings=settings,
        notes=tuple(dict.fromkeys([*notes, *report.notes])),
        report=report.to_dict(),
        tables=tables,
        runs={r.name: r for r in runs},
    )


def _tokens_at_k(run: Any, table: Chunks, tokens: np.ndarray, k: int, n_questions: int) -> float:
    """The mean over the questions of the tokens of the top K chunks (0 where nothing was retrieved)."""
    rows = table.rows_of(run.columns.doc)
    ranked = run.ranked_rows()
    qs = run.columns.query_of_rows()[ranked]
    total = 0.0
    seen: dict[str, int] = {}
    for q, r in zip(qs.tolist(), rows[ranked].tolist()):
        n = seen.get(q, 0)
        if n < k:
            total += float(tokens[r])
            seen[q] = n + 1
    return total / max(n_questions, 1)
