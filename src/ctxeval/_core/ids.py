"""Id columns: what the core needs of a column of ids, and the numpy implementation.

The core never holds ids as Python strings row by row. A column of ids is an :class:`Ids`: it hashes
its rows to 64-bit values, compares rows exactly (with itself and with another column), orders rows
by id, gathers and, at the edge only, turns rows back into strings. Two implementations exist: the
numpy one here (:class:`ArrayIds`, ids as fixed-width bytes or, when no id is longer than 8 bytes,
as big-endian ``uint64``, whose integer order is the byte-wise order of the ids), and a reader's one
over a column of a dataframe library (see ``ctxeval._io.ids``), which parses large files without
copying their ids. Columns of different kinds are made comparable by :func:`harmonise` before two
are matched; hashes are only ever compared between columns of one kind.

Ids are compared byte-wise on their UTF-8 bytes (the order trec_eval's ``strcmp`` gives).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .._native import hash_be64, hash_bytes

__all__ = ["MIX", "ArrayIds", "Ids", "harmonise", "splitmix"]

MIX = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it permutes the 64-bit values
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


def splitmix(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser: a bijection of uint64 that spreads every input bit over the output."""
    z = np.asarray(x, dtype=np.uint64).copy()
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


@runtime_checkable
class Ids(Protocol):
    """A column of ids (see the module docstring). Row arguments are int64 index arrays."""

    def __len__(self) -> int: ...

    def hash(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        """``uint64`` hash of rows ``lo..hi-1``; equal ids give equal hashes within one kind."""
        ...

    def take(self, rows: np.ndarray) -> Ids:
        """The column of the given rows."""
        ...

    def slice(self, lo: int, hi: int) -> Ids:
        """Rows ``lo..hi-1`` (no copy where the kind allows)."""
        ...

    def equal(self, rows: np.ndarray, other: Ids, other_rows: np.ndarray) -> np.ndarray:
        """``bool[len(rows)]``: ``self[rows[i]] == other[other_rows[i]]`` (columns of one kind)."""
        ...

    def greater(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """``bool``: ``self[a[i]] > self[b[i]]`` byte-wise."""
        ...

    def order(self, rows: np.ndarray, keys: tuple[np.ndarray, ...]) -> np.ndarray:
        """``rows`` sorted by ``keys`` (numpy arrays aligned with ``rows``, ascending, first key
        first), then by id descending; stable."""
        ...

    def to_list(self, rows: np.ndarray | None = None) -> list[str]:
        """The ids of ``rows`` (default: all) as strings."""
        ...

    def harmonise(self, other: Ids) -> tuple[Ids, Ids] | None:
        """``(self', other')`` of one kind holding the same ids, or None if this kind cannot."""
        ...


class ArrayIds:
    """Ids held by numpy: ``>u8`` (every id at most 8 bytes, big-endian, zero-padded) or ``S<w>``
    (zero-padded bytes). Ids never hold a NUL byte, so the padding never makes two ids equal.

    >>> ids = ArrayIds.from_strings(["d2", "d10", "d1"])
    >>> ids.greater(np.array([0]), np.array([1])).tolist(), ids.to_list(ids.order(np.arange(3), ()))
    ([True], ['d2', 'd10', 'd1'])
    """

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray) -> None:
        if not (a.dtype == np.dtype(">u8") or a.dtype.kind == "S") or a.ndim != 1:
            raise TypeError(f"ArrayIds holds one-dimensional '>u8' or 'S' arrays, got {a.dtype} ({a.ndim} dimensions)")
        self.a = a

    @classmethod
    def from_strings(cls, ids: list[str]) -> ArrayIds:
        raw = [s.encode("utf-8") for s in ids]
        width = max((len(b) for b in raw), default=1)
        arr = np.array(raw, dtype=f"S{max(width, 1)}")
        return cls(_pack(arr))

    def __len__(self) -> int:
        return int(self.a.shape[0])

    def __repr__(self) -> str:
        return f"ArrayIds({len(self)} ids, {self.a.dtype})"

    def as_bytes(self) -> np.ndarray:
        """The ids as an ``S<w>`` array (``>u8`` ids viewed as ``S8``)."""
        return self.a.astype(">u8").view("S8") if self.a.dtype.kind == "u" else self.a

    def hash(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        a = self.a[lo:hi]
        fast = hash_be64(a) if a.dtype.kind == "u" else hash_bytes(a)  # one pass, same values
        if fast is not None:
            return fast
        if a.dtype.kind == "u":
            return splitmix(a.astype(np.uint64))
        cols = a.view(np.uint8).reshape(a.shape[0], a.dtype.itemsize)
        h = np.full(a.shape[0], _FNV_OFFSET, dtype=np.uint64)
        for j in range(cols.shape[1]):
            h ^= cols[:, j]
            h *= _FNV_PRIME
        return splitmix(h)

    def take(self, rows: np.ndarray) -> ArrayIds:
        return ArrayIds(self.a[rows])

    def slice(self, lo: int, hi: int) -> ArrayIds:
        return ArrayIds(self.a[lo:hi])

    def equal(self, rows: np.ndarray, other: Ids, other_rows: np.ndarray) -> np.ndarray:
        if not isinstance(other, ArrayIds):
            raise TypeError("harmonise the columns before comparing them")
        x, y = self.a[rows], other.a[other_rows]
        if x.dtype != y.dtype:
            x, y = _common(x, y)
        return np.asarray(x == y)

    def greater(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(self.a[a] > self.a[b])

    def order(self, rows: np.ndarray, keys: tuple[np.ndarray, ...]) -> np.ndarray:
        ids = self.a[rows]
        desc = ~ids if ids.dtype.kind == "u" else -_dense_rank(ids)
        return rows[np.lexsort((desc, *reversed(keys)))]

    def to_list(self, rows: np.ndarray | None = None) -> list[str]:
        a = self.as_bytes() if rows is None else ArrayIds(self.a[rows]).as_bytes()
        return [b.decode("utf-8") for b in a.tolist()]

    def harmonise(self, other: Ids) -> tuple[Ids, Ids] | None:
        if not isinstance(other, ArrayIds):
            return None
        if self.a.dtype == other.a.dtype:
            return self, other
        x, y = _common(self.a, other.a)
        return ArrayIds(x), ArrayIds(y)


def _pack(arr: np.ndarray) -> np.ndarray:
    """``S<w>`` ids as big-endian ``uint64`` when every id fits in 8 bytes (integer order = byte order)."""
    if arr.dtype.itemsize > 8:
        return arr
    return np.frombuffer(arr.astype("S8").tobytes(), dtype=">u8").copy() if arr.size else np.zeros(0, dtype=">u8")


def _common(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two id arrays in one representation: ``>u8`` if both are, else ``S`` of the larger width."""
    if x.dtype.kind == "u" and y.dtype.kind == "u":
        return x, y
    bx = x.astype(">u8").view("S8") if x.dtype.kind == "u" else x
    by = y.astype(">u8").view("S8") if y.dtype.kind == "u" else y
    width = max(bx.dtype.itemsize, by.dtype.itemsize)
    return bx.astype(f"S{width}"), by.astype(f"S{width}")


def _dense_rank(a: np.ndarray) -> np.ndarray:
    """Each element's position among the sorted distinct values of ``a``."""
    order = np.argsort(a, kind="stable")
    s = a[order]
    out = np.empty(a.size, dtype=np.int64)
    out[order] = np.cumsum(np.r_[False, s[1:] != s[:-1]]) if s.size else s
    return out


def harmonise(a: Ids, b: Ids) -> tuple[Ids, Ids]:
    """The two columns in one kind (see :meth:`Ids.harmonise`); either side may convert."""
    found = a.harmonise(b)
    if found is not None:
        return found
    back = b.harmonise(a)
    if back is not None:
        return back[1], back[0]
    raise TypeError(f"cannot compare id columns of kinds {type(a).__name__} and {type(b).__name__}")
