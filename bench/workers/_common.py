"""Shared helpers for the benchmark workers (stdlib only, cheap to import).

Every worker is run as ``python bench/workers/<tool>_worker.py QRELS RUN OUT.json``
and writes OUT.json as::

    {"tool": ..., "version": ..., "means": {"nDCG@10": ..., "AP": ..., "RR": ...,
     "P@10": ..., "R@100": ...}, "n_queries": int | null,
     "timings": {"import_s": ..., "load_s": ..., "eval_s": ..., "total_s": ...},
     "notes": [...]}

``means`` are arithmetic means over the queries present in BOTH the qrels and the
run (pytrec_eval / trec_eval rule; run-only and qrels-only queries are ignored).
"""

from __future__ import annotations

import json
import sys

MEASURES = ["nDCG@10", "AP", "RR", "P@10", "R@100"]


def parse_args(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} QRELS RUN OUT.json")
    return argv[0], argv[1], argv[2]


def write_result(out, tool, version, means, n_queries, timings, notes=()):
    missing = [m for m in MEASURES if m not in means]
    if missing:
        raise SystemExit(f"{tool}: missing measures {missing}")
    doc = {
        "tool": tool,
        "version": version,
        "means": {m: float(means[m]) for m in MEASURES},
        "n_queries": n_queries,
        "timings": {k: round(v, 6) for k, v in timings.items()},
        "notes": list(notes),
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
