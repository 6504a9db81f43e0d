"""The statistics of one table of a comparison: every run's summaries with CIs, and every comparison
with the baseline, tested and corrected (see :mod:`.compare` for the rules)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _stats as S
from .._evaluate import aggregate
from .._measures import Measure
from .._stats.summary import GM_FLOOR, forward, jackknife, resampled
from .model import Block, Comparison, RunSummary
from .settings import Stats

__all__ = ["GM_FLOOR", "TIE_TOL", "block"]

TIE_TOL = 1e-12


def _forward(m: Measure, x: np.ndarray) -> np.ndarray:
    """Values on the scale the summary averages (see :mod:`ctxeval._stats.summary`)."""
    return forward(m.spec.aggregate, x)


def _resampled(m: Measure, sums: np.ndarray, means: np.ndarray, c: int) -> np.ndarray:
    return resampled(m.spec.aggregate, sums[:, c], means[:, c])


def _jackknife(m: Measure, col: np.ndarray) -> np.ndarray:
    return jackknife(m.spec.aggregate, col)


class _Columns:
    """Columns of transformed per-query values for one bootstrap call, deduplicated by (run, measure,
    rows used)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.cols: list[np.ndarray] = []
        self.index: dict[tuple[Any, ...], int] = {}

    def add(self, key: tuple[Any, ...], mask: np.ndarray, values: np.ndarray) -> int:
        k = (*key, mask.tobytes())
        if k not in self.index:
            col = np.full(self.n, np.nan)
            col[mask] = values[mask]
            self.index[k] = len(self.cols)
            self.cols.append(col)
        return self.index[k]

    def matrix(self) -> np.ndarray:
        return np.column_stack(self.cols) if self.cols else np.zeros((self.n, 0))


class _Intervals:
    """Confidence intervals asked for one by one and computed together: every percentile interval of
    a column without undefined resamples comes from one ``np.quantile`` over the stacked columns
    (the same numbers as column by column)."""

    def __init__(self, cfg: Stats) -> None:
        self.cfg = cfg
        self.items: list[tuple[np.ndarray, float, np.ndarray | None]] = []

    def add(self, boot: np.ndarray, estimate: float, jack: np.ndarray | None) -> int:
        self.items.append((boot, estimate, jack))
        return len(self.items) - 1

    def resolve(self) -> list[tuple[float, float] | None]:
        cfg = self.cfg
        out: list[tuple[float, float] | None] = [None] * len(self.items)
        batch = []
        for i, (boot, estimate, jack) in enumerate(self.items):
            if boot.size == 0 or math.isnan(estimate) or np.isnan(boot).all():
                continue
            if cfg.ci == "bca":
                lo, hi = S.bca_interval(boot, estimate, jack, cfg.confidence)  # type: ignore[arg-type]
            elif np.isnan(boot).any():
                lo, hi = S.percentile_interval(boot, cfg.confidence)
            else:
                batch.append(i)
                continue
            out[i] = (float(lo), float(hi))
        if batch:
            alpha = (1.0 - cfg.confidence) / 2.0
            q = np.quantile(np.column_stack([self.items[i][0] for i in batch]), [alpha, 1.0 - alpha], axis=0)
            for k, i in enumerate(batch):
                out[i] = (float(q[0, k]), float(q[1, k]))
        return out


def block(
    values: np.ndarray,
    present: np.ndarray,
    rows: np.ndarray,
    names: list[str],
    measures: list[Measure],
    bases: list[int],
    cfg: Stats,
    tick: Any,
) -> Block:
    """Summaries, CIs, tests and corrections over the queries ``rows`` of the union query index: every
    run against each baseline of ``bases`` (a baseline against a later one once, as the later one's
    comparison with it), or every pair (``cfg.pairs == "all"``); the p-values of all of them adjusted
    as one family."""
    R = len(names)
    n = rows.size
    V = values[:, rows, :]  # (R, n, M)
    P = present[:, rows]  # (R, n)
    cols = _Columns(n)
    run_cols: dict[tuple[int, int], int] = {}
    for r in range(R):
        for j, m in enumerate(measures):
            x = V[r, :, j]
            mask = P[r] & ~np.isnan(x)
            run_cols[(r, j)] = cols.add((r, j), mask, _forward(m, x))
    pairs: list[tuple[int, int, np.ndarray, int, int, int, int, int, int]] = []
    if cfg.pairs == "all":  # every pair once, the later run against the earlier one
        order = [(r, b) for r in range(R) for b in range(r)]
    else:  # each run against each baseline; two baselines are compared once
        order = [(r, b) for k, b in enumerate(bases) for r in range(R) if r != b and r not in bases[:k]]
    named = cfg.pairs == "all" or len(bases) > 1  # comparisons name the run they are against
    for r, b in order:
        for j, m in enumerate(measures):
            xr, xb = V[r, :, j], V[b, :, j]
            both = P[r] & P[b]
            mask = both & ~np.isnan(xr) & ~np.isnan(xb)
            dropped = int((both & ~mask).sum())
            ir = cols.add((r, j), mask, _forward(m, xr))
            ib = cols.add((b, j), mask, _forward(m, xb))
            i_d = i_d2 = -1
            if cfg.test == "bootstrap":
                d = _forward(m, xr) - _forward(m, xb)
                i_d = cols.add(("d", r, b, j), mask, d)
                i_d2 = cols.add(("d2", r, b, j), mask, d * d)
            pairs.append((r, j, mask, dropped, ir, ib, i_d, i_d2, b))
    X = cols.matrix()
    sums, counts = S.resample_sums(X, resamples=cfg.resamples, seed=cfg.seed, progress=tick)
    with np.errstate(invalid="ignore", divide="ignore"):  # every column's resampled means at once
        means = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)

    ivs = _Intervals(cfg)
    summaries = []
    asked: list[tuple[dict[Measure, Any], Measure, int]] = []
    for r in range(R):
        agg: dict[Measure, float] = {}
        valid: dict[Measure, int] = {}
        ci: dict[Measure, tuple[float, float] | None] = {}
        for j, m in enumerate(measures):
            x = V[r, :, j][P[r]]
            mean, k = aggregate(m, x)
            agg[m], valid[m] = mean, k
            c = run_cols[(r, j)]
            ci[m] = None
            if k:
                jack = _jackknife(m, X[:, c]) if cfg.ci == "bca" else None
                asked.append((ci, m, ivs.add(_resampled(m, sums, means, c), mean, jack)))
        summaries.append(RunSummary(names[r], agg, valid, ci))

    # tests
    D = np.full((n, len(pairs)), np.nan)
    for i, (r, j, mask, *_rest) in enumerate(pairs):
        m = measures[j]
        D[mask, i] = (_forward(m, V[r, :, j]) - _forward(m, V[pairs[i][8], :, j]))[mask]
    if not pairs:
        p = np.zeros(0)
    elif cfg.test == "randomization":
        p = np.atleast_1d(S.randomization_test(D, permutations=cfg.permutations, seed=cfg.seed, progress=tick))
    elif cfg.test == "t":
        p = np.atleast_1d(S.t_test(D)[1])
    elif cfg.test == "wilcoxon":
        p = np.atleast_1d(S.wilcoxon_test(D)[1])
    else:
        p = np.full(len(pairs), np.nan)
        for i, pr in enumerate(pairs):
            mask = pr[2]
            if mask.any():
                p[i] = S.studentized_p(sums[:, pr[6]], sums[:, pr[7]], counts[:, pr[6]], D[mask, i])
    if cfg.test in ("t", "wilcoxon") and tick:
        tick(1.0)
    p_adj = S.adjust_pvalues(p, cfg.correction) if p.size else p

    comparisons = []
    diff_ci: list[int] = []
    for i, pr in enumerate(pairs):
        r, j, mask, dropped, ir, ib = pr[:6]
        b_run = pr[8]
        m = measures[j]
        k = int(mask.sum())
        xr, xb = V[r, :, j][mask], V[b_run, :, j][mask]
        mean_r, _ = aggregate(m, xr)
        mean_b, _ = aggregate(m, xb)
        diff = mean_r - mean_b if k else math.nan
        if k:
            b = _resampled(m, sums, means, ir) - _resampled(m, sums, means, ib)
            jack = _jackknife(m, X[:, ir]) - _jackknife(m, X[:, ib]) if cfg.ci == "bca" else None
            diff_ci.append(ivs.add(b, diff, jack))
        else:
            diff_ci.append(-1)
        raw = xr - xb
        up, down = int((raw > TIE_TOL).sum()), int((raw < -TIE_TOL).sum())
        wins, losses = (up, down) if m.spec.higher_is_better else (down, up)
        pa = float(p_adj[i])
        comparisons.append(
            Comparison(
                names[r],
                m,
                mean_r,
                mean_b,
                diff,
                None,  # the interval, filled in below
                float(p[i]),
                pa,
                bool(not math.isnan(pa) and pa < cfg.alpha),
                wins,
                k - wins - losses,
                losses,
                k,
                dropped,
                names[b_run] if named else None,
            )
        )
    done = ivs.resolve()
    for ci, m, at in asked:
        ci[m] = done[at]
    for cmp, at in zip(comparisons, diff_ci):
        cmp.ci = done[at] if at >= 0 else None
    return Block(n, summaries, comparisons)
