"""The ``agreement`` verb: a judge's labels against people's, as a judge card (:mod:`.card`).

Both labellings are compared on one scale. Each side's scale is the one its label kind names
(:class:`~ctxeval._io.labels.LabelKind`: a judge's sidecar, a sample set's reference ids or grades,
``Qrels(..., labels="trec")``), else the one its grades are on: {0, 1} binary (reference ids are all
1: relevant, the rest unlabelled), 0–3 with a 0 TREC's, 1–5 RA-nWG's (the judge's default); other
grades need a grade map or a level. The judge's provenance (who judged, how deep) heads the card.
Then:

* a **grade map** (``grade_map=``, ``--grade-map [human=|judge=]MAP``) maps one side's grades onto the
  other's scale; without ``human=``/``judge=`` it applies to the side whose grades it covers (and,
  when it covers both, to the side it maps into the other's scale);
* when one side is **binary**, the other is binarized at its scale's level (TREC: grade >= 2; 1–5:
  >= 4; ``level=`` to change) and the card says so;
* two different graded scales without a map are both binarized at their levels, and the card asks
  for a map to compare grades.

Measures are evaluated under both labellings on that common scale.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._core.grademap import GradeMap
from .._errors import ConfigError
from .._io.model import Qrels, Run
from .._io.samples import Samples
from .._measures import parse_measures
from .agreement import cohen_kappa, krippendorff_alpha_ordinal
from .card import JudgeCard, Scale
from .nulls import NullSettings, label_nulls
from .systems import SystemSettings, grade_spread, systems
from .verdict import THRESHOLDS, verdict

__all__ = ["BINARY", "RA_NWG", "TREC", "agreement", "infer_scale", "is_sample_set"]

BINARY = Scale("binary (relevant = 1)", (0, 1), 1)
TREC = Scale("0-3 (TREC)", (0, 1, 2, 3), 2)
RA_NWG = Scale("1-5 (RA-nWG)", (1, 2, 3, 4, 5), 4)

Pairs = dict[tuple[str, str], int]


def infer_scale(grades: set[int], other: set[int] | None = None) -> Scale:
    """The scale a set of grades is on (``other``: the other side's grades, to settle 1–3 without a 0).

    >>> infer_scale({1}).name, infer_scale({0, 2, 3}).name, infer_scale({4}).name, infer_scale({2, 7}).name
    ('binary (relevant = 1)', '0-3 (TREC)', '1-5 (RA-nWG)', 'grades 2-7')
    """
    if not grades:
        raise ConfigError("no labels: nothing to compare")
    if grades <= {0, 1}:
        return BINARY
    if 0 in grades and grades <= set(TREC.grades):
        return TREC
    if grades <= set(RA_NWG.grades):
        if max(grades) <= 3 and other is not None and 0 in other and other <= set(TREC.grades):
            return TREC
        return RA_NWG
    lo, hi = min(grades), max(grades)
    return Scale(f"grades {lo}-{hi}", tuple(range(lo, hi + 1)), None)


def _split_map(grade_map: Any) -> tuple[str | None, GradeMap | None]:
    """``grade_map`` as (side or None, map): a map, ``"judge=5:1,4:1"``, or ``{"judge": map}``."""
    if grade_map is None:
        return None, None
    if isinstance(grade_map, Mapping) and grade_map and all(k in ("human", "judge") for k in grade_map):
        if len(grade_map) != 1:
            raise ConfigError("grade_map maps one side onto the other: give {'human': MAP} or {'judge': MAP}")
        ((side, value),) = grade_map.items()
        return str(side), GradeMap.coerce(value)
    if isinstance(grade_map, str) and "=" in grade_map:
        side, _, text = grade_map.partition("=")
        if side.strip() not in ("human", "judge"):
            raise ConfigError(f"grade map {grade_map!r}: the side before '=' is 'human' or 'judge'")
        return side.strip(), GradeMap.parse(text)
    return None, GradeMap.coerce(grade_map)


def _map_side(gm: GradeMap, side: str | None, hg: set[int], jg: set[int]) -> str:
    """Which side ``gm`` applies to (see the module docstring)."""
    if side is not None:
        bad = gm.unmapped(np.array(sorted(hg if side == "human" else jg)))
        if bad:
            raise ConfigError(f"grade map {gm.describe()} does not map the {side} grade(s) {bad}; add them to the map")
        return side
    grades = {"human": hg, "judge": jg}
    other = {"human": "judge", "judge": "human"}
    fits = [s for s in grades if grades[s] <= set(gm.mapping)]
    if len(fits) == 2:  # the side the map carries onto the other's scale
        into = [s for s in fits if {gm.mapping[g] for g in grades[s]} <= set(infer_scale(grades[other[s]]).grades)]
        fits = into if len(into) == 1 else fits
    if len(fits) != 1:
        what = "both sides' grades" if fits else "neither side's grades"
        raise ConfigError(
            f"grade map {gm.describe()} covers {what} (people {sorted(hg)}, judge {sorted(jg)}): say which side it maps, "
            "--grade-map judge=MAP or human=MAP"
        )
    return fits[0]


_SAMPLE_KEYS = frozenset(
    ["retrieved", "retrieved_ids", "retrieved_contexts", "contexts", "reference_ids", "reference_context_ids", "grades"]
)


def is_sample_set(obj: Any) -> bool:
    """A :class:`~ctxeval.Samples`, a list of sample mappings, or a JSON-lines file whose first record
    has a sample set's fields (retrieved chunks, reference ids, grades)."""
    if isinstance(obj, Samples):
        return True
    if isinstance(obj, Sequence) and not isinstance(obj, (str, bytes)):
        return bool(obj) and isinstance(obj[0], Mapping)
    if not isinstance(obj, (str, os.PathLike)) or not str(obj).lower().endswith((".jsonl", ".json", ".ndjson")):
        return False
    try:
        with open(obj, encoding="utf-8") as f:
            first = next((line for line in f if line.strip()), "")
        rec = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(rec, dict) and bool(_SAMPLE_KEYS & set(rec))


def _read_labels(obj: Any) -> tuple[Pairs, str, Any]:
    """(pairs, source, :class:`~ctxeval._io.labels.LabelKind`) from qrels (a path, with its sidecar when
    a judge wrote it; a dict, a frame, a :class:`~ctxeval.Qrels`) or a sample set (its grades, or its
    reference ids at grade 1)."""
    if is_sample_set(obj):
        st = Samples.coerce(obj)
        pairs = {(s.query_id, d): int(g) for s in st.samples for d, g in (s.grades or {}).items()}
        return pairs, st.source, st.labels
    q = Qrels.coerce(obj)
    pairs = {(qid, d): int(g) for qid, docs in q.to_dict().items() for d, g in docs.items()}
    return pairs, q.source, q.labels


def _scale_of(kind: Any, grades: set[int], other: set[int]) -> Scale:
    """The scale the label kind names (reference ids: binary, relevant or unlabelled), else the one
    the grades are on."""
    named = {"binary": BINARY, "rag": RA_NWG, "trec": TREC}.get(kind.scale) if kind is not None else None
    if named is BINARY and kind.kind == "binary":
        return Scale("reference ids (binary: relevant or unlabelled)", BINARY.grades, BINARY.level)
    if named is not None:
        bad = sorted(g for g in grades if g not in named.grades)
        if bad:
            raise ConfigError(f"the labels are declared {named.name} ({kind.origin}) but hold grade(s) {bad}")
        return named
    return infer_scale(grades, other)


def _named_runs(runs: Any) -> list[Any]:
    """``runs`` as a list: a sequence of runs or sample sets (``NAME=PATH`` names a path), or a mapping
    ``{name: run path | Run | sample set}`` naming each (a run's own ``{query: {doc: score}}`` is one
    run, not a mapping of names)."""
    if not isinstance(runs, Mapping):
        return [_as_run(r) for r in runs]
    if all(isinstance(v, Mapping) and not any(isinstance(x, Mapping) for x in v.values()) for v in runs.values()):
        return [runs]  # {query: {doc: score}}
    out = []
    for name, value in runs.items():
        r = _as_run(value)
        out.append(r.with_name(str(name)) if isinstance(r, Run) else Run.coerce(r, name=str(name)))
    return out


def _as_run(obj: Any) -> Any:
    """A run, or a sample set's retrieved lists as one."""
    if is_sample_set(obj):
        return Samples.coerce(obj).run()
    return obj


def _binarize(pairs: Pairs, level: int) -> Pairs:
    return {p: int(g >= level) for p, g in pairs.items()}


def _common(
    hs: Scale, js: Scale, hp: Pairs, jp: Pairs, level: int | None
) -> tuple[Scale, Pairs, Pairs, int, str | None]:
    """Both sides on one scale: (scale, human pairs, judge pairs, the binarizing level, how)."""

    def need(s: Scale, who: str) -> int:
        lv = level if level is not None else s.level
        if lv is not None and not s.grades[0] < lv <= s.grades[-1]:
            raise ConfigError(
                f"--level {lv}: on the {who} scale {s.name} a level splits its grades in two: "
                f"{s.grades[0] + 1} to {s.grades[-1]}"
            )
        if lv is None:
            raise ConfigError(
                f"the {who} labels are on {s.name}, where no level is conventional: give --level "
                "(relevant = grade >= LEVEL) or --grade-map to put them on the other side's scale"
            )
        return lv

    if hs.grades == js.grades:
        lv = 1 if hs.grades == BINARY.grades else need(hs, "people's")
        return hs, hp, jp, lv, None
    if hs.grades == BINARY.grades:
        lv = need(js, "judge's")
        return (
            BINARY,
            hp,
            _binarize(jp, lv),
            1,
            f"the judge's {js.name} binarized at grade >= {lv}: people's labels are binary",
        )
    if js.grades == BINARY.grades:
        lv = need(hs, "people's")
        return (
            BINARY,
            _binarize(hp, lv),
            jp,
            1,
            f"people's {hs.name} binarized at grade >= {lv}: the judge's labels are binary",
        )
    if level is not None:
        raise ConfigError(
            f"--level needs one scale, and people's labels are on {hs.name}, the judge's on {js.name}: "
            "give --grade-map to map one onto the other"
        )
    lh, lj = need(hs, "people's"), need(js, "judge's")
    return (
        BINARY,
        _binarize(hp, lh),
        _binarize(jp, lj),
        1,
        f"people's {hs.name} at grade >= {lh} and the judge's {js.name} at >= {lj}, both binarized: "
        "map one scale onto the other (--grade-map) to compare grades",
    )


def _label_stats(h: np.ndarray, j: np.ndarray, common: Scale, lv: int, all_human_relevant: bool) -> dict[str, Any]:
    kappa = cohen_kappa(h, j, grades=common.grades)
    hb, jb = (h >= lv).astype(np.int64), (j >= lv).astype(np.int64)
    kb = cohen_kappa(hb, jb, grades=(0, 1))
    out: dict[str, Any] = {
        "kappa": kappa.to_dict(),
        "kappa_binary": {"level": lv, "kappa": kb.unweighted, "exact_agreement": kb.exact},
        "alpha_ordinal": krippendorff_alpha_ordinal(h, j),
        "leniency": {
            "judge_rate": float(jb.mean()),
            "human_rate": float(hb.mean()),
            "ratio": float(jb.mean() / hb.mean()) if hb.mean() > 0 else None,
        },
    }
    if common.grades == RA_NWG.grades and (h == 1).sum() >= 5:  # grade 1 is a distractor on this scale
        called = int((jb[h == 1]).sum())
        pairs = int((h == 1).sum())
        out["distractors"] = {
            "grade": 1,
            "pairs": pairs,
            "called_relevant": called,
            "share": called / pairs,
            "flag": called / pairs >= THRESHOLDS["distractors"],
        }
    if all_human_relevant:
        out["positives_only"] = (
            f"people's labels are all relevant (reference ids: relevant or unlabelled), so kappa and alpha cannot "
            f"measure agreement; the judge calls {int(jb.sum())} of those {jb.size} relevant ({jb.mean():.1%}: its "
            "recall of people's relevant pairs)"
        )
        out["kappa_binary_undefined"] = "people's labels are all relevant: chance agreement cannot be told apart"
    elif kb.unweighted is None:
        out["kappa_binary_undefined"] = f"at grade >= {lv} one label is all anyone used"
    return out


def agreement(
    human: Any,
    judged: Any,
    runs: Sequence[Any] | Mapping[str, Any] = (),
    *,
    measure: str = "nDCG@10",
    alpha: float = 0.05,
    grade_map: Any = None,
    level: int | None = None,
    top: int = 5,
    draws: int = 200,
    seed: int = 0,
) -> JudgeCard:
    """The judge card of ``judged`` labels against ``human`` ones (qrels paths, dicts, frames or
    :class:`~ctxeval.Qrels`): coverage, kappas, ordinal alpha, leniency, the degenerate-judge check;
    given two or more ``runs`` (a list, or a mapping ``{name: run or sample set}``), each run's mean of
    ``measure`` under either labelling, the system ranking (Kendall's tau, tau_AP, the largest swap in
    the top ``top``), the prediction-powered estimate of each mean and the circularity check; every
    figure beside what null judges get on the same pairs and runs (``draws`` of each, seeded by
    ``seed``; 0: none, :mod:`.nulls`); and a verdict listing every failing rule. ``grade_map`` and
    ``level``: see the module docstring.

    >>> card = agreement({"q": {"a": 3, "b": 0, "c": 2}}, {"q": {"a": 5, "b": 2, "c": 4}}, grade_map="human=trec-dl")
    >>> card.labels["kappa"]["kappa"], card.scales["common"]["name"]
    (1.0, '1-5 (RA-nWG)')
    """
    if draws < 0:
        raise ConfigError(f"draws must be >= 0, got {draws}")
    hp, h_source, h_kind = _read_labels(human)
    jp, j_source, j_kind = _read_labels(judged)
    if not hp or not jp:
        raise ConfigError(f"{h_source if not hp else j_source}: no labels: nothing to compare")
    hg, jg = set(hp.values()), set(jp.values())
    hs0, js0 = _scale_of(h_kind, hg, jg), _scale_of(j_kind, jg, hg)
    prov = j_kind.provenance if j_kind is not None else None
    notes: list[str] = []
    side, gm = _split_map(grade_map)
    hs, js = hs0, js0
    if gm is not None:
        side = _map_side(gm, side, hg, jg)
        if side == "human":
            hp = {p: gm.mapping.get(g, g) for p, g in hp.items()}
            mapped = set(hp.values())
            hs = js if mapped <= set(js.grades) else infer_scale(mapped, jg)
        else:
            jp = {p: gm.mapping.get(g, g) for p, g in jp.items()}
            mapped = set(jp.values())
            js = hs if mapped <= set(hs.grades) else infer_scale(mapped, hg)
        notes.append(f"grade map {gm.describe()} applied to the {'people' if side == 'human' else 'judge'}'s labels")
    common, hc, jc, lv, how = _common(hs, js, hp, jp, level)
    both = sorted(set(hc) & set(jc))
    if not both:
        raise ConfigError(f"no (query, doc) pair is labelled in both {h_source} and {j_source}: nothing to compare")
    hq, bq = {q for q, _ in hc}, {q for q, _ in both}
    coverage = {
        "human_pairs": len(hc),
        "judge_pairs": len(jc),
        "both": len(both),
        "share": len(both) / len(hc),
        "judge_only": len(set(jc) - set(hc)),
        "queries_human": len(hq),
        "queries_both": len(bq),
    }
    ha = np.array([hc[p] for p in both], dtype=np.int64)
    ja = np.array([jc[p] for p in both], dtype=np.int64)
    refs = hs.grades == BINARY.grades and min(hc.values()) >= lv
    labels = _label_stats(ha, ja, common, lv, refs)
    degenerate = grade_spread(jc, hc)
    if coverage["share"] < 0.5:
        notes.append(
            f"the judge labelled {coverage['share']:.0%} of the pairs people labelled: a measure under its labels counts "
            "every pair it did not label as not relevant (see the judged column); judge deeper (--depth) to compare"
        )
    nulls = NullSettings(draws=draws, seed=seed)
    chance: dict[str, Any] = {}
    if draws and not refs:
        chance["labels"] = label_nulls(jc, hc, both, common.grades, lv, nulls)
    card_runs: dict[str, Any] = {"measure": None, "ranking": None, "means": {}, "ppi": {}, "circularity": None}
    if runs:
        settings = SystemSettings(parse_measures([measure])[0], alpha, top, nulls)
        card_runs = systems(hc, jc, _named_runs(runs), settings, (h_source, j_source), notes)
        if card_runs["chance"] is not None:
            chance["ranking"] = card_runs["chance"]
    if chance:
        chance["draws"] = draws
        chance["seed"] = seed
    circ = card_runs["circularity"]
    return JudgeCard(
        human=h_source,
        judge=j_source,
        labelled_by=prov.describe() if prov is not None else None,
        scales={"human": hs0.to_dict(), "judge": js0.to_dict(), "common": common.to_dict(), "how": how},
        coverage=coverage,
        labels=labels,
        degenerate=degenerate,
        measure=card_runs["measure"],
        ranking=card_runs["ranking"],
        means=card_runs["means"],
        ppi=card_runs["ppi"],
        alpha=alpha,
        verdict=verdict(labels, degenerate, card_runs["ranking"], coverage, chance, circ),
        notes=notes,
        chance=chance or None,
        circularity=circ,
    )
