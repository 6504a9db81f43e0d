"""The side-data registry: what a provider reads (:class:`Inputs`), what it is (:class:`Provider`), and
the base of the built-in providers (:class:`SideData`), the providers by name (:data:`PROVIDERS`, filled by :func:`register` as each provider module loads).
The package (``ctxeval._context``) builds from it; provider modules import this module, never the
package, so that loading the package's providers is no circle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._io.model import Qrels, Run
    from .._measures.base import Measure
    from .settings import Settings

__all__ = ["PROVIDERS", "Inputs", "Provider", "SideData", "register"]


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
