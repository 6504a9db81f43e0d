"""What ``ctxeval chunking`` found: frozen values, no rendering (:mod:`ctxeval._render.chunking` renders).

A :class:`Verdict` answers "which chunker at B tokens": the chunker whose mean is best at that budget
when it beats every other significantly (the paired tests of ``compare`` over every pair of chunkers
at every budget, one family adjusted by Holm by default), else "cannot tell" with the reason: the
difference to the nearest rival not significant (its size, p, adjusted p, wins / ties / losses), no
query telling them apart, or too few queries differing for any test of the family to reach alpha (a
test that cannot come out the other way is no evidence).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._json import fields
from .._json import num as _num

__all__ = ["ChunkerRow", "ChunkingModel", "Verdict"]


@dataclass(frozen=True)
class ChunkerRow:
    """One chunker: its chunks, what they cost, its ceiling and its means over the budgets."""

    name: str
    source: str  #: how the chunks were made (the chunker's spec or class, a file)
    chunks: int
    mean_tokens: float  #: a chunk's mean tokens
    precision_omega: float  #: the mean of PrecisionOmega: the best IoU this chunking allows any retriever
    curve: tuple[float, ...]  #: the decision measure's mean at each budget
    ci: tuple[tuple[float, float] | None, ...]  #: its confidence interval at each budget
    precision: tuple[float, ...]  #: SpanPrecision's mean at each budget
    iou: tuple[float, ...]  #: SpanIoU's mean at each budget
    at_k: float  #: the decision measure's mean at K chunks
    tokens_at_k: float  #: the mean tokens of the top K chunks

    def to_dict(self, budgets: tuple[int, ...]) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "chunks": self.chunks,
            "mean_tokens": _num(self.mean_tokens),
            "precision_omega": _num(self.precision_omega),
            "curve": {str(b): _num(v) for b, v in zip(budgets, self.curve)},
            "ci": {str(b): None if c is None else [_num(c[0]), _num(c[1])] for b, c in zip(budgets, self.ci)},
            "precision": {str(b): _num(v) for b, v in zip(budgets, self.precision)},
            "iou": {str(b): _num(v) for b, v in zip(budgets, self.iou)},
            "at_k": _num(self.at_k),
            "tokens_at_k": _num(self.tokens_at_k),
        }


@dataclass(frozen=True)
class Verdict:
    """The answer at one budget (see the module docstring)."""

    budget: int
    winner: str | None  #: None: cannot tell
    best: str  #: the chunker with the best mean
    rival: str | None  #: the nearest chunker it does not beat (or, for a winner, the runner-up)
    diff: float | None  #: best's mean minus rival's
    p_adjusted: float | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            **fields(self, "budget", "winner", "best", "rival"),
            "diff": _num(self.diff),
            "p_adjusted": _num(self.p_adjusted),
            "text": self.text,
        }


@dataclass(frozen=True)
class ChunkingModel:
    """The outcome of :func:`ctxeval.chunking`."""

    measure: str  #: the family compared at each budget (SpanRecall by default)
    budgets: tuple[int, ...]
    k: int  #: the equal-K view's K
    chunkers: tuple[ChunkerRow, ...]
    verdicts: tuple[Verdict, ...]
    answer: str  #: the headline: the verdict at the budget asked, or over the budgets
    at_k: str  #: what the equal-K view shows (who wins at K, and how unlike the contexts are)
    comparisons: tuple[dict[str, Any], ...]  #: every paired test (compare's, as dicts)
    settings: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: the comparison at the budgets as ``compare`` reports it (its ``to_dict``: per-query values too)
    report: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: each chunker's chunk table and run, by name (``ctxeval chunking --save DIR`` writes them)
    tables: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    runs: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.chunkers]

    def verdict(self, budget: int) -> Verdict:
        for v in self.verdicts:
            if v.budget == budget:
                return v
        raise KeyError(f"no verdict at {budget} tokens (the budgets: {', '.join(map(str, self.budgets))})")

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "measure": self.measure,
            "budgets": list(self.budgets),
            "k": self.k,
            "chunkers": [c.to_dict(self.budgets) for c in self.chunkers],
            "verdicts": [v.to_dict() for v in self.verdicts],
            "at_k": self.at_k,
            "comparisons": list(self.comparisons),
            "settings": self.settings,
            "notes": list(self.notes),
        }
