"""Cost of ``calibrate`` and of ``ContextSelector.select`` on the synthetic benchmark data.

    python bench/calibrate_cost.py --scale M [--k 50] [--folds 5]

Reads the qrels and run once (timed), then times ``calibrate`` end to end on the loaded objects for
the ``utility`` objective and two measure objectives, with the phases of the utility objective
broken down (prepare with the ranked rows kept, per-passage utilities, relative scores, prefix
tables, the grid search with cross-validation). The qrels' 0-3 grades go through the ``trec-dl``
grade map onto the 1-5 utility scale. Then times ``ContextSelector.select`` on real candidate lists
of the run (already ranked, and shuffled), one call per query.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np

import ctxeval
from ctxeval import GradeMap
from ctxeval._calibrate import TAUS, calibrate, fit, lead_lengths, prefix_utility
from ctxeval._context.utility import UtilityConfig, row_utilities
from ctxeval._core.relscore import relative_scores
from ctxeval._session import prepare


def timed(fn):  # type: ignore[no-untyped-def]
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scale", nargs="+", default=["M"])
    ap.add_argument("--data", default=str(HERE / "data"))
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--select-queries", type=int, default=2000, help="queries used for the selector timing")
    args = ap.parse_args()
    for scale in args.scale:
        d = Path(args.data) / scale
        t_read, (qrels, run) = timed(
            lambda d=d: (ctxeval.Qrels.from_file(d / "qrels.txt"), ctxeval.Run.from_file(d / "run.txt"))
        )
        print(f"\nscale {scale}: {len(run):,} run rows, {len(qrels):,} judgments; reading both files {t_read:.2f} s")
        print(f"grid: K_max 1..{args.k} x {len(TAUS)} tau values, {args.folds}-fold cross-validation")

        # phases of the utility objective
        cfg = UtilityConfig.resolve()
        rag = {"grade_map": "trec-dl"}
        t_prep, data = timed(lambda q=qrels, r=run: prepare(q, r, rag=rag, keep_rows=True, extras=["grades"]))
        grade_map = GradeMap.coerce("trec-dl")
        t_util, rows = timed(lambda data=data, q=qrels: row_utilities(data, cfg, q, grade_map))
        t_rel, rel = timed(lambda data=data: relative_scores(data.r_off, data.r_score))
        t_lead, lead = timed(lambda data=data, rel=rel: lead_lengths(data.r_off, rel, args.k))
        t_pref, values = timed(lambda data=data, rows=rows: prefix_utility(data.r_off, rows.u, args.k))
        t_fit, res = timed(lambda values=values, lead=lead: fit(values, lead, folds=args.folds, seed=0))
        print(f"{data.n_queries:,} queries")
        print("utility objective, by phase:")
        for name, t in [
            ("prepare (keep ranked rows)", t_prep),
            ("per-passage utilities", t_util),
            ("relative scores", t_rel),
            ("lead lengths per tau", t_lead),
            ("prefix utilities", t_pref),
            ("grid search + CV", t_fit),
        ]:
            print(f"  {name:<28}{t:>8.3f} s")
        print(
            f"  policy k_max={res.k_max} tau={res.tau:g}; CV gain over best fixed K {res.cross_validation['gain']:.4f}"
        )
        del data, rows, rel, lead, values

        print("calibrate() end to end on the loaded qrels/run:")
        for objective in ("utility", "nDCG@10", "dDCG@10"):
            t, cal = timed(
                lambda q=qrels, r=run, o=objective: calibrate(q, r, objective=o, k=args.k, folds=args.folds, rag=rag)
            )
            cv = cal.policy["cross_validation"]
            print(
                f"  {objective:<10}{t:>8.2f} s   k_max={cal.k_max:<3} tau={cal.tau:<5g} CV objective {cv['objective']:.4f} "
                f"(best fixed K {cv['objective_at_best_fixed_k']:.4f})"
            )

        # selector throughput on real candidate lists
        sel = cal.selector()
        frame = run.frame
        qids = frame["query_id"].unique(maintain_order=True).to_list()[: args.select_queries]
        sub = frame.filter(frame["query_id"].is_in(qids)).sort(
            ["query_id", "score", "doc_id"], descending=[False, True, True]
        )
        lists = [
            (g["doc_id"].to_list(), g["score"].to_numpy()) for _, g in sub.group_by("query_id", maintain_order=True)
        ]
        rng = random.Random(0)
        shuffled = []
        for ids, scores in lists:
            perm = list(range(len(ids)))
            rng.shuffle(perm)
            shuffled.append(([ids[i] for i in perm], scores[np.array(perm)]))
        n_cand = int(np.mean([len(ids) for ids, _ in lists]))
        print(f"ContextSelector.select, {len(lists):,} queries x {n_cand} candidates ({sel}):")
        for ids, scores in lists[:200]:  # warm-up
            sel.select(ids, scores)
        for label, data_lists in (("ranked input", lists), ("shuffled input", shuffled)):
            for cut in sorted({n_cand, 100}, reverse=True):
                t = time.perf_counter()
                for ids, scores in data_lists:
                    sel.select(ids[:cut], scores[:cut])
                dt = time.perf_counter() - t
                print(
                    f"  {label:<15} {cut:>5} candidates: {1e6 * dt / len(data_lists):8.1f} us/call, {len(data_lists) / dt:10,.0f} calls/s"
                )


if __name__ == "__main__":
    main()
