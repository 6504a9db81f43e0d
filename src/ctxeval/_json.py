"""The JSON forms of result objects: a number as JSON can hold it, and the fields a form copies as they
are. Every ``to_dict`` builds on these two, so that a result's JSON says only what is its own.

>>> num(float("nan")), num(None), num(2)
(None, None, 2.0)
>>> from dataclasses import dataclass
>>> @dataclass
... class R:
...     run: str
...     k: int
...     notes: tuple
>>> fields(R("bm25", 10, ()), "k", "run")
{'k': 10, 'run': 'bm25'}
>>> fields(R("bm25", 10, ()), "run", depth="k")
{'run': 'bm25', 'depth': 10}
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["fields", "num"]


def num(x: float | None) -> float | None:
    """A float for JSON, which has no NaN: None for None and NaN, the value as a float otherwise."""
    return None if x is None or math.isnan(x) else float(x)


def fields(obj: Any, *names: str, **renamed: str) -> dict[str, Any]:
    """``{name: obj.name}`` for each of ``names``, then ``{key: obj.attribute}`` for each ``key=attribute``
    of ``renamed``, in that order: the keys of a JSON form that are the result's own attributes, unchanged."""
    return {**{name: getattr(obj, name) for name in names}, **{k: getattr(obj, a) for k, a in renamed.items()}}
