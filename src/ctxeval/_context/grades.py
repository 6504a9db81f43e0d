"""``grades``: the qrels grades on the 1–5 utility scale of the set-based RAG measures.

The grade map in force (``RagConfig.grade_map``, e.g. ``trec-dl`` for TREC DL's 0–3) maps every judged
grade; without one the qrels' own grades are read as the 1–5 scale. Every other measure (and every
``rel=`` threshold) keeps reading the qrels' own grades.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._errors import ConfigError
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._core.extras import Grades
    from .._measures import Measure

__all__ = [
    "SCALE_REL",
    "GradesProvider",
    "check_scale",
    "is_rag",
    "level_note",
    "relevance",
    "relevance_note",
    "scale_level",
]

#: the relevance level of the 1-5 utility scale: the lowest grade of positive utility in the default
#: utility map (5 decisive, 4 useful, 3 partial; 2 on topic but useless, 1 a distractor)
SCALE_REL = 3


class GradesProvider(SideData):
    name = "grades"
    needs_rows = False

    def build(self, data: EvalData, inputs: Inputs) -> Grades:
        from .._core.extras import Grades  # here: the notes this module gives evaluate need no side data

        gm = inputs.settings.rag.grade_map
        binary = not inputs.qrels.plain and inputs.qrels.labels.binary
        if gm is None or not gm.mapping:
            return Grades(data.j_grade, data.q_grade, gm.describe() if gm is not None else None, binary)
        unmapped = gm.unmapped(data.q_grade)
        if unmapped:
            raise ConfigError(
                f"grade map {gm.describe()} does not map grade(s) {unmapped} of the qrels; add them to the map"
            )
        return Grades(gm.apply(data.j_grade), gm.apply(data.q_grade), gm.describe(), binary)


register(GradesProvider())


def is_rag(m: Measure) -> bool:
    return m.spec.group == "rag"


def check_scale(data: EvalData, measures: Iterable[Measure]) -> None:
    """A :class:`ConfigError` when RAG measures are requested and the (mapped) qrels hold grades
    outside the 1–5 utility scale."""
    rag = [str(m) for m in measures if is_rag(m)]
    if not rag:
        return
    from .._core.extras import UTIL_MAX, UTIL_MIN

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


def scale_level(grades: Iterable[int], gm: Any) -> int:
    """The relevance level the grade scale in force implies, on the qrels' own grades: the smallest
    qrels grade that lands on :data:`SCALE_REL` or above on the 1-5 scale (through the grade map when
    there is one). No such grade: :data:`SCALE_REL` itself (nothing is relevant).

    >>> from ctxeval._core.grademap import GradeMap
    >>> scale_level([0, 1, 2, 3], GradeMap.parse("trec-dl")), scale_level([1, 2, 3, 4, 5], None)
    (1, 3)
    >>> scale_level([0, 1, 2, 3], GradeMap.parse("3:5,2:4,1:2,0:1"))
    2
    """
    mapped = gm.mapping if gm is not None and gm.mapping else {}
    hits = [g for g in sorted(set(grades)) if mapped.get(g, g) >= SCALE_REL]
    return hits[0] if hits else SCALE_REL


def relevance(level: int, gm: Any, on_scale: bool) -> str:
    """What "relevant" means in a report line, naming the scale each number is on.

    >>> from ctxeval._core.grademap import GradeMap
    >>> relevance(1, GradeMap.parse("trec-dl"), True)
    'qrels grade >= 1 (grade >= 3 on the 1-5 scale after the grade map trec-dl)'
    >>> relevance(3, None, True), relevance(1, None, False)
    ('grade >= 3 on the 1-5 scale', "grade >= 1 (the qrels' own grades)")
    """
    if gm is not None and gm.mapping:
        name = gm.name or gm.describe()
        return f"qrels grade >= {level} (grade >= {gm.mapping.get(level, level)} on the 1-5 scale after the grade map {name})"
    if on_scale:
        return f"grade >= {level} on the 1-5 scale"
    return f"grade >= {level} (the qrels' own grades)"


def level_note(
    measures: Iterable[Measure], grades: Callable[[], Iterable[int]], gm: Any, scale_known: bool = False
) -> str | None:
    """A note when binary measures count another level as relevant than the 1-5 scale in force (a grade
    map, or RAG / distraction measures reading the qrels on that scale): their ``rel`` stays what was
    asked (trec_eval's default 1 when not given), and the note says which level the scale implies. A
    ``rel`` that counts the same qrels grades as that level (3 where no grade is 3, and 4 is implied)
    is not noted. ``grades()`` gives the qrels' distinct grades (asked only when a scale is in force); ``scale_known``:
    the labels say they are on the 1-5 scale (a sample set graded 1-5, ``labels="rag"``)."""
    ms = list(measures)
    on_scale = (
        scale_known or (gm is not None and bool(gm.mapping)) or any(m.spec.group in ("rag", "distraction") for m in ms)
    )
    if not on_scale:
        return None
    present = sorted(set(grades()))
    level = scale_level(present, gm)

    def differs(rel: int | None) -> bool:  # another set of the qrels' grades counted relevant
        return rel is not None and {g for g in present if g >= rel} != {g for g in present if g >= level}

    off = [m for m in ms if m.spec.group not in ("rag", "distraction") and differs(_rel(m))]
    if not off:
        return None
    names = ", ".join(str(m) for m in off[:4]) + (", ..." if len(off) > 4 else "")
    rels = sorted({int(m["rel"]) for m in off})  # (all set: _rel is not None)
    asked = relevance(rels[0], gm, True) if len(rels) == 1 else "other grades"
    implied = relevance(level, gm, True) if gm is not None and gm.mapping else f"grade >= {level}"
    why = "" if gm is not None and gm.mapping else " (grade 1 is a distractor, 2 not useful)"
    example = str(off[0](rel=level))
    return (
        f"{names} count{'s' if len(off) == 1 else ''} {asked} as relevant; the 1-5 scale in force calls "
        f"{implied} relevant{why}: give rel={level}, e.g. {example}"
    )


def _rel(m: Measure) -> int | None:
    """The level a binary measure counts as relevant; None for a measure without one (graded, or
    ``RBP`` without ``rel``: its graded gain)."""
    if not any(p.name == "rel" for p in m.spec.params) or m["rel"] is None:
        return None
    return int(m["rel"])


def relevance_note(measures: Iterable[Measure], values: Any, gm: Any) -> str | None:
    """A note when the qrels (``values``: their grades) make nothing relevant: every grade is 0 or
    less, so every measure of relevance is 0 for every query; or no grade reaches the level some
    binary measures ask for. Without a grade map only (a map decides what the grades mean).

    >>> import numpy as np
    >>> from ctxeval._measures.grammar import parse_measure as parse
    >>> relevance_note([parse("RR"), parse("nDCG@10")], np.array([0, 0, -1]), None)
    'the qrels judge nothing relevant: all 3 judgments have a grade of 0 or less, so every measure of relevance is 0 for every query'
    >>> relevance_note([parse("P(rel=2)@5"), parse("RR")], np.array([0, 1]), None)
    'P(rel=2)@5: no judgment reaches grade 2 (the highest grade in the qrels is 1), so it is 0 for every query'
    """
    if (gm is not None and gm.mapping) or len(values) == 0:
        return None
    top = int(values.max())
    if top <= 0:
        return (
            f"the qrels judge nothing relevant: all {len(values)} judgments have a grade of 0 or less, so every "
            "measure of relevance is 0 for every query"
        )
    ms = list(measures)
    asked = {m: r for m in ms if (r := _rel(m)) is not None and r > top and m.spec.group not in ("rag", "distraction")}
    if not asked:
        return None
    dead = list(asked)
    names = ", ".join(str(m) for m in dead[:4]) + (", ..." if len(dead) > 4 else "")
    levels = sorted(set(asked.values()))
    level = f"grade {levels[0]}" if len(levels) == 1 else f"grades {', '.join(map(str, levels))}"
    return (
        f"{names}: no judgment reaches {level} (the highest grade in the qrels is {top}), so "
        f"{'it is' if len(dead) == 1 else 'they are'} 0 for every query"
    )
