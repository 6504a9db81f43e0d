"""TREC files read by the vectorised tier in pieces of whole lines (the compiled scanner off): a query
may span pieces; the result must be what the oracle gives, and a duplicate names both of its lines."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxeval import DuplicateError, Qrels, Run, _native
from ctxeval._io import columnar
from ctxeval._session import prepare
from oracle import oracle
from strategies import cases


@given(cases(), st.sampled_from([1, 24, 1 << 20]))
def test_files_read_in_pieces_match_the_oracle(case: tuple[pl.DataFrame, pl.DataFrame, str], chunk: int) -> None:
    run, qrels, missing = case
    old = (columnar.PIECE, _native.LIB)
    columnar.PIECE, _native.LIB = chunk, None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            rp, qp = Path(tmp) / "run.txt", Path(tmp) / "qrels.txt"
            rp.write_text(
                "".join(f"{q} Q0 {d} {i + 1} {s!r} tag\n" for i, (q, d, s) in enumerate(run.iter_rows())),
                encoding="utf-8",
            )
            qp.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels.iter_rows()), encoding="utf-8")
            r, qr = Run.from_file(rp), Qrels.from_file(qp)
            assert r.name == "tag" and r.frame.equals(run) and qr.frame.equals(qrels)
            data = prepare(qr, r, policies={"missing": missing, "ties": "trec", "overlap": "any"})
    finally:
        columnar.PIECE, _native.LIB = old
    got = {
        name: np.asarray(getattr(data, name)).tolist()
        for name in ("r_off", "j_idx", "j_grade", "q_off", "q_grade", "has_run")
    }
    got["qids"] = data.qids
    assert got == oracle(run, qrels, missing, "trec")


def test_duplicate_error_names_both_lines_in_a_large_grouped_run(tmp_path: Path) -> None:
    lines = [f"q{q} Q0 d{d} {d + 1} {100 - d} tag\n" for q in range(50) for d in range(40)]
    lines.insert(1234, "q30 Q0 d7 99 -1.0 tag\n")  # q30/d7 again, inside q30's block
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with pytest.raises(DuplicateError) as info:
        Run.from_file(path)
    assert "duplicate run entry for query 'q30', doc 'd7' on lines 1208 and 1235" in str(info.value)


@given(
    st.text(alphabet="ab \n\t\x00\x01", max_size=60),
    st.sampled_from([b" ", b"\t"]),
    st.sampled_from([2, 4, 8, 1 << 18]),
)
def test_piece_checks_in_blocks_equal_the_rule(text: str, sep: bytes, block: int) -> None:
    """The fast tier's piece check, done in cache-sized blocks, says what its definition says at every
    position (a doubled separator or a NUL across a block border included): no byte of the other
    separator, no NUL, no two separators in a row."""
    piece = text.encode()
    other = b"\t" if sep == b" " else b" "
    expected = other not in piece and b"\x00" not in piece and sep * 2 not in piece
    old = columnar.BLOCK
    columnar.BLOCK = block
    try:
        assert columnar.plain_piece(piece, sep) == expected
    finally:
        columnar.BLOCK = old
