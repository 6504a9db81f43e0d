"""A run file read in chunks of whole queries, for runs larger than memory.

A TREC run (plain or compressed) is read ``chunk_bytes`` at a time; each piece is cut after the last
complete query it holds (the lines of the query it ends in go to the next piece) and parsed by the
same three tiers as a whole file (:func:`~ctxeval._io.trec.parse_trec`). A Parquet run is read
``chunk_rows`` rows at a time (polars reads only the row groups a slice touches) and cut the same
way. The run must be grouped by query: a query that comes back after other queries is an error
naming its line (row, for Parquet) and the line of its first appearance; :func:`sort_run` writes a
grouped copy out of core (polars' streaming engine).
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import tempfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from .._core.columns import Columns
from .._errors import ConfigError, EmptyInputError, FormatError, InputError
from .model import Run
from .source import MemoryText, compression, too_long
from .trec import parse_trec

__all__ = ["Chunk", "auto_chunk_bytes", "run_chunks", "sort_run", "text_size"]

#: the largest and smallest default chunk
CHUNK_MAX = 64 << 20
CHUNK_MIN = 1 << 20


def text_size(path: str | os.PathLike[str]) -> int:
    """The run's size as text: a plain file's size, a gzip file's uncompressed size (its trailer
    holds it modulo 4 GiB: at least the compressed size times 4 is assumed beyond that)."""
    p = Path(path)
    size = p.stat().st_size
    with open(p, "rb") as fh:
        method = compression(fh.read(64), str(p))
        if method in ("bzip2", "xz"):
            return size * 6  # (no size in their trailers: a typical ratio of TREC text)
        if method is None or size < 20:
            return size
        fh.seek(-4, os.SEEK_END)
        isize = int.from_bytes(fh.read(4), "little")
    return max(isize, size * 4) if size * 4 > 1 << 32 else isize


def auto_chunk_bytes(path: str | os.PathLike[str]) -> int:
    """The default chunk: an eighth of the run's text, between 1 and 64 MiB. Parsing and evaluating a
    chunk costs several times its size in memory, as reading the whole file costs several times the
    file's; an eighth keeps the streaming path's peak below the in-memory path's at every size
    (``bench/stream_memory.py`` measures both)."""
    return min(CHUNK_MAX, max(CHUNK_MIN, text_size(path) // 8))


@dataclass(frozen=True)
class Chunk:
    columns: Columns
    tag: str | None
    first_line: int  #: the file line (Parquet: row, from 1) of the chunk's first record


class _Grouping:
    """Remembers every query seen and where, to name the line where grouping breaks."""

    def __init__(self, source: str, unit: str) -> None:
        self.seen: dict[str, int] = {}
        self.source, self.unit = source, unit

    def add(self, heads: list[str], lines: list[int]) -> None:
        for q, ln in zip(heads, lines):
            first = self.seen.get(q)
            if first is not None:
                raise FormatError(
                    self.source,
                    ln,
                    f"query {q!r} comes back after other queries (its first {self.unit} is {first}): the run is "
                    "not grouped by query, which streaming needs; --sort-first (sort_first=True) sorts it out of core",
                )
            self.seen[q] = ln


def _open(path: Path, source: str | None = None) -> IO[bytes]:
    """The file's text as a stream, decompressed as it is read (gzip, bzip2, xz)."""
    with open(path, "rb") as fh:
        method = compression(fh.read(64), source or str(path))
    if method == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if method == "bzip2":
        return bz2.open(path, "rb")
    if method == "xz":
        return lzma.open(path, "rb")
    return open(path, "rb")


def _first_token(line: bytes) -> bytes | None:
    parts = line.split(None, 1)
    return parts[0] if parts and not parts[0].startswith(b"#") else None


def _cut(buf: bytes) -> int:
    """Where the last complete query of ``buf`` ends: the start of the lines of the query its last
    complete line belongs to (0 when ``buf`` holds one query only)."""
    end = buf.rfind(b"\n") + 1
    if end == 0:
        return 0
    start = buf.rfind(b"\n", 0, end - 1) + 1
    q = _first_token(buf[start:end])
    while q is None and start > 0:  # trailing blank or comment lines
        end = start
        start = buf.rfind(b"\n", 0, end - 1) + 1
        q = _first_token(buf[start:end])
    if q is None:
        return 0
    pos = start
    while pos > 0:
        prev = buf.rfind(b"\n", 0, pos - 1) + 1
        if _first_token(buf[prev:pos]) != q:
            break
        pos = prev
    return pos


def _data_lines(piece: bytes, first_line: int) -> Iterator[tuple[int, bytes]]:
    for i, line in enumerate(piece.split(b"\n")):
        q = _first_token(line)
        if q is not None:
            yield first_line + i, q


def _trec_chunk(piece: bytes, source: str, first_line: int, grouping: _Grouping) -> Chunk:
    parsed = parse_trec(piece, "run", source, first_line)
    cols = parsed.columns
    if cols.source_rows is not None or any(q in grouping.seen for q in cols.layout.heads.tolist()):
        # regrouped, or a query seen in an earlier piece: name the line where grouping breaks
        heads: list[str] = []
        lines: list[int] = []
        last = None
        for ln, q in _data_lines(piece, first_line):
            if q != last:
                heads.append(q.decode("utf-8", "replace"))
                lines.append(ln)
                last = q
        grouping.add(heads, lines)
    else:
        grouping.seen.update(dict.fromkeys(cols.layout.heads.tolist(), first_line))
    return Chunk(cols, parsed.tag, first_line)


def run_chunks(
    path: str | os.PathLike[str],
    *,
    chunk_bytes: int = 64 << 20,
    chunk_rows: int = 2_000_000,
    renames: Mapping[str, str] | None = None,
    source: str | None = None,
) -> Iterator[Chunk]:
    """The run at ``path`` (a file: see :func:`~ctxeval._io.source.local_copy` for streams) in chunks
    of whole queries, in file order; ``source``: the name errors give it (default: the path, whose
    suffix also says whether it is Parquet). ``renames`` (column name -> the readers' name,
    :meth:`ctxeval.Policies.renames`) applies to Parquet; TREC text has no column names, so it is an
    error there, as when the run is read whole."""
    p = Path(path)
    source = str(p) if source is None else source
    if not p.is_file():
        raise InputError(f"{source}: {'is a directory, expected a run file' if p.is_dir() else 'no such file'}")
    if Path(source).suffix.lower() == ".parquet":
        yield from _parquet_chunks(p, chunk_rows, renames or {}, source)
        return
    if renames:
        raise ConfigError(
            f"{source}: the columns setting names columns of tabular input (CSV, TSV, JSON lines, Parquet), not of TREC text"
        )
    if chunk_bytes < 1:
        raise ConfigError(f"chunk_bytes must be >= 1, got {chunk_bytes}")
    try:
        yield from _trec_chunks(p, source, chunk_bytes)
    except (EOFError, zlib.error, gzip.BadGzipFile, lzma.LZMAError) as exc:
        with open(p, "rb") as fh:
            method = compression(fh.read(64), source) or "compressed"
        raise InputError(
            f"{source}: the {method} data is cut short or damaged ({exc}): the file is incomplete, nothing was "
            "evaluated"
        ) from None
    except OSError as exc:  # (bz2's damaged data)
        raise InputError(f"{source}: cannot be read ({exc}): nothing was evaluated") from None


def _trec_chunks(p: Path, source: str, chunk_bytes: int) -> Iterator[Chunk]:
    grouping = _Grouping(source, "line")
    line = 1
    carry = b""
    any_rows = False
    size = chunk_bytes
    with _open(p, source) as fh:
        seekable = isinstance(fh, io.BufferedReader)  # a plain file: step back instead of carrying
        while True:
            more = fh.read(size)
            buf = carry + more if carry else more
            if not more:
                if buf and not buf.isspace():
                    chunk = _trec_chunk(buf if buf.endswith(b"\n") else buf + b"\n", source, line, grouping)
                    any_rows = True
                    yield chunk
                break
            cut = _cut(buf)
            if cut == 0:  # one query larger than the piece: read on (within a line's limit)
                long = too_long(buf, 0, len(buf))
                if long >= 0:
                    raise MemoryText(buf, source, line, bom=line == 1).long_line(long)
                carry = buf
                size = max(size, len(buf))
                continue
            if seekable and len(more) == len(buf):
                fh.seek(cut - len(buf), os.SEEK_CUR)  # the rest is read again with the next piece
                piece, carry = buf[:cut], b""
            else:
                piece, carry = buf[:cut], buf[cut:]
            del buf, more  # only the piece stays in memory while it is parsed and evaluated
            size = chunk_bytes
            lines = piece.count(b"\n")
            if not piece.isspace():
                chunk = _trec_chunk(piece, source, line, grouping)
                del piece
                any_rows = any_rows or len(chunk.columns) > 0
                yield chunk
                del chunk
            line += lines
    if not any_rows:
        raise EmptyInputError(f"{source}: the file is empty")


def _parquet_chunks(path: Path, chunk_rows: int, renames: Mapping[str, str], source: str) -> Iterator[Chunk]:
    import polars as pl

    grouping = _Grouping(source, "row")
    scan = pl.scan_parquet(path)
    if renames:
        have = scan.collect_schema().names()
        absent = [c for c in renames if c not in have]
        if absent:
            raise ConfigError(f"{source}: no column {', '.join(map(repr, absent))} (the columns are {', '.join(have)})")
        shadowed = [c for c in renames.values() if c in have and c not in renames]  # replaced by the renamed
        scan = scan.drop(shadowed).rename(dict(renames))
    n = scan.select(pl.len()).collect().item()
    if n == 0:
        raise EmptyInputError(f"{source}: the file has no rows")
    carry: Any = None
    offset = 0
    first_row = 1
    while offset < n or carry is not None:
        part = scan.slice(offset, chunk_rows).collect() if offset < n else None
        offset += chunk_rows
        frame = part if carry is None else (carry if part is None else pl.concat([carry, part]))
        if frame is None or frame.height == 0:
            break
        qcol = next((c for c in frame.columns if c.lower() in ("query_id", "qid", "query")), frame.columns[0])
        rle = frame.select(pl.col(qcol).rle_id()).to_series().to_numpy()
        carry = None
        if offset < n:  # the rows of the last query wait for the next slice
            tail = int(np.searchsorted(rle, rle[-1]))
            if tail == 0:
                carry = frame
                continue
            frame, carry = frame[:tail], frame[tail:]
            rle = rle[:tail]
        starts = np.flatnonzero(np.r_[True, rle[1:] != rle[:-1]])
        heads = frame[qcol].gather(starts).cast(pl.String).to_list()
        grouping.add(heads, [first_row + int(s) for s in starts])
        run = Run.from_frame(frame, source=f"{source} (row)")
        yield Chunk(run.columns, run.name if run.name != "run" else None, first_row)
        first_row += frame.height


def sort_run(path: str | os.PathLike[str], directory: str | None = None) -> Path:
    """A copy of the TREC run at ``path`` grouped by query (stable: each query's lines in file order),
    sorted out of core by polars' streaming engine into a temporary file (the caller deletes it).
    Fields separated by single spaces or tabs; gzip, bzip2 and xz are read too."""
    import polars as pl

    p = Path(path)
    with open(p, "rb") as fh:
        method = compression(fh.read(64), str(p))
    with _open(p) as fh:
        head = fh.read(1 << 16)
    sep = "\t" if b"\t" in head.split(b"\n", 1)[0] else " "
    src: Any = p
    tmp_in = None
    if method is not None:
        fd, tmp_in = tempfile.mkstemp(suffix=".run", dir=directory)
        with os.fdopen(fd, "wb") as out, _open(p) as stream:
            while block := stream.read(16 << 20):
                out.write(block)
        src = tmp_in
    fd, name = tempfile.mkstemp(suffix=".sorted.run", dir=directory)
    os.close(fd)
    schema = {
        "query_id": pl.String,
        "q0": pl.String,
        "doc_id": pl.String,
        "rank": pl.String,
        "score": pl.String,
        "tag": pl.String,
    }
    try:
        (
            pl.scan_csv(src, separator=sep, has_header=False, schema=schema, quote_char=None, comment_prefix="#")
            .with_row_index("_line")
            .sort(["query_id", "_line"])
            .drop("_line")
            .sink_csv(name, separator=" ", include_header=False, quote_style="never")
        )
    except pl.exceptions.PolarsError as exc:
        os.unlink(name)
        raise FormatError(
            str(p),
            None,
            f"cannot sort the run out of core ({str(exc).splitlines()[0]}): "
            "--sort-first reads six fields separated by single spaces or tabs",
        ) from None
    finally:
        if tmp_in:
            os.unlink(tmp_in)
    return Path(name)
