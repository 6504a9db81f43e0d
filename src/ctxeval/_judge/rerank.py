"""How far a run fitted to the judge rises: a run reranked by the judge's own grades, scored under the
judge's labels and, given them, under people's (``judge probe``).

The run's top ``depth`` of each of ``queries`` queries (spread evenly over its queries) is graded by
the judge (through the runner: cached, within the budget) and reordered by grade, ties kept in the
run's order. Both the original and the reranked run are evaluated under the judge's grades of those
pairs and, when people's labels are given, under theirs: a judge whose grades track people's lifts the
reranked run under both; a run built to please a judge that does not rises under its labels and not
under people's (Clarke & Dietz: 5th under an LLM judge, 28th under people at TREC 2024 RAG). The gap
between the two rises is what a run fitted to this judge would gain on its card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from .._evaluate import evaluate
from .._io.model import Qrels, Run
from .cache import Cache
from .interface import Judge
from .items import Item, JudgeOptions, judge_pairs
from .kinds import TASKS
from .runner import Tally

__all__ = ["Rise", "rerank_rise"]


@dataclass(frozen=True)
class Rise:
    """The original and reranked run's mean ``measure`` under the judge's grades and under people's
    (None without them), over ``queries`` queries of ``run``."""

    run: str
    measure: str
    queries: int
    depth: int
    judge_before: float
    judge_after: float
    human_before: float | None
    human_after: float | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def line(self) -> str:
        j = self.judge_after - self.judge_before
        head = (
            f"reranked by the judge: {self.run}'s top {self.depth} of {self.queries} queries reordered by this judge's "
            f"grades: {self.measure} under its labels {self.judge_before:.4f} -> {self.judge_after:.4f} ({j:+.4f})"
        )
        if self.human_before is None or self.human_after is None:
            return head + "; give --qrels (people's labels) to see how far it rises under theirs"
        h = self.human_after - self.human_before
        return (
            head + f", under people's {self.human_before:.4f} -> {self.human_after:.4f} ({h:+.4f}): a run fitted to "
            f"this judge gains {j - h:+.4f} more on its labels than on people's"
        )


def rerank_rise(
    judge: Judge,
    run: Run,
    items: Sequence[Item],
    cache: Cache,
    opts: JudgeOptions,
    scale: str,
    depth: int,
    queries: int,
    human: Any = None,
    measure: str = "nDCG@10",
) -> tuple[Rise, Tally]:
    """Grade ``run``'s top ``depth`` of ``queries`` of its queries (the texts from ``items``), rerank it
    by the grades and score both runs (see the module docstring)."""
    table = run.to_dict()
    text = {(it.query_id, it.doc_id): it for it in items}
    qids = [q for q in sorted(table, key=lambda q: q.encode()) if any((q, d) in text for d in table[q])]
    qids = [qids[(i * len(qids)) // queries] for i in range(min(queries, len(qids)))]
    tops = {q: [d for d, _ in sorted(table[q].items(), key=lambda kv: (-kv[1], kv[0]))[:depth]] for q in qids}
    asked = [text[(q, d)] for q in qids for d in tops[q] if (q, d) in text]
    got, tally = judge_pairs(judge, asked, cache, opts, TASKS["grade" if scale == "rag" else "grade-trec"])
    grades = {(it.query_id, it.doc_id): o.value for it, o in got if o.decided}
    before = {q: {d: float(depth - i) for i, d in enumerate(tops[q])} for q in qids}
    after = {
        q: {d: float(depth - i) for i, d in enumerate(sorted(tops[q], key=lambda d: -grades.get((q, d), -1)))}
        for q in qids
    }
    runs = [Run.from_dict(before, name="original"), Run.from_dict(after, name="reranked")]
    labels: dict[str, dict[str, int]] = {}
    for (q, d), g in grades.items():
        labels.setdefault(q, {})[d] = int(g)
    if not labels:
        raise ConfigError(f"judge probe: no grade of {run.name}'s top {depth} was decided: nothing to rerank by")
    on_j = evaluate(Qrels.from_dict(labels), runs, [measure], policies={"missing": "zero"})
    hb = ha = None
    if human is not None:
        h = Qrels.coerce(human).to_dict()
        sub = {q: h[q] for q in qids if q in h}
        if sub:
            on_h = evaluate(Qrels.from_dict(sub), runs, [measure], policies={"missing": "zero"})
            hb, ha = (r.mean(measure) for r in on_h.runs)
    jb, ja = (r.mean(measure) for r in on_j.runs)
    return Rise(run.name, measure, len(qids), depth, jb, ja, hb, ha), tally
