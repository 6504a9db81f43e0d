"""The statistics under compare and the gate (numpy only; neither verb imports the other's modules).

* :mod:`.special`: the regularized incomplete beta function, Student's t and the normal distribution.
* :mod:`.resample`: bootstrap and sign-flip sums over queries, the same bits on any BLAS (the one
  random stream every resampling statistic draws from).
* :mod:`.paired`: two-sided paired tests per column of differences (randomization, t, Wilcoxon,
  studentized bootstrap).
* :mod:`.intervals`: bootstrap intervals of a mean (percentile, BCa) and the jackknife.
* :mod:`.adjust`: adjusted p-values over a family of tests (Holm, Bonferroni, Benjamini–Hochberg), an
  array or a mapping from any key.
* :mod:`.onesided`: the one-sided test of a drop beyond a tolerated one (t corrected for skewness).
* :mod:`.power`: its power, the queries a drop needs, the smallest drop a set catches.
* :mod:`.ppi`: prediction-powered means (a judge's values corrected by people's on a subset).

Each function takes arrays and returns arrays or a frozen result; the verbs hold the models and
``_render`` the text. The names below are the layer's interface.
"""

from __future__ import annotations

from .adjust import CORRECTION_NAMES, CORRECTIONS, adjust_family, adjust_pvalues
from .intervals import CI_METHODS, bca_interval, bootstrap_ci, jackknife_means, jackknife_sums, percentile_interval
from .onesided import Test, one_sided, skew_needs, skew_t
from .paired import (
    PERM_RTOL,
    TEST_NAMES,
    TESTS,
    bootstrap_test,
    randomization_test,
    studentized_p,
    t_test,
    wilcoxon_test,
)
from .power import detectable_drop, needed_queries, power_at, simulated_power
from .ppi import PPIArrays, PPIMean, ppi_arrays, ppi_mean, t_quantile
from .resample import exact_grid, flip_sums, resample_means, resample_sums, unique_masks
from .special import betainc, normal_cdf, normal_ppf, t_cdf, t_ppf, t_sf

__all__ = [
    "CI_METHODS",
    "CORRECTIONS",
    "CORRECTION_NAMES",
    "PERM_RTOL",
    "TESTS",
    "TEST_NAMES",
    "PPIArrays",
    "PPIMean",
    "Test",
    "adjust_family",
    "adjust_pvalues",
    "bca_interval",
    "betainc",
    "bootstrap_ci",
    "bootstrap_test",
    "detectable_drop",
    "exact_grid",
    "flip_sums",
    "jackknife_means",
    "jackknife_sums",
    "needed_queries",
    "normal_cdf",
    "normal_ppf",
    "one_sided",
    "percentile_interval",
    "power_at",
    "ppi_arrays",
    "ppi_mean",
    "randomization_test",
    "resample_means",
    "resample_sums",
    "simulated_power",
    "skew_needs",
    "skew_t",
    "studentized_p",
    "t_cdf",
    "t_ppf",
    "t_quantile",
    "t_sf",
    "t_test",
    "unique_masks",
    "wilcoxon_test",
]
