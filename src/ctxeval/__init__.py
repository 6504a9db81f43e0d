"""ctxeval: retrieval evaluation for RAG systems, exact against trec_eval.

The public API is flat; everything lives in private modules underneath.
"""

from __future__ import annotations

from ._data import GradeMap, Qrels, Run
from ._errors import (
    ConfigError,
    CtxevalError,
    DuplicateError,
    EmptyInputError,
    FormatError,
    InputError,
    MeasureError,
    QueryMismatchError,
)
from ._diagnose import Diagnosis, diagnose
from ._compare import Report, compare
from ._curve import metric_at_k
from ._evaluate import Result, RunResult, evaluate
from ._pool import PoolError
from ._measures import Family, Measure, families, parse_measure, parse_measures

__version__ = "0.1.0"

__all__ = [
    "evaluate",
    "compare",
    "Report",
    "metric_at_k",
    "diagnose",
    "Diagnosis",
    "PoolError",
    "Qrels",
    "Run",
    "GradeMap",
    "Result",
    "RunResult",
    "Measure",
    "Family",
    "parse_measure",
    "parse_measures",
    "families",
    "CtxevalError",
    "InputError",
    "FormatError",
    "DuplicateError",
    "EmptyInputError",
    "MeasureError",
    "QueryMismatchError",
    "ConfigError",
    "__version__",
]
