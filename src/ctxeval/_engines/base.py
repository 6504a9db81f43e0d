"""Engines: where a session's per-query values are computed, providers under the session (as
ir_measures' providers and httpx's transports are).

An engine is chosen once, when a session opens (``engine=`` of every verb that evaluates; ``--engine``
and ``--stream`` on the command line). Every engine answers one protocol, :class:`Provider`: what it
can do (:class:`Capabilities`, checked against the settings before anything is read, a lack refused in
one line naming the engine and what it lacks), whether it is available (what it needs, with how to
install it), how it holds a run (the local engine reads it; the others keep a handle and read it
their way) and the blocks of a run (:meth:`Provider.blocks`): a verb's block function applied to
blocks of whole queries, merged in query-id order (:mod:`.blocks`). A verb never knows which engine
computed what it reduces.

* ``local`` (the default): in this process, every run read whole.
* ``stream``: each run file read in chunks of whole queries, for runs larger than memory; ``chunk_mb``
  sets the chunk (default: a size that never costs more memory than reading the run whole) and
  ``sort_first`` groups an unsorted run out of core first.
* ``spark``: on Spark (``pip install 'ctxeval[spark]'``, Java 17); ``master`` is the master URL
  (default ``local[*]``).

A verb takes ``engine="spark"``, a mapping of the fields, an :class:`Engine` or a provider itself.

>>> Engine.coerce("spark")
Engine(name='spark', master=None, chunk_mb=None, sort_first=False)
>>> Engine.coerce({"name": "spark", "master": "local[2]"}).master
'local[2]'
>>> Engine.coerce({"name": "stream", "chunk_mb": 16}).chunk_mb
16
>>> Engine.coerce("gpu")
Traceback (most recent call last):
ctxeval.ConfigError: engine must be one of 'local', 'stream', 'spark', got 'gpu'
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from .._policies import Policies, coerce_settings
from .blocks import BlockFn, Mapped

__all__ = ["ENGINES", "Capabilities", "Engine", "Job", "Provider", "provider"]

ENGINES = ("local", "stream", "spark")

#: where each engine's provider lives (imported when the engine is chosen: a small run never loads Spark's)
_PROVIDERS = {
    "local": "ctxeval._engines.local:LocalEngine",
    "stream": "ctxeval._engines.stream:StreamEngine",
    "spark": "ctxeval._engines.spark.engine:SparkEngine",
}


@dataclass(frozen=True)
class Engine:
    """The engine's name; for Spark the master URL; for streaming the chunk size (MiB) and whether
    to sort an ungrouped run out of core first."""

    name: str = "local"
    master: str | None = None
    chunk_mb: int | None = None
    sort_first: bool = False

    def __post_init__(self) -> None:
        if self.name not in ENGINES:
            raise ConfigError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {self.name!r}")
        if self.master is not None and (not isinstance(self.master, str) or not self.master):
            raise ConfigError(f"the engine's master must be a URL such as 'local[2]', got {self.master!r}")
        if self.master is not None and self.name != "spark":
            raise ConfigError(f"a master URL is for the spark engine, not {self.name!r}")
        if (self.chunk_mb is not None or self.sort_first) and self.name != "stream":
            raise ConfigError(f"chunk_mb and sort_first are for the stream engine, not {self.name!r}")
        if self.chunk_mb is not None and (
            isinstance(self.chunk_mb, bool) or not isinstance(self.chunk_mb, int) or self.chunk_mb < 1
        ):
            raise ConfigError(f"chunk_mb must be a whole number of MiB >= 1, got {self.chunk_mb!r}")

    @classmethod
    def coerce(cls, value: Engine | str | Mapping[str, Any] | None) -> Engine:
        """An :class:`Engine` from itself, its name, a mapping of its fields, or None (local)."""
        if isinstance(value, str):
            return cls(value)
        return coerce_settings(cls, value, "engine settings")


#: what each side data is, for a refusal (the side data an engine lacks, by provider name)
_SIDE_DATA = {
    "fairness": "fairness groups (rag.fair_groups, --fair-groups)",
    "groups": "doc groups (rag.groups, --groups)",
    "chunks": "chunk tables (rag.chunks, --chunks)",
    "spans": "span labels",
    "ceiling": "span labels",
    "subtopics": "subtopic qrels (the diversity measures)",
    "samples": "a sample set's facets, citations and nuggets",
    "judged": "a judge's claims in a sample set",
    "similarity": "the texts of a sample set (text similarity)",
    "containment": "the texts of a sample set (text containment)",
}


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do. ``sample_sets``: it evaluates sample sets; ``run_values``: runs given
    as values in memory (dicts, frames, :class:`~ctxeval.Run` objects), not only files; ``ties`` and
    ``duplicates``: the ranking and duplicate rules it honours (None: all); ``columns``: the
    ``columns`` setting of tabular runs; ``per_run_pools``: a pool per run (``rag.pools``);
    ``side_data``: the side data it builds (None: all, :mod:`ctxeval._context`); ``why``: why it
    lacks what it lacks, by the setting's name (``ties=<rule>`` for a ranking rule)."""

    sample_sets: bool = True
    run_values: bool = True
    ties: frozenset[str] | None = None
    duplicates: frozenset[str] | None = None
    columns: bool = True
    per_run_pools: bool = True
    side_data: frozenset[str] | None = None
    why: Mapping[str, str] | None = None

    def lacking(self, policies: Policies, rag: Any, side_data: Iterable[str], samples: bool) -> str | None:
        """What the settings ask for that the engine cannot do (None: nothing), in words."""
        why = dict(self.why or {})

        def said(key: str, text: str) -> str:
            return f"{text} ({why[key]})" if key in why else text

        if samples and not self.sample_sets:
            return said("samples", "evaluates run files, not sample sets")
        if self.ties is not None and policies.ties not in self.ties:
            return said(f"ties={policies.ties}", f"cannot rank by ties={policies.ties!r}")
        if self.duplicates is not None and policies.duplicates not in self.duplicates:
            return said("duplicates", f"cannot keep a repeated pair by duplicates={policies.duplicates!r}")
        if policies.columns and not self.columns:
            return said("columns", "reads its runs' columns by their usual names, not by the columns setting")
        if rag is not None and rag.pools and not self.per_run_pools:
            return said("pools", "takes one shared pool (rag.pool, --pool POOL), not a pool per run")
        if self.side_data is not None:
            lacks = sorted(set(side_data) - self.side_data)
            if lacks:
                return said(lacks[0], f"cannot build {_SIDE_DATA.get(lacks[0], lacks[0])}")
        return None


@dataclass(frozen=True)
class Job:
    """What a verb asks of a run's blocks: the measures (their side data is built), the block
    function, whether to keep every ranked row, and more side data to build."""

    measures: tuple[Any, ...]
    fn: BlockFn
    keep_rows: bool = False
    extras: tuple[str, ...] = ()


class Provider:
    """The protocol every engine answers (see the module docstring); an engine subclasses it."""

    name: str = ""
    capabilities: Capabilities = Capabilities()
    #: the engines to use instead, said when this one refuses
    instead: str = "the local engine"

    def check(self) -> None:
        """Whether the engine is available: a :class:`~ctxeval.DependencyError` naming what is
        missing and how to install it, before any work."""

    def refuse(self, policies: Policies, rag: Any, side_data: Iterable[str], samples: bool) -> None:
        """A one-line :class:`~ctxeval.ConfigError` naming the engine and what it lacks, when the
        settings ask for it."""
        lacks = self.capabilities.lacking(policies, rag, side_data, samples)
        if lacks:
            raise ConfigError(f"the {self.name} engine {lacks}: use {self.instead}")

    def read(self, runs: Sequence[Any], policies: Policies) -> list[Any]:
        """The runs as the session holds them (read, or a handle the engine reads later)."""
        raise NotImplementedError

    def blocks(self, session: Any, run: Any, job: Job) -> Mapped:
        """``job``'s block function over the blocks of ``run``, merged (see :mod:`.blocks`)."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """What the reports' settings say about the engine (nothing for the local one)."""
        return {}


def provider(engine: Provider | Engine | str | Mapping[str, Any] | None = None, **options: Any) -> Provider:
    """The provider of ``engine`` (a provider is returned as it is); ``options`` go to its
    constructor (e.g. Spark's ``progress``)."""
    if isinstance(engine, Provider):
        return engine
    settings = Engine.coerce(engine)
    module, _, cls = _PROVIDERS[settings.name].partition(":")
    made: Provider = getattr(importlib.import_module(module), cls).from_settings(settings, **options)
    return made
