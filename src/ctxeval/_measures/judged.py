"""``judged_only``: a measure of the rankings without the docs the qrels do not judge (nor those judged
below 0), the others in the same order and ranked anew, as trec_eval's ``-J`` and ir_measures'
``judged_only`` (pytrec_eval's ``judged_docs_only_flag``) compute it: a parameter of the classical
families (``P(judged_only=true)@10``, ``nDCG(judged_only=true)@10``), Sakai's condensed lists."""

from __future__ import annotations

from dataclasses import replace

from .base import Family, Kernel, Param

__all__ = ["JUDGED_ONLY", "judged", "with_judged_only"]

JUDGED_ONLY = Param(
    "judged_only", "bool", False, "drop the docs the qrels do not judge first (trec_eval -J; ir_measures)"
)


def judged(kernel: Kernel) -> Kernel:
    """``kernel`` on every ranking without its unjudged docs when the measure says ``judged_only``."""
    return lambda d, m: kernel(d.memo("judged_only", d.judged_only) if m["judged_only"] else d, m)


def with_judged_only(family: Family) -> Family:
    """``family`` taking ``judged_only`` after its parameters, its kernel wrapped by :func:`judged` (the
    parameter and the wrapper go together)."""
    return replace(family, kernel=judged(family.kernel), params=(*family.params, JUDGED_ONLY))
