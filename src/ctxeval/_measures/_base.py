"""Measures as values, their registry, and the small safe grammar that parses measure names.

A :class:`Measure` is an immutable, hashable value with one canonical name, e.g. ``nDCG@10``,
``P(rel=2)@5`` or ``RA-nWG(alpha=0.5,cap3=0.33)@10``. Its *family* (a :class:`Family`) holds the
parameters with their defaults and bounds, the formula, the citation and the vectorised kernel.
Parameters equal to their default are dropped from the canonical name, so ``AP(rel=1)`` is ``AP``.

Grammar (no ``eval``)::

    measure  := NAME [ "(" param ("," param)* ")" ] [ "@" CUTOFF ]
    param    := KEY "=" value
    value    := INT | FLOAT | BOOL | STRING | QUOTED | "{" INT ":" NUMBER ("," INT ":" NUMBER)* "}"

trec_eval names (``ndcg_cut.10``, ``P.5,10``, ``P_5``, ``map``, ``recip_rank``) and common ranx names
(``ndcg@10``, ``mrr``, ``hit_rate@5``) are accepted as aliases of the same canonical measures.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import MeasureError

if TYPE_CHECKING:
    from .._engine import EvalData

__all__ = [
    "Param",
    "Family",
    "Measure",
    "REGISTRY",
    "register",
    "parse_measure",
    "parse_measures",
    "families",
    "add_alias",
    "add_trec_param",
]

_NAME_RE = re.compile(r"^(?P<name>[^()@\s]+?)(?:\((?P<params>.*)\))?(?:@(?P<cut>[^@()\s]+))?$", re.S)
_BARE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.+\-]*$")


@dataclass(frozen=True)
class Param:
    """One parameter of a measure family."""

    name: str
    kind: str  # "int" | "float" | "str" | "bool" | "gains"
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False

    def coerce(self, value: Any, measure: str) -> Any:
        where = f"measure {measure}: parameter {self.name}"
        if value is None and self.default is None:
            return None
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not value.is_integer()):
                raise MeasureError(f"{where} must be an integer, got {value!r}")
            value = int(value)
        elif self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise MeasureError(f"{where} must be a finite number, got {value!r}")
            value = float(value)
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise MeasureError(f"{where} must be true or false, got {value!r}")
        elif self.kind == "str":
            if not isinstance(value, str):
                raise MeasureError(f"{where} must be a word, got {value!r}")
        elif self.kind == "gains":
            if not isinstance(value, Mapping) or not value:
                raise MeasureError(f"{where} must be a mapping of grade to gain like {{0:0,1:1,2:3}}, got {value!r}")
            out = {}
            for k, v in value.items():
                if isinstance(k, bool) or not isinstance(k, int):
                    raise MeasureError(f"{where}: grade {k!r} is not an integer")
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise MeasureError(f"{where}: gain {v!r} of grade {k} is not a finite number")
                out[int(k)] = float(v)
            value = tuple(sorted(out.items()))
        if self.choices is not None and value not in self.choices:
            raise MeasureError(f"{where} must be one of {', '.join(map(str, self.choices))}, got {value!r}")
        if self.lo is not None and (value < self.lo or (self.lo_open and value == self.lo)):
            op = ">" if self.lo_open else ">="
            raise MeasureError(f"{where} must be {op} {self.lo:g}, got {value!r}")
        if self.hi is not None and value > self.hi:
            raise MeasureError(f"{where} must be <= {self.hi:g}, got {value!r}")
        return value


Kernel = Callable[["EvalData", "Measure"], np.ndarray]


@dataclass(frozen=True)
class Family:
    """A measure family: name, parameters, semantics and the kernel computing it per query."""

    name: str
    summary: str
    formula: str
    citation: str
    kernel: Kernel = field(repr=False)
    params: tuple[Param, ...] = ()
    cutoff: str = "optional"  # "none" | "optional" | "required"
    cutoff_kind: str = "int"  # "int" | "float" (IPrec's recall level)
    aggregate: str = "mean"  # "mean" | "sum" | "gmean"
    bounds: tuple[float, float] | None = (0.0, 1.0)
    aliases: tuple[str, ...] = ()
    group: str = "classical"
    requires: frozenset[str] = frozenset()
    perfect_is_one: bool = False  #: a run that ranks the judged docs ideally scores 1 where defined
    higher_is_better: bool = True  #: False for harm-like measures (best = lowest)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def signature(self) -> str:
        inner = ",".join(f"{p.name}={_fmt_value(p.default)}" for p in self.params)
        out = self.name + (f"({inner})" if inner else "")
        if self.cutoff == "required":
            out += "@k"
        elif self.cutoff == "optional":
            out += "[@k]"
        return out


REGISTRY: dict[str, Family] = {}
_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}


def register(family: Family) -> Family:
    if family.name in REGISTRY:
        raise RuntimeError(f"measure family {family.name!r} registered twice")
    REGISTRY[family.name] = family
    for alias in family.aliases:
        add_alias(alias, family.name)
    return family


def add_alias(alias: str, family: str, **fixed: Any) -> None:
    _ALIASES[alias.lower()] = (family, fixed)


_TREC_PARAM: dict[str, tuple[str, Callable[[Any], Any] | None]] = {}


def add_trec_param(family: str, param: str, convert: Callable[[Any], Any] | None = None) -> None:
    """In trec_eval syntax, ``name.v`` and ``name_v`` set ``param`` of ``family`` instead of its cutoff
    (``rbp.0.5`` is ``RBP(p=0.5)``, ``Rprec_mult.0.2`` is ``Rprec_mult(mult=0.2)``); ``convert`` maps
    trec_eval's value onto the parameter (``set_F.x`` weighs recall by x = β², so β = √x)."""
    _TREC_PARAM[family] = (param, convert)


def _with_trec_value(family: str, fixed: dict[str, Any], value: Any) -> Measure:
    target = _TREC_PARAM.get(family)
    if target is None:
        return make(family, fixed, value)
    param, convert = target
    return make(family, {**fixed, param: convert(value) if convert is not None else value})


def families(group: str | None = None) -> list[Family]:
    return [f for f in REGISTRY.values() if group is None or f.group == group]


def _fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple):  # gains
        return "{" + ",".join(f"{k}:{_fmt_num(g)}" for k, g in v) + "}"
    if isinstance(v, (int, float)):
        return _fmt_num(v)
    if v is None:
        return "none"
    s = str(v)
    return s if _BARE_RE.match(s) else repr(s)


def _fmt_num(x: float | int) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x) if isinstance(x, float) else str(x)


@dataclass(frozen=True, order=False)
class Measure:
    """An immutable measure value. ``str(m)`` is its canonical name; equal names mean equal measures.

    >>> m = parse_measure("ndcg_cut.10")
    >>> str(m), m == parse_measure("nDCG@10")
    ('nDCG@10', True)
    >>> str(parse_measure("P(rel=2)@5")), str(parse_measure("AP(rel=1)"))
    ('P(rel=2)@5', 'AP')
    """

    family: str
    params: tuple[tuple[str, Any], ...] = ()
    cutoff: int | float | None = None

    @property
    def spec(self) -> Family:
        return REGISTRY[self.family]

    def __getitem__(self, name: str) -> Any:
        for k, v in self.params:
            if k == name:
                return v
        return self.spec.param(name).default

    def __str__(self) -> str:
        out = self.family
        if self.params:
            out += "(" + ",".join(f"{k}={_fmt_value(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            out += "@" + _fmt_num(self.cutoff)
        return out

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def __matmul__(self, cutoff: int | float) -> Measure:
        return make(self.family, dict(self.params), cutoff)

    def __call__(self, **params: Any) -> Measure:
        merged = dict(self.params)
        merged.update(params)
        return make(self.family, merged, self.cutoff)

    def compute(self, data: EvalData) -> np.ndarray:
        """Per-query values (float64, NaN where the measure is undefined for a query)."""
        return np.asarray(self.spec.kernel(data, self), dtype=np.float64)


def make(family: str, params: Mapping[str, Any] | None = None, cutoff: int | float | None = None) -> Measure:
    """Build a validated measure; parameters equal to their defaults are dropped."""
    spec = REGISTRY.get(family)
    if spec is None:
        raise MeasureError(f"unknown measure {family!r}; run 'ctxeval measures' for the list")
    params = dict(params or {})
    known = {p.name: p for p in spec.params}
    clean: list[tuple[str, Any]] = []
    for key in params:
        if key not in known:
            allowed = ", ".join(known) or "none"
            raise MeasureError(f"measure {family}: unknown parameter {key!r} (parameters: {allowed})")
    for p in spec.params:
        if p.name in params:
            value = p.coerce(params[p.name], family)
            default = p.coerce(p.default, family) if p.default is not None else None
            if value != default:
                clean.append((p.name, value))
    if cutoff is not None:
        if spec.cutoff == "none":
            raise MeasureError(f"measure {family} takes no @cutoff, got @{cutoff}")
        if spec.cutoff_kind == "int":
            if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or float(cutoff) != int(cutoff) or cutoff < 1:
                raise MeasureError(f"measure {family}: cutoff must be a whole number >= 1, got {cutoff!r}")
            cutoff = int(cutoff)
        else:
            if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not 0.0 <= float(cutoff) <= 1.0:
                raise MeasureError(f"measure {family}: cutoff must be a recall level in [0, 1], got {cutoff!r}")
            cutoff = float(cutoff)
    elif spec.cutoff == "required":
        raise MeasureError(f"measure {family} needs a cutoff, e.g. {family}@10")
    return Measure(family, tuple(clean), cutoff)


# --------------------------------------------------------------------------------------------------
# parsing
# --------------------------------------------------------------------------------------------------


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    cur: list[str] = []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quote or depth:
        raise ValueError("unbalanced quotes or braces")
    parts.append("".join(cur))
    return parts


def _literal(text: str) -> Any:
    t = text.strip()
    if not t:
        raise ValueError("empty value")
    if t[0] in "'\"":
        if len(t) < 2 or t[-1] != t[0]:
            raise ValueError(f"unterminated string {t}")
        return t[1:-1]
    if t.startswith("{"):
        if not t.endswith("}"):
            raise ValueError(f"unterminated mapping {t}")
        out: dict[int, float] = {}
        body = t[1:-1].strip()
        for item in _split_top(body) if body else []:
            k, sep, v = item.partition(":")
            if not sep:
                raise ValueError(f"mapping item {item.strip()!r} is not GRADE:GAIN")
            key = _literal(k)
            val = _literal(v)
            if not isinstance(key, int) or isinstance(key, bool):
                raise ValueError(f"mapping key {k.strip()!r} is not an integer")
            out[key] = val
        return out
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    try:
        return float(t)
    except ValueError:
        pass
    if _BARE_RE.match(t):
        return t
    raise ValueError(f"cannot read value {t!r}")


def _number(text: str) -> int | float:
    v = _literal(text)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"cutoff {text!r} is not a number")
    return v


_HELP = "expected NAME, NAME@K or NAME(param=value,...)@K, e.g. nDCG@10, P(rel=2)@5"


def parse_measure(text: str | Measure) -> Measure:
    """Parse one measure name (canonical, trec_eval or ranx style) into a :class:`Measure`."""
    found = parse_measures(text)
    if len(found) != 1:
        raise MeasureError(f"{text!r} names {len(found)} measures; give one")
    return found[0]


def parse_measures(text: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse a measure name that may denote several measures (``P.5,10`` is P@5 and P@10)."""
    if isinstance(text, Measure):
        return [text]
    if not isinstance(text, str):
        out: list[Measure] = []
        for t in text:
            out.extend(parse_measures(t))
        return out
    raw = text.strip()
    if not raw:
        raise MeasureError(f"empty measure name; {_HELP}")
    m = _NAME_RE.match(raw)
    if m:
        name = m.group("name")
        family, fixed = _lookup(name)
        if family is not None:
            params: dict[str, Any] = dict(fixed)
            if m.group("params") is not None:
                try:
                    for item in _split_top(m.group("params")):
                        if not item.strip():
                            continue
                        key, sep, value = item.partition("=")
                        if not sep or not key.strip().isidentifier():
                            raise ValueError(f"{item.strip()!r} is not key=value")
                        params[key.strip()] = _literal(value)
                except ValueError as exc:
                    raise MeasureError(f"cannot parse measure {raw!r}: {exc}; {_HELP}") from None
            cut: int | float | None = None
            if m.group("cut") is not None:
                cut_text = m.group("cut")
                lvl = re.fullmatch(r"(.+?)-l(\d+)", cut_text)  # ranx: ndcg@10-l2
                if lvl:
                    cut_text = lvl.group(1)
                    params["rel"] = int(lvl.group(2))
                try:
                    cut = _number(cut_text)
                except ValueError as exc:
                    raise MeasureError(f"cannot parse measure {raw!r}: {exc}; {_HELP}") from None
            return [make(family, params, cut)]
    trec = _parse_trec_style(raw)
    if trec is not None:
        return trec
    raise MeasureError(f"unknown measure {raw!r}; {_HELP}. Run 'ctxeval measures' for the list")


def _lookup(name: str) -> tuple[str | None, dict[str, Any]]:
    if name in REGISTRY:
        return name, {}
    hit = _ALIASES.get(name.lower())
    if hit is not None:
        return hit[0], dict(hit[1])
    return None, {}


def _parse_trec_style(raw: str) -> list[Measure] | None:
    """``name.v1,v2`` (trec_eval -m syntax), ``name.key=v,...`` (trec_eval parameter pairs: integer
    keys are gains, other keys are parameters) and ``name_v`` (trec_eval output names)."""
    base, dot, rest = raw.partition(".")
    if dot:
        family, fixed = _lookup(base)
        if family is not None and rest:
            if "=" in rest:
                return [_trec_pairs(raw, family, fixed, rest)]
            out = []
            for v in rest.split(","):
                try:
                    value = _number(v)
                except ValueError:
                    raise MeasureError(f"cannot parse measure {raw!r}: {v!r} is not a number") from None
                out.append(_with_trec_value(family, fixed, value))
            return out
    m = re.fullmatch(r"(.+?)_([0-9][0-9.]*)", raw)
    if m:
        family, fixed = _lookup(m.group(1))
        if family is not None:
            try:
                value = _number(m.group(2))
            except ValueError:
                return None
            return [_with_trec_value(family, fixed, value)]
    return None


def _trec_pairs(raw: str, family: str, fixed: dict[str, Any], rest: str) -> Measure:
    params: dict[str, Any] = dict(fixed)
    gains: dict[int, Any] = {}
    for item in rest.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        try:
            if not sep or not key:
                raise ValueError(f"{item!r} is not key=value")
            val = _literal(value)
        except ValueError as exc:
            raise MeasureError(f"cannot parse measure {raw!r}: {exc}") from None
        if re.fullmatch(r"[+-]?\d+", key):
            gains.setdefault(int(key), val)  # trec_eval: the first gain given for a grade wins
        else:
            params[key] = val
    if gains:
        params["gains"] = gains
    return make(family, params)
