"""ctxeval.collect over Haystack's own InMemoryBM25Retriever (an InMemoryDocumentStore, BM25L) on two
indexes of the planted corpus (``retrieval_corpus``), compared end to end; ids, texts, scores and
metadata as Haystack returns them. Runs alone with ``ctxeval[haystack]`` in a clean venv."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import retrieval_corpus as corpus

if not os.environ.get("CTXEVAL_EXTRA"):  # the main run skips without the packages; its clean venv must have them
    pytest.importorskip("haystack", reason="needs haystack-ai (ctxeval[haystack])")

from haystack import Document
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

import ctxeval


def _bm25(path: Path) -> InMemoryBM25Retriever:
    store = InMemoryDocumentStore()
    store.write_documents([Document(id=r["id"], content=r["text"], meta=r["metadata"]) for r in corpus.read(path)])
    return InMemoryBM25Retriever(store, top_k=10)


def test_two_bm25_indexes_compared_end_to_end(tmp_path: Path) -> None:
    files, (clean, polluted), (a, b) = corpus.collect_both(_bm25, tmp_path, k=2)
    assert clean.top_k == 10
    rows = {r["id"]: r for r in corpus.read(files["polluted"])}
    for samples, retriever in ((a, clean), (b, polluted)):
        for s, q in zip(samples.samples, corpus.questions()):
            own = retriever.run(query=q["question"], top_k=2)["documents"]
            assert list(s.retrieved_ids) == [d.id for d in own]
            assert list(s.retrieved_texts or ()) == [rows[d.id]["text"] for d in own]
            assert list(s.retrieved_meta or ()) == [{"metadata": rows[d.id]["metadata"]} for d in own]
            assert list(s.retrieved_scores) == [d.score for d in own]
            assert s.retrieved_scores[0] > 0
    assert not any("give no scores" in n for n in a.notes + b.notes)


def test_a_component_without_a_query_input_is_refused() -> None:
    from haystack.components.joiners import DocumentJoiner

    with pytest.raises(ctxeval.ConfigError, match="whose run\\(\\) takes a query text"):
        ctxeval.collect(DocumentJoiner(), ["a question"])


def test_a_pipeline_bm25_then_a_ranker_gets_the_question_and_k_at_its_end(tmp_path: Path) -> None:
    from haystack import Pipeline
    from haystack.components.rankers import MetaFieldRanker

    files = corpus.write(tmp_path)
    bm25 = _bm25(files["polluted"])
    pipe = Pipeline()
    pipe.add_component("bm25", InMemoryBM25Retriever(bm25.document_store, top_k=5))
    pipe.add_component("rank", MetaFieldRanker(meta_field="line", top_k=4))
    pipe.connect("bm25.documents", "rank.documents")
    s = ctxeval.collect(pipe, files["questions"], k=2, name="bm25+rank")
    for sample, q in zip(s.samples, corpus.questions()):
        # by hand: BM25's top 5 (its top_k is the pipeline's), ordered by the line number, largest first; k=2 at the end
        top5 = bm25.run(query=q["question"], top_k=5)["documents"]
        want = sorted(top5, key=lambda d: d.meta["line"], reverse=True)[:2]
        assert list(sample.retrieved_ids) == [d.id for d in want]
        own = pipe.run({"bm25": {"query": q["question"]}, "rank": {"top_k": 2}})["rank"]["documents"]
        assert list(sample.retrieved_scores) == [d.score for d in own]
    assert pipe.get_component("rank").top_k == 4  # k went in with the question, the component is unchanged


def test_document_splitter_gives_split_idx_start_to_chunking() -> None:
    """Haystack's DocumentSplitter (by words: offline), by object and by name: meta["split_idx_start"]
    is the chunk's start, its content's length its end."""
    from chunking_check import offsets_read, verb_runs
    from haystack.components.preprocessors import DocumentSplitter

    splitter = DocumentSplitter(split_by="word", split_length=60, split_overlap=10)
    offsets_read(splitter)
    offsets_read("haystack:DocumentSplitter(split_by='word', split_length=60)")
    verb_runs(splitter, "haystack")
