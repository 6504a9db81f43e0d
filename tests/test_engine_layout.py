"""The engine's segment machinery against a plain-Python oracle.

``prepare`` ranks grouped, score-ordered runs without sorting and joins qrels query by query through
hashes; anything else goes through the general sort-and-join path. Both must give exactly what a
direct implementation of the rules gives: queries byte-wise ascending, rows by float32 score
descending then doc id descending (``ties="trec"``) or in file order (``ties="input"``), judged rows
and their grades, every query's judged grades descending.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxeval import DuplicateError, Qrels, Run
from ctxeval import _segments
from ctxeval._engine import prepare
from ctxeval._segments import duplicate_free, layout

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
    qrels = pl.DataFrame(qrows, schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}, orient="row")
    return run, qrels, draw(st.sampled_from(["zero", "ignore"]))


def oracle(run: pl.DataFrame, qrels: pl.DataFrame, missing: str, ties: str) -> dict[str, object]:
    judged: dict[str, dict[str, int]] = {}
    for q, d, g in qrels.iter_rows():
        judged.setdefault(q, {})[d] = g
    per_q: dict[str, list[tuple[int, str, float]]] = {}
    for i, (q, d, s) in enumerate(run.iter_rows()):
        per_q.setdefault(q, []).append((i, d, s))
    both = sorted(set(judged) & set(per_q), key=lambda s: s.encode())
    qids = sorted(judged, key=lambda s: s.encode()) if missing == "zero" else both
    r_off, j_idx, j_grade, q_off, q_grade = [0], [], [], [0], []
    for q in qids:
        rows = per_q.get(q, [])
        if ties == "trec":
            rows = sorted(rows, key=lambda r: r[1].encode(), reverse=True)  # doc id descending ...
            rows = sorted(rows, key=lambda r: -float(np.float32(r[2])))  # ... within float32 score descending
        for pos, (_, d, _) in enumerate(rows):
            if d in judged[q]:
                j_idx.append(r_off[-1] + pos)
                j_grade.append(judged[q][d])
        r_off.append(r_off[-1] + len(rows))
        grades = sorted(judged[q].values(), reverse=True)
        q_grade.extend(grades)
        q_off.append(q_off[-1] + len(grades))
    return {
        "qids": qids,
        "r_off": r_off,
        "j_idx": j_idx,
        "j_grade": j_grade,
        "q_off": q_off,
        "q_grade": q_grade,
        "has_run": [q in per_q for q in qids],
    }


def observed(run: pl.DataFrame, qrels: pl.DataFrame, missing: str, ties: str, scanned: bool = False) -> dict[str, object]:
    r = Run(run, "r")
    if scanned:  # as the file reader does: the duplicate test also records doc hashes and score order
        duplicate_free(r.frame, r.layout)
    data = prepare(Qrels(qrels), r, keep_frame=True, policies={"missing": missing, "ties": ties})
    out = {name: np.asarray(getattr(data, name)).tolist() for name in ("r_off", "j_idx", "j_grade", "q_off", "q_grade", "has_run")}
    out["qids"] = data.qids
    # the kept frame holds the ranked rows, consistent with the offsets and the judged rows
    frame = data.frame
    assert frame is not None and frame.height == data.n_rows
    # the judged rows' query and rank (possibly handed over by the fast path) agree with the offsets
    seg = np.searchsorted(data.r_off, data.j_idx, side="right") - 1
    assert data.j_seg.tolist() == seg.tolist()
    assert data.j_rank.tolist() == (data.j_idx - data.r_off[seg] + 1).tolist()
    return out


@given(cases(), st.sampled_from(["trec", "input"]), st.booleans())
def test_prepare_matches_oracle(case: tuple[pl.DataFrame, pl.DataFrame, str], ties: str, scanned: bool) -> None:
    run, qrels, missing = case
    assert observed(run, qrels, missing, ties, scanned) == oracle(run, qrels, missing, ties)


@given(cases())
def test_prepare_matches_oracle_in_small_chunks(case: tuple[pl.DataFrame, pl.DataFrame, str]) -> None:
    run, qrels, missing = case
    old = _segments._BLOCK_ROWS
    _segments._BLOCK_ROWS = 3  # several blocks even for tiny runs
    try:
        assert observed(run, qrels, missing, "trec", scanned=True) == oracle(run, qrels, missing, "trec")
        assert observed(run, qrels, missing, "input") == oracle(run, qrels, missing, "input")
    finally:
        _segments._BLOCK_ROWS = old


def test_kept_frame_is_in_rank_order() -> None:
    run = pl.DataFrame(
        {"query_id": ["2", "2", "2", "10", "10", "x"], "doc_id": ["a", "c", "b", "a", "b", "a"], "score": [3.0, 1.0, 1.0, 1.0, 2.0, 1.0]}
    )
    qrels = pl.DataFrame({"query_id": ["10", "2"], "doc_id": ["a", "b"], "relevance": [1, 2]})
    data = prepare(Qrels(qrels), Run(run, "r"), keep_frame=True, policies={"missing": "ignore"})
    assert data.qids == ["10", "2"]  # byte-wise: "10" < "2"
    assert data.frame is not None
    assert data.frame.rows() == [("10", "b", 2.0), ("10", "a", 1.0), ("2", "a", 3.0), ("2", "c", 1.0), ("2", "b", 1.0)]
    assert data.j_idx.tolist() == [1, 4] and data.j_grade.tolist() == [1, 2]


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


@given(pair_frames(), st.sampled_from([3, 1 << 18]))
def test_duplicate_free_matches_counting(df: pl.DataFrame, block: int) -> None:
    expected = max(Counter(df.rows()).values()) == 1
    old = _segments._BLOCK_ROWS
    _segments._BLOCK_ROWS = block
    try:
        assert duplicate_free(df) == expected
        assert duplicate_free(df, layout(df)) == expected
    finally:
        _segments._BLOCK_ROWS = old


def test_duplicate_check_on_candidates_compares_strings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal fingerprints are only candidates: distinct docs behind them are not duplicates."""
    df = pl.DataFrame({"query_id": ["q"] * 4 + ["r"] * 3, "doc_id": ["a", "b", "c", "d", "a", "b", "a"]})
    monkeypatch.setattr(_segments, "id_hash", lambda ids: np.zeros(ids.len(), dtype=np.uint64))  # all collide
    lay = layout(df)
    assert not duplicate_free(df, lay)  # r has "a" twice
    assert duplicate_free(df.head(4), layout(df.head(4)))


def test_layout_segments() -> None:
    df = pl.DataFrame({"query_id": ["b", "b", "a", "c", "c", "c"], "doc_id": list("xyzxyz")})
    lay = layout(df)
    assert lay.heads.to_list() == ["b", "a", "c"] and lay.lengths.tolist() == [2, 1, 3] and lay.starts.tolist() == [0, 2, 3]
    assert lay.grouped
    assert not layout(pl.DataFrame({"query_id": ["a", "b", "a"], "doc_id": list("xyz")})).grouped
    assert lay.same_segment().tolist() == [True, False, False, True, True]


def test_hash_collision_in_probe_falls_back_to_exact_join(monkeypatch: pytest.MonkeyPatch) -> None:
    """All doc hashes equal: the query-wise probe sees false matches, the string check rejects them,
    and the exact join gives the right judged rows."""
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["c", "x"], "relevance": [2, 1]})
    expected = oracle(run, qrels, "ignore", "trec")
    monkeypatch.setattr(_segments, "id_hash", lambda ids: np.full(ids.len(), 7, dtype=np.uint64))
    got = prepare(Qrels(qrels), Run(run, "r"), policies={"missing": "ignore"})
    assert got.j_idx.tolist() == expected["j_idx"] and got.j_grade.tolist() == expected["j_grade"]


def test_duplicate_error_names_both_lines_in_a_large_grouped_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    lines = [f"q{q} Q0 d{d} {d + 1} {100 - d} tag\n" for q in range(50) for d in range(40)]
    lines.insert(1234, "q30 Q0 d7 99 -1.0 tag\n")  # q30/d7 again, inside q30's block
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with pytest.raises(DuplicateError) as info:
        Run.from_file(path)
    assert f"duplicate run entry for query 'q30', doc 'd7' on lines 1208 and 1235" in str(info.value)


@given(cases(), st.sampled_from([1, 24, 1 << 20]))
def test_prepare_from_files_read_compactly_matches_oracle(case: tuple[pl.DataFrame, pl.DataFrame, str], chunk: int) -> None:
    """The same cases through the files' polars reader (the light reader off), read in pieces of
    ``chunk`` bytes: query ids reduced to segments piece by piece (a query may span pieces), the
    query id column rebuilt only where a general path needs it."""
    import tempfile
    from pathlib import Path

    from ctxeval import _io, _light

    run, qrels, missing = case
    old = (_io._READ_CHUNK, _light.LIGHT_MAX_BYTES)
    _io._READ_CHUNK, _light.LIGHT_MAX_BYTES = chunk, 0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rp, qp = Path(tmp) / "run.txt", Path(tmp) / "qrels.txt"
            rp.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for i, (q, d, s) in enumerate(run.iter_rows())), encoding="utf-8")
            qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.iter_rows()), encoding="utf-8")
            r, qr = Run.from_file(rp), Qrels.from_file(qp)
            assert r.name == "tag" and r.frame.equals(run) and qr.frame.equals(qrels)
            r, qr = Run.from_file(rp), Qrels.from_file(qp)  # again: prepare without the rebuilt columns
            assert r._df is not None and ("query_id" in r._df.columns) == (not r.layout.grouped)
            data = prepare(qr, r, policies={"missing": missing, "ties": "trec"})
    finally:
        _io._READ_CHUNK, _light.LIGHT_MAX_BYTES = old
    got = {name: np.asarray(getattr(data, name)).tolist() for name in ("r_off", "j_idx", "j_grade", "q_off", "q_grade", "has_run")}
    got["qids"] = data.qids
    assert got == oracle(run, qrels, missing, "trec")
