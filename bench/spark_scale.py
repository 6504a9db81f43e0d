#!/usr/bin/env python3
"""The local engine against Spark ``local[2]`` on the L-scale files (100,000 queries x 100 docs = 10
million run lines, graded qrels): five measures, each engine in a fresh process, side by side: wall
time of the evaluation, peak memory of the driver (the Python process) and of the executors (the
JVM and the Python workers Spark starts, their peak resident sets summed), and a digest of every
per-query value (they must be equal).

    python bench/spark_scale.py [--lines 10000000] [--master local[2]]

The files are those of bench/stream_memory.py (generated there when missing, into bench/data/stream/).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from stream_memory import MEASURES, generate

WORKER = r"""
import hashlib, json, os, resource, sys, time
import ctxeval
engine, qrels, run, measures, master = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]

def descendants_peak():
    me = os.getpid()
    kids = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            kids.setdefault(int(stat[1]), []).append(int(pid))
        except OSError:
            pass
    todo, total = list(kids.get(me, [])), 0
    while todo:
        p = todo.pop()
        todo.extend(kids.get(p, []))
        try:
            for line in open(f"/proc/{p}/status"):
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) // 1024
        except OSError:
            pass
    return total

shuffle = 0
if engine == "spark":
    import urllib.request
    from pyspark.sql import SparkSession
    from ctxeval._spark import evaluate_spark
    # the engine's own session settings, with the UI on to read the stages' shuffle bytes
    spark = (SparkSession.builder.master(master).config("spark.ui.port", "4077")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "4").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    t1 = time.perf_counter()
    res, _ = evaluate_spark(qrels, [run], measures, spark=spark, names=["bench"])
    t2 = time.perf_counter()
    executors = descendants_peak()
    app = spark.sparkContext.applicationId
    stages = json.load(urllib.request.urlopen(f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{app}/stages"))
    shuffle = sum(s.get("shuffleWriteBytes", 0) for s in stages)
else:
    t1 = time.perf_counter()
    res = ctxeval.evaluate(qrels, run, measures)
    t2 = time.perf_counter()
    executors = 0
r = res.runs[0]
h = hashlib.sha256()
h.update("\n".join(r.qids).encode())
for m in res.measures:
    h.update(r.values[m].tobytes())
print(json.dumps({"eval": t2 - t1, "driver_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "executors_mib": executors, "digest": h.hexdigest(), "queries": len(r.qids), "shuffle": shuffle}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=10_000_000)
    ap.add_argument("--master", default="local[2]")
    args = ap.parse_args()
    run, qrels = generate(args.lines, BENCH / "data" / "stream")
    got = {}
    for engine in ("local", "spark"):
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", WORKER, engine, str(qrels), str(run), json.dumps(MEASURES), args.master],
            capture_output=True,
            text=True,
        )
        if done.returncode:
            raise SystemExit(done.stderr[-2000:])
        got[engine] = json.loads(done.stdout.strip().splitlines()[-1])
        got[engine]["process"] = time.perf_counter() - t0
    if got["local"]["digest"] != got["spark"]["digest"]:
        raise SystemExit(f"the engines disagree: {got}")
    print(f"{args.lines:,} run lines, {got['local']['queries']:,} queries, measures {', '.join(MEASURES)}")
    print(f"{'engine':<20} {'evaluate (s)':>12} {'process (s)':>12} {'driver MiB':>11} {'executors MiB':>14}")
    for engine, label in (("local", "local"), ("spark", f"spark {args.master}")):
        g = got[engine]
        print(
            f"{label:<20} {g['eval']:>12.1f} {g['process']:>12.1f} {g['driver_mib']:>11.0f} {g['executors_mib']:>14.0f}"
        )
    print("per-query values: identical (sha256 " + got["spark"]["digest"][:16] + ")")
    sh = got["spark"]["shuffle"]
    with open(qrels) as fh:
        rows = args.lines + sum(1 for _ in fh)
    print(
        f"shuffle written: {sh / 2**20:.0f} MiB for {rows:,} rows (run + qrels) = {sh / rows:.1f} bytes/row "
        f"(compressed) -> {sh / rows:.0f} GB per 10^9 rows"
    )


if __name__ == "__main__":
    main()
