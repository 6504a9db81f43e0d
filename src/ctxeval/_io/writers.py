"""Writers at the edge: text (reports, policies, fits), TREC runs and qrels (plain or gzip), Parquet.

Every write is atomic: the bytes go to a temporary file beside the target, which then replaces it,
so a failed write (a full disk, an interrupted process) never leaves a half-written file behind.
Gzip output has no time stamp and no file name: the same data gives the same bytes.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from .._errors import OutputError

if TYPE_CHECKING:
    import polars as pl

__all__ = ["atomic", "write_lines", "write_parquet", "write_text", "write_trec_qrels", "write_trec_run"]


@contextlib.contextmanager
def atomic(path: str | os.PathLike[str]) -> Iterator[IO[bytes]]:
    """A binary file that replaces ``path`` once the block ends without an error. It is written
    beside ``path`` under a fresh hidden name and gets the permissions any new file gets (the umask's,
    not ``tempfile``'s private 0600; ``tempfile`` would also import shutil, bz2, lzma and random)."""
    target = Path(path)
    try:
        fd, tmp = _fresh(target)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.replace(tmp, target)
    except OSError as exc:  # a full disk, a quota: nothing half-written is left behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _fresh(target: Path) -> tuple[int, Path]:
    """A new file beside ``target``, opened for writing: its descriptor and path."""
    folder = target.parent if str(target.parent) else Path(".")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = folder / f".{target.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp"
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {target}")


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
