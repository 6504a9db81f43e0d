"""ctxeval._stats against scipy, exact enumerations and hand calculations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from ctxeval import ConfigError
from ctxeval import _stats as S
from ctxeval._stats import resample as R

# --------------------------------------------------------------------------------------------------
# special functions
# --------------------------------------------------------------------------------------------------


def test_betainc_matches_scipy():
    rng = np.random.default_rng(11)
    a = np.r_[rng.uniform(0.05, 5, 200), rng.uniform(5, 5e4, 200)]
    b = np.r_[rng.uniform(0.05, 5, 200), rng.uniform(0.5, 300, 200)]
    x = rng.uniform(0, 1, 400)
    np.testing.assert_allclose(S.betainc(a, b, x), special.betainc(a, b, x), rtol=1e-11, atol=1e-14)
    assert S.betainc(2.0, 3.0, 0.0) == 0.0 and S.betainc(2.0, 3.0, 1.0) == 1.0


@pytest.mark.parametrize("df", [1, 2, 3, 7, 29, 49, 99, 100, 1000, 9999, 100000])
def test_t_tail_matches_scipy(df):
    t = np.r_[np.linspace(-40, 40, 81), [1e-3, 0.5, 2.5, 6.0]]
    ref = 2 * stats.t.sf(np.abs(t), df)
    np.testing.assert_allclose(S.t_sf(t, np.full(t.shape, float(df))), ref, rtol=1e-10, atol=1e-300)


def test_t_tail_closed_forms_near_zero():
    # df = 1 (Cauchy): P(|T| >= t) = 1 - (2/pi) arctan t
    # df = 2: 1 - t / sqrt(2 + t^2), written without cancellation as 2 / (r (r + t)), r = sqrt(2 + t^2)
    t = np.array([1e-12, 1e-8, 1e-4, 0.3, 3.0, 300.0])
    np.testing.assert_allclose(S.t_sf(t, np.ones(6)), 1 - 2 / np.pi * np.arctan(t), rtol=1e-13)
    r = np.sqrt(2 + t * t)
    np.testing.assert_allclose(S.t_sf(t, np.full(6, 2.0)), 2 / (r * (r + t)), rtol=1e-12)


@pytest.mark.parametrize("df", [1, 2, 3, 9, 49, 99, 499, 10_000, 1_000_000])
def test_t_quantile_and_cdf_match_scipy(df):
    from ctxeval._stats import special as SP

    for q in (1e-10, 1e-6, 0.001, 0.025, 0.05, 0.1, 0.3, 0.7, 0.95, 0.975, 0.999, 1 - 1e-6):
        x = SP.t_ppf.__wrapped__(q, float(df))  # uncached
        assert x == pytest.approx(stats.t.ppf(q, df), rel=1e-9), q
        assert SP.t_cdf(x, float(df)) == pytest.approx(q, rel=1e-9)
    assert abs(SP.t_ppf(0.5, float(df))) < 1e-15
    assert SP.t_ppf(0.0, float(df)) == -math.inf and SP.t_ppf(1.0, float(df)) == math.inf


def test_normal_functions_match_scipy():
    for z in (-8.0, -3.0, -1.96, -0.1, 0.0, 0.7, 2.5, 6.0):
        assert S.normal_cdf(z) == pytest.approx(stats.norm.cdf(z), rel=1e-13, abs=1e-300)
    for p in (1e-10, 0.001, 0.025, 0.3, 0.5, 0.975, 0.999999):
        assert S.normal_ppf(p) == pytest.approx(stats.norm.ppf(p), rel=1e-12, abs=1e-12)
    assert S.normal_ppf(0.0) == -math.inf and S.normal_ppf(1.0) == math.inf


# --------------------------------------------------------------------------------------------------
# paired t-test and Wilcoxon
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 3, 5, 12, 50, 400, 5000])
def test_t_test_matches_scipy_ttest_rel(n):
    rng = np.random.default_rng(n)
    a = rng.uniform(0, 1, n)
    b = np.clip(a + rng.normal(0.03, 0.2, n), 0, 1)
    t, p = S.t_test(b - a)
    ref = stats.ttest_rel(b, a)
    assert float(t) == pytest.approx(ref.statistic, rel=1e-10)
    assert float(p) == pytest.approx(ref.pvalue, rel=1e-9)


def test_t_test_columns_drop_nan_pairwise_and_edge_cases():
    rng = np.random.default_rng(5)
    d = rng.normal(0.1, 1, (30, 3))
    d[[0, 4, 9], 1] = np.nan
    d[:, 2] = 0.0  # no difference at all: p = 1 (scipy: NaN)
    t, p = S.t_test(d)
    ref = stats.ttest_1samp(d[~np.isnan(d[:, 1]), 1], 0.0)
    assert p[0] == pytest.approx(stats.ttest_1samp(d[:, 0], 0.0).pvalue, rel=1e-9)
    assert p[1] == pytest.approx(ref.pvalue, rel=1e-9)
    assert t[2] == 0.0 and p[2] == 1.0
    t1, p1 = S.t_test(np.array([0.3]))
    assert math.isnan(float(t1)) and math.isnan(float(p1))
    tc, pc = S.t_test(np.array([0.25, 0.25, 0.25]))  # constant non-zero difference (sd exactly 0)
    assert tc == math.inf and pc == 0.0


def _wilcoxon_cases():
    rng = np.random.default_rng(2024)
    cases = []
    for n in (1, 4, 9, 13, 20, 37, 50):  # exact (no ties, no zeros)
        cases.append(("exact", rng.normal(0.2, 1, n)))
    for n in (51, 80, 300):  # normal approximation by size
        cases.append(("normal", rng.normal(0.1, 1, n)))
    for n in (5, 8, 13):  # ties / zeros, small: every sign flip
        cases.append(("exact-flips", np.round(rng.normal(0.2, 1, n), 0)))
        cases.append(("exact-flips", np.r_[0.0, 0.0, rng.normal(0.3, 1, n - 2)]))
    for n in (14, 30, 50, 200):  # ties / zeros, larger: normal approximation with tie correction
        cases.append(("normal", np.round(rng.normal(0.2, 1, n), 1)))
        cases.append(("normal", rng.integers(-2, 3, n).astype(float)))
    return cases


@pytest.mark.parametrize(("method", "d"), _wilcoxon_cases())
def test_wilcoxon_matches_scipy_defaults(method, d):
    if not np.any(d != 0):
        pytest.skip("all zero")
    ref = stats.wilcoxon(d)
    w, p, how = S.wilcoxon_test(d)
    assert how == [method]
    assert float(p) == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-15)
    # scipy reports min(W+, W-) for the two-sided test
    nz = d[d != 0]
    total = len(nz) * (len(nz) + 1) / 2
    assert min(float(w), total - float(w)) == pytest.approx(ref.statistic)


def test_wilcoxon_all_zero_and_empty():
    _, p, how = S.wilcoxon_test(np.zeros((4, 1)))
    assert p.tolist() == [1.0] and how == ["none"]
    _, p, how = S.wilcoxon_test(np.full((3, 1), np.nan))
    assert math.isnan(p[0]) and how == ["none"]


# --------------------------------------------------------------------------------------------------
# randomization test
# --------------------------------------------------------------------------------------------------


def _exact_sign_flip_p(d):
    """All 2^n sign vectors, enumerated: p = #{|Σ s d| >= |Σ d|} / 2^n (with a tiny tolerance)."""
    obs = abs(sum(d))
    hits = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        if abs(sum(s * x for s, x in zip(signs, d))) >= obs - 1e-12:
            hits += 1
    return hits / 2 ** len(d)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_randomization_matches_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(0.15, 0.4, 12), 3)
    exact = _exact_sign_flip_p(d.tolist())
    B = 100_000
    p = float(S.randomization_test(d, permutations=B, seed=seed))
    se = math.sqrt(exact * (1 - exact) / B)
    assert abs(p - exact) < 5 * se + 2 / B
    assert p * (B + 1) == pytest.approx(round(p * (B + 1)))  # (b + 1) / (B + 1)


def test_randomization_plus_one_correction():
    # every difference positive and large: only the all-same-sign flips reach |T|, which 999 random
    # flips of 40 values essentially never hit, so b = 0 and p = 1 / (B + 1) exactly
    d = np.linspace(0.1, 0.5, 40)
    assert float(S.randomization_test(d, permutations=999, seed=0)) == 1 / 1000
    # all differences zero: every flip ties with the observed statistic, p = 1
    assert float(S.randomization_test(np.zeros(7), permutations=99)) == 1.0


def test_randomization_columns_are_independent_of_their_neighbours_and_chunking(monkeypatch):
    rng = np.random.default_rng(9)
    d = rng.normal(0.05, 0.3, (200, 4))
    d[rng.random(200) < 0.2, 2] = np.nan
    full = S.randomization_test(d, permutations=3000, seed=7)
    for j in range(4):
        assert float(S.randomization_test(d[:, j], permutations=3000, seed=7)) == full[j]
    monkeypatch.setattr(R, "CHUNK_ELEMENTS", 777)
    np.testing.assert_array_equal(S.randomization_test(d, permutations=3000, seed=7), full)
    assert not np.array_equal(S.randomization_test(d, permutations=3000, seed=8), full)


# --------------------------------------------------------------------------------------------------
# bootstrap
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "method"), [(12, "percentile"), (40, "percentile"), (40, "bca"), (3000, "percentile"), (300, "bca")]
)
def test_bootstrap_ci_matches_scipy_bootstrap(n, method):
    rng = np.random.default_rng(n)
    x = rng.exponential(0.3, n)
    ref = stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=4000,
        method="BCa" if method == "bca" else "percentile",
        rng=np.random.default_rng(42),
    )
    lo, hi = S.bootstrap_ci(x, resamples=4000, seed=42, method=method)
    assert lo == pytest.approx(ref.confidence_interval.low, rel=1e-9)
    assert hi == pytest.approx(ref.confidence_interval.high, rel=1e-9)


def test_resample_means_do_not_depend_on_chunking_or_neighbours(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.random((150, 3))
    x[:10, 1] = np.nan
    full = S.resample_means(x, resamples=500, seed=5)
    alone = S.resample_means(x[:, 1], resamples=500, seed=5)
    np.testing.assert_allclose(full[:, 1], alone[:, 0], rtol=1e-13)
    monkeypatch.setattr(R, "CHUNK_ELEMENTS", 1000)
    np.testing.assert_allclose(S.resample_means(x, resamples=500, seed=5), full, rtol=1e-13)


def test_bootstrap_with_na_resamples_queries_and_averages_the_defined_ones():
    rng = np.random.default_rng(17)
    x = rng.random(25)
    x[[2, 3, 11, 20]] = np.nan
    # oracle: draw the rows as scipy.stats.bootstrap does, average the defined values of each resample
    idx = np.random.default_rng(9).integers(0, 25, (2000, 25))
    drawn = x[idx]
    means = np.nanmean(drawn, axis=1)
    np.testing.assert_allclose(S.resample_means(x, resamples=2000, seed=9)[:, 0], means, rtol=1e-12)
    lo, hi = S.bootstrap_ci(x, resamples=2000, seed=9)
    assert (lo, hi) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), rel=1e-12)
    _, counts = S.resample_sums(x, resamples=2000, seed=9)
    np.testing.assert_array_equal(counts[:, 0], (~np.isnan(drawn)).sum(axis=1))
    # the jackknife of the mean over defined values: a NaN row leaves the mean unchanged
    jack = S.jackknife_means(x)
    v = x[~np.isnan(x)]
    assert jack[2] == pytest.approx(v.mean()) and jack[0] == pytest.approx((v.sum() - x[0]) / (v.size - 1))


def test_randomization_na_rows_do_not_count():
    rng = np.random.default_rng(2)
    d = np.round(rng.normal(0.2, 0.5, 10), 2)
    with_na = np.r_[d[:4], np.nan, d[4:], np.nan]
    exact = _exact_sign_flip_p(d.tolist())
    p = float(S.randomization_test(with_na, permutations=60_000, seed=1))
    assert abs(p - exact) < 5 * math.sqrt(exact * (1 - exact) / 60_000) + 1e-4


@pytest.mark.parametrize("dist", ["normal", "exponential"])
def test_bootstrap_ci_covers_true_mean_at_about_nominal_rate(dist):
    rng = np.random.default_rng(123)
    trials, n, hits = 300, 60, 0
    for i in range(trials):
        x = rng.normal(0.5, 0.2, n) if dist == "normal" else rng.exponential(0.5, n)
        lo, hi = S.bootstrap_ci(x, resamples=1000, seed=i)
        hits += lo <= 0.5 <= hi
    rate = hits / trials
    # nominal 95 %; the percentile interval undercovers slightly at n = 60 for skewed data
    assert 0.88 <= rate <= 0.99, rate


def test_bootstrap_test_tracks_the_t_test_and_is_uniform_under_the_null():
    rng = np.random.default_rng(8)
    d = rng.normal(0.08, 0.3, 120)
    p_boot = float(S.bootstrap_test(d, resamples=20000, seed=1))
    p_t = float(S.t_test(d)[1])
    assert abs(p_boot - p_t) < 0.01
    # under H0 about alpha of the tests reject
    rejections = 0
    for i in range(200):
        z = rng.normal(0, 1, 40)
        rejections += float(S.bootstrap_test(z, resamples=500, seed=i)) < 0.05
    assert 2 <= rejections <= 22


def test_bca_falls_back_when_every_resample_is_on_one_side():
    boot = np.linspace(1.0, 2.0, 100)
    lo, hi = S.bca_interval(boot, 0.5, np.array([0.4, 0.6]))
    assert (lo, hi) == tuple(S.percentile_interval(boot))


# --------------------------------------------------------------------------------------------------
# multiple comparisons
# --------------------------------------------------------------------------------------------------


def test_corrections_by_hand():
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted: 0.005 (#4), 0.01 (#1), 0.03 (#3), 0.04 (#2); m = 4
    # Holm: 4*0.005 = 0.02, 3*0.01 = 0.03, 2*0.03 = 0.06, 1*0.04 = 0.04 -> running max 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(S.adjust_pvalues(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    # Bonferroni: 4p capped at 1
    np.testing.assert_allclose(S.adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    # BH: m p / i = 0.02, 0.02, 0.04, 0.04 -> running min from the largest: 0.02, 0.02, 0.04, 0.04
    np.testing.assert_allclose(S.adjust_pvalues(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_array_equal(S.adjust_pvalues(p, "none"), p)
    # NaN is not in the family: m = 2
    np.testing.assert_allclose(S.adjust_pvalues(np.array([0.01, np.nan, 0.04]), "holm"), [0.02, np.nan, 0.04])
    # capping at 1 and BH's step-up
    # Holm, m = 2: sorted 0.5 -> 2 * 0.5 = 1.0, then 0.9 -> max(1.0, 0.9) = 1.0
    np.testing.assert_allclose(S.adjust_pvalues(np.array([0.9, 0.5]), "holm"), [1.0, 1.0])
    # 0.01 -> 2 * 0.01 = 0.02, then 0.6 -> max(0.02, 0.6) = 0.6
    np.testing.assert_allclose(S.adjust_pvalues(np.array([0.6, 0.01]), "holm"), [0.6, 0.02])
    np.testing.assert_allclose(S.adjust_pvalues(np.array([0.04, 0.045]), "bh"), [0.045, 0.045])


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_correction_invariants(ps):
    p = np.array(ps)
    holm, bonf, bh = (S.adjust_pvalues(p, k) for k in ("holm", "bonferroni", "bh"))
    for adj in (holm, bonf, bh):
        assert np.all(adj >= p - 1e-15) and np.all(adj <= 1.0)
        order = np.argsort(p, kind="stable")
        assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in the raw p-value
    assert np.all(bh <= holm + 1e-15) and np.all(holm <= bonf + 1e-15)


def test_bad_arguments():
    with pytest.raises(ConfigError, match="correction"):
        S.adjust_pvalues(np.array([0.1]), "sidak")
    with pytest.raises(ConfigError, match="permutations"):
        S.randomization_test(np.array([0.1, 0.2]), permutations=0)
    with pytest.raises(ConfigError, match="seed"):
        S.resample_means(np.array([0.1, 0.2]), seed=-1)
    with pytest.raises(ConfigError, match="confidence"):
        S.percentile_interval(np.array([0.1, 0.2]), 1.5)


# --------------------------------------------------------------------------------------------------
# determinism whatever the number of BLAS threads
# --------------------------------------------------------------------------------------------------

_THREADS_SCRIPT = """
import hashlib, numpy as np
from ctxeval import _stats as S
rng = np.random.default_rng(1)
x = rng.random((3000, 12)) * np.r_[np.ones(11), 500.0]  # one column of counts-like values
x[rng.random(x.shape) < 0.1] = np.nan
s, c = S.resample_sums(x, resamples=2000, seed=3)
p = S.randomization_test(x - np.nanmean(x, axis=0), permutations=2000, seed=3)
ci = S.bootstrap_ci(x, resamples=2000, seed=3, method="bca")
hits = np.floor(rng.random((3000, 4)) * 3) / 3  # few distinct rows: the counted-by-class paths
s2, c2 = S.resample_sums(hits, resamples=2000, seed=3)
p2 = S.randomization_test(hits[:, :2] - hits[:, 2:], permutations=2000, seed=3)
parts = (s, c, p, ci, s2, c2, p2)
print(hashlib.sha1(b"".join(a.tobytes() for a in parts)).hexdigest())
"""


def test_resampling_is_bit_identical_whatever_the_number_of_threads():
    # a multi-threaded BLAS splits a matrix product differently with more threads, and a float sum in
    # another order may differ in its last bit: the resampled sums must not depend on it
    import os
    import subprocess
    import sys

    outs = set()
    for threads in ("1", "2", "4"):
        env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
        outs.add(
            subprocess.run(
                [sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True, text=True, check=True
            ).stdout
        )
    assert len(outs) == 1, outs


def test_resampled_sums_are_exact_sums_of_the_drawn_values():
    # the sums equal an exact (math.fsum) sum of the drawn values up to the grid rounding of the
    # inputs: each of the n drawn values moves by at most half a step <= n max|x| 2^-52
    rng = np.random.default_rng(6)
    x = rng.random((400, 3)) * np.array([1.0, 1e-3, 800.0])
    x[rng.random(x.shape) < 0.2] = np.nan
    sums, counts = S.resample_sums(x, resamples=50, seed=2)
    idx = np.random.default_rng(2).integers(0, 400, (50, 400))
    for j in range(3):
        col = x[:, j]
        scale = np.nanmax(np.abs(col)) * 400
        for b in range(50):
            drawn = col[idx[b]]
            exact = math.fsum(drawn[~np.isnan(drawn)])
            assert abs(sums[b, j] - exact) <= 400 * 2.0**-52 * scale
            assert counts[b, j] == np.count_nonzero(~np.isnan(drawn))


def _plain_resampled(x: np.ndarray, d: np.ndarray, B: int, seed: int):
    """The resampled sums and the randomization p-values by their definitions, draw by draw."""
    n = x.shape[0]
    valid = ~np.isnan(x)
    xz = R.exact_grid(np.where(valid, x, 0.0))
    idx = np.random.default_rng(seed).integers(0, n, (B, n))
    sums, counts = xz[idx].sum(axis=1), valid[idx].sum(axis=1).astype(float)  # on the grid: exact in any order
    dv = ~np.isnan(d)
    dz = R.exact_grid(np.where(dv, d, 0.0))
    words = (n + 63) // 64
    raw = np.random.default_rng(seed).bit_generator.random_raw(B * words).astype("<u8")
    flips = np.unpackbits(raw.view(np.uint8).reshape(B, words * 8), axis=1, count=n, bitorder="little")
    signs = 1.0 - 2.0 * flips
    stat = (signs[:, :, None] * dz[None, :, :]).sum(axis=1)
    thresh = np.abs(dz.sum(axis=0)) - S.PERM_RTOL * np.abs(dz).sum(axis=0)
    p = ((np.abs(stat) >= thresh).sum(axis=0) + 1.0) / (B + 1.0)
    p[~dv.any(axis=0)] = np.nan
    return sums, counts, p


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 400),
    m=st.integers(1, 4),
    levels=st.sampled_from([0, 1, 2, 3, 7]),
    nan=st.sampled_from([0.0, 0.1, 0.6]),
    seed=st.integers(0, 2**20),
)
def test_fast_resampling_paths_give_the_plain_sums_bit_for_bit(n, m, levels, nan, seed):
    # few distinct rows (levels > 0: per-query hits and the like) take the counted-by-class paths,
    # continuous values (levels 0) the plain product; both must give the definitions' sums exactly
    rng = np.random.default_rng(seed)
    x = rng.random((n, m))
    if levels:
        x = np.floor(x * levels) / levels
    x[rng.random((n, m)) < nan] = np.nan
    d = x - (np.roll(x, 1, axis=1) if m > 1 else 0.5)
    B = 67
    sums, counts, p = _plain_resampled(x, d, B, seed)
    got_sums, got_counts = S.resample_sums(x, resamples=B, seed=seed)
    np.testing.assert_array_equal(got_sums, sums)
    np.testing.assert_array_equal(got_counts, counts)
    np.testing.assert_array_equal(S.randomization_test(d, permutations=B, seed=seed), p)


def test_int32_draws_are_the_int64_draws():
    # resample_sums draws int32 indices for speed: numpy must give the same numbers as the int64 draws
    # of scipy.stats.bootstrap (both come from 32-bit outputs when n < 2^32)
    for n in (1, 2, 3, 1000, 100_003, 2**31 - 1):
        a = np.random.default_rng(n).integers(0, n, (3, 50))
        b = np.random.default_rng(n).integers(0, n, (3, 50), dtype=np.int32)
        np.testing.assert_array_equal(a, b)
