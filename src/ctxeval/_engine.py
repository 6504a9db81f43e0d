"""Where per-query values are computed: one frozen value every verb that evaluates takes as ``engine=``.

* ``local`` (the default): in this process.
* ``spark``: on Spark (``pip install 'ctxeval[spark]'``, Java 17); ``master`` is the master URL
  (default ``local[*]``). The statistics of a comparison run on the collected per-query values.

A verb takes ``engine="spark"``, a mapping of the fields, or an :class:`Engine`.

>>> Engine.coerce("spark")
Engine(name='spark', master=None)
>>> Engine.coerce({"name": "spark", "master": "local[2]"}).master
'local[2]'
>>> Engine.coerce("gpu")
Traceback (most recent call last):
ctxeval._errors.ConfigError: engine must be one of 'local', 'spark', got 'gpu'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import ConfigError
from ._policies import coerce_settings

__all__ = ["ENGINES", "Engine"]

ENGINES = ("local", "spark")


@dataclass(frozen=True)
class Engine:
    """The engine's name and, for Spark, the master URL."""

    name: str = "local"
    master: str | None = None

    def __post_init__(self) -> None:
        if self.name not in ENGINES:
            raise ConfigError(f"engine must be one of {', '.join(map(repr, ENGINES))}, got {self.name!r}")
        if self.master is not None and (not isinstance(self.master, str) or not self.master):
            raise ConfigError(f"the engine's master must be a URL such as 'local[2]', got {self.master!r}")
        if self.master is not None and self.name != "spark":
            raise ConfigError(f"a master URL is for the spark engine, not {self.name!r}")

    @classmethod
    def coerce(cls, value: Engine | str | Mapping[str, Any] | None) -> Engine:
        """An :class:`Engine` from itself, its name, a mapping of its fields, or None (local)."""
        if isinstance(value, str):
            return cls(value)
        return coerce_settings(cls, value, "engine settings")
