"""``diagnose``: fix the retriever or fix the reranker?

Per query, at one K: PROC@K (how much of the ideal top-K gain the retrieval pool holds at all) and
%PROC@K (how much of that the final top K realised). A query is a

* **retrieval** failure when PROC@K < ``proc_threshold``: the best evidence never reached the pool;
* **selection** failure when PROC@K >= ``proc_threshold`` and %PROC@K < ``pct_threshold``: the pool
  had it, the reranker (or the cut at K) lost it;
* **healthy** otherwise; **undefined** when PROC@K is NA (no judged doc with a positive weight).

For every query the grade-5 docs missing from the final top K are listed with where they sat: not in
the pool, or in the pool at rank r (and at rank r' of the final run, when it ranked them below K).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ._lazy import pl  # polars, imported on first use

from . import _pool
from ._data import Qrels, Run
from ._engine import QueryAccounting, prepare
from ._errors import ConfigError
from ._measures import make

__all__ = ["diagnose", "Diagnosis", "QueryDiagnosis", "MissedDoc", "VERDICTS"]

VERDICTS = ("retrieval", "selection", "healthy", "undefined")


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


@dataclass(frozen=True)
class MissedDoc:
    """A grade-5 doc that is not in the final top K."""

    doc_id: str
    pool_rank: int | None  #: its rank in the pool (None: not in the pool)
    run_rank: int | None  #: its rank in the final run, when retrieved (always > K)

    @property
    def where(self) -> str:
        out = "not in pool" if self.pool_rank is None else f"pool rank {self.pool_rank}"
        if self.run_rank is not None:
            out += f", final rank {self.run_rank}"
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"doc_id": self.doc_id, "in_pool": self.pool_rank is not None, "pool_rank": self.pool_rank, "run_rank": self.run_rank}


@dataclass(frozen=True)
class QueryDiagnosis:
    query_id: str
    verdict: str
    ra_nwg: float
    proc: float
    pct_proc: float
    n_recall5: float
    missed: tuple[MissedDoc, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "verdict": self.verdict,
            "RA-nWG": _num(self.ra_nwg),
            "PROC": _num(self.proc),
            "%PROC": _num(self.pct_proc),
            "N-Recall5": _num(self.n_recall5),
            "missed_grade5": [m.to_dict() for m in self.missed],
        }


@dataclass
class Diagnosis:
    """The outcome of :func:`diagnose` for one run at one K."""

    run: str
    k: int
    proc_threshold: float
    pct_threshold: float
    queries: list[QueryDiagnosis]
    settings: dict[str, Any]
    accounting: QueryAccounting
    pool_report: dict[str, Any] | None = None
    n_worst: int = 10
    _means: dict[str, tuple[float, int]] = field(default_factory=dict, repr=False)

    @property
    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for q in self.queries:
            out[q.verdict] += 1
        return out

    def __getitem__(self, query_id: str) -> QueryDiagnosis:
        for q in self.queries:
            if q.query_id == query_id:
                return q
        raise KeyError(query_id)

    def means(self) -> dict[str, tuple[float, int]]:
        """Macro average and number of valid queries of RA-nWG, PROC, %PROC and N-Recall5 at K."""
        if not self._means:
            for key, attr in (("RA-nWG", "ra_nwg"), ("PROC", "proc"), ("%PROC", "pct_proc"), ("N-Recall5", "n_recall5")):
                vals = np.array([getattr(q, attr) for q in self.queries], dtype=np.float64)
                ok = vals[~np.isnan(vals)]
                self._means[key] = (float(ok.mean()) if ok.size else math.nan, int(ok.size))
        return self._means

    def worst(self, n: int | None = None) -> list[QueryDiagnosis]:
        """The failing queries (retrieval or selection) with the lowest RA-nWG@K first."""
        n = self.n_worst if n is None else n
        bad = [q for q in self.queries if q.verdict in ("retrieval", "selection")]
        bad.sort(key=lambda q: (q.ra_nwg, q.query_id))
        return bad[:n]

    @property
    def advice(self) -> str:
        c = self.counts
        r, s = c["retrieval"], c["selection"]
        if r == 0 and s == 0:
            return "no failing queries at these thresholds"
        if r >= s:
            return f"fix the retriever first: {r} retrieval vs {s} selection failures"
        return f"fix the reranker first: {s} selection vs {r} retrieval failures"

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "k": self.k,
            "thresholds": {"PROC": self.proc_threshold, "%PROC": self.pct_threshold},
            "counts": self.counts,
            "advice": self.advice,
            "aggregate": {f"{name}@{self.k}": _num(v) for name, (v, _) in self.means().items()},
            "valid_queries": {f"{name}@{self.k}": n for name, (_, n) in self.means().items()},
            "worst": [q.query_id for q in self.worst()],
            "queries": [q.to_dict() for q in self.queries],
            "accounting": self.accounting.to_dict(),
            **({"pool": dict(self.pool_report)} if self.pool_report is not None else {}),
            "settings": dict(self.settings),
        }

    def render(self, fmt: str = "table", per_query: bool = False) -> str:
        if fmt == "json":
            from ._output import to_json

            return to_json(self.to_dict())
        if fmt == "table":
            return _table(self, per_query)
        raise ConfigError(f"format must be 'table' or 'json', got {fmt!r}")


def diagnose(
    qrels: Any,
    run: Any,
    pool: Any = None,
    *,
    k: int = 10,
    pool_depth: int | None = None,
    proc_threshold: float = 0.8,
    pct_threshold: float = 0.8,
    grade_map: Any = None,
    allow_outside_pool: bool = False,
    ties: str = "trec",
    missing: str = "zero",
    duplicates: str = "error",
    worst: int = 10,
) -> Diagnosis:
    """Classify every query as a retrieval failure, a selection failure or healthy (see the module).

    ``pool`` is the retrieval pool the run was selected from (default: the run itself), cut at
    ``pool_depth``; the other arguments are as in :func:`ctxeval.evaluate`.

    >>> qrels = {"q1": {"a": 5, "b": 3}, "q2": {"c": 5, "d": 2}}
    >>> pool = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"d": 2.0, "x": 1.0}}
    >>> final = {"q1": {"b": 2.0, "a": 1.0}, "q2": {"d": 2.0, "x": 1.0}}
    >>> d = diagnose(qrels, final, pool, k=1)
    >>> d["q1"].verdict, d["q2"].verdict, d["q2"].missed[0].where
    ('selection', 'retrieval', 'not in pool')
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
    for name, thr in (("proc_threshold", proc_threshold), ("pct_threshold", pct_threshold)):
        if isinstance(thr, bool) or not isinstance(thr, (int, float)) or not 0.0 <= thr <= 1.0:
            raise ConfigError(f"{name} must be a number in [0, 1], got {thr!r}")
    qr = Qrels.coerce(qrels, duplicates=duplicates)
    rn = Run.coerce(run, duplicates=duplicates)
    gm = _pool.coerce_grade_map(grade_map)
    pool_run = Run.coerce(pool, duplicates=duplicates) if pool is not None else None
    data = prepare(qr, rn, ties=ties, missing=missing, keep_frame=True, grade_map=gm, pool=pool_run, pool_depth=pool_depth, allow_outside_pool=allow_outside_pool)
    measures = [make("RA-nWG", None, k), make("PROC", None, k), make("%PROC", None, k), make("N-Recall5", None, k)]
    _pool.check_scale(data, measures)
    ra, proc, pct, nr5 = (m.compute(data) for m in measures)

    undefined = np.isnan(proc)
    retrieval = ~undefined & (proc < proc_threshold)
    with np.errstate(invalid="ignore"):
        selection = ~undefined & ~retrieval & (pct < pct_threshold)
    verdict = np.where(undefined, 3, np.where(retrieval, 0, np.where(selection, 1, 2)))

    missed = _missed_gold(data, qr, gm, k)
    rows = [
        QueryDiagnosis(q, VERDICTS[int(verdict[i])], float(ra[i]), float(proc[i]), float(pct[i]), float(nr5[i]), missed.get(q, ()))
        for i, q in enumerate(data.qids)
    ]
    settings = {
        "qrels": qr.source,
        "run": rn.source,
        "pool": pool_run.source if pool_run is not None else None,
        "pool_depth": pool_depth,
        "allow_outside_pool": allow_outside_pool,
        "grade_map": gm.describe() if gm is not None else None,
        "ties": ties,
        "missing": missing,
        "duplicates": duplicates,
    }
    report = data.pool.report() if pool_run is not None else None  # type: ignore[union-attr]
    return Diagnosis(rn.name, k, float(proc_threshold), float(pct_threshold), rows, settings, data.accounting, report, worst)


def _missed_gold(data: Any, qr: Qrels, gm: Any, k: int) -> dict[str, tuple[MissedDoc, ...]]:
    """Grade-5 docs (after the grade map) of every evaluated query that are not in the top k."""
    qids = pl.Series("query_id", data.qids, dtype=pl.String)
    qdf = qr.frame.join(pl.DataFrame({"query_id": qids}), on="query_id", how="semi")
    if gm is not None and gm.mapping:
        qdf = gm.apply(qdf, qr.source)
    gold = qdf.filter(pl.col("relevance") == _pool.UTIL_MAX).select("query_id", "doc_id")
    if gold.height == 0:
        return {}
    run_ranks = _pool._ranked_with_rank(data.frame.select("query_id", "doc_id")).rename({"rank": "run_rank"})
    if data.pool is not None and not data.pool.own:
        pool_ranks = data.pool.frame.rename({"rank": "pool_rank"})
    else:
        depth = data.pool.depth if data.pool is not None else None
        pool_ranks = run_ranks.rename({"run_rank": "pool_rank"})
        if depth is not None:
            pool_ranks = pool_ranks.filter(pl.col("pool_rank") <= depth)
    out = (
        gold.join(run_ranks, on=["query_id", "doc_id"], how="left")
        .join(pool_ranks, on=["query_id", "doc_id"], how="left")
        .filter(pl.col("run_rank").is_null() | (pl.col("run_rank") > k))
        .sort(["query_id", pl.col("pool_rank").is_null(), "pool_rank", "doc_id"])
    )
    found: dict[str, list[MissedDoc]] = {}
    for q, d, rr, pr in out.select("query_id", "doc_id", "run_rank", "pool_rank").iter_rows():
        found.setdefault(q, []).append(MissedDoc(d, None if pr is None else int(pr), None if rr is None else int(rr)))
    return {q: tuple(v) for q, v in found.items()}


_EXPLAIN = {
    "retrieval": "PROC < {p}: the best evidence never reached the pool",
    "selection": "PROC >= {p}, %PROC < {c}: the pool had it, the top K lost it",
    "healthy": "PROC >= {p}, %PROC >= {c}",
    "undefined": "no judged doc with a positive weight (PROC NA)",
}


def _table(d: Diagnosis, per_query: bool) -> str:
    import io

    from rich.console import Console
    from rich.table import Table

    from ._output import fmt_value

    buf = io.StringIO()
    console = Console(file=buf, width=110, color_system=None, highlight=False)
    st = d.settings
    pool = st["pool"] or "(the run itself)"
    depth = f", depth {st['pool_depth']}" if st["pool_depth"] else ", full depth"
    console.print(f"run {d.run}, K = {d.k}; pool: {pool}{depth}")
    console.print(f"grade map: {st['grade_map'] or 'none (qrels grades read as the 1-5 utility scale)'}")
    n = len(d.queries)
    summary = Table(title=None)
    summary.add_column("verdict")
    summary.add_column("queries", justify="right")
    summary.add_column("share", justify="right")
    summary.add_column("meaning")
    for v, c in d.counts.items():
        share = f"{100.0 * c / n:.1f}%" if n else "NA"
        summary.add_row(v, str(c), share, _EXPLAIN[v].format(p=f"{d.proc_threshold:g}", c=f"{d.pct_threshold:g}"))
    console.print(summary)
    means = d.means()
    console.print("mean " + "; ".join(f"{name}@{d.k} {fmt_value(_num(v))} ({valid} queries)" for name, (v, valid) in means.items()), soft_wrap=True)
    console.print(f"advice: {d.advice}")
    if d.pool_report and d.pool_report.get("outside_pool_docs"):
        console.print(f"{d.pool_report['outside_pool_docs']} docs in {d.pool_report['outside_pool_queries']} queries outside the pool (allowed)")
    rows = d.queries if per_query else d.worst()
    if rows:
        t = Table(title="per query" if per_query else "worst queries")
        t.add_column("query")
        t.add_column("verdict")
        for name in ("RA-nWG", "PROC", "%PROC"):
            t.add_column(f"{name}@{d.k}", justify="right")
        t.add_column("missed grade-5 docs")
        for q in rows:
            shown = ", ".join(f"{m.doc_id} ({m.where})" for m in q.missed[:4]) + (f", +{len(q.missed) - 4} more" if len(q.missed) > 4 else "")
            t.add_row(q.query_id, q.verdict, fmt_value(_num(q.ra_nwg)), fmt_value(_num(q.proc)), fmt_value(_num(q.pct_proc)), shown or "-")
        console.print(t)
    return buf.getvalue()
