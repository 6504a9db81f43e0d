"""Running a documentation page's code blocks in order, as a reader would (tests/docs/test_pages.py).

A page's blocks share one folder, the page's own, holding the bundled example as ``example/`` (what
Getting started tells a reader to copy) plus what the test writes for the page. ``python`` blocks run
in one namespace per page (a block of ``>>>`` lines is a doctest); ``bash`` / ``sh`` blocks run with
``bash -e -o pipefail``, the project's ``ctxeval`` first on ``PATH``. Other languages (``json``,
``text``, ``yaml``) are data shown to the reader, not run.

An HTML comment right above a block (invisible on the site) changes how it runs:

- ``<!-- exit: N -->``: the block ends with status N (``ctxeval gate`` exits 1 on a drop);
- ``<!-- skip: REASON -->``: not run, with the reason (it needs a model server, a cluster, ...);
- ``<!-- output -->`` above a ``text`` block: it is what the bash block before it prints (stdout, trailing
  blanks aside).
"""

from __future__ import annotations

import doctest
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from ctxeval._demo import example_path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
RUN = {"python", "py", "pycon", "bash", "sh"}
_MARK = re.compile(r"<!--\s*(exit|skip|output)(?::\s*(.*?))?\s*-->", re.S)


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    exit: int = 0
    skip: str | None = None
    output: bool = False  # the output of the bash block before it

    @property
    def where(self) -> str:
        return f"docs/{self.page}:{self.line}"


def blocks(page: str) -> list[Block]:
    """The page's fenced code blocks with their marks, in order."""
    tokens = MarkdownIt("commonmark").parse((DOCS / page).read_text(encoding="utf-8"))
    out: list[Block] = []
    for i, tok in enumerate(tokens):
        if tok.type != "fence" or not tok.map:
            continue
        lang = (tok.info.split() or [""])[0].strip("{}.").lower()
        marks: dict[str, str] = {}
        prev = tokens[i - 1] if i else None
        if prev is not None and prev.type == "html_block" and prev.map and prev.map[1] == tok.map[0]:
            marks = dict(_MARK.findall(prev.content))
        out.append(
            Block(
                page,
                tok.map[0] + 1,
                lang,
                tok.content,
                int(marks.get("exit") or 0),
                marks.get("skip") or None,
                "output" in marks,
            )
        )
    return out


def runnable(page: str) -> list[Block]:
    return [b for b in blocks(page) if b.lang in RUN]


def prepare(folder: Path) -> None:
    """The folder a reader works in: the bundled example copied as ``example/``."""
    shutil.copytree(example_path("qrels.txt").parent, folder / "example")


def environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(COLUMNS="200", CTXEVAL_CACHE_DIR=str(folder / ".cache"), NO_COLOR="1")
    env.pop("OPENAI_API_KEY", None)
    env.pop("CTXEVAL_JUDGE_API_KEY", None)
    return env


def run_bash(block: Block, folder: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.code],
        cwd=folder,
        env=environment(folder),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == block.exit, (
        f"{block.where}: exit {done.returncode}, expected {block.exit}\n{block.code}\n{done.stdout}\n{done.stderr}"
    )
    return done


def run_python(block: Block, folder: Path, namespace: dict) -> None:
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        if block.lang == "pycon" or block.code.lstrip().startswith(">>>"):
            test = doctest.DocTestParser().get_doctest(block.code, namespace, block.where, block.where, block.line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test, clear_globs=False)
            namespace.update(test.globs)  # a DocTest runs in a copy of the namespace it is given
            assert test.examples and runner.summarize(verbose=False).failed == 0, f"{block.where}: doctest failed"
        else:
            exec(compile(block.code, block.where, "exec"), namespace)
    finally:
        os.chdir(cwd)


def run_page(page: str, folder: Path) -> list[str]:
    """Run every block of ``page`` in ``folder``; returns each bash block's output (stdout + stderr),
    in order ('' for Python blocks and skipped ones)."""
    namespace: dict = {"__name__": "__main__"}
    outputs: list[str] = []
    stdout = None  # of the last bash block
    for block in blocks(page):
        if block.output:
            assert stdout is not None, f"{block.where}: an output block follows no bash block"
            assert _lines(stdout) == _lines(block.code), f"{block.where}: the command prints\n{stdout}"
            continue
        if block.lang not in RUN:
            continue
        stdout = None
        if block.skip:
            outputs.append("")
        elif block.lang in ("bash", "sh"):
            done = run_bash(block, folder)
            stdout = done.stdout
            outputs.append(done.stdout + done.stderr)
        else:
            run_python(block, folder, namespace)
            outputs.append("")
    return outputs


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]
