"""ir_measures worker.

Reads with ir_measures.read_trec_qrels / read_trec_run and aggregates with
ir_measures.calc_aggregate([nDCG@10, AP, RR, P@10, R@100], qrels, run).

Query set: ir_measures (0.4.x) yields measure.DEFAULT (0) for every qrels query
that is missing from the run, so calc_aggregate would average over *all* qrels
queries.  To use the pytrec_eval rule (queries in both qrels and run) the worker
materialises the run as a dict-of-dicts with ir_measures' own RunConverter
(exactly the conversion its pytrec_eval provider performs internally, so this
adds no extra work) and drops qrels of queries absent from the run.  Run-only
queries are ignored by the provider itself.
"""

import time

T0 = time.perf_counter()
import ir_measures
from _common import parse_args, write_result
from ir_measures import AP, RR, P, R, nDCG

MEASURES = {"nDCG@10": nDCG @ 10, "AP": AP, "RR": RR, "P@10": P @ 10, "R@100": R @ 100}


def main():
    qrels_path, run_path, out = parse_args()
    t1 = time.perf_counter()
    run = ir_measures.util.RunConverter(ir_measures.read_trec_run(run_path)).as_dict_of_dict()
    qrels = [q for q in ir_measures.read_trec_qrels(qrels_path) if q.query_id in run]
    t2 = time.perf_counter()
    agg = ir_measures.calc_aggregate(list(MEASURES.values()), qrels, run)
    means = {name: agg[m] for name, m in MEASURES.items()}
    n = len({q.query_id for q in qrels})
    t3 = time.perf_counter()
    write_result(
        out,
        "ir_measures",
        ir_measures.__version__,
        means,
        n,
        {"import_s": t1 - T0, "load_s": t2 - t1, "eval_s": t3 - t2, "total_s": t3 - T0},
        notes=["qrels restricted to run queries (ir_measures would count missing run queries as 0)"],
    )


if __name__ == "__main__":
    main()
