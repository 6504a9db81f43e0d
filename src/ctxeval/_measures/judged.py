"""``judged_only``: a measure of the rankings without the docs the qrels do not judge (nor those judged
below 0), the others in the same order and ranked anew, as trec_eval's ``-J`` and ir_measures'
``judged_only`` (pytrec_eval's ``judged_docs_only_flag``) compute it: a parameter of the classical
families (``P(judged_only=true)@10``, ``nDCG(judged_only=true)@10``), Sakai's condensed lists."""

from __future__ import annotations

from .base import Kernel, Param

__all__ = ["JUDGED_ONLY", "judged"]

JUDGED_ONLY = Param(
    "judged_only", "bool", False, "drop the docs the qrels do not judge first (trec_eval -J; ir_measures)"
)


def judged(kernel: Kernel) -> Kernel:
    """``kernel`` on every ranking without its unjudged docs when the measure says ``judged_only``."""
    return lambda d, m: kernel(d.memo("judged_only", d.judged_only) if m["judged_only"] else d, m)
