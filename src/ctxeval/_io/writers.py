"""Writers at the edge: text (reports, policies, fits), TREC runs and qrels (plain or gzip), Parquet.

Every write is atomic: the bytes go to a temporary file beside the target, which then replaces it,
so a failed write (a full disk, an interrupted process) never leaves a half-written file behind.

* The temporary file is removed on any error, on Ctrl-C and on SIGTERM, SIGHUP and SIGQUIT (the
  process then ends by the same signal); one left by a process killed outright (SIGKILL, a power
  cut) is removed by the next write to the same target, once its process is gone.
* A target that exists keeps its permissions (a 0600 file stays 0600, and the temporary file has them
  from the start); a new one gets the umask's, as any new file does.
* A target that is a symbolic link is written through: the file it points to is replaced and the link
  stays, as the shell's ``>`` and ``cp`` do (replacing the link would silently cut it from what it
  linked; a link is how a user says where the data lives).

Gzip output has no time stamp and no file name: the same data gives the same bytes.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import signal
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .._errors import OutputError

if TYPE_CHECKING:
    import polars as pl

__all__ = ["atomic", "write_lines", "write_parquet", "write_text", "write_trec_qrels", "write_trec_run"]

_LIVE: set[Path] = set()  # temporary files being written by this process
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGQUIT") if hasattr(signal, name))


@contextlib.contextmanager
def atomic(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` once the block ends without an error (see the module
    docstring: the temporary file, the permissions, links). ``tempfile`` is not used: it would give
    0600 to every output, and import shutil, bz2, lzma and random."""
    target = Path(path)
    real = Path(os.path.realpath(target)) if os.path.islink(target) else target
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except OSError:
        mode = None
    _remove_stale(real)
    try:
        fd, tmp = _fresh(real, 0o666 if mode is None else mode)
    except OSError as exc:
        raise OutputError(f"{_named(target, real)}: cannot write: {exc.strerror or exc}") from None
    try:
        with _guarded(tmp), os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if mode is not None:
                os.chmod(tmp, mode)  # the umask may have taken bits off the target's own mode
        os.replace(tmp, real)
    except OSError as exc:  # a full disk, a quota: nothing half-written is left behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{_named(target, real)}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _named(target: Path, real: Path) -> str:
    return str(target) if real == target else f"{target} (a link to {real})"


def _fresh(target: Path, mode: int) -> tuple[int, Path]:
    """A new file beside ``target``, opened for writing: its descriptor and path."""
    folder = target.parent if str(target.parent) else Path(".")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = folder / f".{target.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


def _remove_stale(target: Path) -> list[Path]:
    """The temporary files of earlier writes to ``target`` whose process is gone (killed outright),
    removed; those of a live process are left to it. POSIX only (elsewhere a process id cannot be
    probed safely)."""
    if os.name != "posix":
        return []
    folder = target.parent if str(target.parent) else Path(".")
    head = f".{target.name}."
    removed = []
    try:
        names = [n for n in os.listdir(folder) if n.startswith(head) and n.endswith(".tmp")]
    except OSError:
        return []
    for name in names:
        pid_text, _, rest = name[len(head) : -len(".tmp")].partition(".")
        if not pid_text.isdigit() or len(rest) != 12 or _alive(int(pid_text)):
            continue
        with contextlib.suppress(OSError):
            os.unlink(folder / name)
            removed.append(folder / name)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _on_signal(signum: int, frame: Any) -> None:
    """Remove the temporary files being written, then end by the signal as if it had not been caught."""
    for tmp in list(_LIVE):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _LIVE.clear()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


@contextlib.contextmanager
def _guarded(tmp: Path) -> Iterator[None]:
    """``tmp`` removed if a terminating signal arrives while it is written (where the signal would
    end the process at once: its handler is the default one; only the main thread can set handlers)."""
    _LIVE.add(tmp)
    installed: dict[int, Any] = {}
    for sig in _SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(sig) == signal.SIG_DFL:
                installed[sig] = signal.signal(sig, _on_signal)
    try:
        yield
    finally:
        _LIVE.discard(tmp)
        for sig, old in installed.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, old)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """UTF-8 text with ``\\n`` line ends, atomically."""
    with atomic(path) as fh:
        fh.write(text.encode("utf-8"))


def write_lines(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """Lines of text, gzip-compressed when ``path`` ends in ``.gz``, atomically."""
    with atomic(path) as raw:
        stream: Any = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if str(path).endswith(".gz") else raw
        fh = io.TextIOWrapper(stream, encoding="utf-8", newline="\n")
        buf: list[str] = []
        for line in lines:
            buf.append(line)
            if len(buf) >= 65536:
                fh.write("".join(buf))
                buf.clear()
        fh.write("".join(buf))
        fh.flush()
        fh.detach()
        if stream is not raw:
            stream.close()


def write_trec_run(
    qids: list[str], docs: list[str], scores: list[float], path: str | os.PathLike[str], name: str
) -> None:
    """``qid Q0 docid rank score tag`` lines for rows given query by query in rank order."""

    def lines() -> Iterator[str]:
        prev, rank = None, 0
        for q, d, s in zip(qids, docs, scores):
            rank = rank + 1 if q == prev else 1
            prev = q
            yield f"{q} Q0 {d} {rank} {float(s)!r} {name}\n"

    write_lines(path, lines())


def write_trec_qrels(df: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    write_lines(path, (f"{q} 0 {d} {r}\n" for q, d, r in df.select("query_id", "doc_id", "relevance").iter_rows()))


def write_parquet(df: pl.DataFrame, path: str | os.PathLike[str]) -> None:
    with atomic(path) as fh:
        df.write_parquet(fh)
