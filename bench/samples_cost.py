#!/usr/bin/env python3
"""Sample sets against the run/qrels path: the same retrieval as a JSON-lines sample file and as TREC
run + qrels files, evaluated by ``ctxeval.evaluate`` with five measures, side by side.

    python bench/samples_cost.py [--samples 100000] [--chunks 20] [--repeat 3]

The data is generated with a fixed seed into ``bench/data/samples/`` (not committed): per sample 20
retrieved chunk ids with scores and 3-8 reference ids (grades 1-3). Each measurement is a fresh
process; the table shows the median wall time of the ``ctxeval.evaluate`` call (reading included),
of that whole Python process, and of the command ``ctxeval evaluate --samples FILE -m ...`` against
``ctxeval evaluate QRELS RUN -m ...``. Both paths must give the same means (checked). Issue 13 asks
for ``evaluate --samples`` within 1.5x of the run/qrels path.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
MEASURES = ["nDCG@10", "AP", "RR", "ContextPrecision", "ContextRecall@10"]

WORKER = r"""
import json, sys, time
t0 = time.perf_counter()
import ctxeval
kind, a, b, measures = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
t1 = time.perf_counter()
if kind == "samples":
    res = ctxeval.evaluate(samples=a, measures=measures)
else:
    res = ctxeval.evaluate(a, b, measures)
t2 = time.perf_counter()
print(json.dumps({"eval": t2 - t1, "means": [res.runs[0].mean(m) for m in res.measures]}))
"""


def generate(n: int, chunks: int, out: Path) -> tuple[Path, Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    sp, rp, qp = out / f"samples-{n}x{chunks}.jsonl", out / f"run-{n}x{chunks}.txt", out / f"qrels-{n}x{chunks}.txt"
    if sp.exists() and rp.exists() and qp.exists():
        return sp, rp, qp
    rng = random.Random(13)
    with sp.open("w") as fs, rp.open("w") as fr, qp.open("w") as fq:
        for i in range(n):
            qid = f"q{i:07d}"
            docs = rng.sample(range(5000), chunks + 5)
            ids = [f"c{d:05d}" for d in docs[:chunks]]
            scores = sorted((round(rng.uniform(0, 30), 4) for _ in ids), reverse=True)
            # distinct, decreasing scores: both paths rank the list as given
            scores = [s + (chunks - j) * 1e-3 for j, s in enumerate(scores)]
            refs = rng.sample([f"c{d:05d}" for d in docs], rng.randint(3, 8))
            grades = {r: rng.randint(1, 3) for r in refs}
            fs.write(
                json.dumps({"query_id": qid, "retrieved_ids": ids, "retrieved_scores": scores, "grades": grades}) + "\n"
            )
            fr.write("".join(f"{qid} Q0 {d} {j + 1} {s!r} run\n" for j, (d, s) in enumerate(zip(ids, scores))))
            fq.write("".join(f"{qid} 0 {d} {g}\n" for d, g in sorted(grades.items())))
    return sp, rp, qp


def command(kind: str, a: Path, b: Path) -> float:
    """Wall time of the ``ctxeval evaluate`` command."""
    import time

    exe = str(Path(sys.executable).with_name("ctxeval"))
    args = ["--samples", str(a)] if kind == "samples" else [str(a), str(b)]
    t0 = time.perf_counter()
    subprocess.run(
        [exe, "evaluate", *args, *(x for m in MEASURES for x in ("-m", m))],
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - t0


def measure(kind: str, a: Path, b: Path) -> tuple[float, float, list[float]]:
    import time

    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WORKER, kind, str(a), str(b), json.dumps(MEASURES)],
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t0
    out = json.loads(done.stdout)
    return out["eval"], wall, out["means"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=100_000)
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    sp, rp, qp = generate(args.samples, args.chunks, BENCH / "data" / "samples")
    times: dict[str, list[tuple[float, float, float]]] = {"trec": [], "samples": []}
    means: dict[str, list[float]] = {}
    for _ in range(args.repeat):  # interleaved
        for kind, a, b in (("trec", qp, rp), ("samples", sp, sp)):
            ev, wall, m = measure(kind, a, b)
            times[kind].append((ev, wall, command(kind, a, b)))
            means[kind] = m
    for x, y in zip(means["trec"], means["samples"]):
        if abs(x - y) > 1e-12:
            raise SystemExit(f"the two paths disagree: {means}")
    print(f"{args.samples:,} samples x {args.chunks} chunks, measures {', '.join(MEASURES)}; median of {args.repeat}")
    print(f"{'input':<22} {'evaluate()':>11} {'process':>9} {'x':>6} {'CLI (s)':>9} {'x':>6}")
    base = [statistics.median(t[i] for t in times["trec"]) for i in range(3)]
    for kind, label in (("trec", "TREC run + qrels"), ("samples", "samples (JSON lines)")):
        ev, wall, cli = (statistics.median(t[i] for t in times[kind]) for i in range(3))
        print(f"{label:<22} {ev:>11.2f} {wall:>9.2f} {ev / base[0]:>6.2f} {cli:>9.2f} {cli / base[2]:>6.2f}")


if __name__ == "__main__":
    main()
