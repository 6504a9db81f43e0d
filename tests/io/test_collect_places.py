"""ctxeval.collect keeps where each retrieved chunk lies (document, start, end): read from the framework's
own metadata (LangChain's start_index of add_start_index=True, here with LangChain's own splitter and
BM25Retriever, on the 0.3 line this venv holds; LlamaIndex and Haystack in their extras' tests), checked
against the documents, located by search where none is given (counted, noted); the places make the
chunk table that span labels read."""

from __future__ import annotations

import warnings

import pytest

import ctxeval
from ctxeval._io.places import chunks_of_samples

DOCS = {
    "arabica": "Arabica grows best at high altitude. It needs shade and steady rain. " * 3,
    "robusta": "Robusta tolerates heat and resists disease. Its beans are smaller and bitter. " * 3,
}


def _retriever(add_start_index: bool):  # type: ignore[no-untyped-def]
    splitters = pytest.importorskip("langchain_text_splitters")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        retrievers = pytest.importorskip("langchain_community.retrievers")
    pytest.importorskip("rank_bm25")
    splitter = splitters.RecursiveCharacterTextSplitter(
        chunk_size=60, chunk_overlap=10, add_start_index=add_start_index
    )
    docs = splitter.create_documents(list(DOCS.values()), metadatas=[{"source": d} for d in DOCS])
    for i, d in enumerate(docs):
        d.id = f"c{i}"
    return retrievers.BM25Retriever.from_documents(docs), docs


def test_langchain_start_index_becomes_each_chunks_place() -> None:
    retriever, docs = _retriever(add_start_index=True)
    s = ctxeval.collect(retriever, {"q1": "where does arabica grow", "q2": "robusta heat"}, k=3, documents=DOCS)
    by_id = {d.id: d for d in docs}
    for sample in s.samples:
        assert sample.retrieved_documents is not None and sample.retrieved_starts and sample.retrieved_ends
        places = zip(sample.retrieved_ids, sample.retrieved_documents, sample.retrieved_starts, sample.retrieved_ends)
        for cid, *place in places:
            d = by_id[cid]
            assert tuple(place) == (
                d.metadata["source"],
                d.metadata["start_index"],
                d.metadata["start_index"] + len(d.page_content),
            )
    assert any("6 retrieved chunks placed in their documents: 6 by the framework's offsets" in n for n in s.notes)
    table = chunks_of_samples(s, DOCS)
    assert all(DOCS[d][a:b] == by_id[c].page_content for c, d, a, b in table.frame.iter_rows())


def test_without_start_index_chunks_are_located_by_search() -> None:
    retriever, docs = _retriever(add_start_index=False)
    s = ctxeval.collect(retriever, {"q1": "where does arabica grow"}, k=2, documents=DOCS)
    assert any("2 by search (exact)" in n for n in s.notes)
    table = chunks_of_samples(s, DOCS)
    by_id = {d.id: d.page_content for d in docs}
    assert all(DOCS[d][a:b] == by_id[c] for c, d, a, b in table.frame.iter_rows())
    bare = ctxeval.collect(retriever, {"q1": "where does arabica grow"}, k=2)  # no place, no documents: none
    assert bare.samples[0].retrieved_documents is None and bare.samples[0].retrieved_starts is None


def test_span_labels_score_a_collected_run_through_its_places() -> None:
    retriever, _ = _retriever(add_start_index=True)
    s = ctxeval.collect(retriever, {"q1": "Arabica grows best"}, k=1, documents=DOCS)  # rank_bm25 keeps case
    at = DOCS["arabica"].index("Arabica grows best at high altitude.")
    spans = ctxeval.SpanLabels.from_records([{"query_id": "q1", "doc_id": "arabica", "start": at, "end": at + 36}])
    got = ctxeval.evaluate(spans, s.run(), ["SpanRecall"], rag={"chunks": chunks_of_samples(s, DOCS)})
    assert got.runs[0].values[got.measures[0]].tolist() == [1.0]
