"""A sample set's notes: what reading it met (:class:`.reader.Tally`) and what its labels say, each
said once, with the count and what it means for the figures."""

from __future__ import annotations

from collections.abc import Sequence

from .fields import Sample
from .reader import Tally
from .shapes import OPEN

__all__ = ["BY_POSITION", "notes_of"]

#: the note of a set named by position (replaced by the pairing's when it is read beside others)
BY_POSITION = "no sample has a query_id: the samples are named line-1 .. line-{n} by position"


def _unjudged(samples: Sequence[Sample]) -> tuple[int, dict[str, int]] | None:
    """The samples whose judge labels list chunks without a judgment, and those lists' sizes by why
    (undecided, tied, not sent), over claims, nuggets and the judged field."""
    counts = dict.fromkeys(OPEN, 0)
    n = 0
    for s in samples:
        lists = [*(c[2:] for c in s.claims or ()), *(g[4:] for g in s.nuggets or ())]
        if s.judged is not None:
            lists.append(s.judged[1:])
        got = False
        for opens in lists:
            for k, ids in zip(OPEN, opens):
                counts[k] += len(ids)
                got = got or bool(ids)
        n += got
    return (n, counts) if n else None


def notes_of(source: str, t: Tally, generated: int, samples: Sequence[Sample]) -> list[str]:
    notes = []
    if generated:
        notes.append(f"{source}: {BY_POSITION.format(n=generated)}")
    if t.reordered:
        notes.append(
            f"{source}: {t.reordered} samples list scores that would rank their chunks in another order than "
            "the list's (compared as float32, ties by id, as the ranking does): ranked by list order "
            "(scores n .. 1), their scores are not used"
        )
    if t.unscored:
        notes.append(
            f"{source}: {t.unscored} samples give no scores: scored n .. 1 by list order, so relative-score "
            "rules (hard negatives, calibrate's tau) read ranks there"
        )
    heuristic = sorted(
        {f"{x.get('task')} by {x.get('judge')}" for s in samples for x in s.labelled_by if x.get("heuristic")}
    )
    if heuristic:
        n = sum(any(x.get("heuristic") for x in s.labelled_by) for s in samples)
        notes.append(
            f"{source}: {n} samples carry labels from a heuristic, not a model ({'; '.join(heuristic)}): "
            "measures reading them are a first look, not a verdict"
        )
    open_ = _unjudged(samples)
    if open_:
        n, counts = open_
        why = ", ".join(f"{c} {k.replace('_', ' ')}" for k, c in counts.items() if c)
        notes.append(
            f"{source}: {n} samples list chunks a judge left without a judgment ({why}): a measure reading those "
            "labels is NA where one is in its top k (never guessed); --retry-undecided (or a larger --max-cost) "
            "asks them again"
        )
    if t.text_named:
        notes.append(
            f"{source}: {t.text_named} samples give chunk texts without ids: each chunk is named by a hash of "
            "its text (t + 16 hex digits), so the same text is the same chunk across runs"
        )
    if t.text_refs:
        notes.append(
            f"{source}: {t.text_refs} samples give reference_contexts but no reference_ids or grades: a retrieved "
            "chunk is relevant (grade 1) when its text equals a reference context exactly; "
            "ContextPrecision/ContextRecall(method=similarity) match by string similarity instead"
        )
    if t.excerpts > t.exact_refs:  # references cut from chunks: containment credits them (module docstring)
        notes.append(
            f"{source}: {t.excerpts} reference contexts equal no retrieved text but are contained in one (an "
            "excerpt of a chunk): exact text matching, in force without reference ids or grades, reads them as "
            "not retrieved; ContextRecall/ContextPrecision(method=containment) match a chunk that holds the "
            "reference's text (method=similarity compares whole texts: an excerpt is far from its chunk)"
        )
    if t.empty_retrieved:
        notes.append(
            f"{source}: {t.empty_retrieved} samples retrieved nothing: each is a query the run lacks, scored 0 "
            "by every measure and method under missing='zero' (the default), never left out of a mean"
        )
    if t.empty_refs:
        notes.append(
            f"{source}: {t.empty_refs} samples give an empty reference list (no reference id, grade or non-empty "
            "reference context): nothing is relevant there, so they are left out of every measure, as unjudged "
            "queries are"
        )
    if t.empty_texts:
        notes.append(
            f"{source}: {t.empty_texts} chunk texts or reference contexts are empty: an empty text matches nothing, "
            "exactly or by similarity (an empty reference context is no reference)"
        )
    if t.surrogates:
        notes.append(
            f"{source}: {t.surrogates} texts hold a lone surrogate (half of a UTF-16 pair, e.g. a JSON \\ud800 "
            "escape): each replaced by U+FFFD"
        )
    if t.duplicate_keys:
        notes.append(
            f"{source}: {t.duplicate_keys} keys given twice in one object: the first kept (duplicates='first')"
        )
    if t.duplicate_chunks:
        notes.append(
            f"{source}: {t.duplicate_chunks} chunks given twice in one retrieved list: the first kept "
            "(duplicates='first')"
        )
    if t.unknown:
        shown = ", ".join(f"{k} ({n})" for k, n in sorted(t.unknown.items())[:8])
        more = f" and {len(t.unknown) - 8} more" if len(t.unknown) > 8 else ""
        notes.append(f"{source}: fields no measure reads, kept as they are (samples giving each): {shown}{more}")
    return notes
