"""Cost of the set-based RAG measures next to nDCG's, on the synthetic benchmark data.

    python bench/rag_cost.py --scale M [L]

Loads the qrels and run once, prepares them (grades 0-3 mapped onto the 1-5 utility scale with the
``trec-dl`` preset; the run is its own retrieval pool), then times each measure's kernel
over every query, first call on the prepared data (per-query tables that several RAG measures share
are built by the first that needs them). Also times the preparation with and without the RAG extras (grade map, pool).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import ctxeval
from ctxeval._measures import parse_measure
from ctxeval._session import prepare

MEASURES = [
    "nDCG@10",
    "AP",
    "RA-nWG@10",
    "N-Recall4+@10",
    "N-Recall5@10",
    "Precision4+@10",
    "Harm@10",
    "GoldHit@10",
    "PROC@10",
    "%PROC@10",
    "PROC(of=N-Recall4+)@10",
]


def best(fn, repeat: int = 3) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", nargs="+", default=["M"])
    ap.add_argument("--data", default=str(HERE / "data"))
    args = ap.parse_args()
    for scale in args.scale:
        d = Path(args.data) / scale
        qrels = ctxeval.Qrels.from_file(d / "qrels.txt")
        run = ctxeval.Run.from_file(d / "run.txt")
        measures = [parse_measure(n) for n in MEASURES]
        plain = {"missing": "ignore"}
        rag = {"grade_map": "trec-dl", "pool_depth": 100}
        t_plain, _ = best(lambda q=qrels, r=run: prepare(q, r, policies=plain), 1)
        t_rag, data = best(lambda q=qrels, r=run: prepare(q, r, measures, policies=plain, rag=rag), 1)
        print(f"\nscale {scale}: {len(run):,} run rows, {len(qrels):,} judgments, {data.n_queries:,} queries")
        print(f"prepare: {t_plain:.3f} s plain; {t_rag:.3f} s with grade map trec-dl and pool depth 100")
        base = None
        print(f"{'measure':<26}{'kernel s':>10}{'x nDCG@10':>11}{'mean':>10}")
        for name in MEASURES:
            m = parse_measure(name)
            t, vals = best(lambda m=m, data=data: m.compute(data), 1)
            base = base or t
            valid = vals[vals == vals]
            print(f"{name:<26}{t:>10.4f}{t / base:>11.2f}{valid.mean():>10.4f}")


if __name__ == "__main__":
    main()
