"""What the engines that read a run in blocks share: the judged queries a run lacks scored as the
local engine scores them, a block for a run that holds none, and the run's accounting and overlap
check once every block is read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .._core.evaldata import QueryAccounting
from .._core.join import missing_error
from .._io.model import Run
from .base import Job
from .blocks import Block, merge_accounting, overlap_check

__all__ = ["block_session", "empty_block", "finish", "missing_block"]


def block_session(session: Any, missing: str = "ignore") -> Any:
    """The session a block is prepared with: the judged queries a block lacks are another block's
    (``missing``), and the overlap with the qrels is checked on the whole run (:func:`finish`)."""
    return replace(session, policies=replace(session.policies, missing=missing, overlap="any"), notes=[])


def missing_block(session: Any, job: Job, missing: Sequence[str], name: str, source: str) -> Block:
    """The judged queries a run lacks, scored as the local engine scores them (``missing="zero"``:
    an empty ranking), with their side data."""
    zero = block_session(session.on(session.qrels.queries(missing)), "zero")
    data = zero.prepare(Run.empty(name, source), job.measures, keep_rows=job.keep_rows, extras=job.extras, notes=[])
    return job.fn(zero, data)


def empty_block(session: Any, job: Job, name: str, source: str) -> Block:
    """The block of a run that holds no evaluated query (every array of the verb's, empty)."""
    return missing_block(session, job, (), name, source)


def finish(
    session: Any, name: str, source: str, parts: Sequence[QueryAccounting], missing: Sequence[str], samples: Any = None
) -> tuple[QueryAccounting, list[str]]:
    """A run's accounting from its blocks' and the judged queries it lacks (sorted), refused as the
    local engine refuses them (``missing="error"``, no query shared), and the note of a small overlap."""
    pol = session.policies
    missing = sorted(missing)
    if missing and pol.missing == "error":
        raise missing_error(name, tuple(missing))
    acc = merge_accounting(parts, pol.missing, missing)
    notes = []
    # a sample set's run and judgments come from the same samples (see Session.prepare)
    if pol.overlap == "require" and (samples is None or acc.evaluated):
        note = overlap_check(name, acc, source)
        if note:
            notes.append(note)
    return acc, notes
