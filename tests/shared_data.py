"""Where the tests find data that came from other projects: never in this tree, only in the shared
folder beside the repository (``../shared/data``, relative to the repository's root, or beside the main
checkout when this one is a git worktree), or where ``CTXEVAL_SHARED_DATA`` (the ``data`` folder) or
``CTXEVAL_TREC_EVAL_DATA`` (trec_eval's folder alone) point. A test that needs such data takes it
through :func:`shared_data` (skipped, saying why, when absent), :func:`trec_eval_data` or the marker
:data:`needs_trec_eval`.

trec_eval's folder holds trec_eval's own ``test/`` files (10.0, and ``v9.0.8/``), its licence notice,
and ``recorded/``: what the 10.0 and 9.0.8 binaries printed for the cases of ``tests/trec_eval_cases.py``
(its README says how each was made). The project's own generated inputs are in this tree
(``tests/data/trec_eval``: see :data:`OURS`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the project's own generated inputs for trec_eval (recorded outputs of them live in the shared folder)
OURS = ROOT / "tests" / "data" / "trec_eval"


def _roots() -> list[Path]:
    """This checkout, and the main checkout when this one is a git worktree."""
    roots = [ROOT]
    git = ROOT / ".git"
    if git.is_file():  # a worktree: "gitdir: <main>/.git/worktrees/<name>"
        text = git.read_text(encoding="utf-8").strip()
        if text.startswith("gitdir:"):
            roots.append(Path(text.split(":", 1)[1].strip()).parents[2])
    return roots


def shared_folder() -> Path:
    """The shared data folder: ``$CTXEVAL_SHARED_DATA``, else ``../shared/data`` beside the repository
    (or beside the main checkout of a worktree); it may be absent."""
    env = os.environ.get("CTXEVAL_SHARED_DATA")
    if env:
        return Path(env)
    candidates = [root.parent / "shared" / "data" for root in _roots()]
    return next((c for c in candidates if c.is_dir()), candidates[0])


def shared_data(*parts: str) -> Path:
    """The path ``<shared data>/<parts>``; skips the test, saying where it looked, when it is absent."""
    path = shared_folder().joinpath(*parts)
    if not path.exists():
        pytest.skip(
            f"{path} is absent (the shared data of other projects lives outside the tree, in ../shared/data; "
            "set CTXEVAL_SHARED_DATA to point elsewhere)"
        )
    return path


def trec_eval_folder() -> Path:
    """trec_eval's data folder: ``$CTXEVAL_TREC_EVAL_DATA``, else ``trec_eval`` in the shared folder."""
    env = os.environ.get("CTXEVAL_TREC_EVAL_DATA")
    return Path(env) if env else shared_folder() / "trec_eval"


def trec_eval_missing() -> str | None:
    """Why trec_eval's data cannot be used (None when it can)."""
    folder = trec_eval_folder()
    if (folder / "qrels.test").is_file() and (folder / "recorded" / "exit_status.json").is_file():
        return None
    return (
        f"trec_eval's test files and recordings are not at {folder} (they live outside the project, in "
        "../shared/data/trec_eval; set CTXEVAL_TREC_EVAL_DATA or CTXEVAL_SHARED_DATA to point elsewhere)"
    )


#: marks a test that reads trec_eval's files: skipped, saying where they were looked for, without them
needs_trec_eval = pytest.mark.skipif(trec_eval_missing() is not None, reason=str(trec_eval_missing()))


def trec_eval_data() -> Path:
    """trec_eval's data folder (it may be absent: mark the tests that read it with :data:`needs_trec_eval`)."""
    return trec_eval_folder()
