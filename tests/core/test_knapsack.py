"""The ideal at a budget (ctxeval._core.knapsack) against brute force and an integer-programming solver.

Brute force enumerates every *ordered* selection (every sequence of distinct items), so it does not
lean on the exchange argument the DP rests on; scipy's MILP places items on positions with an
assignment model (item i at position j), again without it.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxeval._core.knapsack import count_optimum, ordered_optimum, set_optimum

DISC = 1.0 / np.log2(np.arange(2, 64))


def _sequences(n: int) -> np.ndarray:
    """Every sequence of distinct items of 0..n-1 (the empty one too), padded with -1."""
    seqs = [p for k in range(n + 1) for p in itertools.permutations(range(n), k)]
    out = np.full((len(seqs), max(n, 1)), -1, dtype=np.int64)
    for i, p in enumerate(seqs):
        out[i, : len(p)] = p
    return out


def _brute(g: np.ndarray, w: np.ndarray, budget: np.ndarray, ordered: bool) -> np.ndarray:
    """The best value of every instance (rows of ``g``, ``w``), by enumeration: ordered sequences
    (discounted by position) or subsets (summed)."""
    n = g.shape[1]
    seqs = (
        _sequences(n)
        if ordered
        else np.array([[i if (mask >> i) & 1 else -1 for i in range(n)] for mask in range(1 << n)], dtype=np.int64)
    )
    used = seqs >= 0
    idx = np.where(used, seqs, 0)
    disc = DISC[:n] if ordered else np.ones(n)
    best = np.full(g.shape[0], -np.inf)
    for lo in range(0, g.shape[0], 4000):
        gs, ws = g[lo : lo + 4000], w[lo : lo + 4000]
        val = np.where(used[None], gs[:, idx] * disc[None, None, :], 0.0).sum(axis=2)
        wt = np.where(used[None], ws[:, idx], 0).sum(axis=2)
        val = np.where(wt <= budget[lo : lo + 4000, None], val, -np.inf)
        best[lo : lo + 4000] = val.max(axis=1)
    return best


def _instances(rng: np.random.Generator, count: int, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = rng.integers(0, 6, size=(count, n)).astype(np.float64)
    g[rng.random((count, n)) < 0.2] = 0.0
    g += rng.random((count, n)) * (rng.random((count, 1)) < 0.5)  # half the instances: real-valued gains
    w = rng.integers(0, 9, size=(count, n))
    budget = rng.integers(0, 25, size=count)
    return g, w, budget


def _solve(fn, g: np.ndarray, w: np.ndarray, budget: np.ndarray, *extra) -> np.ndarray:
    """The solver on every instance, one query per instance, grouped by budget (one call per budget)."""
    out = np.empty(g.shape[0])
    off = np.arange(g.shape[0] + 1) * g.shape[1]
    for b in np.unique(budget):
        sel = np.flatnonzero(budget == b)
        sub_off = off[: sel.size + 1]
        out[sel] = fn(sub_off, g[sel].ravel(), w[sel].ravel(), int(b), *extra)
    return out


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_ordered_optimum_equals_brute_force(n: int) -> None:
    rng = np.random.default_rng(100 + n)
    count = 30_000 if n < 5 else 12_000  # 102,000 instances in all
    g, w, budget = _instances(rng, count, n)
    got = _solve(ordered_optimum, g, w, budget, DISC)
    np.testing.assert_allclose(got, _brute(g, w, budget, ordered=True), rtol=0, atol=1e-9)


@pytest.mark.parametrize("n", [1, 3, 6, 8])
def test_set_optimum_equals_brute_force(n: int) -> None:
    rng = np.random.default_rng(200 + n)
    g, w, budget = _instances(rng, 25_000, n)
    got = _solve(set_optimum, g, w, budget)
    np.testing.assert_allclose(got, _brute(g, w, budget, ordered=False), rtol=0, atol=1e-9)


def test_count_optimum_equals_brute_force() -> None:
    rng = np.random.default_rng(7)
    _, w, budget = _instances(rng, 20_000, 6)
    ones = np.ones_like(w, dtype=np.float64)
    got = np.empty(w.shape[0])
    off = np.arange(w.shape[0] + 1) * 6
    for b in np.unique(budget):
        sel = np.flatnonzero(budget == b)
        got[sel] = count_optimum(off[: sel.size + 1], w[sel].ravel(), int(b))
    np.testing.assert_array_equal(got, _brute(ones, w, budget, ordered=False))


@settings(max_examples=200, deadline=None)
@given(
    lens=st.lists(st.integers(0, 7), min_size=1, max_size=6),
    length=st.integers(1, 50),
    k=st.integers(0, 8),
    seed=st.integers(0, 2**32 - 1),
)
def test_equal_lengths_give_the_k_slot_ideal(lens: list[int], length: int, k: int, seed: int) -> None:
    """Every item of one length L, budget B in [K·L, (K+1)·L): the ideal is the K largest gains in
    order (IDCG@K) and their sum (the set ideal of K slots)."""
    rng = np.random.default_rng(seed)
    off = np.r_[0, np.cumsum(lens)]
    g = rng.integers(0, 5, size=int(off[-1])).astype(np.float64)
    w = np.full(g.size, length)
    budget = k * length + int(rng.integers(0, length))
    dcg, total = [], []
    for q in range(len(lens)):
        top = np.sort(g[off[q] : off[q + 1]])[::-1][:k]
        dcg.append(float((top * DISC[: top.size]).sum()))
        total.append(float(top.sum()))
    np.testing.assert_allclose(ordered_optimum(off, g, w, budget, DISC), dcg, atol=1e-12)
    np.testing.assert_allclose(set_optimum(off, g, w, budget), total, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    lens=st.lists(st.integers(0, 5), min_size=1, max_size=8),
    budget=st.integers(0, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_query_is_solved_alike_whatever_its_neighbours(lens: list[int], budget: int, seed: int) -> None:
    """Blocks of queries share a table: each query's value is the one it gets alone."""
    rng = np.random.default_rng(seed)
    off = np.r_[0, np.cumsum(lens)]
    g = rng.random(int(off[-1])) * 4
    w = rng.integers(0, 12, size=g.size)
    together = ordered_optimum(off, g, w, budget, DISC)
    alone = [ordered_optimum(np.array([0, b - a]), g[a:b], w[a:b], budget, DISC)[0] for a, b in itertools.pairwise(off)]
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-12)


def _milp_ordered(g: np.ndarray, w: np.ndarray, budget: int) -> float:
    """max Σ_ij g_i d_j x_ij: x_ij = 1 puts item i at position j; each item at most one position,
    each position at most one item, the weights within the budget."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    n = g.size
    c = -(g[:, None] * DISC[None, :n]).ravel()
    rows_item = np.kron(np.eye(n), np.ones(n))
    rows_pos = np.kron(np.ones(n), np.eye(n))
    weight = np.repeat(w, n)[None, :].astype(np.float64)
    cons = [
        LinearConstraint(rows_item, -np.inf, 1),
        LinearConstraint(rows_pos, -np.inf, 1),
        LinearConstraint(weight, -np.inf, budget),
    ]
    res = milp(c, constraints=cons, integrality=np.ones(n * n), bounds=Bounds(0, 1))
    assert res.status == 0, res.message
    return -float(res.fun)


def _milp_set(g: np.ndarray, w: np.ndarray, budget: int) -> float:
    from scipy.optimize import Bounds, LinearConstraint, milp

    res = milp(
        -g,
        constraints=[LinearConstraint(w[None, :].astype(np.float64), -np.inf, budget)],
        integrality=np.ones(g.size),
        bounds=Bounds(0, 1),
    )
    assert res.status == 0, res.message
    return -float(res.fun)


@pytest.mark.parametrize("seed", range(6))
def test_larger_instances_equal_an_integer_program(seed: int) -> None:
    pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(seed)
    n = 14
    g = np.round(rng.random(n) * 5, 3)
    w = rng.integers(20, 400, size=n)
    budget = int(w.sum() * rng.uniform(0.2, 0.6))
    off = np.array([0, n])
    assert ordered_optimum(off, g, w, budget, DISC)[0] == pytest.approx(_milp_ordered(g, w, budget), abs=1e-6)
    assert set_optimum(off, g, w, budget)[0] == pytest.approx(_milp_set(g, w, budget), abs=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_a_hundred_candidates_equal_an_integer_program(seed: int) -> None:
    """The set optimum at the benchmark's size (100 candidates, 4,096 tokens)."""
    rng = np.random.default_rng(50 + seed)
    g = rng.integers(1, 6, size=100).astype(np.float64)
    w = rng.integers(40, 600, size=100)
    off = np.array([0, 100])
    assert set_optimum(off, g, w, 4096)[0] == pytest.approx(_milp_set(g, w, 4096), abs=1e-6)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="weights must be >= 0"):
        set_optimum(np.array([0, 1]), np.array([1.0]), np.array([-1]), 3)
    with pytest.raises(ValueError, match="discounts must not increase"):
        ordered_optimum(np.array([0, 1]), np.array([1.0]), np.array([1]), 3, np.array([0.5, 1.0]))
