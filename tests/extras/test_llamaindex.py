"""ctxeval.collect over LlamaIndex's own BM25Retriever (llama-index-retrievers-bm25: bm25s with a
Snowball stemmer and English stop words) on two indexes of the planted corpus (``retrieval_corpus``),
compared end to end; ids, texts, scores and metadata as LlamaIndex returns them. Runs alone with
``ctxeval[llamaindex]`` in a clean venv."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import retrieval_corpus as corpus

#: installed beside the extra by scripts/test-extras: the in-memory BM25 retriever the test drives
TEST_REQUIRES = ["llama-index-retrievers-bm25"]


if not os.environ.get("CTXEVAL_EXTRA"):  # the main run skips without the packages; its clean venv must have them
    pytest.importorskip(
        "llama_index.retrievers.bm25",
        reason="needs llama-index-retrievers-bm25 (ctxeval[llamaindex] + its test packages)",
    )

from llama_index.core.schema import TextNode  # noqa: E402
from llama_index.retrievers.bm25 import BM25Retriever  # noqa: E402

import ctxeval  # noqa: E402


def _bm25(path: Path, top_k: int = 5) -> BM25Retriever:
    nodes = [TextNode(id_=r["id"], text=r["text"], metadata=r["metadata"]) for r in corpus.read(path)]
    return BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=top_k)


def test_two_bm25_indexes_compared_end_to_end(tmp_path: Path) -> None:
    files, (clean, polluted), (a, b) = corpus.collect_both(_bm25, tmp_path, k=2)
    assert clean.similarity_top_k == polluted.similarity_top_k == 5  # collect set k on a copy
    rows = {r["id"]: r for r in corpus.read(files["polluted"])}
    for samples, retriever in ((a, clean), (b, polluted)):
        for s, q in zip(samples.samples, corpus.questions()):
            own = retriever.retrieve(q["question"])[:2]
            assert list(s.retrieved_ids) == [n.node.node_id for n in own]
            assert list(s.retrieved_texts or ()) == [rows[n.node.node_id]["text"] for n in own]
            assert list(s.retrieved_meta or ()) == [{"metadata": rows[n.node.node_id]["metadata"]} for n in own]
            assert list(s.retrieved_scores) == [n.score for n in own]
            assert s.retrieved_scores[0] > 0
    assert not any("give no scores" in n for n in a.notes + b.notes)


def test_random_node_ids_are_noted_and_id_key_reads_the_ids_from_metadata(tmp_path: Path) -> None:
    files = corpus.write(tmp_path)
    # nodes built without ids get random ones: no retrieved id can match a reference id
    rows = corpus.read(files["clean"])
    nodes = [TextNode(text=r["text"], metadata={**r["metadata"], "doc_id": r["id"]}) for r in rows]
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=3)
    lost = ctxeval.collect(retriever, files["questions"], k=2)
    assert any("no question retrieved any of its references" in n and "id_key" in n for n in lost.notes)
    kept = ctxeval.collect(retriever, files["questions"], k=2, id_key="doc_id")
    assert ctxeval.evaluate(samples=kept, measures=["RR"]).runs[0].mean("RR") == 1.0
    assert not any("no question retrieved" in n for n in kept.notes)


def test_node_parsers_give_start_and_end_char_idx_to_chunking() -> None:
    """LlamaIndex's SentenceSplitter (its tokenizer given: offline) and, by name, TokenTextSplitter (the
    spec gives it words-v1's tokens): the nodes' start_char_idx / end_char_idx are the chunks' places."""
    from chunking_check import offsets_read, verb_runs
    from llama_index.core.node_parser import SentenceSplitter

    splitter = SentenceSplitter(chunk_size=128, chunk_overlap=16, tokenizer=str.split)
    offsets_read(splitter)
    offsets_read("llamaindex:TokenTextSplitter(chunk_size=128, chunk_overlap=16)")
    verb_runs(splitter, "llamaindex")


def test_collect_keeps_the_nodes_places() -> None:
    from chunking_check import corpus
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter

    docs, _, texts = corpus(4)
    nodes = SentenceSplitter(chunk_size=128, chunk_overlap=0, tokenizer=str.split).get_nodes_from_documents(
        [Document(text=t, id_=d) for d, t in docs.items()]
    )
    s = ctxeval.collect(BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=3), texts, k=3, documents=docs)
    by_id = {n.node_id: n for n in nodes}
    for sample in s.samples:
        assert sample.retrieved_documents is not None and sample.retrieved_starts and sample.retrieved_ends
        places = zip(sample.retrieved_ids, sample.retrieved_documents, sample.retrieved_starts, sample.retrieved_ends)
        for cid, *place in places:
            n = by_id[cid]
            assert tuple(place) == (n.ref_doc_id, n.start_char_idx, n.end_char_idx)
    assert any("by the framework's offsets" in n and "search" not in n for n in s.notes)
