"""Span labels, chunk tables and documents: every format read and written, the errors that name a
file's line, reference and chunk texts located in the documents, and chunk-id labels converted."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from ctxeval import (
    Chunks,
    ConfigError,
    DuplicateError,
    EmptyInputError,
    FormatError,
    InputError,
    Qrels,
    SpanLabels,
    Tokenizer,
)
from ctxeval._io.locate import read_documents

ROWS = [("q1", "doc é", 0, 12, 1), ("q1", "doc é", 30, 41, 2), ("q2", "d2", 5, 9, 0), ("10", "d2", 1, 3, -1)]


@pytest.mark.parametrize("suffix", [".spans", ".jsonl", ".csv", ".tsv", ".parquet"])
def test_every_format_round_trips(tmp_path: Path, suffix: str) -> None:
    labels = SpanLabels.build(ROWS, graded=True)
    path = tmp_path / f"labels{suffix}"
    if suffix == ".spans" and " " in "".join(r[1] for r in ROWS):
        labels = SpanLabels.build([(q, d.replace(" ", "_"), s, e, g) for q, d, s, e, g in ROWS], graded=True)
    labels.write(path)
    back = SpanLabels.from_file(path)
    assert back.rows() == labels.rows()
    assert back.labels.kind == "graded"


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_rows_are_the_same_whatever_their_input_order(seed: int) -> None:
    rows = list(ROWS)
    random.Random(seed).shuffle(rows)
    assert SpanLabels.build(rows).rows() == SpanLabels.build(ROWS).rows()


def test_binary_by_default_and_graded_when_grades_are_given() -> None:
    plain = SpanLabels.from_records([{"qid": "q", "document": "d", "start_index": 0, "end_index": 4}])
    assert plain.labels.kind == "binary" and plain.rows() == [("q", "d", 0, 4, 1)]
    assert (
        SpanLabels.from_records([{"qid": "q", "document": "d", "start": 0, "end": 4, "grade": 1}]).labels.kind
        == "graded"
    )


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("q1 0 d 0 4\n", r"labels.spans:1: expected 6 fields"),
        ("q1 0 d 0 4 1\nq1 0 d x 4 1\n", r"labels.spans:2: start 'x' is not a whole number"),
        (
            "# comment\n\nq1 0 d 4 4 1\n",
            r"labels.spans:3: query q1, document d: span \[4, 4\) must have 0 <= start < end",
        ),
        ("q1 0 d 0 4 1\nq1 0 d 0 4 2\n", r"span \[0, 4\) given grades 1 and 2 \(lines 1 and 2\)"),
    ],
)
def test_errors_name_the_file_and_line(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "labels.spans"
    path.write_text(text, encoding="utf-8")
    with pytest.raises((FormatError, DuplicateError), match=match):
        SpanLabels.from_file(path)


def test_tabular_errors_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("query_id,doc_id,start,end\nq1,d,0,4\nq1,d,2.5,4\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"labels.csv:3: start '2.5' is not a whole number"):
        SpanLabels.from_file(path)
    path.write_text("query_id,doc,begin\nq1,d,0\n", encoding="utf-8")
    with pytest.raises(FormatError, match="no end field: expected one of end, end_index"):
        SpanLabels.from_file(path)
    jl = tmp_path / "labels.jsonl"
    jl.write_text(
        '{"query_id": "q", "doc_id": "d", "start": 0, "end": 3}\n\n{"query_id": "q", "doc_id": "d", "start": 0}\n'
    )
    with pytest.raises(FormatError, match=r"labels.jsonl:3: end None is not a whole number"):
        SpanLabels.from_file(jl)


def test_chromas_questions_are_read_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / "questions_df.csv"
    path.write_text(
        "question,references,corpus_id\n"
        '"Who, and why?","[{""content"": ""ab"", ""start_index"": 3, ""end_index"": 5}, {""content"": ""c"", ""start_index"": 9, ""end_index"": 10}]",wiki\n'
        'Second?,"[{""content"": ""x"", ""start_index"": 0, ""end_index"": 1}]",chat\n',
        encoding="utf-8",
    )
    labels = SpanLabels.from_chroma(path)
    assert labels.rows() == [("0", "wiki", 3, 5, 1), ("0", "wiki", 9, 10, 1), ("1", "chat", 0, 1, 1)]
    assert labels.queries == {"0": "Who, and why?", "1": "Second?"}
    assert labels.labels.binary


def test_reference_texts_located_exactly_fuzzily_or_named() -> None:
    docs = {"a": "Ab cd. The cat sat on the mat. Ef. The cat sat on the mat.", "b": "Another document entirely."}
    refs = {"q1": ["The cat sat on the mat.", "Another documnt entirely"], "q2": ["nothing like this at all"]}
    labels = SpanLabels.locate(refs, docs, threshold=85)
    hit = fuzz.partial_ratio_alignment("Another documnt entirely", docs["b"])  # the peer's own alignment
    assert hit.score >= 85
    assert labels.rows() == [("q1", "a", 7, 30, 1), ("q1", "b", hit.dest_start, hit.dest_end, 1)]
    assert labels.unlocated == (("q2", "nothing like this at all"),)
    text = " ".join(labels.notes)
    assert "3 reference texts, 1 located exactly, 1 by fuzzy alignment (partial ratio >= 85)" in text
    assert "1 reference texts occur more than once" in text and "1 reference texts not located" in text
    exact_only = SpanLabels.locate(
        {"q1": ["The cat sat on the mat.", "Another documnt entirely"]}, docs, threshold=None
    )
    assert len(exact_only) == 1 and exact_only.unlocated == (("q1", "Another documnt entirely"),)
    # a text is searched in the query's own documents when they are given
    with pytest.raises(EmptyInputError, match="none of the 1 reference texts was located"):
        SpanLabels.locate({"q1": ["The cat sat on the mat."]}, docs, docs={"q1": ["b"]}, threshold=None)


def test_chunk_labels_convert_to_spans_and_spans_to_chunk_grades() -> None:
    chunks = Chunks.from_dict({"c0": ("d", 0, 10), "c1": ("d", 10, 20), "c2": ("d", 5, 15)})
    qrels = Qrels.from_dict({"q": {"c0": 2, "c1": 0}})
    labels = SpanLabels.from_qrels(qrels, chunks)
    assert labels.rows() == [("q", "d", 0, 10, 2), ("q", "d", 10, 20, 0)]
    grades = labels.chunk_grades(chunks).to_dict()
    assert grades == {"q": {"c0": 2, "c1": 0, "c2": 2}}  # c2 shares characters with both: the higher grade
    with pytest.raises(ConfigError, match=r"1 judged chunks are not in the chunk table .*'c9'"):
        SpanLabels.from_qrels(Qrels.from_dict({"q": {"c9": 1}}), chunks)


def test_chunk_tables_read_every_form(tmp_path: Path) -> None:
    table = Chunks.from_records(
        [
            {"chunk_id": "a", "doc_id": "d", "start": 0, "end": 5, "text": "one two", "tokens": 7},
            {"chunk_id": "b", "doc_id": "d", "start": 5, "end": 9, "text": "x", "tokens": 1},
        ]
    )
    for suffix in (".jsonl", ".csv", ".parquet"):
        path = tmp_path / f"chunks{suffix}"
        table.write(path)
        back = Chunks.from_file(path)
        assert back.ids.tolist() == ["a", "b"] and back.end.tolist() == [5, 9] and back.text == ("one two", "x")
    assert table.token_counts()[0].tolist() == [7, 1]  # the tokens column when no tokenizer is named
    assert table.token_counts("words-v1")[0].tolist() == [2, 1]
    llama = Chunks.from_records([{"node_id": "n1", "ref_doc_id": "d", "start_char_idx": 3, "end_char_idx": 8}])
    assert llama.start.tolist() == [3]


def test_chunk_table_errors() -> None:
    with pytest.raises(DuplicateError, match="chunk id 'a' given twice"):
        Chunks.from_records(
            [
                {"chunk_id": "a", "doc_id": "d", "start": 0, "end": 2},
                {"chunk_id": "a", "doc_id": "d", "start": 2, "end": 4},
            ]
        )
    with pytest.raises(ConfigError, match="chunk a: ends at 9, past document 'd' \\(4 characters\\)"):
        Chunks.from_dict({"a": ("d", 0, 9)}, documents={"d": "abcd"})
    with pytest.raises(FormatError, match=r"chunk a: \[5, 2\) must have 0 <= start <= end"):
        Chunks.from_dict({"a": ("d", 5, 2)})
    with pytest.raises(ConfigError, match="needs their texts"):
        Chunks.from_dict({"a": ("d", 0, 2)}).token_counts("words-v1")


def test_chunk_texts_located_in_order_or_named() -> None:
    doc = "Alpha beta. Gamma delta. Alpha beta. Epsilon."
    texts = {"c0": ("d", "Alpha beta. Gamma delta."), "c1": ("d", " Alpha beta."), "c2": ("d", "not in the document")}
    table = Chunks.locate(texts, {"d": doc})
    assert table.ids.tolist() == ["c0", "c1"] and table.start.tolist() == [0, 24]
    assert table.unplaced == ("c2",) and "1 chunk texts not found" in " ".join(table.notes)
    first = Chunks.locate({"c1": ("d", "Alpha beta.")}, {"d": doc}, mode="first")
    assert first.start.tolist() == [0]


def test_documents_are_read_exactly(tmp_path: Path) -> None:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.md").write_bytes(b"\xef\xbb\xbfline one\r\nline two\n")
    (folder / "b.txt").write_bytes("caf\u00e9 \u2014 na\u00efve".encode())
    docs = read_documents(folder)
    assert docs == {"a": "line one\r\nline two\n", "b": "café — naïve"}
    (folder / "c.md").write_bytes(b"\xff\xfe bad")
    with pytest.raises(InputError, match=r"c.md: not UTF-8 \(byte 0\)"):
        read_documents(folder)
    jl = tmp_path / "docs.jsonl"
    jl.write_text('{"doc_id": "x", "text": "  kept as is \\n"}\n', encoding="utf-8")
    assert read_documents(jl) == {"x": "  kept as is \n"}


def test_span_checks_against_documents() -> None:
    labels = SpanLabels.from_records([{"query_id": "q", "doc_id": "d", "start": 2, "end": 9}])
    with pytest.raises(ConfigError, match=r"span \[2, 9\) ends past document 'd' \(4 characters\)"):
        labels.check({"d": "abcd"})
    assert labels.texts({"d": "abcdefghij"}) == ["cdefghi"]


def test_tokenizers() -> None:
    words = Tokenizer.coerce()
    assert words.name == "words-v1"
    assert words.count(["", "a", "Hello, world!", "x1_y2 + z", "日本語 テキスト"]).tolist() == [0, 1, 4, 3, 2]
    assert Tokenizer.coerce(lambda t: len(t.split()), name="split").count(["a b c"]).tolist() == [3]
    with pytest.raises(ConfigError, match="unknown tokenizer 'gpt9'"):
        Tokenizer.coerce("gpt9")
    with pytest.raises(ConfigError, match="negative count"):
        Tokenizer.coerce(lambda t: -1, name="bad").count(["x"])
