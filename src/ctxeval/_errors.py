"""The exception hierarchy: every error ctxeval raises on purpose derives from :class:`CtxevalError`."""

from __future__ import annotations

__all__ = [
    "CtxevalError",
    "InputError",
    "FormatError",
    "DuplicateError",
    "EmptyInputError",
    "MeasureError",
    "QueryMismatchError",
    "ConfigError",
]


class CtxevalError(Exception):
    """Base class of every error ctxeval raises deliberately."""


class InputError(CtxevalError, ValueError):
    """Input data (a file, a frame, a mapping) breaks a rule of its format."""


class FormatError(InputError):
    """A line or record is malformed. ``source``, ``line`` and ``text`` locate it."""

    def __init__(self, source: str, line: int | None, problem: str, text: str | None = None) -> None:
        self.source = source
        self.line = line
        self.problem = problem
        self.text = text
        where = f"{source}:{line}" if line is not None else source
        msg = f"{where}: {problem}"
        if text is not None:
            shown = text if len(text) <= 200 else text[:197] + "..."
            msg += f" (line: {shown!r})"
        super().__init__(msg)


class DuplicateError(InputError):
    """The same (query, document) pair occurs twice where it must be unique."""


class EmptyInputError(InputError):
    """A file or frame holds no data records."""


class MeasureError(CtxevalError, ValueError):
    """A measure name cannot be parsed, is unknown, or has invalid parameters."""


class QueryMismatchError(CtxevalError, ValueError):
    """Judged queries are missing from a run and the ``missing`` policy is ``error``."""


class ConfigError(CtxevalError, ValueError):
    """An option or policy value is invalid."""
