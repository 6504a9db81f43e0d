"""Where the tests find ../shared/data (public data sets, each folder's README gives origin and licence):
beside the repository, beside the checkout holding a worktree, or at $CTXEVAL_SHARED."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def shared_real() -> Path | None:
    """../shared/data/real beside the repository (or beside the checkout holding this worktree)."""
    for base in (os.environ.get("CTXEVAL_SHARED"), ROOT.parent / "shared", ROOT.parent.parent / "shared"):
        if base and (Path(base) / "data" / "real" / "dl20").is_dir():
            return Path(base) / "data" / "real"
    return None
