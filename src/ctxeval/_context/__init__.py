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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from .._errors import ConfigError

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._io.model import Qrels, Run
    from .._measures.base import Measure
    from .settings import Settings

__all__ = ["PROVIDERS", "Inputs", "Provider", "SideData", "build", "closure", "needs_rows", "register"]


@dataclass(frozen=True)
class Inputs:
    """What a provider may read besides the joined data: the qrels, the run, and the settings."""

    qrels: Qrels
    run: Run
    settings: Settings
    #: the measures the side data is built for (a provider may keep only what they read)
    measures: tuple[Measure, ...] = ()


class Provider(Protocol):
    """Builds one named extra of an :class:`EvalData`."""

    @property
    def name(self) -> str: ...

    @property
    def after(self) -> tuple[str, ...]:
        """Extras it reads (built first)."""
        ...

    @property
    def needs_rows(self) -> bool:
        """Whether it reads the run's ranked rows (doc ids, scores)."""
        ...

    def build(self, data: EvalData, inputs: Inputs) -> Any: ...


class SideData:
    """The base of the built-in providers: a stateless, immutable value whose class names its extra
    (``name``), the extras it reads (``after``: none unless it says) and whether it reads the run's
    ranked rows (``needs_rows``: yes unless it says); a subclass adds ``build``."""

    name: ClassVar[str]
    after: ClassVar[tuple[str, ...]] = ()
    needs_rows: ClassVar[bool] = True

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")


PROVIDERS: dict[str, Provider] = {}


def register(provider: Provider) -> Provider:
    if provider.name in PROVIDERS:
        raise RuntimeError(f"side data {provider.name!r} registered twice")
    PROVIDERS[provider.name] = provider
    return provider


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
