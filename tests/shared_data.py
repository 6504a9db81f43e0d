"""Where the data from public repositories lives: ``../shared/data`` beside the repository (CI's
layout), or two levels up (a git worktree under ``wt/``); tests that read it skip, saying why, where
it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared_data() -> Path | None:
    for base in (ROOT.parent, ROOT.parent.parent):
        if (base / "shared" / "data").is_dir():
            return base / "shared" / "data"
    return None


def real(*parts: str) -> Path:
    """``shared/data/real/<parts>``, or skip the test when it is absent."""
    data = shared_data()
    path = data.joinpath("real", *parts) if data is not None else None
    if path is None or not path.exists():
        pytest.skip(
            f"no {'/'.join(('real', *parts))} under ../shared/data (the public-data folder beside the repository)"
        )
    return path
