"""Reading the report dict: every value checked where it is used, every error naming its place."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..._errors import InputError, MeasureError
from ..._measures import parse_measure
from .cells import _COMPARISON_NUMBERS


def _fail(where: str, rule: str, value: Any) -> InputError:
    shown = repr(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return InputError(f"report {where}: {rule}, got {shown}")


def _num(value: Any, where: str) -> float | None:
    """A number or None (null, NaN); anything else is an error."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _fail(where, "expected a number or null", value)
    x = float(value)
    return None if math.isnan(x) else x


def _number(value: Any, where: str) -> float:
    """A number that must be there (not null, not NaN)."""
    x = _num(value, where)
    if x is None:
        raise _fail(where, "expected a number", value)
    return x


def _count(value: Any, where: str) -> int:
    """A whole number >= 0."""
    x = _number(value, where)
    if x < 0 or x != int(x):
        raise _fail(where, "expected a whole number >= 0", value)
    return int(x)


def _str(value: Any, where: str, ids: bool = False) -> str:
    if isinstance(value, str):
        return value
    if ids and isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _fail(where, "expected a string", value)


def _map(value: Any, where: str, optional: bool = True) -> Mapping[str, Any]:
    if value is None and optional:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(where, "expected an object", value)
    return value


def _list(value: Any, where: str, optional: bool = True) -> Sequence[Any]:
    if value is None and optional:
        return []
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise _fail(where, "expected a list", value)
    return value


def _ci(value: Any, where: str) -> tuple[float | None, float | None] | None:
    if value is None:
        return None
    pair = _list(value, where)
    if len(pair) != 2:
        raise _fail(where, "expected [low, high]", value)
    return _num(pair[0], f"{where}[0]"), _num(pair[1], f"{where}[1]")


def _aggregate(measure: str) -> str | None:
    """How the measure is summarised over queries (``mean``, ``sum``, ``gmean``); None when unknown."""
    try:
        return str(parse_measure(measure).spec.aggregate)
    except MeasureError:
        return None


def _direction(measure: str) -> bool | None:
    """True if higher is better, False if lower is, None for a name the measure registry does not know."""
    try:
        return bool(parse_measure(measure).spec.higher_is_better)
    except MeasureError:
        return None


class _Report:
    def __init__(self, report: Any) -> None:
        rep = _map(report, "(top level)", optional=False)
        self.raw = rep
        self.baseline = _str(rep.get("baseline"), "baseline")
        self.measures = [
            _str(m, f"measures[{i}]") for i, m in enumerate(_list(rep.get("measures"), "measures", optional=False))
        ]
        runs = _list(rep.get("runs"), "runs", optional=False)
        if not runs:
            raise _fail("runs", "expected at least one run", runs)
        self.runs = [_map(r, f"runs[{i}]", optional=False) for i, r in enumerate(runs)]
        self.names = [_str(r.get("name"), f"runs[{i}].name") for i, r in enumerate(self.runs)]
        if len(set(self.names)) != len(self.names):
            dup = next(n for n in self.names if self.names.count(n) > 1)
            raise _fail("runs", "run names must be unique", dup)
        if self.baseline not in self.names:
            raise _fail("baseline", f"must be one of the runs ({', '.join(map(repr, self.names))})", self.baseline)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.direction = {m: _direction(m) for m in self.measures}
        self.aggregate = {m: _aggregate(m) for m in self.measures}
        self.settings = _map(rep.get("settings"), "settings")
        level = _num(self.settings.get("confidence"), "settings.confidence")
        self.level = f"{level * 100:g} %" if level is not None and 0 < level < 1 else "95 %"
        tol = _num(self.settings.get("tie_tolerance"), "settings.tie_tolerance")
        self.tie_tol = 1e-12 if tol is None else abs(tol)
        self.comparisons = self._comparisons(rep.get("comparisons"), "comparisons")

    def run_index(self, name: Any, where: str) -> int:
        n = _str(name, where)
        if n not in self.index:
            raise _fail(where, "names no run of the report", n)
        return self.index[n]

    def _comparisons(self, value: Any, where: str) -> dict[tuple[str, str, str], Mapping[str, Any]]:
        """The comparisons by (run, measure, the run it is against: the baseline unless named)."""
        out: dict[tuple[str, str, str], Mapping[str, Any]] = {}
        for i, c in enumerate(_list(value, where)):
            w = f"{where}[{i}]"
            c = _map(c, w, optional=False)
            vs = self.baseline if c.get("against") is None else _str(c.get("against"), f"{w}.against")
            key = (_str(c.get("run"), f"{w}.run"), _str(c.get("measure"), f"{w}.measure"), vs)
            self.run_index(key[0], f"{w}.run")
            self.run_index(vs, f"{w}.against")
            if key in out:
                raise _fail(w, "a second comparison of the same runs and measure", list(key))
            sig = c.get("significant")
            if sig is not None and not isinstance(sig, bool):
                raise _fail(f"{w}.significant", "expected true, false or null", sig)
            clean: dict[str, Any] = {k: _num(c.get(k), f"{w}.{k}") for k in _COMPARISON_NUMBERS}
            clean.update(run=key[0], measure=key[1], significant=bool(sig), ci=_ci(c.get("ci"), f"{w}.ci"))
            clean["against"] = None if c.get("against") is None else vs
            out[key] = clean
        return out
