"""``evaluate`` over a run larger than memory: the run read in chunks of whole queries
(:mod:`ctxeval._io.stream`), each chunk evaluated against the qrels held in memory, the per-query
values concatenated. Every per-query measure depends on its query alone, and the global statistics
(the grade scale) come from the qrels, so the values equal the in-memory path's
exactly (a differential test checks it). Peak memory is the qrels, one chunk and the per-query values.

Judged queries the run lacks are known only at the end: they are scored as the in-memory path scores
them (``missing="zero"``: an evaluation of an empty run), left out (``ignore``) or an error. The
retrieval pool (``rag.pool``) is read whole; one pool per run (``rag.pools``) is not streamed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._context.settings import RagConfig
from ._core.evaldata import QueryAccounting
from ._core.join import missing_error
from ._errors import ConfigError
from ._evaluate import Result, RunResult, evaluate, evaluate_runs
from ._io.model import Run, _stem
from ._io.read import resolve_duplicates
from ._io.source import local_copy
from ._io.stream import auto_chunk_bytes, run_chunks, sort_run, text_size
from ._measures import Measure
from ._policies import Policies
from ._session import open_session, overlap_check

__all__ = ["evaluate_stream"]

#: reading a run whole costs about this many times its text in memory (``bench/stream_memory.py``):
#: ``sort_first`` reads a run whole when that fits in the memory available
WHOLE_FACTOR = 4


def _available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (Linux), else None (then the run is sorted out of core)."""
    try:
        with open("/proc/meminfo", "rb") as fh:
            for line in fh:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def evaluate_stream(
    qrels: Any,
    run: str | os.PathLike[str],
    measures: Iterable[str | Measure] | str | Measure,
    *,
    name: str | None = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    utility: Any = None,
    chunk_bytes: int | None = None,
    chunk_rows: int = 2_000_000,
    sort_first: bool = False,
) -> Result:
    """:func:`ctxeval.evaluate` of one run file read in chunks of whole queries (see the module
    docstring). ``chunk_bytes`` (default: an eighth of the run's text, between 1 and 64 MiB, which
    keeps the peak below the in-memory path's) bounds the memory; ``sort_first`` groups an ungrouped
    run first: read whole when it fits in the memory available, else sorted out of core.

    Streaming pays only for a run whose in-memory reading does not fit (about 0.6 times its text with
    the classical measures, 2.5 times with measures that keep every ranked row, such as PROC or
    RA-nWG): below that, the in-memory path is faster for the same values."""
    source = os.fspath(run)
    with local_copy(source, source, "run") as local:  # "-" or a pipe: read once, into a file
        read = _Read(os.fspath(local), source, name, chunk_bytes, chunk_rows, sort_first)
        return _evaluate_stream(qrels, read, measures, Policies.coerce(policies), rag, utility)


@dataclass(frozen=True)
class _Read:
    """How the run is read: its (local) path, the name errors give it, and the streaming settings."""

    path: str
    source: str
    name: str | None
    chunk_bytes: int | None
    chunk_rows: int
    sort_first: bool


def _evaluate_stream(qrels: Any, read: _Read, measures: Any, pol: Policies, rag: Any, utility: Any) -> Result:
    path, source, name = read.path, read.source, read.name
    chunk_bytes, chunk_rows, sort_first = read.chunk_bytes, read.chunk_rows, read.sort_first
    chunk_bytes = auto_chunk_bytes(path) if chunk_bytes is None else chunk_bytes
    if sort_first and not source.lower().endswith(".parquet"):
        size, free = text_size(path), _available_memory()
        if free is not None and size * WHOLE_FACTOR <= free:
            # sorting out of core costs several times the in-memory path's time and memory: a run that
            # fits is read whole, which needs no grouping; the values are the same
            res = evaluate(
                qrels,
                Run.from_file(
                    path,
                    name=name or (None if path == source else _stem(source)),
                    duplicates=pol.duplicates,
                    columns=pol.columns,
                ),
                measures,
                policies=pol,
                rag=rag,
                utility=utility,
            )
            res.notes.append(
                f"{source}: --sort-first read the run whole ({size / 2**20:.0f} MiB of text, "
                f"{free / 2**20:.0f} MiB of memory available): it fits, and reading it whole is faster and "
                "smaller than sorting it out of core"
            )
            res.settings["streamed"] = {"chunk_bytes": None, "sort_first": True, "read_whole": True}
            return res
    if RagConfig.coerce(rag).pools:
        raise ConfigError("streaming evaluates one run: give its pool as rag.pool (--pool POOL), not rag.pools")
    chunk_pol = replace(pol, missing="ignore", overlap="any")
    session, _ = open_session(qrels, [], measures, policies=chunk_pol, rag=rag, utility=utility)
    sorted_path = sort_run(path) if sort_first else None
    label = name or _stem(source)
    qids: list[np.ndarray] = []
    parts: dict[Any, list[np.ndarray]] = {}
    evaluated = unjudged = beyond = dropped = 0
    unjudged_ids: list[str] = []
    tags: set[str | None] = set()
    pool: dict[str, int] | None = None
    ties: dict[str, int] | None = (
        {"tie_groups": 0, "tied_rows": 0, "queries_with_ties": 0} if pol.ties == "expected" else None
    )
    ms: list[Any] = []
    notes: list[str] = []
    held = session.settings.pool
    if held is not None:
        notes.append(
            f"{held.source}: the retrieval pool is held in memory ({len(held)} rows): streaming bounds the "
            "run's memory, not the pool's"
        )
    last_settings: dict[str, Any] = {}
    try:
        for chunk in run_chunks(
            sorted_path or path,
            chunk_bytes=chunk_bytes,
            chunk_rows=chunk_rows,
            renames=pol.renames("run"),
            source=source,
        ):
            tags.add(chunk.tag)
            cols, n_dropped = resolve_duplicates(chunk.columns, "run", source, pol.duplicates)
            res = evaluate_runs(session, [Run(cols, label, source)], session.measures)
            rr = res.runs[0]
            last_settings = res.settings
            if rr.pool is not None:
                pool = {k: (pool or {}).get(k, 0) + int(v) for k, v in rr.pool.items()}
            ms = res.measures
            notes.extend(n for n in res.notes if n not in notes and not n.startswith(f"{label}:"))
            qids.append(np.asarray(rr.qids, dtype=object))
            for m in ms:
                parts.setdefault(m, []).append(rr.values[m])
                if rr.extremes is not None:  # ties="expected": the best and worst orders beside them
                    parts.setdefault(("best", m), []).append(rr.extremes[m][0])
                    parts.setdefault(("worst", m), []).append(rr.extremes[m][1])
            if rr.ties is not None:
                ties = {k: (ties or {}).get(k, 0) + v for k, v in rr.ties.items()}
            evaluated += rr.accounting.evaluated
            unjudged += rr.accounting.unjudged
            if len(unjudged_ids) < 5:
                unjudged_ids.extend(rr.accounting.unjudged_ids[: 5 - len(unjudged_ids)])
            beyond += rr.accounting.beyond_float32
            dropped += n_dropped
    finally:
        if sorted_path is not None:
            os.unlink(sorted_path)
    seen = set().union(*(set(q.tolist()) for q in qids)) if qids else set()
    judged = session.qrels.columns.layout.heads.tolist()
    missing = tuple(q for q in judged if q not in seen)
    if missing and pol.missing == "error":
        raise missing_error(label, missing)
    if name is None and len(tags) == 1 and None not in tags:
        label = str(next(iter(tags)))  # one tag throughout names the run, as for a run read whole
    acc = QueryAccounting(
        evaluated,
        len(missing),
        unjudged,
        pol.missing,
        missing_ids=missing,
        unjudged_ids=tuple(unjudged_ids),
        beyond_float32=beyond,
    )
    if pol.overlap == "require":
        note = overlap_check(label, acc, source)
        if note:
            notes.append(note)
    if missing and pol.missing == "zero":
        zero = replace(session, policies=replace(chunk_pol, missing="zero"))
        empty = evaluate_runs(zero, [Run.empty(label, source)], session.measures).runs[0]
        ms = ms or list(empty.values)
        where = {q: i for i, q in enumerate(empty.qids)}
        pick = np.array([where[q] for q in missing], dtype=np.int64)
        qids.append(np.asarray(missing, dtype=object))
        for m in ms:
            parts.setdefault(m, []).append(empty.values[m][pick])
            if ties is not None:
                parts.setdefault(("best", m), []).append(empty.values[m][pick])
                parts.setdefault(("worst", m), []).append(empty.values[m][pick])
    all_q = np.concatenate(qids) if qids else np.zeros(0, dtype=object)
    order = sorted(range(all_q.size), key=lambda i: str(all_q[i]).encode("utf-8"))

    def merged(key: Any) -> np.ndarray:
        return np.concatenate(parts[key])[order] if parts.get(key) else np.zeros(0)

    values = {m: merged(m) for m in ms}
    extremes = {m: (merged(("best", m)), merged(("worst", m))) for m in ms} if ties is not None else None
    rr = RunResult(
        label, source, [all_q[i] for i in order], values, acc, dropped, pool=pool, extremes=extremes, ties=ties
    )
    settings = dict(last_settings or session.describe())
    settings["missing"] = pol.missing
    if pol.overlap == "require":
        settings.pop("overlap", None)
    settings["streamed"] = {"chunk_bytes": chunk_bytes, "sort_first": sort_first}
    return Result(ms, [rr], settings, notes)
