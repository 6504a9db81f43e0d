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
from itertools import product

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
    pos = np.arange(n, dtype=np.int64)
    first = np.repeat(r_off[:-1], np.diff(r_off)) + groups.start
    return np.lexsort((pos, -np.asarray(key, dtype=np.float64), first))


@dataclass(frozen=True, eq=False)
class Round:
    """One order of every query's tie groups: ``perm`` (new position -> ranked row) and the probability
    ``weight`` of each query's order (0 for a query whose orders are all done)."""

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


def rounds(groups: TieGroups, r_off: np.ndarray, classes: np.ndarray, window: np.ndarray, what: str) -> Iterator[Round]:
    """Every order of every query's tie groups that a measure can tell apart, as rounds (see
    :class:`Round`): a query's orders are those of its groups (of two rows or more) that start within
    its ``window`` (ranks past it are never read), in the classes of the ranks within it. Query ``q``
    takes its i-th order in round i; the rounds run to the largest number of orders of any query.
    More than :data:`LIMIT` orders of a query (or :data:`WORK_LIMIT` rows times rounds) raise a
    :class:`ConfigError` naming ``what``: an exact average would take too long, and it never samples."""
    n_rows = int(r_off[-1])
    seg_start = np.repeat(r_off[:-1], np.diff(r_off))
    pos = np.arange(n_rows, dtype=np.int64) - seg_start
    window_rows = np.repeat(window, np.diff(r_off))
    lead = (pos == groups.start) & (groups.size > 1) & (groups.start < window_rows)
    per_query: list[tuple[int, list[tuple[np.ndarray, list[tuple[np.ndarray, float]]]]]] = []
    most = 1
    for first in np.flatnonzero(lead).tolist():
        q = int(np.searchsorted(r_off, first, side="right") - 1)
        n = int(groups.size[first])
        rows = np.arange(first, first + n, dtype=np.int64)
        m = int(min(n, window[q] - groups.start[first]))
        try:
            orders = _group_orders(rows, classes[rows], m, LIMIT)
        except OverflowError:
            orders = []
        if not orders:
            raise _too_many(what, f"a tie group of {n} rows")
        if per_query and per_query[-1][0] == q:
            per_query[-1][1].append((rows, orders))
        else:
            per_query.append((q, [(rows, orders)]))
    for _q, gs in per_query:
        count = math.prod(len(o) for _, o in gs)
        if count > LIMIT:
            raise _too_many(what, f"{count:,} orders of the ties of one query")
        most = max(most, count)
    if most * max(n_rows, 1) > WORK_LIMIT:
        raise _too_many(what, f"{most:,} orders over {n_rows:,} ranked rows")
    n_q = r_off.size - 1
    combos = [(q, list(product(*(range(len(o)) for _, o in gs))), gs) for q, gs in per_query]
    for i in range(most):
        perm = np.arange(n_rows, dtype=np.int64)
        weight = np.zeros(n_q) if i else np.ones(n_q)
        for q, choices, gs in combos:
            if i >= len(choices):
                continue
            p = 1.0
            for (rows, orders), pick in zip(gs, choices[i]):
                order, prob = orders[pick]
                perm[rows] = order
                p *= prob
            weight[q] = p
        yield Round(perm, weight)


def _too_many(what: str, why: str) -> ConfigError:
    return ConfigError(
        f"{what} has no closed form under tied scores, and its exact average over every order of the ties "
        f"would enumerate {why} (more than {LIMIT:,}); ties='expected' never samples: use ties='trec' "
        "(trec_eval's order), or measures with a closed form ('ctxeval measures' says which)"
    )
