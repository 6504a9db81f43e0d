"""A polars-free reader for small, plainly formatted TREC files: numpy alone.

Importing polars costs ~0.15 s, as much as a whole evaluation of a few MB. This module reads a TREC
run or qrels file that is small (:data:`LIGHT_MAX_BYTES`) and plainly formatted — printable ASCII,
fields separated by single spaces or tabs, ``\\n`` or ``\\r\\n`` line ends, exactly the format's
number of fields on every line, no comment or blank lines, every value accepted by the exact
readers — into numpy columns without creating a Python object per field; the core joins them with
numpy alone. Anything else gives ``None`` and the caller takes the next tier, which also produces
every error message, so the tiers cannot disagree about what a file means (the reader tests check
them against each other).

Ids are kept as big-endian ``uint64`` when no id of a column is longer than 8 bytes (integer order is
then byte-wise string order), else as fixed-width ``bytes`` arrays. Numbers of the usual shape
(``-12.345678``: at most 15 digits, no exponent) are parsed exactly without Python: the digits form an
integer m < 2^53 and the value is the correctly rounded quotient m / 10^k, which is what ``float()``
returns; other numbers go through ``float()`` / ``int()`` one by one.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from typing import NamedTuple

import numpy as np

from .._core.columns import Columns, Layout
from .._core.ids import ArrayIds
from .._core.segments import distinct, run_starts

__all__ = ["LIGHT_MAX_BYTES", "Light", "read_trec"]

#: files up to this size (uncompressed) may take the light path (beyond ~250k lines in all, reading with
#: polars costs less than its import)
LIGHT_MAX_BYTES = 6 << 20

_ALLOWED = bytes(range(0x20, 0x7F)) + b"\t\n"  # deleted by translate: what remains is not allowed
_TABS = bytes.maketrans(b"\t", b" ")
_FIELDS = {"run": 6, "qrels": 4}
_INTEGER = re.compile(rb"[+-]?[0-9]+")
_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# _KEEP[n]: the top n bytes of a big-endian uint64
_FRONT = 32  # bytes of padding before the data, so fixed-width windows ending at a field stay inside
_KEEP = np.array([0] + [((1 << (8 * n)) - 1) << (8 * (8 - n)) for n in range(1, 9)], dtype=np.uint64)


class Light(NamedTuple):
    """A file read by the light reader: its columns and, for a run, the tag when one is used throughout."""

    columns: Columns
    tag: str | None


def _as_bytes(ids: np.ndarray) -> np.ndarray:
    """Ids as a ``bytes`` array (``>u8`` ids become ``S8``; trailing NULs are padding)."""
    return ids.astype(">u8").view("S8") if ids.dtype.kind == "u" else ids


def _strings(ids: np.ndarray) -> np.ndarray:
    """Ids as a numpy ``U`` array (ids are ASCII here)."""
    return _as_bytes(ids).astype("U")


def _read_small(path: str | os.PathLike[str]) -> bytes | None:
    try:
        if os.stat(path).st_size > LIGHT_MAX_BYTES:
            return None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
                data = gz.read(LIGHT_MAX_BYTES + 1)
        except (OSError, EOFError):
            return None
        if len(data) > LIGHT_MAX_BYTES:
            return None
    return data


def _normalise(data: bytes) -> bytes | None:
    """Tabs as spaces, ``\\n`` line ends, a final line end; None if anything else is out of the plain
    layout (control characters, non-ASCII, a ``#`` anywhere, a lone ``\\r``)."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    if data.translate(None, _ALLOWED) or b"#" in data or not data or data.isspace():
        return None
    if b"\t" in data:
        data = data.translate(_TABS)
    return data if data.endswith(b"\n") else data + b"\n"


def _fields(arr: np.ndarray, fields: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Start and end offsets (in ``arr``, after its _FRONT bytes of padding) of every field, as int32
    (a light file is a few MB); None unless every line holds exactly ``fields`` non-empty fields
    separated by single spaces."""
    ends = np.flatnonzero(arr[_FRONT:] <= 0x20).astype(np.int32)  # only ' ' and '\n' are left below 0x21
    ends += _FRONT
    n = ends.size // fields
    if n == 0 or ends.size != n * fields:
        return None
    kind = arr[ends].reshape(n, fields)
    if not (bool(np.all(kind[:, -1] == 0x0A)) and bool(np.all(kind[:, :-1] == 0x20))):
        return None
    starts = np.empty_like(ends)
    starts[0] = _FRONT
    np.add(ends[:-1], 1, out=starts[1:])
    if bool(np.any(starts == ends)):  # an empty field: a blank line or a doubled separator
        return None
    return starts, ends


def _chars(arr: np.ndarray, starts: np.ndarray, lengths: np.ndarray, width: int) -> np.ndarray:
    """``uint8[n, width]``: each field's bytes, zero-padded on the right."""
    cols = np.arange(width)
    m = arr[np.minimum(starts[:, None] + cols, arr.size - 1)]
    m[cols[None, :] >= lengths[:, None]] = 0
    return m


def _ids(arr: np.ndarray, words: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    lengths = ends - starts
    width = int(lengths.max())
    if width <= 8:
        return words[starts].astype(np.uint64) & _KEEP[lengths]
    return _chars(arr, starts, lengths, width).view(f"S{width}").reshape(-1)


def _numbers(data: bytes, arr: np.ndarray, starts: np.ndarray, ends: np.ndarray, integer: bool) -> np.ndarray | None:
    """The fields as float64 (``float()`` values) or int64 (``int()`` values); None if one is not a
    number (or not finite, or out of range): the standard reader then reports it.

    Fields of the usual shape — an optional sign, at most 15 digits (18 for integers), one dot at
    most for floats, no exponent — are read right-aligned and zero-padded into a character matrix
    whose columns become the integer ``m`` of their digits (one vector operation per column, so the
    working memory is a few vectors, not a float matrix), and the value is ``m / 10^k``: both exact,
    so the quotient is correctly rounded, as ``float()`` is. Other fields go through ``float()`` /
    ``int()`` one by one.
    """
    lengths = ends - starts
    n = starts.size
    out = np.zeros(n, dtype=np.int64 if integer else np.float64)
    limit = 18 if integer else 16  # character positions (16 with the dot: at most 15 digits)
    width = min(int(lengths.max()), limit + 1)  # + 1 for a sign
    # `arr` starts with _FRONT bytes of padding, so every window below lies inside it
    window = np.lib.stride_tricks.as_strided(arr, shape=(arr.size - width + 1, width), strides=(1, 1))
    c = window[ends - width]
    c -= np.uint8(0x30)  # digits 0-9, "." 0xFE, "-" 0xFD, "+" 0xFB
    first = width - lengths  # column of the field's first character (< 0: longer than the window)
    lead = c[np.arange(n), np.maximum(first, 0)]
    negative = lead == np.uint8(0xFD)
    signed = negative | (lead == np.uint8(0xFB))
    body = first + signed  # column of the first digit (or dot)
    fast = (lengths - signed <= limit) & (lengths > signed)
    # column by column (a few vectors of working memory, no character matrix beyond `c`): the digits
    # as the integer m (Horner, exact in int64: at most 18 digits), the dot skipped; a float is
    # m / 10^k, k the digits right of its dot: m < 2^53 (15 digits) and 10^k are exact, so the
    # quotient is correctly rounded, as float() is
    m = np.zeros(n, dtype=np.int64)
    step = np.empty(n, dtype=np.int64)
    dots = np.zeros(n, dtype=np.int8)
    places = np.zeros(n, dtype=np.int8)
    for j in range(width):
        d = c[:, j]
        inside = body <= j
        digit = d < 10
        take = digit & inside
        if integer:
            fast &= digit | ~inside
        else:
            dot = (d == np.uint8(0xFE)) & inside
            fast &= digit | dot | ~inside
            places += take & (dots > 0)
            dots += dot
        np.multiply(m, 10, out=step)
        np.add(step, d, out=step, casting="unsafe")
        np.copyto(m, step, where=take)
    if not integer:
        fast &= (dots <= 1) & ~((dots == 1) & (lengths - signed == 1))  # "." alone is not a number
    if integer:
        out[fast] = m[fast]
    else:
        for k in distinct(places[fast]).tolist():
            rows = fast & (places == k)
            out[rows] = m[rows] / 10.0**k
    if negative.any():
        flip = negative & fast
        out[flip] = -out[flip]
    slow = np.flatnonzero(~fast)
    if slow.size:
        convert = int if integer else float
        shape = _INTEGER if integer else _DECIMAL
        tokens = [data[a - _FRONT : b - _FRONT] for a, b in zip(starts[slow].tolist(), ends[slow].tolist())]
        if not all(shape.fullmatch(t) for t in tokens):
            return None  # 1_0, 2.0 as a grade, inf ...: the exact reader decides
        try:
            out[slow] = [convert(t) for t in tokens]
        except (ValueError, OverflowError):
            return None
        if integer and int(out.min()) == np.iinfo(np.int64).min:  # cannot be negated for sorting
            return None
    if not integer and not bool(np.isfinite(out).all()):
        return None
    return out


def read_trec(path: str | os.PathLike[str], kind: str) -> Light | None:
    """Parse a small, plainly formatted TREC run or qrels file, or return ``None``."""
    raw = _read_small(path)
    return parse(raw, kind) if raw is not None else None


def parse(raw: bytes, kind: str) -> Light | None:
    """Parse plainly formatted TREC text (any size), or return ``None``."""
    data = _normalise(raw)
    if data is None:
        return None
    nf = _FIELDS[kind]
    # _FRONT bytes of padding before (windows ending at a field) and 8 after (words starting at one)
    padded = b" " * _FRONT + data + bytes(8)
    arr = np.frombuffer(padded, dtype=np.uint8)[: _FRONT + len(data)]
    found = _fields(arr, nf)
    if found is None:
        return None
    starts, ends = found
    # every byte offset as the start of a big-endian uint64
    words = np.ndarray((len(padded) - 7,), dtype=">u8", buffer=padded, strides=(1,))
    query = _ids(arr, words, starts[0::nf], ends[0::nf])
    doc = _ids(arr, words, starts[2::nf], ends[2::nf])
    col = 4 if kind == "run" else 3
    values = _numbers(data, arr, starts[col::nf], ends[col::nf], integer=kind == "qrels")
    if values is None:
        return None  # the standard path reports the bad value
    tag = None
    if kind == "run":
        tags = _ids(arr, words, starts[5::nf], ends[5::nf])
        if bool(np.all(tags == tags[0])):
            tag = str(_strings(tags[:1])[0])
    return Light(_columns(query, doc, values), tag)


def _columns(query: np.ndarray, doc: np.ndarray, values: np.ndarray) -> Columns:
    n = query.size
    starts = run_starts(query)
    heads = query[starts]
    order = np.argsort(heads, kind="stable")
    sh = heads[order]
    if not bool(np.any(sh[1:] == sh[:-1])):  # grouped: every query's rows contiguous
        return Columns(Layout(_strings(heads), np.diff(np.r_[starts, n]), n), ArrayIds(doc), values)
    names = distinct(query)
    codes = np.searchsorted(names, query)
    return Columns.from_codes(codes, _strings(names), ArrayIds(doc), values)
