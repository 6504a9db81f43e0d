"""How input is read and queries are counted: one frozen, validated value shared by every verb.

* ``ties``: the ranking rule. ``trec`` (the default; trec_eval 9.x's and pytrec_eval's): score
  descending, compared as 32-bit floats (they hold scores as C floats: 0.300000009 and 0.300000001
  tie), ties broken by doc id descending (byte-wise); ``trec10`` (trec_eval 10.0's): the same with
  scores compared as 64-bit floats; ``input``: the order of the rows within each query as given.
* ``missing``: judged queries a run lacks. ``zero``: scored 0 (trec_eval ``-c``); ``ignore``: left
  out (trec_eval's default); ``error``: refused.
* ``duplicates``: a (query, doc) pair given twice. ``error``; ``first``: keep the first line;
  ``best``: keep the highest score (runs) or grade (qrels).

The command line reads its choices and help texts from :data:`CHOICES` and :data:`HELP`.

>>> Policies(missing="ignore")
Policies(ties='trec', missing='ignore', duplicates='error')
>>> Policies(ties="tre")
Traceback (most recent call last):
ctxeval._errors.ConfigError: ties must be one of 'trec', 'trec10', 'input', got 'tre'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from ._errors import ConfigError

__all__ = ["CHOICES", "HELP", "Policies", "coerce_settings"]

S = TypeVar("S")


def coerce_settings(cls: type[S], value: S | Mapping[str, Any] | None, what: str) -> S:
    """A frozen settings value of ``cls`` from itself, a mapping of its fields, or None (the defaults);
    ``what`` names it in errors."""
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        unknown = set(value) - set(names)
        if unknown:
            raise ConfigError(f"unknown {what} {sorted(unknown)}; they are {', '.join(names)}")
        return cls(**value)
    raise ConfigError(f"{what} must be a {cls.__name__} or a mapping, got {type(value).__name__}")


CHOICES: dict[str, tuple[str, ...]] = {
    "ties": ("trec", "trec10", "input"),
    "missing": ("zero", "ignore", "error"),
    "duplicates": ("error", "first", "best"),
}

HELP: dict[str, str] = {
    "ties": "trec: score (as float32, trec_eval 9 and pytrec_eval) descending, then doc id descending; "
    "trec10: the same with scores as float64 (trec_eval 10.0); input: the file's order within each query",
    "missing": "judged queries absent from a run: zero = score them 0 (trec_eval -c; default), "
    "ignore = leave them out (trec_eval's default), error = fail",
    "duplicates": "a repeated (query, doc) pair: fail, or keep the first / the best-scored",
}


@dataclass(frozen=True)
class Policies:
    """The ranking, query-set and duplicate rules (see the module docstring)."""

    ties: str = "trec"
    missing: str = "zero"
    duplicates: str = "error"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            allowed = CHOICES[f.name]
            if value not in allowed:
                raise ConfigError(f"{f.name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")

    @classmethod
    def coerce(cls, value: Policies | Mapping[str, Any] | None) -> Policies:
        """A :class:`Policies`, a mapping of its fields, or None (the defaults)."""
        return coerce_settings(cls, value, "policies")

    def describe(self) -> dict[str, str]:
        return {"ties": self.ties, "missing": self.missing, "duplicates": self.duplicates}
