"""``grades``: the qrels grades on the 1–5 utility scale of the set-based RAG measures.

The grade map in force (``RagConfig.grade_map``, e.g. ``trec-dl`` for TREC DL's 0–3) maps every judged
grade; without one the qrels' own grades are read as the 1–5 scale. Every other measure (and every
``rel=`` threshold) keeps reading the qrels' own grades.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .._core.extras import UTIL_MAX, UTIL_MIN, Grades
from .._errors import ConfigError
from . import Inputs, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._measures import Measure

__all__ = ["GradesProvider", "check_scale", "is_rag"]


@dataclass(frozen=True)
class GradesProvider:
    name: str = "grades"
    after: tuple[str, ...] = ()
    needs_rows: bool = False

    def build(self, data: EvalData, inputs: Inputs) -> Grades:
        gm = inputs.settings.rag.grade_map
        if gm is None or not gm.mapping:
            return Grades(data.j_grade, data.q_grade, gm.describe() if gm is not None else None)
        unmapped = gm.unmapped(data.q_grade)
        if unmapped:
            raise ConfigError(
                f"grade map {gm.describe()} does not map grade(s) {unmapped} of the qrels; add them to the map"
            )
        return Grades(gm.apply(data.j_grade), gm.apply(data.q_grade), gm.describe())


register(GradesProvider())


def is_rag(m: Measure) -> bool:
    return m.spec.group == "rag"


def check_scale(data: EvalData, measures: Iterable[Measure]) -> None:
    """A :class:`ConfigError` when RAG measures are requested and the (mapped) qrels hold grades
    outside the 1–5 utility scale."""
    rag = [str(m) for m in measures if is_rag(m)]
    if not rag:
        return
    g: Grades = data.extra("grades")
    util = np.asarray(g.q_util)
    bad = sorted(set(util[(util < UTIL_MIN) | (util > UTIL_MAX)].tolist()))
    if bad:
        after = f" after the grade map {g.grade_map}" if g.grade_map and g.grade_map != "identity" else ""
        shown = ", ".join(rag[:3]) + (", ..." if len(rag) > 3 else "")
        raise ConfigError(
            f"{shown} read grades on the 1-5 utility scale (5 decisive ... 1 distractor), but the qrels{after} "
            f"hold grade(s) {bad}; give a grade map, e.g. --grade-map trec-dl / grade_map='trec-dl' for TREC DL's 0-3 "
            "scale, or --grade-map 3:5,2:4,1:3,0:2"
        )
