#!/usr/bin/env python3
"""Streaming evaluation against the in-memory path on a run larger than comfortable: a generated
grouped TREC run of 50 million lines (500,000 queries x 100 docs) with graded qrels (1-5, ~10 per
query), five measures (classical and set-based: AP, nDCG@10, P@10, RA-nWG@10 and PROC@10, whose
pool is the run itself), each path in a fresh process, side by side: wall time, lines per second,
peak memory (max RSS of the process), and a digest of every per-query value (they must be equal).

    python bench/stream_memory.py [--lines 50000000] [--chunk-mb 64 [16 ...]] [--measures default]
                                  [--unsorted]

``--chunk-mb auto`` is the default chunk (chosen from the file's size); ``--measures default`` the
default measures of ``evaluate`` (nDCG@10, AP, RR, P@10, R@100); ``--unsorted`` evaluates a copy of
the run with its queries interleaved (every query split in two halves, the second halves after all
first ones), in memory and with ``--sort-first``, and times how long streaming takes to reject it.

The data goes to bench/data/stream/ (not committed; ~1.9 GB for 50M lines). Issue 15 asks for the
streaming path under 2 GiB of peak memory at no less than 80 % of the in-memory path's throughput.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
MEASURES = ["AP", "nDCG@10", "P@10", "RA-nWG@10", "PROC@10"]

WORKER = r"""
import hashlib, json, resource, sys, time
t0 = time.perf_counter()
import ctxeval
from ctxeval._stream import evaluate_stream
mode, qrels, run, measures, chunk = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5]
t1 = time.perf_counter()
chunk_bytes = None if chunk == "auto" else int(chunk) << 20
if mode == "reject":
    try:
        evaluate_stream(qrels, run, measures, chunk_bytes=chunk_bytes)
    except ctxeval.FormatError as exc:
        print(json.dumps({"eval": time.perf_counter() - t1, "error": str(exc)[:160],
                          "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
        sys.exit(0)
    sys.exit("the unsorted run was not rejected")
if mode in ("stream", "sort"):
    res = evaluate_stream(qrels, run, measures, chunk_bytes=chunk_bytes, sort_first=mode == "sort")
else:
    res = ctxeval.evaluate(qrels, run, measures)
t2 = time.perf_counter()
r = res.runs[0]
h = hashlib.sha256()
h.update("\n".join(r.qids).encode())
for m in res.measures:
    h.update(r.values[m].tobytes())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"eval": t2 - t1, "peak_mib": peak, "digest": h.hexdigest(), "queries": len(r.qids),
                  "means": {str(m): r.mean(m) for m in res.measures}}))
"""


def generate(lines: int, out: Path) -> tuple[Path, Path]:
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    run, qrels = out / f"run-{lines}.txt", out / f"qrels-{lines}.txt"
    if run.exists() and qrels.exists():
        return run, qrels
    per_q = 100
    nq = lines // per_q
    rng = np.random.default_rng(15)
    block = 20_000  # queries per write
    with run.open("w") as fr, qrels.open("w") as fq:
        for start in range(0, nq, block):
            q = np.arange(start, min(nq, start + block))
            # distinct within a query: k * 100,003 + an offset, k < 100, below 10^7
            docs = (np.arange(per_q) * 100_003 + rng.integers(0, 100_000, size=(q.size, 1))) % 10_000_000
            scores = np.sort(rng.random((q.size, per_q)) * 50, axis=1)[:, ::-1]
            qid = np.repeat([f"q{i:07d}" for i in q], per_q)
            did = np.char.add("d", docs.ravel().astype(str))
            rank = np.tile(np.arange(1, per_q + 1), q.size).astype(str)
            sc = np.char.mod("%.4f", scores.ravel())
            fr.write("\n".join(" ".join(t) for t in zip(qid, ["Q0"] * qid.size, did, rank, sc, ["bench"] * qid.size)))
            fr.write("\n")
            # ~10 judged docs per query: 6 from the run's top 50, 4 unretrieved, grades 1-5
            pick = rng.integers(0, 50, size=(q.size, 6))
            judged = np.take_along_axis(docs, pick, axis=1)
            extra = rng.integers(10_000_000, 20_000_000, size=(q.size, 4))
            allj = np.concatenate([judged, extra], axis=1)
            grades = rng.integers(1, 6, size=allj.shape)
            qq = np.repeat([f"q{i:07d}" for i in q], allj.shape[1])
            seen = set()
            rows = []
            for a, d, g in zip(qq, allj.ravel(), grades.ravel()):
                if (a, d) not in seen:
                    seen.add((a, d))
                    rows.append(f"{a} 0 d{d} {g}")
            fq.write("\n".join(rows) + "\n")
    return run, qrels


def unsorted_copy(run: Path) -> Path:
    """Every query's lines split in two halves, all first halves before all second halves."""
    out = run.with_name(run.stem + "-unsorted.txt")
    if out.exists():
        return out
    with run.open("rb") as fh, out.open("wb") as first, open(str(out) + ".tail", "wb") as second:
        for i, line in enumerate(fh):
            (first if i % 100 < 50 else second).write(line)
    with out.open("ab") as fo, open(str(out) + ".tail", "rb") as tail:
        while block := tail.read(1 << 24):
            fo.write(block)
    Path(str(out) + ".tail").unlink()
    return out


def measure(mode: str, qrels: Path, run: Path, chunk: str, measures: list[str]) -> dict:
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", WORKER, mode, str(qrels), str(run), json.dumps(measures), chunk],
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(done.stdout)
    out["wall"] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=50_000_000)
    ap.add_argument("--chunk-mb", nargs="+", default=["auto"], help="chunk sizes in MiB, or auto (the default)")
    ap.add_argument("--measures", default="rag", choices=["rag", "default"])
    ap.add_argument("--unsorted", action="store_true", help="also an ungrouped copy: in memory, --sort-first, rejected")
    args = ap.parse_args()
    measures = MEASURES if args.measures == "rag" else ["nDCG@10", "AP", "RR", "P@10", "R@100"]
    t = time.perf_counter()
    run, qrels = generate(args.lines, BENCH / "data" / "stream")
    print(f"data ready in {time.perf_counter() - t:.0f} s: {run} ({run.stat().st_size / 2**30:.2f} GiB)")
    rows = [("in memory", measure("memory", qrels, run, "auto", measures))]
    for c in args.chunk_mb:
        rows.append(
            (
                f"--stream ({c} MiB chunks)" if c != "auto" else "--stream (default chunk)",
                measure("stream", qrels, run, c, measures),
            )
        )
    if args.unsorted:
        mixed = unsorted_copy(run)
        rows.append(("unsorted, in memory", measure("memory", qrels, mixed, "auto", measures)))
        rows.append(("unsorted, --sort-first", measure("sort", qrels, mixed, "auto", measures)))
        rejected = measure("reject", qrels, mixed, "auto", measures)
    digests = {r["digest"] for _, r in rows}
    if len(digests) != 1:
        raise SystemExit(f"the per-query values differ: {rows}")
    print(f"{args.lines:,} run lines, {rows[0][1]['queries']:,} queries, measures {', '.join(measures)}")
    print(f"{'path':<32} {'evaluate (s)':>12} {'lines/s':>12} {'x memory':>9} {'peak MiB':>9}")
    base = args.lines / rows[0][1]["eval"]
    for label, g in rows:
        rate = args.lines / g["eval"]
        print(f"{label:<32} {g['eval']:>12.1f} {rate:>12,.0f} {rate / base:>9.2f} {g['peak_mib']:>9.0f}")
    if args.unsorted:
        print(
            f"{'unsorted, --stream (rejected)':<32} {rejected['eval']:>12.1f} {'':>12} {'':>9} {rejected['peak_mib']:>9.0f}"
        )
        print(f"  {rejected['error']}")
    print("per-query values: identical (sha256 " + rows[0][1]["digest"][:16] + ")")


if __name__ == "__main__":
    main()
