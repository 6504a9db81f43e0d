"""An input's text, opened once and read in pieces of whole lines: what every reader of a run or qrels
reads through (and the side readers' :func:`open_bytes`).

* **Files** are read with ``pread`` (never mapped: a file truncated while it is read gives a short read,
  not a ``SIGBUS``). Their size, modification time and inode are taken when the file is opened and
  compared when it has been read: a file that changed meanwhile (a retriever writing it again) is an
  error naming it, never a mix of two versions.
* **Streams** (``-`` for standard input, a pipe, a FIFO, ``/dev/stdin``, a shell's ``<(zcat run.gz)``)
  are read once, in order, into a temporary file that the readers then use as a file
  (:func:`local_copy`): nothing is sniffed from a stream and lost, and nothing is opened twice.
* **Compressed** data (gzip, bzip2, xz: the standard library's decompressors) is decompressed into
  memory; zstd, lz4 and zip archives are named as such.
* **Lines** are at most :data:`LINE_LIMIT` bytes (1 MiB, the line end excluded), in every tier: a longer
  one (a file without line ends, a binary file) is an error naming its line as soon as it is met,
  before anything is parsed. The check costs one backward search per MiB.
* A UTF-8 byte order mark at the start is not text (:attr:`Text.start`).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import re
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .._errors import FormatError, InputError

__all__ = ["LINE_LIMIT", "PIECE", "FileText", "MemoryText", "Text", "local_copy", "open_bytes", "open_text"]

#: the longest line a run or qrels may hold, its line end excluded (every tier refuses a longer one)
LINE_LIMIT = 1 << 20
#: bytes per piece of whole lines (measured at 400 MB: 8-64 MB alike, 1-2 MB 50 % slower)
PIECE = 16 << 20
BOM = b"\xef\xbb\xbf"

# gzip (deflate), bzip2 (with its first block's magic) and xz: their first bytes are no valid text (a
# byte 0x8b or a NUL, which the rule refuses) or too odd to begin one, so no legal file is taken for one
_COMPRESSED = {b"\x1f\x8b\x08": "gzip", b"\xfd7zXZ\x00": "xz"}
_BZIP2 = re.compile(rb"BZh[1-9]1AY&SY")
_UNREAD = {
    b"\x28\xb5\x2f\xfd": "zstd-compressed (decompress it first: zstd -d)",
    b"\x04\x22\x4d\x18": "lz4-compressed (decompress it first: lz4 -d)",
    b"PK\x03\x04": "a zip archive (extract the file first)",
}
_DECOMPRESS = {"gzip": gzip.decompress, "bzip2": bz2.decompress, "xz": lzma.decompress}


def too_long(text: bytes | bytearray, lo: int, hi: int) -> int:
    """The offset of the start of a line longer than :data:`LINE_LIMIT` in ``text[lo:hi]`` (``lo`` a
    line's start), or -1: one backward search for a line end per LINE_LIMIT bytes.

    >>> too_long(b"ab\\n" * 3, 0, 9), too_long(b"a" * (LINE_LIMIT + 1), 0, LINE_LIMIT + 1)
    (-1, 0)
    """
    at = lo
    while hi - at > LINE_LIMIT:
        nl = text.rfind(b"\n", at, at + LINE_LIMIT + 1)
        if nl < 0:
            return at
        at = nl + 1
    return -1


class Text:
    """Bytes ``[0, size)`` of an input, text from :attr:`start`; line numbers count from :attr:`first_line`."""

    source: str
    size: int
    start: int = 0
    first_line: int = 1

    def read(self, lo: int, n: int) -> bytes:
        """Bytes ``[lo, lo + n)`` (all of them: a short read is the file changing)."""
        raise NotImplementedError

    def rfind_nl(self, lo: int, hi: int) -> int:
        """The offset of the last line end in ``[lo, hi)``, or -1."""
        raise NotImplementedError

    def count_nl(self, lo: int, hi: int) -> int:
        """The line ends in ``[lo, hi)``."""
        raise NotImplementedError

    def check(self) -> None:
        """Raise an :class:`~ctxeval.InputError` if the input changed since it was opened."""

    def whole(self) -> bytes:
        """The text (from :attr:`start`)."""
        data = self.read(self.start, self.size - self.start)
        self.check()
        return data

    def line_of(self, offset: int) -> int:
        """The number of the line holding byte ``offset``."""
        return self.first_line + self.count_nl(0, offset)

    def piece(self, lo: int, hi: int) -> bytes:
        """Bytes ``[lo, hi)`` (a piece of :meth:`cuts`), its lines checked against :data:`LINE_LIMIT`."""
        data = self.read(lo, hi - lo)
        self.check_lines(data, 0, len(data), lo)
        return data

    def check_lines(self, buf: bytes | bytearray, i: int, j: int, base: int) -> None:
        """Raise the error of a line longer than :data:`LINE_LIMIT` in ``buf[i:j]`` (offset ``base + i``)."""
        at = too_long(buf, i, j)
        if at >= 0:
            raise self.long_line(base + at)

    def long_line(self, offset: int) -> FormatError:
        """The error of the line too long that holds byte ``offset``."""
        hi = offset
        while hi > self.start:  # back to the line's start, a MiB at a time
            lo = max(self.start, hi - LINE_LIMIT)
            nl = self.rfind_nl(lo, hi)
            if nl >= 0:
                offset = nl + 1
                break
            hi = offset = lo
        return FormatError(
            self.source,
            self.line_of(offset),
            f"a line longer than {LINE_LIMIT:,} bytes (no line of a run or qrels is that long: a file without "
            "line ends, or not text?)",
        )

    def cuts(self, piece: int = PIECE) -> Iterator[tuple[int, int]]:
        """``(lo, hi)`` of consecutive pieces of whole lines of about ``piece`` bytes, from :attr:`start`
        (the last may lack its line end). A piece ends at the last line end before its nominal end,
        found by a small read there; a line that crosses a nominal end by more than
        :data:`LINE_LIMIT` bytes is an error at once, before any piece is parsed."""
        at, size = self.start, self.size
        while at < size:
            end = at + piece
            cut = None
            while cut is None:
                if end >= size:
                    cut = size
                    break
                cut = self._cut_before(at, end)
                end += piece  # (no line end in the piece: a longer piece)
            yield at, cut
            at = cut

    def _cut_before(self, at: int, end: int) -> int | None:
        """Just after the last line end in ``[at, end)``; None when there is none (and ``end - at`` is
        within a line's limit)."""
        floor = max(at, end - LINE_LIMIT - 1)
        window = 4096
        while True:
            lo = max(floor, end - window)
            nl = self.rfind_nl(lo, end)
            if nl >= 0:
                return nl + 1
            if lo == floor:
                if floor > at:  # LINE_LIMIT + 1 bytes without a line end
                    raise self.long_line(floor)
                return None
            window *= 8


class MemoryText(Text):
    """Text held in memory (decompressed data, a piece of a stream, a test's bytes): a ``bytes`` object,
    which Python ends with a NUL byte (the compiled scanner relies on it)."""

    def __init__(self, data: bytes, source: str, first_line: int = 1, bom: bool = True) -> None:
        self.data = data if type(data) is bytes else bytes(data)
        self.source = source
        self.size = len(self.data)
        self.start = 3 if bom and self.data.startswith(BOM) else 0
        self.first_line = first_line

    def read(self, lo: int, n: int) -> bytes:
        return self.data[lo : lo + n]

    def rfind_nl(self, lo: int, hi: int) -> int:
        return self.data.rfind(b"\n", lo, hi)

    def count_nl(self, lo: int, hi: int) -> int:
        return self.data.count(b"\n", lo, hi)

    def whole(self) -> bytes:
        return self.data[self.start :] if self.start else self.data


class FileText(Text):
    """A regular file read with ``pread`` through its descriptor ``fd`` (see the module docstring)."""

    def __init__(self, fd: int, source: str) -> None:
        self.fd = fd
        self.source = source
        self.opened = os.fstat(fd)
        self.size = self.opened.st_size
        self.start = 3 if self.size >= 3 and os.pread(fd, 3, 0) == BOM else 0

    def read(self, lo: int, n: int) -> bytes:
        data = os.pread(self.fd, n, lo)
        while len(data) < n:
            more = os.pread(self.fd, n - len(data), lo + len(data))
            if not more:
                raise self.changed()
            data += more
        return data

    def read_into(self, buf: bytearray, lo: int, n: int) -> None:
        """Bytes ``[lo, lo + n)`` into ``buf[:n]`` (a thread's reused buffer: no allocation per piece)."""
        with memoryview(buf) as view:
            got = 0
            while got < n:
                k = os.preadv(self.fd, [view[got:n]], lo + got)
                if k <= 0:
                    raise self.changed()
                got += k

    def rfind_nl(self, lo: int, hi: int) -> int:
        nl = self.read(lo, hi - lo).rfind(b"\n")
        return lo + nl if nl >= 0 else -1

    def count_nl(self, lo: int, hi: int) -> int:
        n = 0
        for at in range(lo, hi, PIECE):
            n += self.read(at, min(PIECE, hi - at)).count(b"\n")
        return n

    def check(self) -> None:
        now = os.fstat(self.fd)
        was = self.opened
        if (now.st_size, now.st_mtime_ns, now.st_ino, now.st_dev) != (
            was.st_size,
            was.st_mtime_ns,
            was.st_ino,
            was.st_dev,
        ):
            raise self.changed(now.st_size)

    def changed(self, size: int | None = None) -> InputError:
        if size is None:
            size = os.fstat(self.fd).st_size
        how = f"{self.size:,} bytes when opened, {size:,} now" if size != self.size else "written again"
        return InputError(
            f"{self.source}: the file changed while it was read ({how}): read it again once the program "
            "writing it has finished"
        )


def _stream_copy(stream: Any, source: str) -> Path:
    """A stream's bytes, read once in order, in a temporary file (the caller deletes it)."""
    fd, name = tempfile.mkstemp(prefix="ctxeval-", suffix=".input")
    try:
        with os.fdopen(fd, "wb") as out:
            shutil.copyfileobj(stream, out, 1 << 20)
    except OSError as exc:
        os.unlink(name)
        raise InputError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    return Path(name)


@contextmanager
def local_copy(path: str | os.PathLike[str], source: str, what: str = "input") -> Iterator[Path]:
    """The path of a regular file as it is; ``-`` (standard input) and any other stream (a pipe, a
    FIFO, a device, a shell's process substitution) read once, in order, into a temporary file whose
    path is given instead (deleted afterwards). A missing path or a directory is an error naming it."""
    if str(path) == "-":
        copy = _stream_copy(sys.stdin.buffer, source)
    else:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            raise InputError(f"{source}: no such file") from None
        except OSError as exc:
            raise InputError(f"{source}: cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISDIR(mode):
            article = "an" if what[:1].lower() in "aeiou" else "a"
            raise InputError(f"{source}: is a directory, expected {article} {what} file")
        if stat.S_ISREG(mode):
            yield Path(path)
            return
        try:
            with open(path, "rb", buffering=0) as stream:
                copy = _stream_copy(stream, source)
        except OSError as exc:
            raise InputError(f"{source}: cannot be read ({exc.strerror or exc})") from None
    try:
        yield copy
    finally:
        copy.unlink(missing_ok=True)


def compression(head: bytes, source: str) -> str | None:
    """The compression that ``head`` (a file's first bytes) starts (gzip, bzip2, xz), or None. Formats
    ctxeval does not read are named in an error, when their first bytes are no text the rule would read
    anyway (a NUL or a byte that is not UTF-8 among them)."""
    if _BZIP2.match(head):
        return "bzip2"
    found = next((name for magic, name in _COMPRESSED.items() if head.startswith(magic)), None)
    if found is None and (b"\x00" in head or not _utf8(head)):
        for magic, name in _UNREAD.items():
            if head.startswith(magic):
                raise InputError(f"{source}: {name}: ctxeval reads plain text, gzip, bzip2 and xz")
    return found


def _utf8(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # a character cut at the end of the head
    return True


def decompress(data: bytes, method: str, source: str) -> bytes:
    try:
        return _DECOMPRESS[method](data)
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:
        raise FormatError(source, None, f"cannot decompress {method} data: {exc}") from None


@contextmanager
def open_text(path: str | os.PathLike[str], source: str, what: str = "input") -> Iterator[Text]:
    """The text of ``path`` (a file, ``-`` or another stream; plain or compressed: see the module
    docstring), open for the ``with`` block."""
    with local_copy(path, source, what) as p:
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError as exc:
            raise InputError(f"{source}: cannot be read ({exc.strerror or exc})") from None
        try:
            text = FileText(fd, source)
            method = compression(os.pread(fd, 64, 0), source)
            if method is None:
                yield text
            else:
                yield MemoryText(decompress(text.read(0, text.size), method, source), source)
        finally:
            os.close(fd)


def open_bytes(path: str | os.PathLike[str], source: str | None = None, what: str = "input") -> bytes:
    """The whole text of ``path`` as bytes (decompressed; a byte order mark kept for the caller to skip)."""
    with open_text(path, source or str(path), what) as text:
        data = text.read(0, text.size)  # (a byte order mark kept)
        text.check()
        return data
