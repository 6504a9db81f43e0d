"""Every output is written atomically (ctxeval._io.writers): a killed or failed write leaves the target
as it was and no temporary file behind (SIGTERM and Ctrl-C at once; SIGKILL by the next write), an
existing file keeps its permissions, a symbolic link is written through, and a full disk under standard
output is an error, never exit status 0. The kills are real signals sent to a real writing process."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli
from ctxeval._errors import OutputError
from ctxeval._io import writers

posix_only = pytest.mark.skipif(os.name != "posix", reason="signals and /dev/full are POSIX")

# a process that starts writing `target` (2 MB, then waits, holding the temporary file open) and
# says so on stdout
_WRITER = """
import sys, time
from ctxeval._io.writers import atomic
with atomic(sys.argv[1]) as fh:
    fh.write(b"x" * (2 << 20))
    fh.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp"))


#: the signals the tests send: the writer starts with their default disposition, whatever this process
#: inherited (nohup ignores SIGHUP, a shell's background job ignores SIGINT; a child inherits that)
_SENT = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP", "SIGINT", "SIGQUIT") if hasattr(signal, n))


def _default_dispositions() -> None:
    for sig in _SENT:
        signal.signal(sig, signal.SIG_DFL)


def _start_writer(target: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=_default_dispositions,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "writing\n"
    return proc


@posix_only
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_write_ended_by_a_signal_leaves_the_target_and_no_temporary(sig: int, tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("before\n")
    proc = _start_writer(target)
    assert len(_temporaries(tmp_path)) == 1
    proc.send_signal(sig)
    code = proc.wait(timeout=30)
    assert code == -sig  # ended by the signal (Ctrl-C: Python re-raises SIGINT once it has cleaned up)
    assert target.read_text() == "before\n"
    assert _temporaries(tmp_path) == []


@posix_only
@pytest.mark.parametrize("ignored", [("SIGHUP",), ("SIGINT",), ("SIGHUP", "SIGINT", "SIGTERM", "SIGQUIT")])
def test_the_signal_test_holds_under_nohup_and_with_sigint_ignored(ignored: tuple[str, ...], tmp_path: Path) -> None:
    """The test above from a process that ignores signals, as the suite does under nohup (SIGHUP) or as a
    shell's background job (SIGINT): every signal still ends the writer, for the writer's dispositions are
    set where it starts, not inherited. (Run by hand too: ``nohup pytest tests/io/test_atomic_writes.py``
    and ``bash -c 'trap "" INT; pytest tests/io/test_atomic_writes.py'``.)"""
    sigs = [getattr(signal, n) for n in ignored]
    before = {sig: signal.signal(sig, signal.SIG_IGN) for sig in sigs}
    try:
        for sig in _SENT:
            (tmp_path / sig.name).mkdir()
            test_a_write_ended_by_a_signal_leaves_the_target_and_no_temporary(sig, tmp_path / sig.name)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


@posix_only
def test_a_temporary_left_by_sigkill_is_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "run.trec"
    proc = _start_writer(target)
    proc.kill()  # SIGKILL: nothing can clean up
    proc.wait(timeout=30)
    left = _temporaries(tmp_path)
    assert len(left) == 1 and (tmp_path / left[0]).stat().st_size == 2 << 20
    assert not target.exists()
    writers.write_text(target, "after\n")
    assert target.read_text() == "after\n" and _temporaries(tmp_path) == []
    # the temporary of a live writer is left to it
    other = _start_writer(target)
    try:
        live = _temporaries(tmp_path)
        writers.write_text(target, "again\n")
        assert target.read_text() == "again\n" and _temporaries(tmp_path) == live != []
    finally:
        other.kill()
        other.wait(timeout=30)


def test_an_existing_output_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "secret.json"
    target.write_text("old")
    target.chmod(0o600)
    seen = []
    real_replace = os.replace

    def spy(src: str, dst: str) -> None:  # the temporary file was private from the start
        seen.append(os.stat(src).st_mode & 0o777)
        real_replace(src, dst)

    old = os.umask(0o022)
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(writers.os, "replace", spy)
            writers.write_text(target, "new")
        assert target.stat().st_mode & 0o777 == 0o600 and seen == [0o600]
        target.chmod(0o664)  # bits the umask would take off are kept too
        writers.write_text(target, "newer")
        assert target.stat().st_mode & 0o777 == 0o664
    finally:
        os.umask(old)


@posix_only
def test_an_output_that_is_a_link_is_written_through(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    real = tmp_path / "results" / "2026-11-26.json"
    real.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(real)
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2 t\n")
    res = CliRunner().invoke(
        cli, ["evaluate", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "RR", "--format", "json",
              "-o", str(link)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert '"RR": 1.0' in real.read_text()
    assert _temporaries(tmp_path) == [] and _temporaries(real.parent) == []
    dangling = tmp_path / "next.json"
    dangling.symlink_to(tmp_path / "results" / "new.json")
    writers.write_text(dangling, "made\n")
    assert dangling.is_symlink() and (tmp_path / "results" / "new.json").read_text() == "made\n"


def test_a_failed_write_through_a_link_names_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "a.txt"
    link = tmp_path / "b.txt"
    link.symlink_to(real)

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writers.os, "replace", full)
    with pytest.raises(OutputError, match=rf"{link} \(a link to {real}\): cannot write: No space left"):
        writers.write_text(link, "x")
    assert _temporaries(tmp_path) == [] and not real.exists()


@posix_only
@pytest.mark.parametrize(
    "argv",
    [
        ["evaluate", "{q}", "{r}", "-m", "RR"],
        ["evaluate", "{q}", "{r}", "-m", "RR", "--format", "json"],
        ["trec_eval", "-q", "-m", "all_trec", "{q}", "{r}"],
        ["measures"],
    ],
)
def test_a_full_disk_under_standard_output_is_an_error(argv: list[str], tmp_path: Path) -> None:
    (tmp_path / "q").write_text("q1 0 a 1\n")
    (tmp_path / "r").write_text("q1 Q0 a 1 2 t\n")
    args = [a.format(q=tmp_path / "q", r=tmp_path / "r") for a in argv]
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "ctxeval", *args], stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 2
    assert done.stderr == "ctxeval: error: cannot write to standard output: No space left on device\n"


def test_the_demo_writes_its_report_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxeval._render.report as report
    from ctxeval._demo import _html_section, example_path

    class Stub:
        def to_dict(self) -> dict[str, list[object]]:
            return {"comparisons": []}

        def to_html(self) -> str:
            return "<!DOCTYPE html>" + "x" * (4 << 20)

    monkeypatch.setattr(report, "compare", lambda *a, **k: Stub())

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(writers.os, "replace", full)
    out = tmp_path / "report.html"
    with pytest.raises(OutputError, match="cannot write: No space left on device"):
        _html_section(example_path("qrels.txt"), [], out)
    assert list(tmp_path.iterdir()) == []
