"""The measure registry. Importing this package registers every built-in measure family."""

from ._base import REGISTRY, Family, Measure, Param, families, make, parse_measure, parse_measures, register
from . import _classical  # noqa: F401  (registers the classical families)
from . import _rag  # noqa: F401  (registers the set-based RAG families)
from . import _trec  # noqa: F401  (registers the rest of trec_eval's all_trec set)
from . import _distraction  # noqa: F401  (registers the distraction-aware families)

__all__ = ["REGISTRY", "Family", "Measure", "Param", "families", "make", "parse_measure", "parse_measures", "register"]
