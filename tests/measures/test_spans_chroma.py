"""Chroma-compatible span measures against what Chroma's own code computed (``expected.json`` in
../shared/data/chroma-chunking: chunking_evaluation run unmodified on its general evaluation data, two
chunkings, BM25's top 5 per question), and Chroma's placement of chunk texts against the ranges its
code gave. Nothing of Chroma's is in the tree: the data is read from ../shared, or the tests skip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import ctxeval
from chroma_data import expected, true_windows
from ctxeval import Chunks, SpanLabels
from ctxeval._io.locate import chroma_find
from shared_data import shared_data

CHUNKINGS = ("fixed_token_200_0", "fixed_token_400_200")
CHROMA_MEASURES = {
    "iou": "SpanIoU(mode=chroma)@5",
    "recall": "SpanRecall(mode=chroma)@5",
    "precision": "SpanPrecision(mode=chroma)@5",
    "precision_omega": "PrecisionOmega(mode=chroma)",
}


def _inputs(base: Path, chunking: str) -> tuple[SpanLabels, Chunks, dict]:
    exp = expected(base)["chunkings"][chunking]
    labels = SpanLabels.from_chroma(base / "questions_df.csv")
    table = Chunks.from_records(
        [
            {"chunk_id": f"{corpus}:{i}", "doc_id": corpus, "start": s, "end": e}
            for corpus, ranges in exp["chunks"].items()
            for i, (s, e) in enumerate(ranges)
        ],
        source=f"{chunking} (Chroma's mapped ranges)",
    )
    run = {
        str(q["row"]): {f"{q['corpus_id']}:{c}": float(5 - rank) for rank, c in enumerate(q["retrieved_chunk_ids"])}
        for q in exp["questions"]
    }
    return labels, table, run


@pytest.fixture(scope="module")
def base() -> Path:
    return shared_data("chroma-chunking")


@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_compatible_mode_equals_chroma_on_every_question(base: Path, chunking: str) -> None:
    labels, table, run = _inputs(base, chunking)
    exp = expected(base)["chunkings"][chunking]
    res = ctxeval.evaluate(labels, run, list(CHROMA_MEASURES.values()), chunks=table)
    r = res.runs[0]
    assert len(r.qids) == len(exp["questions"]) == 472
    for field, name in CHROMA_MEASURES.items():
        got = r.per_query(name)
        want = {str(q["row"]): q[field] for q in exp["questions"]}
        worst = max(abs(got[q] - v) for q, v in want.items())
        assert worst <= 1e-12, (chunking, field, worst)
        # the means and population standard deviations Chroma reports, over the questions in its order
        values = np.array([got[str(q["row"])] for q in exp["questions"]])
        assert abs(r.mean(name) - exp["means"][field]["mean"]) <= 1e-12
        assert abs(float(np.std(values)) - exp["means"][field]["std"]) <= 1e-12


@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_exact_mode_departs_from_chroma_only_where_the_quirks_apply(base: Path, chunking: str) -> None:
    """Recall: references never overlap here, so the modes agree. Precision and IoU: they differ
    exactly on the questions whose retrieved chunks share characters (the double count); precision_Omega
    exactly where a chunk only touches a reference (Chroma's H takes it)."""
    labels, table, run = _inputs(base, chunking)
    exp = expected(base)["chunkings"][chunking]
    names = [*CHROMA_MEASURES.values(), "SpanIoU@5", "SpanRecall@5", "SpanPrecision@5", "PrecisionOmega"]
    r = ctxeval.evaluate(labels, run, names, chunks=table).runs[0]
    docs = {q["row"]: q["retrieved"] for q in exp["questions"]}
    refs: dict[str, list[tuple[int, int]]] = {}
    for q, _, s, e, _ in labels.rows():
        refs.setdefault(q, []).append((s, e))
    for q in r.qids:
        chunks = docs[int(q)]
        marks = np.zeros(max(e for _, e in chunks) + 1, dtype=np.int64)
        for s, e in chunks:
            marks[s:e] += 1
        doubled = bool((marks > 1).any())
        assert r.per_query("SpanRecall@5")[q] == pytest.approx(r.per_query(CHROMA_MEASURES["recall"])[q], abs=1e-12)
        same_p = abs(r.per_query("SpanPrecision@5")[q] - r.per_query(CHROMA_MEASURES["precision"])[q]) <= 1e-12
        assert same_p != doubled or r.per_query("SpanPrecision@5")[q] == 0.0, q
        if not doubled:
            assert r.per_query("SpanIoU@5")[q] == pytest.approx(r.per_query(CHROMA_MEASURES["iou"])[q], abs=1e-12)
        corpus = labels.doc[labels.query == q][0]
        ranges = expected(base)["chunkings"][chunking]["chunks"][corpus]
        touch_only = any(
            (cs == e or ce == s)
            and not (min(ce, e) > max(cs, s))
            and not any(min(ce, e2) > max(cs, s2) for s2, e2 in refs[q])
            for cs, ce in ranges
            for s, e in refs[q]
        )
        same_o = r.per_query("PrecisionOmega")[q] == pytest.approx(
            r.per_query(CHROMA_MEASURES["precision_omega"])[q], abs=1e-12
        )
        assert same_o != touch_only, q
    # the double count is the bulk of the difference on the sliding window (the README: iou 0.0271 vs 0.0378)
    if chunking == "fixed_token_400_200":
        assert r.mean("SpanIoU@5") > r.mean(CHROMA_MEASURES["iou"]) * 1.3


@pytest.mark.parametrize("chunking", CHUNKINGS)
def test_chroma_placement_gives_chromas_ranges(base: Path, chunking: str) -> None:
    """The chunk texts rebuilt from the true (sequential) positions, placed by Chroma's rule, land on
    the ranges Chroma's code gave: the first copy of a repeated passage, one character short where a
    trailing period was cut. A fixed-token chunker's windows tile the text: 200/0 ends where the next
    chunk starts, 400/200 where the chunk after next starts."""
    exp = expected(base)["chunkings"][chunking]
    step = 1 if chunking.endswith("_0") else 2
    placed = exact = 0
    for corpus, ranges in exp["chunks"].items():
        text = (base / "corpora" / f"{corpus}.md").read_text(encoding="utf-8")
        texts = {f"{corpus}:{i}": (corpus, text[s:e]) for i, (s, e) in enumerate(true_windows(exp, corpus, text, step))}
        table = Chunks.locate(texts, {corpus: text}, mode="chroma")
        assert [[int(s), int(e)] for s, e in zip(table.start, table.end)] == ranges
        placed += len(ranges)
        exact += sum(chroma_find(t, text)[2] == "exact" for _, t in texts.values())
    trimmed = sum(v["match_kinds"]["trailing_period_trimmed"] for v in exp["chunk_mapping_diagnostics"].values())
    assert placed - exact == trimmed


def test_the_exact_placement_puts_repeated_passages_at_their_own_copy(base: Path) -> None:
    exp = expected(base)["chunkings"]["fixed_token_200_0"]
    corpus = "finance"
    text = (base / "corpora" / f"{corpus}.md").read_text(encoding="utf-8")
    windows = true_windows(exp, corpus, text)
    texts = {f"c{i}": (corpus, text[s:e]) for i, (s, e) in enumerate(windows)}
    table = Chunks.locate(texts, {corpus: text})
    assert list(zip(table.start.tolist(), table.end.tolist())) == windows
    moved = sum(w[0] != r[0] for w, r in zip(windows, exp["chunks"][corpus]))
    assert moved > 100  # the placements Chroma moved to a first copy
