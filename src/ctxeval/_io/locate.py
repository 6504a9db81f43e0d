"""Documents, and texts located in them: reference texts (quotes, RAGAS ``reference_contexts``) and
chunk texts whose offsets nobody gave.

**Documents** (:func:`read_documents`): ``{doc_id: text}`` from a mapping, a folder (every file, its id
the file name without its extension, read as UTF-8 exactly: no newline translation, no stripping), or
a JSON-lines file of ``{"doc_id" (or id, _id, corpus_id), "text" (or contents)}``; texts are kept as
they are, since every offset counts their characters.

**Locating a text** (:func:`find_text`): exactly first (its first occurrence, in the order the
candidate documents are given), then, if ``threshold`` is not None, the best fuzzy alignment: the
window of a document most similar to the text by rapidfuzz's ``fuzz.partial_ratio_alignment``
(normalised InDel similarity, 0-100), kept when its score is at least ``threshold``. What was found
fuzzily or in several places is counted, and what was not found is named, by the callers.

**Chroma's placement** (:func:`chroma_find`): what chunking_evaluation's ``rigorous_document_search``
does to place a chunk, read from its behaviour (see ``docs/reference/formats.md``): one trailing
``.`` removed; the first occurrence; else a case-insensitive match of the chunk's words joined by
``\\s*``; else the best of the document's sentences (split at ``[.!?]\\s*|\\n``) by token-sort ratio,
at least 98 (rapidfuzz's ``token_sort_ratio`` with its default processor standing in for
fuzzywuzzy's, which Chroma calls), placed at that sentence's first occurrence.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError, FormatError, InputError
from .records import columns_of, decode_text, records, text_id

__all__ = ["Found", "chroma_find", "find_text", "read_documents"]

_ID_KEYS = ("doc_id", "id", "_id", "docid", "corpus_id", "document_id")
_TEXT_KEYS = ("text", "contents", "content", "body")


def read_documents(source: Any) -> dict[str, str]:
    """Documents by id (see the module docstring).

    >>> read_documents({"d1": "Some text.\\n"})
    {'d1': 'Some text.\\n'}
    """
    if source is None:
        return {}
    if isinstance(source, Mapping):
        out = {}
        for k, v in source.items():
            if not isinstance(v, str):
                raise ConfigError(f"documents: the text of {k!r} is a {type(v).__name__}, not a str")
            out[str(k)] = v
        return out
    if not isinstance(source, (str, os.PathLike)):
        raise ConfigError(
            f"documents must be a mapping of id to text, a folder or a JSON-lines file, got {type(source).__name__}"
        )
    p = Path(source)
    if not p.exists():
        raise InputError(f"{source}: no such file or folder (documents)")
    if p.is_dir():
        return _folder(p)
    return _jsonl(p)


def _folder(p: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for f in sorted(p.iterdir()):
        if not f.is_file() or f.name.startswith("."):
            continue
        doc_id = f.stem
        if doc_id in out:
            raise InputError(f"{p}: two files give the document {doc_id!r} ({f.name} and another)")
        out[doc_id] = decode_text(f.read_bytes(), str(f))
    if not out:
        raise InputError(f"{p}: the folder holds no documents")
    return out


def _jsonl(p: Path) -> dict[str, str]:
    found, names, source = records(p, "jsonl")
    cols = columns_of(names, {"id": _ID_KEYS, "text": _TEXT_KEYS}, ("id", "text"), source)
    out: dict[str, str] = {}
    for line, rec in found:
        doc_id = text_id(rec.get(cols["id"]), "document id", source, line)
        body = rec.get(cols["text"])
        if not isinstance(body, str):
            raise FormatError(source, line, f"document {doc_id}: the text is not a string")
        if doc_id in out:
            raise FormatError(source, line, f"document {doc_id} given twice")
        out[doc_id] = body
    return out


@dataclass(frozen=True)
class Found:
    """Where a text was found: the document, [start, end), how (``exact``, ``fuzzy`` or a Chroma
    step), the fuzzy score (100 for exact), and how many exact occurrences there were."""

    doc: str
    start: int
    end: int
    how: str
    score: float = 100.0
    occurrences: int = 1


def find_text(
    text: str,
    documents: Mapping[str, str],
    candidates: Iterable[str] | None = None,
    threshold: float | None = 90.0,
    after: int = 0,
    past: int = 0,
) -> Found | None:
    """Where ``text`` lies (see the module docstring); ``candidates``: the documents to search, in
    order (default: all); ``after`` and ``past``: the exact search first takes the first occurrence
    starting at or after ``after`` and ending after ``past`` (a chunker's next chunk), then the first
    occurrence anywhere.

    >>> find_text("b c", {"d": "a b c b c"})
    Found(doc='d', start=2, end=5, how='exact', score=100.0, occurrences=2)
    >>> find_text("a b x", {"d": "zz a b c zz"}, threshold=60).how
    'fuzzy'
    """
    names = list(documents) if candidates is None else list(candidates)
    if not text:
        return None
    for name in names:
        body = documents.get(name)
        if body is None:
            continue
        at = body.find(text, after) if after or past else -1
        while at >= 0 and at + len(text) <= past:
            at = body.find(text, at + 1)
        if at < 0:
            at = body.find(text)
        if at >= 0:
            return Found(name, at, at + len(text), "exact", 100.0, body.count(text))
    if threshold is None:
        return None
    from rapidfuzz import fuzz

    best: Found | None = None
    for name in names:
        body = documents.get(name)
        if body is None or len(text) > len(body):
            continue
        hit = fuzz.partial_ratio_alignment(text, body, score_cutoff=threshold)
        if hit is not None and (best is None or hit.score > best.score):
            best = Found(name, hit.dest_start, hit.dest_end, "fuzzy", float(hit.score), 0)
    return best


_SENTENCE_SPLIT = re.compile(r"[.!?]\s*|\n")


def chroma_find(text: str, document: str) -> tuple[int, int, str] | None:
    """Chroma's placement of a chunk (see the module docstring): ``(start, end, step)`` with step
    ``exact``, ``trimmed`` (exact after removing a trailing period), ``regex`` or ``sentence``; None
    where Chroma raises.

    >>> doc = "One. Two. One. Two."
    >>> chroma_find("Two.", doc), chroma_find("One. Two", doc), chroma_find("one.  TWO", doc)
    ((5, 8, 'trimmed'), (0, 8, 'exact'), (0, 8, 'regex'))
    """
    cut = text.endswith(".")
    trimmed = text[:-1] if cut else text
    at = document.find(trimmed)
    if at >= 0:
        return at, at + len(trimmed), "trimmed" if cut else "exact"
    words = trimmed.split()
    if words:
        m = re.search(r"\s*".join(re.escape(w) for w in words), document, re.IGNORECASE)
        if m is not None:
            return m.start(), m.end(), "regex"
    from rapidfuzz import fuzz, utils

    best, best_score = None, -1.0
    for sentence in _SENTENCE_SPLIT.split(document):
        score = fuzz.token_sort_ratio(trimmed, sentence, processor=utils.default_process)
        if score > best_score:
            best, best_score = sentence, score
    if best is None or best_score < 98:
        return None
    at = document.find(best)
    return at, at + len(best), "sentence"
