"""A corpus with facts at known spans, for the chunking guide (``ctxeval demo --chunking DIR`` writes it)
and the chunking verb's scenario test. Nothing here calls the rest of ctxeval: the truth comes from how
the text is made.

40 documents, each ``DOC_TOKENS`` = 2,400 ``words-v1`` tokens of filler sentences (12 filler words and a
period: 13 tokens) with one fact: a sentence of ``FACT_TOKENS`` = 24 tokens naming two made-up topic
words that occur nowhere else (the first at its 2nd token, the second at its 20th). Document i's
question asks about its two words; its span label is the fact's characters. The fact starts at a token
offset ``at`` that is a multiple of 64 and lies 24 or 32 tokens past a multiple of 40, so that:

* ``tokens:64`` (windows of 64 tokens, chunker **B**) holds every fact whole in one chunk;
* ``tokens:40`` (chunker **A**) cuts every fact in two (at its 16th or 8th token), a topic word on
  each side;
* ``tokens:2000`` (chunker **C**) buries every fact in a chunk of 2,000 tokens.

With BM25 (the question's topic words are in the fact alone), at a budget of 64 tokens: B's first
chunk is the fact (SpanRecall 1), A's first chunk one half of it (SpanRecall < 1), C's first chunk
does not fit (an empty context, SpanRecall 0): B wins on all 40 questions. At K = 5 chunks every
chunker's context holds the whole fact (SpanRecall 1 for all), but C's five chunks hold about 6,000
tokens, B's 320: equal K compares unlike contexts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

__all__ = ["DOC_TOKENS", "FACT_TOKENS", "QUESTIONS", "chunking_corpus", "write_chunking_corpus"]

QUESTIONS = 40
DOC_TOKENS = 2400
FACT_TOKENS = 24
_SENTENCE = 13  # 12 filler words and a period
_FILLER = [
    "river",
    "stone",
    "market",
    "winter",
    "garden",
    "copper",
    "lantern",
    "harbor",
    "meadow",
    "violin",
    "orchard",
    "pebble",
    "candle",
    "forest",
    "window",
    "saddle",
    "marble",
    "thunder",
    "velvet",
    "anchor",
    "basket",
    "cellar",
    "dollar",
    "engine",
    "fabric",
    "gravel",
    "hollow",
    "island",
    "jacket",
    "kettle",
    "ladder",
    "mirror",
    "needle",
    "oyster",
    "parcel",
    "quarry",
    "ribbon",
    "shovel",
    "tunnel",
    "valley",
    "wagon",
    "yellow",
    "zipper",
    "barrel",
    "carpet",
    "desert",
    "feather",
    "ginger",
    "hammer",
    "insect",
    "jungle",
    "kitten",
    "lemon",
    "magnet",
    "napkin",
    "olive",
    "pepper",
    "quiver",
    "rocket",
    "silver",
]
_SYLLABLES = ["ka", "ro", "ve", "li", "mu", "sa", "no", "te", "pi", "ga", "zu", "fe", "do", "bi", "ru", "xo"]


def _word(rng: random.Random, used: set[str]) -> str:
    while True:
        w = "".join(rng.choice(_SYLLABLES) for _ in range(4))
        if w not in used:
            used.add(w)
            return w


def _filler(rng: random.Random, tokens: int) -> list[str]:
    """Whole filler sentences, ``tokens`` (a multiple of 13 or not) cut to whole sentences and words."""
    words: list[str] = []
    while len(words) < tokens:
        words += [rng.choice(_FILLER) for _ in range(_SENTENCE - 1)] + ["."]
    return words[:tokens]


def _text(words: list[str]) -> str:
    return " ".join(words).replace(" .", ".")


def chunking_corpus(seed: int = 0) -> tuple[dict[str, str], list[dict[str, object]], list[dict[str, object]]]:
    """(documents, questions, span labels) of the corpus (see the module docstring)."""
    rng = random.Random(seed)
    used: set[str] = set(_FILLER)
    # multiples of 64 that lie 24 or 32 tokens past a multiple of 40, not straddling token 2,000
    starts = [s for s in range(64, DOC_TOKENS - FACT_TOKENS, 64) if s % 40 in (24, 32) and not s < 2000 < s + 24]
    docs: dict[str, str] = {}
    questions: list[dict[str, object]] = []
    spans: list[dict[str, object]] = []
    for i in range(QUESTIONS):
        at = rng.choice(starts)
        w1, w2 = _word(rng, used), _word(rng, used)
        fact = ["The", w1, "ledger", "records", "that", "the", "old", "mill", "by", "the", "water", "was"]
        fact += ["sold", "twice", "before", "the", "winter", "fair", "and", w2, "bridge", "kept", "it", "."]
        before = _filler(rng, at)
        after = _filler(rng, DOC_TOKENS - at - FACT_TOKENS)
        head = _text(before)
        body = _text(fact)
        text = head + " " + body + " " + _text(after)
        doc = f"doc{i:02d}"
        docs[doc] = text + "\n"
        start = len(head) + 1
        spans.append({"query_id": f"q{i:02d}", "doc_id": doc, "start": start, "end": start + len(body), "grade": 1})
        questions.append({"query_id": f"q{i:02d}", "question": f"What does the {w1} ledger say about the {w2} bridge?"})
    return docs, questions, spans


def write_chunking_corpus(folder: Path, seed: int = 0) -> list[Path]:
    """Write ``docs/<doc_id>.txt``, ``questions.jsonl`` and ``spans.jsonl`` into ``folder``."""
    docs, questions, spans = chunking_corpus(seed)
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    for doc, text in docs.items():
        (folder / "docs" / f"{doc}.txt").write_text(text, encoding="utf-8", newline="")
    out = [folder / "docs"]
    for name, rows in (("questions.jsonl", questions), ("spans.jsonl", spans)):
        path = folder / name
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        out.append(path)
    return out
