"""The model of a comparison: what :func:`~ctxeval._compare.compare.compare` computes, as data.

Rendering (terminal table, Markdown, LaTeX, HTML) lives in ``ctxeval._render``; CSV and pandas are
data conversions and live here.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any

from .._curve import Curves
from .._errors import ConfigError, DependencyError
from .._evaluate import Result
from .._json import num as _num
from .._measures import Measure
from .._session import measure_list
from .._show import fmt, html_table

__all__ = ["Block", "Comparison", "Report", "RunSummary", "Stratum"]


def _pair(ci: tuple[float, float] | None) -> list[float | None] | None:
    if ci is None or math.isnan(ci[0]) or math.isnan(ci[1]):
        return None
    return [float(ci[0]), float(ci[1])]


@dataclass
class Comparison:
    """One run against the baseline on one measure."""

    run: str
    measure: Measure
    mean: float
    baseline_mean: float
    diff: float
    ci: tuple[float, float] | None
    p_value: float
    p_adjusted: float
    significant: bool
    wins: int
    ties: int
    losses: int
    n_queries: int
    n_dropped: int
    against: str | None = None  #: the run compared with (all pairs); None: the report's baseline

    @property
    def better(self) -> bool | None:
        """Significantly better (True), significantly worse (False), or not significant (None)."""
        if not self.significant or math.isnan(self.diff) or self.diff == 0:
            return None
        return (self.diff > 0) == self.measure.spec.higher_is_better

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "measure": str(self.measure),
            "mean": _num(self.mean),
            "baseline_mean": _num(self.baseline_mean),
            "diff": _num(self.diff),
            "ci": _pair(self.ci),
            "p_value": _num(self.p_value),
            "p_adjusted": _num(self.p_adjusted),
            "significant": bool(self.significant),
            "wins": int(self.wins),
            "ties": int(self.ties),
            "losses": int(self.losses),
            "n_queries": int(self.n_queries),
            "n_dropped": int(self.n_dropped),
            **({"against": self.against} if self.against is not None else {}),
        }


@dataclass
class RunSummary:
    """A run's summary over a set of queries (all of them, or one stratum)."""

    name: str
    aggregate: dict[Measure, float]
    valid: dict[Measure, int]
    ci: dict[Measure, tuple[float, float] | None]


@dataclass
class Block:
    """The figures of one table: every run's summaries and every comparison with the baseline."""

    n_queries: int
    runs: list[RunSummary]
    comparisons: list[Comparison]

    def comparison(self, run: str, measure: Measure, against: str | None = None) -> Comparison | None:
        """``run``'s comparison on ``measure`` with the baseline (or, of all pairs, with ``against``)."""
        for c in self.comparisons:
            if c.run == run and c.measure == measure and (against is None or c.against in (None, against)):
                return c
        return None


@dataclass
class Stratum:
    name: str
    source: str  #: "file" | "num_rel" | "query_length"
    small: bool
    block: Block


class Report:
    """The outcome of :func:`compare`. ``to_dict()`` is the JSON of ``ctxeval compare --format json``;
    the text formats are added by :class:`ctxeval.Report` (``ctxeval._render.report``)."""

    def __init__(
        self,
        baseline: str,
        measures: list[Measure],
        result: Result,
        overall: Block,
        strata: dict[str, Stratum] | None,
        curves: dict[str, Any] | None,
        pr_curves: dict[str, Any] | None,
        proc: dict[str, Any] | None,
        settings: dict[str, Any],
        notes: list[str],
    ) -> None:
        self.baseline = baseline
        self.measures = measures
        self.result = result
        self.overall = overall
        self.strata = strata
        self.curves = curves
        self.pr_curves = pr_curves
        self.proc = proc
        self.settings = settings
        self.notes = notes
        self.distraction: dict[str, Any] | None = None

    @property
    def comparisons(self) -> list[Comparison]:
        return self.overall.comparisons

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.result.runs]

    @property
    def baselines(self) -> list[str]:
        """The baseline runs (several when compare was given several)."""
        return list(self.settings.get("baselines") or [self.baseline])

    @property
    def named(self) -> bool:
        """Whether each comparison names the run it is against (all pairs, or several baselines)."""
        return self.settings.get("pairs") == "all" or len(self.baselines) > 1

    def comparison(self, run: str, measure: str | Measure, against: str | None = None) -> Comparison:
        """``run`` against the baseline on ``measure`` (with all pairs or several baselines: against
        ``against``, default the first baseline)."""
        m = measure_list(measure)[0]
        c = self.overall.comparison(run, m, (against or self.baseline) if self.named else None)
        if c is None:
            raise KeyError(f"no comparison of {run!r} on {m}")
        return c

    def __repr__(self) -> str:
        return f"Report(baseline={self.baseline!r}, runs={self.run_names}, measures={[str(m) for m in self.measures]})"

    def _repr_html_(self) -> str:
        """The means, each with its difference to the baseline (▲/▼ where significant)."""
        cells = []
        against = self.baseline if self.named else None
        for s in self.overall.runs:
            row: list[Any] = [s.name]
            for m in self.measures:
                c = self.overall.comparison(s.name, m, against) if s.name != self.baseline else None
                mark = ""
                if c is not None and c.significant:
                    better = (c.diff > 0) == m.spec.higher_is_better
                    mark = " ▲" if better else " ▼"
                row.append(fmt(s.aggregate[m]) + mark)
            cells.append(row)
        cap = f"means; ▲/▼ significantly better/worse than the baseline {self.baseline}"
        return html_table(["run", *map(str, self.measures)], cells, cap)

    def plot(self, measure: str | None = None, ax: Any = None) -> Any:
        """The metric@K curves of ``measure`` (default: the first), one line per run (see
        :meth:`ctxeval.Curves.plot`); needs the ``report`` extra."""
        if not self.curves:
            raise ConfigError("this report has no curves (curves_k=0)")
        return Curves(self.curves).plot(measure, ax)

    # -- dict / JSON --------------------------------------------------------------------------------
    def _runs_dict(self, block: Block) -> list[dict[str, Any]]:
        return [
            {
                "name": s.name,
                "aggregate": {str(m): _num(s.aggregate[m]) for m in self.measures},
                "valid_queries": {str(m): s.valid[m] for m in self.measures},
                "ci": {str(m): _pair(s.ci[m]) for m in self.measures},
            }
            for s in block.runs
        ]

    def to_dict(self) -> dict[str, Any]:
        runs = []
        for r, s in zip(self.result.runs, self.overall.runs):
            entry = r.entry(self.measures, utility=False)
            entry["ci"] = {str(m): _pair(s.ci[m]) for m in self.measures}
            entry["per_query"] = r.per_query_dict(self.measures)
            runs.append(entry)
        out: dict[str, Any] = {
            "baseline": self.baseline,
            "measures": [str(m) for m in self.measures],
            "runs": runs,
            "comparisons": [c.to_dict() for c in self.overall.comparisons],
        }
        if self.strata is not None:
            out["strata"] = {
                name: {
                    "source": st.source,
                    "n_queries": st.block.n_queries,
                    "small": st.small,
                    "runs": self._runs_dict(st.block),
                    "comparisons": [c.to_dict() for c in st.block.comparisons],
                }
                for name, st in self.strata.items()
            }
        out["curves"] = self.curves
        out["pr_curves"] = self.pr_curves
        out["proc"] = self.proc
        out["distraction"] = self.distraction
        out["settings"] = dict(self.settings)
        if self.notes:
            out["settings"]["notes"] = list(self.notes)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    # -- data formats ---------------------------------------------------------------------------------
    def to_pandas(self, per_query: bool = False) -> Any:
        """One row per (run, measure): mean, CI, valid queries and the comparison with the baseline
        (NaN on the baseline's rows); with ``per_query=True`` the long per-query table of :meth:`to_csv`."""
        return to_pandas(self, per_query)

    def to_csv(self) -> str:
        """Long format: run, query, measure, value (every per-query value; empty = NA)."""
        return to_csv(self)


def to_csv(report: Report) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "query", "measure", "value"])
    for r in report.result.runs:
        for i, q in enumerate(r.qids):
            for m in report.measures:
                v = float(r.values[m][i])
                w.writerow([r.name, q, str(m), "" if math.isnan(v) else repr(v)])
    return buf.getvalue()


def to_pandas(report: Report, per_query: bool = False) -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise DependencyError("Report.to_pandas", "pandas", "pandas") from None
    if per_query:
        rows_pq = []
        for r in report.result.runs:
            for i, q in enumerate(r.qids):
                for m in report.measures:
                    rows_pq.append((r.name, q, str(m), float(r.values[m][i])))
        return pd.DataFrame(rows_pq, columns=["run", "query", "measure", "value"])
    nan = math.nan
    rows: list[tuple[Any, ...]] = []
    named = report.named
    for s in report.overall.runs:
        for m in report.measures:
            ci = s.ci[m] or (nan, nan)
            found: list[Comparison | None] = [
                c for c in report.overall.comparisons if c.run == s.name and c.measure == m
            ] or [None]
            if not named:
                found = found[:1]
            for c in found:
                comp: tuple[Any, ...]
                if c is None:
                    comp = (nan, nan, nan, nan, nan, nan, None, nan, nan, nan, nan, nan)
                else:
                    dci = c.ci or (nan, nan)
                    comp = (
                        c.baseline_mean,
                        c.diff,
                        dci[0],
                        dci[1],
                        c.p_value,
                        c.p_adjusted,
                        c.significant,
                        c.wins,
                        c.ties,
                        c.losses,
                        c.n_queries,
                        c.n_dropped,
                    )
                head = (s.name, str(m)) + ((None if c is None else c.against,) if named else ())
                rows.append((*head, s.aggregate[m], ci[0], ci[1], s.valid[m], *comp))
    cols = ["run", "measure", *(["against"] if named else []), *_COLUMNS]
    return pd.DataFrame(rows, columns=cols)


_COLUMNS = [
    "mean",
    "ci_low",
    "ci_high",
    "valid_queries",
    "baseline_mean",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "p_value",
    "p_adjusted",
    "significant",
    "wins",
    "ties",
    "losses",
    "n_queries",
    "n_dropped",
]
