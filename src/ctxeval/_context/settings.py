"""The settings of the set-based RAG measures, and the settings every side data provider reads.

:class:`RagConfig` is what a user passes (``evaluate(..., rag=RagConfig(grade_map="trec-dl",
pool="bm25.run", pool_depth=50))``): the grade map onto the 1–5 utility scale, the retrieval pool (a
run, cut at ``pool_depth``; without it each run is its own pool), whether a run may hold docs outside
its pool, the doc -> group mapping of ``RA-nWG(novelty=...)``, and AWRF's fairness group labels and
targets. :class:`Settings` is what the
session resolved: the values read and validated.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._core.budget import OVERFLOW_RULES
from .._core.grademap import GradeMap
from .._errors import ConfigError
from .._policies import coerce_settings

if TYPE_CHECKING:
    from .._io.chunks import Chunks
    from .._io.fairness import FairGroups, FairTargets
    from .._io.model import Run
    from .._io.side import DocGroups
    from .._io.spans import SpanLabels
    from .utility import UtilityConfig

__all__ = ["RagConfig", "Settings"]


@dataclass(frozen=True)
class RagConfig:
    """Settings of the set-based RAG measures (see the module docstring).

    >>> RagConfig(grade_map="trec-dl", pool_depth=20).grade_map
    GradeMap('trec-dl (3:5,2:4,1:3,0:2)')
    >>> RagConfig(pool_depth=0)
    Traceback (most recent call last):
    ctxeval.ConfigError: pool_depth must be a whole number >= 1, got 0
    """

    grade_map: Any = None  #: a GradeMap, a preset name (trec-dl), 'FROM:TO,...' or a mapping
    pool: Any = None  #: the retrieval pool: a run (path, mapping, frame or Run)
    #: per-run pools, ``{run name: pool}`` (a run's name, file path or file name without extension);
    #: runs not named there use ``pool``, or are their own pool
    pools: Mapping[str, Any] | None = None
    pool_depth: int | None = None
    allow_outside_pool: bool = False
    groups: Any = None  #: doc id -> group: a mapping or a file of 'doc_id group' lines
    #: AWRF's fairness group labels: a file of 'docid group [weight]' lines or JSON lines, or a mapping
    #: {doc: group | [groups] | {group: weight}} (:mod:`ctxeval._io.fairness`)
    fair_groups: Any = None
    #: AWRF's given targets (``AWRF(target=given)``): a file of 'qid group weight' lines or JSON lines,
    #: or a mapping {qid: {group: weight}}; qid '*' serves every query without a target of its own
    fair_target: Any = None
    #: what the qrels' grades are (a LabelKind or its name: binary, graded, rag, trec, ...); default:
    #: what the qrels say (a sample set's references, a judge's sidecar; else graded)
    labels: Any = None
    #: the chunk table: chunk id -> (doc_id, start, end[, text, tokens]) (a Chunks, a path, a mapping,
    #: a frame): places a run's chunks for span labels, and gives their tokens for budgets (@Btok)
    chunks: Any = None
    #: per-run chunk tables, ``{run name: table}`` (named as ``pools`` are): each run's chunks are
    #: placed by its own chunking (runs not named there use ``chunks``). Span labels are read as each
    #: run's chunk grades by its own table, and the ideal at a budget over chunk-id labels packs the
    #: judged chunks of the run's own table (those of other chunkings are no candidates for it)
    chunk_tables: Mapping[str, Any] | None = None
    #: the documents' texts (a mapping, a folder, a JSON-lines file): token counts of chunks without
    #: a text, and the span measures counted in tokens
    documents: Any = None
    #: what counts tokens: words-v1 (the default, offline), tiktoken:<encoding>, a tokenizer or a
    #: callable str -> int (ctxeval._io.tokenizers); default: the table's tokens column, else words-v1
    tokenizer: Any = None
    #: the rule for the chunk that does not fit a budget: stop (the default) or skip (ctxeval._core.budget)
    overflow: str = "stop"

    def __post_init__(self) -> None:
        object.__setattr__(self, "grade_map", GradeMap.coerce(self.grade_map))
        if self.labels is not None:
            from .._io.labels import LabelKind

            object.__setattr__(self, "labels", LabelKind.coerce(self.labels))
        d = self.pool_depth
        if d is not None and (isinstance(d, bool) or not isinstance(d, int) or d < 1):
            raise ConfigError(f"pool_depth must be a whole number >= 1, got {d!r}")
        if self.pools is not None:
            if not isinstance(self.pools, Mapping) or not all(isinstance(k, str) and k for k in self.pools):
                raise ConfigError("pools must map run names to pools, e.g. {'rerank': 'bm25.run'}")
            object.__setattr__(self, "pools", dict(self.pools) or None)
        if self.chunk_tables is not None:
            if not isinstance(self.chunk_tables, Mapping) or not all(
                isinstance(k, str) and k for k in self.chunk_tables
            ):
                raise ConfigError("chunk_tables must map run names to chunk tables, e.g. {'bm25-512': 'chunks.jsonl'}")
            object.__setattr__(self, "chunk_tables", dict(self.chunk_tables) or None)
        if not isinstance(self.allow_outside_pool, bool):
            raise ConfigError(f"allow_outside_pool must be true or false, got {self.allow_outside_pool!r}")
        if self.overflow not in OVERFLOW_RULES:
            raise ConfigError(f"overflow must be one of {', '.join(OVERFLOW_RULES)}, got {self.overflow!r}")

    @classmethod
    def coerce(cls, value: RagConfig | Mapping[str, Any] | None) -> RagConfig:
        return coerce_settings(cls, value, "RAG settings")

    @property
    def configured(self) -> bool:
        """Whether anything beyond the defaults is set (then the side data is built for every run)."""
        return (
            self.grade_map is not None
            or self.pool is not None
            or self.pools is not None
            or self.pool_depth is not None
            or self.groups is not None
        )


@dataclass(frozen=True)
class Settings:
    """What the providers read: the RAG settings with the pool run and the groups read, the utility
    configuration, the fitted weights by hash, and the ranking rule of the evaluation."""

    rag: RagConfig = field(default_factory=RagConfig)
    pool: Run | None = None
    groups: DocGroups | None = None
    utility: UtilityConfig | None = None
    fits: dict[str, dict[str, Any]] = field(default_factory=dict)
    ties: str = "trec"
    pools: Mapping[str, Run] = field(default_factory=dict)  #: per-run pools by run name (resolved)
    #: AWRF's fairness group labels and given targets, read (:mod:`ctxeval._io.fairness`)
    fair_groups: FairGroups | None = None
    fair_targets: FairTargets | None = None
    #: the chunk table read (RagConfig.chunks, with the documents)
    chunks: Chunks | None = None
    #: per-run chunk tables by run name (RagConfig.chunk_tables, read, with the documents)
    chunk_tables: Mapping[str, Chunks] = field(default_factory=dict)
    #: the span labels, when the evaluation's labels are spans (its qrels are then their chunk grades)
    spans: SpanLabels | None = None
