"""The gate's settings, validated once into a frozen value: the tolerated drop of each gated measure,
the level of the one-sided tests (Holm across the measures) and what the report plans for.

>>> s = GateSettings.resolve("nDCG@10=0.02", 0.05, ["nDCG@10", "AP"])
>>> s.max_drop, s.measures, s.detect_for(0.02), s.plan_alpha
({'nDCG@10': 0.02}, ('nDCG@10',), 0.04, 0.05)
>>> GateSettings.resolve(None, 0.7, ["AP"])
Traceback (most recent call last):
ctxeval.ConfigError: alpha must be a number strictly between 0 and 0.5, got 0.7
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._errors import ConfigError
from .._measures import parse_measure
from .._policies import coerce_settings

__all__ = ["DEFAULT_DETECT", "PLAN_POWER", "GateSettings", "PowerSettings", "parse_max_drop"]

#: the power at which the report says what a query set can tell
PLAN_POWER = 0.8
#: the drop a set must be able to catch (beyond none tolerated) when no drop is tolerated
DEFAULT_DETECT = 0.02


@dataclass(frozen=True)
class GateSettings:
    """What the gate tests: ``max_drop`` maps each gated measure to its tolerated drop (in the
    measure's units), ``alpha`` is the level of the one-sided tests, Holm-adjusted across them; the
    report says whether the queries catch a drop of ``detect_for(margin)`` with probability
    ``plan_power``, planned at ``plan_alpha`` (alpha over the measures, Holm's first step)."""

    max_drop: Mapping[str, float]
    alpha: float = 0.05
    plan_power: float = PLAN_POWER
    default_detect: float = DEFAULT_DETECT

    @classmethod
    def resolve(cls, max_drop: Any, alpha: Any, measures: list[str]) -> GateSettings:
        """From ``gate``'s arguments: ``max_drop`` as :func:`parse_max_drop` reads it (among the
        baseline's ``measures``), ``alpha`` strictly between 0 and 0.5."""
        if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0.0 < alpha < 0.5:
            raise ConfigError(f"alpha must be a number strictly between 0 and 0.5, got {alpha!r}")
        return cls(parse_max_drop(max_drop, measures), float(alpha))

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(self.max_drop)

    @property
    def plan_alpha(self) -> float:
        return self.alpha / max(1, len(self.max_drop))

    def detect_for(self, margin: float) -> float:
        """The drop a set should be able to catch: twice the tolerated one, or ``default_detect``."""
        return 2.0 * margin if margin > 0 else self.default_detect


@dataclass(frozen=True)
class PowerSettings:
    """What a power plan assumes beyond the drop and the level: ``power``, the probability with which
    the gate must catch the drop, and ``correlation``, the per-query correlation of the baseline and a
    candidate, assumed when no candidate run gives the spread of the changes.

    >>> PowerSettings.coerce({"power": 0.9}).correlation
    0.7
    >>> PowerSettings(power=1.0)
    Traceback (most recent call last):
    ctxeval.ConfigError: power must be a number strictly between 0 and 1, got 1.0
    """

    power: float = PLAN_POWER
    correlation: float = 0.7

    def __post_init__(self) -> None:
        p, r = self.power, self.correlation
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 < p < 1.0:
            raise ConfigError(f"power must be a number strictly between 0 and 1, got {p!r}")
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not -1.0 <= r < 1.0:
            raise ConfigError(f"correlation must be in [-1, 1), got {r!r}")

    @classmethod
    def coerce(cls, value: PowerSettings | Mapping[str, Any] | None) -> PowerSettings:
        """A :class:`PowerSettings` from itself, a mapping of its fields, or None (the defaults)."""
        return coerce_settings(cls, value, "power settings")


def parse_max_drop(value: Any, measures: list[str]) -> dict[str, float]:
    """``{measure: tolerated drop}`` from a mapping, ``"nDCG@10=0.02,AP=0.01"``, or one number for
    every measure; None: every measure of the baseline at 0. Measure names are read with the measure
    grammar (``ndcg_cut.10`` is nDCG@10) and must be among the baseline's."""
    if value is None:
        return dict.fromkeys(measures, 0.0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {m: _drop("max_drop", value) for m in measures}
    if isinstance(value, str):
        items: list[tuple[str, Any]] = []
        for part in value.split(","):
            name, eq, num = part.strip().rpartition("=")
            if not eq or not name:
                raise ConfigError(f"max drop {part.strip()!r}: expected MEASURE=DROP, e.g. nDCG@10=0.02")
            items.append((name.strip(), num.strip()))
    elif isinstance(value, Mapping):
        items = list(value.items())
    else:
        raise ConfigError(f"max_drop must be a number, a mapping or 'MEASURE=DROP,...', got {type(value).__name__}")
    out: dict[str, float] = {}
    for name, num in items:
        key = str(parse_measure(name)) if not isinstance(name, str) or name not in measures else name
        if key not in measures:
            raise ConfigError(f"max drop of {name}: the baseline holds {', '.join(measures)}, not {key}")
        try:
            out[key] = _drop(f"max drop of {name}", float(num))
        except ValueError:
            raise ConfigError(f"max drop of {name}: {num!r} is not a number") from None
    return out


def _drop(what: str, v: float) -> float:
    if not math.isfinite(v) or v < 0:
        raise ConfigError(f"{what} must be a number >= 0 (a drop in the measure's units), got {v!r}")
    return float(v)
