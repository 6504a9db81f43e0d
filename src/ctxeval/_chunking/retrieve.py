"""Each chunker's run: its chunks indexed and searched for every question.

* **BM25** (the default, offline): :class:`~ctxeval._chunking.bm25.BM25` over the chunk texts; a
  question's ranking is cut once it holds the largest budget (its first chunk past it included, so
  that the context of every budget is known) and at least K chunks.
* **The team's retriever**, through :func:`ctxeval.collect`: ``retriever`` is a function given the
  chunker's :class:`~ctxeval.Chunks` table (ids, documents, offsets, texts) and returning what
  ``collect`` runs (a LangChain, LlamaIndex or Haystack retriever built over those chunks, or a
  function ``f(question, k)``), asked for as many chunks as the largest budget can hold (its tokens
  over the smallest chunk's, at least K, at most 1,000). A returned chunk is matched to the table by
  its id, else by its place (``doc_id``/``source`` with ``start_index``/``start_char_idx``... in its
  metadata), else by its text; one matched by none is an error naming it.

Scores are the ranks read backwards (n, n − 1, ...): the evaluation then keeps the retriever's order
whatever ties its own scores hold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._io.chunks import Chunks
from .._io.model import Run
from .._io.retrievers import collect
from .bm25 import BM25

__all__ = ["MAX_DEPTH", "bm25_run", "collected_run"]

#: the most chunks asked of a team's retriever per question
MAX_DEPTH = 1000


def _ranked(name: str, table: Chunks, ranked: Mapping[str, np.ndarray]) -> Run:
    ids = table.ids
    run = {q: {str(ids[r]): float(len(rows) - i) for i, r in enumerate(rows.tolist())} for q, rows in ranked.items()}
    return Run.coerce({q: d for q, d in run.items() if d}, name=name)


def bm25_run(
    name: str, table: Chunks, questions: Mapping[str, str], tokens: np.ndarray, budget: int, k: int
) -> tuple[Run, int]:
    """The BM25 run of ``table`` (see the module docstring) and how many questions found nothing."""
    index = BM25(table.chunk_texts())
    ranked = {}
    empty = 0
    for q, text in questions.items():
        rows, _ = index.search(text, len(table))
        past = np.flatnonzero(np.cumsum(tokens[rows]) > budget)
        depth = max(k, int(past[0]) + 1 if past.size else rows.size)
        ranked[q] = rows[:depth]
        empty += rows.size == 0
    return _ranked(name, table, ranked), empty


def depth_for(tokens: np.ndarray, budget: int, k: int) -> tuple[int, bool]:
    """How many chunks to ask a retriever for, and whether :data:`MAX_DEPTH` cut it."""
    small = int(tokens[tokens > 0].min()) if (tokens > 0).any() else 1
    want = max(k, math.ceil(budget / small) + 1)
    depth = min(want, tokens.size, MAX_DEPTH)
    return depth, want > MAX_DEPTH and tokens.size > MAX_DEPTH


_STARTS = ("start", "start_index", "start_char_idx", "split_idx_start")
_ENDS = ("end", "end_index", "end_char_idx")
_DOCS = ("doc_id", "document", "source", "source_id", "ref_doc_id", "corpus_id")


def collected_run(
    name: str, table: Chunks, questions: Mapping[str, str], make: Callable[[Chunks], Any], depth: int
) -> Run:
    """The run of the team's retriever built over ``table`` (see the module docstring)."""
    samples = collect(make(table), [{"query_id": q, "question": t} for q, t in questions.items()], k=depth, name=name)
    index = {str(c): i for i, c in enumerate(table.ids.tolist())}
    places = {
        (d, s, e): i for i, (d, s, e) in enumerate(zip(table.doc.tolist(), table.start.tolist(), table.end.tolist()))
    }
    texts: dict[str, int] = {}
    for i, t in enumerate(table.chunk_texts()):
        texts.setdefault(t, i)
    ranked, lost = {}, []
    for s in samples.samples:
        rows = []
        metas = s.retrieved_meta or [None] * len(s.retrieved_ids)
        chunk_texts = s.retrieved_texts or [None] * len(s.retrieved_ids)
        for cid, meta, text in zip(s.retrieved_ids, metas, chunk_texts):
            row = _match(cid, (meta or {}).get("metadata") or {}, text, index, places, texts)
            if row is None:
                lost.append(f"{s.query_id}: {cid}")
            else:
                rows.append(row)
        ranked[s.query_id] = np.array(list(dict.fromkeys(rows)), dtype=np.int64)
    if lost:
        shown = "; ".join(lost[:3]) + (" ..." if len(lost) > 3 else "")
        raise ConfigError(
            f"chunker {name}: {len(lost)} retrieved chunks match no chunk of its table by id, place or text ({shown}): "
            "keep the table's ids (Chunks.ids) on the chunks the retriever indexes"
        )
    return _ranked(name, table, ranked)


def _match(
    cid: str,
    meta: Mapping[str, Any],
    text: str | None,
    index: dict[str, int],
    places: dict[Any, int],
    texts: dict[str, int],
) -> int | None:
    if cid in index:
        return index[cid]
    start = next((meta[k] for k in _STARTS if isinstance(meta.get(k), int)), None)
    doc = next((str(meta[k]) for k in _DOCS if meta.get(k) is not None), None)
    end = next((meta[k] for k in _ENDS if isinstance(meta.get(k), int)), None)
    if end is None and start is not None and text is not None:
        end = start + len(text)
    if (doc, start, end) in places:
        return places[(doc, start, end)]
    return texts.get(text) if text is not None else None
