"""ctxeval: retrieval evaluation for RAG systems, exact against trec_eval.

The public API is flat; everything lives in private modules underneath. Names are imported lazily
(PEP 562) so that a serving process can ``from ctxeval import ContextSelector`` with numpy alone,
without importing polars or the evaluation machinery.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from ._errors import (
    ConfigError,
    CtxevalError,
    DependencyError,
    DuplicateError,
    EmptyInputError,
    FormatError,
    InputError,
    JudgeError,
    MeasureError,
    OutputError,
    PoolError,
    QueryMismatchError,
)
from ._version import __version__

if _typing.TYPE_CHECKING:
    from ._aliases import evaluate_spark, evaluate_stream
    from ._calibrate.calibrate import Calibration, calibrate
    from ._compare.settings import Sections, Stats, Strata
    from ._context.settings import RagConfig
    from ._context.utility import DistractorRules, UtilityConfig
    from ._core.grademap import GradeMap
    from ._curve import Curves, metric_at_k
    from ._diagnose import Diagnosis, diagnose
    from ._distraction import DistractionTable, distraction_table
    from ._engines.base import Engine
    from ._evaluate import Result, RunResult, evaluate
    from ._fit_udcg import FitResult, fit_udcg
    from ._gate.baseline import Baseline
    from ._gate.gate import power, snapshot
    from ._io.chunks import Chunks
    from ._io.labels import LabelKind
    from ._io.merge import merge_labels
    from ._io.model import Qrels, Run
    from ._io.retrievers import collect
    from ._io.samples import Samples
    from ._io.spans import SpanLabels
    from ._io.tokenizers import Tokenizer
    from ._judge.card import JudgeCard
    from ._judge.sequential import UntilDecided
    from ._judge.verbs import agreement
    from ._measures import Family, Measure, families, parse_measure, parse_measures
    from ._policies import Policies
    from ._render.chunking import ChunkingReport, chunking
    from ._render.gate import GateReport, gate
    from ._render.report import Report, compare
    from ._selector import ContextSelector
    from ._stats.summary import CI

# public name -> the private module defining it (imported on first access)
_LAZY = {
    "GradeMap": "._core.grademap",
    "LabelKind": "._io.labels",
    "merge_labels": "._io.merge",
    "Qrels": "._io.model",
    "SpanLabels": "._io.spans",
    "Chunks": "._io.chunks",
    "Tokenizer": "._io.tokenizers",
    "Run": "._io.model",
    "Samples": "._io.samples",
    "collect": "._io.retrievers",
    "Policies": "._policies",
    "RagConfig": "._context.settings",
    "DistractorRules": "._context.utility",
    "UtilityConfig": "._context.utility",
    "Stats": "._compare.settings",
    "CI": "._stats.summary",
    "Strata": "._compare.settings",
    "Baseline": "._gate.baseline",
    "GateReport": "._render.gate",
    "gate": "._render.gate",
    "power": "._gate.gate",
    "snapshot": "._gate.gate",
    "Sections": "._compare.settings",
    "Diagnosis": "._diagnose",
    "diagnose": "._diagnose",
    "distraction_table": "._distraction",
    "fit_udcg": "._fit_udcg",
    "Result": "._evaluate",
    "RunResult": "._evaluate",
    "evaluate": "._evaluate",
    "Engine": "._engines.base",
    "evaluate_stream": "._aliases",
    "evaluate_spark": "._aliases",
    "Family": "._measures",
    "Measure": "._measures",
    "families": "._measures",
    "parse_measure": "._measures",
    "parse_measures": "._measures",
    "ContextSelector": "._selector",
    "calibrate": "._calibrate",
    "Calibration": "._calibrate",
    "Curves": "._curve",
    "DistractionTable": "._distraction",
    "FitResult": "._fit_udcg",
    "compare": "._render.report",
    "chunking": "._render.chunking",
    "ChunkingReport": "._render.chunking",
    "Report": "._render.report",
    "metric_at_k": "._curve",
    "agreement": "._judge.verbs",
    "JudgeCard": "._judge.card",
    "UntilDecided": "._judge.sequential",
}


def __getattr__(name: str) -> _typing.Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxeval' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "CI",
    "Baseline",
    "Calibration",
    "ChunkingReport",
    "Chunks",
    "ConfigError",
    "ContextSelector",
    "CtxevalError",
    "Curves",
    "DependencyError",
    "Diagnosis",
    "DistractionTable",
    "DistractorRules",
    "DuplicateError",
    "EmptyInputError",
    "Engine",
    "Family",
    "FitResult",
    "FormatError",
    "GateReport",
    "GradeMap",
    "InputError",
    "JudgeCard",
    "JudgeError",
    "LabelKind",
    "Measure",
    "MeasureError",
    "OutputError",
    "Policies",
    "PoolError",
    "Qrels",
    "QueryMismatchError",
    "RagConfig",
    "Report",
    "Result",
    "Run",
    "RunResult",
    "Samples",
    "Sections",
    "SpanLabels",
    "Stats",
    "Strata",
    "Tokenizer",
    "UntilDecided",
    "UtilityConfig",
    "__version__",
    "agreement",
    "calibrate",
    "chunking",
    "collect",
    "compare",
    "diagnose",
    "distraction_table",
    "evaluate",
    "evaluate_spark",
    "evaluate_stream",
    "families",
    "fit_udcg",
    "gate",
    "merge_labels",
    "metric_at_k",
    "parse_measure",
    "parse_measures",
    "power",
    "snapshot",
]
