"""Hypothesis strategies shared by the tests: runs and qrels as polars frames, with ids whose numeric
and byte-wise orders differ, scores equal in float32 but not in float64, plain ties, repeated pairs."""

from __future__ import annotations

import random

import numpy as np
import polars as pl
from hypothesis import strategies as st

__all__ = ["DOCS", "QIDS", "SCORES", "cases", "pair_frames"]

# ids whose numeric and byte-wise orders differ, with a shared prefix, and non-ASCII
QIDS = ["1", "2", "10", "q", "q1", "é"]
DOCS = ["a", "b", "c", "d10", "d9", "D", "ä", "zz"]
# scores equal in float32 but not in float64, and plain ties
SCORES = [0.5, 1.0, 1.0 + 1e-9, 2.0, 2.0, 3.25]


@st.composite
def cases(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    run_q = draw(st.lists(st.sampled_from(QIDS), unique=True, max_size=5))
    rows: list[tuple[str, str, float]] = []
    for q in run_q:
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=len(DOCS)))
        seg = [(q, d, draw(st.sampled_from(SCORES))) for d in docs]
        rows.append(seg)  # type: ignore[arg-type]
    layout_kind = draw(st.sampled_from(["ranked", "grouped", "shuffled"]))
    rnd = random.Random(draw(st.integers(0, 10**6)))
    flat: list[tuple[str, str, float]] = []
    for seg in rows:  # type: ignore[assignment]
        seg = list(seg)  # type: ignore[arg-type]
        if layout_kind == "ranked":
            rnd.shuffle(seg)
            seg.sort(key=lambda r: -np.float32(r[2]))  # score order, ties in random order
        else:
            rnd.shuffle(seg)
        flat.extend(seg)
    if layout_kind == "shuffled":
        rnd.shuffle(flat)
    qrel_q = draw(st.lists(st.sampled_from(QIDS), unique=True, min_size=1, max_size=5))
    qrows = []
    for q in qrel_q:
        docs = draw(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=4))
        qrows.extend((q, d, draw(st.integers(-1, 3))) for d in docs)
    if draw(st.booleans()):
        rnd.shuffle(qrows)
    if not flat:
        flat = [("zzz", "a", 1.0)]
    run = pl.DataFrame(flat, schema={"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}, orient="row")
    qrels = pl.DataFrame(
        qrows, schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}, orient="row"
    )
    return run, qrels, draw(st.sampled_from(["zero", "ignore"]))


@st.composite
def pair_frames(draw: st.DrawFn) -> pl.DataFrame:
    n_q = draw(st.integers(1, 6))
    rows = []
    for q in range(n_q):
        k = draw(st.integers(1, 7))
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=k, max_size=k))  # may repeat
        rows.extend((str(q), d) for d in docs)
    if draw(st.booleans()):
        random.Random(draw(st.integers(0, 10**6))).shuffle(rows)
    return pl.DataFrame(rows, schema={"query_id": pl.String, "doc_id": pl.String}, orient="row")
