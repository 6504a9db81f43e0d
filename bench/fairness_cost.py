"""AWRF next to its references: ctxeval's ``AWRF-FRT`` beside FairRankTune 0.0.7's ``Metrics.AWRF`` (the
same numbers), and ctxeval's ``AWRF`` (the TREC Fair Ranking track's) beside that definition written out
query by query with scipy's Jensen-Shannon distance (the way the track's code computes it, per ranking;
the track's own code is a notebook package, not installable), wall time side by side in one run and the
largest per-query difference.

    python bench/fairness_cost.py [--queries N] [--depth D] [--docs N]

Synthetic data, seeded, written to a temporary folder: N queries of D ranked docs (distinct scores)
drawn from a corpus of ``--docs`` docs, 20 judged docs a query (grades 0-2), each doc in one of six
groups (FairRankTune gives an item one group). ctxeval pays what a user pays in one call: reading the
qrels, the run and the group file and computing every query (``evaluate``); the references are given the
rankings and labels already in memory (their reading is not timed), one call per query.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import ctxeval


def generate(folder: Path, n_q: int, depth: int, n_docs: int) -> tuple[dict, dict, dict]:
    rng = np.random.default_rng(2021)
    group = {f"d{i}": f"g{g}" for i, g in enumerate(rng.integers(0, 6, n_docs))}
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[str]] = {}
    with open(folder / "run.txt", "w") as r, open(folder / "qrels.txt", "w") as q:
        for i in range(n_q):
            docs = [f"d{j}" for j in rng.choice(n_docs, depth, replace=False)]
            run[f"q{i}"] = docs
            r.write("".join(f"q{i} Q0 {d} {k + 1} {depth - k} bench\n" for k, d in enumerate(docs)))
            judged = {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(n_docs, 20, replace=False)}
            judged.update(dict.fromkeys(docs[:: max(depth // 5, 1)], 1))  # some relevant docs retrieved
            qrels[f"q{i}"] = judged
            q.write("".join(f"q{i} 0 {d} {g}\n" for d, g in judged.items()))
    with open(folder / "groups.txt", "w") as g:
        g.write("".join(f"{d} {lv}\n" for d, lv in group.items()))
    return qrels, run, group


def frt_values(run: dict, group: dict, p: float) -> dict[str, float]:
    import pandas as pd
    from FairRankTune import Metrics

    out = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for q, ranking in run.items():
            items = {d: group[d] for d in ranking}
            out[q] = float(Metrics.AWRF(pd.DataFrame({"r": ranking}), items, p, "MinMaxRatio")[0])
    return out


def track_values(qrels: dict, run: dict, group: dict) -> dict[str, float]:
    from scipy.spatial.distance import jensenshannon

    names = sorted(set(group.values()))
    at = {g: i for i, g in enumerate(names)}
    out = {}
    for q, ranking in run.items():
        disc = 1.0 / np.log2(np.maximum(np.arange(1, len(ranking) + 1), 2))
        P = np.zeros(len(names))
        np.add.at(P, [at[group[d]] for d in ranking], disc)
        rel = [d for d, g in qrels[q].items() if g >= 1 and d in group]
        Q = np.bincount([at[group[d]] for d in rel], minlength=len(names)).astype(float)
        dist = jensenshannon(P, Q)
        out[q] = 1.0 - dist * dist
    return out


def gap(a: dict[str, float], b: dict[str, float]) -> float:
    return max((abs(a[q] - b[q]) for q in a if not (math.isnan(a[q]) and math.isnan(b[q]))), default=0.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--depth", type=int, default=500)
    ap.add_argument("--docs", type=int, default=200_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        qrels, run, group = generate(folder, args.queries, args.depth, args.docs)
        files = [str(folder / n) for n in ("qrels.txt", "run.txt")]
        rag = {"fair_groups": str(folder / "groups.txt")}
        rows = []
        t = time.perf_counter()
        ours = ctxeval.evaluate(*files, ["AWRF-FRT(p=0.5)"], rag=rag).runs[0].per_query("AWRF-FRT(p=0.5)")
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        theirs = frt_values(run, group, 0.5)
        rows.append(("AWRF-FRT(p=0.5) (FairRankTune 0.0.7)", t_ours, time.perf_counter() - t, gap(ours, theirs)))
        t = time.perf_counter()
        ours = ctxeval.evaluate(*files, ["AWRF"], rag=rag).runs[0].per_query("AWRF")
        t_ours = time.perf_counter() - t
        t = time.perf_counter()
        theirs = track_values(qrels, run, group)
        rows.append(("AWRF (the track's, per query + scipy)", t_ours, time.perf_counter() - t, gap(ours, theirs)))
        t = time.perf_counter()
        ctxeval.evaluate(*files, ["AWRF", "AWRF@10", "nDCG-AWRF@500", "AWRF(p=0.5)"], rag=rag)
        rows.append(("AWRF, AWRF@10, nDCG-AWRF@500, AWRF(p=0.5)", time.perf_counter() - t, math.nan, math.nan))
    print(f"{args.queries:,} queries x {args.depth:,} ranked docs; {args.docs:,} labelled docs; cores {os.cpu_count()}")
    print(f"{'':46}{'ctxeval s':>10}{'peer s':>10}{'ratio':>8}{'max |diff|':>12}")
    for name, a, b, d in rows:
        peer = f"{b:10.2f}{a / b:8.3f}{d:12.2e}" if not math.isnan(b) else ""
        print(f"{name:46}{a:10.2f}{peer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
