"""ranx worker.

Qrels.from_file / Run.from_file (kind='trec') and
evaluate(qrels, run, [...], make_comparable=False).

Query set: ranx requires the qrels and the run to hold the same query ids
(make_comparable=True would instead add the qrels-only queries to the run with
an empty ranking, i.e. count them as 0).  To follow the pytrec_eval rule the
worker restricts both to the intersection of query ids by deleting the other
keys from ranx's numba typed dicts (the same operation Run.make_comparable
uses), which is cheap.

Caveats recorded in the output:
* ranx is numba-compiled.  Its kernels use @njit(cache=True), so the very first
  run on a machine pays full JIT compilation; later processes load the on-disk
  numba cache (still some seconds of overhead).  The worker reports whether
  the cache was present (cold/warm) -- it does not warm up.  bench/run.py
  --ranx-cold points NUMBA_CACHE_DIR at a fresh empty directory to force a
  cold (JIT-included) measurement.
* ties: ranx sorts by score only and breaks ties differently from trec_eval
  (which orders tied docs by docid descending), so small differences vs
  pytrec_eval are expected on runs with tied scores.
* evaluate() runs numba-parallel over all cores (threads=0).
"""

import glob
import os
import time

T0 = time.perf_counter()
import ranx
from _common import parse_args, write_result
from ranx import Qrels, Run, evaluate

METRICS = {"nDCG@10": "ndcg@10", "AP": "map", "RR": "mrr", "P@10": "precision@10", "R@100": "recall@100"}


def _numba_cache_present():
    """True if numba cache index files for ranx exist where numba will look."""
    cache_dir = os.environ.get("NUMBA_CACHE_DIR")
    root = cache_dir if cache_dir else os.path.dirname(ranx.__file__)
    return bool(glob.glob(os.path.join(root, "**", "*.nbi"), recursive=True))


def main():
    qrels_path, run_path, out = parse_args()
    warm = _numba_cache_present()
    t1 = time.perf_counter()
    qrels = Qrels.from_file(qrels_path, kind="trec")
    run = Run.from_file(run_path, kind="trec")
    q_ids = set(qrels.qrels.keys())
    r_ids = set(run.run.keys())
    for q in q_ids - r_ids:
        del qrels.qrels[q]
    for q in r_ids - q_ids:
        del run.run[q]
    n = len(q_ids & r_ids)
    t2 = time.perf_counter()
    res = evaluate(qrels, run, list(METRICS.values()), make_comparable=False)
    means = {name: res[m] for name, m in METRICS.items()}
    t3 = time.perf_counter()
    write_result(
        out,
        "ranx",
        ranx.__version__ if hasattr(ranx, "__version__") else None,
        means,
        n,
        {"import_s": t1 - T0, "load_s": t2 - t1, "eval_s": t3 - t2, "total_s": t3 - T0},
        notes=[
            f"numba cache {'warm' if warm else 'cold (timing includes JIT compilation)'}",
            "query sets restricted to the qrels/run intersection",
            "ties broken differently from trec_eval",
        ],
    )


if __name__ == "__main__":
    main()
