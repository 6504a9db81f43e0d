"""ctxeval.collect without a framework (a plain function as the retriever) and its boundary: the
question forms, k, the notes, every error, the missing or too old framework (one line naming the
extra), and that importing ctxeval imports no framework. The frameworks' own retrievers are tested in
tests/extras/test_<framework>.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import ctxeval
from ctxeval._io import retrievers

DOCS = {"d1": "arabica grows high", "d2": "robusta likes heat", "d3": "coffee rust spreads", "d4": "arabica rust"}


def search(question: str, k: int) -> list[dict[str, Any]]:
    """Word overlap, scored by the number of shared words (ties by id, descending, as ctxeval ranks)."""
    words = set(question.split())
    hits = [(len(words & set(t.split())), d) for d, t in DOCS.items()]
    hits = sorted((h for h in hits if h[0]), reverse=True)
    return [{"id": d, "text": DOCS[d], "score": float(n), "metadata": {"len": len(DOCS[d])}} for n, d in hits][:k]


def test_records_keep_their_references_and_the_retrieved_chunks_their_fields() -> None:
    qs = [
        {"query_id": "q1", "question": "arabica rust", "reference_ids": ["d4", "d1"], "category": "plants"},
        {"query_id": "q2", "question": "robusta heat", "grades": {"d2": 3}, "reference_answer": "heat"},
    ]
    s = ctxeval.collect(search, qs, k=2, name="overlap")
    assert (s.name, s.source, len(s)) == ("overlap", "collect(overlap)", 2)
    q1, q2 = s.samples
    # by hand: q1 shares 2 words with d4, 1 with d1 and d3; the top 2 are d4 (2), then d3 (1, id above d1)
    assert (q1.retrieved_ids, q1.retrieved_scores) == (("d4", "d3"), (2.0, 1.0))
    assert q1.retrieved_texts == (DOCS["d4"], DOCS["d3"])
    assert (q1.grades, q1.category, q1.question) == ({"d4": 1, "d1": 1}, "plants", "arabica rust")
    assert (q2.retrieved_ids, q2.grades, q2.reference_answer) == (("d2",), {"d2": 3}, "heat")
    assert s.qrels().to_dict() == {"q1": {"d4": 1, "d1": 1}, "q2": {"d2": 3}}
    assert s.run().to_dict() == {"q1": {"d4": 2.0, "d3": 1.0}, "q2": {"d2": 2.0}}
    # q2 retrieved one chunk of k=2: said, with the count
    assert s.notes == ("collect(overlap): 1 of 2 questions got fewer than k=2 chunks",)
    # the questions given are not changed
    assert "retrieved" not in qs[0]
    assert q1.retrieved_meta == ({"metadata": {"len": 12}}, {"metadata": {"len": 19}})


def test_a_collected_set_written_and_read_back_loses_nothing(tmp_path: Path) -> None:
    qs = [{"query_id": "q1", "question": "arabica rust", "reference_ids": ["d4"], "category": "plants"}]
    s = ctxeval.collect(search, qs, k=3, name="overlap")
    for name in ("s.jsonl", "s.csv"):
        s.write(tmp_path / name)
        again = ctxeval.Samples.from_path(tmp_path / name)
        assert again.samples == s.samples, name
        assert again.samples[0].retrieved_meta[0] == {"metadata": {"len": 12}}


@pytest.mark.parametrize(
    "questions",
    [
        {"q1": "arabica rust", "q2": "robusta heat"},
        {"q1": {"question": "arabica rust"}, "q2": {"question": None, "user_input": "robusta heat"}},
        pl.DataFrame({"query_id": ["q1", "q2"], "question": ["arabica rust", "robusta heat"]}),
        pl.DataFrame({"query_id": ["q1", "q2"], "question": ["arabica rust", "robusta heat"]}).to_pandas(),
    ],
    ids=["mapping", "mapping-of-records", "polars", "pandas"],
)
def test_every_question_form_gives_the_same_samples(questions: Any) -> None:
    s = ctxeval.collect(search, questions, k=3)
    assert [x.query_id for x in s.samples] == ["q1", "q2"]
    assert s.run().to_dict() == {"q1": {"d4": 2.0, "d3": 1.0, "d1": 1.0}, "q2": {"d2": 2.0}}


def test_texts_alone_are_named_by_position_and_a_jsonl_file_is_read(tmp_path: Path) -> None:
    s = ctxeval.collect(search, ["arabica rust", "robusta heat"], k=1)
    assert [x.query_id for x in s.samples] == ["line-1", "line-2"]
    assert any("named line-1 .. line-2 by position" in n for n in s.notes)
    path = tmp_path / "questions.jsonl"
    path.write_text('{"query_id": "a", "question": "rust"}\n\n{"query_id": "b", "user_input": "heat"}\n')
    s = ctxeval.collect(search, path, k=5)
    assert s.run().to_dict() == {"a": {"d4": 1.0, "d3": 1.0}, "b": {"d2": 1.0}}


def test_a_function_without_k_is_cut_at_k_and_the_shortfall_says_why() -> None:
    calls: list[str] = []

    def top3(question: str) -> list[str]:
        calls.append(question)
        return ["d1", "d2", "d3"]

    s = ctxeval.collect(top3, ["a", "b"], k=2)
    assert [x.retrieved_ids for x in s.samples] == [("d1", "d2"), ("d1", "d2")] and calls == ["a", "b"]
    s = ctxeval.collect(top3, ["a"], k=5)
    assert s.notes[-1] == (
        "collect(top3): 1 of 1 questions got fewer than k=5 chunks (collect cannot set this retriever's own "
        "limit: set it to 5 or more)"
    )


def test_threads_keep_the_questions_order() -> None:
    def slow(question: str, k: int) -> list[str]:
        time.sleep(0.02 * (5 - int(question)))  # later questions finish first
        return [f"d{question}"]

    s = ctxeval.collect(slow, [str(i) for i in range(5)], k=1, concurrency=4)
    assert [x.retrieved_ids for x in s.samples] == [(f"d{i}",) for i in range(5)]


def test_langchain_documents_and_document_score_pairs_are_read() -> None:
    from langchain_core.documents import Document

    def pairs(question: str, k: int) -> list[tuple[Document, float]]:
        return [(Document(page_content="x y", metadata={"a": 1}, id="c1"), 0.9), (Document(page_content="z"), 0.4)]

    s = ctxeval.collect(pairs, {"q": "x"}, k=2)
    (only,) = s.samples
    assert only.retrieved_ids == ("c1", ctxeval._io.samples.text_id("z"))
    assert (only.retrieved_texts, only.retrieved_scores) == (("x y", "z"), (0.9, 0.4))


def test_id_key_and_score_key_read_metadata() -> None:
    def reranked(question: str, k: int) -> list[dict[str, Any]]:
        return [
            {"id": "n-1", "text": "a", "metadata": {"doc": "d7", "relevance_score": 0.8}},
            {"id": "n-2", "text": "b", "metadata": {"doc": "d2", "relevance_score": 0.3}},
        ]

    s = ctxeval.collect(reranked, {"q": "x"}, k=2, id_key="doc", score_key="relevance_score")
    assert s.run().to_dict() == {"q": {"d7": 0.8, "d2": 0.3}}
    with pytest.raises(ctxeval.FormatError, match=r"^collect\(reranked\):1: retrieved\[1\]: its metadata has no 'id'"):
        ctxeval.collect(reranked, {"q": "x"}, id_key="id")


def test_no_match_between_chunk_ids_and_references_is_noted() -> None:
    s = ctxeval.collect(search, [{"query_id": "q", "question": "rust", "reference_ids": ["D4"]}], k=2)
    assert any("no question retrieved any of its references" in n and "id_key=" in n for n in s.notes)
    s = ctxeval.collect(search, [{"query_id": "q", "question": "rust", "reference_ids": ["d4"]}], k=2)
    assert not any("no question retrieved" in n for n in s.notes)


def test_a_retriever_failure_keeps_its_type_and_says_which_question() -> None:
    def broken(question: str, k: int) -> list[str]:
        raise TimeoutError("server gone")

    with pytest.raises(TimeoutError, match="server gone") as info:
        ctxeval.collect(broken, {"q7": "where"})
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == ["ctxeval.collect: while retrieving for question 1 (query_id 'q7')"]


def _dup(question: str, k: int) -> list[str]:
    return ["d1", "d2", "d1"]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: ctxeval.collect(search, ["x"], k=0), ctxeval.ConfigError, "k must be a whole number >= 1, got 0"),
        (lambda: ctxeval.collect(search, ["x"], k=True), ctxeval.ConfigError, "k must be a whole number"),
        (lambda: ctxeval.collect(search, ["x"], concurrency=0), ctxeval.ConfigError, "concurrency must be"),
        (lambda: ctxeval.collect(search, ["x"], id_key=""), ctxeval.ConfigError, "id_key must be a non-empty string"),
        (lambda: ctxeval.collect(search, []), ctxeval.InputError, "^questions: no questions$"),
        (lambda: ctxeval.collect(search, 42), ctxeval.ConfigError, "questions must be a list of question texts"),
        (lambda: ctxeval.collect(search, [{"query_id": "q"}]), ctxeval.FormatError, r"^questions:1: the question \(question or user_input\) must be a non-empty text, got None$"),
        (lambda: ctxeval.collect(search, ["ok", "  "]), ctxeval.FormatError, "^questions:2: the question"),
        (lambda: ctxeval.collect(search, [3]), ctxeval.FormatError, "^questions:1: a question must be a text or a record, got int$"),
        (lambda: ctxeval.collect(search, [{"question": "x", "retrieved_ids": ["a"]}]), ctxeval.FormatError, "already has retrieved_ids: collect writes the retrieved chunks"),
        (lambda: ctxeval.collect("not a retriever", ["x"]), ctxeval.ConfigError, "collect takes a LangChain retriever or vector store, a LlamaIndex retriever, a Haystack retriever component or a function f\\(question, k\\), got str"),
        (lambda: ctxeval.collect(lambda q, k: "d1", ["x"]), ctxeval.FormatError, "^collect\\(<lambda>\\):1: the retriever returned a str, not a list of chunks$"),
        (lambda: ctxeval.collect(lambda q, k: [1.5], ["x"]), ctxeval.FormatError, "retrieved\\[1\\] is a float: collect reads"),
        (lambda: ctxeval.collect(lambda q, k: [{"id": "a", "score": float("nan")}], ["x"]), ctxeval.FormatError, "retrieved\\[1\\]: score nan is not a finite number"),
        (lambda: ctxeval.collect(lambda q, k: [{"id": "a", "score": "high"}], ["x"]), ctxeval.FormatError, "retrieved\\[1\\]: score 'high' is not a number"),
        (lambda: ctxeval.collect(_dup, ["x"]), ctxeval.FormatError, "^collect\\(_dup\\):1: retrieved: chunk id 'd1' is given twice \\(positions 1 and 3\\); duplicates='first'"),
    ],
)  # fmt: skip
def test_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_a_missing_questions_file_and_bad_json_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ctxeval.InputError, match=r"nope\.jsonl: no such file \(questions\)$"):
        ctxeval.collect(search, tmp_path / "nope.jsonl")
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"question": "a"}\n{"question": \n')
    with pytest.raises(ctxeval.FormatError, match=r"q\.jsonl:2: not valid JSON"):
        ctxeval.collect(search, bad)


def test_duplicates_first_keeps_the_first() -> None:
    s = ctxeval.collect(_dup, ["x"], duplicates="first")
    assert s.samples[0].retrieved_ids == ("d1", "d2")


def _claiming(module: str) -> Any:
    """An object whose class says it comes from a framework's package (as a retriever of it would)."""
    return type("SomeRetriever", (), {"__module__": module})()


@pytest.mark.parametrize(
    ("module", "package", "extra"),
    [
        ("langchain_core.retrievers", "langchain-core", "langchain"),
        ("llama_index.core.base.base_retriever", "llama-index-core", "llamaindex"),
        ("haystack.components.retrievers", "haystack-ai", "haystack"),
    ],
)
def test_a_missing_framework_is_one_line_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, module: str, package: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module.split(".")[0], None)  # import of it fails, as when not installed
    monkeypatch.setitem(sys.modules, module.rsplit(".", 1)[0], None)
    with pytest.raises(ctxeval.DependencyError) as info:
        ctxeval.collect(_claiming(module), ["x"])
    assert str(info.value).endswith(f"needs {package}, which is not installed: pip install 'ctxeval[{extra}]'")
    assert "\n" not in str(info.value) and info.value.extra == extra


def test_a_framework_older_than_supported_says_which_and_how_to_upgrade(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retrievers.metadata, "version", lambda package: "0.2.43")
    with pytest.raises(ctxeval.DependencyError) as info:
        ctxeval.collect(_claiming("langchain_core.retrievers"), ["x"])
    assert str(info.value) == (
        "collect with a LangChain retriever needs langchain-core >= 0.3, but 0.2.43 is installed: "
        "pip install -U 'ctxeval[langchain]'"
    )


def test_importing_ctxeval_and_collect_imports_no_framework() -> None:
    code = (
        "import sys, ctxeval; ctxeval.collect; ctxeval.Samples\n"
        "print([m for m in ('langchain_core', 'llama_index', 'haystack', 'ir_datasets') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout.replace("'", '"')) == []


def test_langchain_0_3_bm25_retrievers_compared_end_to_end(tmp_path: Path) -> None:
    """The LangChain 0.3 line this venv holds for ragas 0.2 (tests/extras/test_langchain.py runs the
    current line alone in a clean venv): the planted corpus's answer through collect."""
    import retrieval_corpus as corpus
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document

    def bm25(path: Path) -> BM25Retriever:
        return BM25Retriever.from_documents(
            [Document(page_content=r["text"], metadata=r["metadata"], id=r["id"]) for r in corpus.read(path)]
        )

    corpus.collect_both(bm25, tmp_path, k=3)
