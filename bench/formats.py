#!/usr/bin/env python3
"""Input formats side by side: the same run and qrels as TREC text, CSV, JSON lines, Parquet, and as
polars and pandas frames, evaluated by ``ctxeval.evaluate`` (nDCG@10, AP, RR, P@10, R@100).

    python bench/formats.py [--scale 1M M] [--repeat 3]

Scales: ``1M`` (the first 10,000 queries of the L data: 1M run rows, ~300k qrels) and ``M`` (10M run
rows; see bench/README.md). The other formats are written once from the TREC files into
``bench/data/<scale>/formats/``. Each measurement is a fresh process; the table shows the median wall
time of the evaluate call (reading included; for frames, the frame is built before the clock starts)
and of the whole process, and the ratio to TREC text. Every format must give the same means.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
MEASURES = ["nDCG@10", "AP", "RR", "P@10", "R@100"]
FORMATS = ["trec", "csv", "jsonl", "parquet", "polars", "pandas"]

WORKER = r"""
import json, sys, time
t0 = time.perf_counter()
fmt, qrels, run, measures = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
if fmt in ("polars", "pandas"):
    import polars as pl
    q = pl.read_parquet(qrels)
    r = pl.read_parquet(run)
    if fmt == "pandas":
        q, r = q.to_pandas(), r.to_pandas()
    qrels, run = q, r
import ctxeval
t1 = time.perf_counter()
res = ctxeval.evaluate(qrels, run, measures, policies={"missing": "ignore"})
t2 = time.perf_counter()
print(json.dumps({"eval_s": t2 - t1, "means": {str(m): res.runs[0].mean(m) for m in res.measures}}))
"""


def _data(scale: str) -> tuple[Path, Path]:
    if scale == "M":
        d = BENCH / "data" / "M"
        if not (d / "run.txt").exists():
            subprocess.run([sys.executable, str(BENCH / "generate.py"), "--scale", "M"], check=True)
        return d / "qrels.txt", d / "run.txt"
    d = BENCH / "data" / "1M"
    if not (d / "run.txt").exists():
        import polars as pl

        src = BENCH / "data" / "L"
        if not (src / "run.txt").exists():
            subprocess.run([sys.executable, str(BENCH / "generate.py"), "--scale", "L"], check=True)
        d.mkdir(parents=True, exist_ok=True)
        run = pl.read_csv(
            src / "run.txt",
            separator=" ",
            has_header=False,
            new_columns=["q", "z", "d", "r", "s", "t"],
            schema_overrides={"q": pl.String, "d": pl.String},
        )
        keep = run["q"].unique(maintain_order=True).head(10_000)
        run.filter(pl.col("q").is_in(keep.implode())).write_csv(d / "run.txt", separator=" ", include_header=False)
        qrels = pl.read_csv(
            src / "qrels.txt",
            separator=" ",
            has_header=False,
            new_columns=["q", "z", "d", "g"],
            schema_overrides={"q": pl.String, "d": pl.String},
        )
        qrels.filter(pl.col("q").is_in(keep.implode())).write_csv(d / "qrels.txt", separator=" ", include_header=False)
    return d / "qrels.txt", d / "run.txt"


def _convert(qrels: Path, run: Path) -> dict[str, tuple[Path, Path]]:
    """The same data in every file format (written once)."""
    import polars as pl

    out = {"trec": (qrels, run)}
    d = run.parent / "formats"
    d.mkdir(exist_ok=True)
    q = pl.read_csv(
        qrels,
        separator=" ",
        has_header=False,
        new_columns=["query_id", "iter", "doc_id", "relevance"],
        schema_overrides={"query_id": pl.String, "doc_id": pl.String},
    ).select("query_id", "doc_id", "relevance")
    r = pl.read_csv(
        run,
        separator=" ",
        has_header=False,
        new_columns=["query_id", "q0", "doc_id", "rank", "score", "tag"],
        schema_overrides={"query_id": pl.String, "doc_id": pl.String},
    ).select("query_id", "doc_id", "score", "tag")
    for fmt, write in (("csv", "write_csv"), ("jsonl", "write_ndjson"), ("parquet", "write_parquet")):
        qp, rp = d / f"qrels.{fmt}", d / f"run.{fmt}"
        if not (qp.exists() and rp.exists()):
            getattr(q, write)(qp)
            getattr(r, write)(rp)
        out[fmt] = (qp, rp)
    out["polars"] = out["pandas"] = out["parquet"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", nargs="+", default=["1M"], choices=["1M", "M"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--formats", default=",".join(FORMATS))
    args = ap.parse_args()
    fmts = [f for f in args.formats.split(",") if f]
    for scale in args.scale:
        files = _convert(*_data(scale))
        runs: dict[str, list[tuple[float, float]]] = {f: [] for f in fmts}
        means: dict[str, dict[str, float]] = {}
        for _ in range(args.repeat):  # interleaved: every format meets the same machine conditions
            for fmt in fmts:
                qp, rp = files[fmt]
                t0 = time.perf_counter()
                p = subprocess.run(
                    [sys.executable, "-c", WORKER, fmt, str(qp), str(rp), json.dumps(MEASURES)],
                    capture_output=True,
                    text=True,
                )
                wall = time.perf_counter() - t0
                if p.returncode != 0:
                    print(f"{scale} {fmt}: FAILED\n{p.stderr[-2000:]}")
                    return 1
                doc = json.loads(p.stdout.strip().splitlines()[-1])
                runs[fmt].append((doc["eval_s"], wall))
                means[fmt] = doc["means"]
        base_eval = statistics.median(e for e, _ in runs["trec"]) if "trec" in runs else None
        print(
            f"\nscale {scale} ({files['trec'][1].stat().st_size / 2**20:.0f} MiB run as TREC text), median of {args.repeat}"
        )
        print(f"{'format':<9}{'evaluate s':>11}{'x TREC':>8}{'process s':>11}   means equal to TREC")
        for fmt in fmts:
            e = statistics.median(x for x, _ in runs[fmt])
            w = statistics.median(y for _, y in runs[fmt])
            same = (
                all(abs(means[fmt][m] - means["trec"][m]) <= 1e-12 for m in means["trec"]) if "trec" in means else None
            )
            ratio = f"{e / base_eval:>8.2f}" if base_eval else f"{'-':>8}"
            print(f"{fmt:<9}{e:>11.3f}{ratio}{w:>11.3f}   {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
