"""A mapping of qrels grades onto another scale (e.g. TREC DL 0–3 onto the 1–5 utility scale)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

import numpy as np

from .._errors import ConfigError
from .segments import distinct

__all__ = ["GradeMap", "pairs"]

T = TypeVar("T")


class GradeMap:
    """A mapping of qrels grades onto another scale (e.g. TREC DL 0–3 onto the 1–5 utility scale).

    >>> GradeMap.parse("trec-dl").mapping
    {3: 5, 2: 4, 1: 3, 0: 2}
    >>> str(GradeMap.parse("3:5,2:4"))
    '3:5,2:4'
    >>> GradeMap.parse("trec-dl").apply(np.array([0, 3, 1])).tolist()
    [2, 5, 3]
    """

    PRESETS: ClassVar[dict[str, dict[int, int]]] = {
        "trec-dl": {3: 5, 2: 4, 1: 3, 0: 2},
        "identity": {},
    }

    __slots__ = ("mapping", "name")

    def __init__(self, mapping: Mapping[int, int], name: str | None = None) -> None:
        self.mapping = {int(k): int(v) for k, v in mapping.items()}
        self.name = name

    @classmethod
    def parse(cls, text: str) -> GradeMap:
        text = text.strip()
        if text in cls.PRESETS:
            return cls(cls.PRESETS[text], text)
        return cls(
            dict(
                pairs(text, int, lambda part: f"grade map {text!r}: {part!r} is not of the form FROM:TO with "
                      f"integer grades (or use a preset: {', '.join(cls.PRESETS)})")
            )
        )  # fmt: skip

    @classmethod
    def binary(cls, grades: Any) -> GradeMap:
        """The reading of binary labels (reference ids) on the 1-5 utility scale: a labelled chunk
        (grade >= 1) is relevant, grade 5; a grade below 1 (judged not relevant) is grade 2, on topic
        but useless. Unlabelled chunks stay unjudged.

        >>> GradeMap.binary([0, 1]).describe()
        'binary (1:5,0:2)'
        """
        return cls(
            {int(g): 5 if g >= 1 else 2 for g in sorted(set(np.asarray(grades).tolist()), reverse=True)}, "binary"
        )

    @classmethod
    def coerce(cls, value: Any) -> GradeMap | None:
        """None, a :class:`GradeMap`, a preset name / ``FROM:TO,...`` text, or a mapping."""
        if value is None or isinstance(value, GradeMap):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        if isinstance(value, Mapping):
            return cls(value)
        raise ConfigError(
            f"grade_map must be a preset name, a 'FROM:TO,...' text or a mapping, got {type(value).__name__}"
        )

    def __str__(self) -> str:
        if self.name:
            return self.name
        return ",".join(f"{k}:{v}" for k, v in self.mapping.items())

    def __repr__(self) -> str:
        return f"GradeMap({self.describe()!r})"

    def describe(self) -> str:
        body = ",".join(f"{k}:{v}" for k, v in self.mapping.items()) or "identity"
        return f"{self.name} ({body})" if self.name and self.mapping else body

    def unmapped(self, grades: np.ndarray) -> list[int]:
        """The grades of ``grades`` the map has no entry for (none for the identity)."""
        if not self.mapping:
            return []
        return sorted(set(distinct(grades).tolist()) - set(self.mapping))

    def apply(self, grades: np.ndarray) -> np.ndarray:
        """The grades mapped (every grade must be in the map; the identity maps nothing)."""
        if not self.mapping:
            return grades
        keys = np.array(sorted(self.mapping), dtype=np.int64)
        vals = np.array([self.mapping[k] for k in keys.tolist()], dtype=np.int64)
        pos = np.clip(np.searchsorted(keys, grades), 0, keys.size - 1)
        return vals[pos]


def pairs(text: str, value: Callable[[str], T], error: Callable[[str], str]) -> list[tuple[int, T]]:
    """The ``GRADE:VALUE`` pairs of ``text`` (comma-separated, empty parts skipped), each grade an
    integer and each value converted by ``value``; a part that is not one raises ``ConfigError(error(part))``
    (the part stripped).

    >>> pairs("3:1, 2:0.5,", float, str)
    [(3, 1.0), (2, 0.5)]
    """
    out: list[tuple[int, T]] = []
    for part in text.split(","):
        if not part.strip():
            continue
        src, sep, dst = part.partition(":")
        try:
            if not sep:
                raise ValueError
            out.append((int(src), value(dst)))
        except ValueError:
            raise ConfigError(error(part.strip())) from None
    return out
