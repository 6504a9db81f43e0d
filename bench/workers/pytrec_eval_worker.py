"""pytrec_eval worker: the reference implementation for the benchmark.

Parses the TREC files with pytrec_eval.parse_qrel / parse_run (file objects) and
evaluates with RelevanceEvaluator.  pytrec_eval only returns queries present in
both qrels and run, which is the averaging rule used by every worker.
"""

import time

T0 = time.perf_counter()
import pytrec_eval
from _common import parse_args, write_result

TREC_MEASURES = {"ndcg_cut.10", "map", "recip_rank", "P.10", "recall.100"}
KEYS = {"nDCG@10": "ndcg_cut_10", "AP": "map", "RR": "recip_rank", "P@10": "P_10", "R@100": "recall_100"}


def main():
    qrels_path, run_path, out = parse_args()
    t1 = time.perf_counter()
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    t2 = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES)
    per_query = evaluator.evaluate(run)
    n = len(per_query)
    means = {name: (sum(r[key] for r in per_query.values()) / n if n else 0.0) for name, key in KEYS.items()}
    t3 = time.perf_counter()
    try:
        from importlib.metadata import version

        ver = version("pytrec_eval-terrier")
    except Exception:
        ver = None
    write_result(
        out,
        "pytrec_eval",
        ver,
        means,
        n,
        {"import_s": t1 - T0, "load_s": t2 - t1, "eval_s": t3 - t2, "total_s": t3 - T0},
    )


if __name__ == "__main__":
    main()
