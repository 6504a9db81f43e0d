"""Cost of the distraction-aware measures next to nDCG's, on the synthetic benchmark data.

    python bench/distraction_cost.py --scale M [L]

Loads the qrels and run once and prepares them with the run's rows kept (the utilities need the
scores and doc ids; grades 0-3 mapped onto the 1-5 scale with the ``trec-dl`` preset). Times the
per-row utilities (labels only; plus a known-distractor list of every 20th judged grade-0 pair; LLM
utilities for every judged pair, u derived deterministically from the grade and the row), then each
measure's kernel on the prepared data (best of 3; the cutoff's row index is cached by the first), the optimal k and its summary, and ``distraction_table``
end to end (it prepares again, so it includes that cost). The synthetic data carry no real
distractors: the figures are costs, not findings.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np
import polars as pl

import ctxeval
from ctxeval import GradeMap
from ctxeval._context.utility import UtilityConfig, row_utilities
from ctxeval._distraction import distraction_table, dynamic_k_summary, optimal_k
from ctxeval._session import open_session, prepare

POLICIES = {"missing": "ignore"}
RAG = {"grade_map": "trec-dl"}


def timed(fn, repeat: int = 1):  # type: ignore[no-untyped-def]
    """The best of ``repeat`` wall times, and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", nargs="+", default=["M"])
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    k = args.k
    for scale in args.scale:
        d = Path(args.data) / scale
        t_load, (qrels, run) = timed(
            lambda d=d: (ctxeval.Qrels.from_file(d / "qrels.txt"), ctxeval.Run.from_file(d / "run.txt"))
        )
        t_plain, _ = timed(lambda q=qrels, r=run: prepare(q, r, policies=POLICIES, rag=RAG), 2)
        t_prep, data = timed(
            lambda q=qrels, r=run: prepare(q, r, policies=POLICIES, rag=RAG, keep_rows=True, extras=["grades"]), 2
        )
        print(f"\nscale {scale}: {len(run):,} run rows, {len(qrels):,} judgments, {data.n_queries:,} queries")
        print(f"load {t_load:.2f} s; prepare {t_plain:.2f} s, with the run's rows kept {t_prep:.2f} s")

        qf = qrels.frame
        known = qf.filter(pl.col("relevance") == 0).gather_every(20).select("query_id", "doc_id")
        llm = qf.with_columns(
            ((pl.col("relevance") * 0.3) + (pl.int_range(pl.len()) % 7) * 0.01).clip(0.0, 1.0).alias("u")
        ).select("query_id", "doc_id", "u")
        configs = {
            "labels": UtilityConfig(),
            f"labels + {known.height:,} known": UtilityConfig.resolve(distractors=known),
            f"LLM ({llm.height:,} pairs)": UtilityConfig.resolve(utilities=llm),
        }
        grade_map = GradeMap.coerce("trec-dl")
        for label, cfg in configs.items():
            t, rows = timed(lambda cfg=cfg, data=data, q=qrels: row_utilities(data, cfg, q, grade_map), 2)
            print(f"row utilities, {label:<28}{t:>8.3f} s   ({int((rows.u < 0).sum()):,} negative rows)")

        with tempfile.TemporaryDirectory() as tmp:
            fit = Path(tmp) / "fit.json"
            fit.write_text(
                json.dumps(
                    {
                        "alpha": [1.0 / (i + 1) for i in range(k)],
                        "beta": [-1.0 / (i + 1) for i in range(k)],
                        "bias": 0.0,
                    }
                )
            )
            names = [
                f"nDCG@{k}",
                f"dDCG@{k}",
                f"ndDCG@{k}",
                f"UDCG@{k}",
                f"UDCG(reference=true)@{k}",
                f"DistractorRate@{k}",
                f"DistractorHarm@{k}",
                f"UDCG-pos(fit='{fit}')@{k}",
            ]
            # the session resolves the fit file to its content hash and builds the utility side data once
            session, (rn,) = open_session(qrels, [run], names, policies=POLICIES, rag=RAG)
            data = session.prepare(rn, session.measures, keep_rows=True)
            print(f"{'measure':<34}{'kernel s':>10}{'x nDCG':>8}{'mean':>10}")
            base = None
            for name, m in zip(names, session.measures):
                t, vals = timed(lambda m=m, data=data: m.compute(data), 3)
                base = base or t
                valid = vals[~np.isnan(vals)]
                shown = name if "fit=" not in name else f"UDCG-pos(fit=...)@{k}"
                print(f"{shown:<34}{t:>10.4f}{t / base:>8.1f}{valid.mean():>10.4f}")
        u = data.extra("utility").u
        t, _ = timed(lambda data=data, u=u: optimal_k(data.r_off, u), 3)
        print(f"{'optimal_k (full lists)':<34}{t:>10.4f}")
        t, _ = timed(lambda data=data, u=u: dynamic_k_summary(data.r_off, u), 3)
        print(f"{'dynamic_k_summary':<34}{t:>10.4f}")
        t, _ = timed(lambda q=qrels, r=run: distraction_table(q, [r], k, rag=RAG, policies=POLICIES))
        print(f"{'distraction_table (1 run, e2e)':<34}{t:>10.3f}")


if __name__ == "__main__":
    main()
