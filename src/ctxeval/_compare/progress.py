"""A progress display for the long verbs, turned on around a call rather than passed to it.

The command line wraps a verb in ``with show_progress(True): ...``; the verb opens
:class:`Progress`, which draws a rich display on stderr when the context asks for one, and does
nothing otherwise (the Python API's default).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["Progress", "show_progress"]

_SHOW: ContextVar[bool] = ContextVar("ctxeval_show_progress", default=False)


@contextmanager
def show_progress(enabled: bool = True) -> Iterator[None]:
    """Within the block, verbs draw their progress on stderr (when ``enabled``)."""
    token = _SHOW.set(bool(enabled))
    try:
        yield
    finally:
        _SHOW.reset(token)


class Progress:
    """A rich progress display on stderr, or nothing (see :func:`show_progress`)."""

    def __init__(self) -> None:
        self.bar = None
        if _SHOW.get():
            from rich.console import Console
            from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )

    def __enter__(self) -> Progress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def task(self, description: str, total: float) -> Callable[[float], None] | None:
        """A function advancing a new task by a step, or None without a display."""
        if self.bar is None:
            return None
        tid = self.bar.add_task(description, total=total)
        bar = self.bar

        def advance(step: float = 1.0) -> None:
            bar.advance(tid, step)

        return advance
