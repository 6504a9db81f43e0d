"""Every code block of the site's pages runs as a reader would run it (tests/doc_pages.py): bash
blocks through the command line in a folder holding the bundled example and the files the test
writes for the page, Python blocks in one namespace per page, doctest blocks as doctests, and an
``output`` block equal to what its command printed. Blocks that cannot run here are marked with
their reason, and are few."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from doc_pages import DOCS, RUN, blocks, prepare, run_page

#: generated reference pages (their code is --help output and docstrings, whose doctests run with the package),
#: and the API pages mkdocstrings fills (``::: name``) likewise
GENERATED = {"reference/measures.md", "reference/cli.md"}
PAGES = sorted(
    str(p.relative_to(DOCS))
    for p in DOCS.rglob("*.md")
    if str(p.relative_to(DOCS)) not in GENERATED and "\n::: " not in p.read_text(encoding="utf-8")
)
#: data shown to the reader, not code to run
DATA = {"json", "jsonl", "text", "yaml", "toml", "csv", "tsv", "ini", "console"}


def _setup(page: str, folder: Path) -> None:
    prepare(folder)
    setup = SETUP.get(page)
    if setup:
        setup(folder)


def _ci_files(folder: Path) -> None:
    """The CI guide's qrels.txt, main.run (the run shipped) and new.run (a candidate): the example's."""
    import shutil

    shutil.copy(folder / "example" / "qrels.txt", folder / "qrels.txt")
    shutil.copy(folder / "example" / "runs" / "rrf-rerank.run", folder / "main.run")
    shutil.copy(folder / "example" / "runs" / "bm25-rerank.run", folder / "new.run")


#: what a page needs besides the bundled example: the files a reader of that page has of their own
SETUP: dict[str, Callable[[Path], None]] = {"guides/ci.md": _ci_files}  # the RAG guide writes its own (demo)


#: pages whose blocks take long (the scale guide starts Spark: a JVM, 10-90 s)
SLOW = {"guides/scale.md"}


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW else p for p in PAGES])
def test_the_page_runs_as_written(page: str, tmp_path: Path) -> None:
    _setup(page, tmp_path)
    run_page(page, tmp_path)


def test_every_block_says_what_it_is_and_few_are_not_run() -> None:
    skipped = []
    for page in PAGES:
        for b in blocks(page):
            assert b.lang in RUN | DATA, f"{b.where}: a code block without a known language ({b.lang!r})"
            if b.skip:
                assert len(b.skip) > 10, f"{b.where}: say why the block is not run"
                skipped.append(b.where)
    runnable = sum(b.lang in RUN for p in PAGES for b in blocks(p))
    assert len(skipped) <= max(3, runnable // 8), skipped
