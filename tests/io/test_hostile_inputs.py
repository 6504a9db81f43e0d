"""Legal and hostile TREC files that once crashed, hung or misread the reader (issue 29, points 1-5
and 7), each checked through every tier: the compiled scanner, the vectorised tier (the scanner off)
and, where a command runs, the command line in a fresh process.

The references are independent of the reader: the rows each file was written from, Python's
``float()``, pytrec_eval (trec_eval's C code, grades as C longs) and, for the figures, brute force.
"""

from __future__ import annotations

import math
import os
import resource
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ctxeval
from ctxeval import FormatError, InputError, Qrels, Run, _native
from ctxeval._io import columnar, native
from ctxeval._io.exact import frame as exact_frame
from ctxeval._io.frames import frame_of
from ctxeval._io.source import LINE_LIMIT, FileText
from ctxeval._io.stream import run_chunks
from ctxeval._trec_eval import trec_eval

TIERS = ["scanner", "vectorised"]


@pytest.fixture(params=TIERS)
def tier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test once with the compiled scanner (where it is built) and once without it."""
    if request.param == "scanner" and not _native.available():
        pytest.skip(f"compiled kernels {_native.status()}")
    if request.param == "vectorised":
        monkeypatch.setattr(_native, "LIB", None)
    return str(request.param)


def _rows(obj: Run | Qrels, value: str) -> list[tuple]:
    return [tuple(r) for r in frame_of(obj.columns, value).iter_rows()]


def _cli(*args: str, env: dict[str, str] | None = None, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxeval", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        **kw,  # type: ignore[arg-type]
    )


# ---------------------------------------------------------------- 1. one long id
@pytest.mark.parametrize("width", [1_000, 20_000])
def test_a_long_doc_id_and_query_id_are_read(width: int, tier: str, tmp_path: Path) -> None:
    """A 2-line run and qrels whose doc and query ids are ``width`` bytes long: the rows they were
    written from, whichever tier reads them (the scanner's buffers are sized from what the piece holds,
    not rows x the widest id)."""
    q, d = "q" + "x" * (width - 1), "u" * width
    run = tmp_path / "run.txt"
    run.write_text(f"{q} Q0 {d} 1 0.5 t\nq2 Q0 d2 1 0.25 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(f"{q} 0 {d} 1\nq2 0 d3 1\n")
    assert _rows(Run.from_file(run), "score") == [(q, d, 0.5), ("q2", "d2", 0.25)]
    assert _rows(Qrels.from_file(qrels), "relevance") == [(q, d, 1), ("q2", "d3", 1)]
    res = ctxeval.evaluate(qrels, run, ["RR"])
    assert res.runs[0].per_query("RR") == {q: 1.0, "q2": 0.0}


def test_one_long_id_among_many_rows_goes_to_the_vectorised_tier(tmp_path: Path) -> None:
    """One 20,000-byte id among 20,000 short lines: fixed-width slots would cost 20,000 x 20,000
    bytes; the scanner declines (no line to blame) and the vectorised tier keeps each id at its own
    length."""
    if not _native.available():
        pytest.skip(f"compiled kernels {_native.status()}")
    lines = [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1 - i / 1e5:.5f} t\n" for i in range(20_000)]
    lines.insert(777, "q7 Q0 " + "u" * 20_000 + " 200 0.5 t\n")
    run = tmp_path / "run.txt"
    run.write_text("".join(lines))
    with open(run, "rb") as fh:
        found = native.scan_text(FileText(fh.fileno(), str(run)), "run")
    assert isinstance(found, native.Declined) and found.at == -1
    got = Run.from_file(run)
    assert len(got) == 20_001 and _rows(got, "score")[777][1] == "u" * 20_000


_LIMITED = """
import resource, sys
limit = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from ctxeval._cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("lines", [2, 50_000])
def test_a_1000_byte_id_under_a_memory_limit(lines: int, tmp_path: Path) -> None:
    """``evaluate`` with 1 GiB of address space (``RLIMIT_AS``) on a run holding one 1,000-byte id (a
    URL): it reads the run, where buffers of rows x the widest id of a whole piece asked for more than
    the limit and died with a traceback (``BufferError`` masking the ``MemoryError``)."""
    body = "".join(f"q{i // 100} Q0 d{i} {i % 100 + 1} {1 - i / 1e6:.6f} t\n" for i in range(lines - 1))
    run = tmp_path / "run.txt"
    run.write_text("q0 Q0 https://example.org/" + "p" * 975 + " 1 2.0 t\n" + body)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q0 0 d1 1\n")
    cmd = [sys.executable, "-c", _LIMITED, "1024", "evaluate", str(qrels), str(run), "-m", "P@1", "--format", "csv"]
    for flag in ("1", "0"):
        done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CTXEVAL_NATIVE": flag})
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- 2. a file that changes while it is read
def test_a_file_truncated_while_it_is_read_is_an_error_naming_it(
    tier: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retriever re-opening its output with "w" while ctxeval reads it: the file shrinks after the
    reader opened it. The reader says so, naming the file, on one line (it read with pread: no SIGBUS)."""
    run = tmp_path / "run.txt"
    run.write_text("".join(f"q{i // 50} Q0 d{i} {i % 50 + 1} {i}.5 t\n" for i in range(40_000)))
    monkeypatch.setattr(native, "_PIECE", 64 << 10)
    monkeypatch.setattr(columnar, "PIECE", 64 << 10)
    reads = FileText.read_into, FileText.read
    calls = []

    def shrinking(read):
        def inner(self, *args):
            calls.append(1)
            if len(calls) == 5:
                os.truncate(run, 10_000)
            return read(self, *args)

        return inner

    monkeypatch.setattr(FileText, "read_into", shrinking(reads[0]))
    monkeypatch.setattr(FileText, "read", shrinking(reads[1]))
    with pytest.raises(InputError) as err:
        Run.from_file(run)
    assert str(err.value).startswith(f"{run}: the file changed while it was read")
    assert "\n" not in str(err.value)


def test_a_file_written_again_while_it_is_read_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same size, other bytes, a later modification time: the read compares the file's state
    before and after and refuses the mix."""
    run = tmp_path / "run.txt"
    data = "".join(f"q{i // 50} Q0 d{i} {i % 50 + 1} {i}.5 t\n" for i in range(1_000))
    run.write_text(data)
    check = FileText.check

    def rewritten(self: FileText) -> None:
        with open(run, "r+") as fh:  # the writer's second pass
            fh.write(data.replace("Q0", "Q1"))
        os.utime(run, ns=(self.opened.st_atime_ns, self.opened.st_mtime_ns + 1_000_000_000))
        check(self)

    monkeypatch.setattr(FileText, "check", rewritten)
    with pytest.raises(InputError, match=r"the file changed while it was read \(written again\)"):
        Run.from_file(run)


@pytest.mark.slow
def test_truncating_a_run_while_the_command_reads_it_never_kills_it(tmp_path: Path) -> None:
    """The race of the issue, as it happens: a process truncates a 60 MB run at a random moment while
    ``ctxeval evaluate`` reads it. The command ends with its values (the truncation came after the
    read) or with one line naming the file; never a signal (SIGBUS was exit 135 with no message)."""
    rng = np.random.default_rng(5)
    body = "".join(f"q{i // 100} Q0 d{i} {i % 100 + 1} {1 - i / 1e7:.7f} t\n" for i in range(1_500_000))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q0 0 d1 1\n")
    outcomes = []
    for _ in range(6):
        run = tmp_path / "run.txt"
        run.write_text(body)
        proc = subprocess.Popen(
            [sys.executable, "-m", "ctxeval", "evaluate", str(qrels), str(run), "-m", "P@10", "--missing", "ignore"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(float(rng.uniform(0.3, 1.5)))
        with open(run, "w") as fh:  # the retriever's "w"
            fh.write("q0 Q0 d1 1 0.5 t\n")
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 2), (proc.returncode, err)
        if proc.returncode == 2:
            assert err.count("\n") == 1 and f"{run}: " in err, err
        outcomes.append(proc.returncode)
    print("exit statuses:", outcomes)  # (which of the two each run gave depends on the timing)


# ---------------------------------------------------------------- 3. no line end for gigabytes
def test_a_sparse_file_of_gigabytes_without_a_line_end_is_refused_at_once(tmp_path: Path) -> None:
    """4.5 GiB without a line end (a sparse file: no disk used): one line naming line 1 and the limit,
    within seconds and little memory, whichever tier reads (it took 45 s and 9.4 GB)."""
    run = tmp_path / "run.txt"
    with open(run, "wb") as fh:
        fh.truncate(int(4.5 * 2**30))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q0 0 d1 1\n")
    for flag in ("1", "0"):
        start = time.perf_counter()
        done = _cli("evaluate", str(qrels), str(run), env={"CTXEVAL_NATIVE": flag})
        assert time.perf_counter() - start < 60  # (a hang guard, not a benchmark)
        assert done.returncode == 2
        assert done.stderr == (
            f"ctxeval: error: {run}:1: a line longer than {LINE_LIMIT:,} bytes (no line of a run or qrels is "
            "that long: a file without line ends, or not text?)\n"
        )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    assert peak < 1024, f"{peak:.0f} MiB"


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_line_over_the_limit_is_named_in_every_tier(where: str, tier: str, tmp_path: Path) -> None:
    """A line of LINE_LIMIT + 1 bytes is an error naming it; one of LINE_LIMIT bytes (a 1 MiB id) is
    read. The same in the streaming reader."""
    lines = [f"q{i // 10} Q0 d{i} {i % 10 + 1} {i}.5 t\n" for i in range(3_000)]
    at = {"first": 0, "middle": 1_500, "last": 3_000}[where]
    head = f"q9 Q0 d{'x' * 10} 1 0.5 "
    for length, refused in ((LINE_LIMIT, False), (LINE_LIMIT + 1, True)):
        line = head + "t" * (length - len(head)) + "\n"
        run = tmp_path / f"run{length}.txt"
        run.write_text("".join([*lines[:at], line, *lines[at:]]))
        if refused:
            with pytest.raises(FormatError, match=rf":{at + 1}: a line longer than {LINE_LIMIT:,} bytes"):
                Run.from_file(run)
            with pytest.raises(FormatError, match=rf":{at + 1}: a line longer than"):
                list(run_chunks(run, chunk_bytes=1 << 16))
        else:
            assert len(Run.from_file(run)) == 3_001


# ---------------------------------------------------------------- 4. one bad line at the end
@pytest.mark.parametrize("bad", ["q9 Q0 d9 1 0.5\n", "q9 Q0 d9 1 nan t\n", "q9 Q0 d\x009 1 0.5 t\n"])
def test_one_bad_line_at_the_end_is_named(bad: str, tier: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad last line after 60,000 good ones (in pieces of 64 KB, so the scanner's threads and the
    vectorised tier's pieces meet it late): its number, as the exact tier names it."""
    monkeypatch.setattr(native, "_PIECE", 64 << 10)
    monkeypatch.setattr(columnar, "PIECE", 64 << 10)
    good = "".join(f"q{i // 100} Q0 d{i} {i % 100 + 1} {i}.5 t\n" for i in range(60_000))
    run = tmp_path / "run.txt"
    run.write_text(good + "\n# a comment\n" + bad)
    with pytest.raises(FormatError) as err:
        Run.from_file(run)
    with pytest.raises(FormatError) as ref:
        exact_frame(bad.encode(), "run", str(run))
    assert err.value.line == 60_003
    assert str(err.value) == str(ref.value).replace(f"{run}:1:", f"{run}:60003:")


# ---------------------------------------------------------------- 5. a negative score rounding to zero
@pytest.mark.parametrize("text", ["-1e-400", "-0", "-0.0e5", "-2.4703282292062327e-324", "1e-400"])
def test_a_score_rounding_to_zero_keeps_its_sign_in_every_tier(text: str, tmp_path: Path) -> None:
    data = f"q1 Q0 d1 1 {text} t\nq1 Q0 d2 2 1 t\n".encode()
    want = struct.pack("<d", float(text))
    got = {"exact": exact_frame(data, "run", "x")["score"][0]}
    for name, frame in (("plain", columnar._plain(data, "run")), ("folded", columnar.folded(data, "run"))):
        assert frame is not None
        got[name] = frame["score"][0]
    if _native.available():
        scanned = native.scan_bytes(data, "run")
        assert scanned is not None
        got["scanner"] = float(scanned.columns.values[0])
    assert {name: struct.pack("<d", v) for name, v in got.items()} == dict.fromkeys(got, want)


def test_minus_zero_ranks_as_zero_does_as_in_trec_eval(tier: str, tmp_path: Path) -> None:
    """-0.0 and 0.0 tie (then doc ids decide, descending), as trec_eval's comparison of doubles has it."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\n")
    for first, second in (("-1e-400", "0.0"), ("0.0", "-1e-400")):
        run.write_text(f"q1 Q0 a 1 {first} t\nq1 Q0 b 2 {second} t\n")
        want = pytrec_eval.RelevanceEvaluator({"q1": {"a": 1, "b": 0}}, {"recip_rank"}).evaluate(
            {"q1": {"a": float(first), "b": float(second)}}
        )["q1"]["recip_rank"]
        assert ctxeval.evaluate(qrels, run, ["RR"]).runs[0].per_query("RR")["q1"] == want == 0.5


# ---------------------------------------------------------------- 7. a grade of -2^63
def test_a_grade_of_minus_two_to_the_63_reads_and_ranks_as_any_negative_grade(tier: str, tmp_path: Path) -> None:
    """The issue's case: a judged doc graded -2^63 (a C long, as trec_eval reads it). nDCG@10 treats it
    as any negative grade (the ideal ordering no longer negates it, which overflowed): 1/log2(4) = 0.5;
    ``ctxeval trec_eval`` prints what trec_eval's code (pytrec_eval) computes."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 3 t\nq1 Q0 d2 2 2 t\nq1 Q0 d3 3 1 t\n")
    values = {}
    for grade in (-(2**63), -1):
        qrels = tmp_path / f"qrels{grade}.txt"
        qrels.write_text(f"q1 0 d1 {grade}\nq1 0 d3 1\n")
        assert _rows(Qrels.from_file(qrels), "relevance") == [("q1", "d1", grade), ("q1", "d3", 1)]
        result = ctxeval.evaluate(qrels, run, ["nDCG@10", "AP", "P@3"]).runs[0]
        values[grade] = {m: result.mean(m) for m in ("nDCG@10", "AP", "P@3")}
        ours = trec_eval(qrels, run, ["ndcg_cut.10", "ndcg", "map"], version=9)
        ref = pytrec_eval.RelevanceEvaluator({"q1": {"d1": grade, "d3": 1}}, {"ndcg_cut_10", "ndcg", "map"})
        theirs = ref.evaluate({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}})["q1"]
        for line in ours.splitlines():
            name, _, value = line.split("\t")
            assert float(value) == round(theirs[name.strip()], 4), line
    assert values[-(2**63)] == values[-1]
    assert math.isclose(values[-1]["nDCG@10"], 1 / math.log2(4))
