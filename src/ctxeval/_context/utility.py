"""Per-passage utility: how much each retrieved passage helps (u > 0) or hurts (u < 0) an LLM reader.

(The detection rules' settings, :class:`DistractorRules`, and the notes on what they flagged live in
:mod:`ctxeval._context.distractors`, re-exported here; this module resolves them row by row.)

A human skips an off-topic result; an LLM reads everything it is given, and a plausible-but-wrong
passage pulls its answer off. Every ranked row of a run gets a utility ``u``:

1. **Labels.** The judged grade (after the grade map in force, see :mod:`ctxeval._context.grades`) through a
   utility map; default on the 1–5 scale ``{5: 1.0, 4: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}``. Every grade of
   the qrels must be in the map (other scales: give a grade map, e.g. ``trec-dl``, or a utility map
   on their own grades). Unjudged rows have label utility 0. Utilities lie in [-1, 1].
2. **Known distractors.** A list of ``qid docid`` pairs sets u = -1.0 whatever the label.
3. **Detection rules** for rows whose utility is still 0 (judged with utility 0, e.g. grade 2, or
   unlabelled), and only those: a row whose *relative score* is >= ``tau`` is a hard negative
   (u = ``penalty``); otherwise a row at rank <= ``top_rank`` is a hard negative too, judged or
   unlabelled alike (an unlabelled passage is not relevant as far as the qrels know, and the LLM
   reads it all the same). Otherwise the label
   utility stands (0 if unlabelled). Rows of non-zero utility (relevant grades, grade 1's -1, known
   distractors) are never touched.
   The relative score of a row is (s - s_min) / (s_max - s_min) over its query's retrieved list (a
   query whose scores are all equal gets 1.0 on every row): the same under any increasing affine
   change of a run's scores, so the rule reads a BM25 run, a dense run whose cosine scores sit in
   [0.86, 1] and RRF scores near 0.03 alike (an absolute threshold flags nothing at 0.03; s / s_max
   flags every passage of the dense run; see :mod:`ctxeval._core.relscore`). A rule that still flags
   more than :data:`FLAG_SHARE` of a run's utility-0 passages is noted (:func:`flag_note`): its
   verdict then rests on tau rather than on the run.
   On **binary labels** (reference ids: a chunk is relevant or unlabelled, see
   :mod:`ctxeval._io.labels`) the rules touch judged rows only: an unlabelled chunk stays unlabelled
   (``unknown``), and the measures that count distractors are NA where the top k holds one, unless
   ``DistractorRules(unlabelled=True)`` (``--flag-unlabelled``) asks for the rules there too (the
   reports then count the unlabelled chunks they flagged).
   Presets (:class:`DistractorRules`): ``default`` tau 0.7, top_rank 3, penalty -0.5; ``strict``
   tau 0.5, top_rank 3, penalty -1.0; ``lenient`` tau 0.9, top_rank 3, penalty -0.2; ``off`` (labels
   and the known list only). Any value can be overridden (the preset is then reported as ``custom``).
4. **LLM utilities** (``qid docid u`` lines, u in [0, 1], e.g. u = 1 - P(first token of
   "NO-RESPONSE") with the passage alone in the prompt, Trappolini et al. 2025) replace the above
   for every row that has one. They are unsigned, so the sign comes from relevance, as in the
   positional UDCG's u+ / u- split: u for a relevant row (positive label utility, not a known
   distractor); for the others u measures how strongly the passage makes the LLM answer (the
   *distracting effect*, Amiraz et al., ACL 2025), and such a passage is a distractor, utility -u,
   only when u >= ``llm_threshold`` (default 0.5: the LLM is more likely to answer from it than to
   decline). Below the threshold it is junk the LLM ignores: utility 0, not a distractor (with a
   threshold of 0 every irrelevant passage with u > 0 counts). A known distractor is one whatever
   its LLM utility: -u. Rows without an LLM utility keep the label-derived value;
   :meth:`~ctxeval._core.extras.Utilities.counts` says how many. The threshold shapes ``u`` and so every measure built
   on it (dDCG, ndDCG, DistractorRate, DistractorHarm, the optimal k, calibration); Trappolini et
   al.'s UDCG and positional UDCG read the LLM utilities as given (``u_raw``: +u / -u by relevance,
   no threshold).

``why`` codes say which step set each row: 0 label, 1 known distractor, 2 hard negative by relative
score, 3 hard negative by rank, 4 LLM utility (:data:`~ctxeval._core.extras.WHY_NAMES`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.extras import WHY_KNOWN, WHY_LABEL, WHY_LLM, WHY_RANK, WHY_SCORE, Grades, Utilities
from .._core.grademap import pairs
from .._core.join import judged_docs, pair_lookup
from .._core.relscore import RELATIVE_SCORE_RULE, relative_scores
from .._errors import ConfigError
from .._io.labels import check_sidecar, read_sidecar
from .._io.side import Pairs, read_distractors, read_utilities
from .distractors import (
    _WHICH,
    DEFAULT_LLM_THRESHOLD,
    FLAG_SHARE,
    DistractorRules,
    _check_unit,
    flag_counts,
    flag_note,
    llm_rule,
    unlabelled_note,
    unlabelled_notes,
)
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData
    from .._core.grademap import GradeMap
    from .._io.model import Qrels

__all__ = [
    "DEFAULT_LLM_THRESHOLD",
    "DEFAULT_UTILITY_MAP",
    "FLAG_SHARE",
    "RELATIVE_SCORE_RULE",
    "DistractorRules",
    "UtilityConfig",
    "UtilityProvider",
    "describe_lines",
    "flag_counts",
    "flag_note",
    "llm_rule",
    "parse_utility_map",
    "row_utilities",
    "unlabelled_note",
    "unlabelled_notes",
]

DEFAULT_UTILITY_MAP: dict[int, float] = {5: 1.0, 4: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}


def describe_lines(u: Mapping[str, Any]) -> list[str]:
    """Text lines for a :meth:`UtilityConfig.describe` dict: the utility map, the rules in force, the
    known list and the utility source (with the LLM threshold), as every text report prints them.

    >>> describe_lines(UtilityConfig().describe())[0]
    'utility map: 5:1,4:1,3:0.5,2:0,1:-1 (unjudged: 0); distractor rules default: a passage of utility 0 (judged or unlabelled) is a hard negative if relative score >= 0.7 or rank <= 3, penalty -0.5'
    """
    r = u["rules"]
    umap = ",".join(f"{g}:{v:g}" for g, v in u["utility_map"].items())
    if r["tau"] is None and not r["top_rank"]:
        rules = "no detection (labels and the known list only)"
    else:
        parts = ([f"relative score >= {r['tau']:g}"] if r["tau"] is not None else []) + (
            [f"rank <= {r['top_rank']}"] if r["top_rank"] else []
        )
        which = _WHICH[r.get("unlabelled", True) is not False]
        rules = f"a passage of utility 0 ({which}) is a hard negative if {' or '.join(parts)}, penalty {r['penalty']:g}"
    name = r["preset"] if r["preset"] != "custom" else f"custom (based on {r['based_on']})"
    out = [f"utility map: {umap} (unjudged: 0); distractor rules {name}: {rules}"]
    if u.get("known_distractors"):
        kd = u["known_distractors"]
        dup = f" ({kd['duplicate_lines']} duplicate lines ignored)" if kd.get("duplicate_lines") else ""
        out.append(f"known distractors: {kd['pairs']} pairs from {kd['source']}{dup}")
    if u.get("utilities"):
        ut = u["utilities"]
        src = f"LLM utilities from {ut['source']} ({llm_rule(ut.get('threshold', DEFAULT_LLM_THRESHOLD))}; UDCG reads u as given)"
    else:
        src = "labels (UDCG: label-derived stand-ins)"
    out.append(f"utility source: {src}")
    return out


def parse_utility_map(value: Any) -> dict[int, float]:
    """A utility map from None (the default), ``"default"``, ``"5:1,4:1,3:0.5,2:0,1:-1"`` or a mapping.

    >>> parse_utility_map("3:1,2:0.5,1:0,0:-1")
    {3: 1.0, 2: 0.5, 1: 0.0, 0: -1.0}
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == "default"):
        return dict(DEFAULT_UTILITY_MAP)
    items: list[tuple[Any, Any]]
    if isinstance(value, str):
        items = list(
            pairs(value, float, lambda part: f"utility map {value!r}: {part!r} is not GRADE:UTILITY (integer grade, "
                  "number), e.g. 5:1,4:1,3:0.5,2:0,1:-1")
        )  # fmt: skip
    elif isinstance(value, Mapping):
        items = list(value.items())
    else:
        raise ConfigError(f"utility map must be 'GRADE:UTILITY,...' or a mapping, got {type(value).__name__}")
    out: dict[int, float] = {}
    for k, v in items:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise ConfigError(f"utility map: grade {k!r} is not an integer")
        if int(k) in out:
            raise ConfigError(f"utility map {value!r}: grade {int(k)} is given twice")
        out[int(k)] = _check_unit(f"utility map: utility of grade {k}", v, -1.0, 1.0)
    if not out:
        raise ConfigError("utility map is empty")
    return dict(sorted(out.items(), key=lambda kv: -kv[0]))


def _map_text(m: Mapping[int, float]) -> str:
    return ",".join(f"{k}:{v:g}" for k, v in m.items())


@dataclass(frozen=True, eq=False)
class UtilityConfig:
    """Everything that decides the per-row utilities; :meth:`describe` is printed in every report."""

    utility_map: tuple[tuple[int, float], ...] = tuple(DEFAULT_UTILITY_MAP.items())
    rules: DistractorRules = field(default_factory=DistractorRules)
    known: Pairs | None = field(default=None, repr=False)  #: the known distractors
    known_source: str | None = None
    known_duplicates: int = 0  #: lines (or pairs) of the known list repeating an earlier pair, counted once
    llm: Pairs | None = field(default=None, repr=False)  #: the LLM utilities (values: u)
    llm_source: str | None = None
    llm_threshold: float = DEFAULT_LLM_THRESHOLD  #: an irrelevant passage distracts when its LLM utility is >= this
    #: what the LLM utilities are and who wrote them (their file's sidecar, :mod:`ctxeval._io.labels`)
    llm_labels: Any = field(default=None, repr=False)

    @classmethod
    def resolve(
        cls,
        utility_map: Any = None,
        distractors: Any = None,
        utilities: Any = None,
        rules: str | DistractorRules | None = "default",
        tau: float | None = None,
        top_rank: int | None = None,
        penalty: float | None = None,
        llm_threshold: float | None = None,
        flag_unlabelled: bool | None = None,
    ) -> UtilityConfig:
        """Build a configuration from user-facing values (paths, texts, mappings); ``llm_threshold``
        None means the default, 0.5; ``flag_unlabelled``: whether the detection rules may flag
        unlabelled passages (None: on graded labels yes, on binary labels no)."""
        if isinstance(utility_map, UtilityConfig):
            return utility_map
        th = (
            DEFAULT_LLM_THRESHOLD
            if llm_threshold is None
            else _check_unit(
                "llm_threshold (LLM utility from which an irrelevant passage distracts)", llm_threshold, 0.0, 1.0
            )
        )
        umap = tuple(parse_utility_map(utility_map).items())
        drules = DistractorRules.resolve(rules, tau, top_rank, penalty, flag_unlabelled)
        known = read_distractors(distractors) if distractors is not None else None
        llm = read_utilities(utilities) if utilities is not None else None
        llm_labels = None
        if isinstance(utilities, (str, os.PathLike)):
            llm_labels = read_sidecar(utilities)
            if llm_labels is not None and llm is not None:
                check_sidecar(llm_labels, utilities, llm.columns.values)
        return cls(
            utility_map=umap,
            rules=drules,
            known=known,
            known_source=known.source if known is not None else None,
            known_duplicates=known.duplicates if known is not None else 0,
            llm=llm,
            llm_source=llm.source if llm is not None else None,
            llm_threshold=th,
            llm_labels=llm_labels,
        )

    @property
    def map(self) -> dict[int, float]:
        return dict(self.utility_map)

    @property
    def source(self) -> str:
        """``llm`` when LLM utilities were given, else ``labels``."""
        return "llm" if self.llm is not None else "labels"

    def describe(self) -> dict[str, Any]:
        return {
            "utility_map": {str(k): v for k, v in self.utility_map},
            "rules": self.rules.describe(),
            "known_distractors": None
            if self.known is None
            else {"source": self.known_source, "pairs": self.known.height, "duplicate_lines": self.known_duplicates},
            "utilities": None
            if self.llm is None
            else {"source": self.llm_source, "pairs": self.llm.height, "threshold": self.llm_threshold},
            "utility_source": self.source,
        }

    def lines(self) -> list[str]:
        """Human-readable lines for text reports."""
        out = [f"utility map: {_map_text(self.map)} (unjudged: 0)", f"distractor rules: {self.rules}"]
        if self.known is not None:
            dup = (
                f"; {self.known_duplicates} duplicate line{'s' if self.known_duplicates != 1 else ''} ignored"
                if self.known_duplicates
                else ""
            )
            out.append(f"known distractors: {self.known.height} pairs from {self.known_source} (u = -1{dup})")
        if self.llm is not None:
            out.append(
                f"utilities: LLM, {self.llm.height} pairs from {self.llm_source} ({llm_rule(self.llm_threshold)})"
            )
        else:
            out.append("utilities: from the labels (no LLM utilities file)")
        return out


# --------------------------------------------------------------------------------------------------
# per-row utilities
# --------------------------------------------------------------------------------------------------


def _lookup_map(grades: np.ndarray, umap: Mapping[int, float]) -> np.ndarray:
    keys = np.array(sorted(umap), dtype=np.int64)
    vals = np.array([umap[k] for k in keys.tolist()], dtype=np.float64)
    pos = np.clip(np.searchsorted(keys, grades), 0, max(keys.size - 1, 0))
    return vals[pos]


def _check_grades(grades: Grades, umap: Mapping[int, float]) -> None:
    present = np.unique(np.asarray(grades.q_util))
    missing = sorted(set(present.tolist()) - set(umap))
    if missing:
        after = (
            f" after the grade map {grades.grade_map}" if grades.grade_map and grades.grade_map != "identity" else ""
        )
        raise ConfigError(
            f"the utility map {_map_text(umap)} gives no utility for grade(s) {missing} of the qrels{after}; "
            "map the grades onto the 1-5 scale (--grade-map, e.g. trec-dl) or give a utility map covering them "
            "(--utility-map GRADE:UTILITY,..., e.g. 3:1,2:1,1:0.5,0:0)"
        )


def _qids(data: EvalData) -> np.ndarray:
    return np.array(data.qids, dtype=str) if data.qids else np.zeros(0, dtype="U1")


def _values(q: np.ndarray, ids: Any, pairs: Pairs, qids: np.ndarray, n: int) -> np.ndarray:
    """Per row (query positions ``q``, doc ids ``ids``): the value of its pair in ``pairs``, NaN if absent."""
    out = np.full(n, np.nan)
    if n:
        i, row = pair_lookup(q, ids, pairs.columns, qids)
        out[i] = pairs.columns.values[row]
    return out


def row_utilities(
    data: EvalData, config: UtilityConfig | None = None, qrels: Qrels | None = None, grade_map: GradeMap | None = None
) -> Utilities:
    """Utilities of every ranked row of ``data`` (joined with its rows kept, with the ``grades`` side
    data built).

    ``qrels`` gives the ideal of ndDCG doc by doc, so that known distractors and LLM utilities of judged
    docs the run did not retrieve count; without it the ideal comes from the grades alone, and is
    unavailable (``pos_u`` None) when a known list or LLM utilities are in force.
    """
    config = config or UtilityConfig()
    if data.rows is None:
        raise ConfigError("per-passage utilities need the run's rows and scores (keep_rows)")
    grades: Grades = data.extra("grades")
    umap = config.map
    _check_grades(grades, umap)
    n = data.n_rows
    qids = _qids(data)
    label = np.zeros(n, dtype=np.float64)
    if data.j_idx.size:
        label[data.j_idx] = _lookup_map(np.asarray(grades.j_util), umap)
    u = label.copy()
    why = np.zeros(n, dtype=np.int8)
    known = np.zeros(n, dtype=bool)
    if config.known is not None and n:
        known = ~np.isnan(_values(data.r_seg, data.rows.doc, config.known, qids, n))
        u[known] = -1.0
        why[known] = WHY_KNOWN
    rel = relative_scores(data.r_off, data.r_score) if n else np.zeros(0)
    rules = config.rules
    binary = qrels is not None and not qrels.plain and qrels.labels.binary
    cand = (u == 0.0) & (why == WHY_LABEL)
    if not rules.flags_unlabelled(binary):
        cand &= data.r_judged
    if rules.tau is not None:
        by_score = cand & (rel >= rules.tau)
        u[by_score] = rules.penalty
        why[by_score] = WHY_SCORE
        cand &= ~by_score
    if rules.top_rank > 0:
        by_rank = cand & (data.r_rank <= rules.top_rank)
        u[by_rank] = rules.penalty
        why[by_rank] = WHY_RANK
    llm_u = None
    u_raw = None
    if config.llm is not None:
        llm_u = _values(data.r_seg, data.rows.doc, config.llm, qids, n)
        has = ~np.isnan(llm_u)
        relevant = (label > 0) & ~known
        u[has] = np.where(relevant[has], llm_u[has], -llm_u[has])
        u_raw = u.copy()
        ignored = has & ~relevant & ~known & (llm_u < config.llm_threshold)
        u[ignored] = 0.0
        why[has] = WHY_LLM
    unknown = None
    if binary:  # unlabelled, and no rule, list or LLM utility said anything about it
        unknown = ~data.r_judged & (why == WHY_LABEL)
    pos_off, pos_u = _ideal(data, grades, config, qrels, grade_map)
    return Utilities(
        u,
        rel,
        why,
        label,
        llm_u,
        pos_off,
        pos_u,
        known,
        u_raw,
        config.source,
        config.llm.height if config.llm is not None else None,
        config.known.height if config.known is not None else None,
        unknown,
    )


def _ideal(
    data: EvalData, grades: Grades, config: UtilityConfig, qrels: Qrels | None, grade_map: GradeMap | None
) -> tuple[np.ndarray | None, np.ndarray | None]:
    umap = config.map
    if qrels is None:
        if config.known is not None or config.llm is not None:
            return None, None
        seg = data.q_seg
        util = _lookup_map(np.asarray(grades.q_util), umap)
    else:
        qids = _qids(data)
        cols = qrels.columns
        seg, rows = judged_docs(cols, qids)
        grade = cols.values[rows].astype(np.int64)
        label = _lookup_map(grade_map.apply(grade) if grade_map is not None else grade, umap)
        util = label.copy()
        docs = cols.doc.take(rows)
        known = np.zeros(util.size, dtype=bool)
        if config.known is not None and util.size:
            known = ~np.isnan(_values(seg, docs, config.known, qids, util.size))
            util[known] = -1.0
        if config.llm is not None and util.size:
            v = _values(seg, docs, config.llm, qids, util.size)
            has = ~np.isnan(v)
            relevant = (label > 0) & ~known
            util[has] = np.where(relevant[has], v[has], -v[has])
    keep = util > 0
    seg, util = seg[keep], util[keep]
    order = np.lexsort((-util, seg))
    pos_off = np.zeros(data.n_queries + 1, dtype=np.int64)
    pos_off[1:] = np.cumsum(np.bincount(seg, minlength=data.n_queries))
    return pos_off, util[order]


class UtilityProvider(SideData):
    name = "utility"
    after = ("grades",)

    def build(self, data: EvalData, inputs: Inputs) -> Utilities:
        return row_utilities(data, inputs.settings.utility, inputs.qrels, inputs.settings.rag.grade_map)


register(UtilityProvider())
