"""Comparing systems: did the change make the system better? (``ctxeval compare``)"""

from .compare import compare
from .model import Block, Comparison, Report, RunSummary, Stratum
from .settings import CORRECTION_NAMES, TEST_NAMES, Stats

__all__ = [
    "CORRECTION_NAMES",
    "TEST_NAMES",
    "Block",
    "Comparison",
    "Report",
    "RunSummary",
    "Stats",
    "Stratum",
    "compare",
]
