"""polars, imported on first use.

Importing polars costs ~0.15 s, as much as a whole small evaluation. Modules write
``from ._lazy import pl`` (under ``if not TYPE_CHECKING``) and use ``pl`` as usual; the real import
happens at the first attribute access, so a command that never touches polars (``ctxeval evaluate``
on small TREC files, ``--help``) does not pay for it.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["pl"]


class _LazyModule:
    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        module = self._module
        if module is None:
            module = self._module = importlib.import_module(self._name)
        return getattr(module, attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded yet"
        return f"<lazy module {self._name!r} ({state})>"


pl: Any = _LazyModule("polars")
