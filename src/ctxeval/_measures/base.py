"""Measures as values and their registry.

A :class:`Measure` is an immutable, hashable value with one canonical name, e.g. ``nDCG@10``,
``P(rel=2)@5`` or ``RA-nWG(alpha=0.5,cap3=0.33)@10``. Its *family* (a :class:`Family`) holds the
parameters with their defaults and bounds, the formula, the citation, the vectorised kernel, the
side data it requires (``requires``: names of :class:`~ctxeval._core.evaldata.EvalData` extras the
session builds) and, for trec_eval's measures, how ``ctxeval trec_eval`` prints it
(:class:`TrecSpec`, declared beside the kernel). Parameters equal to their default are dropped from
the canonical name, so ``AP(rel=1)`` is ``AP``. The names are parsed by :mod:`.grammar`.

Under tied scores (``ties="expected"``, :mod:`ctxeval._core.ties`) a family's value is exact in one of
three ways, its :class:`Ties` rule (``register_ties``, beside the closed forms in :mod:`.tie_kernels`):
a closed form, invariance (a set or a count), or the exact average of its kernel over every order of
the ties that it can tell apart (the default: any new family is exact under ties, refused past a
budget, never sampled); :mod:`.tie_orders` holds the rules and the average.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from .._errors import MeasureError
from .tie_orders import Ties, averaged, expected, extremes, register_ties, tie_rule

if TYPE_CHECKING:
    from .._core.evaldata import EvalData

__all__ = [
    "REGISTRY",
    "Family",
    "Measure",
    "Param",
    "Ties",
    "TrecArgs",
    "TrecSpec",
    "add_alias",
    "add_trec_param",
    "averaged",
    "families",
    "fmt_num",
    "fmt_value",
    "lookup",
    "make",
    "register",
    "register_ties",
    "register_trec",
    "set_readings",
    "tie_rule",
    "trec_specs",
    "with_trec_value",
]

_NAME_RE = re.compile(r"^(?P<name>[^()@\s]+?)(?:\((?P<params>.*)\))?(?:@(?P<cut>[^@()\s]+))?$", re.S)
_BARE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.+\-]*$")
_T = TypeVar("_T")


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
    hi_open: bool = False
    required: bool = False  #: no default: every measure of the family names it (``doc`` says why)

    def coerce(self, value: Any, measure: str) -> Any:
        where = f"measure {measure}: parameter {self.name}"
        if value is None and self.default is None:
            return None
        if self.kind == "int":
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or (isinstance(value, float) and not value.is_integer())
            ):
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
        if self.hi is not None and (value > self.hi or (self.hi_open and value == self.hi)):
            op = "<" if self.hi_open else "<="
            raise MeasureError(f"{where} must be {op} {self.hi:g}, got {value!r}")
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
    requires: frozenset[str] = frozenset()  #: side data (EvalData extras) every measure of the family reads
    perfect_is_one: bool = False  #: a run that ranks the judged docs ideally scores 1 where defined
    higher_is_better: bool = True  #: False for harm-like measures (best = lowest)
    #: it counts docs labelled useless or harmful: on binary labels (reference ids), where no label says
    #: so, it is NA where the top k holds an unlabelled doc
    needs_negatives: bool = False
    #: side data a measure needs beyond ``requires``, from its parameters (e.g. RA-nWG's novelty)
    requires_for: Callable[[Measure], frozenset[str]] | None = field(default=None, repr=False)
    #: the kernel over span labels (the evaluation's ``spans`` side data), where it differs from the
    #: kernel over chunk grades (:func:`set_readings`)
    on_spans: Kernel | None = field(default=None, repr=False)
    #: how a budget of B tokens reads it (``name@Btok``): a kernel over the EvalData and the measure
    #: (:mod:`ctxeval._measures.budget`); None: not at a budget, ``budget_doc`` says why
    at_budget: Kernel | None = field(default=None, repr=False)
    budget_doc: str = ""

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def signature(self) -> str:
        inner = ",".join(f"{p.name}={'N' if p.required else fmt_value(p.default)}" for p in self.params)
        out = self.name + (f"({inner})" if inner else "")
        budget = "|@Btok" if self.at_budget is not None else ""
        if self.cutoff == "required":
            out += "@(k|Btok)" if budget else "@k"
        elif self.cutoff == "optional":
            out += "[@k" + budget + "]"
        elif budget:
            out += "[@Btok]"
        return out


REGISTRY: dict[str, Family] = {}
_ALIASES: dict[str, tuple[str, dict[str, Any]]] = {}


def _add(table: dict[str, _T], name: str, value: _T, what: str) -> None:
    """Put ``value`` under ``name`` in one of the registry's tables: a name given twice is a mistake in
    the code that declares it (two modules claiming one name), never overwritten."""
    if name in table:
        raise RuntimeError(f"{what} {name!r} registered twice")
    table[name] = value


def register(family: Family) -> Family:
    _add(REGISTRY, family.name, family, "measure family")
    for alias in family.aliases:
        add_alias(alias, family.name)
    return family


def set_readings(
    family: str, *, on_spans: Kernel | None = None, at_budget: Kernel | None = None, budget_doc: str | None = None
) -> None:
    """Give a registered family its reading of span labels and / or of a token budget (declared beside
    those kernels, so that the family's own module need not know them)."""
    spec = REGISTRY[family]
    changes: dict[str, Any] = {}
    if on_spans is not None:
        changes["on_spans"] = on_spans
    if at_budget is not None:
        changes["at_budget"] = at_budget
    if budget_doc is not None:
        changes["budget_doc"] = budget_doc
    REGISTRY[family] = replace(spec, **changes)


def add_alias(alias: str, family: str, **fixed: Any) -> None:
    _ALIASES[alias.lower()] = (family, fixed)


def lookup(name: str) -> tuple[str | None, dict[str, Any]]:
    """The family a name (canonical or alias, case-insensitive for aliases) denotes, with the
    parameters the alias fixes."""
    if name in REGISTRY:
        return name, {}
    hit = _ALIASES.get(name.lower())
    if hit is not None:
        return hit[0], dict(hit[1])
    return None, {}


def known_names() -> list[str]:
    """Every canonical name and alias (for suggestions)."""
    return sorted(set(REGISTRY) | set(_ALIASES))


_TREC_PARAM: dict[str, tuple[str, Callable[[Any], Any] | None]] = {}


def add_trec_param(family: str, param: str, convert: Callable[[Any], Any] | None = None) -> None:
    """In trec_eval syntax, ``name.v`` and ``name_v`` set ``param`` of ``family`` instead of its cutoff
    (``rbp.0.5`` is ``RBP(p=0.5)``, ``Rprec_mult.0.2`` is ``Rprec_mult(mult=0.2)``); ``convert`` maps
    trec_eval's value onto the parameter (``set_F.x`` weighs recall by x = β², so β = √x)."""
    _TREC_PARAM[family] = (param, convert)


def with_trec_value(family: str, fixed: dict[str, Any], value: Any) -> Measure:
    target = _TREC_PARAM.get(family)
    if target is None:
        return make(family, fixed, value)
    param, convert = target
    return make(family, {**fixed, param: convert(value) if convert is not None else value})


def families(group: str | None = None) -> list[Family]:
    """The registered measure families, in registry order; ``group`` keeps one group (``"classical"``,
    ``"rag"``, ``"trec_eval"``, ``"distraction"``, ``"context"``). Each :class:`~ctxeval.Family` carries
    its formula and citation (what ``ctxeval measures`` prints).

    >>> import ctxeval
    >>> [f.name for f in ctxeval.families("classical")][:4]
    ['P', 'R', 'AP', 'RR']
    >>> rr = next(f for f in ctxeval.families() if f.name == "RR")
    >>> rr.formula, rr.citation.split(";")[0]
    ('RR@k = 1 / rank of the first relevant doc within the top k, else 0', 'Voorhees 1999 (TREC-8 QA)')
    """
    return [f for f in REGISTRY.values() if group is None or f.group == group]


def fmt_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple):  # gains
        return "{" + ",".join(f"{k}:{fmt_num(g)}" for k, g in v) + "}"
    if isinstance(v, (int, float)):
        return fmt_num(v)
    if v is None:
        return "none"
    s = str(v)
    return s if _BARE_RE.match(s) else repr(s)


def fmt_num(x: float | int) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x) if isinstance(x, float) else str(x)


@dataclass(frozen=True, order=False)
class Measure:
    """An immutable measure value. ``str(m)`` is its canonical name; equal names mean equal measures.

    >>> m = make("nDCG", cutoff=10)
    >>> str(m), m == make("nDCG", {"gains": None}, 10), str(m @ 5), str(make("AP", {"rel": 1}))
    ('nDCG@10', True, 'nDCG@5', 'AP')
    """

    family: str
    params: tuple[tuple[str, Any], ...] = ()
    cutoff: int | float | None = None
    #: a budget of tokens (``name@Btok``) instead of a cutoff of K chunks
    budget: int | None = None

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
            out += "(" + ",".join(f"{k}={fmt_value(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            out += "@" + fmt_num(self.cutoff)
        if self.budget is not None:
            out += f"@{self.budget}tok"
        return out

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def __matmul__(self, cutoff: int | float) -> Measure:
        return make(self.family, dict(self.params), cutoff)

    def __call__(self, **params: Any) -> Measure:
        merged = dict(self.params)
        merged.update(params)
        return make(self.family, merged, self.cutoff, self.budget)

    @property
    def k(self) -> int:
        """The cutoff as a whole number (measures whose cutoff is required or given)."""
        if self.cutoff is None:
            raise MeasureError(f"measure {self} has no cutoff")
        return int(self.cutoff)

    @property
    def level(self) -> float:
        """The cutoff as a number (IPrec's recall level)."""
        if self.cutoff is None:
            raise MeasureError(f"measure {self} has no cutoff")
        return float(self.cutoff)

    @property
    def requires(self) -> frozenset[str]:
        """The side data (EvalData extras) this measure reads."""
        spec = self.spec
        out = spec.requires | (spec.requires_for(self) if spec.requires_for is not None else frozenset())
        return out | {"chunks"} if self.budget is not None else out

    @property
    def ties(self) -> Ties:
        """How this measure's value is made exact under tied scores (see :class:`Ties`)."""
        return tie_rule(self.family)

    def compute(self, data: EvalData) -> np.ndarray:
        """Per-query values (float64, NaN where the measure is undefined for a query); under
        ``ties="expected"`` the expected value over every order of the tied rows (NaN where some order
        leaves the measure undefined; :mod:`.tie_orders`).
        At a budget by the family's budget reading; over span labels (the data holds ``spans``) by its
        span kernel where it has one (:meth:`kernel_for`)."""
        groups = data.tie_groups
        if groups is None or not groups.tied:
            return np.asarray(self.kernel_for(data)(data, self), dtype=np.float64)
        exact = expected(data, self)
        # a query without tied rows has its one order's value, whatever the other queries hold: the
        # same bits however the queries are batched (streaming chunks, Spark partitions)
        tied = np.bincount(data.r_seg[groups.size > 1], minlength=data.n_queries) > 0
        if tied.all():
            return exact
        return np.where(tied, exact, np.asarray(self.kernel_for(data)(data, self), dtype=np.float64))

    def kernel_for(self, data: EvalData) -> Kernel:
        """The kernel that reads ``data``: the family's budget reading at a budget, its span kernel over
        span labels, else its kernel."""
        spec = self.spec
        if self.budget is not None and spec.at_budget is not None:
            return spec.at_budget
        if spec.on_spans is not None and data.has("spans"):
            return spec.on_spans
        return spec.kernel

    def extremes(self, data: EvalData) -> tuple[np.ndarray, np.ndarray]:
        """Per-query values under the best and the worst order of the tied rows (:func:`.tie_orders.extremes`:
        by grade, or the highest and lowest of any order where grades do not order the measure); for
        a measure where lower is better the two swap. Without tie groups, the value twice."""
        return extremes(data, self)


def make(
    family: str, params: Mapping[str, Any] | None = None, cutoff: int | float | None = None, budget: int | None = None
) -> Measure:
    """Build a validated measure; parameters equal to their defaults are dropped; ``budget`` (tokens)
    replaces the cutoff (``nDCG@512tok``)."""
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
        if p.required and params.get(p.name) is None:
            raise MeasureError(f"measure {family} needs {p.name}: {p.doc}")
        if p.name in params:
            value = p.coerce(params[p.name], family)
            default = p.coerce(p.default, family) if p.default is not None else None
            if value != default:
                clean.append((p.name, value))
    if cutoff is not None:
        if spec.cutoff == "none":
            raise MeasureError(f"measure {family} takes no @cutoff, got @{cutoff}")
        if spec.cutoff_kind == "int":
            if (
                isinstance(cutoff, bool)
                or not isinstance(cutoff, (int, float))
                or float(cutoff) != int(cutoff)
                or cutoff < 1
            ):
                raise MeasureError(f"measure {family}: cutoff must be a whole number >= 1, got {cutoff!r}")
            cutoff = int(cutoff)
        else:
            if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not 0.0 <= float(cutoff) <= 1.0:
                raise MeasureError(f"measure {family}: cutoff must be a recall level in [0, 1], got {cutoff!r}")
            cutoff = float(cutoff)
    elif spec.cutoff == "required" and budget is None:
        raise MeasureError(f"measure {family} needs a cutoff, e.g. {family}@10")
    if budget is not None:
        if cutoff is not None:
            raise MeasureError(f"measure {family}: give a cutoff @k or a budget @Btok, not both")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
            raise MeasureError(f"measure {family}: a budget must be a whole number of tokens >= 1, got {budget!r}")
        if spec.at_budget is None:
            why = spec.budget_doc or "it has no reading at a token budget"
            raise MeasureError(f"measure {family} cannot be cut at a budget of tokens: {why}")
    return Measure(family, tuple(clean), cutoff, budget)


# --------------------------------------------------------------------------------------------------
# trec_eval's measures, as ``ctxeval trec_eval`` prints them
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrecArgs:
    """trec_eval's command-line settings a measure reads: ``-l`` (level), ``-N`` (n_docs), the version;
    and ``no_docs``, a mask of the evaluated topics for which trec_eval retrieves nothing (after
    ``-M`` and ``-J``; a topic without results under 10.0's ``-c`` retrieves its one bogus doc
    unless ``-J`` or ``-M0`` drops it), where its precision of the whole ranking is 0/0."""

    level: int = 1
    version: int = 10
    n_docs: int = 0
    no_docs: np.ndarray | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TrecSpec:
    """How trec_eval reads, computes, prints and summarises one of its measures.

    ``kind`` says how its parameter (``-m name.PARAM``) is read and its columns named: ``double`` /
    ``long`` (no parameter; long values print as integers), ``gm`` (per-query values printed only as
    a geometric mean), ``cut_long`` / ``cut_double`` (cut-offs: one column each, ``name_k``),
    ``p_double`` (a list of numbers), ``p_pair`` (``key=value`` pairs), and the pseudo-measures
    ``runid``, ``num_q`` and ``relstring``. ``compute(data, args, param)`` gets one cut-off (cut_long),
    the list of cut-offs (cut_double), the numbers (p_double), the pairs (p_pair) or nothing, and
    returns per-query values (a list of them for cut_double). ``reset_missing``: under ``-c``,
    trec_eval 10 resets this measure to 0 for a topic without results. ``order`` is trec_eval's
    printing order; ``sets`` the nicknames that select it (``official``, ``set``, ``all_trec``,
    ``all_prefs``, ``prefs``, ``qrels_jg``).
    """

    name: str
    order: int
    kind: str
    compute: Callable[..., Any] | None = field(default=None, repr=False)
    default: tuple[Any, ...] = ()
    summary: str = "mean"  # "mean" | "sum" | "gm" | "none"
    versions: tuple[int, ...] = (9, 10)
    reset_missing: bool = False
    family: str | None = None  #: the registry family computing it, when there is one
    sets: tuple[str, ...] = ("all_trec",)  #: trec_eval's measure sets (nicknames) it belongs to
    #: the relevance file format it reads (trec_eval's -R): qrels, qrels_jg (judgment groups, given
    #: to the kernel as the EvalData extra ``judgment_groups``) or prefs (preferences, read from
    #: ``-R prefs`` or ``-R qrels_prefs`` files: the extra ``preferences``); None: any (runid, num_q)
    rel_format: str | None = "qrels"


_TREC: dict[str, TrecSpec] = {}


def register_trec(spec: TrecSpec) -> TrecSpec:
    _add(_TREC, spec.name, spec, "trec_eval measure")
    return spec


def trec_specs(version: int = 10) -> list[TrecSpec]:
    """trec_eval's measures of a version, in its printing order."""
    return sorted((s for s in _TREC.values() if version in s.versions), key=lambda s: s.order)
