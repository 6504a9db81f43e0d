"""Retrievers in: a LangChain, LlamaIndex or Haystack retriever run over questions, what it returned
kept as a sample set (:func:`collect`).

The framework is recognised from the retriever's classes and imported only then (the extras
``ctxeval[langchain]``, ``ctxeval[llamaindex]``, ``ctxeval[haystack]`` pin the versions this module
is tested with). What each returns becomes the sample's ``retrieved`` list, in the retriever's order:

========================  ======================  ==========================  ====================  ==========
retriever                 id                      text                        score                 metadata
========================  ======================  ==========================  ====================  ==========
LangChain ``Document``    ``Document.id``         ``page_content``            none (list order)     ``metadata``
LangChain vector store    ``Document.id``         ``page_content``            its similarity score  ``metadata``
LlamaIndex node           ``node_id``             the node's text             ``NodeWithScore.score``  ``metadata``
Haystack ``Document``     ``Document.id``         ``content``                 ``Document.score``    ``meta``
========================  ======================  ==========================  ====================  ==========

A chunk without an id is named by a hash of its text (the sample set's rule), so the same text is the
same chunk in every retriever's samples. ``id_key`` / ``score_key`` read the id / score from a
metadata field instead (LlamaIndex node ids are random unless set, LangChain documents often have
none; a reranker writes ``relevance_score``).

``k`` is set on the retriever itself where it has one (LangChain ``k`` or ``search_kwargs["k"]``,
LlamaIndex ``similarity_top_k``, Haystack ``top_k``), on a copy: the retriever passed is not changed.
Otherwise the list it returns is cut at ``k`` and the set notes questions that got fewer.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module, metadata
from pathlib import Path
from typing import Any

from .._errors import ConfigError, DependencyError, FormatError, InputError
from .irds import question_records
from .locate import read_documents
from .places import Placer, framework_place
from .samples import Samples
from .tables import json_value, split_lines

__all__ = ["collect"]

#: framework -> (the module roots its classes live under, the package, the extra, the oldest version supported)
_FRAMEWORKS: dict[str, tuple[tuple[str, ...], str, str, tuple[int, ...]]] = {
    "langchain": (("langchain_core",), "langchain-core", "langchain", (0, 3)),
    "llamaindex": (("llama_index.core",), "llama-index-core", "llamaindex", (0, 12)),
    "haystack": (("haystack", "haystack_integrations"), "haystack-ai", "haystack", (2, 8)),
}
_NAMES = {"langchain": "LangChain", "llamaindex": "LlamaIndex", "haystack": "Haystack"}
#: fields a question record may not carry: collect writes them
_RETRIEVED = ("retrieved", "retrieved_ids", "retrieved_context_ids", "retrieved_contexts", "retrieved_scores")

Search = Callable[[str], Any]


def collect(
    retriever: Any,
    questions: Any,
    k: int = 10,
    *,
    name: str | None = None,
    id_key: str | None = None,
    score_key: str | None = None,
    concurrency: int = 1,
    duplicates: str = "error",
    documents: Any = None,
) -> Samples:
    """Run ``retriever`` on every question and keep the top ``k`` chunks (ids, texts, scores,
    metadata) as a :class:`~ctxeval.Samples`, one sample per question, ready to evaluate.

    ``retriever``: a LangChain ``BaseRetriever``, ``VectorStore`` or runnable chain ending in documents, a
    LlamaIndex retriever, a Haystack retriever component (``run(query=..., top_k=...)``) or pipeline (the
    question to its open ``query`` / ``text`` inputs, ``top_k`` to the component whose documents leave
    it), or a function ``f(question, k)`` returning
    chunks (mappings ``{id, text, score, metadata}``, ids, or any of the frameworks' documents, alone
    or as ``(document, score)`` pairs). ``questions``: a list of question texts, a mapping
    ``{query_id: question}``, sample-like records (``query_id``, ``question``, and the references:
    ``reference_ids``, ``grades``, ``reference_contexts``, ``reference_answer``, ``category``, ...), a frame
    of such records, a JSON-lines file of them, or ``irds:<ir_datasets id>`` (its queries, with its
    qrels as grades). ``name`` names the run (default: the retriever's class). ``concurrency``: questions
    asked at once (threads; the order of the samples is the questions' whatever it is). ``duplicates``:
    a chunk returned twice for one question is an error, or ``"first"`` keeps the first.

    Each chunk keeps its place, ``document``, ``start``, ``end`` (characters), read from the framework's
    metadata (LangChain ``start_index`` from a splitter's ``add_start_index=True``, LlamaIndex
    ``start_char_idx`` / ``end_char_idx``, Haystack's ``split_idx_start``; the document from ``source`` or
    ``doc_id``, a LlamaIndex node's ``ref_doc_id``, Haystack's ``source_id``);
    with ``documents`` (a mapping, a folder or JSON lines) each place is checked against the text and
    a chunk without one is located by search, each way counted in the set's notes. The places make the
    chunk table span labels and budgets read.

    >>> docs = {"d1": "Arabica grows best at high altitude.", "d2": "Robusta tolerates heat."}
    >>> def search(question, k):  # any function works; a framework retriever is passed the same way
    ...     hits = [d for d, t in docs.items() if set(question.lower().split()) & set(t.lower().split())]
    ...     return [{"id": d, "text": docs[d]} for d in hits][:k]
    >>> s = collect(search, [{"query_id": "q1", "question": "where does arabica grow", "reference_ids": ["d1"]}], k=2)
    >>> s.run().to_dict(), s.qrels().to_dict()
    ({'q1': {'d1': 1.0}}, {'q1': {'d1': 1}})
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise ConfigError(f"concurrency must be a whole number >= 1, got {concurrency!r}")
    for key, value in (("id_key", id_key), ("score_key", score_key), ("name", name)):
        if value is not None and (not isinstance(value, str) or not value):
            raise ConfigError(f"{key} must be a non-empty string, got {value!r}")
    label = name or _default_name(retriever)
    source = f"collect({label})"
    records = _questions(questions)
    search, k_set = _searcher(retriever, k)
    found = _run_all(search, records, concurrency)
    placer = Placer(read_documents(documents) if documents is not None else None, source)
    short = unplaced = 0
    for pos, (rec, items) in enumerate(zip(records, found), start=1):
        chunks = _listed(items, source, pos)
        short += len(chunks) < k
        got = [_chunk(it, source, pos, i, id_key, score_key, placer) for i, it in enumerate(chunks[:k], start=1)]
        placed = sum("document" in c for c in got)
        if 0 < placed < len(got):  # a question's chunks carry their places all or none (the sample format)
            unplaced += placed
            for c in got:
                for key in ("document", "start", "end"):
                    c.pop(key, None)
        rec["retrieved"] = got
    samples = Samples.from_records(records, name=label, source=source, duplicates=duplicates)
    notes = list(samples.notes) + placer.notes()
    if unplaced:
        notes.append(
            f"{source}: {unplaced} placed chunks kept no place: another chunk of the same question was found in no "
            "document (a question's chunks carry their places all or none)"
        )
    if short:
        why = "" if k_set else f" (collect cannot set this retriever's own limit: set it to {k} or more)"
        notes.append(f"{source}: {short} of {len(records)} questions got fewer than k={k} chunks{why}")
    notes.extend(_mismatch_note(samples, source, id_key))
    return dataclasses.replace(samples, notes=tuple(notes))


# --- questions ----------------------------------------------------------------------------------------


def _questions(questions: Any) -> list[dict[str, Any]]:
    """Question records (fresh dicts), each with a non-empty ``question`` or ``user_input``."""
    where = "questions"
    if isinstance(questions, (str, os.PathLike)):
        if isinstance(questions, str) and questions.startswith("irds:"):
            rows: list[Any] = question_records(questions)
            where = questions
        else:
            rows, where = _jsonl(questions), str(questions)
    elif isinstance(questions, Mapping):
        rows = [
            {**v, "query_id": str(q)} if isinstance(v, Mapping) else {"query_id": str(q), "question": v}
            for q, v in questions.items()
        ]
    elif hasattr(questions, "to_dicts"):
        rows = questions.to_dicts()
    elif hasattr(questions, "to_dict") and hasattr(questions, "columns"):
        rows = questions.to_dict("records")
    elif isinstance(questions, Iterable) and not isinstance(questions, bytes):
        rows = [{"question": q} if isinstance(q, str) else q for q in questions]
    else:
        raise ConfigError(
            "questions must be a list of question texts, a mapping {query_id: question}, a list of sample "
            f"records, a frame, a JSON-lines path or 'irds:<id>', got {type(questions).__name__}"
        )
    if not rows:
        raise InputError(f"{where}: no questions")
    out = []
    for pos, rec in enumerate(rows, start=1):
        if not isinstance(rec, Mapping):
            raise FormatError(where, pos, f"a question must be a text or a record, got {type(rec).__name__}")
        text = _question(rec)
        if not isinstance(text, str) or not text.strip():
            raise FormatError(
                where, pos, f"the question (question or user_input) must be a non-empty text, got {text!r}"
            )
        given = [f for f in _RETRIEVED if rec.get(f) is not None]
        if given:
            raise FormatError(where, pos, f"the record already has {given[0]}: collect writes the retrieved chunks")
        out.append(dict(rec))
    return out


def _question(rec: Mapping[str, Any]) -> Any:
    return rec["question"] if rec.get("question") is not None else rec.get("user_input")


def _jsonl(path: str | os.PathLike[str]) -> list[Any]:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file (questions)")
    rows = []
    for no, line in enumerate(split_lines(p.read_text(encoding="utf-8-sig")), start=1):
        if line.strip():
            rows.append(json_value(str(p), no, line, line))
    return rows


# --- retrievers ---------------------------------------------------------------------------------------


def _framework(obj: Any) -> str | None:
    """The framework an object's classes (or a Haystack component's metaclass) come from."""
    modules = [c.__module__ or "" for c in type(obj).__mro__] + [type(type(obj)).__module__ or ""]
    for fw, (roots, _, _, _) in _FRAMEWORKS.items():
        if any(m == r or m.startswith(r + ".") for m in modules for r in roots):
            return fw
    return None


def _require(fw: str) -> None:
    """Import the framework's package, or a one-line error naming the extra that installs it."""
    roots, package, extra, oldest = _FRAMEWORKS[fw]
    what = f"collect with a {_NAMES[fw]} retriever"
    try:
        import_module(roots[0])
    except ImportError:
        raise DependencyError(what, package, extra) from None
    try:
        version = metadata.version(package)
    except metadata.PackageNotFoundError:
        return  # imported from a source tree: nothing to compare
    if _release(version) < oldest:
        err = DependencyError(what, package, extra)
        err.msg = (  # ImportError prints msg
            f"{what} needs {package} >= {'.'.join(map(str, oldest))}, but {version} is installed: "
            f"pip install -U 'ctxeval[{extra}]'"
        )
        err.args = (err.msg,)
        raise err


def _release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version ("0.3.86" -> (0, 3, 86); "2.8.0rc1" -> (2, 8, 0)).

    >>> _release("0.12.52.post1"), _release("2.8.0rc1")
    ((0, 12, 52), (2, 8, 0))
    """
    out = []
    for part in version.split("."):
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        out.append(int(digits))
        if len(digits) < len(part):
            break
    return tuple(out)


def _default_name(retriever: Any) -> str:
    if inspect.isfunction(retriever) or inspect.ismethod(retriever):
        return str(retriever.__name__)
    return type(retriever).__name__


def _searcher(retriever: Any, k: int) -> tuple[Search, bool]:
    """``question -> items`` for the retriever, and whether ``k`` was set on the retriever itself."""
    fw = _framework(retriever)
    if fw is not None:
        _require(fw)
        return {"langchain": _langchain, "llamaindex": _llamaindex, "haystack": _haystack}[fw](retriever, k)
    if callable(retriever):
        takes_k = _positional(retriever) >= 2
        return ((lambda q: retriever(q, k)) if takes_k else retriever), takes_k
    raise ConfigError(
        "collect takes a LangChain retriever or vector store, a LlamaIndex retriever, a Haystack retriever "
        f"component or a function f(question, k), got {type(retriever).__name__}"
    )


def _positional(fn: Any) -> int:
    """How many positional arguments ``fn`` takes (2 for ``*args``); 1 when it cannot be told."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)


def _langchain(obj: Any, k: int) -> tuple[Search, bool]:
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.vectorstores import VectorStore, VectorStoreRetriever

    if isinstance(obj, VectorStore):
        return (lambda q: obj.similarity_search_with_score(q, k=k)), True
    if not isinstance(obj, BaseRetriever):
        from langchain_core.runnables import Runnable

        if isinstance(obj, Runnable):  # a chain ending in documents (retriever | reranker ...): k is its own
            return obj.invoke, False
        raise ConfigError(
            f"collect takes a LangChain retriever (BaseRetriever), vector store or runnable, got {type(obj).__name__}"
        )
    fields = type(obj).model_fields
    search_kwargs = getattr(obj, "search_kwargs", None)
    if "k" in fields:
        r, k_set = obj.model_copy(update={"k": k}), True
    elif "search_kwargs" in fields and isinstance(search_kwargs, dict):
        r, k_set = obj.model_copy(update={"search_kwargs": {**search_kwargs, "k": k}}), True
    else:
        r, k_set = obj, False
    if type(r) is VectorStoreRetriever and r.search_type in ("similarity", "similarity_score_threshold"):
        # the same calls as the retriever's own, with the scores it drops
        store, kw = r.vectorstore, r.search_kwargs
        if r.search_type == "similarity":
            return (lambda q: store.similarity_search_with_score(q, **kw)), True
        return (lambda q: store.similarity_search_with_relevance_scores(q, **kw)), True
    return r.invoke, k_set


def _llamaindex(obj: Any, k: int) -> tuple[Search, bool]:
    from llama_index.core.base.base_retriever import BaseRetriever

    if not isinstance(obj, BaseRetriever):
        hint = " (an index gives one: index.as_retriever(similarity_top_k=k))" if hasattr(obj, "as_retriever") else ""
        raise ConfigError(f"collect takes a LlamaIndex retriever, got {type(obj).__name__}{hint}")
    if hasattr(obj, "similarity_top_k"):
        r = copy.copy(obj)
        r.similarity_top_k = k
        return r.retrieve, True
    return obj.retrieve, False


def _haystack(obj: Any, k: int) -> tuple[Search, bool]:
    if callable(getattr(obj, "inputs", None)) and callable(getattr(obj, "outputs", None)):
        return _haystack_pipeline(obj, k)
    run = getattr(obj, "run", None)
    params = inspect.signature(run).parameters if callable(run) else {}
    if "query" not in params:
        raise ConfigError(
            f"collect takes a Haystack retriever component whose run() takes a query text (such as "
            f"InMemoryBM25Retriever), or a pipeline (an embedding retriever with its text embedder), got "
            f"{type(obj).__name__}"
        )
    kw = {"top_k": k} if "top_k" in params else {}

    def search(q: str) -> Any:
        out = obj.run(query=q, **kw)
        if not isinstance(out, Mapping) or "documents" not in out:
            raise ConfigError(f"{type(obj).__name__}.run() returned no 'documents'")
        return out["documents"]

    return search, bool(kw)


def _haystack_pipeline(pipe: Any, k: int) -> tuple[Search, bool]:
    """A pipeline: the question goes to every open input named ``query`` or ``text`` (retrievers, text
    embedders, rankers), ``top_k = k`` to the one component whose ``documents`` leave the pipeline."""
    last = [c for c, sockets in pipe.outputs().items() if "documents" in sockets]
    if len(last) != 1:
        raise ConfigError(
            f"collect takes a Haystack pipeline with one component whose documents leave it, got {len(last)}"
            + (f" ({', '.join(last)})" if last else "")
        )
    opened = pipe.inputs()
    asks = [(c, name) for c, sockets in opened.items() for name in sockets if name in ("query", "text")]
    if not asks:
        raise ConfigError("collect takes a Haystack pipeline with an open input named query or text, got none")
    k_set = "top_k" in opened.get(last[0], {})

    def search(q: str) -> Any:
        data: dict[str, dict[str, Any]] = {}
        for c, name in asks:
            data.setdefault(c, {})[name] = q
        if k_set:
            data.setdefault(last[0], {})["top_k"] = k
        return pipe.run(data)[last[0]]["documents"]

    return search, k_set


def _run_all(search: Search, records: list[dict[str, Any]], concurrency: int) -> list[Any]:
    def one(pos_rec: tuple[int, dict[str, Any]]) -> Any:
        pos, rec = pos_rec
        text = str(_question(rec))
        try:
            return search(text)
        except Exception as exc:
            if hasattr(exc, "add_note"):  # Python 3.11+
                qid = rec.get("query_id", rec.get("qid", rec.get("id")))
                what = f"query_id {qid!r}" if qid is not None else repr(text)
                exc.add_note(f"ctxeval.collect: while retrieving for question {pos} ({what})")
            raise

    jobs = list(enumerate(records, start=1))
    if concurrency == 1 or len(jobs) == 1:
        return [one(j) for j in jobs]

    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        return list(pool.map(one, jobs))


# --- chunks -------------------------------------------------------------------------------------------


def _listed(items: Any, source: str, pos: int) -> list[Any]:
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise FormatError(source, pos, f"the retriever returned a {type(items).__name__}, not a list of chunks")
    return list(items)


def _chunk(
    item: Any, source: str, pos: int, i: int, id_key: str | None, score_key: str | None, placer: Placer
) -> dict[str, Any]:
    """``{"id", "text", "score", "metadata"}`` of one returned item (see the module docstring), with its
    ``document``, ``start`` and ``end`` where it has a place."""
    score: Any = None
    if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], (str, int)):
        item, score = item  # (document, score), as vector stores return them
    raw = item
    fw = _framework(item)
    if isinstance(item, Mapping):
        cid, text, meta = item.get("id"), item.get("text"), item.get("metadata")
        score = item.get("score", score)
    elif isinstance(item, (str, int)) and not isinstance(item, bool):
        cid, text, meta = str(item), None, None
    elif fw == "langchain" and hasattr(item, "page_content"):
        cid, text, meta = getattr(item, "id", None), item.page_content, item.metadata
    elif fw == "llamaindex" and hasattr(item, "node"):  # NodeWithScore
        node = item.node
        cid, text, meta, score = node.node_id, _node_text(node), node.metadata, item.score
    elif fw == "llamaindex" and hasattr(item, "node_id"):  # a bare node
        cid, text, meta = item.node_id, _node_text(item), item.metadata
    elif fw == "haystack" and hasattr(item, "meta"):
        cid, text, meta, score = item.id, item.content, item.meta, item.score
    else:
        raise FormatError(
            source,
            pos,
            f"retrieved[{i}] is a {type(item).__name__}: collect reads LangChain Documents, LlamaIndex nodes, "
            "Haystack Documents, (document, score) pairs, ids and mappings {id, text, score, metadata}",
        )
    meta = dict(meta) if meta else {}
    if id_key is not None:
        if meta.get(id_key) is None:
            raise FormatError(source, pos, f"retrieved[{i}]: its metadata has no {id_key!r} (id_key)")
        cid = meta[id_key]
    if score_key is not None:
        if meta.get(score_key) is None:
            raise FormatError(source, pos, f"retrieved[{i}]: its metadata has no {score_key!r} (score_key)")
        score = meta[score_key]
    if score is not None and not isinstance(score, bool):
        try:
            score = float(score)  # numpy scalars, decimals
        except (TypeError, ValueError):
            raise FormatError(source, pos, f"retrieved[{i}]: score {score!r} is not a number") from None
        if not math.isfinite(score):
            raise FormatError(source, pos, f"retrieved[{i}]: score {score!r} is not a finite number")
    out: dict[str, Any] = {"id": None if cid in (None, "") else str(cid), "text": text, "score": score}
    if meta:
        out["metadata"] = meta
    own = {**meta, **item} if isinstance(item, Mapping) else meta
    place = placer.place(framework_place(fw, raw, own, text), text, out["id"] or f"retrieved[{i}] of question {pos}")
    if place is not None:
        out["document"], out["start"], out["end"] = place
    return out


def _node_text(node: Any) -> Any:
    """A LlamaIndex node's own text, without the metadata its embedding text may prepend."""
    from llama_index.core.schema import MetadataMode

    return node.get_content(metadata_mode=MetadataMode.NONE)


def _mismatch_note(samples: Samples, source: str, id_key: str | None) -> list[str]:
    """A note when references were given but no question retrieved any of its own: almost always ids
    from two different schemes (random node ids, documents without ids)."""
    judged = [s for s in samples.samples if s.grades]
    if not judged or any(d in (s.grades or {}) for s in judged for d in s.retrieved_ids):
        return []
    hint = "" if id_key else "; if the chunk ids are in a metadata field, name it with id_key="
    return [
        f"{source}: no question retrieved any of its references: the retriever's chunk ids (or texts) and the "
        f"references' do not match (LlamaIndex node ids are random unless set; LangChain documents often have "
        f"no id, and are then named by a hash of their text){hint}"
    ]
