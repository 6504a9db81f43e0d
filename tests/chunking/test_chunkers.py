"""Chunkers cut a corpus into a chunk table that knows where each chunk lies (ctxeval._io.chunkers):
offsets read from each framework (checked against the document's text), located by search where a
framework gives none or gives wrong ones (counted in the notes), and the specs of the command line.
The frameworks installed in the test venv are driven here; LlamaIndex and Haystack in their extras'
clean venvs (tests/extras)."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ctxeval import Chunks, ConfigError, DependencyError
from ctxeval._io.chunkers import chunk_corpus, parse_spec

TEXT = (
    "Arabica grows best at high altitude. Robusta tolerates heat and resists disease.\n\n"
    "Liberica beans are large and irregular. Excelsa is now classed as a variety of Liberica. "
) * 4
DOCS = {"coffee": TEXT, "tiny": "One short line."}
WORD = re.compile(r"\w+|[^\w\s]")


def _texts_hold(table: Chunks, docs: dict[str, str]) -> None:
    """Every chunk's text is the document's text at its offsets."""
    for t, d, s, e in zip(table.chunk_texts(), table.doc.tolist(), table.start.tolist(), table.end.tolist()):
        assert docs[d][s:e] == t


def test_a_function_returning_offsets_texts_or_mappings() -> None:
    by_pairs = chunk_corpus(lambda text: [(0, 7), (8, 13)], {"d": "Arabica grows"})
    assert by_pairs.ids.tolist() == ["d#0", "d#1"] and by_pairs.chunk_texts() == ["Arabica", "grows"]
    by_text = chunk_corpus(lambda text: text.split(". "), {"d": "a b. c d. a b"})
    # "a b" twice: the ordered search places the second copy after the first
    assert by_text.start.tolist() == [0, 5, 10] and by_text.end.tolist() == [3, 8, 13]
    assert "3 by search (exact)" in by_text.notes[0]
    by_maps = chunk_corpus(lambda text: [{"start_index": 2, "end_index": 5, "text": text[2:5]}], {"d": "xxabcxx"})
    assert by_maps.chunk_texts() == ["abc"] and "1 by offsets" in by_maps.notes[0]


def test_wrong_offsets_are_located_and_counted_and_lost_texts_named() -> None:
    def chunker(text: str) -> list[dict]:
        return [
            {"start": 0, "end": 4, "text": "good"},  # right
            {"start": 0, "end": 4, "text": "word"},  # the chunker's offsets are wrong: found at 5
            {"text": "nowhere at all in it"},  # found nowhere: left out, named
        ]

    t = chunk_corpus(chunker, {"d": "good word"}, name="mine")
    assert t.ids.tolist() == ["d#0", "d#1"] and t.start.tolist() == [0, 5]
    assert (
        t.notes[0]
        == "chunker mine: 3 chunks of 1 documents, placed 1 by offsets, 1 by search, the chunker's offsets wrong (exact)"
    )
    assert t.unplaced == ("d#2",) and "1 chunk texts not found in their documents, left out (d#2)" in t.notes[1]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(0, 11), st.text(alphabet="ab .,\n", max_size=80))
def test_token_windows_cover_every_token_with_their_overlap(size: int, overlap: int, text: str) -> None:
    assume(overlap < size and WORD.search(text))
    table = chunk_corpus(f"tokens:{size}/{overlap}", {"d": text})
    tokens = [m.span() for m in WORD.finditer(text)]
    windows = list(zip(table.start.tolist(), table.end.tolist()))
    firsts = [next(i for i, (a, _) in enumerate(tokens) if a == s) for s, _ in windows]
    lasts = [next(i for i, (_, b) in enumerate(tokens) if b == e) for _, e in windows]
    assert firsts[0] == 0 and lasts[-1] == len(tokens) - 1
    assert all(1 <= last - first + 1 <= size for first, last in zip(firsts, lasts))
    assert all(b - a == size - overlap for a, b in itertools.pairwise(firsts))
    assert all(lasts[i] - firsts[i + 1] + 1 == overlap for i in range(len(windows) - 1))


def test_char_windows() -> None:
    t = chunk_corpus("chars:4/1", {"d": "abcdefghij"})
    assert list(zip(t.start.tolist(), t.end.tolist())) == [(0, 4), (3, 7), (6, 10)]


def test_langchain_splitter_offsets_with_and_without_start_index() -> None:
    splitters = pytest.importorskip("langchain_text_splitters")
    with_index = splitters.RecursiveCharacterTextSplitter(chunk_size=60, chunk_overlap=15, add_start_index=True)
    own = with_index.create_documents([TEXT])
    t = chunk_corpus(with_index, DOCS)
    coffee = [i for i, d in enumerate(t.doc.tolist()) if d == "coffee"]
    assert [int(t.start[i]) for i in coffee] == [d.metadata["start_index"] for d in own]
    assert [t.chunk_texts()[i] for i in coffee] == [d.page_content for d in own]
    assert "by offsets" in t.notes[0] and "search" not in t.notes[0]
    plain = chunk_corpus(splitters.RecursiveCharacterTextSplitter(chunk_size=60, chunk_overlap=15), DOCS)
    assert plain.start.tolist() == t.start.tolist() and plain.end.tolist() == t.end.tolist()
    assert "by search (exact)" in plain.notes[0]  # no start_index: located, the same places
    spec = chunk_corpus("langchain:RecursiveCharacterTextSplitter(chunk_size=60, chunk_overlap=15)", DOCS)
    assert spec.start.tolist() == t.start.tolist() and spec.source.startswith("langchain:")
    _texts_hold(t, DOCS)


def test_chonkie_chunks_carry_their_offsets() -> None:
    chonkie = pytest.importorskip("chonkie")
    chunker = chonkie.RecursiveChunker(chunk_size=40)
    t = chunk_corpus(chunker, DOCS)
    own = chunker(TEXT)
    coffee = [i for i, d in enumerate(t.doc.tolist()) if d == "coffee"]
    assert [(int(t.start[i]), int(t.end[i])) for i in coffee] == [(c.start_index, c.end_index) for c in own]
    assert "by offsets" in t.notes[0] and "search" not in t.notes[0]
    _texts_hold(t, DOCS)
    assert len(chunk_corpus("chonkie:TokenChunker(chunk_size=30, chunk_overlap=5)", DOCS)) > 0


def test_semchunk_offsets() -> None:
    semchunk = pytest.importorskip("semchunk")
    chunker = semchunk.chunkerify(lambda s: len(WORD.findall(s)), 12)
    t = chunk_corpus(chunker, DOCS)
    _texts, offsets = chunker(TEXT, offsets=True)
    coffee = [i for i, d in enumerate(t.doc.tolist()) if d == "coffee"]
    assert [(int(t.start[i]), int(t.end[i])) for i in coffee] == [tuple(o) for o in offsets]
    assert "by offsets" in t.notes[0]
    _texts_hold(t, DOCS)
    spec = chunk_corpus("semchunk:12", DOCS)  # counted by words-v1, the tokenizer in force
    assert spec.start.tolist() == t.start.tolist()


def test_a_chunk_table_is_checked_against_the_documents() -> None:
    table = Chunks.from_dict({"c1": ("coffee", 0, 10)})
    assert chunk_corpus(table, DOCS).chunk_texts() == [TEXT[:10]]
    with pytest.raises(ConfigError, match="ends at 99, past document 'tiny'"):
        chunk_corpus(Chunks.from_dict({"c1": ("tiny", 0, 99)}), DOCS)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("tokens:0", "expected a size N >= 1"),
        ("tokens:5/5", "an overlap 0 <= O < N"),
        ("nope:3", "not a file, and not one of tokens:"),
        ("langchain:NoSuchSplitter(chunk_size=3)", "has no class 'NoSuchSplitter'"),
        ("langchain:RecursiveCharacterTextSplitter(chunk_size=x)", "the value of chunk_size is not a Python literal"),
        ("langchain:RecursiveCharacterTextSplitter(3)", r"expected Class\(keyword=value, ...\)"),
        (
            "langchain:RecursiveCharacterTextSplitter(chunk_size=10, chunk_overlap=50)",
            "ValueError: Got a larger chunk overlap",
        ),
        ("python:no_such_module_x:f", "cannot import 'f' from 'no_such_module_x'"),
    ],
)
def test_bad_specs_are_one_line_errors(spec: str, message: str) -> None:
    if spec.startswith("langchain:"):
        pytest.importorskip("langchain_text_splitters")
    with pytest.raises(ConfigError, match=message):
        parse_spec(spec)


def test_a_missing_framework_names_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "chonkie", None)  # as if not installed
    with pytest.raises(DependencyError, match=r"ctxeval\[chonkie\]"):
        parse_spec("chonkie:TokenChunker(chunk_size=5)")


def test_a_chunker_returning_no_list_is_an_error() -> None:
    with pytest.raises(ConfigError, match="returned a str, not a list of chunks"):
        chunk_corpus(lambda text: text, {"d": "x"}, name="bad")
    with pytest.raises(ConfigError, match="lies outside its document"):
        chunk_corpus(lambda text: [(0, 99)], {"d": "x"})
