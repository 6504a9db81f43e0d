"""Cost of the distraction-aware measures next to nDCG's, on the synthetic benchmark data.

    python bench/distraction_cost.py --scale M [L]

Loads the qrels and run once and prepares them with the run's rows kept (the utilities need the
scores and doc ids; grades 0-3 mapped onto the 1-5 scale with the ``trec-dl`` preset). Times the
per-row utilities (labels only; plus a known-distractor list of every 20th judged grade-0 pair; LLM
utilities for every judged pair, u derived deterministically from the grade and the row), then each
measure's kernel on the prepared data, the optimal k and its summary, and ``distraction_table``
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

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

import ctxeval  # noqa: E402
from ctxeval._distraction import distraction_table  # noqa: E402
from ctxeval._engine import prepare  # noqa: E402
from ctxeval._measures import parse_measure  # noqa: E402
from ctxeval._utility import UtilityConfig, attach_utilities, dynamic_k_summary, optimal_k  # noqa: E402


def timed(fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", nargs="+", default=["M"])
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("-k", type=int, default=10)
    args = ap.parse_args()
    k = args.k
    for scale in args.scale:
        d = Path(args.data) / scale
        t_load, (qrels, run) = timed(lambda: (ctxeval.Qrels.from_file(d / "qrels.txt"), ctxeval.Run.from_file(d / "run.txt")))
        t_plain, _ = timed(lambda: prepare(qrels, run, missing="ignore", grade_map="trec-dl"))
        t_prep, data = timed(lambda: prepare(qrels, run, missing="ignore", grade_map="trec-dl", keep_frame=True))
        print(f"\nscale {scale}: {len(run):,} run rows, {len(qrels):,} judgments, {data.n_queries:,} queries")
        print(f"load {t_load:.2f} s; prepare {t_plain:.2f} s, with the run's rows kept {t_prep:.2f} s")

        qf = qrels.frame
        known = qf.filter(pl.col("relevance") == 0).gather_every(20).select("query_id", "doc_id")
        llm = qf.with_columns(((pl.col("relevance") * 0.3) + (pl.int_range(pl.len()) % 7) * 0.01).clip(0.0, 1.0).alias("u")).select("query_id", "doc_id", "u")
        configs = {
            "labels": UtilityConfig(),
            f"labels + {known.height:,} known": UtilityConfig.resolve(distractors=known),
            f"LLM ({llm.height:,} pairs)": UtilityConfig.resolve(utilities=llm),
        }
        for label, cfg in configs.items():
            t, rows = timed(lambda: attach_utilities(data, cfg, qrels))
            print(f"row utilities, {label:<28}{t:>8.3f} s   ({int((rows.u < 0).sum()):,} negative rows)")
        attach_utilities(data, UtilityConfig(), qrels)

        with tempfile.TemporaryDirectory() as tmp:
            fit = Path(tmp) / "fit.json"
            fit.write_text(json.dumps({"alpha": [1.0 / (i + 1) for i in range(k)], "beta": [-1.0 / (i + 1) for i in range(k)], "bias": 0.0}))
            names = [f"nDCG@{k}", f"dDCG@{k}", f"ndDCG@{k}", f"UDCG@{k}", f"UDCG(reference=true)@{k}", f"DistractorRate@{k}", f"DistractorHarm@{k}", f"UDCG-pos(fit='{fit}')@{k}"]
            print(f"{'measure':<34}{'kernel s':>10}{'x nDCG':>8}{'mean':>10}")
            base = None
            for name in names:
                m = parse_measure(name)
                t, vals = timed(lambda: m.compute(data))
                base = base or t
                valid = vals[~np.isnan(vals)]
                shown = name if "fit=" not in name else f"UDCG-pos(fit=...)@{k}"
                print(f"{shown:<34}{t:>10.4f}{t / base:>8.1f}{valid.mean():>10.4f}")
        rows = data.utility  # type: ignore[attr-defined]
        t, _ = timed(lambda: optimal_k(data.r_off, rows.u))
        print(f"{'optimal_k (full lists)':<34}{t:>10.4f}")
        t, _ = timed(lambda: dynamic_k_summary(data.r_off, rows.u))
        print(f"{'dynamic_k_summary':<34}{t:>10.4f}")
        t, _ = timed(lambda: distraction_table(qrels, [run], k, grade_map="trec-dl", missing="ignore"))
        print(f"{'distraction_table (1 run, e2e)':<34}{t:>10.3f}")


if __name__ == "__main__":
    main()
