"""trec_eval's preference measures (``-R prefs`` or ``-R qrels_prefs``, ``-m all_prefs``): each reads
the query's preferences counted against the run (the extra ``preferences``, built by
``ctxeval._context.prefs``) and computes what trec_eval 10.0's ``m_prefs_*.c`` compute.

A preference ``a > b`` of a judgment group (JG) is *fulfilled* when the run ranks ``a`` above ``b``;
``ret`` counts the preferences between two retrieved docs, ``imp`` (implied) those with only ``a``
retrieved (fulfilled) or only ``b`` (not), ``notoccur`` those with neither (never fulfilled).

* ``prefs_simp`` = Σ_JG fulfilled / Σ_JG possible (ret + imp + notoccur); ``_imp``: ret + imp;
  ``_ret``: ret only. ``prefs_num_prefs_poss``, ``_ful``, ``_ful_ret``: the counts themselves.
* ``prefs_avgjg`` = the mean over the query's JGs of fulfilled / possible (0 when no JG has a
  fulfilled preference, as in trec_eval).
* ``prefs_pair`` = the mean over doc pairs with a preference of ``C[i][j] / (C[i][j] + C[j][i])``
  (``C[i][j]``: how many JGs prefer ``i`` to ``j``, ``i`` ranked above ``j``); pairs of unretrieved
  docs count as 0.
* ``prefs_avgjg_Rnonrel`` = ``prefs_avgjg`` with as many nonrelevant (level 0) docs per JG as
  relevant ones: R - N fulfilled preferences are added per retrieved relevant doc when there are
  fewer, only the first R nonrelevant docs kept when there are more. trec_eval's arithmetic is kept
  exactly, quirks included (in the equivalence-class case the kept nonrelevant docs are the first R
  of the lowest level's class, and they are also paired with that whole class, themselves included).
  One case has no trec_eval value to follow: when levels below 0 make the lowest class smaller than
  R, trec_eval 10.0 reads past that class into memory left from other topics; ctxeval keeps the
  class as it is (levels >= 0, as trec_eval documents them, never meet this).

Reference: C. Buckley, trec_eval 10.0 (``form_prefs_counts.c``, ``m_prefs_*.c``),
https://github.com/usnistgov/trec_eval.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from .._core.evaldata import EvalData
from .base import TrecSpec, register_trec

if TYPE_CHECKING:  # annotations only: the side data's module is imported when it is built
    from .._core.extras import PrefGroup, QueryPrefs

__all__: list[str] = []


def _per_query(value: Callable[[QueryPrefs], float]) -> Callable[..., np.ndarray]:
    def compute(d: EvalData, *_: object) -> np.ndarray:
        return np.array([value(q) for q in d.extra("preferences").queries], dtype=np.float64)

    return compute


def _ful(g: PrefGroup, scope: str) -> int:
    return g.ful_ret + (g.ful_imp if scope != "ret" else 0)


def _poss(g: PrefGroup, scope: str) -> int:
    return g.poss_ret + (g.poss_imp if scope != "ret" else 0) + (g.notoccur if scope == "all" else 0)


def _div(a: float, b: float) -> float:
    """C's double division: x/0 is inf, 0/0 NaN."""
    if b:
        return a / b
    return float("nan") if a == 0 else float("inf")


def _simp(scope: str) -> Callable[[QueryPrefs], float]:
    def value(q: QueryPrefs) -> float:
        ful = sum(_ful(g, scope) for g in q.groups)
        poss = sum(_poss(g, scope) for g in q.groups)
        return ful / poss if poss else 0.0

    return value


def _avg(q: QueryPrefs, terms: list[float]) -> float:
    """trec_eval's average over JGs: the sum (NaN poisons it) over the number of JGs, 0 unless > 0."""
    total = 0.0
    for t in terms:
        total += t
    return total / len(q.groups) if total > 0.0 else 0.0


def _avgjg(scope: str) -> Callable[[QueryPrefs], float]:
    def value(q: QueryPrefs) -> float:
        return _avg(q, [_ful(g, scope) / _poss(g, scope) for g in q.groups if _poss(g, scope)])

    return value


def _pair(scope: str) -> Callable[[QueryPrefs], float]:
    def value(q: QueryPrefs) -> float:
        c, njr = q.pairs.astype(np.int64), q.n_judged_ret
        either = (c + c.T) > 0
        upper = np.triu(either, 1)
        blocks = [(upper[:njr, :njr], 0)]  # both retrieved (column offset 0)
        if scope != "ret":
            blocks.append((either[:njr, njr:], njr))  # only the first retrieved
        parts = []
        for block, offset in blocks:
            i, j = np.nonzero(block)  # row-major: trec_eval's loop order
            j = j + offset
            parts.append(c[i, j] / (c[i, j] + c[j, i]))
        ratios = np.concatenate(parts)
        count = ratios.size + (int(upper[njr:, njr:].sum()) if scope == "all" else 0)  # neither retrieved: 0
        # summed one after another from the first, as trec_eval's loop does (not numpy's pairwise sum)
        total = float(np.add.accumulate(ratios)[-1]) if ratios.size else 0.0
        return total / count if count else 0.0

    return value


def _rnonrel(ret_only: bool) -> Callable[[QueryPrefs], float]:
    """``prefs_avgjg_Rnonrel`` (``m_prefs_avgjg_Rnonrel.c``) or its ``_ret`` form."""

    def value(q: QueryPrefs) -> float:
        terms = []
        for g in q.groups:
            r, nr = (g.num_rel_ret, g.num_nonrel_ret) if ret_only else (g.num_rel, g.num_nonrel)
            if r >= nr:
                ful = _ful(g, "ret" if ret_only else "all") + g.num_rel_ret * (r - nr)
                poss = _poss(g, "ret" if ret_only else "all") + g.num_rel * (r - nr)
            else:
                ful, poss = _recalculate(g, q.n_judged_ret, ret_only)
            terms.append(_div(ful, poss))
        return _avg(q, terms)

    return value


def _recalculate(g: PrefGroup, njr: int, ret_only: bool) -> tuple[int, int]:
    """The JG's preferences again, keeping only its first R nonrelevant docs (trec_eval's
    ``recalculate``); returns (fulfilled, possible)."""
    ful = unful = 0
    if g.classes is not None:
        classes = [c[c < njr] for c in g.classes] if ret_only else list(g.classes)
        keep = g.num_rel_ret if ret_only else g.num_rel
        nonrel = g.classes[-1][:keep]
        if ret_only:
            nonrel = nonrel[nonrel < njr]

        def count(a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
            hi, lo = a[:, None], b[None, :]
            won = (hi < lo) if ret_only else ((hi < lo) & (hi < njr))
            return int(won.sum()), int(won.size - won.sum())

        for x in range(len(classes)):
            for y in range(x + 1, len(classes) - 1):
                f, u = count(classes[x], classes[y])
                ful, unful = ful + f, unful + u
        for x in range(len(classes)):
            f, u = count(classes[x], nonrel)
            ful, unful = ful + f, unful + u
        return ful, ful + unful
    levels = g.levels if g.levels is not None else np.zeros(0)
    n = levels.size
    scan = njr if ret_only else n
    seen, first_dropped = 0, scan
    for i in range(scan):
        if levels[i] == 0.0:
            seen += 1
            if seen == g.num_rel + 1:
                first_dropped = i
                break
    kept = ~((np.arange(n) >= first_dropped) & (levels == 0.0))
    a = g.prefs.astype(bool) & kept[:, None] & kept[None, :]
    ret = a[:njr, :njr]
    ful = int(np.triu(ret, 1).sum())
    unful = int(np.tril(ret, -1).sum())
    if not ret_only:
        ful += int(a[:njr, njr:].sum())
        unful += int(a[njr:, :njr].sum()) + int(a[njr:, njr:].sum())
    return ful, ful + unful


_SETS = ("all_prefs", "prefs")
_SPECS = (
    ("prefs_num_prefs_poss", "long", lambda q: sum(_poss(g, "all") for g in q.groups), _SETS),
    ("prefs_num_prefs_ful", "long", lambda q: sum(_ful(g, "all") for g in q.groups), _SETS),
    ("prefs_num_prefs_ful_ret", "long", lambda q: sum(g.ful_ret for g in q.groups), _SETS),
    ("prefs_simp", "double", _simp("all"), _SETS),
    ("prefs_pair", "double", _pair("all"), _SETS),
    ("prefs_avgjg", "double", _avgjg("all"), _SETS),
    ("prefs_avgjg_Rnonrel", "double", _rnonrel(False), ("all_prefs",)),
    ("prefs_simp_ret", "double", _simp("ret"), ("all_prefs",)),
    ("prefs_pair_ret", "double", _pair("ret"), ("all_prefs",)),
    ("prefs_avgjg_ret", "double", _avgjg("ret"), ("all_prefs",)),
    ("prefs_avgjg_Rnonrel_ret", "double", _rnonrel(True), ("all_prefs",)),
    ("prefs_simp_imp", "double", _simp("imp"), ("all_prefs",)),
    ("prefs_pair_imp", "double", _pair("imp"), ("all_prefs",)),
    ("prefs_avgjg_imp", "double", _avgjg("imp"), ("all_prefs",)),
)

for _order, (_name, _kind, _value, _sets) in enumerate(_SPECS, start=98):
    register_trec(
        TrecSpec(
            _name,
            _order,
            _kind,
            _per_query(_value),
            summary="sum" if _kind == "long" else "mean",
            sets=_sets,
            rel_format="prefs",
        )
    )
