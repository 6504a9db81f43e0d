"""Renderers: results and reports as text (tables, JSON, CSV, Markdown, LaTeX) and HTML.

Renderers read the verbs' models; they never recompute a figure or a verdict.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

__all__ = ["reporting"]

P = ParamSpec("P")
R = TypeVar("R")


def reporting(model: Callable[P, Any], of: Callable[[Any], R], returns: Any, module: str) -> Callable[P, R]:
    """The public verb of a verb's ``model`` function: its arguments, its result as the report ``of``
    makes it. ``help()``, the type checkers and the API pages see ``model``'s name, docstring and
    signature, returning ``returns`` (the report, or its name), defined in ``module``."""

    @functools.wraps(model, assigned=("__name__", "__qualname__", "__doc__"))
    def verb(*args: P.args, **kwargs: P.kwargs) -> R:
        return of(model(*args, **kwargs))

    verb.__signature__ = inspect.signature(model).replace(return_annotation=returns)  # type: ignore[attr-defined]
    verb.__module__ = module
    return verb
