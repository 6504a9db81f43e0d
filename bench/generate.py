#!/usr/bin/env python3
"""Deterministic synthetic TREC qrels/run generator for the ctxeval benchmarks.

    python bench/generate.py --scale S [M L] [--out bench/data] [--seed N] [--force]

Writes ``<out>/<scale>/qrels.txt``, ``<out>/<scale>/run.txt`` and
``<out>/<scale>/params.json``.  If ``params.json`` already records the same
parameters (and both data files exist) the scale is skipped unless ``--force``.

Scales (run queries x retrieved docs per query):
    S = 1,000 x 100     (100k run lines)
    M = 10,000 x 1,000  (10M run lines, ~370 MB)
    L = 100,000 x 100   (10M run lines)

Data model, per query (all vectorised with numpy; one ``default_rng(seed)``
stream per scale, so output is byte-identical on every invocation):

* query ids are 7-digit numbers (1000001, 1000002, ...), so numeric and
  lexicographic order coincide; files are sorted by qid.
* query sets: the run has exactly ``Q`` queries; ~2% of them have no qrels, and
  an extra ~2% x Q queries have qrels but are absent from the run.
* doc ids look like ``D1234567`` (7 digits, space of ~9M ids shared by all
  queries).  Per query a pool of ``R + 50`` distinct ids is drawn as an affine
  sequence ``(a + j*s) mod P`` with ``P`` prime, which guarantees uniqueness
  within the query without any rejection loop.
* qrels: ``k ~ U{10..50}`` judged docs, grades 0/1/2/3 with probabilities
  .4/.3/.2/.1; ``Binomial(k, 0.5)`` of them are retrieved in the run, the rest
  are not retrieved.  Qrels lines ``qid 0 docid grade`` sorted by qid, docid.
* run: score = 10 + 0.8*grade + N(0, 1) (unjudged docs count as grade 0), kept
  as integer micro-units and printed with exactly 6 decimals.  Docs are ranked
  by score descending (random order within exact ties), rank starts at 1.  On
  top of the natural collisions, ~1% of positions copy the score of the doc
  ranked just above, so ties are common enough to exercise tie-breaking.  The
  file order of tied docs is *not* trec_eval's (docid descending) order.
  Lines ``qid Q0 docid rank score ctxbench`` sorted by qid, rank.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

GENERATOR_VERSION = 1

SCALES = {
    "S": {"queries": 1_000, "depth": 100},
    "M": {"queries": 10_000, "depth": 1_000},
    "L": {"queries": 100_000, "depth": 100},
}

QID_BASE = 1_000_000  # qids 1000001.. (all 7 digits up to 8,999,999 queries)
DOC_PRIME = 8_999_993  # prime; docids D1000000..D9999992
DOC_OFFSET = 1_000_000
JUDGED_MIN, JUDGED_MAX = 10, 50
GRADE_P = [0.4, 0.3, 0.2, 0.1]
RUN_ONLY_FRAC = 0.02  # run queries without qrels
QRELS_ONLY_FRAC = 0.02  # qrels queries missing from the run
TIE_FRAC = 0.01  # positions forced to tie with the doc above
RUN_TAG = "ctxbench"
DEFAULT_SEED = 20240521


def params_for(scale: str, seed: int) -> dict:
    p = dict(SCALES[scale])
    p.update(
        scale=scale,
        seed=seed,
        generator_version=GENERATOR_VERSION,
        judged=[JUDGED_MIN, JUDGED_MAX],
        grade_p=GRADE_P,
        run_only_frac=RUN_ONLY_FRAC,
        qrels_only_frac=QRELS_ONLY_FRAC,
        tie_frac=TIE_FRAC,
    )
    return p


def _score_strings(micro: pl.Expr) -> pl.Expr:
    """Integer micro-units -> fixed 6-decimal string (exact, no float formatting)."""
    return pl.concat_str(
        [
            (micro // 1_000_000).cast(pl.Utf8),
            pl.lit("."),
            (micro % 1_000_000).cast(pl.Utf8).str.zfill(6),
        ]
    )


def generate(scale: str, out_dir: Path, seed: int) -> dict:
    Q = SCALES[scale]["queries"]
    R = SCALES[scale]["depth"]
    extra = JUDGED_MAX  # pool slots for judged-but-not-retrieved docs
    pool_size = R + extra
    rng = np.random.default_rng(seed)

    # ---- query sets ---------------------------------------------------------
    n_qrels_only = round(QRELS_ONLY_FRAC * Q)
    n_total = Q + n_qrels_only
    qids = QID_BASE + 1 + np.arange(n_total, dtype=np.int64)
    perm = rng.permutation(n_total)
    qrels_only = np.zeros(n_total, dtype=bool)
    qrels_only[perm[:n_qrels_only]] = True
    in_run = ~qrels_only
    run_idx = np.flatnonzero(in_run)  # exactly Q queries
    n_run_only = round(RUN_ONLY_FRAC * Q)
    run_only = np.zeros(n_total, dtype=bool)
    run_only[rng.choice(run_idx, size=n_run_only, replace=False)] = True
    has_qrels = ~run_only

    # ---- per-query doc-id pools (distinct within a query) --------------------
    a = rng.integers(0, DOC_PRIME, size=n_total, dtype=np.int64)
    s = rng.integers(1, DOC_PRIME, size=n_total, dtype=np.int64)
    j = np.arange(pool_size, dtype=np.int64)
    pool = (a[:, None] + s[:, None] * j[None, :]) % DOC_PRIME + DOC_OFFSET  # (n_total, pool)

    # ---- judgements ---------------------------------------------------------
    k = rng.integers(JUDGED_MIN, JUDGED_MAX + 1, size=n_total)
    k_in = rng.binomial(k, 0.5)
    k_in = np.where(qrels_only, 0, np.minimum(k_in, R))  # qrels-only: nothing retrieved
    k_out = k - k_in  # <= JUDGED_MAX == extra
    k = np.where(has_qrels, k, 0)
    k_in = np.where(has_qrels, k_in, 0)
    k_out = np.where(has_qrels, k_out, 0)
    # judged pool slots: [0, k_in) (retrieved) and [R, R + k_out) (not retrieved)
    judged = (j[None, :] < k_in[:, None]) | ((j[None, :] >= R) & (j[None, :] < R + k_out[:, None]))
    grades = rng.choice(4, size=(n_total, pool_size), p=GRADE_P).astype(np.int64)
    grades = np.where(judged, grades, 0)

    rows, cols = np.nonzero(judged)  # row-major: sorted by query
    q_qrels = qids[rows]
    d_qrels = pool[rows, cols]
    g_qrels = grades[rows, cols]
    order = np.lexsort((d_qrels, q_qrels))  # qid, then docid
    qrels_df = pl.DataFrame(
        {
            "qid": q_qrels[order],
            "iter": np.zeros(len(order), dtype=np.int64),
            "docid": d_qrels[order],
            "rel": g_qrels[order],
        }
    ).select(
        pl.col("qid").cast(pl.Utf8),
        pl.col("iter").cast(pl.Utf8),
        (pl.lit("D") + pl.col("docid").cast(pl.Utf8)).alias("docid"),
        pl.col("rel").cast(pl.Utf8),
    )

    # ---- run ----------------------------------------------------------------
    rq = run_idx
    g_run = grades[rq, :R].astype(np.float64)  # unjudged docs: grade 0
    noise = rng.standard_normal(size=(Q, R))
    micro = np.rint((10.0 + 0.8 * g_run + noise) * 1e6).astype(np.int64)
    np.maximum(micro, 0, out=micro)
    # rank by score desc; random (pool) order within exact ties
    order = np.argsort(-micro, axis=1, kind="stable")
    micro = np.take_along_axis(micro, order, axis=1)
    docs = np.take_along_axis(pool[rq, :R], order, axis=1)
    # forced ties: masked positions take the score of the nearest unmasked doc above
    tie = rng.random(size=(Q, R)) < TIE_FRAC
    tie[:, 0] = False
    src = np.where(tie, 0, np.arange(R)[None, :])
    np.maximum.accumulate(src, axis=1, out=src)
    micro = np.take_along_axis(micro, src, axis=1)
    del noise, g_run, order, src, tie

    n_lines = Q * R
    run_df = pl.DataFrame(
        {
            "qid": np.repeat(qids[rq], R),
            "docid": docs.reshape(-1),
            "rank": np.tile(np.arange(1, R + 1, dtype=np.int64), Q),
            "score": micro.reshape(-1),
        }
    ).select(
        pl.col("qid").cast(pl.Utf8),
        pl.lit("Q0").alias("q0"),
        (pl.lit("D") + pl.col("docid").cast(pl.Utf8)).alias("docid"),
        pl.col("rank").cast(pl.Utf8),
        _score_strings(pl.col("score")).alias("score"),
        pl.lit(RUN_TAG).alias("tag"),
    )
    del docs, micro

    out_dir.mkdir(parents=True, exist_ok=True)
    tmp_q = out_dir / "qrels.txt.tmp"
    tmp_r = out_dir / "run.txt.tmp"
    kw = {"separator": " ", "include_header": False, "quote_style": "never", "line_terminator": "\n"}
    qrels_df.write_csv(tmp_q, **kw)
    run_df.write_csv(tmp_r, **kw)
    os.replace(tmp_q, out_dir / "qrels.txt")
    os.replace(tmp_r, out_dir / "run.txt")

    stats = {
        "run_queries": int(Q),
        "run_lines": int(n_lines),
        "qrels_queries": int(has_qrels.sum()),
        "qrels_lines": int(qrels_df.height),
        "run_only_queries": int(n_run_only),
        "qrels_only_queries": int(n_qrels_only),
        "common_queries": int((in_run & has_qrels).sum()),
    }
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--scale", nargs="+", default=["S"], choices=sorted(SCALES), type=str.upper, help="one or more of S M L"
    )
    ap.add_argument(
        "--out", default=str(Path(__file__).resolve().parent / "data"), help="output root (default: bench/data)"
    )
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--force", action="store_true", help="rewrite even if up to date")
    args = ap.parse_args(argv)

    for scale in args.scale:
        out_dir = Path(args.out) / scale
        params = params_for(scale, args.seed)
        pfile = out_dir / "params.json"
        if not args.force and pfile.exists() and (out_dir / "qrels.txt").exists() and (out_dir / "run.txt").exists():
            try:
                old = json.loads(pfile.read_text())
            except ValueError:
                old = {}
            if old.get("params") == params:
                print(f"[{scale}] up to date in {out_dir} (use --force to rewrite)")
                continue
        t0 = time.perf_counter()
        stats = generate(scale, out_dir, args.seed)
        dt = time.perf_counter() - t0
        sizes = {f: (out_dir / f).stat().st_size for f in ("qrels.txt", "run.txt")}
        pfile.write_text(json.dumps({"params": params, "stats": stats, "bytes": sizes}, indent=2) + "\n")
        print(
            f"[{scale}] wrote {out_dir} in {dt:.1f}s: "
            f"run {stats['run_lines']:,} lines ({sizes['run.txt'] / 2**20:.0f} MiB), "
            f"qrels {stats['qrels_lines']:,} lines; {stats['common_queries']:,} common / "
            f"{stats['run_only_queries']} run-only / {stats['qrels_only_queries']} qrels-only queries"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
