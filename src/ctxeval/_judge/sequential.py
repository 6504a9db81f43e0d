"""Labelling that stops as soon as the decision is settled: queries labelled in random order, people's
labels or a judge's, and after each one the anytime-valid confidence sequence of the mean change
(:mod:`ctxeval._stats.sequential`) asked whether a compare or gate decision about two runs is settled.

Its error holds at every look (the decision may be taken after any query), so the labelling stops at
the first query that settles it; the queries never labelled are the cost saved. The queries are those
both runs answer, in an order drawn once from ``seed``; the pairs to label for a query are the union of
both runs' top ``depth`` (the measure's cutoff, else 20); the change on a query is the candidate's
value minus the baseline's (sign-flipped for a measure where lower is better) under the labels given
for it. A query given no label at all is skipped and counted.

>>> import ctxeval
>>> base = {"q1": {"a": 2, "b": 1}, "q2": {"c": 2, "d": 1}, "q3": {"e": 2, "f": 1}}
>>> cand = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1, "d": 2}, "q3": {"e": 1, "f": 2}}
>>> plan = ctxeval.UntilDecided(base, cand, measure="P@1", seed=1)
>>> for query in plan:
...     plan.add(query, {plan.pool(query)[0]: 1})   # people label the first doc of the pool relevant
>>> plan.result().labelled
3
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._evaluate import evaluate
from .._io.model import Qrels, Run
from .._measures import parse_measures
from .._stats.sequential import Rule, decide, t_mixture_cs

__all__ = ["Settled", "UntilDecided"]

_SAID = {
    "better": "the candidate is better",
    "worse": "the candidate is worse",
    "no difference": "no difference of the stated effect or more",
    "pass": "pass: no drop beyond the tolerated one",
    "fail": "fail: a drop beyond the tolerated one",
}


@dataclass(frozen=True)
class Settled:
    """Where the labelling stopped: the decision (None: the queries ran out first), the interval of
    the mean change then, the queries labelled of those there were (and skipped: given no label), the
    pairs to label in them and in all, and the rule."""

    decision: str | None
    low: float
    high: float
    mean: float
    labelled: int
    queries: int
    skipped: int
    pairs_labelled: int
    pairs_total: int
    rule: Rule
    measure: str
    tuned_for: float

    @property
    def saved(self) -> int:
        """The pairs of the queries never labelled: the labelling the decision did not need."""
        return self.pairs_total - self.pairs_labelled

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "said": _SAID.get(self.decision or "", "not settled: every query labelled"),
            "interval": [self.low, self.high],
            "mean_change": self.mean,
            "queries_labelled": self.labelled,
            "queries": self.queries,
            "queries_skipped": self.skipped,
            "pairs_labelled": self.pairs_labelled,
            "pairs_total": self.pairs_total,
            "pairs_saved": self.saved,
            "rule": self.rule.kind,
            "alpha": self.rule.alpha,
            "max_drop": self.rule.margin if self.rule.kind == "gate" else None,
            "effect": self.rule.effect,
            "measure": self.measure,
            "tuned_for": self.tuned_for,
        }

    def line(self) -> str:
        said = _SAID.get(self.decision or "", "not settled: every query was labelled")
        level = self.rule.level
        return (
            f"until decided ({self.rule.kind}, {self.measure}, anytime-valid at alpha {self.rule.alpha:g}): {said} after "
            f"{self.labelled} of {self.queries} queries (mean change {self.mean:+.4f}, {1 - level:.0%} confidence "
            f"sequence [{self.low:+.4f}, {self.high:+.4f}]); {self.pairs_labelled} of {self.pairs_total} pairs labelled, "
            f"{self.saved} ({self.saved / max(self.pairs_total, 1):.0%}) saved"
            + (f"; {self.skipped} queries skipped (no label given)" if self.skipped else "")
        )


class UntilDecided:
    """Queries of two runs to label in random order until a decision is settled: ``compare`` (is the
    candidate better or worse; with ``effect``, or is there no difference of that size) or, given
    ``max_drop``, the gate's (does it drop by more than that). Iterate for the next query, label the
    pairs :meth:`pool` gives, :meth:`add` the labels; :meth:`result` says where it stopped."""

    def __init__(
        self,
        baseline: Any,
        candidate: Any,
        *,
        measure: str = "nDCG@10",
        alpha: float = 0.05,
        max_drop: float | None = None,
        effect: float | None = None,
        depth: int | None = None,
        seed: int = 0,
        tuned_for: float | None = None,
    ) -> None:
        self.measure = parse_measures([measure])[0]
        try:
            self.rule = Rule("compare" if max_drop is None else "gate", alpha, max_drop or 0.0, effect)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.sign = 1.0 if self.measure.spec.higher_is_better else -1.0
        base, cand = Run.coerce(baseline, name="baseline"), Run.coerce(candidate, name="candidate")
        self.runs = (base.with_name("baseline"), cand.with_name("candidate"))
        self.tables = [r.to_dict() for r in self.runs]
        self.depth = depth or (int(self.measure.cutoff) if self.measure.cutoff is not None else 20)
        both = sorted(set(self.tables[0]) & set(self.tables[1]), key=lambda q: q.encode())
        if not both:
            raise ConfigError("the two runs answer no query in common: nothing to label")
        rng = np.random.default_rng(seed)
        self.order = [both[i] for i in rng.permutation(len(both))]
        self.tuned_for = float(tuned_for) if tuned_for is not None else max(len(both) / 2.0, 2.0)
        self.changes: list[float] = []
        self.done: set[str] = set()
        self.skipped = 0
        self.pairs_labelled = 0
        self.decision: str | None = None
        self.low, self.high = -np.inf, np.inf

    def pool(self, query: str) -> list[str]:
        """The docs to label for ``query``: both runs' top ``depth``, best rank first (then doc id)."""
        best: dict[str, int] = {}
        for t in self.tables:
            ranked = sorted(t.get(query, {}).items(), key=lambda kv: (-kv[1], kv[0]))[: self.depth]
            for i, (d, _) in enumerate(ranked):
                best[d] = min(best.get(d, i), i)
        return sorted(best, key=lambda d: (best[d], d))

    def __iter__(self) -> Iterator[str]:
        for q in self.order:
            if self.decision is not None:
                return
            if q not in self.done:
                yield q

    def add(self, query: str, labels: Mapping[str, int]) -> str | None:
        """The labels of ``query`` (doc -> grade; docs not given count as not relevant); the decision
        once settled, else None."""
        if query in self.done:
            raise ConfigError(f"query {query!r} was labelled already")
        self.done.add(query)
        self.pairs_labelled += len(self.pool(query))
        if not labels:
            self.skipped += 1
            return self.decision
        qrels = Qrels.from_dict({query: dict(labels)})
        runs = [Run.from_dict({query: t[query]}, name=r.name) for r, t in zip(self.runs, self.tables)]
        res = evaluate(qrels, runs, [str(self.measure)], policies={"missing": "zero"})
        b, c = (r.per_query(self.measure).get(query, 0.0) for r in res.runs)
        self.changes.append(self.sign * (c - b))
        lo, hi = t_mixture_cs(np.array(self.changes), self.rule.level, self.tuned_for)
        self.low, self.high = float(lo[-1]), float(hi[-1])
        if self.decision is None:
            self.decision = decide(self.low, self.high, self.rule)
        return self.decision

    def result(self) -> Settled:
        total = sum(len(self.pool(q)) for q in self.order)
        mean = float(np.mean(self.changes)) if self.changes else float("nan")
        return Settled(
            self.decision, self.low, self.high, mean, len(self.done), len(self.order), self.skipped,
            self.pairs_labelled, total, self.rule, str(self.measure), self.tuned_for,
        )  # fmt: skip
