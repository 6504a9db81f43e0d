"""ctxeval.collect over LangChain's own retrievers: the in-memory BM25Retriever (langchain-community with
rank_bm25) on two indexes of the planted corpus (``retrieval_corpus``), compared end to end, and an
in-memory vector store, whose scores collect keeps. Runs alone with ``ctxeval[langchain]`` in a clean
venv (the current LangChain line); tests/io/test_collect.py runs the first on the 0.3 line that the main
test venv holds for ragas 0.2."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
import retrieval_corpus as corpus

#: installed beside the extra by scripts/test-extras: the in-memory BM25 retriever the test drives
TEST_REQUIRES = ["langchain-community", "rank-bm25"]


if not os.environ.get("CTXEVAL_EXTRA"):  # the main run skips without the packages; its clean venv must have them
    pytest.importorskip(
        "langchain_community.retrievers", reason="needs langchain-community (ctxeval[langchain] + its test packages)"
    )
    pytest.importorskip("rank_bm25", reason="needs rank-bm25 (LangChain's BM25Retriever)")

with warnings.catch_warnings():  # langchain-community says on import that it is being sunset
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.retrievers import BM25Retriever
from langchain_core.documents import Document  # noqa: E402

import ctxeval  # noqa: E402


def _bm25(path: Path, with_ids: bool = True) -> BM25Retriever:
    rows = corpus.read(path)
    docs = [Document(page_content=r["text"], metadata=r["metadata"], id=r["id"] if with_ids else None) for r in rows]
    return BM25Retriever.from_documents(docs)


def test_two_bm25_indexes_compared_end_to_end(tmp_path: Path) -> None:
    files, (clean, polluted), (a, b) = corpus.collect_both(_bm25, tmp_path, k=3)
    # what LangChain itself returns, field by field; collect set k on a copy (the retrievers keep k=4)
    assert clean.k == polluted.k == 4
    rows = {r["id"]: r for r in corpus.read(files["polluted"])}
    for samples, retriever in ((a, clean), (b, polluted)):
        assert samples.source == f"collect({samples.name})" and len(samples) == corpus.TOPICS
        for s, q in zip(samples.samples, corpus.questions()):
            own = retriever.invoke(q["question"])[:3]
            assert s.query_id == q["query_id"] and s.question == q["question"]
            assert list(s.retrieved_ids) == [d.id for d in own]
            assert list(s.retrieved_texts or ()) == [d.page_content for d in own] == [rows[d.id]["text"] for d in own]
            assert list(s.retrieved_meta or ()) == [{"metadata": rows[d.id]["metadata"]} for d in own]
            assert s.grades == {q["reference_ids"][0]: 1}
    # BM25Retriever returns no scores: the list order ranks, and the set says so
    assert any("give no scores" in n for n in a.notes)


def test_documents_without_ids_are_named_by_their_text_and_match_reference_contexts(tmp_path: Path) -> None:
    files = corpus.write(tmp_path)
    questions = [{k: v for k, v in q.items() if k != "reference_ids"} for q in corpus.questions()]
    a = ctxeval.collect(_bm25(files["clean"], with_ids=False), questions, k=3, name="clean")
    b = ctxeval.collect(_bm25(files["polluted"], with_ids=False), questions, k=3, name="polluted")
    corpus.check_planted(a, b)
    first = a.samples[0]
    assert first.retrieved_ids[0].startswith("t") and len(first.retrieved_ids[0]) == 17
    assert any("named by a hash of its text" in n for n in a.notes)


def test_a_vector_store_and_its_retriever_keep_the_scores(tmp_path: Path) -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    files = corpus.write(tmp_path)
    rows = corpus.read(files["clean"])
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents([Document(page_content=r["text"], metadata=r["metadata"], id=r["id"]) for r in rows])
    by_store = ctxeval.collect(store, files["questions"], k=5, name="store")
    by_retriever = ctxeval.collect(store.as_retriever(search_kwargs={"k": 2}), files["questions"], k=5)
    for s, t, q in zip(by_store.samples, by_retriever.samples, corpus.questions()):
        own = store.similarity_search_with_score(q["question"], k=5)
        assert list(s.retrieved_ids) == [d.id for d, _ in own] == list(t.retrieved_ids)
        assert list(s.retrieved_scores) == [float(x) for _, x in own] == list(t.retrieved_scores)
        assert list(t.retrieved_ids) == [d.id for d in store.as_retriever(search_kwargs={"k": 5}).invoke(q["question"])]
    assert not any("give no scores" in n for n in by_store.notes)


def test_a_runnable_chain_is_invoked_and_cut_at_k(tmp_path: Path) -> None:
    from langchain_core.runnables import RunnableLambda

    files = corpus.write(tmp_path)
    bm25 = _bm25(files["polluted"])
    chain = bm25 | RunnableLambda(lambda docs: list(reversed(docs)))  # a "reranker" that reverses BM25's 4
    s = ctxeval.collect(chain, files["questions"], k=3, name="reversed")
    for sample, q in zip(s.samples, corpus.questions()):
        assert list(sample.retrieved_ids) == [d.id for d in reversed(bm25.invoke(q["question"]))][:3]
    assert bm25.k == 4


def test_text_splitters_give_their_start_index_to_chunking() -> None:
    """langchain-text-splitters (in the extra): start_index of add_start_index=True is each chunk's place,
    by object and by name; the verb runs end to end offline."""
    from chunking_check import offsets_read, verb_runs
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=40, add_start_index=True)
    offsets_read(splitter)
    offsets_read("langchain:RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=40)")
    verb_runs(splitter, "langchain")
