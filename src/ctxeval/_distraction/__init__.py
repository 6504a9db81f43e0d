"""Comparing ranking profiles by the harm they do to an LLM reader (``ctxeval distraction``)."""

from .dynamic_k import dynamic_k_summary, optimal_k
from .table import RISKY, SAFE, VERDICTS, DistractionTable, auto_rel, distraction_table, safety_verdict

__all__ = [
    "RISKY",
    "SAFE",
    "VERDICTS",
    "DistractionTable",
    "auto_rel",
    "distraction_table",
    "dynamic_k_summary",
    "optimal_k",
    "safety_verdict",
]
