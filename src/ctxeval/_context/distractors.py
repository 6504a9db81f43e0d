"""The hard-negative detection rules' settings (:class:`DistractorRules`: presets, thresholds, the
penalty) and the notes on what they flagged in a run (:func:`flag_counts`, :func:`flag_note`,
:func:`unlabelled_note`); :mod:`ctxeval._context.utility` resolves the rules row by row (its
docstring gives them in full) and re-exports these names."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._core.extras import WHY_LABEL, WHY_RANK, WHY_SCORE, Utilities  # noqa: F401 (WHY_LABEL: a doctest reads it)
from .._core.relscore import RELATIVE_SCORE_RULE
from .._errors import ConfigError

__all__ = [
    "DEFAULT_LLM_THRESHOLD",
    "FLAG_SHARE",
    "DistractorRules",
    "flag_counts",
    "flag_note",
    "llm_rule",
    "unlabelled_note",
    "unlabelled_notes",
]


DEFAULT_LLM_THRESHOLD = 0.5


def llm_rule(threshold: float) -> str:
    """How LLM utilities become signed utilities, for reports.

    >>> llm_rule(0.5)
    'relevant: u; other passages: -u when u >= 0.5, else 0; known distractors: -u'
    """
    return f"relevant: u; other passages: -u when u >= {threshold:g}, else 0; known distractors: -u"


# --------------------------------------------------------------------------------------------------
# settings
# --------------------------------------------------------------------------------------------------


def _check_unit(name: str, value: Any, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{name} must be a number in [{lo:g}, {hi:g}], got {value!r}")
    if not lo <= value <= hi:
        raise ConfigError(f"{name} must be in [{lo:g}, {hi:g}], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class DistractorRules:
    """Detection rules for hard negatives (see the module docstring).

    ``tau``: relative-score threshold (None: no score rule); ``top_rank``: rows of utility 0 (judged
    or unlabelled) at rank <= top_rank are hard negatives (0: no rank rule); ``penalty``: the utility
    they get, in [-1, 0); ``unlabelled``: whether the rules may flag unlabelled passages (None: on
    graded labels yes, on binary labels no, see the module docstring).

    >>> DistractorRules.resolve("strict").describe()["tau"]
    0.5
    >>> r = DistractorRules.resolve("default", tau=0.8)
    >>> r.preset, r.based_on, r.tau, r.top_rank, r.penalty
    ('custom', 'default', 0.8, 3, -0.5)
    """

    preset: str = "default"
    tau: float | None = 0.7
    top_rank: int = 3
    penalty: float = -0.5
    based_on: str = "default"
    unlabelled: bool | None = None

    PRESETS: ClassVar[dict[str, tuple[float | None, int, float]]] = {
        "default": (0.7, 3, -0.5),
        "strict": (0.5, 3, -1.0),
        "lenient": (0.9, 3, -0.2),
        "off": (None, 0, -0.5),
    }

    @classmethod
    def resolve(
        cls,
        preset: str | DistractorRules | None = "default",
        tau: float | None = None,
        top_rank: int | None = None,
        penalty: float | None = None,
        unlabelled: bool | None = None,
    ) -> DistractorRules:
        """A preset (``default``, ``strict``, ``lenient``, ``off``) with optional overrides."""
        if unlabelled is not None and not isinstance(unlabelled, bool):
            raise ConfigError(f"unlabelled must be true, false or None (by label kind), got {unlabelled!r}")
        if isinstance(preset, DistractorRules):
            unlabelled = preset.unlabelled if unlabelled is None else unlabelled
            base_name, (b_tau, b_rank, b_pen) = preset.preset, (preset.tau, preset.top_rank, preset.penalty)
            based_on = preset.based_on
        else:
            name = "default" if preset is None else str(preset).strip().lower()
            if name not in cls.PRESETS:
                raise ConfigError(f"distractor rules must be one of {', '.join(cls.PRESETS)}, got {preset!r}")
            base_name, (b_tau, b_rank, b_pen), based_on = name, cls.PRESETS[name], name
        new_tau = b_tau if tau is None else _check_unit("tau (relative-score threshold)", tau, 0.0, 1.0)
        if top_rank is None:
            new_rank = b_rank
        elif isinstance(top_rank, bool) or not isinstance(top_rank, int) or top_rank < 0:
            raise ConfigError(f"top_rank must be a whole number >= 0 (0 turns the rank rule off), got {top_rank!r}")
        else:
            new_rank = int(top_rank)
        if penalty is None:
            new_pen = b_pen
        else:
            new_pen = _check_unit("penalty (utility of a hard negative)", penalty, -1.0, 0.0)
            if new_pen == 0.0:
                raise ConfigError(
                    "penalty must be < 0 (a hard negative hurts); use --distractor-rules off to turn detection off"
                )
        changed = (new_tau, new_rank, new_pen) != (b_tau, b_rank, b_pen)
        return cls(
            preset="custom" if changed else base_name,
            tau=new_tau,
            top_rank=new_rank,
            penalty=new_pen,
            based_on=based_on,
            unlabelled=unlabelled,
        )

    @property
    def active(self) -> bool:
        return self.tau is not None or self.top_rank > 0

    def flags_unlabelled(self, binary: bool) -> bool:
        """Whether the rules may flag unlabelled passages, on labels that are ``binary`` or not."""
        return (not binary) if self.unlabelled is None else self.unlabelled

    def describe(self) -> dict[str, Any]:
        out = {
            "preset": self.preset,
            "based_on": self.based_on,
            "tau": self.tau,
            "top_rank": self.top_rank,
            "penalty": self.penalty,
            "relative_score": RELATIVE_SCORE_RULE,
        }
        if self.unlabelled is False:
            out["unlabelled"] = False
        return out

    def __str__(self) -> str:
        if not self.active:
            return f"{self.preset}: no detection (labels and the known list only)"
        parts = []
        if self.tau is not None:
            parts.append(f"relative score >= {self.tau:g}")
        if self.top_rank > 0:
            parts.append(f"rank <= {self.top_rank}")
        name = self.preset if self.preset != "custom" else f"custom (based on {self.based_on})"
        return f"{name}: a passage of utility 0 ({_WHICH[self.unlabelled is not False]}) is a hard negative if {' or '.join(parts)}; penalty {self.penalty:g}"


#: which passages of utility 0 the rules read: judged and unlabelled, or (binary labels) judged only
_WHICH = {True: "judged or unlabelled", False: "judged; unlabelled passages stay unlabelled"}


#: above this share of a run's utility-0 passages flagged by the relative-score rule, the rule is noted
#: as deciding the verdict (the run's scores sit close to the top of each list)
FLAG_SHARE = 0.5


def flag_counts(urows: Utilities, judged: np.ndarray, rows: np.ndarray | None = None) -> dict[str, int]:
    """The hard negatives the detection rules flagged among ``rows`` (default: every ranked row), split
    into ``judged`` (a grade of utility 0) and ``unlabelled`` passages; ``by_score``: those the
    relative-score rule flagged; ``utility_0``: the passages the rules chose from (label utility 0, not
    a known distractor, no LLM utility).

    >>> from ctxeval._core.extras import Utilities
    >>> u = Utilities(np.array([1.0, -0.5, -0.5, 0.0]), np.array([1.0, 0.9, 0.2, 0.1]),
    ...               np.array([WHY_LABEL, WHY_SCORE, WHY_RANK, WHY_LABEL]), np.zeros(4), None, None, None)
    >>> flag_counts(u, np.array([True, True, False, False]))
    {'judged': 1, 'unlabelled': 1, 'by_score': 1, 'utility_0': 4}
    """
    sel = slice(None) if rows is None else rows
    why = urows.why[sel]
    flagged = (why == WHY_SCORE) | (why == WHY_RANK)
    jd = np.asarray(judged, dtype=bool)[sel]
    eligible = urows.label[sel] == 0.0
    if urows.known is not None:
        eligible &= ~urows.known[sel]
    if urows.llm_u is not None:
        eligible &= np.isnan(urows.llm_u[sel])
    return {
        "judged": int((flagged & jd).sum()),
        "unlabelled": int((flagged & ~jd).sum()),
        "by_score": int((why == WHY_SCORE).sum()),
        "utility_0": int(eligible.sum()),
    }


def flag_note(name: str, counts: Mapping[str, int], rules: DistractorRules) -> str | None:
    """A note when the relative-score rule flags more than :data:`FLAG_SHARE` of a run's utility-0
    passages (``counts`` from :func:`flag_counts` over the whole ranked lists); None otherwise.

    >>> flag_note("dense", {"judged": 10, "unlabelled": 70, "by_score": 80, "utility_0": 100}, DistractorRules())
    "dense: the relative-score rule (>= 0.7) flags 80 of the run's 100 utility-0 passages (80 %) as hard negatives: its scores sit close to the top of each list, so its distractor figures rest on tau more than on the run (LLM utilities, --utilities, do not)"
    """
    n, s = counts["utility_0"], counts["by_score"]
    if rules.tau is None or n == 0 or s <= FLAG_SHARE * n:
        return None
    return (
        f"{name}: the relative-score rule (>= {rules.tau:g}) flags {s} of the run's {n} utility-0 passages "
        f"({100 * s / n:.0f} %) as hard negatives: "
        "its scores sit close to the top of each list, so its distractor figures rest on tau more than on the run "
        "(LLM utilities, --utilities, do not)"
    )


def unlabelled_note(name: str, counts: Mapping[str, int], k: int | None = None) -> str | None:
    """A note counting the unlabelled passages the detection rules made hard negatives (``counts`` from
    :func:`flag_counts` over the rows the figures read: the top ``k`` of every list, or whole lists when
    ``k`` is None), or None when they made none: a verdict resting on them says so.

    >>> unlabelled_note("bm25", {"judged": 2, "unlabelled": 30, "by_score": 5, "utility_0": 100}, 20)
    'bm25: in the top 20, the hard-negative rules made 30 passages nobody labelled distractors (and 2 judged ones); the figures that count distractors rest on them (--no-flag-unlabelled leaves unlabelled passages alone)'
    """
    return unlabelled_notes({name: counts}, k)


def unlabelled_notes(per_run: Mapping[str, Mapping[str, int]], k: int | None = None) -> str | None:
    """:func:`unlabelled_note` for several runs in one line (each run with its counts), naming only the
    runs where the rules made some unlabelled passage a hard negative; None when none did.

    >>> c = {"judged": 2, "unlabelled": 30, "by_score": 5, "utility_0": 100}
    >>> unlabelled_notes({"a": c, "b": {**c, "unlabelled": 0}, "c": {**c, "unlabelled": 4, "judged": 1}}, 5)
    'in the top 5, the hard-negative rules made passages nobody labelled distractors: a 30 (and 2 judged ones), c 4 (and 1 judged ones); the figures that count distractors rest on them (--no-flag-unlabelled leaves unlabelled passages alone)'
    """
    hit = {name: c for name, c in per_run.items() if c["unlabelled"]}
    if not hit:
        return None
    where = f"in the top {k}" if k is not None else "in the whole ranked lists"
    tail = "the figures that count distractors rest on them (--no-flag-unlabelled leaves unlabelled passages alone)"
    if len(hit) == 1:
        [(name, c)] = hit.items()
        return (
            f"{name}: {where}, the hard-negative rules made {c['unlabelled']} passages nobody labelled distractors "
            f"(and {c['judged']} judged ones); {tail}"
        )
    each = ", ".join(f"{name} {c['unlabelled']} (and {c['judged']} judged ones)" for name, c in hit.items())
    return f"{where}, the hard-negative rules made passages nobody labelled distractors: {each}; {tail}"
