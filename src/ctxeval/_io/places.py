"""Where a retrieved chunk lies in its document: ``(document, start, end)`` in characters, read from
the framework's own metadata by :func:`ctxeval.collect`, or located by search.

=====================  ===========================================  =========================================
framework              start (end)                                  document
=====================  ===========================================  =========================================
LangChain              ``metadata["start_index"]`` (a splitter's    ``metadata["doc_id"]``, else ``"source"``
                       ``add_start_index=True``); end = start +
                       len(page_content)
LlamaIndex             the node's ``start_char_idx`` /              the node's ``ref_doc_id``
                       ``end_char_idx``
Haystack               ``meta["split_idx_start"]`` (its             ``meta["source_id"]``
                       ``DocumentSplitter``); end = start + len
a mapping              ``start`` / ``end`` (or ``start_index``...)  ``document`` (or ``doc_id``)
=====================  ===========================================  =========================================

Given the documents (``collect(..., documents=...)``), a place is checked (the document's text at it is
the chunk's text), and a chunk without one, or with one that does not hold its text, is located by
search (the document named, else every document: exactly, then the best fuzzy alignment scoring at
least 90); the set's notes count each way and name what was found nowhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .._errors import ConfigError, EmptyInputError
from .chunks import Chunks
from .locate import find_text

__all__ = ["Placer", "chunks_of_samples", "framework_place"]

_STARTS = ("start", "start_index", "start_char_idx", "split_idx_start")
_ENDS = ("end", "end_index", "end_char_idx")
_DOCS = ("document", "doc_id", "source_id", "ref_doc_id", "corpus_id", "source")
#: how well a chunk text must align to be placed where it was not found exactly
THRESHOLD = 90.0


def _first(m: Mapping[str, Any], keys: tuple[str, ...], kind: type) -> Any:
    return next((m[k] for k in keys if isinstance(m.get(k), kind) and not isinstance(m.get(k), bool)), None)


def framework_place(fw: str | None, item: Any, meta: Mapping[str, Any], text: Any) -> tuple[Any, Any, Any]:
    """``(document, start, end)`` as the framework gives them (any of them None where it does not)."""
    if fw == "llamaindex":
        node = item.node if hasattr(item, "node") else item
        return node.ref_doc_id, node.start_char_idx, node.end_char_idx
    if fw == "haystack":
        return meta.get("source_id"), meta.get("split_idx_start"), None
    doc = _first(meta, _DOCS, str)
    start, end = _first(meta, _STARTS, int), _first(meta, _ENDS, int)
    return doc, start, end


class Placer:
    """Places the chunks of one ``collect`` (see the module docstring) and counts how."""

    def __init__(self, documents: Mapping[str, str] | None, source: str) -> None:
        self.docs = documents
        self.source = source
        self.counts: dict[str, int] = {}
        self.lost: list[str] = []

    def place(self, given: tuple[Any, Any, Any], text: Any, cid: Any) -> tuple[str, int, int] | None:
        doc, start, end = given
        if isinstance(start, int) and end is None and isinstance(text, str):
            end = start + len(text)
        ok = isinstance(doc, str) and isinstance(start, int) and isinstance(end, int) and 0 <= start <= end
        if self.docs is None:
            self._count("the framework's offsets (not checked: no documents given)" if ok else "none")
            return (doc, start, end) if ok else None
        body = self.docs.get(doc) if isinstance(doc, str) else None
        if ok and body is not None and end <= len(body) and (not isinstance(text, str) or body[start:end] == text):
            self._count("the framework's offsets")
            return doc, start, end
        if not isinstance(text, str) or not text:
            self.lost.append(str(cid))
            return None
        found = find_text(text, self.docs, [doc] if body is not None else None, THRESHOLD)
        if found is None:
            self.lost.append(str(cid))
            return None
        self._count(f"search ({found.how})" + (", the framework's offsets wrong" if ok else ""))
        return found.doc, found.start, found.end

    def _count(self, how: str) -> None:
        self.counts[how] = self.counts.get(how, 0) + 1

    def notes(self) -> list[str]:
        if not self.lost and set(self.counts) <= {"none"}:
            return []  # nothing has a place and nothing was looked for: nothing to say
        n = sum(self.counts.values()) + len(self.lost)
        ways = ", ".join(f"{c} by {k}" for k, c in sorted(self.counts.items()) if k != "none")
        out = [f"{self.source}: {n} retrieved chunks placed in their documents: {ways or 'none'}"]
        if self.counts.get("none"):
            out[0] += f"; {self.counts['none']} without a place (give documents=... to locate them by search)"
        if self.lost:
            shown = ", ".join(self.lost[:5]) + (" ..." if len(self.lost) > 5 else "")
            out.append(
                f"{self.source}: {len(self.lost)} retrieved chunks found in no document, left unplaced ({shown})"
            )
        return out


def chunks_of_samples(samples: Any, documents: Any = None) -> Chunks:
    """The chunk table a sample set's retrieved chunks make: every chunk's ``document``, ``start`` and
    ``end`` (written by :func:`ctxeval.collect`), with the documents' texts when given. A chunk placed
    twice differently is an error naming it; chunks without a place are left out (noted)."""
    places: dict[str, tuple[str, int, int]] = {}
    missing = 0
    for s in samples.samples:
        if s.retrieved_documents is None or s.retrieved_starts is None or s.retrieved_ends is None:
            missing += len(s.retrieved_ids)
            continue
        for cid, *where in zip(s.retrieved_ids, s.retrieved_documents, s.retrieved_starts, s.retrieved_ends):
            place = (str(where[0]), int(where[1]), int(where[2]))
            if places.setdefault(cid, place) != place:
                raise ConfigError(f"{samples.source}: chunk {cid!r} lies at {places[cid]} and at {place}")
    if not places:
        raise EmptyInputError(f"{samples.source}: no retrieved chunk has a place (document, start, end)")
    ids = sorted(places)
    table = Chunks(
        np.array(ids, dtype=str),
        np.array([places[c][0] for c in ids], dtype=str),
        np.array([places[c][1] for c in ids], dtype=np.int64),
        np.array([places[c][2] for c in ids], dtype=np.int64),
        source=f"the places of {samples.source}",
        notes=(f"{samples.source}: {missing} retrieved chunks have no place, left out of the chunk table",)
        if missing
        else (),
    )
    return table.with_documents(documents) if documents is not None else table
