"""The judge card's statistics against code nobody here wrote: Cohen's kappa against scikit-learn,
Krippendorff's alpha against the ``krippendorff`` package, Kendall's tau against scipy, tau_AP against
a hand calculation, the ``ircor`` R package's documented example and a plain-Python reading of its
definition; and invariants over generated labels."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ctxeval._errors import ConfigError
from ctxeval._judge.agreement import (
    _average_ranks,
    cohen_kappa,
    kendall_tau_b,
    krippendorff_alpha_ordinal,
    ranking_agreement,
    tau_ap,
)

SCALES = [(0, 1), (0, 1, 2, 3), (1, 2, 3, 4, 5)]


@st.composite
def paired_labels(draw: st.DrawFn, max_size: int = 40) -> tuple[tuple[int, ...], list[int], list[int]]:
    scale = draw(st.sampled_from(SCALES))
    pairs = draw(st.lists(st.tuples(st.sampled_from(scale), st.sampled_from(scale)), min_size=1, max_size=max_size))
    return scale, [a for a, _ in pairs], [b for _, b in pairs]


def _sklearn_kappa(h: list[int], j: list[int], labels: tuple[int, ...], weights: str | None) -> float:
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(h, j, labels=list(labels), weights=weights))


# --- Cohen's kappa against scikit-learn ------------------------------------------------------------


@given(paired_labels())
def test_kappa_equals_sklearn_and_is_undefined_where_sklearn_is(
    case: tuple[tuple[int, ...], list[int], list[int]],
) -> None:
    scale, h, j = case
    k = cohen_kappa(h, j, grades=scale)
    for ours, w in ((k.unweighted, None), (k.linear, "linear"), (k.quadratic, "quadratic")):
        want = _sklearn_kappa(h, j, scale, w)
        if ours is None:
            assert not math.isfinite(want)
        else:
            assert ours == pytest.approx(want, abs=1e-12)
    assert k.exact == pytest.approx(np.mean(np.array(h) == np.array(j)))
    assert sum(map(sum, k.confusion)) == len(h)


def test_kappa_of_one_grade_is_undefined_not_one() -> None:
    """Everyone used grade 4: scikit-learn gives NaN (0 / 0); the previous ctxeval said 1.0."""
    k = cohen_kappa([4] * 10, [4] * 10, grades=(1, 2, 3, 4, 5))
    assert (k.unweighted, k.linear, k.quadratic) == (None, None, None)
    assert math.isnan(_sklearn_kappa([4] * 10, [4] * 10, (1, 2, 3, 4, 5), None))
    assert k.exact == 1.0


def test_a_judge_with_one_grade_has_kappa_zero() -> None:
    """People 1, 2, 4, 5 and the judge always 4: p_o = share of people's 4s = 1/4 = p_e, so kappa = 0
    (scikit-learn: 0.0 too)."""
    k = cohen_kappa([1, 2, 4, 5], [4, 4, 4, 4], grades=(1, 2, 3, 4, 5))
    assert k.unweighted == 0.0 and k.linear == 0.0 and k.quadratic == 0.0
    assert _sklearn_kappa([1, 2, 4, 5], [4, 4, 4, 4], (1, 2, 3, 4, 5), "quadratic") == 0.0


def test_kappa_by_hand_weighted() -> None:
    """Scale 0-3, pairs (0,0), (1,2), (3,3), (2,0). Linear disagreement weights |i - j| / 3: observed
    (0 + 1 + 0 + 2) / 3 = 1; expected from the margins (people 0,1,2,3 once each; judge 0 twice, 2, 3):
    Σ_ij |i - j| r_i c_j / n = (1/4)(row 0: 0*2 + 2*1 + 3*1 = 5; row 1: 1*2 + 1 + 2 = 5; row 2: 2*2 + 0
    + 1 = 5; row 3: 3*2 + 1 + 0 = 7) = 22/4, over 3: 22/12. Linear kappa = 1 - 1 / (22/12) = 5/11."""
    k = cohen_kappa([0, 1, 3, 2], [0, 2, 3, 0], grades=(0, 1, 2, 3))
    assert k.linear == pytest.approx(5 / 11)


# --- Krippendorff's alpha against the krippendorff package ----------------------------------------


@given(paired_labels())
def test_alpha_equals_the_krippendorff_package(case: tuple[tuple[int, ...], list[int], list[int]]) -> None:
    import krippendorff

    _, h, j = case
    ours = krippendorff_alpha_ordinal(h, j)
    data = np.array([h, j], dtype=float)
    if ours is None:
        assert len(set(h) | set(j)) == 1
        with pytest.raises(ValueError):
            krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
    else:
        assume(len(h) >= 2)
        want = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
        assert ours == pytest.approx(want, abs=1e-9)


def test_alpha_ignores_pairs_one_side_left_unlabelled() -> None:
    """A unit with one value is not pairable: alpha over the pairs both label equals the package's over
    the full table with the gaps as NaN."""
    import krippendorff

    h = [1, 2, 3, 4, 5, 3, np.nan, 2]
    j = [1, 3, 3, 4, 4, np.nan, 5, 2]
    want = krippendorff.alpha(reliability_data=np.array([h, j]), level_of_measurement="ordinal")
    assert krippendorff_alpha_ordinal([1, 2, 3, 4, 5, 2], [1, 3, 3, 4, 4, 2]) == pytest.approx(want, abs=1e-12)


# --- Kendall's tau against scipy -----------------------------------------------------------------


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=12))
def test_kendall_tau_and_ranks_equal_scipy(pairs: list[tuple[int, int]]) -> None:
    from scipy.stats import kendalltau, rankdata

    x = np.array([a for a, _ in pairs], dtype=float)
    y = np.array([b for _, b in pairs], dtype=float)
    want = kendalltau(x, y).statistic
    if math.isnan(want):
        assert math.isnan(kendall_tau_b(x, y))
    else:
        assert kendall_tau_b(x, y) == pytest.approx(want, abs=1e-12)
    assert _average_ranks(x).tolist() == rankdata(x).tolist()


# --- tau_AP --------------------------------------------------------------------------------------


def _tau_ap_definition(truth: list[float], estimate: list[float]) -> float:
    """Yilmaz et al. 2008 read literally, no ties: the items in the estimate's order; C(i) = the items
    above position i that the truth also ranks above the item at position i; 2/(N-1) Σ C(i)/(i-1) - 1."""
    order = sorted(range(len(estimate)), key=lambda i: -estimate[i])
    total = 0.0
    for pos in range(1, len(order)):
        item = order[pos]
        total += sum(1 for other in order[:pos] if truth[other] > truth[item]) / pos
    return 2 / (len(order) - 1) * total - 1


def _tau_ap_brute_force(truth: list[float], estimate: list[float]) -> float:
    """Ties broken every possible way in both lists (each equally likely), the definition averaged."""

    def orders(values: list[float]) -> list[list[float]]:
        groups: dict[float, list[int]] = {}
        for i, v in enumerate(values):
            groups.setdefault(v, []).append(i)
        keys = sorted(groups, reverse=True)
        out = []
        for perms in itertools.product(*[itertools.permutations(groups[k]) for k in keys]):
            flat = [i for p in perms for i in p]
            ranked = [0.0] * len(values)
            for r, i in enumerate(flat):
                ranked[i] = -float(r)
            out.append(ranked)
        return out

    vals = [_tau_ap_definition(t, e) for t in orders(truth) for e in orders(estimate)]
    return sum(vals) / len(vals)


def test_tau_ap_by_hand() -> None:
    """Truth A > B > C > D > E; the judge's order B, A, C, E, D (the top two and the bottom two swapped).
    Position 2 (A): above it B, which the truth puts below A: C = 0, 0/1. Position 3 (C): B, A both
    above C in the truth: 2/2. Position 4 (E): B, A, C all above E: 3/3. Position 5 (D): B, A, C above
    D, E below: 3/4. τ_AP = 2/4 (0 + 1 + 1 + 3/4) - 1 = 0.375. Kendall's tau is the same for both
    swaps: (8 - 2) / 10 = 0.6; swapping only the bottom two gives τ_AP = 2/4 (1 + 1 + 1 + 3/4) - 1 =
    0.875: the top swap costs more."""
    truth = [5.0, 4.0, 3.0, 2.0, 1.0]
    assert tau_ap(truth, [4.0, 5.0, 3.0, 1.0, 2.0]) == pytest.approx(0.375)
    assert tau_ap(truth, [5.0, 4.0, 3.0, 1.0, 2.0]) == pytest.approx(0.875)
    assert kendall_tau_b(np.array(truth), np.array([4.0, 5.0, 3.0, 1.0, 2.0])) == pytest.approx(0.6)


def test_tau_ap_on_the_ircor_example() -> None:
    """The R package ircor (Urbano), ?tauAP: tauAP(x, y) = 0.3928571 and, with y rounded to one decimal
    (ties), tauAP_a(x, y) = 0.39903 (its documented example output)."""
    x = [0.67, 0.45, 0.29, 0.12, 0.57, 0.24, 0.94, 0.75, 0.08, 0.54]
    y = [0.48, 0.68, 0.32, 0.09, 0.06, 0.61, 0.87, 0.22, 0.44, 0.84]
    assert tau_ap(x, y) == pytest.approx(0.3928571, abs=5e-8)
    assert tau_ap(x, [round(v, 1) for v in y]) == pytest.approx(0.39903, abs=5e-6)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=6))
def test_tau_ap_equals_the_definition_over_every_tie_break(pairs: list[tuple[int, int]]) -> None:
    truth = [float(a) for a, _ in pairs]
    estimate = [float(b) for _, b in pairs]
    assert tau_ap(truth, estimate) == pytest.approx(_tau_ap_brute_force(truth, estimate), abs=1e-9)


def test_tau_ap_of_a_judge_that_ties_everything_is_zero() -> None:
    assert tau_ap([4.0, 3.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0]) == 0.0
    with pytest.raises(ConfigError):
        tau_ap([1.0], [1.0])


# --- invariants ----------------------------------------------------------------------------------


@given(paired_labels())
def test_kappa_and_alpha_are_symmetric_bounded_and_survive_relabelling(
    case: tuple[tuple[int, ...], list[int], list[int]],
) -> None:
    """Swapping the raters changes neither kappa nor alpha; both are <= 1; an order-keeping relabelling
    (g -> 3g + 7 on the scale) keeps every kappa and alpha; any one-to-one relabelling keeps the
    unweighted kappa."""
    scale, h, j = case
    k, kt = cohen_kappa(h, j, grades=scale), cohen_kappa(j, h, grades=scale)
    for a, b in ((k.unweighted, kt.unweighted), (k.linear, kt.linear), (k.quadratic, kt.quadratic)):
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            assert a == pytest.approx(b, abs=1e-12) and a <= 1 + 1e-12
    al = krippendorff_alpha_ordinal(h, j)
    assert (al is None) == (krippendorff_alpha_ordinal(j, h) is None)
    if al is not None:
        assert al == pytest.approx(krippendorff_alpha_ordinal(j, h), abs=1e-12) and al <= 1 + 1e-12
    up = cohen_kappa([3 * g + 7 for g in h], [3 * g + 7 for g in j], grades=[3 * g + 7 for g in scale])
    for a, b in ((k.unweighted, up.unweighted), (k.linear, up.linear), (k.quadratic, up.quadratic)):
        assert a == pytest.approx(b, abs=1e-12) if a is not None else b is None
    if al is not None:
        assert krippendorff_alpha_ordinal([3 * g + 7 for g in h], [3 * g + 7 for g in j]) == pytest.approx(
            al, abs=1e-12
        )
    perm = dict(zip(scale, reversed(scale)))
    swapped = cohen_kappa([perm[g] for g in h], [perm[g] for g in j], grades=scale)
    assert swapped.unweighted == pytest.approx(k.unweighted, abs=1e-12) if k.unweighted is not None else True


@given(
    st.lists(st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 2)), min_size=2, max_size=9),
    st.lists(st.floats(0, 1, allow_nan=False).map(lambda v: round(v, 2)), min_size=2, max_size=9),
)
def test_rank_correlations_are_bounded_and_ignore_monotone_rescaling(xs: list[float], ys: list[float]) -> None:
    n = min(len(xs), len(ys))
    x, y = np.array(xs[:n]), np.array(ys[:n])
    t = tau_ap(x, y)
    assert -1 - 1e-12 <= t <= 1 + 1e-12
    assert tau_ap(x * 2 + 1, np.exp(y)) == pytest.approx(t, abs=1e-12)
    tb = kendall_tau_b(x, y)
    if not math.isnan(tb):
        assert -1 - 1e-12 <= tb <= 1 + 1e-12
        assert kendall_tau_b(y, x) == pytest.approx(tb, abs=1e-12)
    if len(set(xs[:n])) == n:
        assert tau_ap(x, x) == 1.0 and tau_ap(x, -x) == -1.0


def test_ranking_agreement_by_hand() -> None:
    """People's order A > B > C > D, the judge's A > C > B > D: one discordant pair of six, tau = (5 - 1)
    / 6; tau_AP over the judge's order A, C, B, D: C(2) = 1/1, C(3) = 1/2 (A above B, C not), C(4) = 3/3:
    2/3 (1 + 1/2 + 1) - 1 = 2/3. The largest swap is one rank (B and C); the first such run by name is B."""
    r = ranking_agreement({"A": 0.9, "B": 0.8, "C": 0.7, "D": 0.1}, {"A": 0.8, "B": 0.5, "C": 0.6, "D": 0.2})
    assert r["kendall_tau"] == pytest.approx(4 / 6)
    assert r["tau_ap"] == pytest.approx(2 / 3)
    assert r["largest_swap"] == {"run": "B", "human_rank": 2.0, "judge_rank": 3.0, "by": 1.0}


def test_largest_swap_is_sought_among_the_top_systems() -> None:
    """Runs r1..r8, people's order r1 > ... > r8. The judge drops r5 to last (people 5, judge 8: 3
    ranks) and swaps r2 with r4 (2 ranks each). Over all runs the largest swap is r5's; among the top 3
    of either side (r1, r2, r3 and r4, the judge's second) it is r2's."""
    human = {f"r{i}": 1.0 - i / 10 for i in range(1, 9)}
    judge = dict(human)
    judge["r2"], judge["r4"] = human["r4"], human["r2"]
    judge["r5"] = 0.0
    r = ranking_agreement(human, judge, top=3)
    assert r["largest_swap"] == {"run": "r2", "human_rank": 2.0, "judge_rank": 4.0, "by": 2.0}
    assert ranking_agreement(human, judge, top=8)["largest_swap"] == {
        "run": "r5",
        "human_rank": 5.0,
        "judge_rank": 8.0,
        "by": 3.0,
    }
