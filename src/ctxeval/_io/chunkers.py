"""Chunkers: a corpus cut into chunks that know where they lie, by the chunker a team already uses.

:func:`chunk_corpus` runs a chunker over every document (in the order of their ids) and gives a
:class:`~ctxeval.Chunks` table: chunk ``<doc_id>#<i>`` (i from 0 in the document) at ``[start, end)``
in characters of the document (the offsets of :mod:`ctxeval._io.spans`), with its text. The chunker
may be:

=====================================  =============================================================
chunker                                where each chunk's offsets come from
=====================================  =============================================================
LangChain text splitter                ``metadata["start_index"]`` of ``create_documents``
(``langchain-text-splitters``)         (``add_start_index=True``); end = start + len(page_content)
LlamaIndex node parser                 the nodes' ``start_char_idx`` / ``end_char_idx``
chonkie chunker                        the chunks' ``start_index`` / ``end_index``
semchunk chunker (``chunkerify``)      ``chunker(text, offsets=True)``
Haystack ``DocumentSplitter``          ``meta["split_idx_start"]``; end = start + len(content)
a function ``str -> list``             its items: ``(start, end)`` pairs, texts, mappings with
                                       ``start``/``end`` (or ``start_index``...) and ``text``, or
                                       any of the above frameworks' chunk objects
a chunk table (:class:`Chunks`, path)  its own ``start``/``end`` (texts without offsets located)
=====================================  =============================================================

**Checked, then located.** A chunk whose framework gives offsets is kept there when the document's
text at them is the chunk's text; a chunk without offsets (a LangChain splitter without
``add_start_index``, a LlamaIndex node whose offsets are None, a function returning texts), or whose
text differs from the document's at its offsets, is located by search
(:meth:`ctxeval.Chunks.locate`'s ``ordered`` rule: the next occurrence after the chunk before it,
then the first anywhere, then the best fuzzy alignment scoring at least 90). Every way is counted
in the table's notes, and a chunk found nowhere is named and left out.

**By name** (the command line's ``--chunker NAME=SPEC``; any string given as a chunker): ``tokens:N``
or ``tokens:N/O`` (windows of N ``words-v1`` tokens, each overlapping the one before by O, from its
first token's start to its last token's end: ctxeval's own fixed-size chunker, offline), ``chars:N[/O]``
(windows of N characters), ``langchain:Class(k=v, ...)`` (``langchain_text_splitters.Class``, with
``add_start_index=True``), ``llamaindex:Class(...)`` (``llama_index.core.node_parser.Class``; its
``tokenizer`` defaults to ``words-v1``'s tokens, offline, where the class takes one),
``chonkie:Class(...)`` (``chonkie.Class``), ``haystack:Class(...)``
(``haystack.components.preprocessors.Class``), ``semchunk:N`` (``semchunk.chunkerify`` with N tokens
counted by the tokenizer in force), ``python:module:function`` (a function importable by name), or
the path of a chunk table. Keyword values are Python literals.

>>> t = chunk_corpus("tokens:3/1", {"d": "one two three four five"})
>>> t.ids.tolist(), t.start.tolist(), t.end.tolist()
(['d#0', 'd#1'], [0, 8], [13, 23])
>>> chunk_corpus(lambda text: [(0, 3), (4, 7)], {"d": "one two"}).chunk_texts()
['one', 'two']
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from importlib import import_module
from typing import Any

from .._errors import ConfigError, DependencyError
from .chunks import Chunks
from .locate import find_text, read_documents
from .tokenizers import Tokenizer

__all__ = ["SPEC_KINDS", "chunk_corpus", "framework_of", "parse_spec"]

#: framework -> (the module roots its classes live under, the package to install, the extra)
_FRAMEWORKS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "langchain": (("langchain_text_splitters", "langchain_core", "langchain"), "langchain-text-splitters", "langchain"),
    "llamaindex": (("llama_index.core",), "llama-index-core", "llamaindex"),
    "chonkie": (("chonkie",), "chonkie", "chonkie"),
    "semchunk": (("semchunk",), "semchunk", "semchunk"),
    "haystack": (("haystack",), "haystack-ai", "haystack"),
}
#: spec prefix -> the module its classes are looked up in
_SPEC_MODULES = {
    "langchain": "langchain_text_splitters",
    "llamaindex": "llama_index.core.node_parser",
    "chonkie": "chonkie",
    "haystack": "haystack.components.preprocessors",
}
#: every kind of chunker a spec may name (see the module docstring)
SPEC_KINDS = ("tokens", "chars", *_SPEC_MODULES, "semchunk", "python")
#: the fuzzy alignment a chunk text must reach to be placed where it was not found exactly
LOCATE_THRESHOLD = 90.0
_WORDS = re.compile(r"\w+|[^\w\s]")

#: (start or None, end or None, text or None): a chunk as a chunker gave it
Piece = tuple[Any, Any, Any]


def framework_of(obj: Any) -> str | None:
    """The framework an object's classes come from (None: none of them)."""
    modules = [c.__module__ or "" for c in type(obj).__mro__]
    for fw, (roots, _, _) in _FRAMEWORKS.items():
        if any(m == r or m.startswith(r + ".") for m in modules for r in roots):
            return fw
    return None


def _require(fw: str, what: str) -> Any:
    roots, package, extra = _FRAMEWORKS[fw]
    module = _SPEC_MODULES.get(fw, roots[0])
    try:
        return import_module(module)
    except ImportError:
        raise DependencyError(what, package, extra) from None


# --- specs ----------------------------------------------------------------------------------------


def parse_spec(spec: str, tokenizer: Any = None) -> Any:
    """The chunker a spec names (see the module docstring); ``tokenizer``: what ``semchunk:N`` counts."""
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in SPEC_KINDS:
        if os.path.exists(spec):
            return Chunks.from_file(spec)
        raise ConfigError(
            f"chunker {spec!r}: not a file, and not one of {', '.join(k + ':...' for k in SPEC_KINDS)} "
            "(e.g. tokens:256/32, langchain:RecursiveCharacterTextSplitter(chunk_size=1000))"
        )
    if kind in ("tokens", "chars"):
        size, overlap = _window_numbers(spec, rest)
        return _Windows(kind, size, overlap)
    if kind == "semchunk":
        semchunk = _require("semchunk", f"chunker {spec}")
        tok = Tokenizer.coerce(tokenizer)
        return semchunk.chunkerify(tok.fn, _window_numbers(spec, rest)[0])
    if kind == "python":
        module, _, name = rest.rpartition(":")
        try:
            fn = getattr(import_module(module), name)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ConfigError(f"chunker {spec}: cannot import {name!r} from {module!r} ({exc})") from None
        return fn
    name, kwargs = _call(spec, rest)
    mod = _require(kind, f"chunker {spec}")
    cls = getattr(mod, name, None)
    if not isinstance(cls, type):
        raise ConfigError(f"chunker {spec}: {_SPEC_MODULES[kind]} has no class {name!r}")
    if kind == "langchain":
        kwargs.setdefault("add_start_index", True)
    if kind == "llamaindex" and "tokenizer" in getattr(cls, "model_fields", {}) and "tokenizer" not in kwargs:
        kwargs["tokenizer"] = _WORDS.findall  # offline: its default (tiktoken) downloads its encoding
    try:
        return cls(**kwargs)
    except Exception as exc:  # the framework's own check of its arguments
        raise ConfigError(f"chunker {spec}: {type(exc).__name__}: {str(exc).split(chr(10))[0][:200]}") from None


def _window_numbers(spec: str, rest: str) -> tuple[int, int]:
    size, _, overlap = rest.partition("/")
    try:
        n, o = int(size), int(overlap or 0)
    except ValueError:
        n, o = 0, -1
    if n < 1 or not 0 <= o < n:
        raise ConfigError(f"chunker {spec}: expected a size N >= 1 and an overlap 0 <= O < N (N or N/O)")
    return n, o


def _call(spec: str, text: str) -> tuple[str, dict[str, Any]]:
    """``Class(k=v, ...)`` (or ``Class``) with literal keyword values."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        node = None
    if isinstance(node, ast.Name):
        return node.id, {}
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        raise ConfigError(f"chunker {spec}: expected Class(keyword=value, ...) after the prefix")
    kwargs = {}
    for kw in node.keywords:
        try:
            kwargs[str(kw.arg)] = ast.literal_eval(kw.value)
        except ValueError:
            raise ConfigError(f"chunker {spec}: the value of {kw.arg} is not a Python literal") from None
    return node.func.id, kwargs


class _Windows:
    """Fixed windows of ``size`` words-v1 tokens or characters, each overlapping the one before by
    ``overlap``; a token window runs from its first token's start to its last token's end."""

    def __init__(self, unit: str, size: int, overlap: int) -> None:
        self.unit, self.size, self.overlap = unit, size, overlap

    def __repr__(self) -> str:
        return f"{self.unit}:{self.size}/{self.overlap}"

    def __call__(self, text: str) -> list[tuple[int, int]]:
        step = self.size - self.overlap
        if self.unit == "chars":
            return [
                (i, min(i + self.size, len(text))) for i in range(0, max(len(text) - self.overlap, 1), step) if text
            ]
        bounds = [m.span() for m in _WORDS.finditer(text)]
        out = []
        for i in range(0, len(bounds), step):
            out.append((bounds[i][0], bounds[min(i + self.size, len(bounds)) - 1][1]))
            if i + self.size >= len(bounds):
                break
        return out


# --- running a chunker ------------------------------------------------------------------------------


def chunk_corpus(chunker: Any, documents: Any, *, name: str | None = None, tokenizer: Any = None) -> Chunks:
    """The chunk table of ``chunker`` over ``documents`` (a mapping, a folder or a JSON-lines file);
    see the module docstring."""
    docs = read_documents(documents)
    if not docs:
        raise ConfigError("chunking needs documents: none given")
    label = name or (chunker if isinstance(chunker, str) else _label(chunker))
    if isinstance(chunker, str):
        chunker = parse_spec(chunker, tokenizer)
    if isinstance(chunker, (Chunks, os.PathLike)):
        return _table(Chunks.coerce(chunker), docs, label)
    cut = _cutter(chunker, label)
    records: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    lost: list[str] = []
    for doc_id in sorted(docs):
        body = docs[doc_id]
        with contextlib.redirect_stdout(sys.stderr):  # what a framework prints is no output of ctxeval's
            pieces = cut(doc_id, body)
        placed = _placed(pieces, body, counts)
        for i, hit in enumerate(placed):
            cid = f"{doc_id}#{i}"
            if hit is None:
                lost.append(cid)
                continue
            records.append({"chunk_id": cid, "doc_id": doc_id, "start": hit[0], "end": hit[1]})
    if not records:
        raise ConfigError(f"chunker {label}: no chunk from {len(docs)} documents")
    out = Chunks.from_records(records, documents=docs, source=label)
    return replace(
        out, notes=tuple(_notes(label, len(records) + len(lost), len(docs), counts, lost)), unplaced=tuple(lost)
    )


def _label(chunker: Any) -> str:
    if isinstance(chunker, _Windows):
        return repr(chunker)
    return getattr(chunker, "__name__", None) or type(chunker).__name__


def _table(table: Chunks, docs: Mapping[str, str], label: str) -> Chunks:
    """A given chunk table, checked against the documents (its own offsets)."""
    named = replace(table, source=label) if label and table.source.startswith("<") else table
    return named.with_documents(docs)


def _cutter(chunker: Any, label: str) -> Callable[[str, str], list[Piece]]:
    """``(doc_id, text) -> pieces`` for the chunker (see the module docstring)."""
    fw = framework_of(chunker)
    if fw == "langchain" and callable(getattr(chunker, "create_documents", None)):
        return lambda d, text: [_item("langchain", x) for x in chunker.create_documents([text])]
    if fw == "llamaindex" and callable(getattr(chunker, "get_nodes_from_documents", None)):
        from llama_index.core import Document

        return lambda d, text: [
            _item("llamaindex", n) for n in chunker.get_nodes_from_documents([Document(text=text, id_=d)])
        ]
    if fw == "haystack" and callable(getattr(chunker, "run", None)):
        from haystack import Document as HaystackDocument

        if callable(getattr(chunker, "warm_up", None)):
            chunker.warm_up()
        return lambda d, text: [
            _item("haystack", x) for x in chunker.run(documents=[HaystackDocument(content=text, id=d)])["documents"]
        ]
    if fw == "semchunk":
        return lambda d, text: [(s, e, t) for t, (s, e) in zip(*chunker(text, offsets=True))]
    if callable(chunker):
        return lambda d, text: [_item(framework_of(x), x) for x in _listed(chunker(text), label)]
    raise ConfigError(
        f"chunker {label}: expected a LangChain text splitter, a LlamaIndex node parser, a chonkie or semchunk "
        f"chunker, a Haystack DocumentSplitter, a function str -> list, a chunk table or a spec; got {type(chunker).__name__}"
    )


def _listed(items: Any, label: str) -> list[Any]:
    if isinstance(items, (str, bytes, Mapping)) or not hasattr(items, "__iter__"):
        raise ConfigError(f"chunker {label} returned a {type(items).__name__}, not a list of chunks")
    return list(items)


_STARTS = ("start", "start_index", "start_char_idx", "split_idx_start", "start_offset")
_ENDS = ("end", "end_index", "end_char_idx", "end_offset")


def _item(fw: str | None, x: Any) -> Piece:
    """One chunk as (start, end, text), any of them None where the chunker did not say."""
    if isinstance(x, str):
        return None, None, x
    if isinstance(x, (tuple, list)) and len(x) == 2 and all(isinstance(v, int) for v in x):
        return x[0], x[1], None
    if isinstance(x, Mapping):
        return _first(x, _STARTS), _first(x, _ENDS), x.get("text")
    if fw == "langchain":
        return x.metadata.get("start_index"), None, x.page_content
    if fw == "llamaindex":
        from llama_index.core.schema import MetadataMode

        return x.start_char_idx, x.end_char_idx, x.get_content(metadata_mode=MetadataMode.NONE)
    if fw == "haystack":
        return x.meta.get("split_idx_start"), None, x.content
    if fw == "chonkie":
        return x.start_index, x.end_index, x.text
    raise ConfigError(
        f"a chunk of type {type(x).__name__}: expected (start, end), a text, a mapping with start/end/text, or a "
        "LangChain / LlamaIndex / Haystack / chonkie chunk"
    )


def _first(m: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((m[k] for k in keys if m.get(k) is not None), None)


def _placed(pieces: list[Piece], body: str, counts: dict[str, int]) -> list[tuple[int, int] | None]:
    """Each piece's [start, end) in ``body`` (see the module docstring), counting how each was placed."""
    out: list[tuple[int, int] | None] = []
    lo, past = 0, 0  # the start + 1 and the end of the chunk placed last
    for start, end, text in pieces:
        if start is not None and end is None and text is not None:
            end = start + len(text)
        given = isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= len(body)
        if given and (text is None or body[start:end] == text):
            how = "offsets"
        elif text is None:
            raise ConfigError(f"a chunk at ({start}, {end}) lies outside its document ({len(body)} characters)")
        else:
            found = find_text(text, {"": body}, None, LOCATE_THRESHOLD, lo, past)
            if found is None:
                counts["not found"] = counts.get("not found", 0) + 1
                out.append(None)
                continue
            start, end = found.start, found.end
            how = ("search, the chunker's offsets wrong" if given else "search") + f" ({found.how})"
        counts[how] = counts.get(how, 0) + 1
        lo, past = start + 1, end
        out.append((start, end))
    return out


def _notes(label: str, n: int, n_docs: int, counts: dict[str, int], lost: list[str]) -> list[str]:
    ways = ", ".join(f"{c} by {k}" for k, c in sorted(counts.items()) if k != "not found")
    out = [f"chunker {label}: {n} chunks of {n_docs} documents, placed {ways}"]
    if lost:
        shown = ", ".join(lost[:5]) + (" ..." if len(lost) > 5 else "")
        out.append(f"chunker {label}: {len(lost)} chunk texts not found in their documents, left out ({shown})")
    return out
