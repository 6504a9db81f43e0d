"""The gate's results: frozen values with their data (``to_dict``, ``to_json``, ``to_pandas``); the text
renderings live in :mod:`ctxeval._render.gate`, which adds them to the public :class:`~ctxeval.GateReport`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .._json import fields, num
from .._show import html_table, pandas

__all__ = ["METHOD", "VERDICTS", "GateResult", "GateRow", "PowerPlan"]

#: the gate's test (see :mod:`ctxeval._stats.onesided`)
METHOD = "t-test corrected for skewness (Hall 1992), one-sided"
#: what a gated measure's verdict says: a significant drop beyond the tolerance; a change beyond the
#: tolerance that is not significant; no significant drop and a change within it; not tested
VERDICTS = ("drop", "inconclusive", "holds", "untested")


@dataclass(frozen=True)
class GateRow:
    """One gated measure: the change, its interval and test, the margin and what the set can tell."""

    measure: str
    higher_is_better: bool
    margin: float
    n: int  #: paired queries where both values are defined
    n_dropped: int  #: paired queries left out (a value undefined)
    baseline_mean: float
    candidate_mean: float
    change: float  #: candidate − baseline, in the measure's units
    low: float  #: the 1 − 2α interval of the change, in the measure's units
    high: float
    p_value: float
    p_adjusted: float
    verdict: str  #: "holds", "inconclusive", "drop" or "untested" (see :data:`VERDICTS`)
    detectable: float  #: the smallest drop caught 80 % of the time with these queries
    detect: float  #: the drop the set should be able to catch (2 × margin, or 0.02)
    needed: int | None  #: queries needed to catch ``detect`` 80 % of the time
    method: str = METHOD
    sd: float = math.nan  #: standard deviation of the per-query changes
    skew: float = math.nan  #: their sample skewness, in the measure's better direction
    why: str = ""  #: why the measure is untested

    @property
    def enough(self) -> bool:
        """Whether the set catches a drop of ``detect`` at least 80 % of the time."""
        return bool(self.needed is not None and self.n >= self.needed)

    def to_dict(self) -> dict[str, Any]:
        return {
            **fields(self, "measure", "higher_is_better", "margin", "n", "n_dropped"),
            "baseline_mean": num(self.baseline_mean),
            "candidate_mean": num(self.candidate_mean),
            "change": num(self.change),
            "interval": [num(self.low), num(self.high)],
            "p_value": num(self.p_value),
            "p_adjusted": num(self.p_adjusted),
            "verdict": self.verdict,
            "detectable_drop": num(self.detectable),
            "detect": self.detect,
            "queries_needed": self.needed,
            "enough_queries": self.enough,
            "method": self.method,
            "sd_changes": num(self.sd),
            "skewness": num(self.skew),
            **({"untested_because": self.why} if self.why else {}),
        }


@dataclass(frozen=True)
class GateResult:
    """The outcome of the gate: one :class:`GateRow` per gated measure, with the settings (the public
    :class:`~ctxeval.GateReport` adds its renderings)."""

    baseline: str  #: the baseline run's name
    candidate: str
    rows: tuple[GateRow, ...]
    alpha: float
    labels: dict[str, Any]
    notes: tuple[str, ...] = ()

    @property
    def holds(self) -> bool:
        """No gated measure dropped significantly beyond its tolerance, and each one was tested."""
        return self.exit_code == 0

    @property
    def exit_code(self) -> int:
        """0: every gated measure tested and none dropped significantly beyond its tolerance (some may
        be inconclusive); 1: at least one did; 2: none did, but a gated measure could not be tested."""
        verdicts = {r.verdict for r in self.rows}
        return 1 if "drop" in verdicts else (2 if "untested" in verdicts else 0)

    def measures_with(self, verdict: str) -> list[str]:
        """The gated measures with this verdict (one of :data:`VERDICTS`)."""
        return [r.measure for r in self.rows if r.verdict == verdict]

    def row(self, measure: str) -> GateRow:
        for r in self.rows:
            if r.measure == measure:
                return r
        raise KeyError(measure)

    def to_dict(self) -> dict[str, Any]:
        return {
            **fields(self, "baseline", "candidate", "holds", "exit_code", "alpha"),
            "correction": "holm",
            "test": "one-sided t-test corrected for skewness (Hall 1992) of a drop beyond the tolerated drop "
            "(H0: change >= -margin)",
            "labels": self.labels,
            "measures": [r.to_dict() for r in self.rows],
            "notes": list(self.notes),
        }

    def __repr__(self) -> str:
        state = {0: "holds", 1: "DROP", 2: "UNTESTED"}[self.exit_code]
        return f"GateReport({state}, {self.candidate} vs {self.baseline}, {len(self.rows)} measures)"

    _COLUMNS = ("measure", "baseline", "candidate", "change", "low", "high", "margin", "p_adjusted", "verdict", "n")
    _FIELDS = (
        "measure",
        "baseline_mean",
        "candidate_mean",
        "change",
        "low",
        "high",
        "margin",
        "p_adjusted",
        "verdict",
        "n",
    )

    def _rows(self) -> list[list[Any]]:
        return [[getattr(r, f) for f in self._FIELDS] for r in self.rows]

    def _repr_html_(self) -> str:
        state = {0: "holds", 1: "a significant drop", 2: "a gated measure untested"}[self.exit_code]
        caption = f"gate: {self.candidate} against {self.baseline}: {state}"
        notes = html_table(["note"], [[n] for n in self.notes]) if self.notes else ""
        return html_table(self._COLUMNS, self._rows(), caption) + notes

    def to_pandas(self) -> Any:
        """One row per gated measure: ``measure, baseline, candidate`` (the means), ``change, low, high``
        (the change and its 1 − 2α interval), ``margin`` (the tolerated drop), ``p_adjusted`` (Holm),
        ``verdict`` (holds, inconclusive, drop or untested) and ``n`` (the paired queries)."""
        pd = pandas("GateReport.to_pandas")
        return pd.DataFrame(self._rows(), columns=list(self._COLUMNS))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"


@dataclass(frozen=True)
class PowerPlan:
    """What :func:`power` found for one measure."""

    measure: str
    n: int
    sd: float  #: standard deviation of the per-query changes (observed, or assumed)
    sd_source: str
    margin: float
    drop: float
    alpha: float
    power: float
    needed: int | None  #: queries needed to catch ``drop`` with probability ``power``
    detectable: float  #: the smallest drop caught with probability ``power`` with n queries
    power_now: float  #: the probability of catching ``drop`` with n queries (formula)
    simulated_now: float  #: the same by the bootstrap check

    @property
    def never(self) -> str | None:
        """Why no number of queries catches ``drop`` (it is not beyond the tolerated drop), or None."""
        if self.drop > self.margin:
            return None
        at = "at" if self.drop == self.margin else "within"
        return (
            f"a drop of {self.drop:g} is {at} the tolerated drop ({self.margin:g}): the gate fails only on drops beyond "
            f"it, so it never flags this one, with any number of queries; ask how many queries catch a larger drop "
            f"(--drop {2 * self.margin:g}, twice the tolerance)"
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, never_flagged=self.never)
