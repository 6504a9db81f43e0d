"""ctxeval chunking over semchunk: ``chunker(text, offsets=True)`` gives the chunks' places; by object and
by name (semchunk:N, counted by the tokenizer in force, words-v1 offline). Runs alone with
``ctxeval[semchunk]`` in a clean venv."""

from __future__ import annotations

import os
import re

import pytest

if not os.environ.get("CTXEVAL_EXTRA"):
    pytest.importorskip("semchunk", reason="needs semchunk (ctxeval[semchunk])")

import semchunk
from chunking_check import offsets_read, verb_runs


def _words(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


def test_semchunk_offsets_by_object_and_by_name() -> None:
    chunker = semchunk.chunkerify(_words, 64)
    table = offsets_read(chunker)
    by_name = offsets_read("semchunk:64")
    assert by_name.start.tolist() == table.start.tolist() and by_name.end.tolist() == table.end.tolist()


def test_the_verb_runs_with_semchunk() -> None:
    verb_runs(semchunk.chunkerify(_words, 64), "semchunk")
