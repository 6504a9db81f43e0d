"""The README and the site's home page give the same quick start, of exactly two commands, and every
page the README links to exists (the README is the pitch, the quick start, a tour and the links)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _quick_start(text: str) -> str:
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return section.split("```bash\n", 1)[1].split("```", 1)[0]


def test_the_home_page_s_quick_start_is_the_readme_s_and_has_two_commands() -> None:
    readme = _quick_start((ROOT / "README.md").read_text(encoding="utf-8"))
    home = _quick_start((ROOT / "docs" / "index.md").read_text(encoding="utf-8"))
    assert home == readme
    commands = [line for line in readme.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    assert commands[0].endswith("ctxeval demo") and commands[1].endswith("pytest")


def test_every_page_the_readme_links_to_exists() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(links) >= 10
    missing = [link for link in links if not (ROOT / link).is_file()]
    assert not missing, missing


def test_the_readme_tour_names_real_commands_and_options() -> None:
    """The tour's commands run on files a reader has, so they are not run here (the site's pages run
    the same commands on the example); each names a command and options that exist."""
    import shlex

    import click

    from ctxeval._cli import cli

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## A short tour", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    lines = [line.split("  #")[0] for line in block.splitlines() if line.startswith("ctxeval ")]
    assert len(lines) >= 8
    for line in lines:
        args = shlex.split(line)[1:]
        command = cli
        while isinstance(command, click.Group):
            sub = command.get_command(click.Context(command), args.pop(0)) if args else None
            assert sub is not None, line
            command = sub
        known = {opt for p in command.params for opt in p.opts}
        given = {a.split("=")[0] for a in args if a.startswith("-")}
        assert given <= known, (line, given - known)


def test_the_readme_python_examples_run_with_the_readme_install(tmp_path: Path) -> None:
    """Every Python block of the README runs with the install line the README gives (``.[report]``:
    no pandas, no pyarrow), on the bundled example's files under the names the README uses."""
    import shutil
    import subprocess
    import sys

    from ctxeval._demo import example_path

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "pip install -e '.[report]'" in readme
    shutil.copy(example_path("qrels.txt"), tmp_path / "qrels.txt")
    shutil.copy(example_path("runs/bm25.run"), tmp_path / "bm25.run")
    shutil.copy(example_path("runs/bm25-rerank.run"), tmp_path / "rerank.run")
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks
    hide = (
        "import sys\nfor name in ('pandas', 'pyarrow'):\n    sys.modules[name] = None  # not installed by .[report]\n"
    )
    for code in blocks:
        done = subprocess.run(
            [sys.executable, "-c", hide + code], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, code + done.stderr[-2000:]
        assert "nDCG@10" in done.stdout and "bm25" in done.stdout  # print(result) shows the numbers


def _tour_files(folder: Path) -> None:
    """The files the tour names, from the bundled example: its qrels and runs under the tour's names,
    its query and passage texts, the RAG guide's two sample sets (ctxeval demo --samples), and span
    labels with a chunk table (each passage a document of one chunk; the evidence: the passages
    graded 4 or 5, whole)."""
    import json
    import shutil

    from ctxeval._demo import example_path
    from ctxeval._planted import guide_samples

    names = {"qrels.txt": "qrels.txt", "bm25.run": "runs/bm25.run", "rerank.run": "runs/bm25-rerank.run",
             "dense.run": "runs/rrf.run", "main.run": "runs/rrf.run", "new.run": "runs/rrf-rerank.run",
             "q.jsonl": "queries.jsonl", "p.jsonl": "passages.jsonl", "docs.jsonl": "passages.jsonl"}  # fmt: skip
    for name, source in names.items():
        shutil.copy(example_path(source), folder / name)
    guide_samples(folder)
    texts = {}
    for line in example_path("passages.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        texts[rec["doc_id"]] = rec["text"]
    chunks = [{"chunk_id": d, "doc_id": d, "start": 0, "end": len(t), "text": t} for d, t in texts.items()]
    (folder / "chunks.jsonl").write_text("".join(json.dumps(c) + "\n" for c in chunks), encoding="utf-8")
    spans = [
        {"query_id": q, "doc_id": d, "start": 0, "end": len(texts[d])}
        for q, _, d, g in (ln.split() for ln in example_path("qrels.txt").read_text().splitlines() if ln.strip())
        if int(g) >= 4
    ]
    (folder / "spans.jsonl").write_text("".join(json.dumps(s) + "\n" for s in spans), encoding="utf-8")


#: what each extra installs that the README's first install (.[report]) does not
_EXTRA_MODULES = {"pandas": ("pandas", "pyarrow"), "judge": ("httpx",)}


@pytest.mark.slow  # 14 commands in fresh processes (about 30 s), two judging 1,000 pairs on a local server
def test_every_command_of_the_tour_runs_with_the_install_it_shows(tmp_path: Path) -> None:
    """Each command of the README's tour, in order, in a fresh process on the bundled example's files
    under the tour's names, with only what the install it shows brings: the quick start's '.[report]'
    (pandas, pyarrow and httpx absent), plus the extras a comment above the command names ('.[judge]'
    for the judge). The judge talks to a scripted OpenAI-compatible server on 127.0.0.1 (URL, NAME)."""
    import json
    import shlex
    import subprocess
    import sys
    import zlib

    from judge_server import Server, chat, fenced

    _tour_files(tmp_path)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## A short tour", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]

    def grade(body: dict, n: int) -> object:  # a grade of 1-5 from the passage, the same every time
        return chat(json.dumps({"grade": 1 + zlib.crc32(fenced(body, "passage").encode()) % 5}))

    ran = []
    extras: set[str] = set()
    with Server(grade) as server:
        commented = False  # the comment lines above a command are read together
        for line in block.splitlines():
            if line.startswith("#"):
                extras = (extras if commented else set()) | set(re.findall(r"install -e '\.\[(\w+)\]'", line))
                commented = True
                continue
            commented = False
            if not line.startswith("ctxeval "):
                continue
            argv = [server.url if a == "URL" else "scripted" if a == "NAME" else a
                    for a in shlex.split(line.split("  #")[0])[1:]]  # fmt: skip
            hidden = [m for extra, mods in _EXTRA_MODULES.items() if extra not in extras for m in mods]
            code = (
                "import sys\n"
                f"for name in {hidden!r}:\n    sys.modules[name] = None  # not installed\n"
                f"from ctxeval._cli import main\nsys.exit(main({argv!r}))\n"
            )
            env = {**os.environ, "CTXEVAL_CACHE_DIR": str(tmp_path / "cache")}
            done = subprocess.run(
                [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600, env=env
            )
            assert done.returncode == 0, (line, done.stderr[-2000:])
            assert "Traceback" not in done.stderr and "Warning" not in done.stderr, (line, done.stderr[-2000:])
            ran.append(argv[0])
    assert len(ran) == sum(ln.startswith("ctxeval ") for ln in block.splitlines()) >= 12
    assert {"labels", "judge", "agreement", "snapshot", "gate"} <= set(ran)
    # what the new lines produced: the merged labels keep their sidecar; the span measures read the spans
    assert (tmp_path / "all.qrels.labels.json").is_file() and (tmp_path / "baseline.json").is_file()


@pytest.mark.slow  # about 20 s
def test_the_quick_start_s_demo_runs_with_its_install(tmp_path: Path) -> None:
    """``ctxeval demo`` with only what '.[report]' installs (no pandas, pyarrow or httpx): exit 0, the
    report and the policy written, no warning."""
    import subprocess
    import sys

    hidden = [m for mods in _EXTRA_MODULES.values() for m in mods]
    code = f"import sys\nfor name in {hidden!r}:\n    sys.modules[name] = None\nfrom ctxeval._cli import main\nsys.exit(main(['demo']))\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr[-2000:]
    assert (tmp_path / "ctxeval-report.html").is_file() and (tmp_path / "ctxeval-policy.json").is_file()
