"""Intervals on a summary of per-query values (a mean, a sum, or a geometric mean), the one place
evaluate's ``ci`` and compare's tables compute them.

A summary is taken over a column's defined (non-NaN) values: ``mean``; ``sum`` (count measures);
``gmean``, exp of the mean of log(max(x, 1e-5)) (trec_eval's gm_map). Resampling statistics work on the
*forward* values (the logs for a geometric mean) and map back. Methods, with level 1 − α:

* ``percentile`` and ``bca``: bootstrap over the queries (:mod:`.resample`'s draws, those of
  ``scipy.stats.bootstrap`` with ``default_rng(seed)``; :mod:`.intervals` for the two rules): each
  resample's summary over the resampled queries where the value is defined;
* ``t``: mean ± t_{k−1, 1−α/2} · s / √k over the k defined values (Student), for a sum k times that
  interval of the mean, for a geometric mean exp of the interval of the mean log; none below k = 2.

>>> CI.coerce("bca")
CI(method='bca', confidence=0.95, resamples=10000, seed=0)
>>> lo, hi = summary_intervals([np.array([0.2, 0.4, 0.6, 0.8])], ["mean"], CI(method="t"))[0]
>>> round(lo, 4), round(hi, 4)
(0.0891, 0.9109)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._policies import coerce_settings
from .intervals import bca_interval, jackknife_means, jackknife_sums
from .resample import check_count, check_seed, resample_sums
from .special import t_ppf

__all__ = ["CI", "CI_KINDS", "GM_FLOOR", "forward", "jackknife", "resampled", "summary_intervals"]

#: the methods of an interval on a summary
CI_KINDS = ("percentile", "bca", "t")
GM_FLOOR = 1e-5


@dataclass(frozen=True)
class CI:
    """An interval on every figure: the method (``percentile``, ``bca`` or ``t``), the level, the
    bootstrap resamples and the seed of their draws."""

    method: str = "percentile"
    confidence: float = 0.95
    resamples: int = 10000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.method not in CI_KINDS:
            raise ConfigError(f"ci method must be one of {', '.join(CI_KINDS)}, got {self.method!r}")
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0.0 < float(c) < 1.0:
            raise ConfigError(f"confidence must be a number strictly between 0 and 1, got {c!r}")
        check_count("resamples", self.resamples)
        check_seed(self.seed)

    @classmethod
    def coerce(cls, value: CI | Mapping[str, Any] | str | bool | None) -> CI | None:
        """A :class:`CI` from itself, a mapping of its fields, a method name, or True (the defaults);
        None or False: no interval."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, str):
            return cls(method=value)
        return coerce_settings(cls, value, "ci settings")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"method": self.method, "confidence": self.confidence}
        if self.method != "t":
            out.update(resamples=self.resamples, seed=self.seed)
        return out

    def text(self) -> str:
        """How the intervals were made, in one phrase (for the reports)."""
        level = f"{self.confidence * 100:g}%"
        if self.method == "t":
            return f"{level} Student t intervals"
        name = "BCa" if self.method == "bca" else "percentile"
        return f"{level} {name} bootstrap intervals over queries ({self.resamples} resamples, seed {self.seed})"


def forward(how: str, x: np.ndarray) -> np.ndarray:
    """Values on the scale the summary averages: log(max(x, 1e-5)) for a geometric mean."""
    return np.log(np.maximum(x, GM_FLOOR)) if how == "gmean" else x


def resampled(how: str, sums: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Each resample's summary from its sums and means of the forward values."""
    if how == "sum":
        return sums
    return np.exp(means) if how == "gmean" else means


def jackknife(how: str, col: np.ndarray) -> np.ndarray:
    """Leave-one-query-out summaries of a column of forward values (NaN = not defined)."""
    if how == "sum":
        return jackknife_sums(col)
    jack = jackknife_means(col)
    return np.exp(jack) if how == "gmean" else jack


def _estimate(how: str, v: np.ndarray) -> float:
    if v.size == 0:
        return math.nan
    if how == "sum":
        return float(v.sum())
    return float(np.exp(v.mean())) if how == "gmean" else float(v.mean())


def _t_interval(how: str, v: np.ndarray, confidence: float) -> tuple[float, float] | None:
    k = v.size
    if k < 2:
        return None
    half = t_ppf(1.0 - (1.0 - confidence) / 2.0, k - 1) * float(v.std(ddof=1)) / math.sqrt(k)
    lo, hi = float(v.mean()) - half, float(v.mean()) + half
    if how == "sum":
        return lo * k, hi * k
    return (math.exp(lo), math.exp(hi)) if how == "gmean" else (lo, hi)


def summary_intervals(columns: list[np.ndarray], hows: list[str], ci: CI) -> list[tuple[float, float] | None]:
    """The interval of each column's summary (``hows``: ``mean``, ``sum`` or ``gmean``); None where the
    column holds no defined value (or fewer than two, for ``t``). Every bootstrap interval comes from
    one set of resamples of the rows (the queries), shared by the columns."""
    fwd = [forward(h, np.asarray(c, dtype=np.float64)) for c, h in zip(columns, hows)]
    if ci.method == "t":
        return [_t_interval(h, v[~np.isnan(v)], ci.confidence) for v, h in zip(fwd, hows)]
    if not fwd:
        return []
    X = np.column_stack(fwd)
    sums, counts = resample_sums(X, resamples=ci.resamples, seed=ci.seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
    alpha = (1.0 - ci.confidence) / 2.0
    out: list[tuple[float, float] | None] = []
    for j, (v, how) in enumerate(zip(fwd, hows)):
        boot = resampled(how, sums[:, j], means[:, j])
        boot = boot[counts[:, j] > 0]
        estimate = _estimate(how, v[~np.isnan(v)])
        if boot.size == 0 or math.isnan(estimate):
            out.append(None)
            continue
        if ci.method == "bca":
            lo, hi = bca_interval(boot, estimate, jackknife(how, v), ci.confidence)
        else:
            lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
        out.append((float(lo), float(hi)))
    return out
