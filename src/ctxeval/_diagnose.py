"""``diagnose``: fix the retriever or fix the reranker?

Per query, at one K: PROC@K (how much of the ideal top-K gain the retrieval pool holds at all) and
%PROC@K (how much of that the final top K realised). A query is a

* **retrieval** failure when PROC@K < ``proc_threshold`` and %PROC@K >= ``pct_threshold`` (or NA: the
  pool holds nothing of value): the best evidence never reached the pool, and the top K kept what did;
* **selection** failure when PROC@K >= ``proc_threshold`` and %PROC@K < ``pct_threshold``: the pool
  had it, the reranker (or the cut at K) lost it;
* **both** when PROC@K < ``proc_threshold`` and %PROC@K < ``pct_threshold``: the pool lacked part of
  the evidence and the top K lost much of what it had (a grade-3 doc at pool rank 2 that the reranker
  moved below K is a selection loss even in a thin pool);
* **healthy** otherwise; **undefined** when PROC@K is NA (no judged doc with a positive weight).

The advice compares the pure retrieval and selection failures with an exact two-sided sign test
(:func:`ctxeval._core.signtest.sign_test`): under "neither stage is the more common cause" each
failing query is a fair coin. Below :data:`ADVICE_ALPHA` the more frequent stage is named; otherwise
the advice says there is no clear winner. Queries that failed at both stages count for neither and
are reported beside.

A test that cannot come out the other way is no evidence, so the advice says "cannot tell" where:

* a selection failure cannot occur: the final top K holds the query's whole pool (samples without a
  ``pool`` field and K equal to the lists' depth: the run is its own pool, and the reranker had no
  choice). Such queries are left out of the sign test (their verdicts stay in the counts); when every
  query is such a query, the advice asks for the pool the reranker chose from (``pool`` field,
  ``pool=``, ``--pool``);
* the failing queries are too few for the sign test ever to reach :data:`ADVICE_ALPHA` (fewer than 6
  at 0.05: the most uneven split of 5, 5 against 0, has p = 0.0625).

For every query the top-grade docs (grade 5 on the 1-5 scale; with a grade map, the qrels grades that
map to 5, named in reports) missing from the final top K are listed with where they sat: not in the
pool, or in the pool at rank r (and at rank r' of the final run, when it ranked them below K). The
verdicts are decided here only (:func:`classify`); reports read them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ._context.settings import RagConfig
from ._core.evaldata import EvalData, QueryAccounting
from ._core.extras import UTIL_MAX, Pool
from ._core.join import judged_docs, match_pairs
from ._core.signtest import sign_test
from ._engines.base import provider
from ._engines.blocks import Block
from ._errors import ConfigError
from ._json import num as _num
from ._measures import Measure, make
from ._policies import Policies
from ._session import depth_note, list_depths, one_run_inputs, open_session
from ._show import html_table, pandas

__all__ = [
    "ADVICE_ALPHA",
    "PCT_THRESHOLD",
    "PROC_THRESHOLD",
    "VERDICTS",
    "Diagnosis",
    "MissedDoc",
    "QueryDiagnosis",
    "classify",
    "diagnose",
    "selection_possible",
]

VERDICTS = ("retrieval", "selection", "both", "healthy", "undefined")
ADVICE_ALPHA = 0.05  #: the sign test's p-value below which the advice names a stage
PROC_THRESHOLD = 0.8  #: default: PROC below it is a retrieval failure
PCT_THRESHOLD = 0.8  #: default: %PROC below it (PROC high) is a selection failure


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
        return {
            "doc_id": self.doc_id,
            "in_pool": self.pool_rank is not None,
            "pool_rank": self.pool_rank,
            "run_rank": self.run_rank,
        }


@dataclass(frozen=True)
class QueryDiagnosis:
    query_id: str
    verdict: str
    ra_nwg: float
    proc: float
    pct_proc: float
    n_recall5: float
    missed: tuple[MissedDoc, ...] = ()
    #: whether a selection failure could occur: the pool holds a doc outside the final top K
    selection_possible: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.query_id,
            "verdict": self.verdict,
            "selection_possible": self.selection_possible,
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
    notes: list[str] = field(default_factory=list)  #: where a verdict rests on a fragile setting
    _means: dict[str, tuple[float, int]] = field(default_factory=dict, repr=False)

    @property
    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(VERDICTS, 0)
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
            for key, attr in (
                ("RA-nWG", "ra_nwg"),
                ("PROC", "proc"),
                ("%PROC", "pct_proc"),
                ("N-Recall5", "n_recall5"),
            ):
                vals = np.array([getattr(q, attr) for q in self.queries], dtype=np.float64)
                ok = vals[~np.isnan(vals)]
                self._means[key] = (float(ok.mean()) if ok.size else math.nan, int(ok.size))
        return self._means

    def worst(self, n: int | None = None) -> list[QueryDiagnosis]:
        """The failing queries (retrieval, selection or both) with the lowest RA-nWG@K first."""
        n = self.n_worst if n is None else n
        bad = [q for q in self.queries if q.verdict in ("retrieval", "selection", "both")]
        bad.sort(key=lambda q: (q.ra_nwg, q.query_id))
        return bad[:n]

    @property
    def tested(self) -> dict[str, int]:
        """The counts the sign test compares: retrieval and selection failures of the queries where a
        selection failure could occur, and how many queries were left out because it could not."""
        tested = [q for q in self.queries if q.selection_possible]
        return {
            "retrieval": sum(q.verdict == "retrieval" for q in tested),
            "selection": sum(q.verdict == "selection" for q in tested),
            "left_out": len(self.queries) - len(tested),
        }

    @property
    def p_value(self) -> float:
        """The exact two-sided sign test of the retrieval against the selection failures (of the queries
        where both could occur, :attr:`tested`)."""
        t = self.tested
        return sign_test(t["retrieval"], t["selection"])

    @property
    def advice(self) -> str:
        """Which stage to fix first, with the counts and how sure that is, or "cannot tell" where the
        test could not come out the other way (see the module docstring)."""
        c, t = self.counts, self.tested
        r, s, b = t["retrieval"], t["selection"], c["both"]
        both = f"; {b} failed at both stages" if b else ""
        if r + s == 0 and c["retrieval"]:  # every retrieval failure sits where selection could not fail
            where = (
                "every query"
                if t["left_out"] == len(self.queries)
                else f"{t['left_out']} of {len(self.queries)} queries"
            )
            n = c["retrieval"]
            return (
                f"cannot tell: the top {self.k} holds the whole pool on {where}, where no query can fail at selection "
                f"({n} retrieval failure{'s' * (n != 1)} there, none at selection by construction); give the pool "
                "the reranker chose from (`pool` field or `--pool`)"
            )
        if r == 0 and s == 0:
            if b:
                return f"fix both stages: all {b} failing queries failed at retrieval and at selection"
            return "no failing queries at these thresholds"
        left = (
            f"; {t['left_out']} queries whose top {self.k} holds their whole pool left out (no selection failure "
            "possible there)"
            if t["left_out"]
            else ""
        )
        if sign_test(r + s, 0) >= ADVICE_ALPHA:
            return (
                f"cannot tell: {r} retrieval vs {s} selection failures are too few for the sign test to name a "
                f"stage (even {r + s} against 0 would give p = {sign_test(r + s, 0):.3f}){left}{both}"
            )
        p = self.p_value
        test = f"sign test p = {p:.3f}" if p >= 0.001 else "sign test p < 0.001"
        if p >= ADVICE_ALPHA:
            return f"no clear winner: {r} retrieval vs {s} selection failures ({test}){left}{both}"
        if r > s:
            return f"fix the retriever first: {r} retrieval vs {s} selection failures ({test}){left}{both}"
        return f"fix the reranker first: {s} selection vs {r} retrieval failures ({test}){left}{both}"

    def __repr__(self) -> str:
        c = self.counts
        shown = ", ".join(f"{v} {n}" for v, n in c.items() if n)
        return f"Diagnosis({self.run!r}, K={self.k}: {shown}; {self.advice})"

    def _repr_html_(self) -> str:
        rows = [[v, n, f"{100 * n / max(len(self.queries), 1):.1f}%"] for v, n in self.counts.items()]
        return html_table(["verdict", "queries", "share"], rows, f"{self.run}, K = {self.k}: {self.advice}")

    def to_pandas(self) -> Any:
        """One row per query: ``query, verdict, RA-nWG, PROC, %PROC, N-Recall5, missed`` (the grade-5
        docs missing from the top K, with where they sat)."""
        pd = pandas("Diagnosis.to_pandas")
        rows = [
            (
                q.query_id,
                q.verdict,
                q.ra_nwg,
                q.proc,
                q.pct_proc,
                q.n_recall5,
                "; ".join(f"{m.doc_id} ({m.where})" for m in q.missed),
            )
            for q in self.queries
        ]
        return pd.DataFrame(rows, columns=["query", "verdict", "RA-nWG", "PROC", "%PROC", "N-Recall5", "missed"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "k": self.k,
            "thresholds": {"PROC": self.proc_threshold, "%PROC": self.pct_threshold},
            "counts": self.counts,
            "advice": self.advice,
            "sign_test_p": self.p_value,
            "sign_test": self.tested,
            "aggregate": {f"{name}@{self.k}": _num(v) for name, (v, _) in self.means().items()},
            "valid_queries": {f"{name}@{self.k}": n for name, (_, n) in self.means().items()},
            "worst": [q.query_id for q in self.worst()],
            "queries": [q.to_dict() for q in self.queries],
            "accounting": self.accounting.to_dict(),
            **({"pool": dict(self.pool_report)} if self.pool_report is not None else {}),
            "settings": dict(self.settings),
            "notes": list(self.notes),
        }


def classify(proc: np.ndarray, pct: np.ndarray, proc_threshold: float, pct_threshold: float) -> np.ndarray:
    """Per query the index of its verdict in :data:`VERDICTS`: retrieval (PROC low, %PROC high or NA),
    selection (PROC high, %PROC low), both (both low), healthy, undefined (PROC NA).

    >>> proc = np.array([0.5, 0.9, 0.5, 0.9, np.nan, 0.0])
    >>> pct = np.array([1.0, 0.5, 0.0, 0.9, np.nan, np.nan])
    >>> [VERDICTS[i] for i in classify(proc, pct, 0.8, 0.8)]
    ['retrieval', 'selection', 'both', 'healthy', 'undefined', 'retrieval']
    """
    undefined = np.isnan(proc)
    low_proc = ~undefined & (proc < proc_threshold)
    with np.errstate(invalid="ignore"):
        low_pct = ~undefined & ~np.isnan(pct) & (pct < pct_threshold)
    return np.select(
        [undefined, low_proc & low_pct, low_proc, low_pct],
        [VERDICTS.index("undefined"), VERDICTS.index("both"), VERDICTS.index("retrieval"), VERDICTS.index("selection")],
        default=VERDICTS.index("healthy"),
    )


def diagnose(
    qrels: Any = None,
    run: Any = None,
    pool: Any = None,
    *,
    samples: Any = None,
    k: int = 10,
    proc_threshold: float = PROC_THRESHOLD,
    pct_threshold: float = PCT_THRESHOLD,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    worst: int = 10,
    engine: Any = "local",
) -> Diagnosis:
    """Classify every query as a retrieval failure, a selection failure or healthy (see the module).

    ``pool`` is the retrieval pool the run was selected from (default: the run itself; the same as
    ``rag.pool``), cut at ``rag.pool_depth``; ``policies`` and ``rag`` are as in
    :func:`ctxeval.evaluate`. ``samples`` (instead of ``qrels`` and ``run``): one sample set (a
    ``Samples``, a path, a list of sample mappings or a frame); its ``pool`` lists are the pool.

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
    rcfg = RagConfig.coerce(rag)
    if pool is not None:
        if rcfg.pool is not None:
            raise ConfigError("give the pool once: as pool= or as rag.pool")
        rcfg = replace(rcfg, pool=pool)
    measures = [make("RA-nWG", None, k), make("PROC", None, k), make("%PROC", None, k), make("N-Recall5", None, k)]
    eng = provider(engine)
    qrels, run, input_notes, sets = one_run_inputs("diagnose", qrels, run, samples, policies, eng)
    session, (rn,) = open_session(qrels, [run], measures, policies=policies, rag=rcfg, samples=sets, engine=eng)
    mapped = session.blocks(rn, measures, _Queries(tuple(measures), k), keep_rows=True)
    block = mapped.block
    ra, proc, pct, nr5 = (block.values[m] for m in measures)
    verdict = classify(proc, pct, proc_threshold, pct_threshold)
    missed, possible = block.items["missed"], block.values["possible"]
    rows = [
        QueryDiagnosis(
            q,
            VERDICTS[int(verdict[i])],
            float(ra[i]),
            float(proc[i]),
            float(pct[i]),
            float(nr5[i]),
            missed[i],
            bool(possible[i]),
        )
        for i, q in enumerate(block.qids)
    ]
    pool_run = session.pool_for(rn)
    gm = session.rag.grade_map
    settings = {
        "qrels": session.qrels.source,
        "run": rn.source,
        "pool": pool_run.source if pool_run is not None else None,
        "pool_depth": rcfg.pool_depth,
        "allow_outside_pool": rcfg.allow_outside_pool,
        "grade_map": gm.describe() if gm is not None else None,
        "ties": session.policies.ties,
        "missing": session.policies.missing,
        "duplicates": session.policies.duplicates,
        "top_grade": top_grade(gm),
    }
    report = block.totals.get("pool") if pool_run is not None else None
    notes = list(input_notes)
    note = depth_note(
        mapped.name,
        block.values["depth"],
        k,
        "the whole list lies inside the top k, so %PROC is 1 by construction and no query can be a selection "
        "failure: choose a k within the run's depth",
    )
    if note:
        notes.append(note)
    opened = len(session.notes)
    session.label_notes(measures, scale_read=True)
    notes += [*session.notes[:opened], *mapped.notes, *session.notes[opened:]]
    return Diagnosis(
        mapped.name,
        k,
        float(proc_threshold),
        float(pct_threshold),
        rows,
        settings,
        mapped.accounting,
        report,
        worst,
        notes,
    )


@dataclass(frozen=True)
class _Queries:
    """diagnose's block function (:mod:`ctxeval._engines.blocks`): per query the measures at k, whether
    a selection failure could occur and the top-grade docs missing from the top k; the pool's counts."""

    measures: tuple[Measure, ...]
    k: int

    def __call__(self, session: Any, data: EvalData) -> Block:
        block = Block(list(data.qids), values={m: m.compute(data) for m in self.measures})
        block.values["depth"] = list_depths(data)
        block.values["possible"] = selection_possible(data, self.k)
        missed = _missed_gold(data, session, self.k)
        block.items["missed"] = [missed.get(i, ()) for i in range(data.n_queries)]
        pool: Pool = data.extra("pool")
        if not pool.own:
            block.totals["pool"] = pool.report()
        return block


def selection_possible(data: EvalData, k: int) -> np.ndarray:
    """Per query, whether a selection failure could occur: the pool (within its depth) holds a doc
    that is not in the final top ``k``. Where the top k holds the whole pool, %PROC@k is 1 (or NA) by
    construction.

    >>> from ctxeval._session import open_session
    >>> from ctxeval._measures import make
    >>> run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"d": 1.0}}
    >>> session, (rn,) = open_session({"q1": {"a": 5}, "q2": {"d": 5}}, [run], [make("PROC", None, 2)])
    >>> selection_possible(session.prepare(rn, [make("PROC", None, 2)], keep_rows=True), 2).tolist()
    [True, False]
    """
    pool: Pool = data.extra("pool")
    if data.rows is None or pool.m_doc is None:
        raise ConfigError("diagnose needs the run's ranked rows (keep_rows)")
    top = np.flatnonzero(data.r_rank <= k)
    i, _ = match_pairs(pool.m_seg, pool.m_doc, data.r_seg[top], data.rows.doc.take(top))
    in_top = np.zeros(pool.m_seg.size, dtype=bool)
    in_top[i] = True
    return np.bincount(pool.m_seg[~in_top], minlength=data.n_queries)[: data.n_queries] > 0


def top_grade(gm: Any) -> dict[str, Any]:
    """The grade the missed-doc lists follow: 5 on the 1-5 scale, and the qrels grades that map to it.

    >>> from ctxeval._core.grademap import GradeMap
    >>> top_grade(GradeMap.parse("trec-dl"))["qrels_grades"], top_grade(None)["qrels_grades"]
    ([3], [5])
    """
    if gm is None or not gm.mapping:
        return {"utility_grade": UTIL_MAX, "qrels_grades": [UTIL_MAX], "label": f"grade-{UTIL_MAX}"}
    src = sorted(g for g, v in gm.mapping.items() if v == UTIL_MAX)
    shown = "/".join(str(g) for g in src) or "none"
    return {
        "utility_grade": UTIL_MAX,
        "qrels_grades": src,
        "label": f"qrels grade {shown} (= {UTIL_MAX})",
    }


def _missed_gold(data: EvalData, session: Any, k: int) -> dict[int, tuple[MissedDoc, ...]]:
    """Grade-5 docs (after the grade map) of every evaluated query that are not in the top k, by query
    position: where each sat in the pool and in the final run."""
    qids = np.array(data.qids, dtype=str) if data.qids else np.zeros(0, dtype="U1")
    cols = session.qrels.columns
    q_seg, rows = judged_docs(cols, qids)
    gm = session.rag.grade_map
    grade = cols.values[rows].astype(np.int64)
    util = gm.apply(grade) if gm is not None and gm.mapping else grade
    gold = util == UTIL_MAX
    if not gold.any():
        return {}
    g_seg, g_doc = q_seg[gold], cols.doc.take(rows[gold])
    n = g_seg.size
    run_rank = np.zeros(n, dtype=np.int64)  # 0: not retrieved
    i, j = match_pairs(g_seg, g_doc, data.r_seg, data.rows.doc)  # type: ignore[union-attr]
    run_rank[i] = data.r_rank[j]
    pool: Pool = data.extra("pool")
    pool_rank = np.zeros(n, dtype=np.int64)  # 0: not in the pool
    if pool.m_doc is not None and pool.m_seg.size:
        i, j = match_pairs(g_seg, g_doc, pool.m_seg, pool.m_doc)
        pool_rank[i] = pool.m_rank[j]
    keep = np.flatnonzero((run_rank == 0) | (run_rank > k))
    docs = g_doc.to_list(keep)
    found: dict[int, list[tuple[int, int, str, int]]] = {}
    for at, d in zip(keep.tolist(), docs):
        pr = int(pool_rank[at])
        found.setdefault(int(g_seg[at]), []).append((pr == 0, pr, d.encode("utf-8"), int(run_rank[at])))
    out: dict[int, tuple[MissedDoc, ...]] = {}
    for q, items in found.items():
        items.sort()
        out[q] = tuple(MissedDoc(d.decode("utf-8"), None if none else pr, rr or None) for none, pr, d, rr in items)  # type: ignore[attr-defined]
    return out
