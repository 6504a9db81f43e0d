"""Test helpers: a retrieval regression gate inside a pytest suite.

>>> from ctxeval.testing import assert_no_regression
>>> qrels = {f"q{i}": {"a": 1} for i in range(40)}
>>> run = {f"q{i}": {"a": 2.0, "x": 1.0} for i in range(40)}
>>> import ctxeval
>>> base = ctxeval.snapshot(qrels, run, ["RR"])
>>> assert_no_regression(base, qrels, run, max_drop={"RR": 0.02}).holds
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._errors import ConfigError
from ._render.gate import gate, row_sentence

__all__ = ["RegressionError", "assert_no_regression"]


class RegressionError(AssertionError):
    """A gated measure dropped significantly beyond its tolerated drop; ``report`` is the
    :class:`~ctxeval.GateReport`."""

    def __init__(self, message: str, report: Any) -> None:
        super().__init__(message)
        self.report = report


def assert_no_regression(
    baseline: Any,
    qrels: Any = None,
    run: Any = None,
    *,
    samples: Any = None,
    max_drop: Any = None,
    alpha: float = 0.05,
    policies: Mapping[str, Any] | Any = None,
    rag: Any = None,
    utility: Any = None,
) -> Any:
    """Run :func:`ctxeval.gate` and raise :class:`RegressionError` (an ``AssertionError``, so pytest
    reports a failure) when it finds a significant drop; its message is the gate's report, one line per
    measure. Returns the :class:`~ctxeval.GateReport` when the gate holds (some measures may be
    inconclusive: their sentences say so). A baseline made under other labels or settings, or a gated
    measure the gate could not test, raises :class:`~ctxeval.ConfigError` (an error, not a failure)."""
    report = gate(
        baseline,
        qrels,
        run,
        samples=samples,
        max_drop=max_drop,
        alpha=alpha,
        policies=policies,
        rag=rag,
        utility=utility,
    )
    if not report.holds:
        what = "dropped against" if report.exit_code == 1 else "could not be tested against"
        lines = [f"ctxeval gate: {report.candidate} {what} the baseline {report.baseline}"]
        lines += [row_sentence(r, report) for r in report.rows]
        lines += [f"note: {n}" for n in report.notes]
        if report.exit_code == 2:
            raise ConfigError("\n".join(lines))
        raise RegressionError("\n".join(lines), report)
    return report
