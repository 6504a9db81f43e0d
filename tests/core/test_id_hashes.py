"""The 64-bit hashes of ids (``ArrayIds.hash``): the compiled kernels (``ctxeval._native``) and the
numpy code both give the values of the definition, written out here with Python integers:
``splitmix64`` of the id's big-endian value (ids of at most 8 bytes), or of FNV-1a over the id's
bytes padded with zeros to the column's width."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxeval import _native
from ctxeval._core.ids import ArrayIds

M = (1 << 64) - 1


def splitmix64(z: int) -> int:
    z ^= z >> 30
    z = (z * 0xBF58476D1CE4E5B9) & M
    z ^= z >> 27
    z = (z * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def definition(ids: list[bytes]) -> list[int]:
    width = max(len(b) for b in ids)
    if width <= 8:
        return [splitmix64(int.from_bytes(b.ljust(8, b"\0"), "big")) for b in ids]
    out = []
    for b in ids:
        h = 0xCBF29CE484222325
        for byte in b.ljust(width, b"\0"):
            h = ((h ^ byte) * 0x100000001B3) & M
        out.append(splitmix64(h))
    return out


_ID = st.binary(min_size=1, max_size=24).filter(lambda b: b"\0" not in b)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "numpy"])
@given(ids=st.lists(_ID, min_size=1, max_size=40))
def test_hashes_are_the_definitions(ids: list[bytes], compiled: bool) -> None:
    col = ArrayIds.from_strings([b.decode("latin-1") for b in ids])  # one byte per character: U+0000-U+00FF
    raw = [s.encode() for s in (b.decode("latin-1") for b in ids)]  # the UTF-8 bytes the column holds
    saved = _native.LIB
    if not compiled:
        _native.LIB = None
    try:
        got = col.hash()
        part = col.hash(1, len(ids))
    finally:
        _native.LIB = saved
    assert got.dtype == np.uint64
    assert got.tolist() == definition(raw)
    assert part.tolist() == definition(raw)[1:] if len(raw) > 1 else part.size == 0


def test_the_kernels_are_in_use_here() -> None:
    """The two cases above differ only where the library is built (tests/io/test_native_build.py)."""
    if not _native.available():
        pytest.skip(f"compiled kernels {_native.status()}")
    a = ArrayIds.from_strings(["d1", "D6751803"]).a
    assert _native.hash_be64(a) is not None
