"""The settings of a comparison, frozen, validated values: :class:`Stats` (the test, its level and
correction, the bootstrap, the seed), :class:`Strata` (what stratifies the report) and
:class:`Sections` (what the report holds besides its tables: curves, PROC data, the distraction table).

>>> Stats(test="t", seed=3).test
't'
>>> Stats(alpha=1.5)
Traceback (most recent call last):
ctxeval.ConfigError: alpha must be a number strictly between 0 and 1, got 1.5
>>> Strata.coerce("num_rel")
Strata(by='num_rel', queries=None, num_rel_level=None, min_size=10)
>>> Sections(curves_k=0, distraction_k=5).distraction_k
5
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from .._policies import coerce_settings
from .._stats.adjust import CORRECTION_NAMES, CORRECTIONS
from .._stats.intervals import CI_METHODS
from .._stats.paired import TEST_NAMES, TESTS

__all__ = ["CI_METHODS", "CORRECTIONS", "CORRECTION_NAMES", "TESTS", "TEST_NAMES", "Sections", "Stats", "Strata"]


@dataclass(frozen=True)
class Stats:
    """The paired test, its significance level and correction, the bootstrap and the seed."""

    test: str = "randomization"  #: randomization, t, wilcoxon or bootstrap
    alpha: float = 0.05
    correction: str = "holm"  #: holm, bonferroni, bh or none
    permutations: int = 10000  #: random sign flips of the randomization test
    resamples: int = 10000  #: bootstrap resamples (intervals and the bootstrap test)
    seed: int = 0
    ci: str = "percentile"  #: percentile or bca
    confidence: float = 0.95
    pairs: str = "baseline"  #: baseline (each run against it) or all (every pair of runs, as ranx's compare)

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise ConfigError(f"test must be one of {', '.join(TESTS)}, got {self.test!r}")
        if self.correction not in CORRECTIONS:
            raise ConfigError(f"correction must be one of {', '.join(CORRECTIONS)}, got {self.correction!r}")
        if self.pairs not in ("baseline", "all"):
            raise ConfigError(f"pairs must be 'baseline' or 'all', got {self.pairs!r}")
        if self.ci not in CI_METHODS:
            raise ConfigError(f"ci must be one of {', '.join(CI_METHODS)}, got {self.ci!r}")
        for name in ("alpha", "confidence"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 < float(v) < 1.0:
                raise ConfigError(f"{name} must be a number strictly between 0 and 1, got {v!r}")
        for name in ("permutations", "resamples"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name} must be a whole number >= 1, got {v!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ConfigError(f"seed must be a whole number >= 0, got {self.seed!r}")

    @classmethod
    def coerce(cls, value: Stats | Mapping[str, Any] | None) -> Stats:
        return coerce_settings(cls, value, "statistics settings")


def _whole(name: str, value: Any, least: int | None, none: bool = True) -> None:
    """``value`` is a whole number (>= ``least`` unless None: a grade), or None when ``none``."""
    if value is None and none:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or (least is not None and value < least):
        what = "(a grade)" if least is None else f">= {least}"
        raise ConfigError(f"{name} must be a whole number {what}, got {value!r}")


@dataclass(frozen=True)
class Strata:
    """What stratifies a comparison report (each stratum gets every measure, tested on its own).

    ``by``: a ``qid category`` file, a mapping ``qid -> category | [categories]``, the built-in
    ``"num_rel"`` / ``"query_length"``, or a list of these (None: no strata, unless ``queries`` are
    given or the sample sets carry categories). ``queries``: the query texts (a ``qid<TAB>text`` or
    JSONL file, or a mapping), which add the ``query_length`` strata. ``num_rel_level``: the num_rel
    strata count the judged docs with grade >= this (default: the level of the grade scale in force).
    ``min_size``: strata with fewer queries are flagged ``small``.
    """

    by: Any = None
    queries: Any = None
    num_rel_level: int | None = None
    min_size: int = 10

    def __post_init__(self) -> None:
        _whole("num_rel_level", self.num_rel_level, None)
        _whole("min_size", self.min_size, 0, none=False)

    @classmethod
    def coerce(cls, value: Any) -> Strata:
        """A :class:`Strata` from itself, None (no strata), or its ``by`` sources (a path, a mapping
        ``qid -> category``, a built-in name or a list of these)."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        return cls(by=value)


@dataclass(frozen=True)
class Sections:
    """What a comparison report holds besides its tables.

    ``curves_k``: cutoffs of the metric@K curves (``"1:50"``, ``"1,5,10"``, a list, or 0 for none;
    default 1..max(20, largest cutoff asked), at most 100); ``curve_measures``: their families
    (default: those of the measures that take a cutoff, nDCG when none does); ``pr_rel``: the
    relevance level of the precision–recall curve (default: the level of the grade scale in force);
    ``proc_k``: the k of the PROC / %PROC data (default: the cutoff of the first PROC, %PROC or other
    RAG measure, else 10); ``distraction_k``: add the distraction table at this k (default: the cutoff
    of the first distraction-aware measure, else none).
    """

    curves_k: str | int | Iterable[int] | None = None
    curve_measures: tuple[Any, ...] | None = None
    pr_rel: int | None = None
    proc_k: int | None = None
    distraction_k: int | None = None

    def __post_init__(self) -> None:
        if self.curve_measures is not None:
            cm = self.curve_measures
            object.__setattr__(self, "curve_measures", (cm,) if isinstance(cm, str) else tuple(cm))
        if self.curves_k is not None and not isinstance(self.curves_k, (str, int)):
            object.__setattr__(self, "curves_k", tuple(self.curves_k))
        _whole("pr_rel", self.pr_rel, None)
        _whole("proc_k", self.proc_k, 1)
        _whole("distraction_k", self.distraction_k, 1)

    @classmethod
    def coerce(cls, value: Sections | Mapping[str, Any] | None) -> Sections:
        return coerce_settings(cls, value, "report sections")
