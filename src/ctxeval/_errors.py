"""The exception tree: every error ctxeval raises on purpose derives from :class:`CtxevalError`.

::

    CtxevalError
    ├── InputError (ValueError)        input data breaks a rule of its format
    │   ├── FormatError                a malformed line or record (source, line, problem, text)
    │   ├── DuplicateError             a (query, doc) pair given twice
    │   ├── EmptyInputError            no data records
    │   └── PoolError                  a reranked run holds docs outside its retrieval pool
    ├── MeasureError (ValueError)      a measure name cannot be parsed, is unknown, or is misused
    ├── QueryMismatchError (ValueError)  judged queries missing from a run under missing="error"
    ├── ConfigError (ValueError)       an option or policy value is invalid
    ├── OutputError (OSError)          an output cannot be written, or would overwrite an input
    ├── JudgeError                     the judge's server failed (after its retries) or cannot do the task
    └── DependencyError (ImportError)  an optional extra is not installed (the message says how)

The command line prints any of them as one line, ``ctxeval: error: ...``, with exit status 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ConfigError",
    "CtxevalError",
    "DependencyError",
    "DuplicateError",
    "EmptyInputError",
    "FormatError",
    "InputError",
    "JudgeError",
    "MeasureError",
    "OutputError",
    "PoolError",
    "QueryMismatchError",
    "did_you_mean",
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

    def __reduce__(self) -> tuple[Any, ...]:  # pickled with its fields (Spark's workers, processes)
        return (type(self), (self.source, self.line, self.problem, self.text))


class DuplicateError(InputError):
    """The same (query, document) pair occurs twice where it must be unique."""


class EmptyInputError(InputError):
    """A file or frame holds no data records."""


class PoolError(InputError):
    """A final run holds docs that are not in its retrieval pool (and outside docs are not allowed)."""


class JudgeError(CtxevalError):
    """The LLM judge's server failed after its retries, refused the request, or cannot do the task
    (e.g. returns no logprobs for utilities). The message names the endpoint, never the API key."""


class MeasureError(CtxevalError, ValueError):
    """A measure name cannot be parsed, is unknown, or has invalid parameters."""


class QueryMismatchError(CtxevalError, ValueError):
    """Judged queries are missing from a run and the ``missing`` policy is ``error``."""


class ConfigError(CtxevalError, ValueError):
    """An option or policy value is invalid."""


class OutputError(CtxevalError, OSError):
    """An output file could not be written (a full disk, a missing folder), or would overwrite an input."""


class DependencyError(CtxevalError, ImportError):
    """An optional package is not installed; the message names the extra that installs it."""

    def __init__(self, what: str, package: str, extra: str, found: str | None = None, how: str | None = None) -> None:
        self.package = package
        self.extra = extra
        if found is None and how is None:
            super().__init__(f"{what} needs {package}, which is not installed: pip install 'ctxeval[{extra}]'")
        else:  # a version too old, or something pip does not install (Java)
            how = how or f"pip install 'ctxeval[{extra}]'"
            super().__init__(f"{what} needs {package}, {found}: {how}")
        self._args = (what, package, extra, found, how)

    def __reduce__(self) -> tuple[Any, ...]:  # pickled with the arguments it was made from
        return (type(self), self._args)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` naming the closest of ``known`` to a misspelled ``name`` (compared
    case-insensitively), or ``""`` when none is close.

    >>> did_you_mean("nDGC", ["nDCG", "AP", "RR"])
    " (did you mean 'nDCG'?)"
    """
    by_lower: dict[str, str] = {}
    for k in known:
        by_lower.setdefault(k.lower(), k)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""


# The tree's classes present themselves as what users import: ``ctxeval.ConfigError`` in a traceback,
# a doctest and the API reference (httpx does the same), not this private module.
for _name in __all__:
    _cls = globals()[_name]
    if isinstance(_cls, type):
        _cls.__module__ = "ctxeval"
