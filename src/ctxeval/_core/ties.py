"""Tied scores: the groups of rows that a ranking rule orders arbitrarily, and the exact enumeration of
their orders (for the measures without a closed form under ties).

Under ``ties="expected"`` a run is ranked by trec_eval's rule (score descending as float32, ties by doc
id descending) and the rows of equal score within a query form a **tie group**: ranks ``a .. a+n-1``
that the rule filled in doc id order, though every order of the group is as good a reading of the run.
A measure's *expected* value is its mean over every order of every tie group, each order equally likely
and the groups independent (McSherry & Najork, "Computing Information Retrieval Performance Measures
Efficiently in the Presence of Tied Scores", ECIR 2008). Each row of a group of n lands on each of
its ranks with probability 1/n; of a group straddling a cutoff k (m = k - a + 1 of its ranks inside),
the number of rows of a kind among the x it holds that fall inside is hypergeometric:
P(none inside) = C(n - x, m) / C(n, m).

:func:`rounds` enumerates the orders themselves, for a measure that has no closed form: per query,
every distinct sequence of row *classes* (rows of one class are interchangeable for the measure) over
the ranks that matter, with its probability. It never samples: past a budget it refuses.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .._errors import ConfigError

__all__ = ["LIMIT", "Round", "TieGroups", "find_groups", "log_choose", "order_by_key", "rounds"]

#: the most orders per query, and the most rows times orders, an exact average may enumerate
LIMIT = 20_000
WORK_LIMIT = 40_000_000


@dataclass(frozen=True, eq=False)
class TieGroups:
    """The tie groups of a ranking in rank order: for every ranked row, the 0-based position within its
    query of its group's first row (``start``) and the group's size (``size``; 1 for an untied row)."""

    start: np.ndarray
    size: np.ndarray

    @property
    def tied(self) -> int:
        """How many ranked rows share their score with another row of their query."""
        return int(np.count_nonzero(self.size > 1))

    def groups(self, r_off: np.ndarray) -> int:
        """How many tie groups (of two rows or more) the ranking holds."""
        first = self.start == np.arange(self.size.size) - np.repeat(r_off[:-1], np.diff(r_off))
        return int(np.count_nonzero(first & (self.size > 1)))


def find_groups(key: np.ndarray, r_off: np.ndarray) -> TieGroups:
    """The tie groups of rows in rank order whose score keys are ``key`` (equal keys tie), within the
    segments ``r_off``.

    >>> g = find_groups(np.array([3.0, 2.0, 2.0, 1.0, 5.0, 5.0]), np.array([0, 4, 6]))
    >>> g.start.tolist(), g.size.tolist()
    ([0, 1, 1, 3, 0, 0], [1, 2, 2, 1, 2, 2])
    """
    n = key.size
    new = np.ones(n, dtype=bool)
    if n > 1:
        new[1:] = key[1:] != key[:-1]
    new[r_off[:-1][r_off[:-1] < n]] = True
    first = np.flatnonzero(new)
    size = np.diff(np.r_[first, n])
    gid = np.cumsum(new) - 1
    seg_start = np.repeat(r_off[:-1], np.diff(r_off))
    return TieGroups((first[gid] - seg_start).astype(np.int64), size[gid].astype(np.int64))


def log_choose(n: np.ndarray | int, k: np.ndarray | int) -> np.ndarray:
    """log C(n, k), elementwise (-inf where k < 0 or k > n)."""
    n = np.asarray(n, dtype=np.int64)
    k = np.asarray(k, dtype=np.int64)
    top = int(n.max()) if n.size else 0
    lf = np.r_[0.0, np.cumsum(np.log(np.arange(1, top + 1, dtype=np.float64)))]
    ok = (k >= 0) & (k <= n)
    kk = np.clip(k, 0, np.maximum(n, 0))
    out = lf[np.maximum(n, 0)] - lf[kk] - lf[np.maximum(n, 0) - kk]
    return np.where(ok, out, -np.inf)


def order_by_key(groups: TieGroups, r_off: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The permutation (new position -> row) that orders every tie group by ``key`` descending (rows of
    equal key keep their order); untied rows stay."""
    n = key.size
    out = np.arange(n, dtype=np.int64)
    tied = np.flatnonzero(groups.size > 1)  # only the rows of tie groups move: sort those alone
    if tied.size:
        first = np.repeat(r_off[:-1], np.diff(r_off))[tied] + groups.start[tied]
        out[tied] = tied[np.lexsort((tied, -np.asarray(key, dtype=np.float64)[tied], first))]
    return out


@dataclass(frozen=True, eq=False)
class Round:
    """One order of the tie groups of some queries: ``queries`` (their indices, ascending; None: every
    query), ``perm`` (new position -> row, over the rows of those queries laid out one after another)
    and the probability ``weight`` of each one's order (0 for a query whose orders are all done)."""

    queries: np.ndarray | None
    perm: np.ndarray
    weight: np.ndarray


def _sequences(counts: dict[int, int], m: int, cap: int) -> list[tuple[tuple[int, ...], float]]:
    """Every distinct sequence of ``m`` classes drawn without replacement from the multiset ``counts``
    (class -> rows), with its probability; more than ``cap`` of them raise OverflowError."""
    total = sum(counts.values())
    out: list[tuple[tuple[int, ...], float]] = []
    left = dict(counts)
    seq: list[int] = []

    def walk(p: float) -> None:
        if len(seq) == m:
            out.append((tuple(seq), p))
            if len(out) > cap:
                raise OverflowError
            return
        rest = total - len(seq)
        for c in sorted(left):
            if left[c]:
                q = p * left[c] / rest
                left[c] -= 1
                seq.append(c)
                walk(q)
                seq.pop()
                left[c] += 1

    walk(1.0)
    return out


def _group_orders(rows: np.ndarray, classes: np.ndarray, m: int, cap: int) -> list[tuple[np.ndarray, float]]:
    """The distinct orders of one tie group's ``rows`` (their ``classes``) that differ in the classes of
    its first ``m`` ranks, each as the rows in rank order, with its probability."""
    counts: dict[int, int] = {}
    for c in classes.tolist():
        counts[c] = counts.get(c, 0) + 1
    if len(counts) == 1:
        return [(rows, 1.0)]
    by_class = {c: rows[classes == c].tolist() for c in counts}
    out = []
    for seq, p in _sequences(counts, m, cap):
        taken = dict.fromkeys(counts, 0)
        order = []
        for c in seq:
            order.append(by_class[c][taken[c]])
            taken[c] += 1
        for c in sorted(counts):  # the ranks past the window: the rest, in any order
            order.extend(by_class[c][taken[c] :])
        out.append((np.asarray(order, dtype=np.int64), p))
    return out


def rounds(
    groups: TieGroups, r_off: np.ndarray, classes: np.ndarray, window: np.ndarray, what: str, subset: bool = True
) -> Iterator[Round]:
    """Every order of every query's tie groups that a measure can tell apart, as rounds (see
    :class:`Round`): a query's orders are those of its groups (of two rows or more) that start within
    its ``window`` (ranks past it are never read), in the classes of the ranks within it. Query ``q``
    takes its i-th order in round i; the rounds run to the largest number of orders of any query. The
    first round holds every query; with ``subset`` a later round holds only the queries with orders
    left, else every query (those done with weight 0). Past :data:`LIMIT` orders of a query, or
    :data:`WORK_LIMIT` rows evaluated in all, a :class:`ConfigError` naming ``what``: an exact average
    would take too long, and it never samples."""
    n_rows = int(r_off[-1])
    n_q = r_off.size - 1
    lengths = np.diff(r_off)
    pos = np.arange(n_rows, dtype=np.int64) - np.repeat(r_off[:-1], lengths)
    lead = (pos == groups.start) & (groups.size > 1) & (groups.start < np.repeat(window, lengths))
    per_query: dict[int, list[tuple[np.ndarray, list[tuple[np.ndarray, float]]]]] = {}
    for first in np.flatnonzero(lead).tolist():
        q = int(np.searchsorted(r_off, first, side="right") - 1)
        n = int(groups.size[first])
        rows = np.arange(first, first + n, dtype=np.int64)
        try:
            orders = _group_orders(rows, classes[rows], int(min(n, window[q] - groups.start[first])), LIMIT)
        except OverflowError:
            raise _too_many(what, f"the orders of a tie group of {n} rows (more than {LIMIT:,} a query)") from None
        per_query.setdefault(q, []).append((rows, orders))
    combos = []
    for q, gs in per_query.items():
        count = math.prod(len(o) for _, o in gs)
        if count > LIMIT:
            raise _too_many(what, f"{count:,} orders of the ties of one query (more than {LIMIT:,})")
        combos.append((count, q, gs))
    combos.sort(key=lambda c: (-c[0], c[1]))
    most = combos[0][0] if combos else 1
    work = sum(c * int(lengths[q]) for c, q, _ in combos) if subset else most * n_rows
    if work > WORK_LIMIT:
        raise _too_many(what, f"{work:,} ranked rows over all its orders (more than {WORK_LIMIT:,})")
    where = np.full(n_q, -1, dtype=np.int64)
    for i in range(most):
        live = [c for c in combos if c[0] > i] if i else combos  # combos are sorted by count, descending
        active = np.arange(n_q) if i == 0 or not subset else np.sort(np.array([q for _, q, _ in live]))
        where[active] = np.arange(active.size)
        shift = r_off[active] - np.r_[0, np.cumsum(lengths[active])][:-1]
        perm = np.arange(int(lengths[active].sum()), dtype=np.int64)
        weight = np.ones(active.size) if i == 0 else np.zeros(active.size)
        for _count, q, gs in live:
            j = where[q]
            p = 1.0
            for (rows, orders), pick in zip(gs, _pick(i, [len(o) for _, o in gs])):
                order, prob = orders[pick]
                perm[rows - shift[j]] = order - shift[j]
                p *= prob
            weight[j] = p
        yield Round(None if active.size == n_q else active, perm, weight)


def _pick(i: int, sizes: list[int]) -> list[int]:
    """The i-th combination of one choice among each of ``sizes`` (mixed radix, the last fastest)."""
    out = []
    for size in reversed(sizes):
        i, r = divmod(i, size)
        out.append(r)
    return out[::-1]


def _too_many(what: str, why: str) -> ConfigError:
    return ConfigError(
        f"{what} has no closed form under tied scores, and its exact average over every order of the ties "
        f"would enumerate {why}; ties='expected' never samples: use ties='trec' (trec_eval's order), or "
        "measures with a closed form ('ctxeval measures' says which)"
    )
