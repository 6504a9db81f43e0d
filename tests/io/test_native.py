"""The compiled TREC scanner (``ctxeval._io.native``, ``ctx_scan`` of ``_native.c``) against the reader's rule.

The reference is the line-by-line tier (``trec._slow_trec``, the rule written out) and Python's own
``float()`` / ``int()``: whenever the scanner reads a file it must give exactly the rows, values
(bit for bit) and run tag the reference gives; it may decline (None) only what lies outside its
remit (non-ASCII bytes, a NUL, a value outside the plain forms, a wrong number of fields), and on
plain ASCII input it must read. Files are cut into pieces of a few dozen bytes, so queries, ids and
tags meet the pieces' borders and the threads' hand-over; mapped files end at a page's border.
"""

from __future__ import annotations

import mmap
import os
import shutil
import struct
import subprocess
import sys
import sysconfig
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxeval import CtxevalError, FormatError, Run, _native
from ctxeval._core.ids import ArrayIds
from ctxeval._io import native
from ctxeval._io.exact import frame as exact_frame
from ctxeval._io.exact import tag_of
from ctxeval._io.frames import frame_of

pytestmark = pytest.mark.skipif(not _native.available(), reason=f"compiled kernels {_native.status()}")


def _rows(cols, kind: str) -> list[tuple]:
    value = "score" if kind == "run" else "relevance"
    return [tuple(r) for r in frame_of(cols, value).iter_rows()]


def _reference(data: bytes, kind: str) -> tuple[list[tuple], str | None]:
    df = exact_frame(data, kind, "ref")
    if df.height == 0:
        raise CtxevalError("no lines")  # (the public readers refuse an empty file)
    value = "score" if kind == "run" else "relevance"
    tag = tag_of(df["tag"]) if kind == "run" else None
    return [tuple(r) for r in df.select(["query_id", "doc_id", value]).iter_rows()], tag


def _bits(rows: list[tuple]) -> list[tuple]:
    """Rows with float values as their bit patterns (-0.0 and 0.0 differ; so would two roundings)."""
    return [(q, d, struct.pack("<d", v) if isinstance(v, float) else v) for q, d, v in rows]


@pytest.fixture(autouse=True)
def small_pieces() -> Iterator[None]:
    """A piece every line or two: queries, ids and tags meet the pieces' borders everywhere."""
    saved = native._PIECE
    native._PIECE = 48
    try:
        yield
    finally:
        native._PIECE = saved


# ---------------------------------------------------------------- generated plain files
_QIDS = st.sampled_from(["1", "q1", "q2", "301", "query-0000000000000000042", "Q", "#x"])
_DOCS = st.one_of(
    st.sampled_from(["d1", "D6751803", "abcdefgh", "doc", "clueweb09-en0000-00-00000"]),
    st.text(alphabet="abcXYZ019-_.:/\x0b", min_size=1, max_size=30),
)
_TAGS = st.sampled_from(["run", "run", "run", "bm25", "a" * 40])


def _score_text(draw: st.DrawFn) -> str:
    x = draw(st.floats(allow_nan=False, allow_infinity=False, width=64))
    form = draw(st.sampled_from(["repr", "%.6f", "%.17g", "%e", "%.3E", "int", "lead", "dot"]))
    if form == "repr":
        return repr(x)
    if form == "int":
        return str(int(x)) if abs(x) < 1e30 else repr(x)
    if form == "lead":  # leading zeros and a plus sign
        return ("+" if x >= 0 else "-") + "000" + repr(abs(x))
    if form == "dot":  # 5. and .5
        return draw(st.sampled_from(["5.", ".5", "-.25", "+0.", "0.000000000000000000000000001", "1" * 25]))
    return form % x


@st.composite
def _run(draw: st.DrawFn) -> bytes:
    lines = []
    for _ in range(draw(st.integers(1, 40))):
        sep = draw(st.sampled_from([" ", "\t", "  ", " \t "]))
        lead = draw(st.sampled_from(["", "", " ", "\t"]))
        fields = [draw(_QIDS), "Q0", draw(_DOCS), str(draw(st.integers(0, 1000))), _score_text(draw), draw(_TAGS)]
        if fields[0].startswith("#"):
            fields[0] = "q#"
        lines.append(lead + sep.join(fields) + draw(st.sampled_from(["", " ", "\r"])))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["", "   ", "# a comment with many words in it", "#"])))
    end = draw(st.sampled_from(["\n", ""]))  # a line's own "\r" before it: a CRLF line end
    return ("\n".join(lines) + end).encode()


@st.composite
def _qrels(draw: st.DrawFn) -> bytes:
    grade = st.one_of(
        st.integers(-(2**63) + 1, 2**63 - 1).map(str),
        st.sampled_from(["0", "1", "2.0", "3.", "-1", "+2", "007", "9223372036854775807", "-9223372036854775807"]),
    )
    lines = [
        draw(st.sampled_from(["", " "])) + " ".join([draw(_QIDS).replace("#", "h"), "0", draw(_DOCS), draw(grade)])
        for _ in range(draw(st.integers(1, 40)))
    ]
    return ("\n".join(lines) + "\n").encode()


@settings(max_examples=300, deadline=None)
@given(data=_run())
def test_a_plain_run_is_read_as_the_rule_reads_it(data: bytes) -> None:
    try:
        expected, tag = _reference(data, "run")
    except FormatError:  # a score that rounds beyond a double ("%.3E" of the largest one)
        expected, tag = [], None
    got = native.scan_bytes(data, "run")
    if not expected:
        assert got is None
    else:
        assert got is not None, "the scanner declined a plain ASCII run"
        assert _bits(_rows(got.columns, "run")) == _bits(expected)
        assert got.tag == tag
        assert isinstance(got.columns.doc, ArrayIds)


@settings(max_examples=200, deadline=None)
@given(data=_qrels())
def test_plain_qrels_are_read_as_the_rule_reads_them(data: bytes) -> None:
    expected, _ = _reference(data, "qrels")
    got = native.scan_bytes(data, "qrels")
    assert got is not None, "the scanner declined plain ASCII qrels"
    assert _rows(got.columns, "qrels") == expected


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=200), kind=st.sampled_from(["run", "qrels"]))
def test_any_bytes_are_read_as_the_rule_reads_them_or_declined(data: bytes, kind: str) -> None:
    try:
        expected: list[tuple] | None = _reference(data, kind)[0] or None
    except CtxevalError:  # the rule refuses the file: the scanner must decline it
        expected = None
    got = native.scan_bytes(data, kind)
    if got is not None:
        assert expected is not None, "the scanner read a file the rule refuses"
        assert _bits(_rows(got.columns, kind)) == _bits(expected)


# ---------------------------------------------------------------- values
@settings(max_examples=500, deadline=None)
@given(x=st.floats(allow_nan=False, allow_infinity=False), form=st.sampled_from(["%r", "%.17g", "%.9f", "%.20e"]))
def test_a_score_is_the_correctly_rounded_double_of_its_text(x: float, form: str) -> None:
    text = repr(x) if form == "%r" else form % x
    got = native.scan_bytes(f"q Q0 d 1 {text} t\n".encode(), "run")
    assert got is not None
    assert struct.pack("<d", got.columns.values[0]) == struct.pack("<d", float(text)), text


@pytest.mark.parametrize(
    "text",
    [
        "9007199254740993",  # 2^53 + 1: beyond the fast path's mantissa
        "0.1",
        "1e22",
        "1e23",  # beyond the exact powers of ten
        "123456789012345678901234567890",
        "4.9406564584124654e-324",  # the smallest subnormal
        "2.4703282292062328e-324",  # rounds up to it
        "2.4703282292062327e-324",  # rounds down to zero
        "1.7976931348623157e308",
        "-0",
        "-0.0e5",
        "0.30000000000000004",
        "1e-400",
        "00000000000000000000000000000000000001.5",
        "1." + "0" * 300,
    ],
)
def test_hard_scores(text: str) -> None:
    got = native.scan_bytes(f"q Q0 d 1 {text} t\n".encode(), "run")
    if len(text) >= 255:
        assert got is None or struct.pack("<d", got.columns.values[0]) == struct.pack("<d", float(text))
        return
    assert got is not None
    assert struct.pack("<d", got.columns.values[0]) == struct.pack("<d", float(text)), text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775807", -(2**63) + 1),
        ("-9223372036854775808", -(2**63)),  # a C long's least value, as trec_eval reads it
        ("2.000", 2),
        ("+0", 0),
    ],
)
def test_grades_up_to_64_bits(text: str, value: int) -> None:
    got = native.scan_bytes(f"q 0 d {text}\n".encode(), "qrels")
    assert got is not None
    assert int(got.columns.values[0]) == value


@pytest.mark.parametrize(
    "text", ["9223372036854775808", "-9223372036854775809", "1e3", ".5", "2.5", "1_0", "", "nan", "0x1"]
)
def test_other_grades_go_to_the_next_tier(text: str) -> None:
    assert native.scan_bytes(f"q 0 d {text} \n".encode(), "qrels") is None


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "1e400", "-1e309", "0x1p3", "1_0", ".", "1e", "e5", "--1"])
def test_scores_the_rule_refuses_are_declined(text: str) -> None:
    assert native.scan_bytes(f"q Q0 d 1 {text} t\n".encode(), "run") is None


# ---------------------------------------------------------------- pieces, widths, tags
def _many(n_queries: int, depth: int, doc=lambda q, i: f"d{q}-{i}", tag=lambda q: "run") -> bytes:
    return "".join(
        f"q{q} Q0 {doc(q, i)} {i + 1} {depth - i}.5 {tag(q)}\n" for q in range(n_queries) for i in range(depth)
    ).encode()


def test_queries_spanning_pieces_are_one_query() -> None:
    data = _many(7, 13)
    got = native.scan_bytes(data, "run")
    assert got is not None
    lay = got.columns.layout
    assert lay.heads.tolist() == [f"q{q}" for q in range(7)]
    assert lay.lengths.tolist() == [13] * 7
    assert _rows(got.columns, "run") == _reference(data, "run")[0]


def test_ids_widen_midway() -> None:
    """Short ids first (8-byte slots), then longer doc and query ids in later pieces: the slots widen
    and the earlier pieces' ids are kept."""
    data = _many(3, 5) + b"a-very-long-query-id-of-40-bytes-xxxxxxx Q0 " + b"D" * 70 + b" 1 0.5 run\n"
    got = native.scan_bytes(data, "run")
    assert got is not None
    assert got.columns.doc.a.dtype == np.dtype("S72")
    assert _rows(got.columns, "run") == _reference(data, "run")[0]
    short = native.scan_bytes(_many(2, 3, doc=lambda q, i: "12345678"[: i + 1]), "run")
    assert short is not None and short.columns.doc.a.dtype == np.dtype(">u8")  # the core's packed ids


def test_one_tag_throughout_or_none() -> None:
    same = native.scan_bytes(_many(4, 6), "run")
    other = native.scan_bytes(_many(4, 6, tag=lambda q: "run" if q < 3 else "run2"), "run")
    assert same is not None and same.tag == "run"
    assert other is not None and other.tag is None


def test_interleaved_queries_are_grouped_stably() -> None:
    data = b"q2 Q0 a 1 3 t\nq1 Q0 b 1 2 t\nq2 Q0 c 2 1 t\n"
    got = native.scan_bytes(data, "run")
    assert got is not None
    assert _rows(got.columns, "run") == _reference(data, "run")[0]
    assert got.columns.layout.heads.tolist() == ["q1", "q2"]


# ---------------------------------------------------------------- mapped files
def test_a_file_ending_at_a_page_border(tmp_path: Path) -> None:
    """A file filling whole pages, with and without its last line end: the scanner reads each piece in
    its thread's buffer, followed by a NUL, never past the piece."""
    line = b"q1 Q0 d1 1 0.5 t\n"
    body = line * (mmap.PAGESIZE // len(line) - 1)
    body += b"q1 Q0 d2 2 0.25 " + b"t" * (mmap.PAGESIZE - len(body) - 17) + b"\n"
    assert len(body) == mmap.PAGESIZE
    for data in (body, body[:-1]):
        path = tmp_path / "run.txt"
        path.write_bytes(data)
        got = native.scan_file(path, "run")
        assert got is not None
        assert _rows(got.columns, "run") == _reference(data, "run")[0]


def test_empty_and_comment_only_files_go_to_the_next_tier(tmp_path: Path) -> None:
    for data in (b"", b"# nothing\n\n", b"\xef\xbb\xbf"):
        path = tmp_path / "run.txt"
        path.write_bytes(data)
        assert native.scan_file(path, "run") is None


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"\xef\xbb\xbfq1 Q0 d1 1 0.5 t\n")
    got = native.scan_file(path, "run")
    assert got is not None and _rows(got.columns, "run") == [("q1", "d1", 0.5)]


# ---------------------------------------------------------------- the whole program, with and without
def test_evaluate_gives_the_same_bytes_with_and_without_the_scanner(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    lines = []
    for q in range(300):
        for i in range(60):
            lines.append(f"{q} Q0 D{rng.integers(0, 5000)} {i + 1} {rng.normal():.6f} bm25\n")
    run = tmp_path / "run.txt"
    run.write_text("".join(lines))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 D{d} {q % 3}\n" for q in range(300) for d in rng.integers(0, 5000, 30)))
    outs = []
    for flag in ("1", "0"):
        out = tmp_path / f"out{flag}.json"
        env = {**os.environ, "CTXEVAL_NATIVE": flag}
        cmd = [sys.executable, "-m", "ctxeval", "evaluate", str(qrels), str(run), "-m", "nDCG@10 AP P@5 R@50",
               "--duplicates", "first", "--format", "json", "--per-query", "--output", str(out)]  # fmt: skip
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert outs[0].count(b'"nDCG@10"') > 300  # every query's values are in both


def test_rows_beyond_the_estimate_are_kept() -> None:
    """The columns are sized from the first 64 KB's rows per byte: long lines there, then many short
    ones, outgrow the estimate; the pieces beyond it keep their rows and the columns take them at
    the end, in file order."""
    native._PIECE = 4096
    data = _many(300, 1, doc=lambda q, i: "d" * 230) + _many(400, 50)
    assert len(data) > 1 << 16
    got = native.scan_bytes(data, "run")
    assert got is not None
    assert len(got.columns) == 300 + 400 * 50
    assert _rows(got.columns, "run") == _reference(data, "run")[0]


def test_the_scalar_build_reads_as_the_simd_one(tmp_path: Path) -> None:
    """``_native.c`` without SSE2 (``-DCTX_SCALAR``: what other processors compile) gives the same
    columns and hashes as the build in use, on lines of every shape the masks treat apart."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    if shutil.which(cc[0]) is None:
        pytest.skip("no C compiler")
    source = Path(_native.__file__).with_name("_native.c")
    crc = f"{zlib.crc32(source.read_bytes()):08x}"
    lib_path = tmp_path / "scalar.so"
    cmd = [*cc, "-O2", "-std=c99", "-shared", "-fPIC", "-DCTX_SCALAR", f'-DCTX_SOURCE_CRC="{crc}"', "-o", str(lib_path), str(source)]  # fmt: skip
    subprocess.run(cmd, check=True)
    scalar, why = _native.load(str(lib_path))
    assert scalar is not None, why
    rng = np.random.default_rng(3)
    lines = []
    for q in range(40):
        for i in range(rng.integers(1, 30)):
            sep = [" ", "\t", "  ", " \t"][rng.integers(0, 4)]
            doc = "D" * int(rng.integers(1, 70))
            tail = ["", "\r", " "][rng.integers(0, 3)]
            lines.append(sep.join([f"q{q}", "Q0", doc + str(i), str(i), f"{rng.normal():.6f}", "t"]) + tail)
        lines.append(["", "# c o m m e n t", "   "][rng.integers(0, 3)])
    data = ("\n".join(lines) + "\n").encode()
    simd = native.scan_bytes(data, "run")
    saved = _native.LIB
    _native.LIB = scalar
    try:
        plain = native.scan_bytes(data, "run")
        plain_hash = plain.columns.doc.hash() if plain is not None else None
    finally:
        _native.LIB = saved
    assert simd is not None and plain is not None
    assert _bits(_rows(plain.columns, "run")) == _bits(_rows(simd.columns, "run")) == _bits(_reference(data, "run")[0])
    assert plain_hash is not None and plain_hash.tolist() == simd.columns.doc.hash().tolist()


def test_a_failing_piece_declines_without_leaving_the_others_waiting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each piece waits for the previous one to count its rows: a piece that fails (here a
    MemoryError making the first piece's buffers, whichever thread takes it) still hands on its row
    offset, and the scanner declines the text (no traceback, no wait for ever); the public reader then
    reads it through the next tier, with the same rows."""
    import threading

    buffers, calls = native._Buffers, []

    def failing(*args: object) -> object:
        calls.append(1)
        if len(calls) == 2:  # the first lines' buffers (see _widths), then the first piece's
            raise MemoryError("planted")
        return buffers(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(native, "_Buffers", failing)
    outcome: list[object] = []
    data = _many(20, 10)

    def read() -> None:
        try:
            outcome.append(native.scan_bytes(data, "run"))
        except BaseException as exc:
            outcome.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "the read is still waiting"
    assert outcome == [None]
    calls.clear()
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    assert _rows(Run.from_file(path).columns, "run") == _reference(data, "run")[0]
