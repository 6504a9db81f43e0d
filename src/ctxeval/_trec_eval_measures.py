"""trec_eval's ``-m``: the measure names and nicknames of a version, the parameters read as C reads
them (``atol`` / ``atof``: a number's longest prefix, else 0), and each selected measure's output
columns with their ``printf`` formats. :mod:`ctxeval._trec_eval` runs the program with them."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ._core.evaldata import EvalData
from ._errors import MeasureError, did_you_mean
from ._measures import TrecArgs, TrecSpec, trec_specs

__all__ = ["TrecEvalMeasureError", "nicknames"]

_SETS = ("official", "set", "all_trec", "all_prefs", "prefs", "qrels_jg")


class TrecEvalMeasureError(MeasureError):
    """A measure trec_eval cannot take, with trec_eval's exit status: 2 when it cannot initialise it
    (a negative or repeated cut-off, malformed pairs), 4 when it cannot calculate it; an unknown or
    improper measure name is a plain :class:`MeasureError` (status 1)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def nicknames(version: int) -> dict[str, tuple[str, ...]]:
    """trec_eval's measure nicknames (measures.c) for a version: the measures of each set."""
    specs = trec_specs(version)
    return {name: tuple(s.name for s in specs if name in s.sets) for name in _SETS}


# --------------------------------------------------------------------------------------------------
# -m parsing (C atol / atof semantics)
# --------------------------------------------------------------------------------------------------

_ATOL = re.compile(r"[ \t\n\v\f\r]*([+-]?\d+)")
_ATOF = re.compile(r"[ \t\n\v\f\r]*([+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan))", re.IGNORECASE)


def _atol(text: str) -> int:
    m = _ATOL.match(text)
    return int(m.group(1)) if m else 0


def _atof(text: str) -> float:
    m = _ATOF.match(text)
    return float(m.group(1)) if m else 0.0


@dataclass
class _Selection:
    marked: set[str] = field(default_factory=set)
    params: dict[str, str] = field(default_factory=dict)  # first "-m name.params" per name wins


def _select(args: Sequence[str], version: int) -> _Selection:
    table = {spec.name: spec for spec in trec_specs(version)}
    names = nicknames(version)
    sel = _Selection()
    for arg in list(args) or ["official"]:
        name, dot, param = arg.partition(".")
        if dot:
            if not param:
                raise MeasureError(f"trec_eval: improper measure in parameter '{name}'")
            sel.params.setdefault(name, param)
        if name in names:
            sel.marked.update(names[name])
        elif name in table:
            sel.marked.add(name)
        else:
            raise MeasureError(f"trec_eval: illegal measure '{arg}'{did_you_mean(name, [*names, *table])}")
    for name, param in sel.params.items():
        if name in table:
            _check_param(table[name], param)
    return sel


# the measures that turn a number of their parameter into a count of docs (lround or a cast to long)
_TO_COUNT = ("iprec_at_recall", "Rprec_mult", "Rprec_mult_avgjg", "11pt_avg")
_COUNT_LIMIT = 1e6  # |level| beyond this: level * R may leave the range of a long


def _check_param(spec: TrecSpec, param: str) -> None:
    """The parameter of ``-m name.param`` checked before any file is read. A level that trec_eval
    turns into a count of docs must be finite and within ±1e6: C leaves the count of a NaN, an
    infinity or a number beyond a long unspecified (``lround(nan)``), so trec_eval's output for it
    is whatever the platform gives, and no reading of it would be right."""
    if spec.kind == "cut_long":
        _long_cutoffs(param, spec.name)
    elif spec.kind == "cut_double":
        _double_cutoffs(param)
    if spec.name in _TO_COUNT:
        for token in param.split(","):
            value = _atof(token)
            if not abs(value) <= _COUNT_LIMIT:
                raise TrecEvalMeasureError(
                    f"trec_eval: -m {spec.name}.{param}: {token!r} is not a usable level (a finite number within "
                    "±1e6): trec_eval turns it into a number of docs, which C leaves unspecified for it"
                )
    elif spec.kind == "p_pair":
        for key, value in _pairs(param):
            if spec.name.startswith("rbp") and key == "p" and not 0.0 <= value <= 1.0:
                raise TrecEvalMeasureError(f"trec_eval: -m {spec.name}.{param}: p must be in [0, 1], got {value:g}")


def _long_cutoffs(text: str, name: str = "") -> list[int]:
    for token in text.split(","):
        if not _ATOL.match(token):
            raise TrecEvalMeasureError(f"trec_eval: -m {name}.{text}: cutoff {token!r} is not a whole number")
    cuts = sorted(_atol(t) for t in text.split(","))
    if cuts[0] <= 0:
        raise TrecEvalMeasureError(
            f"trec_eval: -m {name}.{text}: cutoffs must be >= 1 (trec_eval: Negative cutoff detected)"
        )
    if any(a == b for a, b in itertools.pairwise(cuts)):
        raise TrecEvalMeasureError("trec_eval: duplicate cutoffs detected")
    return cuts


def _double_cutoffs(text: str) -> list[float]:
    cuts = sorted(_atof(t) for t in text.split(","))
    if any(a == b for a, b in itertools.pairwise(cuts)):
        raise TrecEvalMeasureError("trec_eval: duplicate cutoffs detected")
    return cuts


def _pairs(text: str) -> list[tuple[str, float]]:
    last = ","
    for ch in text:
        if ch == ",":
            if last == ",":
                break
            last = ","
        elif ch == "=":
            if last == "=":
                last = ","
                break
            last = "="
    if last != "=":
        raise TrecEvalMeasureError(f"trec_eval: malformed pair parameters in '{text}'")
    out = []
    for item in text.split(","):
        name, _, value = item.partition("=")
        out.append((name, _atof(value)))
    return out


def _fmt_cut(x: float) -> str:
    return "%3.2f" % x


@dataclass
class _Column:
    """One printed measure name with its per-topic values."""

    name: str
    values: np.ndarray | list[str]
    fmt: str  # "double" | "long" | "str"
    summary: str  # "mean" | "sum" | "gm" | "none"
    per_query: bool = True
    reset_missing: bool = False  # 10.0 -c: value of a topic without results is forced to 0


def _columns(spec: TrecSpec, param: str | None, d: EvalData, args: TrecArgs) -> list[_Column]:
    """The printed columns of one measure (one per cut-off, or one)."""
    name, kind, reset = spec.name, spec.kind, spec.reset_missing
    compute = spec.compute
    if compute is None:
        raise MeasureError(f"trec_eval: {name} is printed by the program itself")
    if kind == "cut_long":
        cuts = _long_cutoffs(param, name) if param else list(spec.default)
        return [_Column(f"{name}_{k}", compute(d, args, k), "double", "mean", reset_missing=reset) for k in cuts]
    if kind == "cut_double":
        cuts_d = _double_cutoffs(param) if param else list(spec.default)
        names = [(name + "_" + _fmt_cut(c))[: len(name) + 9] for c in cuts_d]
        return [_Column(n, v, "double", "mean") for n, v in zip(names, compute(d, args, cuts_d))]
    if kind in ("p_double", "relstring"):
        values = [_atof(t) for t in param.split(",")] if param else list(spec.default)
        shown = f"{name}_{param}" if param else name
        if kind == "relstring":
            length = int(values[0]) if math.isfinite(values[0]) else 0
            return [_Column(shown, compute(d, args, length), "str", "none")]
        return [_Column(shown, compute(d, args, values), "double", "mean", reset_missing=reset)]
    if kind == "p_pair":
        pairs = _pairs(param) if param else []
        return [
            _Column(
                f"{name}_{param}" if param else name, compute(d, args, pairs), "double", "mean", reset_missing=reset
            )
        ]
    if kind == "gm":
        return [_Column(name, compute(d, args), "double", "gm", per_query=False)]
    return [_Column(name, compute(d, args), "long" if kind == "long" else "double", spec.summary)]


def _fmt(value: float, fmt: str) -> str:
    if fmt == "long":
        if not math.isfinite(value):
            return "-9223372036854775808"
        return str(int(value))
    if math.isnan(value):  # glibc's printf shows the sign bit: 0/0 on x86-64 is -nan, atof("nan") nan
        return "%6s" % ("-nan" if math.copysign(1.0, value) < 0 else "nan")
    return "%6.4f" % value


def _seq_total(values: np.ndarray) -> float:
    """Sum in order, one addition at a time (as trec_eval accumulates). A NaN in the values makes the
    sum that NaN, and of two NaNs the later one wins (``accum += value`` in trec_eval's x86-64 build:
    what decides whether ``-nan`` or ``nan`` is printed; Python's own ``+`` does not promise it)."""
    total = 0.0
    last_nan = None
    for v in values.tolist():
        if v != v:
            last_nan = v
        total += v
    return total if last_nan is None else last_nan
