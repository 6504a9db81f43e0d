"""Labelling that stops when the decision is settled: its error at every look, and the labelled
queries it saves against the fixed-size plan of ``ctxeval power`` (a simulation, not a timed test).

    python bench/sequential.py [--aa 10000] [--reps 2000] [--seed 0]

Data: the real per-query nDCG@10 changes between the runs of TREC DL 2019 and 2020 (the 10 rank_llm
runs of each, NIST qrels, ``../shared/data/real/dl19`` and ``dl20``): every ordered pair of runs of a
year, its per-query changes (candidate − baseline) the population queries are drawn from, with
replacement, in random order.

1. **Error at every look** (``--aa`` A/A comparisons): a pair drawn at random, each change's sign
   flipped by a coin (the candidate is the baseline in distribution: true mean change 0), 200 queries
   in random order; the compare rule (level alpha 0.05) and the gate's rule (tolerated drop 0: a
   "fail" is the error) decide at every look. Printed: the share of comparisons that had decided
   wrongly by look n, its largest value over n = 1 .. 200 (the error at the worst stopping time; a
   procedure valid at every look keeps it at most alpha), and the 99 % Clopper-Pearson upper bound.
   Beside it, the same for the fixed-size t-test looked at after every query (the naive alternative).
2. **Queries saved at power 0.8**: for every ordered pair, the plan ``ctxeval power`` gives (the
   fewest queries with which the gate's one-sided t-test catches a drop of ``--drop`` (0.02, its
   default) with probability 0.8 at alpha 0.05, the standard deviation observed on the pair) against
   the queries the sequential gate labels before it settles (it stops at twice the plan's queries at
   most): its mean over ``--reps`` draws, the share of correct decisions (fail when the candidate is
   worse, pass when it is better), and its power at a drop of exactly ``--drop`` (the pair's changes
   shifted to a mean of -drop): the design point, where it must keep 0.8 too.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import ctxeval
from ctxeval._stats.power import needed_queries
from ctxeval._stats.sequential import Rule, first_decision
from ctxeval._stats.special import t_ppf

REAL = next(
    (b / "shared" / "data" / "real" for b in (ROOT.parent, ROOT.parent.parent) if (b / "shared").is_dir()),
    ROOT.parent / "shared" / "data" / "real",
)


def changes() -> list[tuple[str, str, str, np.ndarray]]:
    out = []
    for year in ("dl19", "dl20"):
        qrels = sorted(glob.glob(str(REAL / year / "qrels*")))[0]
        runs = sorted(glob.glob(str(REAL / year / "runs" / "*.txt")))
        named = [f"{Path(p).name.split('.')[0]}={p}" for p in runs]
        res = ctxeval.evaluate(qrels, named, ["nDCG@10"])
        per = {r.name: r.per_query("nDCG@10") for r in res.runs}
        for a, b in itertools.permutations(sorted(per), 2):
            qs = sorted(set(per[a]) & set(per[b]))
            out.append((year, a, b, np.array([per[b][q] - per[a][q] for q in qs])))
    return out


def clopper_upper(k: int, n: int, conf: float = 0.99) -> float:
    """The upper end of the one-sided Clopper-Pearson interval (bisection on the binomial tail)."""
    if k >= n:
        return 1.0
    lo, hi = k / n, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        tail = sum(
            math.exp(
                math.lgamma(n + 1)
                - math.lgamma(i + 1)
                - math.lgamma(n - i + 1)
                + i * math.log(mid)
                + (n - i) * math.log1p(-mid)
            )
            for i in range(k + 1)
        )
        lo, hi = (mid, hi) if tail > 1 - conf else (lo, mid)
    return hi


def aa(pairs: list, n_aa: int, rng: np.random.Generator, looks: int = 200) -> None:
    pick = rng.integers(0, len(pairs), n_aa)
    draws = np.empty((n_aa, looks))
    for i, p in enumerate(pick):
        d = pairs[p][3]
        draws[i] = d[rng.integers(0, d.size, looks)] * rng.choice([-1.0, 1.0], looks)
    print(f"1. error at every look: {n_aa} A/A comparisons of real DL19/DL20 changes, {looks} queries each")
    for name, rule in (("compare (two-sided)", Rule("compare", 0.05)), ("gate, max-drop 0", Rule("gate", 0.05))):
        stop, code = first_decision(draws, rule, tuned_for=looks / 2)
        wrong = (code == -1) | (code == 1) if rule.kind == "compare" else code == -1
        by = np.array([np.count_nonzero(wrong & (stop <= n)) for n in range(1, looks + 1)])
        worst = int(by.max())
        print(
            f"   {name:<22} sequential: wrong by look n at most {worst / n_aa:.4f} (n = 1..{looks}; 99% upper "
            f"{clopper_upper(worst, n_aa):.4f}) <= alpha 0.05: {worst / n_aa <= 0.05}"
        )
    # the naive alternative: the fixed plan's t-test read after every query from the 2nd on
    n = np.arange(1, looks + 1)
    mean = np.cumsum(draws, axis=1) / n
    sd = np.sqrt(np.maximum(np.cumsum(draws**2, axis=1) - n * mean**2, 0) / np.maximum(n - 1, 1))
    crit = np.array([t_ppf(0.975, k - 1) if k > 1 else np.inf for k in n])
    with np.errstate(divide="ignore", invalid="ignore"):
        hit = (np.abs(mean) / (sd / np.sqrt(n)) > crit) & (sd > 0)
    print(
        f"   {'t-test at every look':<22} wrong by look {looks}: {hit.any(axis=1).mean():.4f} (not valid at every look)"
    )


def savings(pairs: list, reps: int, drop: float, rng: np.random.Generator) -> None:
    print(
        f"2. queries labelled at power 0.8: the sequential gate (max-drop 0) against ctxeval power's plan "
        f"(--drop {drop}, alpha 0.05, power 0.8), {reps} draws per ordered pair"
    )
    total_plan = total_seq = 0.0
    correct = power_design = []
    correct, power_design = [], []
    rows = []
    for year, a, b, d in pairs:
        sd = float(d.std(ddof=1))
        plan = needed_queries(sd, drop, 0.0, 0.05, 0.8)
        if plan is None:
            continue
        cap = 2 * plan
        rule = Rule("gate", 0.05)
        x = d[rng.integers(0, d.size, (reps, cap))]
        stop, code = first_decision(x, rule, tuned_for=plan)
        n_seq = np.minimum(stop, cap)
        truth = -1 if d.mean() < 0 else 1
        right = float(np.mean(code == truth))
        shifted = (d - d.mean() - drop)[rng.integers(0, d.size, (reps, cap))]
        _, code_d = first_decision(shifted, rule, tuned_for=plan)
        pd = float(np.mean(code_d == -1))
        total_plan += plan
        total_seq += float(n_seq.mean())
        correct.append(right)
        power_design.append(pd)
        rows.append((year, a, b, d.mean(), sd, plan, float(n_seq.mean()), right, pd))
    rows.sort(key=lambda r: r[5])
    print(
        f"   {'year':<5}{'baseline':<26}{'candidate':<26}{'change':>8}{'sd':>7}{'plan':>6}{'seq':>8}{'right':>7}{'power@drop':>11}"
    )
    for r in rows[:: max(1, len(rows) // 20)]:
        print(
            f"   {r[0]:<5}{r[1]:<26}{r[2]:<26}{r[3]:>+8.3f}{r[4]:>7.3f}{r[5]:>6}{r[6]:>8.1f}{r[7]:>7.1%}{r[8]:>11.1%}"
        )
    print(
        f"   over {len(rows)} ordered pairs: ctxeval power plans {total_plan:.0f} labelled queries, the sequential gate "
        f"labels {total_seq:.0f} on average: {1 - total_seq / total_plan:.1%} fewer; correct decisions "
        f"{np.mean(correct):.1%} (lowest pair {min(correct):.1%}); power at a drop of exactly {drop}: lowest pair "
        f"{min(power_design):.1%}, mean {np.mean(power_design):.1%}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aa", type=int, default=10000)
    ap.add_argument("--reps", type=int, default=2000)
    ap.add_argument("--drop", type=float, default=0.02)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (REAL / "dl19").is_dir():
        sys.exit(f"no real data at {REAL}: this benchmark reads ../shared/data/real (see its README)")
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    pairs = changes()
    aa(pairs, args.aa, rng)
    savings(pairs, args.reps, args.drop, rng)
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
