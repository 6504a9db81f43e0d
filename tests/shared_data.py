"""Where the shared data of other projects lives (``../shared/data`` beside the repository, see the
brief): found beside this checkout, or beside the main checkout when this one is a git worktree;
tests skip, saying why, where it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _roots() -> list[Path]:
    roots = [ROOT]
    git = ROOT / ".git"
    if git.is_file():  # a worktree: "gitdir: <main>/.git/worktrees/<name>"
        text = git.read_text(encoding="utf-8").strip()
        if text.startswith("gitdir:"):
            roots.append(Path(text.split(":", 1)[1].strip()).parents[2])
    return roots


def shared_data(*parts: str) -> Path:
    """The path ``../shared/data/<parts>``; skips the test when it is absent."""
    for root in _roots():
        path = root.parent / "shared" / "data" / Path(*parts)
        if path.exists():
            return path
    pytest.skip(
        f"../shared/data/{'/'.join(parts)} is absent (the shared data of other projects is not beside this checkout)"
    )
