"""Per-passage utility: how much each retrieved passage helps (u > 0) or hurts (u < 0) an LLM reader.

A human skips an off-topic result; an LLM reads everything it is given, and a plausible-but-wrong
passage pulls its answer off. Every ranked row of a run gets a utility ``u``:

1. **Labels.** The judged grade (after the grade map in force, see :mod:`ctxeval._pool`) through a
   utility map; default on the 1–5 scale ``{5: 1.0, 4: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}``. Every grade of
   the qrels must be in the map (other scales: give a grade map, e.g. ``trec-dl``, or a utility map
   on their own grades). Unjudged rows have label utility 0. Utilities lie in [-1, 1].
2. **Known distractors.** A list of ``qid docid`` pairs sets u = -1.0 whatever the label.
3. **Detection rules** for rows whose utility is still 0 (judged with utility 0, e.g. grade 2, or
   unlabelled), and only those: a row whose *relative score* is >= ``tau`` is a hard negative
   (u = ``penalty``); otherwise a row at rank <= ``top_rank`` is a hard negative too, judged or
   unlabelled alike (the issue's "a non-relevant passage at rank <= r": an unlabelled passage is
   not relevant as far as the qrels know, and the LLM reads it all the same). Otherwise the label
   utility stands (0 if unlabelled). Rows of non-zero utility (relevant grades, grade 1's -1, known
   distractors) are never touched.
   The relative score of a row is s / s_max over its query's retrieved list when all the query's
   scores are > 0, else (s - s_min) / (s_max - s_min); a query whose scores are all equal gets 1.0
   on every row. It is never an absolute threshold: RRF scores live near 0.03, where any absolute
   threshold silently flags nothing.
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
   :meth:`UtilityRows.counts` says how many. The threshold shapes ``u`` and so every measure built
   on it (dDCG, ndDCG, DistractorRate, DistractorHarm, the optimal k, calibration); Trappolini et
   al.'s UDCG and positional UDCG read the LLM utilities as given (``u_raw``: +u / -u by relevance,
   no threshold).

``why`` codes say which step set each row: 0 label, 1 known distractor, 2 hard negative by relative
score, 3 hard negative by rank, 4 LLM utility (:data:`WHY_NAMES`).

Dynamic K: per query the cumulative utility U(k) = Σ_{i<=k} u_i (optionally u_i / log2(i + 1)), with
U(0) = 0; the optimal k is the smallest k >= 0 maximising U(k), so an empty list, or one whose every
prefix has U(k) <= 0, has optimal k = 0 (pass nothing). :func:`dynamic_k_summary` adds the mean,
median and histogram of the optimal k and the single fixed K maximising the mean of U(K).

>>> relative_scores(np.array([0, 3, 5]), np.array([0.032, 0.016, 0.008, -1.0, 1.0]))
array([1.  , 0.5 , 0.25, 0.  , 1.  ])
>>> optimal_k(np.array([0, 5, 7]), np.array([1.0, -0.5, 1.0, -1.0, 0.0, -1.0, 0.5]))
array([3, 0])
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ._errors import ConfigError, DuplicateError, EmptyInputError, FormatError, InputError
from ._relscore import relative_scores

if TYPE_CHECKING:
    import polars as pl

    from ._data import Qrels
    from ._engine import EvalData
else:
    from ._lazy import pl

__all__ = [
    "DEFAULT_UTILITY_MAP",
    "DEFAULT_LLM_THRESHOLD",
    "llm_rule",
    "describe_lines",
    "DistractorRules",
    "UtilityConfig",
    "UtilityRows",
    "WHY_NAMES",
    "WHY_LABEL",
    "WHY_KNOWN",
    "WHY_SCORE",
    "WHY_RANK",
    "WHY_LLM",
    "relative_scores",
    "row_utilities",
    "attach_utilities",
    "utilities_of",
    "optimal_k",
    "dynamic_k_summary",
    "parse_utility_map",
    "read_distractors",
    "read_utilities",
]

DEFAULT_UTILITY_MAP: dict[int, float] = {5: 1.0, 4: 1.0, 3: 0.5, 2: 0.0, 1: -1.0}
DEFAULT_LLM_THRESHOLD = 0.5


def llm_rule(threshold: float) -> str:
    """How LLM utilities become signed utilities, for reports.

    >>> llm_rule(0.5)
    'relevant: u; other passages: -u when u >= 0.5, else 0; known distractors: -u'
    """
    return f"relevant: u; other passages: -u when u >= {threshold:g}, else 0; known distractors: -u"

WHY_LABEL, WHY_KNOWN, WHY_SCORE, WHY_RANK, WHY_LLM = 0, 1, 2, 3, 4
WHY_NAMES: tuple[str, ...] = ("label", "known distractor", "hard negative (score)", "hard negative (rank)", "LLM utility")

RELATIVE_SCORE_RULE = "s / s_max when all scores of the query are > 0, else (s - s_min) / (s_max - s_min); all equal: 1.0"


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
    they get, in [-1, 0).

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
    ) -> DistractorRules:
        """A preset (``default``, ``strict``, ``lenient``, ``off``) with optional overrides."""
        if isinstance(preset, DistractorRules):
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
                raise ConfigError("penalty must be < 0 (a hard negative hurts); use --distractor-rules off to turn detection off")
        changed = (new_tau, new_rank, new_pen) != (b_tau, b_rank, b_pen)
        return cls(preset="custom" if changed else base_name, tau=new_tau, top_rank=new_rank, penalty=new_pen, based_on=based_on)

    @property
    def active(self) -> bool:
        return self.tau is not None or self.top_rank > 0

    def describe(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "based_on": self.based_on,
            "tau": self.tau,
            "top_rank": self.top_rank,
            "penalty": self.penalty,
            "relative_score": RELATIVE_SCORE_RULE,
        }

    def __str__(self) -> str:
        if not self.active:
            return f"{self.preset}: no detection (labels and the known list only)"
        parts = []
        if self.tau is not None:
            parts.append(f"relative score >= {self.tau:g}")
        if self.top_rank > 0:
            parts.append(f"rank <= {self.top_rank}")
        name = self.preset if self.preset != "custom" else f"custom (based on {self.based_on})"
        return f"{name}: a passage of utility 0 (judged or unlabelled) is a hard negative if {' or '.join(parts)}; penalty {self.penalty:g}"


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
        parts = ([f"relative score >= {r['tau']:g}"] if r["tau"] is not None else []) + ([f"rank <= {r['top_rank']}"] if r["top_rank"] else [])
        rules = f"a passage of utility 0 (judged or unlabelled) is a hard negative if {' or '.join(parts)}, penalty {r['penalty']:g}"
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
        items = []
        for part in value.split(","):
            if not part.strip():
                continue
            src, sep, dst = part.partition(":")
            try:
                if not sep:
                    raise ValueError
                items.append((int(src), float(dst)))
            except ValueError:
                raise ConfigError(
                    f"utility map {value!r}: {part.strip()!r} is not GRADE:UTILITY (integer grade, number), "
                    "e.g. 5:1,4:1,3:0.5,2:0,1:-1"
                ) from None
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
    known: pl.DataFrame | None = field(default=None, repr=False)  #: query_id, doc_id
    known_source: str | None = None
    known_duplicates: int = 0  #: lines (or pairs) of the known list repeating an earlier pair, counted once
    llm: pl.DataFrame | None = field(default=None, repr=False)  #: query_id, doc_id, u
    llm_source: str | None = None
    llm_threshold: float = DEFAULT_LLM_THRESHOLD  #: an irrelevant passage distracts when its LLM utility is >= this

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
    ) -> UtilityConfig:
        """Build a configuration from user-facing values (paths, texts, mappings); ``llm_threshold``
        None means the default, 0.5."""
        if isinstance(utility_map, UtilityConfig):
            return utility_map
        th = DEFAULT_LLM_THRESHOLD if llm_threshold is None else _check_unit("llm_threshold (LLM utility from which an irrelevant passage distracts)", llm_threshold, 0.0, 1.0)
        known, known_src, known_dup = _read_distractors(distractors) if distractors is not None else (None, None, 0)
        llm, llm_src = read_utilities(utilities) if utilities is not None else (None, None)
        return cls(
            utility_map=tuple(parse_utility_map(utility_map).items()),
            rules=DistractorRules.resolve(rules, tau, top_rank, penalty),
            known=known,
            known_source=known_src,
            known_duplicates=known_dup,
            llm=llm,
            llm_source=llm_src,
            llm_threshold=th,
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
            "utilities": None if self.llm is None else {"source": self.llm_source, "pairs": self.llm.height, "threshold": self.llm_threshold},
            "utility_source": self.source,
        }

    def lines(self) -> list[str]:
        """Human-readable lines for text reports."""
        out = [f"utility map: {_map_text(self.map)} (unjudged: 0)", f"distractor rules: {self.rules}"]
        if self.known is not None:
            dup = f"; {self.known_duplicates} duplicate line{'s' if self.known_duplicates != 1 else ''} ignored" if self.known_duplicates else ""
            out.append(f"known distractors: {self.known.height} pairs from {self.known_source} (u = -1{dup})")
        if self.llm is not None:
            out.append(f"utilities: LLM, {self.llm.height} pairs from {self.llm_source} ({llm_rule(self.llm_threshold)})")
        else:
            out.append("utilities: from the labels (no LLM utilities file)")
        return out


# --------------------------------------------------------------------------------------------------
# readers
# --------------------------------------------------------------------------------------------------


def _lines(path: Path) -> Iterable[tuple[int, str]]:
    from ._io import _decode, _open_bytes

    text = _decode(_open_bytes(path), str(path))
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield lineno, line


def _open_path(value: Any, what: str) -> Path:
    p = Path(value)
    if not p.exists():
        raise InputError(f"{value}: no such file ({what})")
    if p.is_dir():
        raise InputError(f"{value}: is a directory, expected a {what} file")
    return p


def read_distractors(value: Any) -> tuple[pl.DataFrame, str]:
    """Known distractors: a file of ``qid docid`` lines (white space separated, ``#`` comments and blank
    lines skipped; a pair listed twice counts once), a mapping ``{qid: [doc, ...]}``, an iterable of
    ``(qid, doc)`` pairs or a frame with query id and doc id columns. Returns the unique pairs and the
    source name (:class:`UtilityConfig` reports how many repeated pairs were counted once).

    >>> df, src = read_distractors({"q1": ["d2", "d3"]})
    >>> df.height, src
    (2, '<distractors>')
    """
    df, source, _ = _read_distractors(value)
    return df, source


def _read_distractors(value: Any) -> tuple[pl.DataFrame, str, int]:
    """:func:`read_distractors` and how many lines (pairs) repeated an earlier pair."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], pl.DataFrame):
        return value[0], value[1], 0  # already read
    if isinstance(value, (str, os.PathLike)):
        path = _open_path(value, "known distractors")
        qs: list[str] = []
        ds: list[str] = []
        for lineno, line in _lines(path):
            parts = line.split()
            if len(parts) != 2:
                raise FormatError(str(value), lineno, f"expected two fields (qid docid), found {len(parts)}", line)
            qs.append(parts[0])
            ds.append(parts[1])
        if not qs:
            raise EmptyInputError(f"{value}: no known-distractor lines found (the file is empty or only comments)")
        source = str(value)
    elif isinstance(value, pl.DataFrame):
        from ._io import _DOC_NAMES, _QID_NAMES, _pick

        qc = _pick(value.columns, _QID_NAMES, "query id", "<distractors frame>", True)
        dc = _pick(value.columns, _DOC_NAMES, "document id", "<distractors frame>", True)
        qs = [str(x) for x in value[qc].to_list()]  # type: ignore[index]
        ds = [str(x) for x in value[dc].to_list()]  # type: ignore[index]
        source = "<distractors frame>"
    elif isinstance(value, Mapping):
        qs, ds = [], []
        for q, docs in value.items():
            if isinstance(docs, (str, bytes)) or not isinstance(docs, Iterable):
                raise InputError(f"known distractors: query {q!r} maps to {docs!r}, expected a list of doc ids")
            for d in docs:
                qs.append(str(q))
                ds.append(str(d))
        source = "<distractors>"
    elif isinstance(value, Iterable):
        qs, ds = [], []
        for i, pair in enumerate(value):
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable) or len(tuple(pair)) != 2:
                raise InputError(f"known distractors: item {i} is {pair!r}, expected a (qid, doc_id) pair")
            q, d = tuple(pair)
            qs.append(str(q))
            ds.append(str(d))
        source = "<distractors>"
    else:
        raise ConfigError(f"known distractors must be a file path, a mapping or (qid, doc) pairs, got {type(value).__name__}")
    df = pl.DataFrame({"query_id": pl.Series(qs, dtype=pl.String), "doc_id": pl.Series(ds, dtype=pl.String)})
    unique = df.unique(maintain_order=True)
    return unique, source, df.height - unique.height


def read_utilities(value: Any) -> tuple[pl.DataFrame, str]:
    """LLM utilities: a file of ``qid docid u`` lines (u a number in [0, 1]; white space separated,
    ``#`` comments and blank lines skipped; a pair listed twice is an error), a mapping
    ``{qid: {doc: u}}`` or a frame with query id, doc id and ``u``/``utility`` columns.

    >>> df, _ = read_utilities({"q1": {"d1": 0.9, "d2": 0.25}})
    >>> df["u"].to_list()
    [0.9, 0.25]
    """
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], pl.DataFrame):
        return value
    lines: list[int] | None = None
    if isinstance(value, (str, os.PathLike)):
        path = _open_path(value, "utilities")
        source = str(value)
        qs: list[str] = []
        ds: list[str] = []
        us: list[float] = []
        lines = []
        for lineno, line in _lines(path):
            parts = line.split()
            if len(parts) != 3:
                raise FormatError(source, lineno, f"expected three fields (qid docid u), found {len(parts)}", line)
            try:
                u = float(parts[2])
            except ValueError:
                raise FormatError(source, lineno, f"utility {parts[2]!r} is not a number", line) from None
            if not (math.isfinite(u) and 0.0 <= u <= 1.0):
                raise FormatError(source, lineno, f"utility {parts[2]!r} is outside [0, 1] (u = 1 - P(NO-RESPONSE))", line)
            qs.append(parts[0])
            ds.append(parts[1])
            us.append(u)
            lines.append(lineno)
        if not qs:
            raise EmptyInputError(f"{source}: no utility lines found (the file is empty or only comments)")
    elif isinstance(value, pl.DataFrame):
        from ._io import _DOC_NAMES, _QID_NAMES, _pick

        source = "<utilities frame>"
        qc = _pick(value.columns, _QID_NAMES, "query id", source, True)
        dc = _pick(value.columns, _DOC_NAMES, "document id", source, True)
        uc = _pick(value.columns, ("u", "utility", "score"), "utility", source, True)
        qs = [str(x) for x in value[qc].to_list()]  # type: ignore[index]
        ds = [str(x) for x in value[dc].to_list()]  # type: ignore[index]
        us = [_check_u(x, source, i + 1) for i, x in enumerate(value[uc].to_list())]  # type: ignore[index]
    elif isinstance(value, Mapping):
        source = "<utilities>"
        qs, ds, us = [], [], []
        for q, inner in value.items():
            if not isinstance(inner, Mapping):
                raise InputError(f"utilities: query {q!r} maps to {type(inner).__name__}, expected a mapping of doc id to utility")
            for d, u in inner.items():
                qs.append(str(q))
                ds.append(str(d))
                us.append(_check_u(u, f"utilities[{q!r}][{d!r}]", None))
    else:
        raise ConfigError(f"utilities must be a file path, a mapping or a frame, got {type(value).__name__}")
    df = pl.DataFrame(
        {"query_id": pl.Series(qs, dtype=pl.String), "doc_id": pl.Series(ds, dtype=pl.String), "u": pl.Series(us, dtype=pl.Float64)}
    )
    dup = df.select(pl.struct("query_id", "doc_id").is_duplicated()).to_series()
    if dup.any():
        rows = np.flatnonzero(dup.to_numpy())
        q, d = df["query_id"][int(rows[0])], df["doc_id"][int(rows[0])]
        same = [int(i) for i in rows if df["query_id"][int(i)] == q and df["doc_id"][int(i)] == d][:2]
        where = " and ".join(str(lines[i] if lines is not None else i + 1) for i in same)
        raise DuplicateError(f"{source}: utility of query {q!r}, doc {d!r} given twice ({'lines' if lines is not None else 'records'} {where})")
    return df, source


def _check_u(x: Any, source: str, line: int | None) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(float(x)) or not 0.0 <= float(x) <= 1.0:
        where = f"{source}:{line}" if line is not None else source
        raise InputError(f"{where}: utility {x!r} is not a number in [0, 1]")
    return float(x)


# --------------------------------------------------------------------------------------------------
# segment helpers (pure numpy)
# --------------------------------------------------------------------------------------------------


def _seg_reduce(ufunc: np.ufunc, values: np.ndarray, off: np.ndarray, empty: float) -> np.ndarray:
    """``ufunc.reduce`` over every segment ``[off[i], off[i+1])``; ``empty`` for empty segments."""
    n_q = off.size - 1
    out = np.full(n_q, empty, dtype=np.float64)
    lens = np.diff(off)
    nonempty = lens > 0
    if values.size and nonempty.any():
        out[nonempty] = ufunc.reduceat(values, off[:-1][nonempty])
    return out


def _ranks(off: np.ndarray) -> np.ndarray:
    lens = np.diff(off)
    return np.arange(int(off[-1]), dtype=np.int64) - np.repeat(off[:-1], lens) + 1


def _cumulative(r_off: np.ndarray, u: np.ndarray, discount: bool, max_k: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row gain w (u or u / log2(rank + 1); 0 beyond max_k), ranks, and the within-query prefix sums."""
    r_off = np.asarray(r_off, dtype=np.int64)
    u = np.asarray(u, dtype=np.float64)
    rank = _ranks(r_off)
    w = u / np.log2(rank + 1.0) if discount else u.copy()
    if max_k is not None:
        w[rank > max_k] = 0.0
    c = np.cumsum(w)
    base = np.zeros(r_off.size - 1)
    inner = r_off[:-1] > 0
    base[inner] = c[r_off[:-1][inner] - 1]
    c -= np.repeat(base, np.diff(r_off))
    return w, rank, c


_TOL = 1e-9


def _optimal_from(r_off: np.ndarray, rank: np.ndarray, cs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Optimal k per query from the within-query prefix sums, and the best U (>= 0) per query."""
    n_q = r_off.size - 1
    out = np.zeros(n_q, dtype=np.int64)
    if cs.size == 0:
        return out, np.zeros(n_q)
    best = _seg_reduce(np.maximum, cs, r_off, -np.inf)
    tol = _TOL * np.maximum(1.0, np.abs(np.where(np.isfinite(best), best, 0.0)))
    hit = np.flatnonzero(cs >= np.repeat(best - tol, np.diff(r_off)))
    seg = np.searchsorted(r_off, hit, side="right") - 1
    first = np.r_[True, seg[1:] != seg[:-1]] if seg.size else np.zeros(0, dtype=bool)
    out[seg[first]] = rank[hit[first]]
    none = ~(best > tol)
    out[none] = 0
    return out, np.where(none, 0.0, best)


def optimal_k(r_off: np.ndarray, u: np.ndarray, discount: bool = False, max_k: int | None = None) -> np.ndarray:
    """Per query the smallest k >= 0 maximising U(k) = Σ_{i<=k} u_i (``discount``: u_i / log2(i + 1)),
    U(0) = 0, k <= ``max_k`` when given. An empty list, or one whose prefixes all have U(k) <= 0,
    gives 0. Prefix sums equal within 1e-9 (relative) count as ties, so float noise cannot move k.

    >>> optimal_k(np.array([0, 4]), np.array([0.5, 0.0, 1.0, -2.0]))
    array([3])
    >>> optimal_k(np.array([0, 0, 2]), np.array([-1.0, 1.0]))
    array([0, 0])
    """
    r_off = np.asarray(r_off, dtype=np.int64)
    _, rank, cs = _cumulative(r_off, u, discount, max_k)
    return _optimal_from(r_off, rank, cs)[0]


def dynamic_k_summary(r_off: np.ndarray, u: np.ndarray, discount: bool = False, max_k: int | None = None) -> dict[str, Any]:
    """The optimal k over queries (mean, median, histogram ``counts[k]`` for k = 0..max) and the
    single fixed K (0 <= K <= the longest list, or ``max_k``) maximising the mean over queries of
    U(K); a list shorter than K contributes all its rows. Ties go to the smallest K.

    >>> s = dynamic_k_summary(np.array([0, 3, 6]), np.array([1.0, 1.0, -1.0, 1.0, -1.0, -1.0]))
    >>> s["mean"], s["median"], s["histogram"], s["best_fixed_k"], s["mean_utility_at_best_fixed_k"]
    (1.5, 1.5, [0, 1, 1], 1, 1.0)
    """
    r_off = np.asarray(r_off, dtype=np.int64)
    n_q = r_off.size - 1
    if n_q == 0:
        return {"n_queries": 0, "discount": discount, "max_k": max_k, "mean": None, "median": None, "histogram": [],
                "best_fixed_k": None, "mean_utility_at_best_fixed_k": None, "mean_utility_at_optimal_k": None}
    w, rank, cs = _cumulative(r_off, u, discount, max_k)
    ks, at_opt = _optimal_from(r_off, rank, cs)
    longest = int(np.diff(r_off).max()) if n_q else 0
    top = longest if max_k is None else min(max_k, longest)
    per_k = np.bincount(rank, weights=w, minlength=top + 1)[: top + 1] if w.size else np.zeros(top + 1)
    per_k[0] = 0.0
    mean_u = np.cumsum(per_k) / n_q
    best_mean = float(mean_u.max())
    best_k = int(np.flatnonzero(mean_u >= best_mean - _TOL * max(1.0, abs(best_mean)))[0])
    return {
        "n_queries": int(n_q),
        "discount": bool(discount),
        "max_k": max_k,
        "mean": float(ks.mean()),
        "median": float(np.median(ks)),
        "histogram": np.bincount(ks).astype(int).tolist(),
        "best_fixed_k": best_k,
        "mean_utility_at_best_fixed_k": float(mean_u[best_k]),
        "mean_utility_at_optimal_k": float(at_opt.mean()),
    }


# --------------------------------------------------------------------------------------------------
# per-row utilities
# --------------------------------------------------------------------------------------------------


@dataclass
class UtilityRows:
    """Dense per-ranked-row utilities over ``data.r_off`` segments.

    ``u``: utility of every row; ``rel``: relative score; ``why``: which rule set u (:data:`WHY_NAMES`);
    ``label``: the label utility (before the known list, the rules and LLM utilities);
    ``llm_u``: the raw LLM utility (NaN where none; None without a utilities file);
    ``u_raw``: with LLM utilities, ``u`` before the LLM threshold (+u / -u by relevance: what UDCG's
    positional form reads); None without them (then it equals ``u``);
    ``known``: the rows on the known-distractor list (whichever step set their utility);
    ``pos_off``/``pos_u``: per query, the positive utilities of its judged docs, descending (the ideal
    of ndDCG; None when they cannot be known, see :func:`row_utilities`).
    """

    u: np.ndarray
    rel: np.ndarray
    why: np.ndarray
    label: np.ndarray
    llm_u: np.ndarray | None
    pos_off: np.ndarray | None
    pos_u: np.ndarray | None
    config: UtilityConfig
    known: np.ndarray | None = None
    u_raw: np.ndarray | None = None

    @property
    def source(self) -> str:
        return self.config.source

    @property
    def u_direct(self) -> np.ndarray:
        """The utilities with LLM utilities read as given (no threshold): ``u_raw``, or ``u``."""
        return self.u if self.u_raw is None else self.u_raw

    def counts(self) -> dict[str, int]:
        """Rows set by each rule, negative rows, rows without an LLM utility and pairs of the LLM
        utilities file matching no ranked row (LLM source only), pairs of the known list matching no
        ranked row (with a known list)."""
        c = np.bincount(self.why.astype(np.int64), minlength=len(WHY_NAMES))
        out = {name: int(n) for name, n in zip(WHY_NAMES, c.tolist())}
        out["negative"] = int((self.u < 0).sum())
        if self.llm_u is not None:
            out["without LLM utility"] = int(np.isnan(self.llm_u).sum())
            if self.u_raw is not None:
                out["LLM utility below threshold"] = int(((self.u_raw < 0) & (self.u == 0)).sum())
            if self.config.llm is not None:
                # run rows are unique (query, doc) pairs, so each matched row uses one pair of the file
                out["LLM pairs not retrieved"] = int(self.config.llm.height - int((~np.isnan(self.llm_u)).sum()))
        if self.known is not None and self.config.known is not None:
            out["known pairs not retrieved"] = int(self.config.known.height - int(self.known.sum()))
        return out


def _lookup_map(grades: np.ndarray, umap: Mapping[int, float]) -> np.ndarray:
    keys = np.array(sorted(umap), dtype=np.int64)
    vals = np.array([umap[k] for k in keys.tolist()], dtype=np.float64)
    pos = np.clip(np.searchsorted(keys, grades), 0, max(keys.size - 1, 0))
    return vals[pos]


def _check_grades(data: EvalData, umap: Mapping[int, float]) -> None:
    present = np.unique(np.asarray(data.q_util))
    missing = sorted(set(present.tolist()) - set(umap))
    if missing:
        gm = data.grade_map
        after = f" after the grade map {gm.describe()}" if gm is not None and getattr(gm, "mapping", None) else ""  # type: ignore[attr-defined]
        raise ConfigError(
            f"the utility map {_map_text(umap)} gives no utility for grade(s) {missing} of the qrels{after}; "
            "map the grades onto the 1-5 scale (--grade-map, e.g. trec-dl) or give a utility map covering them "
            "(--utility-map GRADE:UTILITY,..., e.g. 3:1,2:1,1:0.5,0:0)"
        )


def _pair_values(frame: pl.DataFrame, table: pl.DataFrame, col: str | None, frame_keys: np.ndarray | None = None) -> np.ndarray:
    """Per row of ``frame``: the ``col`` value of its (query_id, doc_id) in ``table`` (NaN if absent),
    or a bool hit mask when ``col`` is None.

    Probes 64-bit pair hashes (``frame_keys``: those of ``frame``, when already computed) and checks
    every hit against the strings; a hash collision falls back to an exact join.
    """
    from ._io import pair_keys

    n = frame.height
    fk = np.asarray(pair_keys(frame)) if frame_keys is None else frame_keys
    tk = np.asarray(pair_keys(table))
    order = np.argsort(tk, kind="stable")
    sk = tk[order]
    if not (sk.size > 1 and bool(np.any(sk[1:] == sk[:-1]))):
        hit = np.flatnonzero(pl.Series(fk).is_in(pl.Series(tk).implode()).to_numpy())
        trow = order[np.searchsorted(sk, fk[hit])]
        exact = hit.size == 0 or bool(
            (frame["query_id"].gather(hit) == table["query_id"].gather(trow)).all()
            and (frame["doc_id"].gather(hit) == table["doc_id"].gather(trow)).all()
        )
        if exact:
            if col is None:
                mask = np.zeros(n, dtype=bool)
                mask[hit] = True
                return mask
            out = np.full(n, np.nan)
            out[hit] = table[col].to_numpy().astype(np.float64)[trow]
            return out
    right = table.select("query_id", "doc_id", (pl.col(col) if col else pl.lit(1.0)).cast(pl.Float64).alias("_v"))
    joined = frame.select("query_id", "doc_id").join(right, on=["query_id", "doc_id"], how="left", maintain_order="left")
    v = joined["_v"].to_numpy().astype(np.float64, copy=False)
    return ~np.isnan(v) if col is None else v


def row_utilities(data: EvalData, config: UtilityConfig | None = None, qrels: Qrels | None = None) -> UtilityRows:
    """Utilities of every ranked row of ``data`` (built with ``prepare(..., keep_frame=True)``).

    ``qrels`` gives the ideal of ndDCG doc by doc, so that known distractors and LLM utilities of judged
    docs the run did not retrieve count; without it the ideal comes from the grades alone, and is
    unavailable (``pos_u`` None) when a known list or LLM utilities are in force.
    """
    config = config or UtilityConfig()
    if data.frame is None:
        raise ConfigError("per-passage utilities need the run's rows and scores: prepare(..., keep_frame=True)")
    umap = config.map
    _check_grades(data, umap)
    n = data.n_rows
    label = np.zeros(n, dtype=np.float64)
    if data.j_idx.size:
        label[data.j_idx] = _lookup_map(np.asarray(data.j_util), umap)
    u = label.copy()
    why = np.zeros(n, dtype=np.int8)
    frame = data.frame
    known = np.zeros(n, dtype=bool)
    fkeys = None
    if (config.known is not None or config.llm is not None) and n:
        from ._io import pair_keys

        fkeys = np.asarray(pair_keys(frame))
    if config.known is not None and n:
        known = _pair_values(frame, config.known, None, fkeys)
        u[known] = -1.0
        why[known] = WHY_KNOWN
    rel = relative_scores(data.r_off, data.r_score) if n else np.zeros(0)
    rules = config.rules
    cand = (u == 0.0) & (why == WHY_LABEL)
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
        llm_u = _pair_values(frame, config.llm, "u", fkeys) if n else np.zeros(0)
        has = ~np.isnan(llm_u)
        relevant = (label > 0) & ~known
        u[has] = np.where(relevant[has], llm_u[has], -llm_u[has])
        u_raw = u.copy()
        ignored = has & ~relevant & ~known & (llm_u < config.llm_threshold)
        u[ignored] = 0.0
        why[has] = WHY_LLM
    pos_off, pos_u = _ideal(data, config, qrels)
    return UtilityRows(u, rel, why, label, llm_u, pos_off, pos_u, config, known, u_raw)


def _ideal(data: EvalData, config: UtilityConfig, qrels: Qrels | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    umap = config.map
    if qrels is None:
        if config.known is not None or config.llm is not None:
            return None, None
        seg = data.q_seg
        util = _lookup_map(np.asarray(data.q_util), umap)
    else:
        qids = pl.DataFrame({"query_id": pl.Series(data.qids, dtype=pl.String), "_seg": np.arange(data.n_queries, dtype=np.int64)})
        qf = qrels.frame.join(qids, on="query_id", how="inner")
        gm = data.grade_map
        if gm is not None and getattr(gm, "mapping", None):
            qf = qf.with_columns(pl.col("relevance").replace_strict(gm.mapping, return_dtype=pl.Int64))  # type: ignore[attr-defined]
        seg = qf["_seg"].to_numpy().astype(np.int64)
        label = _lookup_map(qf["relevance"].to_numpy().astype(np.int64), umap)
        util = label.copy()
        known = np.zeros(util.size, dtype=bool)
        if config.known is not None and util.size:
            known = _pair_values(qf, config.known, None)
            util[known] = -1.0
        if config.llm is not None and util.size:
            v = _pair_values(qf, config.llm, "u")
            has = ~np.isnan(v)
            relevant = (label > 0) & ~known
            util[has] = np.where(relevant[has], v[has], -v[has])
    keep = util > 0
    seg, util = seg[keep], util[keep]
    order = np.lexsort((-util, seg))
    pos_off = np.zeros(data.n_queries + 1, dtype=np.int64)
    pos_off[1:] = np.cumsum(np.bincount(seg, minlength=data.n_queries))
    return pos_off, util[order]


def attach_utilities(data: EvalData, config: UtilityConfig | None = None, qrels: Qrels | None = None) -> UtilityRows:
    """Compute the row utilities once and keep them on ``data`` (``data.utility``) for the kernels."""
    rows = row_utilities(data, config, qrels)
    data.utility = rows  # type: ignore[attr-defined]
    return rows


def utilities_of(data: EvalData) -> UtilityRows:
    """The utilities attached to ``data``; computed with the default configuration when none are."""
    rows = getattr(data, "utility", None)
    if rows is None:
        if data.frame is None:
            raise ConfigError(
                "distraction measures need per-passage utilities: evaluate(...) computes them; on a bare EvalData "
                "use prepare(..., keep_frame=True) and ctxeval._utility.attach_utilities(data, config, qrels)"
            )
        rows = attach_utilities(data)
    return rows  # type: ignore[no-any-return]
