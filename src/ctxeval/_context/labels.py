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
  the model, the task and how deep it was given the lists; the share of the ranks the measures read
  that the judge labelled (Judged@k) is said once per command, run by run (:func:`labelled_notes`):
  it is the runs evaluated, not the pool the judge was given, that say how much of a figure rests on
  labels.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.grademap import GradeMap
from .._core.segments import distinct, div0
from .._errors import ConfigError
from .._io.labels import contradiction

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._io.labels import LabelKind
    from .._io.model import Qrels
    from .._measures import Measure
    from .settings import RagConfig

__all__ = [
    "HOW_TO_JUDGE",
    "judged_kinds",
    "label_notes",
    "labelled_notes",
    "labelled_shares",
    "needs_negatives",
    "ranks_read",
    "reads_scale",
    "resolve",
]

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


#: families that read no label (counts of the run, the judged share itself)
_LABEL_FREE = frozenset({"Judged", "unj", "NumQ", "NumRet"})


def judged_kinds(qrels_kind: LabelKind | None, llm_kind: LabelKind | None) -> dict[str, LabelKind]:
    """The judged labels in force, by what they label: ``"labels"`` (qrels a judge wrote: the
    sidecar says so) and ``"utilities"`` (LLM utilities a judge wrote); empty when neither is."""
    pairs = (("labels", qrels_kind), ("utilities", llm_kind))
    return {what: kind for what, kind in pairs if kind is not None and kind.judged}


def ranks_read(measures: Iterable[Measure], what: str) -> list[int | None]:
    """The depths the measures reading ``what`` read (``"labels"``: every measure that reads a label;
    ``"utilities"``: those reading the utility side data), distinct, shallowest first: k, or None for
    a whole list (no cut-off, or a recall level). A budget of tokens is left out: how many ranks it
    reads differs from query to query."""
    ks: set[int | None] = set()
    for m in measures:
        if m.family in _LABEL_FREE or m.budget is not None or (what == "utilities" and "utility" not in m.requires):
            continue
        ks.add(int(m.cutoff) if m.cutoff is not None and m.spec.cutoff_kind == "int" else None)
    return sorted(ks, key=lambda k: (k is None, k or 0))


def labelled_shares(
    kinds: Mapping[str, LabelKind], data: EvalData, measures: Sequence[Measure]
) -> dict[tuple[str, int | None], np.ndarray]:
    """Per query, the share of the ranks ``measures`` read that carries a label of each judged kind
    (:func:`judged_kinds`), keyed by (``"labels"`` or ``"utilities"``, the depth: k, or None for the
    whole list). For qrels it is Judged@k, the judged docs in the top k over k (in the run's order);
    for utilities the docs with an LLM utility, likewise; over a whole list, over its length."""
    out: dict[tuple[str, int | None], np.ndarray] = {}
    if "labels" in kinds:
        for k in ranks_read(measures, "labels"):
            count = data.seg_count(np.ones(data.j_rank.size, dtype=bool) if k is None else data.j_rank <= k)
            out["labels", k] = div0(count, data.n_ret) if k is None else count / k
    u = data.extra("utility") if "utilities" in kinds and data.has("utility") else None
    if u is not None and u.llm_u is not None:
        has = ~np.isnan(u.llm_u)
        for k in ranks_read(measures, "utilities"):
            rows = has if k is None else has & (data.r_rank <= k)
            count = np.bincount(data.r_seg[rows], minlength=data.n_queries)
            out["utilities", k] = div0(count, data.n_ret) if k is None else count / k
    return out


def _pct(share: float) -> str:
    """A share in per cent, never rounded to 0 or to 100 when it is neither.

    >>> _pct(0.14), _pct(0.001), _pct(0.999), _pct(1.0)
    ('14 %', '<1 %', '>99 %', '100 %')
    """
    if 0 < share < 0.005:
        return "<1 %"
    if 0.995 <= share < 1:
        return ">99 %"
    return f"{100 * share:.0f} %"


def labelled_notes(
    kinds: Mapping[str, LabelKind],
    runs: Sequence[tuple[str, Mapping[tuple[str, int | None], np.ndarray]]],
    measures: Sequence[Measure],
) -> list[str]:
    """What a command says once about judged labels: for each kind (:func:`judged_kinds`), the
    share of the ranks ``measures`` read that carries the judge's label, run by run (``runs``: each
    run's name and its :func:`labelled_shares`, a mean over its queries), depth by depth. This is
    the judged depth of the runs evaluated, not the depth the judge was given (the sidecar's, which
    describes the pool the labels came from). Nothing where every rank read carries a label.

    >>> from ctxeval._io.labels import LabelKind, Provenance
    >>> from ctxeval._measures import parse_measure
    >>> kinds = {"labels": LabelKind("judged", "trec", "sidecar", Provenance("openai", "m", depth=12))}
    >>> shares = {("labels", 10): np.array([0.1, 0.2]), ("labels", 20): np.array([0.05, 0.1])}
    >>> print(labelled_notes(kinds, [("bm25", shares), ("tasb", shares)], [parse_measure("nDCG@10")])[0])
    judged labels (task grade by openai / m, given the top 12 of each list): Judged@10 of each run evaluated, the share of its top 10 the judge labelled (the rest count as not relevant): bm25 15 %, tasb 15 %
    """
    out = []
    for what, kind in kinds.items():
        table: dict[int | None, list[tuple[str, float]]] = {}
        for k in ranks_read(measures, what):
            seen = [(name, s[what, k]) for name, s in runs if (what, k) in s]
            shares = [(name, float(np.nanmean(v))) for name, v in seen if np.any(~np.isnan(v))]
            if shares:
                table[k] = shares
        if not table or all(share >= 1.0 for row in table.values() for _, share in row):
            continue
        p = kind.provenance
        who = ""
        if p is not None:
            given = "every chunk" if p.depth is None else f"the top {p.depth} of each list"
            who = f" ({p.describe().split(', ')[0]}, given {given})"
        at = [f"@{k}" if k is not None else "whole lists" for k in table]
        cells = [", ".join(f"{name} {_pct(share)}" for name, share in row) for row in table.values()]
        listed = cells[0] if len(cells) == 1 else "; ".join(f"{a} {c}" for a, c in zip(at, cells))
        only: int | str | None = next(iter(table)) if len(table) == 1 else "k"  # one depth named; several: "k"
        span = "list" if only is None else f"top {only}"
        if what == "labels":
            figure = "the judged share of each run's list" if only is None else f"Judged@{only} of each run evaluated"
            out.append(
                f"judged labels{who}: {figure}, the share of its {span} the judge labelled (the rest count as not "
                f"relevant): {listed}"
            )
        else:
            out.append(
                f"judged utilities{who}: the share of each run's {span} that carries an LLM utility (the rest keep "
                f"the utility their labels give): {listed}"
            )
    return out
