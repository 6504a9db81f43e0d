"""The reader's tiers against each other on small TREC files (these cases first checked the numpy reader
for small files, which the compiled scanner replaced when the tiers became three).

Whenever the compiled scanner accepts a file, it must give exactly the vectorised tier's frame and
run name (the scanner off); whenever it declines, the next tier decides (and reports errors).
``prepare`` on the scanner's numpy columns must give exactly what a direct implementation of
trec_eval's rules gives.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ctxeval import Qrels, Run, _native
from ctxeval._core.ids import ArrayIds
from ctxeval._io import columnar, native
from ctxeval._io.frames import frame_of
from ctxeval._io.read import read_file
from ctxeval._io.source import open_text
from ctxeval._session import prepare
from oracle import oracle

SHORT_IDS = ["1", "2", "10", "q1", "Q", "d9", "d10", "abcdefgh"]
LONG_IDS = ["clueweb09-en0000-00-00000", "MARCO_00_12345", "abcdefghi"]  # over 8 bytes
SCORES = [
    "1",
    "0.5",
    "-0.5",
    "13.046232",
    "1e-05",
    "2.5E3",
    "+1.25",
    "-0.0",
    "007.50",
    "1.",
    ".5",
    "123456789012345",
    "1234567890123456789",
    "0.1000000000000000055511151231257827",
]
GRADES = ["0", "1", "2", "3", "-1", "+2", "007", "-12"]
LAYOUTS = ["space", "tab", "crlf", "no-final-newline"]


def _text(rows: list[list[str]], layout: str) -> bytes:
    sep = "\t" if layout == "tab" else " "
    end = "\r\n" if layout == "crlf" else "\n"
    text = end.join(sep.join(r) for r in rows)
    return (text if layout == "no-final-newline" else text + end).encode()


@st.composite
def run_files(draw: st.DrawFn) -> tuple[bytes, list[list[str]]]:
    ids = SHORT_IDS + (LONG_IDS if draw(st.booleans()) else [])
    queries = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=4, unique=True))
    tag = draw(st.sampled_from(["run", "tag9"]))
    rows = []
    for q in queries:
        docs = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=6, unique=True))
        for rank, d in enumerate(docs, start=1):
            rows.append(
                [q, "Q0", d, str(rank), draw(st.sampled_from(SCORES)), tag if draw(st.integers(0, 9)) else "other"]
            )
    if draw(st.booleans()):
        rows.reverse()  # queries not contiguous in general
    return _text(rows, draw(st.sampled_from(LAYOUTS))), rows


@st.composite
def qrels_files(draw: st.DrawFn) -> bytes:
    ids = SHORT_IDS + (LONG_IDS if draw(st.booleans()) else [])
    rows = []
    for q in draw(st.lists(st.sampled_from(ids), min_size=1, max_size=4, unique=True)):
        for d in draw(st.lists(st.sampled_from(ids), min_size=1, max_size=5, unique=True)):
            rows.append([q, "0", d, draw(st.sampled_from(GRADES))])
    return _text(rows, draw(st.sampled_from(LAYOUTS)))


needs_scanner = pytest.mark.skipif(not _native.available(), reason=f"compiled kernels {_native.status()}")


def _standard(path: Path, kind: str) -> pl.DataFrame:
    """The file as the vectorised tier reads it (the compiled scanner off)."""
    old = _native.LIB
    _native.LIB = None
    try:
        return frame_of(read_file(path, kind).columns, "score" if kind == "run" else "relevance")  # type: ignore[arg-type]
    finally:
        _native.LIB = old


def _frame(scanned: native.Scanned, kind: str) -> pl.DataFrame:
    return frame_of(scanned.columns, "score" if kind == "run" else "relevance")


def _polars(path: Path, kind: str) -> columnar.Parsed | None:
    with open_text(path, str(path), kind) as text:
        return columnar.read(text, kind)  # type: ignore[arg-type]


@needs_scanner
@given(run_files())
def test_the_scanner_reads_a_run_as_the_vectorised_tier(
    tmp_path_factory: pytest.TempPathFactory, case: tuple[bytes, list[list[str]]]
) -> None:
    data, rows = case
    path = tmp_path_factory.mktemp("light") / "run.txt"
    path.write_bytes(data)
    light = native.scan_file(path, "run")
    assert light is not None  # plain layouts and values are all accepted
    assert _frame(light, "run").equals(_standard(path, "run"))
    tags = {r[5] for r in rows}
    assert light.tag == (rows[0][5] if len(tags) == 1 else None)


@needs_scanner
@given(qrels_files())
def test_the_scanner_reads_qrels_as_the_vectorised_tier(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("light") / "qrels.txt"
    path.write_bytes(data)
    light = native.scan_file(path, "qrels")
    assert light is not None
    assert _frame(light, "qrels").equals(_standard(path, "qrels"))


def _scanned_or_declined(kind: str, line: str, tokens: list[str], convert: type) -> tuple[Any, list | None]:
    """The values the scanner reads from one line per token, and the Python reading of the tokens
    (None when Python refuses one, or when the rule does: an underscore, which float() and int() take)."""
    scanned = native.scan_bytes("".join(line.format(i, t) for i, t in enumerate(tokens)).encode(), kind)
    got = None if scanned is None else scanned.columns.values
    try:
        expected = None if any("_" in t for t in tokens) else [convert(t) for t in tokens]
    except ValueError:
        expected = None
    return got, expected


@needs_scanner
@given(st.lists(st.text(alphabet="0123456789.-+eE_", min_size=1, max_size=22), min_size=1, max_size=40))
def test_numbers_are_float_or_declined(tokens: list[str]) -> None:
    """Every token is read as float() reads it (its sign too, where it rounds to zero), or the file
    is declined (then float() fails or the value is not finite)."""
    got, expected = _scanned_or_declined("run", "q Q0 d{} 1 {} r\n", tokens, float)
    if expected is None or not all(np.isfinite(expected)):
        assert got is None
    else:
        assert got is not None and [float(x) for x in got] == expected
        assert [np.signbit(x) for x in got] == [np.signbit(x) for x in expected]


@needs_scanner
@given(st.lists(st.text(alphabet="0123456789-+_", min_size=1, max_size=21), min_size=1, max_size=40))
def test_integers_are_int_or_declined(tokens: list[str]) -> None:
    got, expected = _scanned_or_declined("qrels", "q 0 d{} {}\n", tokens, int)
    if expected is None or any(not -(2**63) <= v < 2**63 for v in expected):
        assert got is None
    else:
        assert got is not None and got.tolist() == expected


@needs_scanner
@pytest.mark.parametrize(
    "text",
    [
        "# comment\nq Q0 d 1 1.0 r\n",  # comment line
        "q Q0 d 1 1.0 r\n\nq Q0 e 2 0.5 r\n",  # blank line
        "q Q0 d 1 1.0 r extra\n",  # extra column (the standard reader ignores it)
        "q  Q0 d 1 1.0 r\n",  # doubled separator
        " q Q0 d 1 1.0 r\n",  # leading blank
        "q Q0 d 1 nan r\n",
        "q Q0 d 1 1e999 r\n",
        "q Q0 d 1 abc r\n",
        "q Q0 d\xe9 1 1.0 r\n",  # not ASCII
        "q Q0 d 1 1.0 r\rq Q0 e 1 1.0 r\n",  # a lone carriage return
        "",
    ],
)
def test_what_the_rule_refuses_the_scanner_declines(tmp_path: Path, text: str) -> None:
    """Lines the scanner does not vouch for (and a comment line, a blank line, a leading blank, which
    the rule reads: the scanner does too, or declines)."""
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode("utf-8"))
    got = native.scan_file(path, "run")
    refused = any(bad in text for bad in ("extra", "nan", "1e999", "abc", "\xe9", "\rq")) or not text
    assert got is None if refused else got is None or _frame(got, "run").equals(_standard(path, "run"))


@given(st.data(), st.sampled_from(["trec", "input"]))
def test_light_prepare_matches_oracle(tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, ties: str) -> None:
    from strategies import cases

    run, qrels, missing = data.draw(cases())
    # the ids of the shared cases include non-ASCII ones; keep the ASCII rows
    run = run.filter(pl.col("query_id").str.contains("^[ -~]+$") & pl.col("doc_id").str.contains("^[ -~]+$"))
    qrels = qrels.filter(pl.col("query_id").str.contains("^[ -~]+$") & pl.col("doc_id").str.contains("^[ -~]+$"))
    assume(run.height > 0 and qrels.height > 0)
    d = tmp_path_factory.mktemp("lightprep")
    (d / "run.txt").write_text("".join(f"{q} Q0 {doc} 1 {s!r} r\n" for q, doc, s in run.iter_rows()))
    (d / "qrels.txt").write_text("".join(f"{q} 0 {doc} {g}\n" for q, doc, g in qrels.iter_rows()))
    r, q = Run.from_file(d / "run.txt"), Qrels.from_file(d / "qrels.txt")
    if _native.available():
        assert isinstance(r.columns.doc, ArrayIds) and isinstance(q.columns.doc, ArrayIds)  # the scanner's
    got = prepare(q, r, policies={"missing": missing, "ties": ties, "overlap": "any"})
    assert got.rows is None
    expected = oracle(run, qrels, missing, ties)
    observed = {
        name: np.asarray(getattr(got, name)).tolist()
        for name in ("r_off", "j_idx", "j_grade", "q_off", "q_grade", "has_run")
    }
    observed["qids"] = got.qids
    assert observed == expected
    # and the polars columns of the same data agree
    std = prepare(
        Qrels.from_frame(q.frame),
        Run.from_frame(r.frame, name="r"),
        policies={"missing": missing, "ties": ties, "overlap": "any"},
    )
    assert (
        std.qids == got.qids and std.j_idx.tolist() == got.j_idx.tolist() and std.r_off.tolist() == got.r_off.tolist()
    )


@needs_scanner
@pytest.mark.parametrize("user_blas", [None, "2"])
def test_cli_on_small_files_starts_light(tmp_path: Path, user_blas: str | None) -> None:
    """What `ctxeval evaluate` of classical measures on small TREC files loads (the compiled scanner
    reads them; without it, the vectorised tier imports polars): no polars, none of the
    side-data modules (they hold most of the package's dataclasses, ~0.7 ms each to create), and one
    OpenBLAS thread unless the user chose a number (numpy starts one per core at import)."""
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 0\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\n")
    code = (
        "import os, sys\n"
        "from ctxeval._cli import main\n"
        f"rc = main(['evaluate', {str(tmp_path / 'q.txt')!r}, {str(tmp_path / 'r.txt')!r}, '-m', 'AP', '--format', 'json'])\n"
        "assert rc == 0, rc\n"
        "heavy = ('polars', 'ctxeval._core.extras', 'ctxeval._context.utility', 'ctxeval._io.side')\n"
        "print([m for m in heavy if m in sys.modules], os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if user_blas is not None:
        env["OPENBLAS_NUM_THREADS"] = user_blas
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    assert out.strip().splitlines()[-1] == f"[] {user_blas or '1'}"
    assert '"AP": 1.0' in out


@pytest.mark.parametrize("chunk", [7, 40, 1 << 20])
def test_chunked_polars_reader_equals_one_scan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """The polars tier reads large files in pieces of whole lines (a line longer than the piece grows
    it; the last line may lack its newline)."""
    lines = [f"q{i % 7} Q0 doc-{i:05d}{'x' * (i % 50)} {i} {1.0 / (i + 1)!r} tag" for i in range(300)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines))
    monkeypatch.setattr(columnar, "PIECE", chunk)
    parsed = _polars(path, "run")
    whole = pl.read_csv(path, separator=" ", has_header=False, schema=columnar.trec_schema("run")).select(
        ["query_id", "doc_id", "score"]
    )
    assert parsed is not None and frame_of(parsed.columns, "score").equals(whole) and parsed.tag == "tag"


def _grouped_lines(tags: list[str]) -> list[str]:
    """Queries of 1 to 40 rows (grouped, so some span several chunks), one tag per row from ``tags``."""
    lines, i = [], 0
    for q in range(25):
        for r in range((q * 7) % 40 + 1):
            lines.append(f"q{q:02d} Q0 d{r}{'x' * (i % 30)} {r + 1} {100 - r * 0.5!r} {tags[i % len(tags)]}")
            i += 1
    return lines


@pytest.mark.parametrize("chunk", [7, 150, 1 << 20])
@pytest.mark.parametrize("tags", [["sys"], ["sys", "sys", "other"]])
@pytest.mark.parametrize("shuffle", [False, True])
def test_compact_chunked_read_keeps_every_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, tags: list[str], shuffle: bool
) -> None:
    """Each piece's query ids are reduced to runs (joined across pieces) and its tags to one name: the
    columns rebuild exactly the rows of a full read (in file order), the name is the tag when one is
    used throughout, and the Run equals one built from the full frame."""
    import random

    lines = _grouped_lines(tags)
    if shuffle:  # queries interleaved: the rows are grouped by query after reading
        random.Random(3).shuffle(lines)
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(columnar, "PIECE", chunk)
    monkeypatch.setattr(_native, "LIB", None)  # the vectorised tier reads every file
    whole = pl.read_csv(path, separator=" ", has_header=False, schema=columnar.trec_schema("run")).select(
        ["query_id", "doc_id", "score", "tag"]
    )
    expect_tag = "sys" if tags == ["sys"] else None
    parsed = _polars(path, "run")
    assert parsed is not None and parsed.tag == expect_tag
    assert frame_of(parsed.columns, "score").equals(whole.drop("tag"))
    if not shuffle:  # grouped input: one segment per query, in file order
        heads = whole["query_id"].unique(maintain_order=True).to_list()
        assert parsed.columns.layout.heads.tolist() == heads
    run = Run.from_file(path)
    assert run.name == (expect_tag or "run") and run.frame.equals(whole.drop("tag"))
    assert run.to_dict() == Run.from_frame(whole.drop("tag")).to_dict()


def test_compact_read_with_duplicates_reads_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repeated pair in a compactly read file: the error names both lines (the file is read again
    in full), and keep-first drops the later row and names the run from the remaining tags."""
    from ctxeval._errors import DuplicateError

    lines = _grouped_lines(["sys"])
    lines.insert(5, lines[2].replace(" sys", " odd"))  # the same (q00, d2) again, under another tag
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(columnar, "PIECE", 150)
    monkeypatch.setattr(_native, "LIB", None)
    with pytest.raises(DuplicateError, match=r"lines 3 and 6"):
        Run.from_file(path)
    run = Run.from_file(path, duplicates="first")
    assert run.dropped_duplicates == 1 and run.name == "sys" and len(run) == len(lines) - 1


def _readers_tests():  # the sibling module tests/io/test_readers.py (a folder named io cannot be imported)
    import importlib.util

    spec = importlib.util.spec_from_file_location("readers_cases", Path(__file__).with_name("test_readers.py"))
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("light", [True, False])
def test_io_layouts_and_errors_on_both_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, light: bool) -> None:
    """tests/io/test_readers.py's layouts and malformed inputs, with the compiled scanner on and off
    (off: the vectorised tier reads every file): same frames, same errors."""
    test_io = _readers_tests()
    if not light:
        monkeypatch.setattr(_native, "LIB", None)
    layouts = test_io.test_trec_run_layouts.pytestmark[0].args[1]  # type: ignore[attr-defined]
    for i, text in enumerate(layouts):
        run = Run.from_file(test_io.write(tmp_path, f"r{i}.txt", text))
        assert run.to_dict() == test_io.EXPECTED_RUN and run.name == "sys"
    for i, (kind, name, content, error, message) in enumerate(test_io.MALFORMED):
        d = tmp_path / f"m{i}"
        d.mkdir()
        path = test_io.write(d, name, content)
        with pytest.raises(error) as info:
            (Run.from_file if kind == "run" else Qrels.from_file)(path)
        assert str(info.value) == f"{path}{message}"
