"""Where the public data of other projects lives: ``../shared/data`` beside the repository (as CI lays it
out), or the folder ``CTXEVAL_SHARED`` names. Never copied into the tree; a test that needs it skips,
saying why, when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def shared() -> Path | None:
    """The shared folder (holding ``data/``), or None."""
    for base in (os.environ.get("CTXEVAL_SHARED"), ROOT.parent / "shared"):
        if base and (Path(base) / "data").is_dir():
            return Path(base)
    return None


def real(*parts: str) -> Path:
    """A path under ``shared/data/real``; skips the calling test when it is not there."""
    base = shared()
    path = base / "data" / "real" / Path(*parts) if base is not None else None
    if path is None or not path.exists():
        pytest.skip(
            f"needs ../shared/data/real/{'/'.join(parts)} (public data kept outside the project; "
            "CTXEVAL_SHARED names another folder)"
        )
    return path
