"""The Python side of the compiled reader under faults (issue 29): generated runs with long ids, read
in small pieces on threads, with a failure planted at a random step (a ``MemoryError`` or a
``BufferError`` in a thread's buffers, ids too wide for the budget, a file that shrinks or grows while
it is read). Whatever happens, the read gives exactly the rows the file was written from (the scanner
declined, and the next tier read it) or one line naming the file and saying it changed: never a
traceback, a hang or a signal. Files are read with ``pread``, so a shrinking file cannot raise
``SIGBUS`` in this process (the command-line race is in ``test_hostile_inputs.py``)."""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, example, given, settings
from hypothesis import strategies as st

from ctxeval import CtxevalError, Run, _native
from ctxeval._io import columnar, native
from ctxeval._io.frames import frame_of
from ctxeval._io.source import FileText

pytestmark = pytest.mark.skipif(not _native.available(), reason=f"compiled kernels {_native.status()}")

_IDS = st.one_of(
    st.sampled_from(["d1", "D6751803", "abcdefgh", "clueweb09-en0000-00-00000"]),
    st.text(alphabet="abcXYZ019-_./:", min_size=1, max_size=40),
    st.integers(100, 5_000).map(lambda n: "u" * n),  # long ids: URLs and worse
)


@st.composite
def _runs(draw: st.DrawFn) -> tuple[bytes, list[tuple[str, str, float]]]:
    rows: list[tuple[str, str, float]] = []
    seen: set[tuple[str, str]] = set()
    for q in range(draw(st.integers(1, 8))):
        qid = draw(st.sampled_from(["q", "301", "query-" + "x" * draw(st.integers(0, 3_000))])) + str(q)
        for i in range(draw(st.integers(1, 25))):
            doc = draw(_IDS) + f"-{i}"
            if (qid, doc) not in seen:
                seen.add((qid, doc))
                rows.append((qid, doc, float(draw(st.integers(-1000, 1000))) / 8))
    text = "".join(f"{q} Q0 {d} {i + 1} {s!r} run\n" for i, (q, d, s) in enumerate(rows))
    return text.encode(), rows


_PLAIN_ROWS = [("q1", f"d{i}", i / 4) for i in range(60)]
_PLAIN = ("".join(f"{q} Q0 {d} {i + 1} {v!r} run\n" for i, (q, d, v) in enumerate(_PLAIN_ROWS)).encode(), _PLAIN_ROWS)


@contextmanager
def _patched(target: Any, name: str, make: Callable[[Any], Any]) -> Iterator[None]:
    saved = getattr(target, name)
    setattr(target, name, make(saved))
    try:
        yield
    finally:
        setattr(target, name, saved)


def _nth(n: int, act: Callable[[], None]) -> Callable[[Any], Any]:
    """A wrapper that runs ``act`` before the ``n``-th call of what it wraps (from any thread)."""
    lock, calls = threading.Lock(), [0]

    def make(real: Any) -> Any:
        def inner(*args: Any, **kw: Any) -> Any:
            with lock:
                calls[0] += 1
                now = calls[0] == n
            if now:
                act()
            return real(*args, **kw)

        return inner

    return make


def _raise(exc: BaseException) -> Callable[[], None]:
    def act() -> None:
        raise exc

    return act


@settings(max_examples=80, deadline=None)
@given(
    case=_runs(),
    piece=st.sampled_from([64, 512, 4096, 1 << 16]),
    fault=st.sampled_from(["none", "memory", "buffer", "too wide", "shrink", "grow"]),
    step=st.integers(1, 4),
    keep=st.floats(0, 1),
)
@example(case=_PLAIN, piece=64, fault="shrink", step=3, keep=0.5)  # the change is seen: one line
@example(case=_PLAIN, piece=64, fault="memory", step=2, keep=0)  # a thread's buffers fail: the next tier
@example(case=_PLAIN, piece=64, fault="buffer", step=1, keep=0)
@example(case=_PLAIN, piece=64, fault="too wide", step=4, keep=0)
@example(case=_PLAIN, piece=64, fault="grow", step=1, keep=0)
def test_faults_give_the_rows_or_one_line_never_a_traceback(
    case: tuple[bytes, list[tuple[str, str, float]]], piece: int, fault: str, step: int, keep: float
) -> None:
    data, rows = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.txt"
        path.write_bytes(data)

        def shrink() -> None:
            os.truncate(path, int(len(data) * keep))

        def grow() -> None:
            with open(path, "ab") as fh:
                fh.write(b"q9 Q0 late 1 0.5 run\n")

        faults = {
            "none": (native, "_Buffers", lambda real: real),
            "memory": (native, "_Buffers", _nth(step, _raise(MemoryError("planted")))),
            "buffer": (native, "_scan", _nth(step, _raise(BufferError("planted")))),
            "too wide": (native, "_rows_room", _nth(step, _raise(native._TooWide()))),
            "shrink": (FileText, "read_into", _nth(step, shrink)),
            "grow": (FileText, "read_into", _nth(step, grow)),
        }
        target, name, make = faults[fault]
        with (
            _patched(native, "_PIECE", lambda _: piece),
            _patched(columnar, "PIECE", lambda _: piece),
            _patched(target, name, make),
        ):
            try:
                got: list[tuple] | str = [tuple(r) for r in frame_of(Run.from_file(path).columns, "score").iter_rows()]
            except CtxevalError as exc:
                got = str(exc)
    event(f"{fault}: {'one line' if isinstance(got, str) else 'the rows'}")
    if isinstance(got, str):
        assert fault in ("shrink", "grow"), got
        assert got.startswith(f"{path}: the file changed while it was read") and "\n" not in got
    else:
        assert got == rows
