"""ctxeval's compiled kernels (``_native.c``): the TREC scanner and the id hashes, loaded with ctypes.

``_native.c`` is a plain C library (no Python headers, no Python object): ``hatch_build.py`` compiles
it into ``libctxeval_native.so`` beside this module when the package is installed, with the C
compiler Python was built with; without one, ctxeval installs and gives the same results, reading
large TREC files and hashing ids with numpy alone, more slowly; the build then leaves a one-line
file saying why (no compiler, or a compiler that failed), which :func:`status` reports.
``CTXEVAL_NATIVE=0`` in the environment turns the library off. A library built from another version
of the source is not used, nor one of another layout (:data:`ABI`): the CRC-32 of ``_native.c`` is
compiled in and compared with the source beside this module. That is a **staleness check** (an
editable install whose source changed since it was compiled), not a verification: a CRC is no proof
of what a library holds, and where the source is absent (a wheel) only the layout is checked.

ctypes releases the GIL during every call, so the kernels run in parallel on the blocks of
:func:`ctxeval._core.segments.map_blocks` and on the pieces of :mod:`ctxeval._io.native`.
"""

from __future__ import annotations

import ctypes
import os
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["ABI", "LIB", "Scan", "available", "hash_be64", "hash_bytes", "load", "status"]

ABI = 2  #: the ``ctx_abi_version()`` this module was written for

_HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = "libctxeval_native" + (".dll" if os.name == "nt" else ".so")


class Scan(ctypes.Structure):
    """``ctx_scan_t`` of ``_native.c`` (the field comments are there)."""

    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("len", ctypes.c_int64),
        ("kind", ctypes.c_int64),
        ("doc_width", ctypes.c_int64),
        ("head_width", ctypes.c_int64),
        ("cap", ctypes.c_int64),
        ("head_cap", ctypes.c_int64),
        ("docs", ctypes.c_void_p),
        ("scores", ctypes.c_void_p),
        ("grades", ctypes.c_void_p),
        ("heads", ctypes.c_void_p),
        ("head_rows", ctypes.c_void_p),
        ("rows", ctypes.c_int64),
        ("n_heads", ctypes.c_int64),
        ("need_width", ctypes.c_int64),
        ("tag_off", ctypes.c_int64),
        ("tag_len", ctypes.c_int64),
        ("one_tag", ctypes.c_int64),
        ("bad_at", ctypes.c_int64),
        ("max_doc", ctypes.c_int64),
        ("status", ctypes.c_int64),
    ]


STATUS = "libctxeval_native.status"  #: the build's word on why the library is not built (hatch_build.py)


def load(path: str) -> tuple[ctypes.CDLL | None, str]:
    """The library at ``path``, or None and why not (the tests load other builds of the source)."""
    if not os.path.isfile(path):
        try:
            with open(os.path.join(os.path.dirname(path), STATUS), encoding="utf-8") as fh:
                return None, fh.read().strip() or "not built"
        except OSError:
            return None, "not built (no C compiler when ctxeval was installed, or its build failed)"
    try:
        lib = ctypes.CDLL(path)
        lib.ctx_abi_version.restype = ctypes.c_int64
        lib.ctx_source_crc.restype = ctypes.c_char_p
        source = os.path.join(_HERE, "_native.c")
        if os.path.isfile(source):
            with open(source, "rb") as fh:
                crc = b"%08x" % zlib.crc32(fh.read())
            if lib.ctx_source_crc() != crc:
                return None, "stale (built from another version of _native.c: reinstall ctxeval, pip install -e .)"
        if lib.ctx_abi_version() != ABI:
            return None, "stale (another version's layout: reinstall ctxeval)"
        lib.ctx_scan.restype = ctypes.c_int64
        lib.ctx_scan.argtypes = [ctypes.POINTER(Scan)]
        for name in ("ctx_hash_be64", "ctx_hash_bytes"):
            getattr(lib, name).restype = None
        lib.ctx_hash_be64.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
        lib.ctx_hash_bytes.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]
    except (OSError, AttributeError) as exc:
        return None, f"cannot be loaded ({exc})"
    return lib, "in use"


def _load() -> tuple[ctypes.CDLL | None, str]:
    if os.environ.get("CTXEVAL_NATIVE", "1") == "0":
        return None, "off (CTXEVAL_NATIVE=0)"
    return load(os.path.join(_HERE, LIBRARY))


LIB, _STATUS = _load()


def available() -> bool:
    """Whether the compiled kernels are built and in use."""
    return LIB is not None


def status() -> str:
    """Their state in words ("in use", or why not)."""
    return _STATUS


def hash_be64(ids: np.ndarray) -> np.ndarray | None:
    """``splitmix64`` of each ``>u8`` id's value (what :func:`ctxeval._core.ids.splitmix` of
    ``ids.astype(np.uint64)`` gives), in one pass; None without the library. Only a one-dimensional
    ``>u8`` array (what ``ctx_hash_be64`` reads: 8 big-endian bytes a row); anything else is a
    TypeError, never read past its end."""
    if LIB is None:
        return None
    import numpy as np

    if ids.dtype != np.dtype(">u8") or ids.ndim != 1:
        raise TypeError(f"hash_be64 reads a one-dimensional '>u8' array, not {ids.dtype} of {ids.ndim} dimensions")
    a = np.ascontiguousarray(ids)
    out = np.empty(a.shape[0], dtype=np.uint64)
    LIB.ctx_hash_be64(a.ctypes.data, out.ctypes.data, a.shape[0])
    return out


def hash_bytes(ids: np.ndarray) -> np.ndarray | None:
    """FNV-1a over each ``S<w>`` id's ``w`` bytes (its zero padding included), then ``splitmix64``
    (what :meth:`ctxeval._core.ids.ArrayIds.hash` computes column by column); None without the
    library. Only a one-dimensional ``S<w>`` array; anything else is a TypeError."""
    if LIB is None:
        return None
    import numpy as np

    if ids.dtype.kind != "S" or ids.ndim != 1:
        raise TypeError(f"hash_bytes reads a one-dimensional 'S' array, not {ids.dtype} of {ids.ndim} dimensions")
    a = np.ascontiguousarray(ids)
    out = np.empty(a.shape[0], dtype=np.uint64)
    LIB.ctx_hash_bytes(a.ctypes.data, a.dtype.itemsize, out.ctypes.data, a.shape[0])
    return out
