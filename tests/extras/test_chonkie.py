"""ctxeval chunking over chonkie's chunkers: their start_index / end_index are the chunks' places; by
object and by name (chonkie:Class(...)). Runs alone with ``ctxeval[chonkie]`` in a clean venv."""

from __future__ import annotations

import os

import pytest

if not os.environ.get("CTXEVAL_EXTRA"):
    pytest.importorskip("chonkie", reason="needs chonkie (ctxeval[chonkie])")

import chonkie
from chunking_check import offsets_read, verb_runs


def test_recursive_and_token_chunkers_give_their_offsets() -> None:
    own = chonkie.RecursiveChunker(chunk_size=400)
    table = offsets_read(own)
    first = [i for i, d in enumerate(table.doc.tolist()) if d == table.doc[0]]
    docs_text = table.documents[str(table.doc[0])]  # type: ignore[index]
    assert [(int(table.start[i]), int(table.end[i])) for i in first] == [
        (c.start_index, c.end_index) for c in own(docs_text)
    ]
    offsets_read(chonkie.TokenChunker(chunk_size=300, chunk_overlap=30))  # character tokens: offline
    offsets_read("chonkie:SentenceChunker(chunk_size=300)")


def test_the_verb_runs_with_a_chonkie_chunker() -> None:
    verb_runs(chonkie.RecursiveChunker(chunk_size=400), "chonkie")
