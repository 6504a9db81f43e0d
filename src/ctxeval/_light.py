"""A polars-free path for small, plainly formatted TREC files: read and join them with numpy alone.

Importing polars costs ~0.15 s, as much as a whole evaluation of a few MB. This module reads a TREC
run or qrels file that is small (:data:`LIGHT_MAX_BYTES`) and plainly formatted — printable ASCII,
fields separated by single spaces or tabs, ``\\n`` or ``\\r\\n`` line ends, exactly the format's
number of fields on every line, no comment or blank lines, no repeated (query, doc) pair, every value
accepted by the exact readers — into numpy columns without creating a Python object per field, and
:func:`prepare` builds the same :class:`~ctxeval._engine.EvalData` as the engine. Anything else gives
``None`` and the caller takes the standard path, which also produces every error message, so the two
paths cannot disagree about what a file means (tests/test_light.py checks them against each other).

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
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._engine import EvalData

__all__ = ["Columns", "LIGHT_MAX_BYTES", "read_trec", "prepare"]

#: files up to this size (uncompressed) may take the light path (beyond ~250k lines in all, reading with
#: polars costs less than its import)
LIGHT_MAX_BYTES = 6 << 20

_ALLOWED = bytes(range(0x20, 0x7F)) + b"\t\n"  # deleted by translate: what remains is not allowed
_TABS = bytes.maketrans(b"\t", b" ")
_FIELDS = {"run": 6, "qrels": 4}
# _KEEP[n]: the top n bytes of a big-endian uint64
_FRONT = 32  # bytes of padding before the data, so fixed-width windows ending at a field stay inside
_KEEP = np.array([0] + [((1 << (8 * n)) - 1) << (8 * (8 - n)) for n in range(1, 9)], dtype=np.uint64)


class Columns:
    """A parsed TREC file: ids as ``>u8`` or ``S<w>`` arrays, values as float64 or int64."""

    __slots__ = ("kind", "query", "doc", "values", "tag")

    def __init__(self, kind: str, query: np.ndarray, doc: np.ndarray, values: np.ndarray, tag: str | None) -> None:
        self.kind = kind
        self.query = query
        self.doc = doc
        self.values = values  #: float64 scores (run) or int64 grades (qrels)
        self.tag = tag  #: the run's tag when one is used throughout

    def __len__(self) -> int:
        return int(self.values.size)

    def to_frame(self) -> object:
        """The same polars frame the standard reader gives (without the tag column)."""
        import polars as pl

        value = "score" if self.kind == "run" else "relevance"
        return pl.DataFrame(
            {
                # fixed-width bytes become Binary without their NUL padding; ids are ASCII
                "query_id": pl.Series(_as_bytes(self.query)).cast(pl.String),
                "doc_id": pl.Series(_as_bytes(self.doc)).cast(pl.String),
                value: pl.Series(self.values, dtype=pl.Float64 if self.kind == "run" else pl.Int64),
            }
        )


def _as_bytes(ids: np.ndarray) -> np.ndarray:
    """Ids as a ``bytes`` array (``>u8`` ids become ``S8``; trailing NULs are padding)."""
    return ids.astype(">u8").view("S8") if ids.dtype.kind == "u" else ids


def _strings(ids: np.ndarray) -> list[str]:
    return [b.decode("ascii") for b in _as_bytes(ids).tolist()]


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
    if data.translate(None, _ALLOWED) or b"#" in data or not data.strip():
        return None
    if b"\t" in data:
        data = data.translate(_TABS)
    return data if data.endswith(b"\n") else data + b"\n"


def _fields(arr: np.ndarray, fields: int) -> tuple[np.ndarray, np.ndarray] | None:
    """Start and end offsets (in ``arr``, after its _FRONT bytes of padding) of every field; None
    unless every line holds exactly ``fields`` non-empty fields separated by single spaces."""
    ends = np.flatnonzero(arr[_FRONT:] <= 0x20) + _FRONT  # only ' ' and '\n' are left below 0x21
    n = ends.size // fields
    if n == 0 or ends.size != n * fields:
        return None
    kind = arr[ends].reshape(n, fields)
    if not (bool(np.all(kind[:, -1] == 0x0A)) and bool(np.all(kind[:, :-1] == 0x20))):
        return None
    starts = np.empty_like(ends)
    starts[0] = _FRONT
    starts[1:] = ends[:-1] + 1
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
    most for floats, no exponent — are read right-aligned and zero-padded into a character matrix;
    rows with the dot in the same column share one weight vector, so the digits become the integer
    ``m`` in one matrix product, and the value is ``m / 10^k``: both exact, so the quotient is
    correctly rounded, as ``float()`` is. Other fields go through ``float()`` / ``int()`` one by one.
    """
    lengths = ends - starts
    n = starts.size
    out = np.zeros(n, dtype=np.int64 if integer else np.float64)
    limit = 18 if integer else 16  # character positions (16 with the dot: at most 15 digits)
    width = min(int(lengths.max()), limit + 1)  # + 1 for a sign
    # `arr` starts with _FRONT bytes of padding, so every window below lies inside it
    window = np.lib.stride_tricks.as_strided(arr, shape=(arr.size - width + 1, width), strides=(1, 1))
    c = window[ends - width]
    cols = np.arange(width, dtype=np.int32)
    pad = cols[None, :] < (width - lengths)[:, None]
    np.putmask(c, pad, np.uint8(0x30))  # left padding with '0'
    signed = np.zeros(n, dtype=bool)
    first = np.maximum(width - lengths, 0)
    lead = c[np.arange(n), first]
    negative = lead == 0x2D
    signed = negative | (lead == 0x2B)
    if signed.any():
        c[np.flatnonzero(signed), first[signed]] = 0x30
    c -= np.uint8(0x30)
    digit = c < 10
    dot = c == np.uint8(0xFE)  # "." - "0" wraps to 0xFE
    n_dots = np.count_nonzero(dot, axis=1)
    fast = np.count_nonzero(digit, axis=1) + n_dots == width
    fast &= (lengths - signed <= limit) & (lengths > signed) & (n_dots <= (0 if integer else 1))
    if not integer:
        fast &= ~((n_dots == 1) & (lengths - signed == 1))  # "." alone is not a number
    # integers: exact int64 products; floats: at most 15 digits, so every partial sum of the float64
    # product stays below 2^53 and is exact
    np.putmask(c, dot, np.uint8(0))
    d = c.astype(np.int64 if integer else np.float64)
    dot_col = np.where(n_dots > 0, np.argmax(dot, axis=1), width) if not integer else np.full(n, width)
    for col in _unique(dot_col[fast]).tolist():
        rows = np.flatnonzero(fast & (dot_col == col))
        # weight of column j: 10^(digit positions to its right), skipping the dot column
        right = (width - 1 - cols) - ((cols < col) & (col < width))
        weights = np.where(cols == col, 0, np.power(np.int64(10), np.maximum(right, 0))).astype(d.dtype)
        m = (d if rows.size == n else d[rows]) @ weights
        if integer:
            out[rows] = m
        else:
            out[rows] = m / 10.0 ** (width - 1 - col if col < width else 0)
    if negative.any():
        flip = negative & fast
        out[flip] = -out[flip]
    slow = np.flatnonzero(~fast)
    if slow.size:
        convert = int if integer else float
        try:
            out[slow] = [convert(data[a - _FRONT : b - _FRONT]) for a, b in zip(starts[slow].tolist(), ends[slow].tolist())]
        except (ValueError, OverflowError):
            return None
        if integer and int(out.min()) == np.iinfo(np.int64).min:  # cannot be negated for sorting
            return None
    if not integer and not bool(np.isfinite(out).all()):
        return None
    return out


def read_trec(path: str | os.PathLike[str], kind: str) -> Columns | None:
    """Parse a small, plainly formatted TREC run or qrels file, or return ``None``."""
    raw = _read_small(path)
    data = _normalise(raw) if raw is not None else None
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
    if values is None or not _pairs_distinct(query, doc):
        return None  # the standard path reports the bad value or the repeated pair
    tag = None
    if kind == "run":
        tags = _ids(arr, words, starts[5::nf], ends[5::nf])
        if bool(np.all(tags == tags[0])):
            tag = _strings(tags[:1])[0]
    return Columns(kind, query, doc, values, tag)


def _pairs_distinct(query: np.ndarray, doc: np.ndarray) -> bool:
    if query.dtype.kind == "u" and doc.dtype.kind == "u":
        # distinct mixed keys prove distinct pairs; equal keys are checked exactly below
        key = np.sort(query * np.uint64(0x9E3779B97F4A7C15) ^ doc)
        if not bool(np.any(key[1:] == key[:-1])):
            return True
    order = np.lexsort((doc, query))
    q, d = query[order], doc[order]
    return not bool(np.any((q[1:] == q[:-1]) & (d[1:] == d[:-1])))


def _unique(a: np.ndarray) -> np.ndarray:
    """Sorted distinct values (``np.unique`` without its import of ``numpy.ma``)."""
    s = np.sort(a)
    return s[np.r_[True, s[1:] != s[:-1]]] if s.size else s


def _inverse(a: np.ndarray) -> np.ndarray:
    """Each element's position among the sorted distinct values of ``a``."""
    order = np.argsort(a, kind="stable")
    s = a[order]
    out = np.empty(a.size, dtype=np.int64)
    out[order] = np.cumsum(np.r_[False, s[1:] != s[:-1]]) if s.size else s
    return out


def _harmonise(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two id arrays in one comparable representation (``uint64`` if both are, else bytes)."""
    if a.dtype.kind == "u" and b.dtype.kind == "u":
        return a, b
    width = max(_as_bytes(a).dtype.itemsize, _as_bytes(b).dtype.itemsize)
    return _as_bytes(a).astype(f"S{width}"), _as_bytes(b).astype(f"S{width}")


def _starts(ids: np.ndarray) -> np.ndarray:
    """First row of every run of equal ids."""
    return np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])


def _query_index(ids: np.ndarray, universe: np.ndarray) -> np.ndarray:
    """Position of every id in the sorted ``universe``, computed once per run of equal ids."""
    starts = _starts(ids)
    return np.repeat(np.searchsorted(universe, ids[starts]), np.diff(np.r_[starts, ids.size]))


def _desc_key(doc: np.ndarray) -> np.ndarray:
    """An ascending sort key that orders ``doc`` descending (byte-wise)."""
    return ~doc if doc.dtype.kind == "u" else -_inverse(doc)


def _rank_order(rq: np.ndarray, scores: np.ndarray, doc: np.ndarray, ties: str) -> np.ndarray:
    """Row order: query position ascending, then score (as float32) descending and doc id descending
    (``ties="trec"``) or file order (``ties="input"``). Rows already in score order within contiguous
    queries (the usual layout of a run file) are not sorted: only runs of tied scores out of doc id
    order are, and whole queries are moved."""
    from ._segments import segment_rows

    n = rq.size
    starts = _starts(rq)
    lengths = np.diff(np.r_[starts, n])
    if _unique(rq[starts]).size == starts.size:  # every query's rows are contiguous
        perm = None
        if ties == "trec" and n > 1:
            s32 = scores.astype(np.float32)
            same = np.ones(n - 1, dtype=bool)
            same[starts[1:] - 1] = False
            a, b = s32[:-1], s32[1:]
            if bool(np.any((a < b) & same)):
                return np.lexsort((_desc_key(doc), -s32, rq))
            t = np.flatnonzero((a == b) & same)
            if t.size and not bool(np.all(doc[t] > doc[t + 1])):
                # sort each run of tied rows by doc id descending
                linked = np.zeros(n, dtype=bool)
                linked[t + 1] = True
                in_tie = linked.copy()
                in_tie[t] = True
                rows = np.flatnonzero(in_tie)
                run_id = np.cumsum(~linked[rows])
                perm = np.arange(n, dtype=np.int64)
                perm[rows] = rows[np.lexsort((_desc_key(doc[rows]), run_id))]
        seg = np.argsort(rq[starts], kind="stable")
        order = segment_rows(starts[seg], lengths[seg])
        return order if perm is None else perm[order]
    if ties == "input":
        return np.argsort(rq, kind="stable")
    return np.lexsort((_desc_key(doc), -scores.astype(np.float32), rq))


def _judged(rq: np.ndarray, rd: np.ndarray, kept: np.ndarray, qq: np.ndarray, qd: np.ndarray, hashed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Positions in ``kept`` of the run rows with the same (query, doc) as a qrels row, and that row.

    ``hashed``: 64-bit keys mixed from the query position and the ``uint64`` doc id, every match then
    checked exactly (a collision redoes the lookup with exact codes); else exact codes of the docs.
    """
    if hashed:
        mix = np.uint64(0x9E3779B97F4A7C15)
        rkey = rq[kept].astype(np.uint64) * mix ^ rd[kept]
        qkey = qq.astype(np.uint64) * mix ^ qd
    else:
        ud = _unique(np.concatenate([rd, qd]))
        n_doc = np.int64(ud.size)
        rkey = rq[kept] * n_doc + np.searchsorted(ud, rd[kept])
        qkey = qq * n_doc + np.searchsorted(ud, qd)
    qsort = np.argsort(qkey, kind="stable")
    skey = qkey[qsort]
    at = np.minimum(np.searchsorted(skey, rkey), skey.size - 1)
    j_idx = np.flatnonzero(skey[at] == rkey)
    qrow = qsort[at[j_idx]]
    if hashed:
        rows = kept[j_idx]
        if not bool(np.all((rq[rows] == qq[qrow]) & (rd[rows] == qd[qrow]))) or bool(np.any(skey[1:] == skey[:-1])):
            return _judged(rq, rd, kept, qq, qd, hashed=False)
    return j_idx, qrow


def prepare(qrels: Columns, run: Columns, ties: str, missing: str, run_name: str) -> EvalData:
    """The :class:`~ctxeval._engine.EvalData` of ``run`` against ``qrels`` (see ``_engine.prepare``).

    Query ids sort byte-wise, rows rank by float32 score descending then doc id descending
    (``ties="trec"``) or in file order (``ties="input"``).
    """
    from ._engine import EvalData, QueryAccounting
    from ._errors import QueryMismatchError

    rq_ids, qq_ids = _harmonise(run.query, qrels.query)
    uq = _unique(np.concatenate([rq_ids[_starts(rq_ids)], qq_ids[_starts(qq_ids)]]))
    rq, qq = _query_index(rq_ids, uq), _query_index(qq_ids, uq)
    judged = np.zeros(uq.size, dtype=bool)
    judged[qq] = True
    in_run = np.zeros(uq.size, dtype=bool)
    in_run[rq] = True
    names = _strings(uq)
    missing_ids = tuple(names[i] for i in np.flatnonzero(judged & ~in_run).tolist())
    unjudged = np.flatnonzero(in_run & ~judged)
    if missing == "error" and missing_ids:
        shown = ", ".join(missing_ids[:5]) + (" ..." if len(missing_ids) > 5 else "")
        raise QueryMismatchError(
            f"run {run_name!r}: {len(missing_ids)} judged quer{'y is' if len(missing_ids) == 1 else 'ies are'} "
            f"missing from the run ({shown}); use missing='zero' or 'ignore'"
        )
    evaluated = judged if missing == "zero" else judged & in_run
    qpos = np.flatnonzero(evaluated)
    n_q = qpos.size
    # position of every distinct query among the evaluated ones; n_q (sorted last) if not evaluated
    new = np.full(uq.size, n_q, dtype=np.int64)
    new[qpos] = np.arange(n_q, dtype=np.int64)
    acc = QueryAccounting(
        evaluated=int(np.count_nonzero(judged & in_run)),
        missing=len(missing_ids),
        unjudged=int(unjudged.size),
        missing_policy=missing,
        missing_ids=missing_ids,
        unjudged_ids=tuple(names[i] for i in unjudged.tolist()),
    )
    rd_ids, qd_ids = _harmonise(run.doc, qrels.doc)
    order = _rank_order(rq, run.values, rd_ids, ties)
    kept = order[evaluated[rq[order]]]  # the ranked rows of the evaluated queries
    rq, qq = new[rq], new[qq]
    r_off = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(rq[kept], minlength=n_q), out=r_off[1:])
    j_idx, qrow = _judged(rq, rd_ids, kept, qq, qd_ids, hashed=rd_ids.dtype.kind == "u")
    j_grade = qrels.values[qrow]
    # every evaluated query's judged grades, descending
    qorder = np.lexsort((-qrels.values, qq))
    qorder = qorder[: int(np.searchsorted(qq[qorder], n_q))]
    q_off = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(qq[qorder], minlength=n_q), out=q_off[1:])
    return EvalData(
        [names[i] for i in qpos.tolist()],
        r_off,
        j_idx.astype(np.int64),
        j_grade.astype(np.int64),
        q_off,
        qrels.values[qorder].astype(np.int64),
        in_run[qpos],
        acc,
        None,
        ties,
        int(qrels.values.max()) if len(qrels) else 0,
    )
