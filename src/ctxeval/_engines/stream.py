"""The stream engine: each run file read in chunks of whole queries (:mod:`ctxeval._io.stream`), each
chunk a block evaluated against the qrels held in memory. Every per-query value depends on its query
alone and the global statistics come from the qrels, so the values equal the local engine's exactly
(a differential test checks it). Peak memory is the qrels, one chunk and what the verb keeps per
query.

Judged queries the run lacks are known only at the end: they are one more block, scored as the local
engine scores them (``missing="zero"``: an empty ranking), left out (``ignore``) or an error. The
retrieval pool (``rag.pool``) is held whole; one pool per run (``rag.pools``) is not streamed.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._core.evaldata import QueryAccounting
from .._errors import ConfigError
from .._io.model import Run, _stem, split_named
from .._io.read import resolve_duplicates
from .._io.source import local_copy
from .._io.stream import auto_chunk_bytes, run_chunks, sort_run, text_size
from .._policies import Policies
from .base import Capabilities, Engine, Job, Provider
from .blocks import Block, Mapped, merge
from .shared import block_session, empty_block, finish, missing_block

__all__ = ["WHOLE_FACTOR", "StreamEngine", "StreamRun"]

#: reading a run whole costs about this many times its text in memory (``bench/stream_memory.py``):
#: ``sort_first`` reads a run whole when that fits in the memory available
WHOLE_FACTOR = 4


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (Linux), else None (then the run is sorted out of core)."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class StreamRun:
    """A run file the stream engine reads in chunks: its (local) path, the name given (else its one
    tag, else its file's name, known once it is read) and the name errors give it."""

    path: str
    source: str
    given: str | None = None
    samples: None = None  #: (a sample set is no run file)
    dropped_duplicates: int = 0

    @property
    def name(self) -> str:
        """The name before the run is read: the one given, else its file's."""
        return self.given or _stem(self.source)

    def with_name(self, name: str) -> StreamRun:
        return replace(self, given=name)


class StreamEngine(Provider):
    """Each run file read in chunks of whole queries (see the module docstring). ``chunk_bytes``
    (default: an eighth of the run's text, between 1 and 64 MiB, which keeps the peak below the local
    engine's) bounds the memory; ``chunk_rows`` the rows of a Parquet chunk; ``sort_first`` groups an
    ungrouped run first: read whole when it fits in the memory available, else sorted out of core."""

    name = "stream"
    capabilities = Capabilities(
        sample_sets=False,
        run_values=False,
        per_run_pools=False,
        side_data=frozenset(
            {"grades", "pool", "utility", "fits", "scores", "subtopics", "groups", "chunks", "spans", "ceiling"}
        ),
        why={
            "samples": "a sample set is read whole",
            "fairness": "the notes on a run's groups are counted over the whole run",
        },
    )

    def __init__(self, chunk_bytes: int | None = None, chunk_rows: int = 2_000_000, sort_first: bool = False) -> None:
        if chunk_bytes is not None and chunk_bytes < 1:
            raise ConfigError(f"chunk_bytes must be >= 1, got {chunk_bytes}")
        self.chunk_bytes, self.chunk_rows, self.sort_first = chunk_bytes, chunk_rows, sort_first
        self.used: dict[str, int | None] = {}  #: the chunk size each run was read with (None: read whole)

    @classmethod
    def from_settings(cls, settings: Engine) -> StreamEngine:
        return cls(None if settings.chunk_mb is None else settings.chunk_mb << 20, sort_first=settings.sort_first)

    def read(self, runs: Sequence[Any], policies: Policies) -> list[Any]:
        return [self._handle(r) for r in runs]

    def _handle(self, run: Any) -> StreamRun:
        if isinstance(run, StreamRun):
            return run
        if not isinstance(run, (str, os.PathLike)):
            raise ConfigError(
                "the stream engine evaluates one run file at a time (a path), not sample sets, frames or dicts: "
                "use the local engine"
            )
        given, path = split_named(run) if isinstance(run, str) else (None, os.fspath(run))
        copy = local_copy(path, path, "run")  # "-" or a pipe: read once, into a file
        local = os.fspath(copy.__enter__())
        handle = StreamRun(local, path, given)
        if local != path:
            weakref.finalize(handle, copy.__exit__, None, None, None)
        return handle

    def blocks(self, session: Any, run: StreamRun, job: Job) -> Mapped:
        pol = session.policies
        notes: list[str] = []
        held = session.settings.pool
        if held is not None:
            notes.append(
                f"{held.source}: the retrieval pool is held in memory ({len(held)} rows): streaming bounds the "
                "run's memory, not the pool's"
            )
        whole = self._whole(run, pol, notes)
        chunked = block_session(session)
        label = whole.name if whole is not None else run.given or _stem(run.source)
        parts: list[Block] = []
        accs: list[QueryAccounting] = []
        seen: set[str] = set()
        tags: set[str | None] = set()
        dropped = whole.dropped_duplicates if whole is not None else 0
        sorted_path = sort_run(run.path) if self.sort_first and whole is None else None
        try:
            for cols, tag, n_dropped in self._chunks(run, sorted_path, whole, pol):
                tags.add(tag)
                dropped += n_dropped
                data = chunked.prepare(
                    Run(cols, label, run.source), job.measures, keep_rows=job.keep_rows, extras=job.extras, notes=[]
                )
                parts.append(job.fn(chunked, data))
                accs.append(data.accounting)
                seen.update(data.qids)
        finally:
            if sorted_path is not None:
                os.unlink(sorted_path)
        if whole is None and run.given is None and len(tags) == 1 and None not in tags:
            label = str(next(iter(tags)))  # one tag throughout names the run, as for a run read whole
        missing = [q for q in session.qrels.columns.layout.heads.tolist() if q not in seen]
        acc, said = finish(session, label, run.source, accs, missing)
        if missing and pol.missing == "zero":
            parts.append(missing_block(session, job, missing, label, run.source))
        if not parts:
            parts.append(empty_block(session, job, label, run.source))
        return Mapped(label, run.source, dropped, acc, merge(parts), run, notes + said)

    def _whole(self, run: StreamRun, pol: Policies, notes: list[str]) -> Run | None:
        """With ``sort_first``, the run read whole when that fits in the memory available (sorting it
        out of core costs several times the local engine's time and memory; the values are the same)."""
        self.used[run.source] = self.chunk_bytes or auto_chunk_bytes(run.path)
        if not self.sort_first or run.source.lower().endswith(".parquet"):
            return None
        size, free = text_size(run.path), available_memory()
        if free is None or size * WHOLE_FACTOR > free:
            return None
        self.used[run.source] = None
        notes.append(
            f"{run.source}: --sort-first read the run whole ({size / 2**20:.0f} MiB of text, "
            f"{free / 2**20:.0f} MiB of memory available): it fits, and reading it whole is faster and "
            "smaller than sorting it out of core"
        )
        name = run.given or (None if run.path == run.source else _stem(run.source))
        return Run.from_file(run.path, name=name, duplicates=pol.duplicates, columns=pol.columns)

    def _chunks(
        self, run: StreamRun, sorted_path: Any, whole: Run | None, pol: Policies
    ) -> Iterator[tuple[Any, str | None, int]]:
        """(columns, tag, duplicate rows dropped) of every chunk of whole queries, in file order."""
        if whole is not None:
            yield whole.columns, whole.name, 0
            return
        chunk_bytes = self.used[run.source] or 1
        for chunk in run_chunks(
            sorted_path or run.path,
            chunk_bytes=chunk_bytes,
            chunk_rows=self.chunk_rows,
            renames=pol.renames("run"),
            source=run.source,
        ):
            cols, n_dropped = resolve_duplicates(chunk.columns, "run", run.source, pol.duplicates)
            yield cols, chunk.tag, n_dropped

    def describe(self) -> dict[str, Any]:
        sizes = list(self.used.values())
        out: dict[str, Any] = {
            "chunk_bytes": sizes[0] if len(set(sizes)) == 1 else sizes,
            "sort_first": self.sort_first,
        }
        if sizes and all(s is None for s in sizes):
            out["read_whole"] = True
        return {"streamed": out}
