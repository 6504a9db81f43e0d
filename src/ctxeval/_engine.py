"""Where per-query values are computed: one frozen value every verb that evaluates takes as ``engine=``.

* ``local`` (the default): in this process, every run read whole.
* ``stream``: one run file read in chunks of whole queries (:func:`ctxeval.evaluate_stream`), for a
  run larger than memory; ``chunk_mb`` sets the chunk (default: a size that never costs more memory
  than reading the run whole) and ``sort_first`` groups an unsorted run out of core first.
* ``spark``: on Spark (``pip install 'ctxeval[spark]'``, Java 17); ``master`` is the master URL
  (default ``local[*]``). The statistics of a comparison run on the collected per-query values.

A verb takes ``engine="spark"``, a mapping of the fields, or an :class:`Engine`. Every engine gives
the same per-query values and names runs by the same rule (the name given, else the one tag used
throughout the file, else the file name).

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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import ConfigError
from ._evaluate import DEFAULT_MEASURES, with_chunks, with_intervals
from ._evaluate import evaluate as _local
from ._policies import Policies, coerce_settings
from ._stats.summary import CI

if TYPE_CHECKING:
    from ._context.settings import RagConfig
    from ._context.utility import UtilityConfig
    from ._evaluate import Result
    from ._measures import Measure

__all__ = ["ENGINES", "Engine", "evaluate"]

ENGINES = ("local", "stream", "spark")


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
        if self.chunk_mb is not None and (not isinstance(self.chunk_mb, int) or self.chunk_mb < 1):
            raise ConfigError(f"chunk_mb must be a whole number of MiB >= 1, got {self.chunk_mb!r}")

    @classmethod
    def coerce(cls, value: Engine | str | Mapping[str, Any] | None) -> Engine:
        """An :class:`Engine` from itself, its name, a mapping of its fields, or None (local)."""
        if isinstance(value, str):
            return cls(value)
        return coerce_settings(cls, value, "engine settings")


def evaluate(
    qrels: Any = None,
    runs: Any = None,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    samples: Any = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    engine: Engine | str | Mapping[str, Any] = "local",
    ci: CI | Mapping[str, Any] | str | bool | None = None,
    chunks: Any = None,
) -> Result:
    eng = Engine.coerce(engine)
    cfg = CI.coerce(ci)  # validated before anything is read
    if eng.name == "local":
        return _local(
            qrels, runs, measures, samples=samples, policies=policies, rag=rag, utility=utility, ci=cfg, chunks=chunks
        )
    rag = with_chunks(rag, chunks)
    return with_intervals(_other(qrels, runs, measures, samples, policies, rag, utility, eng), cfg)


def _other(
    qrels: Any,
    runs: Any,
    measures: Iterable[str | Measure] | str | Measure | None,
    samples: Any,
    policies: Policies | Mapping[str, Any] | None,
    rag: RagConfig | Mapping[str, Any] | None,
    utility: UtilityConfig | Mapping[str, Any] | None,
    eng: Engine,
) -> Result:
    """:func:`evaluate` on the stream or the Spark engine."""
    if measures is None:
        measures = DEFAULT_MEASURES
    if eng.name == "stream":
        from ._stream import evaluate_stream

        one = list(runs) if isinstance(runs, (list, tuple)) else [runs]
        if samples is not None or len(one) != 1 or isinstance(one[0], Mapping) or one[0] is None:
            raise ConfigError("the stream engine evaluates one run file (a path), not sample sets, frames or dicts")
        name, path = _named(one[0])
        return evaluate_stream(
            qrels,
            path,
            measures,
            name=name,
            policies=policies,
            rag=rag,
            utility=utility,
            chunk_bytes=None if eng.chunk_mb is None else eng.chunk_mb << 20,
            sort_first=eng.sort_first,
        )
    from ._spark import evaluate_spark

    if samples is not None:
        sets = list(samples) if isinstance(samples, (list, tuple)) else [samples]
        return evaluate_spark(None, sets, measures, policies=policies, rag=rag, utility=utility, master=eng.master)[0]
    many = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    named = [_named(r) for r in many]
    result, _ = evaluate_spark(
        qrels,
        [p for _, p in named],
        measures,
        names=[n for n, _ in named],
        policies=policies,
        rag=rag,
        utility=utility,
        master=eng.master,
    )
    return result


def _named(run: Any) -> tuple[str | None, Any]:
    """``NAME=PATH`` (a string whose PATH exists) as (NAME, PATH); anything else as (None, itself)."""
    if isinstance(run, str):
        from ._io.model import split_named

        return split_named(run)
    return None, run


evaluate.__doc__ = (_local.__doc__ or "").replace(
    "    Evaluate one or more runs.\n",
    "    Evaluate one or more runs.\n\n"
    "    ``engine`` (an :class:`~ctxeval.Engine`, its name or a mapping of its fields): ``local`` (the\n"
    "    default, every run read whole), ``stream`` (one run file read in chunks of whole queries, for a run\n"
    "    larger than memory) or ``spark``; each gives the same values.\n",
    1,
)
