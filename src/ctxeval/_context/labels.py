"""How the kind of the labels (:mod:`ctxeval._io.labels`) shapes an evaluation: the grade reading it
implies, and what the reports must say about it.

* **Binary labels** (reference ids): without a grade map of the user's, the RAG and distraction
  measures read a labelled chunk as relevant, grade 5 on the 1-5 scale (``GradeMap.binary``), and
  every other chunk as unlabelled: unjudged, never a distractor by default (the detection rules touch
  judged chunks only, see :mod:`ctxeval._context.utility`). Measures that count useless or harmful
  chunks (``Family.needs_negatives``: Harm, DistractorRate, DistractorHarm) are NA where the top k
  holds an unlabelled chunk nothing decided, and the notes say what labels they need and how to get
  them (:data:`HOW_TO_JUDGE`).
* **Graded labels on a named scale**: ``trec`` (0-3) reads through the ``trec-dl`` grade map unless
  one is given; an unnamed scale is read as it is. A qrels file holding grades 0 and 1 only, read on
  the 1-5 scale, makes every relevant passage a distractor: the notes say so and how to declare
  binary labels.
* **Judged labels** (a sidecar, :func:`~ctxeval._io.labels.read_sidecar`): the notes name the judge,
  the model, the task and how deep it judged; a measure reading deeper than the judge did is noted
  with the share of its ranks that is judged (:func:`depth_notes`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .._core.grademap import GradeMap
from .._errors import ConfigError
from .._io.labels import contradiction

if TYPE_CHECKING:
    from .._io.labels import LabelKind
    from .._io.model import Qrels
    from .._measures import Measure
    from .settings import RagConfig

__all__ = ["HOW_TO_JUDGE", "depth_notes", "label_notes", "needs_negatives", "reads_scale", "resolve"]

#: how to get labels that say which chunks are useless or harmful, for binary labels
HOW_TO_JUDGE = (
    "per-chunk utilities from a model: ctxeval judge utility --samples FILE -o utilities.txt, then --utilities "
    "utilities.txt (or judge 1-5 grades: ctxeval judge grade --samples FILE -o judged.qrels), or list the known "
    "distractors (--distractors FILE)"
)


def resolve(qrels: Qrels, rag: RagConfig) -> tuple[Qrels, RagConfig]:
    """The qrels with the label kind in force (``rag.labels`` when given), and the RAG settings with
    the grade reading that kind implies when no grade map was given: ``binary`` for binary labels,
    ``trec-dl`` for TREC's 0-3 scale."""
    if rag.labels is not None:
        qrels = qrels.with_labels(rag.labels)
    if qrels.plain:  # graded, read as they are: nothing to resolve
        return qrels, rag
    kind = qrels.labels
    bad = contradiction(kind.scale, qrels.columns.values)
    if bad is not None:  # (a sidecar that contradicts its file is refused where the file is read)
        raise ConfigError(
            f"the labels are declared {kind.kind} on the {kind.scale} scale ({kind.origin}), but {qrels.source} holds "
            f"{bad}: declare what they are (--labels KIND, labels=...), or map them with a grade map (--grade-map)"
        )
    if rag.grade_map is None:
        if kind.binary:
            from .._core.segments import distinct

            rag = replace(rag, grade_map=GradeMap.binary(distinct(qrels.columns.values)))
        elif kind.scale == "trec":
            rag = replace(rag, grade_map="trec-dl")
    return qrels, rag


def reads_scale(m: Measure) -> bool:
    """Whether ``m`` reads the grades on the 1-5 scale (RAG and distraction measures)."""
    return m.spec.group in ("rag", "distraction")


def needs_negatives(m: Measure) -> bool:
    """Whether ``m`` counts chunks labelled useless or harmful (NA on binary labels where unknown)."""
    return m.spec.needs_negatives


def label_notes(
    kind: LabelKind,
    measures: Iterable[Measure],
    grades: Sequence[int],
    grade_map: GradeMap | None,
    utility: Any = None,
    scale_read: bool = False,
) -> list[str]:
    """What a report must say about the labels, for ``measures`` (``scale_read``: the verb reads the
    1-5 scale whatever its measures, as diagnose, distraction and calibrate do). ``utility``: the
    :class:`UtilityConfig` in force (LLM utilities and known distractors decide unlabelled chunks).

    >>> from ctxeval._io.labels import LabelKind
    >>> from ctxeval._measures import parse_measure
    >>> kind = LabelKind("binary", origin="reference_ids in s.jsonl")
    >>> notes = label_notes(kind, [parse_measure("Harm@5")], [1], GradeMap.binary([1]))
    >>> notes[0][:60]
    'labels: binary (relevant (grade >= 1) or unlabelled; referen'
    >>> "Harm@5 counts chunks labelled useless or harmful" in notes[1]
    True
    """
    ms = list(measures)
    out = list(kind.notes)
    on_scale = scale_read or any(reads_scale(m) for m in ms)
    if kind.judged and kind.provenance is not None:
        p = kind.provenance
        heur = " (a word-overlap heuristic: a first look, not a verdict)" if p.heuristic else ""
        out.append(f"labels: {kind.describe()}{heur}")
    llm_kind = getattr(utility, "llm_labels", None) if utility is not None else None
    source = getattr(utility, "llm_source", None) if utility is not None else None
    if llm_kind is None and on_scale and isinstance(source, str) and not source.startswith("<"):
        out.append(
            f"utilities: {source} has no sidecar ({os.path.basename(source)}.labels.json), so nothing says who wrote "
            "them (a model, a word-overlap heuristic, people): read the verdicts as resting on labels of unknown "
            "provenance. Keep a judge's files with their sidecars: merge them with ctxeval labels merge, not sort -u"
        )
    if llm_kind is not None and on_scale:
        out.extend(llm_kind.notes)
        if llm_kind.judged and llm_kind.provenance is not None:
            heur = " (a word-overlap heuristic: a first look, not a verdict)" if llm_kind.provenance.heuristic else ""
            out.append(f"utilities: {llm_kind.describe()}{heur}")
    if kind.binary and on_scale:
        gm = f"the grade map {grade_map.describe()}" if grade_map is not None else "the binary reading"
        out.append(
            f"labels: {kind.describe()}: through {gm}, a labelled chunk is relevant (grade 5 on the 1-5 scale) and "
            "every other chunk unlabelled: unjudged, not known to be harmful, never a hard negative unless "
            "--flag-unlabelled asks for it"
        )
        decided = utility is not None and (utility.llm is not None or utility.rules.unlabelled)
        neg = [str(m) for m in ms if needs_negatives(m)]
        if neg and not decided:
            names = ", ".join(neg[:4]) + (", ..." if len(neg) > 4 else "")
            out.append(
                f"{names} count{'s' if len(neg) == 1 else ''} chunks labelled useless or harmful, which binary labels "
                f"never are: NA where the top k holds an unlabelled chunk. To get such labels: {HOW_TO_JUDGE}"
            )
    if not kind.binary and on_scale and grade_map is None and kind.scale is None and grades and max(grades) <= 1:
        out.append(
            f"the qrels ({kind.origin}) hold grades {sorted(set(grades))} only, read on the 1-5 scale where grade 1 is a "
            "distractor: every relevant passage counts as one. If they are binary labels (relevant or not), say "
            "so: --labels binary (labels='binary'), or give a grade map (--grade-map 1:5,0:2)"
        )
    return out


def depth_notes(kind: LabelKind, run: str, judged: dict[str, tuple[int | None, float]]) -> list[str]:
    """Notes for judged labels read deeper than the judge judged: ``judged`` maps a measure name to
    (the ranks it reads, None for the whole list; the mean share of them that is judged, Judged@k).

    >>> from ctxeval._io.labels import LabelKind, Provenance
    >>> k = LabelKind("judged", "rag", "sidecar", Provenance("openai", "m", depth=2))
    >>> depth_notes(k, "bm25", {"nDCG@10": (10, 0.23), "nDCG@2": (2, 1.0)})[0][:72]
    'bm25: nDCG@10 reads 10 ranks but the judge (task grade by openai / m) la'
    """
    p = kind.provenance
    if not kind.judged or p is None or p.depth is None:
        return []
    out = []
    for name, (ranks, share) in judged.items():
        if (ranks is not None and ranks <= p.depth) or share >= 1.0:
            continue
        reads = "the whole list" if ranks is None else f"{ranks} ranks"
        who = p.describe().split(", ")[0]
        rest = (
            "carry an LLM utility, the rest keep the one their labels give"
            if kind.scale == "utility"
            else "are judged (Judged), the rest count as not relevant"
        )
        out.append(
            f"{run}: {name} reads {reads} but the judge ({who}) labelled only the top {p.depth} of each list: "
            f"{100 * share:.0f} % of the ranks it reads {rest}"
        )
    return out
