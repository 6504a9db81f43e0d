"""ctxeval chunking's offline retriever and chunker beside their peers, on Chroma's corpora (or a generated
corpus of the same size when ../shared/data is absent): time and peak memory, printed side by side.

    python bench/chunking_cost.py [--window 200] [--queries 472] [--k 20]

1. **Chunking**: the five corpora (1.4 M characters) cut into windows of ``--window`` words-v1 tokens
   by ``chunk_corpus("tokens:N")`` (offsets included), beside chonkie's ``TokenChunker`` (character
   tokens, the same number of characters per chunk on average) when installed.
2. **BM25**: indexing those chunks and ranking the top ``--k`` for every question, ctxeval's numpy BM25
   (Lucene's formula) beside bm25s (``method="lucene"``: the same scores, checked) and rank_bm25's
   ``BM25Okapi`` (another idf; its top k differ) when installed.

Peak memory is tracemalloc's peak over each step.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import numpy as np

from ctxeval._chunking.bm25 import BM25
from ctxeval._io.chunkers import chunk_corpus


def measured(fn: Any) -> tuple[Any, float, float]:
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    took = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, took, peak


def corpus(queries: int) -> tuple[dict[str, str], list[str]]:
    base = ROOT.parent / "shared" / "data" / "chroma-chunking"
    if (base / "corpora").is_dir():
        import csv

        docs = {p.stem: p.read_text(encoding="utf-8") for p in sorted((base / "corpora").iterdir())}
        with (base / "questions_df.csv").open(encoding="utf-8", newline="") as fh:
            qs = [r["question"] for r in csv.DictReader(fh)]
        return docs, qs[:queries]
    rng = random.Random(0)
    words = [f"w{i}" for i in range(20000)]
    docs = {f"d{i}": " ".join(rng.choice(words) for _ in range(50000)) for i in range(5)}
    return docs, [" ".join(rng.choice(words) for _ in range(8)) for _ in range(queries)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window", type=int, default=200)
    ap.add_argument("--queries", type=int, default=472)
    ap.add_argument("--k", type=int, default=20)
    args = ap.parse_args()
    docs, questions = corpus(args.queries)
    rows = []
    table, t, m = measured(lambda: chunk_corpus(f"tokens:{args.window}", docs))
    rows.append(("chunk: ctxeval tokens:N", t, m, f"{len(table)} chunks"))
    try:
        import chonkie

        size = int(np.mean(table.end - table.start))
        chunker = chonkie.TokenChunker(chunk_size=size)
        out, t, m = measured(lambda: [chunker(text) for text in docs.values()])
        rows.append(("chunk: chonkie TokenChunker", t, m, f"{sum(map(len, out))} chunks"))
    except ImportError:
        rows.append(("chunk: chonkie", float("nan"), float("nan"), "not installed"))
    texts = table.chunk_texts()
    ours, t_i, m_i = measured(lambda: BM25(texts))
    _found, t_s, m_s = measured(lambda: [ours.search(q, args.k)[0] for q in questions])
    rows.append(("BM25: ctxeval (numpy), index (terms included)", t_i, m_i, ""))
    rows.append((f"BM25: ctxeval, top {args.k} x {len(questions)}", t_s, m_s, ""))
    try:
        import bm25s

        index = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
        _, t, m = measured(lambda: index.index([re.findall(r"\w+", x.lower()) for x in texts], show_progress=False))
        rows.append(("BM25: bm25s lucene, index (terms included)", t, m, ""))
        qs = [re.findall(r"\w+", q.lower()) for q in questions]
        theirs, t, m = measured(lambda: [np.asarray(index.get_scores(q)) for q in qs])
        rows.append((f"BM25: bm25s, scores x {len(questions)}", t, m, "every chunk scored"))
        diff = max(float(np.max(np.abs(ours.scores(q) - s))) for q, s in zip(questions, theirs))
        rows.append(("BM25: largest |ctxeval - bm25s|", float("nan"), float("nan"), f"{diff:.2e}"))
    except ImportError:
        rows.append(("BM25: bm25s", float("nan"), float("nan"), "not installed"))
    try:
        from rank_bm25 import BM25Okapi

        okapi, t, m = measured(lambda: BM25Okapi([re.findall(r"\w+", x.lower()) for x in texts]))
        rows.append(("BM25: rank_bm25 Okapi, index (terms included)", t, m, ""))
        _, t, m = measured(lambda: [okapi.get_scores(re.findall(r"\w+", q.lower())) for q in questions])
        rows.append((f"BM25: rank_bm25, scores x {len(questions)}", t, m, "another idf"))
    except ImportError:
        rows.append(("BM25: rank_bm25", float("nan"), float("nan"), "not installed"))
    print(f"{sum(map(len, docs.values())):,} characters, {len(docs)} documents, {len(questions)} questions")
    print(f"{'step':42s} {'seconds':>9s} {'peak MiB':>9s}")
    for name, t, m, note in rows:
        print(f"{name:42s} {t:9.3f} {m:9.1f}  {note}")


if __name__ == "__main__":
    main()
