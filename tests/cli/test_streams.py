"""Runs and qrels that are not plain files (issue 29 point 6), through the command line in a fresh
process: ``-`` (standard input), ``/dev/stdin``, a FIFO, a shell's ``<(zcat run.gz)``, a directory,
and compressed files. A stream is read once, in order (nothing sniffed from it is lost), on every
command that reads a run or qrels; the reference is the same command on the plain file."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

RUN = "".join(f"q{q} Q0 d{d} {d + 1} {10 - d / 10:.2f} bm25\n" for q in range(40) for d in range(30))
QRELS = "".join(f"q{q} 0 d{d} {(q + d) % 3}\n" for q in range(40) for d in range(0, 40, 3))


def _cli(*args: str, stdin: str | None = None, shell: bool = False) -> subprocess.CompletedProcess[str]:
    cmd: list[str] | str = [sys.executable, "-m", "ctxeval", *args]
    if shell:  # bash for process substitution
        cmd = ["bash", "-c", " ".join([sys.executable, "-m", "ctxeval", *args])]
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"run": tmp_path / "run.txt", "qrels": tmp_path / "qrels.txt"}
    paths["run"].write_text(RUN)
    paths["qrels"].write_text(QRELS)
    return paths


def _evaluate(qrels: str, run: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return _cli("evaluate", qrels, run, "-m", "nDCG@10", "-m", "AP", "--format", "csv", **kw)  # type: ignore[arg-type]


def test_dash_and_dev_stdin_read_the_run_or_the_qrels(files: dict[str, Path]) -> None:
    want = _evaluate(str(files["qrels"]), str(files["run"]))
    assert want.returncode == 0, want.stderr
    for qrels, run, stdin in (
        (str(files["qrels"]), "-", RUN),
        (str(files["qrels"]), "/dev/stdin", RUN),
        ("-", str(files["run"]), QRELS),
        ("/dev/stdin", str(files["run"]), QRELS),
    ):
        got = _evaluate(qrels, run, stdin=stdin)
        assert (got.returncode, got.stderr) == (0, want.stderr), (qrels, run)
        # the same values (the run's name comes from its tag either way)
        assert got.stdout == want.stdout.replace(str(files["run"]), run)


def test_the_other_commands_take_a_stream_too(files: dict[str, Path]) -> None:
    """compare (two runs, the second from standard input), trec_eval (qrels from standard input, as its
    results already could be), snapshot."""
    runs = [str(files["run"])]
    want = _cli("compare", str(files["qrels"]), *runs, str(files["run"]), "-m", "AP", "--format", "json")
    got = _cli("compare", str(files["qrels"]), *runs, "-", "-m", "AP", "--format", "json", stdin=RUN)
    assert want.returncode == got.returncode == 0, got.stderr
    assert got.stdout.replace('"-"', f'"{files["run"]}"') == want.stdout
    want = _cli("trec_eval", "-q", str(files["qrels"]), str(files["run"]))
    got = _cli("trec_eval", "-q", "-", str(files["run"]), stdin=QRELS)
    assert (got.returncode, got.stdout) == (0, want.stdout) and want.stdout.count("\n") > 100
    snap = files["run"].with_name("snap.json")
    got = _cli("snapshot", "-", str(files["run"]), "-m", "AP", "-o", str(snap), stdin=QRELS)
    assert got.returncode == 0, got.stderr
    assert snap.stat().st_size > 0


def test_a_fifo_is_opened_once_and_read_once(files: dict[str, Path], tmp_path: Path) -> None:
    """A named pipe as the run: the writer writes it once; the reader must not open it twice (a second
    open would wait for ever for another writer) nor lose the first 64 KB to a sniff."""
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    big = RUN * 60  # past any first read's size (duplicated pairs: --duplicates first)

    def write() -> None:
        with open(fifo, "w") as fh:
            fh.write(big)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    got = _cli("evaluate", str(files["qrels"]), str(fifo), "-m", "AP", "--duplicates", "first", "--format", "csv")
    writer.join(10)
    assert got.returncode == 0, got.stderr
    files["run"].write_text(big)
    want = _cli(
        "evaluate", str(files["qrels"]), str(files["run"]), "-m", "AP", "--duplicates", "first", "--format", "csv"
    )
    assert got.stdout.replace(str(fifo), str(files["run"])) == want.stdout


@pytest.mark.skipif(shutil.which("bash") is None or shutil.which("zcat") is None, reason="no bash or zcat here")
def test_process_substitution_of_a_gzip_run(files: dict[str, Path], tmp_path: Path) -> None:
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(RUN.encode()))
    want = _evaluate(str(files["qrels"]), str(files["run"]))
    got = _cli(
        "evaluate", str(files["qrels"]), f"<(zcat {gz})", "-m", "nDCG@10", "-m", "AP", "--format", "csv", shell=True
    )
    assert (got.returncode, got.stderr) == (0, want.stderr)
    assert got.stdout == want.stdout


def test_a_directory_is_named_never_a_traceback(files: dict[str, Path], tmp_path: Path) -> None:
    """The commands refuse a directory before reading, on the readers' one line (every command and
    every file parameter: tests/cli/test_directories.py); the readers themselves, which every other
    way in reaches, say it on the same line."""
    for args, kind in (
        (("evaluate", str(files["qrels"]), str(tmp_path)), "run"),
        (("evaluate", str(tmp_path), str(files["run"])), "qrels"),
        (("trec_eval", str(tmp_path), str(files["run"])), "qrels"),
        (("trec_eval", str(files["qrels"]), str(tmp_path)), "run"),
    ):
        got = _cli(*args)
        assert (got.returncode, got.stderr) == (
            2,
            f"ctxeval: error: {tmp_path}: is a directory, expected a {kind} file\n",
        )
    code = (
        "import sys, ctxeval\n"
        "from ctxeval._io.stream import run_chunks\n"
        "for read in (ctxeval.Run.from_file, ctxeval.Qrels.from_file, lambda p: list(run_chunks(p))):\n"
        "    try:\n"
        "        read(sys.argv[1])\n"
        "    except ctxeval.InputError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
    assert done.stdout == "".join(
        f"{tmp_path}: is a directory, expected a {kind} file\n" for kind in ("run", "qrels", "run")
    )


@pytest.mark.parametrize(
    ("suffix", "compress"), [(".gz", gzip.compress), (".bz2", bz2.compress), (".xz", lzma.compress), ("", bz2.compress)]
)
def test_compressed_runs_and_qrels_are_read(suffix: str, compress, files: dict[str, Path], tmp_path: Path) -> None:
    """gzip, bzip2 and xz, by their first bytes (the name need not say so)."""
    run, qrels = tmp_path / f"r.txt{suffix}", tmp_path / f"q.txt{suffix}"
    run.write_bytes(compress(RUN.encode()))
    qrels.write_bytes(compress(QRELS.encode()))
    want = _evaluate(str(files["qrels"]), str(files["run"]))
    got = _evaluate(str(qrels), str(run))
    assert (got.returncode, got.stderr) == (0, want.stderr.replace(str(files["qrels"]), str(qrels)))
    assert got.stdout == want.stdout


def test_formats_not_read_are_named(files: dict[str, Path], tmp_path: Path) -> None:
    zst = tmp_path / "run.txt.zst"
    zst.write_bytes(b"\x28\xb5\x2f\xfd\x24\x00\x01\x00\x00\x99\xe9\xd8\x51")
    got = _evaluate(str(files["qrels"]), str(zst))
    assert got.returncode == 2
    assert got.stderr == (
        f"ctxeval: error: {zst}: zstd-compressed (decompress it first: zstd -d): ctxeval reads plain text, gzip, "
        "bzip2 and xz\n"
    )
    damaged = tmp_path / "run.txt.xz"
    damaged.write_bytes(lzma.compress(RUN.encode())[:200])
    got = _evaluate(str(files["qrels"]), str(damaged))
    assert got.returncode == 2 and got.stderr.startswith(f"ctxeval: error: {damaged}: cannot decompress xz data")
    assert "not valid UTF-8" not in got.stderr and got.stderr.count("\n") == 1
