"""The offline judge's word overlap: content words (lower-cased, stop words left out), the share of one
text's words found in another, and sentences. Each task's offline rule (in :mod:`.tasks`) is built on
these; the :class:`~ctxeval._judge.client.LexicalJudge` answers with that rule instead of a model."""

from __future__ import annotations

import re

__all__ = ["overlap", "sentences"]

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def terms(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP}


def overlap(needle: str, haystack: str) -> float:
    """Share of ``needle``'s content words (lower-cased, stop words left out) found in ``haystack``;
    0 when it has none.

    >>> overlap("Where does arabica coffee grow?", "Arabica grows on high slopes; coffee likes shade.")
    0.666...
    """
    want = terms(needle)
    return len(want & terms(haystack)) / len(want) if want else 0.0


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` that hold at least one content word.

    >>> sentences("Coffee grows high. It is. Frost kills it!")
    ['Coffee grows high.', 'Frost kills it!']
    """
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if terms(s)]
