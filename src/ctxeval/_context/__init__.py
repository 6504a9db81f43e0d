"""Side data for the measures that need more than a run and its qrels, behind one protocol.

A :class:`Provider` builds one named piece of side data (an extra of the
:class:`~ctxeval._core.evaldata.EvalData`) from the joined data and the evaluation's inputs: ``grades``
(the qrels grades on the 1–5 utility scale after a grade map), ``pool`` (the retrieval pool),
``groups`` (doc groups), ``utility`` (per-passage utilities), ``fits`` (fitted weights of the
positional UDCG), ``samples`` (a sample set's facets and citations), ``fairness`` (AWRF's group
labels and targets). A measure family says which it ``requires``; the session asks :func:`build` for
those (and what they read in turn, ``after``), once per run. A new source of side data (an LLM
judge, say) is one more module here that registers its provider; measures and reports pick it up
through the same seam.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .._errors import ConfigError
from .registry import PROVIDERS, Inputs, Provider, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData

__all__ = ["PROVIDERS", "Inputs", "Provider", "SideData", "build", "closure", "needs_rows", "register"]


def closure(names: Iterable[str]) -> list[str]:
    """The extras to build for ``names``, each after what it reads."""
    _load()
    out: list[str] = []

    def visit(name: str) -> None:
        if name in out:
            return
        provider = PROVIDERS.get(name)
        if provider is None:
            raise ConfigError(f"no provider of the side data {name!r}")
        for dep in provider.after:
            visit(dep)
        out.append(name)

    for n in sorted(names):
        visit(n)
    return out


def needs_rows(names: Iterable[str]) -> bool:
    return any(PROVIDERS[n].needs_rows for n in closure(names))


def build(data: EvalData, names: Iterable[str], inputs: Inputs) -> EvalData:
    """``data`` with the extras ``names`` (and what they read) built."""
    for name in closure(names):
        if not data.has(name):
            data = data.with_extras(**{name: PROVIDERS[name].build(data, inputs)})
    return data


def _load() -> None:
    """Import the built-in providers (they register themselves)."""
    from . import fairness, fits, grades, pool, samples, scores, spans, subtopics, utility  # noqa: F401
