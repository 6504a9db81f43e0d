"""The statistical settings of a comparison, one frozen, validated value.

>>> Stats(test="t", seed=3).test
't'
>>> Stats(alpha=1.5)
Traceback (most recent call last):
ctxeval._errors.ConfigError: alpha must be a number strictly between 0 and 1, got 1.5
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from .._policies import coerce_settings

__all__ = ["CI_METHODS", "CORRECTIONS", "CORRECTION_NAMES", "TESTS", "TEST_NAMES", "Stats"]

TESTS = ("randomization", "t", "wilcoxon", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
CI_METHODS = ("percentile", "bca")

TEST_NAMES = {
    "randomization": "paired randomization test (random sign flips), two-sided, p = (b + 1) / (B + 1)",
    "t": "paired t-test, two-sided",
    "wilcoxon": "Wilcoxon signed-rank test, two-sided (scipy's defaults: zeros dropped, exact for n <= 50 without ties or zeros, every sign flip for n <= 13 with them, normal approximation with tie correction otherwise)",
    "bootstrap": "paired studentized bootstrap test, two-sided, p = (b + 1) / (B + 1)",
}
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "no correction"}


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

    def __post_init__(self) -> None:
        if self.test not in TESTS:
            raise ConfigError(f"test must be one of {', '.join(TESTS)}, got {self.test!r}")
        if self.correction not in CORRECTIONS:
            raise ConfigError(f"correction must be one of {', '.join(CORRECTIONS)}, got {self.correction!r}")
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
