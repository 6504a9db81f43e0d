"""The README and the site's home page give the same quick start, of exactly two commands, and every
page the README links to exists (the README is the pitch, the quick start, a tour and the links)."""

from __future__ import annotations

import re
from pathlib import Path

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
