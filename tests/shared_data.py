"""Data from other projects' public repositories, kept outside the tree in ``../shared/data`` (each
folder's README gives its origin and licence). Tests find it beside the repository (or beside the
folder that holds a worktree of it) and skip, saying why, where it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

__all__ = ["shared_data"]

ROOT = Path(__file__).resolve().parent.parent


def shared_data(name: str) -> Path:
    """``../shared/data/<name>`` (looked for beside the repository, then one folder up); the test
    is skipped, with the places looked at, when it is not there."""
    tried = []
    for base in (ROOT.parent, ROOT.parent.parent):
        path = base / "shared" / "data" / name
        tried.append(str(path))
        if path.is_dir():
            return path
    reason = f"shared data {name!r} not found (looked in {', '.join(tried)}): it lives outside the tree"
    print(reason)
    pytest.skip(reason)
