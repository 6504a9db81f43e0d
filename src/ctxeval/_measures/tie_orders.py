"""How a measure is exact under tied scores (``ties="expected"``): each family's :class:`Ties` rule, the
exact average of a kernel over every order of the ties it can tell apart, and the best and worst orders.

A measure's value over tied rows is read one of three ways (:func:`reading`): by its family's closed
form (:mod:`.tie_kernels`, :mod:`.tie_rules`), as invariant (a set or a count), or by averaging its
kernel over every distinct order of the ties, each weighed by its probability (:func:`averaged`;
:func:`ctxeval._core.ties.rounds` enumerates the orders, refusing past a budget, never sampling). A budget
of tokens and span labels are readings of their own (another kernel): they are always averaged, each
order's side data built again for it (:meth:`~ctxeval._core.evaldata.EvalData.arranged`). A budget
packed under ``stop`` holds a prefix of at most as many chunks as its smallest fill, so the ranks past
them are never read (nor their orders enumerated).

The *best* and *worst* orders (:func:`extremes`): within every tie group the judged docs by grade,
highest first and unjudged last, or the reverse, where that order is the best the family allows (the
rank measures over grades); where it is not (``extremes="orders"``: fairness, span measures, Accuracy at
a cutoff; every reading at a budget or over span labels, where what fits and what is new depend on
more than grades) the highest and lowest value of any order, taken in the same enumeration as the mean.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .._core.ties import order_by_key, rounds

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .base import Kernel, Measure

__all__ = [
    "UNJUDGED",
    "Ties",
    "averaged",
    "combine",
    "expected",
    "extremes",
    "grade_classes",
    "reading",
    "register_ties",
    "tie_rule",
]


@dataclass(frozen=True)
class Ties:
    """How a family's value is made exact when scores tie (``ties="expected"``).

    ``how``: ``closed`` (``kernel`` gives the expected value over every order of the tied rows; its
    formula in ``form``; ``applies``, when given, says which measures of the family it covers, the
    others being averaged), ``invariant`` (the value does not depend on the order of tied rows: a set or
    a count) or ``averaged`` (the family's own kernel over every distinct order of the ties, each
    weighed by its probability; exact, and refused past :data:`~ctxeval._core.ties.LIMIT` orders).
    ``window`` (averaged): ``list`` (the kernel may read every rank), ``cutoff`` (it reads no rank past
    the measure's cutoff, so only the orders of the ranks within it are told apart) or ``set`` (it reads
    only which rows rank within the cutoff: the subsets are told apart, not their orders; without a
    cutoff the measure is invariant). ``classes`` (averaged): the class of every ranked row, rows of one
    class being interchangeable for the measure; by default their label (judged or not, and grade) for a
    family without side data, and every row its own where side data is read. ``extremes``: ``grades``
    (the best order sorts every tie group by grade, highest first; the worst the reverse) or ``orders``
    (the grades do not order the family's values: the highest and lowest value of any order).
    """

    how: str = "averaged"
    kernel: Kernel | None = field(default=None, repr=False)
    form: str = ""
    window: str = "list"
    applies: Callable[[Measure], bool] | None = field(default=None, repr=False)
    classes: Callable[[EvalData, Measure], np.ndarray] | None = field(default=None, repr=False)
    extremes: str = "grades"

    def __post_init__(self) -> None:
        if self.how not in ("closed", "invariant", "averaged"):
            raise ValueError(f"Ties.how must be closed, invariant or averaged, got {self.how!r}")
        if (self.how == "closed") != (self.kernel is not None):
            raise ValueError("a closed tie rule has a kernel, and only a closed one")
        if self.window not in ("list", "cutoff", "set"):
            raise ValueError(f"Ties.window must be list, cutoff or set, got {self.window!r}")
        if self.extremes not in ("grades", "orders"):
            raise ValueError(f"Ties.extremes must be grades or orders, got {self.extremes!r}")


AVERAGED = Ties()
_TIES: dict[str, Ties] = {}


def register_ties(family: str, rule: Ties) -> None:
    """Declare how ``family`` is exact under tied scores (families left undeclared are averaged)."""
    if family in _TIES:
        raise RuntimeError(f"tie rule of {family!r} declared twice")
    _TIES[family] = rule


def tie_rule(family: str) -> Ties:
    return _TIES.get(family, AVERAGED)


#: the class of an unjudged row among the grades (below any grade a qrels file can hold)
UNJUDGED = np.iinfo(np.int64).min


def reading(data: EvalData, m: Measure) -> str:
    """How ``m``'s value over ``data`` (which holds ties) is exact: ``closed``, ``invariant`` or
    ``averaged``. A budget's or span labels' reading (a kernel of its own) is averaged."""
    rule = m.ties
    if m.kernel_for(data) is not m.spec.kernel:
        return "averaged"
    if rule.how == "closed" and (rule.applies is None or rule.applies(m)):
        return "closed"
    if rule.how == "invariant" or (rule.window == "set" and m.cutoff is None):
        return "invariant"
    return "averaged"


def expected(data: EvalData, m: Measure) -> np.ndarray:
    """Per query the expected value of ``m`` over every order of the tied rows of ``data``."""
    how = reading(data, m)
    if how == "closed":
        return np.asarray(m.ties.kernel(data, m), dtype=np.float64)  # type: ignore[misc]
    if how == "invariant":
        return np.asarray(m.kernel_for(data)(data, m), dtype=np.float64)
    return _orders(data, m).mean


def averaged(data: EvalData, m: Measure) -> np.ndarray:
    """The exact mean of ``m``'s kernel over every order of the tied rows it can tell apart, each order
    weighed by its probability (:func:`ctxeval._core.ties.rounds`); NaN where the measure is undefined
    under some order."""
    return _orders(data, m).mean


class _Orders(NamedTuple):
    """Per query, over every order of its ties: the mean (weighed by probability), and the highest and
    lowest value of any order (NaN where every order is)."""

    mean: np.ndarray
    high: np.ndarray
    low: np.ndarray


def grade_classes(data: EvalData) -> np.ndarray:
    """Every ranked row's label as a class: its grade, or :data:`UNJUDGED`."""
    return np.where(data.r_judged, data.r_grade, UNJUDGED)


def combine(*classes: np.ndarray) -> np.ndarray:
    """One class per row from several: rows share it when they share every one."""
    _, inverse = np.unique(np.stack(classes, axis=1), axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def _sided(data: EvalData, m: Measure) -> bool:
    """Whether ``m`` reads side data over ``data`` (its rows are then told apart by more than labels)."""
    return bool(m.requires) or (m.spec.on_spans is not None and data.has("spans"))


def _classes(data: EvalData, m: Measure) -> np.ndarray:
    rule = m.ties
    kernel = m.kernel_for(data)
    if rule.classes is not None and kernel is m.spec.kernel:
        return rule.classes(data, m)
    if m.budget is not None and m.requires == {"chunks"} and kernel is m.spec.at_budget and not data.has("spans"):
        # a budget over grades alone reads each row's label and tokens
        return combine(grade_classes(data), data.extra("chunks").tokens)
    if _sided(data, m):
        return np.arange(data.n_rows, dtype=np.int64)
    return grade_classes(data)


def _most_that_fit(data: EvalData, tokens: np.ndarray, budget: int) -> np.ndarray:
    """Per query the most of its chunks a budget can hold (its smallest first): under ``stop`` the
    context is a prefix of at most that many ranks, so no rank past them is read."""
    order = np.lexsort((tokens, data.r_seg))
    cum = np.cumsum(tokens[order])
    cum -= np.repeat(np.r_[0, cum][data.r_off[:-1]], data.n_ret)
    return np.bincount(data.r_seg[order], weights=cum <= budget, minlength=data.n_queries).astype(np.int64)


def _judged_only(m: Measure) -> bool:
    return any(k == "judged_only" and v for k, v in m.params)


#: side data whose cut by another order of the rows is that data built again for the order (each one is
#: checked against the rebuild in tests/measures/test_ties_side_data.py): a measure reading only these
#: has each order cut from it, not built again by the session
FOLLOWS_ROWS = frozenset({"fairness", "chunks", "spans", "ceiling"})


def _reads(data: EvalData, m: Measure) -> frozenset[str]:
    """The side data ``m``'s reading of ``data`` reads."""
    spans = {"spans"} if m.spec.on_spans is not None and data.has("spans") else set()
    return m.requires | spans


def _orders(data: EvalData, m: Measure) -> _Orders:
    return data.memo(("tie_orders", m), lambda: _enumerate(data, m))


def _enumerate(data: EvalData, m: Measure) -> _Orders:
    groups = data.tie_groups
    assert groups is not None
    rule = m.ties
    sided = _sided(data, m)
    window = data.n_ret
    # a cutoff bounds what the kernel reads (its span reading's too); not at a budget, nor where the
    # rankings lose their unjudged docs first (ranks move)
    cut = m.cutoff is not None and m.spec.cutoff_kind == "int" and m.budget is None and not _judged_only(m)
    if cut and rule.window in ("cutoff", "set"):
        window = np.minimum(window, m.k)
    if m.budget is not None and data.has("chunks") and data.extra("chunks").overflow == "stop":
        window = np.minimum(window, _most_that_fit(data, data.extra("chunks").tokens, m.budget))
    ordered = not (cut and rule.window == "set")
    total = np.zeros(data.n_queries)
    high = np.full(data.n_queries, np.nan)
    low = np.full(data.n_queries, np.nan)
    subsets: dict[bytes, EvalData] = {}  # the queries a round holds, each set taken once
    what = f"measure {m}"
    reads = _reads(data, m)
    base = data
    if sided and data.side is not None and reads <= FOLLOWS_ROWS:  # each order cut, not built again
        base = replace(data, extras={k: v for k, v in data.extras.items() if k in reads}, side=None)
    for rnd in rounds(groups, data.r_off, _classes(data, m), window, what, subset=not sided, ordered=ordered):
        part: EvalData = base
        at: slice | np.ndarray = slice(None)
        if rnd.queries is not None:
            key = rnd.queries.tobytes()
            if key not in subsets:
                subsets = {key: data.queries(rnd.queries)}  # sets shrink round by round: keep the last
            part, at = subsets[key], rnd.queries
        arranged = part.arranged(rnd.perm)
        v = np.asarray(m.kernel_for(arranged)(arranged, m), dtype=np.float64)
        live = rnd.weight > 0
        with np.errstate(invalid="ignore"):
            total[at] += np.where(live, rnd.weight * v, 0.0)
        high[at] = np.where(live, np.fmax(high[at], v), high[at])
        low[at] = np.where(live, np.fmin(low[at], v), low[at])
    return _Orders(total, high, low)


def extremes(data: EvalData, m: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values under the best and the worst order of the tied rows (see the module docstring);
    for a measure where lower is better the two swap. Without tie groups, the value twice."""
    if data.tie_groups is None or not data.tie_groups.tied:
        v = m.compute(data)
        return v, v
    if reading(data, m) == "averaged" and (m.kernel_for(data) is not m.spec.kernel or m.ties.extremes == "orders"):
        o = _orders(data, m)
        return (o.high, o.low) if m.spec.higher_is_better else (o.low, o.high)
    up_data, down_data = _by_grade(data, True), _by_grade(data, False)
    up = np.asarray(m.kernel_for(up_data)(up_data, m), dtype=np.float64)
    down = np.asarray(m.kernel_for(down_data)(down_data, m), dtype=np.float64)
    return (up, down) if m.spec.higher_is_better else (down, up)


def _by_grade(data: EvalData, best: bool) -> EvalData:
    """``data`` with every tie group ordered by grade, judged docs highest first and unjudged last
    (``best``), or the reverse; built once per EvalData."""

    def arrange() -> EvalData:
        assert data.tie_groups is not None
        key = np.where(data.r_judged, data.r_grade.astype(np.float64), -np.inf)
        return data.arranged(order_by_key(data.tie_groups, data.r_off, key if best else -key))

    return data.memo(("tie_extreme", best, tuple(sorted(data.extras))), arrange)
