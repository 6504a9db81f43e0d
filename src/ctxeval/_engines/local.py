"""The local engine: every run read whole in this process, one block per run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._io.model import Run
from .._policies import Policies
from .base import Engine, Job, Provider
from .blocks import Mapped

__all__ = ["LocalEngine"]


class LocalEngine(Provider):
    """Every run read whole; its blocks are one block, the whole run (see :mod:`.base`)."""

    name = "local"

    @classmethod
    def from_settings(cls, settings: Engine) -> LocalEngine:
        return cls()

    def read(self, runs: Sequence[Any], policies: Policies) -> list[Any]:
        return [Run.coerce(r, duplicates=policies.duplicates, columns=policies.columns) for r in runs]

    def blocks(self, session: Any, run: Run, job: Job) -> Mapped:
        notes: list[str] = []
        data = session.prepare(run, job.measures, keep_rows=job.keep_rows, extras=job.extras, notes=notes)
        block = job.fn(session, data)
        return Mapped(run.name, run.source, run.dropped_duplicates, data.accounting, block, run, notes)
