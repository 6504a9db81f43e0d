"""Per-run chunk tables (RagConfig.chunk_tables): one session scores every run with its own chunking,
and each run's values are those of a session holding that run and its table alone (the oracle: the
single-table path, itself checked against Chroma's figures and brute force)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxeval
from ctxeval import Chunks, ConfigError, Run, SpanLabels

DOC = "".join(f"word{i:03d} " for i in range(60))  # 480 characters, 60 words-v1 tokens
MEASURES = ["SpanRecall@3", "SpanIoU@3", "nDCG@2", "P@2", "SpanRecall@20tok", "nDCG@20tok", "PrecisionOmega"]


@st.composite
def chunking(draw: st.DrawFn, name: str) -> tuple[Chunks, Run]:
    """A chunking of DOC (cuts at random places, maybe overlapping by a few characters) and a run
    ranking its chunks at random for two queries."""
    cuts = sorted(set(draw(st.lists(st.integers(1, len(DOC) - 1), min_size=1, max_size=12))))
    bounds = [0, *cuts, len(DOC)]
    overlap = draw(st.integers(0, 5))
    table = {f"{name}{i}": ("d", max(0, a - overlap), b) for i, (a, b) in enumerate(itertools.pairwise(bounds))}
    ids = list(table)
    run = {}
    for q in ("q1", "q2"):
        picked = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=len(ids), unique=True))
        run[q] = {c: float(len(picked) - i) for i, c in enumerate(picked)}
    return Chunks.from_dict(table), Run.coerce(run, name=name)


SPANS = SpanLabels.from_records(
    [
        {"query_id": "q1", "doc_id": "d", "start": 40, "end": 90, "grade": 2},
        {"query_id": "q1", "doc_id": "d", "start": 300, "end": 320, "grade": 1},
        {"query_id": "q2", "doc_id": "d", "start": 200, "end": 260, "grade": 1},
    ]
)


@settings(max_examples=40, deadline=None)
@given(chunking("a"), chunking("b"))
def test_each_run_scored_by_its_own_table_as_alone(a: tuple[Chunks, Run], b: tuple[Chunks, Run]) -> None:
    (ta, ra), (tb, rb) = a, b
    docs = {"d": DOC}
    both = ctxeval.evaluate(SPANS, [ra, rb], MEASURES, rag={"chunk_tables": {"a": ta, "b": tb}, "documents": docs})
    for run, table, got in ((ra, ta, both.runs[0]), (rb, tb, both.runs[1])):
        alone = ctxeval.evaluate(SPANS, run, MEASURES, rag={"chunks": table, "documents": docs}).runs[0]
        assert got.qids == alone.qids
        for m in got.values:
            np.testing.assert_array_equal(got.values[m], alone.values[m], err_msg=f"{run.name} {m}")


def test_chunk_id_labels_with_per_run_tables_pack_each_runs_own_judged_chunks() -> None:
    """Chunk-id qrels judging the chunks of two chunkings: each run's ideal at a budget packs the
    judged chunks of its own table only (the other chunking's chunks are no candidates for it)."""
    docs = {"d": DOC}
    ta = Chunks.from_dict({"a0": ("d", 0, 80), "a1": ("d", 80, 160)})  # 10 tokens each
    tb = Chunks.from_dict({"b0": ("d", 0, 40), "b1": ("d", 40, 80)})  # 5 tokens each
    qrels = {"q1": {"a0": 1, "b1": 1}}
    ra = Run.coerce({"q1": {"a1": 2.0, "a0": 1.0}}, name="a")
    rb = Run.coerce({"q1": {"b1": 2.0, "b0": 1.0}}, name="b")
    got = ctxeval.evaluate(qrels, [ra, rb], ["nDCG@10tok"], rag={"chunk_tables": {"a": ta, "b": tb}, "documents": docs})
    # a: a1 (irrelevant) fills the 10 tokens, the ideal holds a0 alone: 0; b: b1 first, its ideal b1: 1
    assert got.runs[0].values[got.measures[0]].tolist() == [0.0]
    assert got.runs[1].values[got.measures[0]].tolist() == [1.0]
    with pytest.raises(ConfigError, match="judged chunks are not in the chunk table"):
        ctxeval.evaluate(qrels, [ra], ["nDCG@10tok"], rag={"chunks": ta, "documents": docs})


def test_a_table_naming_no_run_is_an_error() -> None:
    ta, ra = Chunks.from_dict({"a0": ("d", 0, 80)}), Run.coerce({"q1": {"a0": 1.0}}, name="a")
    with pytest.raises(ConfigError, match=r"chunk table x=\.\.\.: no run is named 'x' \(the runs: 'a'\)"):
        ctxeval.evaluate(SPANS, ra, ["SpanRecall"], rag={"chunk_tables": {"x": ta}, "documents": {"d": DOC}})
    with pytest.raises(ConfigError, match="chunk_tables must map run names"):
        ctxeval.RagConfig(chunk_tables=["a"])
