"""The gate's false-alarm rate (its size) on skewed per-query changes, per skew band: real TREC DL19/DL20
changes and generated ones, the gate's skew-corrected test beside the plain paired t-test.

    python bench/gate_size.py [--sims 10000] [--seed 0] [--data ../shared/data/real] [--bootstrap]

The question. ``ctxeval gate`` promises that a candidate no worse than the baseline (beyond the tolerated
drop) fails with probability about alpha. A test of a mean reaches its level only approximately, and the
approximation degrades with the skew of the per-query changes: right-skewed changes (a few queries
gain a lot) make the one-sided t-test of a drop fail too often. This measures by how much, per skew band.

Real changes. ``--data`` (default: ``../shared/data/real`` beside the repository, or ``$CTXEVAL_SHARED``)
holds the TREC DL 2019 and 2020 passage qrels and 10 real runs each (5 first-stage retrievers and their
RankVicuna rerankings; 43 and 54 judged queries). nDCG@10 per query is computed by ctxeval. For every
ordered pair (baseline, candidate) of the 10 runs (90 per year), d = candidate − baseline per query, its
sample skewness g1 = m3 / m2^1.5, and the changes re-centred at the margin, d − mean(d) − δ (δ = 0.02):
a population whose candidate is exactly at the tolerated drop, the null hypothesis's boundary, where a
test's false-alarm rate is largest. Each simulation draws n queries from it with replacement (n = the
year's number of queries, and 200) and runs the test; the share that fail is the size.

Generated changes. Finite populations of 200,000 changes with a chosen skewness, shaped like IR
changes: a share of exact ties (0), the rest a gamma variable centred, scaled to sd 0.15, clipped to
[-1, 1] and mirrored for negative skew, then re-centred at the margin as above; n = 43 and 200.

Tests, one-sided at alpha 0.05, failing when p < alpha:

* **gate**: the gate's own test (``ctxeval._stats.onesided.skew_t``: the t-test corrected for skewness by
  Hall's transformation, Hall 1992), called on the simulated samples as the gate calls it.
* **t-test**: the plain one-sided paired t-test, p = P(T_{n-1} <= (mean + δ) / (s/√n)).
* **bootstrap-t** (``--bootstrap``, slow: 999 resamples per sample, on every 6th pair and a tenth of the
  samples, so noisier): the studentized
  bootstrap, failing when t falls below the 5 % quantile of the resampled t* (Efron & Tibshirani 1993).

The report: per skew band, the number of pairs and the mean and largest size over its pairs, for each
test and n; the pooled size; the power of each test at a drop that the t-test catches about 80 % of the
time (the same populations shifted down by 2.5 sd/√n), so that a smaller size is not bought with power;
and the share of pairs the gate warns about (right skew beyond n > 28 + 25 g1²) with their sizes.
The simulation noise of one pair's size is ±{1.96 sqrt(0.05 · 0.95 / sims)} (±0.4 points at 10,000).
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import ctxeval
from ctxeval._stats.onesided import skew_needs, skew_t
from ctxeval._stats.special import t_ppf, t_sf

ALPHA = 0.05
MARGIN = 0.02
BANDS = ((-math.inf, -1.0), (-1.0, -0.5), (-0.5, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, math.inf))
YEARS = {"dl19": "qrels.dl19-passage.txt", "dl20": "qrels.dl20-passage.txt"}


def find_data(given: str | None) -> Path | None:
    for base in (given, os.environ.get("CTXEVAL_SHARED") and Path(os.environ["CTXEVAL_SHARED"]) / "data" / "real",
                 ROOT.parent / "shared" / "data" / "real", ROOT.parent.parent / "shared" / "data" / "real"):  # fmt: skip
        if base and (Path(base) / "dl19" / "runs").is_dir():
            return Path(base)
    return None


def real_pairs(data: Path) -> list[tuple[str, np.ndarray]]:
    """(label, per-query nDCG@10 changes) for every ordered pair of runs of each year."""
    out = []
    for year, qrels in YEARS.items():
        runs = sorted((data / year / "runs").glob("*.txt"))
        res = ctxeval.evaluate(str(data / year / qrels), [str(r) for r in runs], ["nDCG@10"])
        vals = {r.name.split(".")[0]: np.asarray(rr.values[res.measures[0]]) for r, rr in zip(runs, res.runs)}
        for a, b in itertools.permutations(vals, 2):
            d = vals[b] - vals[a]
            out.append((f"{year} {a} -> {b}", d[~np.isnan(d)]))
    return out


def generated_pairs(rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """Populations of changes with a chosen skewness (see the module docstring)."""
    out = []
    for skew in (-2.5, -1.5, -0.75, -0.25, 0.25, 0.75, 1.5, 2.5):
        for ties in (0.0, 0.3):
            k = 4.0 / (skew * skew)  # a gamma variable of shape k has skewness 2/√k
            x = rng.gamma(k, 1.0, 200_000)
            x = (x - k) / math.sqrt(k) * 0.15 * math.copysign(1.0, skew)
            x[rng.random(x.size) < ties] = 0.0
            out.append((f"gamma skew {skew:+g}, {ties:.0%} ties", np.clip(x, -1.0, 1.0)))
    return out


def skewness(d: np.ndarray) -> float:
    c = d - d.mean()
    m2 = float((c * c).mean())
    return float((c**3).mean()) / m2**1.5 if m2 > 0 else 0.0


def t_test_p(x: np.ndarray, margin: float) -> np.ndarray:
    """The plain one-sided paired t-test of each row (lower tail)."""
    n = x.shape[1]
    mean, sd = x.mean(axis=1), x.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (mean + margin) / (sd / math.sqrt(n))
    t = np.where(sd > 0, t, np.where(mean + margin < 0, -np.inf, np.inf))
    half = 0.5 * t_sf(t, np.full(t.shape, n - 1.0))
    return np.where(t < 0, half, 1.0 - half)


def bootstrap_t_rejects(x: np.ndarray, margin: float, rng: np.random.Generator, resamples: int = 999) -> np.ndarray:
    n = x.shape[1]
    out = np.zeros(x.shape[0], dtype=bool)
    for i, v in enumerate(x):
        mean, sd = v.mean(), v.std(ddof=1)
        if sd == 0:
            out[i] = mean + margin < 0
            continue
        w = v[rng.integers(0, n, (resamples, n))]
        sw = w.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            ts = np.where(sw > 0, (w.mean(axis=1) - mean) / (sw / math.sqrt(n)), 0.0)
        out[i] = (mean + margin) / (sd / math.sqrt(n)) < np.quantile(ts, ALPHA)
    return out


def rates(d: np.ndarray, n: int, sims: int, rng: np.random.Generator, boot: bool) -> dict[str, float]:
    """Size and power of each test on samples of n drawn from the changes ``d``."""
    centred = d - d.mean() - MARGIN
    sd = float(d.std(ddof=1))
    shift = 2.5 * sd / math.sqrt(n)  # about 80 % power for the t-test (t_0.95 + z_0.8 = 2.5 at n ~ 50)
    out = {}
    for what, pop in (("size", centred), ("power", centred - shift)):
        x = pop[rng.integers(0, pop.size, (sims, n))]
        out[f"gate {what}"] = float(np.mean(skew_t(x, MARGIN)[4] < ALPHA))
        out[f"t-test {what}"] = float(np.mean(t_test_p(x, MARGIN) < ALPHA))
        if boot:
            out[f"bootstrap-t {what}"] = float(np.mean(bootstrap_t_rejects(x[: max(1, sims // 10)], MARGIN, rng)))
    return out


def _kind(n: int) -> str:
    """The sizes simulated: each set's own number of queries, and 200."""
    return "own" if n < 100 else str(n)


def band_of(g: float) -> str:
    for lo, hi in BANDS:
        if lo <= g < hi:
            return f"[{lo:g}, {hi:g})".replace("inf", "∞")
    return "?"


def report(title: str, rows: list[tuple[str, float, int, dict[str, float]]], tests: list[str]) -> None:
    """One table: per skew band and size n, each test's mean (largest) size over the band's pairs."""
    print(f"\n### {title}\n")
    sizes = sorted({_kind(n) for _, _, n, _ in rows}, key=lambda k: (k != "own", k))
    head = " | ".join(f"{t} size, n={n}" for n in sizes for t in tests)
    print(f"| skewness g1 | pairs | {head} |")
    print("|---|---:|" + "---:|" * (len(sizes) * len(tests)))
    for lo, hi in (*BANDS, (-math.inf, math.inf)):
        cells, count = [], 0
        for n in sizes:
            sel = [r for _, g, m, r in rows if _kind(m) == n and lo <= g < hi and f"{tests[-1]} size" in r]
            count = len(sel)
            for t in tests:
                v = [r[f"{t} size"] for r in sel]
                cells.append(f"{np.mean(v):.1%} ({np.max(v):.1%})" if v else "")
        name = "all" if math.isinf(lo) and math.isinf(hi) else band_of(lo if math.isfinite(lo) else -9.0)
        if count:
            print(f"| {name} | {count} | " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sims", type=int, default=10_000, help="simulated samples per pair and size")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default=None, help="the folder holding dl19/ and dl20/ (../shared/data/real)")
    ap.add_argument("--bootstrap", action="store_true", help="also the studentized bootstrap (slow)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    tests = ["gate", "t-test"] + (["bootstrap-t"] if args.bootstrap else [])
    print(
        f"alpha {ALPHA}, margin {MARGIN}, {args.sims:,} simulated samples per pair and size, seed {args.seed}; "
        f"cells: mean size over the band's pairs (largest); noise of one pair's size ±{1.96 * math.sqrt(ALPHA * (1 - ALPHA) / args.sims):.2%}"
    )
    data = find_data(args.data)
    sets = []
    if data is None:
        print("\n(no real runs: ../shared/data/real is absent; give --data DIR)")
    else:
        sets.append(("real TREC DL19/DL20 nDCG@10 changes, every ordered pair of 10 runs", real_pairs(data), True))
    sets.append(("generated skewed changes (gamma, with and without ties)", generated_pairs(rng), False))
    for title, pairs, own_n in sets:
        rows = []
        for i, (label, d) in enumerate(pairs):
            g = skewness(d)
            for n in ((d.size if own_n else 43), 200):
                r = rates(d, n, args.sims, rng, args.bootstrap and i % 6 == 0)
                rows.append((label, g, n, r))
        report(title + " (n=own: 43 DL19, 54 DL20)" if own_n else title + " (n=own: 43)", rows, ["gate", "t-test"])
        if args.bootstrap:
            report(title + ": every 6th pair, with the studentized bootstrap", rows, tests)
        print("\npower at a drop the t-test catches about 80 % of the time (mean over pairs):")
        for n_kind in ("own", 200):
            sel = [r for _, _, n, r in rows if (n < 100) == (n_kind == "own")]
            cells = ", ".join(f"{t} {np.mean([r[f'{t} power'] for r in sel if f'{t} power' in r]):.1%}" for t in tests)
            print(f"  n={n_kind}: {cells}")
        warned = [(g, n, r) for _, g, n, r in rows if n < 100 and g > 0 and n < skew_needs(g)]
        rest = [(g, n, r) for _, g, n, r in rows if n < 100 and not (g > 0 and n < skew_needs(g))]
        if warned:
            print(
                f"the gate warns (right skew, n < 28 + 25 g1^2) on {len(warned)} of {len(warned) + len(rest)} pairs at n=own: "
                f"their gate size {np.mean([r['gate size'] for *_, r in warned]):.1%} "
                f"(largest {np.max([r['gate size'] for *_, r in warned]):.1%}); the others "
                f"{np.mean([r['gate size'] for *_, r in rest]):.1%} (largest {np.max([r['gate size'] for *_, r in rest]):.1%})"
            )
    print(f"\n{time.perf_counter() - t0:.0f} s; t_0.95 at 42 df {t_ppf(0.95, 42):.4f}")


if __name__ == "__main__":
    main()
