"""The orders of the ties that ``rounds`` enumerates are distributed as every permutation of every tie
group, each equally likely (itertools over the groups, the oracle): in the classes of the ranks within a
window (a measure reading those ranks), or in the multiset of classes within it (a measure reading the
set of rows within it)."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxeval import ConfigError
from ctxeval._core.ties import find_groups, rounds


@st.composite
def queries(draw: st.DrawFn) -> tuple[list[list[float]], list[list[int]], list[int]]:
    """Up to three queries of up to seven rows: scores from three values (so ties, in rank order),
    classes from three, and a window per query."""
    scores, classes, windows = [], [], []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 7))
        scores.append(sorted(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0]), min_size=n, max_size=n)), reverse=True))
        classes.append(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
        windows.append(draw(st.integers(1, n)))
    return scores, classes, windows


def _oracle(scores: list[float], classes: list[int], window: int, ordered: bool) -> Counter:
    """The probability of each signature (the classes within the window, in order or as a multiset)
    over every permutation of every tie group, each equally likely."""
    groups = [list(g) for _, g in itertools.groupby(range(len(scores)), key=lambda i: scores[i])]
    perms = list(itertools.product(*(itertools.permutations(g) for g in groups)))
    out: Counter = Counter()
    for combo in perms:
        rows = [r for g in combo for r in g]
        out[_signature([classes[r] for r in rows[:window]], ordered)] += 1 / len(perms)
    return out


def _signature(classes: list[int], ordered: bool) -> tuple[int, ...]:
    return tuple(classes) if ordered else tuple(sorted(classes))


@settings(max_examples=150, deadline=None)
@given(case=queries(), ordered=st.booleans())
def test_rounds_give_every_order_its_probability(case: tuple, ordered: bool) -> None:
    scores, classes, windows = case
    lengths = [len(s) for s in scores]
    r_off = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    flat = np.array([x for s in scores for x in s])
    key = flat - 10.0 * np.repeat(np.arange(len(scores)), lengths)  # equal scores of two queries do not tie
    groups = find_groups(key, r_off)
    cls = np.array([c for cs in classes for c in cs], dtype=np.int64)
    got: list[Counter] = [Counter() for _ in scores]
    for rnd in rounds(groups, r_off, cls, np.array(windows), "test", subset=True, ordered=ordered):
        active = np.arange(len(scores)) if rnd.queries is None else rnd.queries
        off = np.r_[0, np.cumsum(np.array(lengths)[active])]
        for j, q in enumerate(active.tolist()):
            if rnd.weight[j] > 0:
                order = rnd.perm[off[j] : off[j + 1]] - off[j]
                sig = _signature(cls[r_off[q] + order[: windows[q]]].tolist(), ordered)
                got[q][sig] += rnd.weight[j]
    for q in range(len(scores)):
        want = _oracle(scores[q], classes[q], windows[q], ordered)
        assert set(got[q]) == set(want)
        for sig, p in want.items():
            assert got[q][sig] == pytest.approx(p, abs=1e-12)


def test_a_set_within_the_window_takes_subsets_not_orders() -> None:
    # one group of 12 rows, each its own class, the window 4 ranks into it: 12·11·10·9 = 11,880 orders
    # of the ranks, C(12, 4) = 495 subsets; 16 rows: 43,680 orders (past the limit), C(16, 4) = 1,820
    r_off = np.array([0, 16])
    groups = find_groups(np.zeros(16), r_off)
    cls = np.arange(16, dtype=np.int64)
    assert len(list(rounds(groups, r_off, cls, np.array([4]), "m", ordered=False))) == 1820
    with pytest.raises(ConfigError, match="m has no closed form under tied scores"):
        list(rounds(groups, r_off, cls, np.array([4]), "m", ordered=True))
    # a group wholly within the window: one set, whatever its order
    assert len(list(rounds(groups, r_off, cls, np.array([16]), "m", ordered=False))) == 1
