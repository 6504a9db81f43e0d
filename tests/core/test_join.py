"""The one join (``ctxeval._core.join``) and the segment machinery against the plain-Python oracle.

The join ranks grouped, score-ordered runs without sorting and probes the qrels query by query
through hashes; anything else takes the general path. Both must give exactly what the oracle gives.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxeval import Qrels, Run
from ctxeval._core import segments
from ctxeval._core.columns import duplicate_groups, scan
from ctxeval._io.frames import columns_from_frame
from ctxeval._io.ids import SeriesIds
from ctxeval._session import prepare
from oracle import oracle
from strategies import cases, pair_frames

FIELDS = ("r_off", "j_idx", "j_grade", "q_off", "q_grade", "has_run")


def observed(run: pl.DataFrame, qrels: pl.DataFrame, missing: str, ties: str, scanned: bool = False) -> dict:
    r = Run.from_frame(run, name="r")
    if scanned:  # as the file reader does: the duplicate scan also records doc hashes and the tie order
        scan(r.columns, ties=True)
    data = prepare(
        Qrels.from_frame(qrels), r, keep_rows=True, policies={"missing": missing, "ties": ties, "overlap": "any"}
    )
    out = {name: np.asarray(getattr(data, name)).tolist() for name in FIELDS}
    out["qids"] = data.qids
    # the kept rows are the ranked rows, consistent with the offsets
    assert data.rows is not None and len(data.rows.score) == data.n_rows
    # the judged rows' query and rank (possibly handed over by the fast path) agree with the offsets
    seg = np.searchsorted(data.r_off, data.j_idx, side="right") - 1
    assert data.j_seg.tolist() == seg.tolist()
    assert data.j_rank.tolist() == (data.j_idx - data.r_off[seg] + 1).tolist()
    return out


@given(cases(), st.sampled_from(["trec", "input"]), st.booleans())
def test_join_matches_oracle(case: tuple[pl.DataFrame, pl.DataFrame, str], ties: str, scanned: bool) -> None:
    run, qrels, missing = case
    assert observed(run, qrels, missing, ties, scanned) == oracle(run, qrels, missing, ties)


@given(cases())
def test_join_matches_oracle_in_small_blocks(case: tuple[pl.DataFrame, pl.DataFrame, str]) -> None:
    run, qrels, missing = case
    old = segments._BLOCK_ROWS
    segments._BLOCK_ROWS = 3  # several blocks even for tiny runs
    try:
        assert observed(run, qrels, missing, "trec", scanned=True) == oracle(run, qrels, missing, "trec")
        assert observed(run, qrels, missing, "input") == oracle(run, qrels, missing, "input")
    finally:
        segments._BLOCK_ROWS = old


def test_kept_rows_are_in_rank_order() -> None:
    run = pl.DataFrame(
        {
            "query_id": ["2", "2", "2", "10", "10", "x"],
            "doc_id": ["a", "c", "b", "a", "b", "a"],
            "score": [3.0, 1.0, 1.0, 1.0, 2.0, 1.0],
        }
    )
    qrels = pl.DataFrame({"query_id": ["10", "2"], "doc_id": ["a", "b"], "relevance": [1, 2]})
    data = prepare(
        Qrels.from_frame(qrels), Run.from_frame(run, name="r"), keep_rows=True, policies={"missing": "ignore"}
    )
    assert data.qids == ["10", "2"]  # byte-wise: "10" < "2"
    assert data.rows is not None
    ranked = list(zip(data.rows.doc.to_list(), data.rows.score.tolist()))
    assert ranked == [("b", 2.0), ("a", 1.0), ("a", 3.0), ("c", 1.0), ("b", 1.0)]
    assert data.j_idx.tolist() == [1, 4] and data.j_grade.tolist() == [1, 2]


def _has_no_duplicates(df: pl.DataFrame) -> bool:
    cols = columns_from_frame(df.with_columns(pl.lit(0.0).alias("score")), "score")
    return duplicate_groups(cols, scan(cols, ties=False).dup_segments) == []


@given(pair_frames(), st.sampled_from([3, 1 << 18]))
def test_duplicate_scan_matches_counting(df: pl.DataFrame, block: int) -> None:
    expected = max(Counter(df.rows()).values()) == 1
    old = segments._BLOCK_ROWS
    segments._BLOCK_ROWS = block
    try:
        assert _has_no_duplicates(df) == expected
    finally:
        segments._BLOCK_ROWS = old


def test_duplicate_check_on_candidates_compares_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal fingerprints are only candidates: distinct docs behind them are not duplicates."""
    df = pl.DataFrame({"query_id": ["q"] * 4 + ["r"] * 3, "doc_id": ["a", "b", "c", "d", "a", "b", "a"]})
    calls = []

    def collide(self: SeriesIds, lo: int = 0, hi: int | None = None) -> np.ndarray:
        calls.append(lo)
        return np.zeros(len(self) if hi is None else hi - lo, dtype=np.uint64)

    monkeypatch.setattr(SeriesIds, "hash", collide)
    assert not _has_no_duplicates(df)  # r has "a" twice
    assert _has_no_duplicates(df.head(4))
    assert calls  # the fingerprints did all collide


def test_layout_segments() -> None:
    df = pl.DataFrame({"query_id": ["b", "b", "a", "c", "c", "c"], "doc_id": list("xyzxyz"), "score": [0.0] * 6})
    lay = columns_from_frame(df, "score").layout
    assert (
        lay.heads.tolist() == ["b", "a", "c"] and lay.lengths.tolist() == [2, 1, 3] and lay.starts.tolist() == [0, 2, 3]
    )
    assert not lay.heads_sorted
    assert lay.row_segments().tolist() == [0, 0, 1, 2, 2, 2]


def test_hash_collision_in_probe_falls_back_to_exact_join(monkeypatch: pytest.MonkeyPatch) -> None:
    """All doc hashes equal: the query-wise probe sees false matches, the string check rejects them,
    and the exact join gives the right judged rows."""
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["c", "x"], "relevance": [2, 1]})
    expected = oracle(run, qrels, "ignore", "trec")
    calls = []

    def collide(self: SeriesIds, lo: int = 0, hi: int | None = None) -> np.ndarray:
        calls.append(lo)
        return np.full(len(self) if hi is None else hi - lo, 7, dtype=np.uint64)

    monkeypatch.setattr(SeriesIds, "hash", collide)
    got = prepare(Qrels.from_frame(qrels), Run.from_frame(run, name="r"), policies={"missing": "ignore"})
    assert got.j_idx.tolist() == expected["j_idx"] and got.j_grade.tolist() == expected["j_grade"]
    assert calls  # the probe did see the colliding hashes
