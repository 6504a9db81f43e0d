"""Judge once, re-chunk freely: judgments kept as span labels, and a new chunking's chunks judged only
where no judgment covers their text.

A judged chunk becomes a span label: ``(query, document, start, end, grade)``, grade 0 included (text
judged to hold nothing is judged text too; :meth:`ctxeval.SpanLabels.from_qrels`). For a new
chunking's judgment pool (each query's chunks in order of their best rank), with the earlier span
labels ``J`` of the query:

* a chunk whose every character lies in ``J`` is **not asked**: it is judged by the labels;
* a chunk with text outside ``J`` (**straddling**, or **new** when none of it is in ``J``) is asked
  about that text only: its uncovered stretches (the parts of it outside ``J`` and outside what an
  earlier chunk of the pool was asked about), joined by `` … `` when there are several, sent as the
  passage; the grade the judge gives becomes a span label of each of those stretches. A stretch without
  a word character (white space, punctuation) holds no evidence and is never asked; it gets no label.
* then every chunk of the pool is graded by the one rule span labels give chunks
  (:meth:`ctxeval.SpanLabels.chunk_grades`): **the highest grade of the labels it shares a character
  with**, old and new. So a straddling chunk is at least as relevant as the judged text it holds
  (a chunk inside a relevant judged chunk inherits its grade: an upper bound, as fine as the chunks
  first judged), and text judged irrelevant never lowers what its new text earned.

So no text is asked about twice, whatever the chunkings; the calls saved are the pool's chunks minus
the asks. Labels on one scale only: the earlier labels' kind is checked against the task's scale.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import ConfigError, InputError
from .._io.chunks import Chunks
from .._io.spans import SpanLabels
from .items import Item

__all__ = ["Reuse", "plan_reuse", "scale_check"]

_WORD = re.compile(r"\w")
#: what joins the uncovered stretches of one chunk in the passage the judge reads
GAP = " … "


@dataclass
class Reuse:
    """A pool judged against earlier span labels (see the module docstring)."""

    pairs: list[tuple[str, str]]  #: the pool: (query, chunk id), in order
    asks: list[Item]  #: one per chunk with uncovered text: its question and uncovered text
    stretches: list[list[tuple[str, int, int]]]  #: each ask's (document, start, end) stretches
    covered: int = 0  #: chunks wholly inside earlier labels, or text a chunk before them was asked about
    straddling: int = 0  #: chunks partly inside earlier labels (asked about the rest)
    new: int = 0  #: chunks outside every earlier label and every earlier ask
    wordless: int = 0  #: chunks whose uncovered text has no word (not asked, no label of their own)
    earlier: SpanLabels | None = field(default=None, repr=False)

    def counts(self) -> dict[str, int]:
        """The counts the report gives: the pool, how each chunk was treated, the calls saved."""
        return {
            "pool": len(self.pairs),
            "judged_before": self.covered,
            "straddling": self.straddling,
            "new": self.new,
            "wordless": self.wordless,
            "asked": len(self.asks),
            "saved": len(self.pairs) - len(self.asks),
        }

    def line(self) -> str:
        c = self.counts()
        return (
            f"span labels reused: {c['pool']} (query, chunk) pairs; {c['judged_before']} wholly judged before (not "
            f"asked), {c['straddling']} straddling judged and unjudged text and {c['new']} new (asked about their "
            f"unjudged text only), {c['wordless']} with no unjudged word; {c['asked']} asked, {c['saved']} calls saved"
        )

    def labels(self, got: Sequence[tuple[Item, Any]], table: Chunks) -> tuple[SpanLabels, list[tuple[str, str, int]]]:
        """The span labels after the judgments (the earlier ones and a label per stretch of every decided
        ask) and every pool pair's grade by them, ``(query, chunk id, grade)`` in pool order (pairs no
        label touches, their asks undecided, are left out)."""
        rows = list(self.earlier.rows()) if self.earlier is not None else []
        for (item, outcome), parts in zip(got, self.stretches):
            if outcome.decided:
                rows.extend((item.query_id, d, s, e, int(outcome.value)) for d, s, e in parts)
        if not rows:
            raise InputError("no judgment was decided: no span label to write")
        kind = self.earlier.labels if self.earlier is not None else None
        merged = SpanLabels.build(rows, source="judged spans", labels=kind, graded=True)
        grades = merged.chunk_grades(table)
        cols = grades.columns
        qs = cols.query_of_rows().tolist()
        by = {(q, d): int(g) for q, d, g in zip(qs, cols.doc.to_list(), cols.values.tolist())}
        return merged, [(q, c, by[(q, c)]) for q, c in self.pairs if (q, c) in by]


def _minus(lo: int, hi: int, cover: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """[lo, hi) minus the union of ``cover`` (sorted by start): the maximal stretches left."""
    out, at = [], lo
    for s, e in cover:
        if e <= at or s >= hi:
            continue
        if s > at:
            out.append((at, min(s, hi)))
        at = max(at, e)
        if at >= hi:
            break
    if at < hi:
        out.append((at, hi))
    return out


def plan_reuse(
    pairs: Sequence[tuple[str, str]], questions: dict[str, str], table: Chunks, earlier: SpanLabels | None
) -> Reuse:
    """What the judge is asked for the pool ``pairs`` given the ``earlier`` span labels (see the module
    docstring); ``table`` places the chunks and gives their text (its documents)."""
    if table.documents is None:
        raise ConfigError("judging against span labels reads the documents' texts: give the documents (--documents)")
    docs = table.documents
    where = table.lookup([c for _, c in pairs])
    missing = [c for (_, c), w in zip(pairs, where.tolist()) if w < 0]
    if missing:
        raise InputError(
            f"{len(missing)} pooled chunks are not in the chunk table {table.source} ({', '.join(missing[:5])})"
        )
    if earlier is not None:
        earlier.check(docs)
    known: dict[tuple[str, str], list[tuple[int, int]]] = {}
    if earlier is not None:
        for q, d, s, e, _ in earlier.rows():
            known.setdefault((q, d), []).append((s, e))
    plan = Reuse(list(pairs), [], [], earlier=earlier)
    for (q, cid), w in zip(pairs, where.tolist()):
        d, s, e = str(table.doc[w]), int(table.start[w]), int(table.end[w])
        judged = sorted(known.get((q, d), []))
        left = _minus(s, e, judged)
        words = [(a, b) for a, b in left if _WORD.search(docs[d][a:b])]
        if not left:
            plan.covered += 1
            continue
        if not words:
            plan.wordless += 1
            continue
        before = sum(b - a for a, b in left) < e - s
        plan.straddling += before
        plan.new += not before
        if q not in questions:
            raise InputError(f"no text for query {q!r} (judging needs every pooled query's text)")
        plan.asks.append(Item(q, questions[q], cid, GAP.join(docs[d][a:b] for a, b in words)))
        plan.stretches.append([(d, a, b) for a, b in words])
        known.setdefault((q, d), []).extend(left)  # asked now: no later chunk asks about it again
    return plan


def scale_check(earlier: SpanLabels, scale: str) -> None:
    """The earlier labels are on the task's scale (judged labels name theirs; people's are taken as given)."""
    kind = earlier.labels
    if kind.scale not in (None, scale, "binary", "graded") and kind.kind == "judged":
        raise ConfigError(f"the span labels {earlier.source} are on the {kind.scale} scale, the task's is {scale}")
