"""``snapshot``, ``gate`` and ``power``: a regression gate for CI that fails on a real drop, not on noise.

* :func:`snapshot` evaluates one run (the baseline) and returns a :class:`~.baseline.Baseline` to write.
* :func:`gate` evaluates a candidate under the same labels and settings (or refuses, naming what
  differs), tests each gated measure with the one-sided paired t-test of :mod:`.stats` at its
  tolerated drop, adjusts the p-values with Holm across the measures, and returns a :class:`GateReport`
  (``exit_code``: 0 holds, 1 a significant drop).
* :func:`power` plans: how many queries a gate needs to catch a given drop, and the smallest drop the
  current set catches, from the observed variance of the per-query changes.

Judged labels. When the qrels are a judge's labels (``labelled_by`` a model), the report says so. Given
people's labels on a subset of the queries (``human=``, also given to ``snapshot``), the change and its
test use the prediction-powered mean (:func:`ctxeval._core.ppi.ppi_mean`) of the per-query changes: the
changes under people's labels where there are some, corrected by the judge's changes everywhere, so the
interval includes the judge's error.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._compare.special import t_cdf
from .._compare.stats import adjust_pvalues
from .._errors import ConfigError
from .._measures import parse_measure
from .._policies import Policies
from .baseline import Baseline, differences, labels_fingerprint, settings_fingerprint
from .stats import Test, detectable_drop, needed_queries, one_sided, power_at, simulated_power, skew_needs

__all__ = ["GateReport", "GateRow", "PowerPlan", "gate", "parse_max_drop", "power", "snapshot"]

#: the power at which the report says what a query set can tell
PLAN_POWER = 0.8
#: the drop a set must be able to catch (beyond none tolerated) when no drop is tolerated
DEFAULT_DETECT = 0.02
#: the gate's test (see :mod:`.stats`)
METHOD = "t-test corrected for skewness (Hall 1992), one-sided"
#: what a gated measure's verdict says: a significant drop beyond the tolerance; a change beyond the
#: tolerance that is not significant; no significant drop and a change within it; not tested
VERDICTS = ("drop", "inconclusive", "holds", "untested")


def _evaluated(
    verb: str, qrels: Any, run: Any, measures: Any, samples: Any, kw: dict[str, Any]
) -> tuple[Any, Any, Any]:
    """(qrels read, the run's RunResult, the Result) of one run or one sample set."""
    from .._engine import evaluate
    from .._io.model import Qrels
    from .._session import sample_sets

    pol = Policies.coerce(kw.get("policies"))
    if samples is not None:
        if qrels is not None or run is not None:
            raise ConfigError(f"{verb}: give either one sample set or QRELS and RUN, not both")
        from .._io.samples import union_qrels

        sets = sample_sets(samples, pol.duplicates)
        if len(sets) != 1:
            raise ConfigError(f"{verb} reads one run: give one sample set, not {len(sets)}")
        q = union_qrels(sets)
        result = evaluate(samples=sets[0], measures=measures, **kw)
    else:
        if qrels is None or run is None:
            raise ConfigError(f"{verb} needs QRELS and a RUN, or one sample set")
        if isinstance(run, (list, tuple)):
            raise ConfigError(f"{verb} reads one run, not {len(run)}")
        q = Qrels.coerce(qrels, duplicates=pol.duplicates, columns=pol.columns)
        result = evaluate(q, [run], measures, **kw)
    return q, result.runs[0], result


def _human_values(
    human: Any, run: Any, samples: Any, measures: list[str], kw: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """The fingerprint of people's labels and the run's per-query values under them (their queries only)."""
    from .._io.model import Qrels

    if samples is not None:
        raise ConfigError("human labels (human=...) go with QRELS and a RUN, not with a sample set")
    pol = Policies.coerce(kw.get("policies"))
    hq = Qrels.coerce(human, duplicates=pol.duplicates, columns=pol.columns)
    kw = dict(kw, policies=replace(pol, missing="ignore", overlap="any"))
    _, rr, _ = _evaluated("human labels", hq, run, measures, None, kw)
    mine = set(hq.query_ids)
    vals = {m: {q: v for q, v in rr.per_query(m).items() if q in mine} for m in measures}
    return labels_fingerprint(hq), vals


def snapshot(
    qrels: Any = None,
    run: Any = None,
    measures: Any = None,
    *,
    samples: Any = None,
    human: Any = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: Any = None,
    utility: Any = None,
    engine: Any = "local",
) -> Baseline:
    """A baseline of one run: its per-query values of ``measures`` (default: evaluate's), the settings
    that change the numbers (ranking, query-set and duplicate rules, grade map, pool, utility settings,
    relevance level; not file paths) and a fingerprint of the labels (``sha256`` of one sorted
    ``query<TAB>doc<TAB>grade`` line per judgment, their counts and label kind), so a gate can refuse a
    baseline made under other labels or settings. ``Baseline.write`` stores it as JSON
    (``format: ctxeval-baseline``). ``human``: people's labels on a subset of the queries when
    ``qrels`` are a judge's (kept for the gate's prediction-powered test).

    >>> b = snapshot({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}}, ["RR"])
    >>> b.queries, b.values["RR"].tolist(), b.labels["judgments"]
    (['q1', 'q2'], [1.0, 0.0], 2)
    """
    kw = {"policies": policies, "rag": rag, "utility": utility, "engine": engine}
    q, rr, result = _evaluated("snapshot", qrels, run, measures, samples, kw)
    names = [str(m) for m in result.measures]
    values = {str(m): np.asarray(rr.values[m], dtype=np.float64) for m in result.measures}
    base = Baseline(rr.name, names, list(rr.qids), values, settings_fingerprint(result.settings), labels_fingerprint(q))
    base.file = _stem_of(run) if samples is None else None
    if human is not None:
        fp, vals = _human_values(human, run, samples, names, kw)
        base.settings = dict(base.settings, human_labels=fp)
        base.human = vals
    return base


def parse_max_drop(value: Any, measures: list[str]) -> dict[str, float]:
    """``{measure: tolerated drop}`` from a mapping, ``"nDCG@10=0.02,AP=0.01"``, or one number for
    every measure; None: every measure of the baseline at 0. Measure names are read with the measure
    grammar (``ndcg_cut.10`` is nDCG@10) and must be among the baseline's."""
    if value is None:
        return dict.fromkeys(measures, 0.0)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return {m: _drop("max_drop", value) for m in measures}
    if isinstance(value, str):
        items: list[tuple[str, Any]] = []
        for part in value.split(","):
            name, eq, num = part.strip().rpartition("=")
            if not eq or not name:
                raise ConfigError(f"max drop {part.strip()!r}: expected MEASURE=DROP, e.g. nDCG@10=0.02")
            items.append((name.strip(), num.strip()))
    elif isinstance(value, Mapping):
        items = list(value.items())
    else:
        raise ConfigError(f"max_drop must be a number, a mapping or 'MEASURE=DROP,...', got {type(value).__name__}")
    out: dict[str, float] = {}
    for name, num in items:
        key = str(parse_measure(name)) if not isinstance(name, str) or name not in measures else name
        if key not in measures:
            raise ConfigError(f"max drop of {name}: the baseline holds {', '.join(measures)}, not {key}")
        try:
            out[key] = _drop(f"max drop of {name}", float(num))
        except ValueError:
            raise ConfigError(f"max drop of {name}: {num!r} is not a number") from None
    return out


def _drop(what: str, v: float) -> float:
    if not math.isfinite(v) or v < 0:
        raise ConfigError(f"{what} must be a number >= 0 (a drop in the measure's units), got {v!r}")
    return float(v)


@dataclass
class GateRow:
    """One gated measure: the change, its interval and test, the margin and what the set can tell."""

    measure: str
    higher_is_better: bool
    margin: float
    n: int  #: paired queries where both values are defined
    n_dropped: int  #: paired queries left out (a value undefined)
    baseline_mean: float
    candidate_mean: float
    change: float  #: candidate − baseline, in the measure's units
    low: float  #: the 1 − 2α interval of the change, in the measure's units
    high: float
    p_value: float
    p_adjusted: float
    verdict: str  #: "holds", "inconclusive", "drop" or "untested" (see :data:`VERDICTS`)
    detectable: float  #: the smallest drop caught 80 % of the time with these queries
    detect: float  #: the drop the set should be able to catch (2 × margin, or 0.02)
    needed: int | None  #: queries needed to catch ``detect`` 80 % of the time
    method: str = METHOD
    sd: float = math.nan  #: standard deviation of the per-query changes
    skew: float = math.nan  #: their sample skewness, in the measure's better direction
    why: str = ""  #: why the measure is untested

    @property
    def enough(self) -> bool:
        """Whether the set catches a drop of ``detect`` at least 80 % of the time."""
        return bool(self.needed is not None and self.n >= self.needed)

    def to_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)

        return {
            "measure": self.measure,
            "higher_is_better": self.higher_is_better,
            "margin": self.margin,
            "n": self.n,
            "n_dropped": self.n_dropped,
            "baseline_mean": num(self.baseline_mean),
            "candidate_mean": num(self.candidate_mean),
            "change": num(self.change),
            "interval": [num(self.low), num(self.high)],
            "p_value": num(self.p_value),
            "p_adjusted": num(self.p_adjusted),
            "verdict": self.verdict,
            "detectable_drop": num(self.detectable),
            "detect": self.detect,
            "queries_needed": self.needed,
            "enough_queries": self.enough,
            "method": self.method,
            "sd_changes": num(self.sd),
            "skewness": num(self.skew),
            **({"untested_because": self.why} if self.why else {}),
        }


@dataclass
class GateReport:
    """The outcome of :func:`gate`: one :class:`GateRow` per gated measure, with the settings."""

    baseline: str  #: the baseline run's name
    candidate: str
    rows: list[GateRow]
    alpha: float
    labels: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        """No gated measure dropped significantly beyond its tolerance, and each one was tested."""
        return self.exit_code == 0

    @property
    def exit_code(self) -> int:
        """0: every gated measure tested and none dropped significantly beyond its tolerance (some may
        be inconclusive); 1: at least one did; 2: none did, but a gated measure could not be tested."""
        verdicts = {r.verdict for r in self.rows}
        return 1 if "drop" in verdicts else (2 if "untested" in verdicts else 0)

    def measures_with(self, verdict: str) -> list[str]:
        """The gated measures with this verdict (one of :data:`VERDICTS`)."""
        return [r.measure for r in self.rows if r.verdict == verdict]

    def row(self, measure: str) -> GateRow:
        for r in self.rows:
            if r.measure == measure:
                return r
        raise KeyError(measure)

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "candidate": self.candidate,
            "holds": self.holds,
            "exit_code": self.exit_code,
            "alpha": self.alpha,
            "correction": "holm",
            "test": "one-sided t-test corrected for skewness (Hall 1992) of a drop beyond the tolerated drop "
            "(H0: change >= -margin)",
            "labels": self.labels,
            "measures": [r.to_dict() for r in self.rows],
            "notes": list(self.notes),
        }

    def __repr__(self) -> str:
        state = {0: "holds", 1: "DROP", 2: "UNTESTED"}[self.exit_code]
        return f"GateReport({state}, {self.candidate} vs {self.baseline}, {len(self.rows)} measures)"

    _COLUMNS = ("measure", "baseline", "candidate", "change", "low", "high", "margin", "p_adjusted", "verdict", "n")
    _FIELDS = (
        "measure",
        "baseline_mean",
        "candidate_mean",
        "change",
        "low",
        "high",
        "margin",
        "p_adjusted",
        "verdict",
        "n",
    )

    def _rows(self) -> list[list[Any]]:
        return [[getattr(r, f) for f in self._FIELDS] for r in self.rows]

    def _repr_html_(self) -> str:
        from .._show import html_table

        state = {0: "holds", 1: "a significant drop", 2: "a gated measure untested"}[self.exit_code]
        caption = f"gate: {self.candidate} against {self.baseline}: {state}"
        notes = html_table(["note"], [[n] for n in self.notes]) if self.notes else ""
        return html_table(self._COLUMNS, self._rows(), caption) + notes

    def to_pandas(self) -> Any:
        """One row per gated measure: ``measure, baseline, candidate`` (the means), ``change, low, high``
        (the change and its 1 − 2α interval), ``margin`` (the tolerated drop), ``p_adjusted`` (Holm),
        ``verdict`` (holds, inconclusive, drop or untested) and ``n`` (the paired queries)."""
        from .._show import pandas

        pd = pandas("GateReport.to_pandas")
        return pd.DataFrame(self._rows(), columns=list(self._COLUMNS))

    # renderings (ctxeval._render.gate)
    def to_table(self) -> str:
        from .render import to_table

        return to_table(self)

    def to_markdown(self) -> str:
        from .render import to_markdown

        return to_markdown(self)

    def to_junit(self) -> str:
        from .render import to_junit

        return to_junit(self)

    def to_annotations(self) -> str:
        from .render import to_annotations

        return to_annotations(self)

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"


def _judged_note(labels: Mapping[str, Any]) -> str | None:
    if labels.get("kind") != "judged":
        return None
    by = labels.get("labelled_by") or {}
    who = by.get("model") or by.get("judge") or "a judge"
    extra = " (a heuristic, not a model)" if by.get("heuristic") else ""
    return f"the labels are judged by {who}{extra}, not given by people"


def gate(
    baseline: Baseline | str | Any,
    qrels: Any = None,
    run: Any = None,
    *,
    samples: Any = None,
    max_drop: Any = None,
    alpha: float = 0.05,
    human: Any = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: Any = None,
    utility: Any = None,
    engine: Any = "local",
) -> GateReport:
    """Gate a candidate run against a stored baseline.

    Per gated measure, d_i is the change on query i (candidate − baseline, sign-flipped where lower is
    better) over the n queries both runs define, and δ its tolerated drop. The gate tests H0: E[d] ≥ −δ
    against H1: E[d] < −δ with the one-sided paired t-test corrected for skewness by Hall's (1992)
    transformation, T = √n (u + γu²/3 + γ²u³/27 + γ/(6n)), u = (mean(d) + δ) / sd(d), γ the sample
    skewness of d (γ = 0: Student's t), p = P(T_{n−1} ≤ T); it Holm-adjusts the p-values across the
    measures and fails (``exit_code`` 1) when one is below ``alpha``. A candidate no worse than the
    baseline then fails with probability about ``alpha``, not at most: no test of a mean holds its level
    for every distribution of changes at a fixed n. Measured on every pair of 10 real TREC DL19/DL20
    runs (``bench/gate_size.py``): 4.8–5.8 % by skew band at alpha 5 % with 43–54 queries (the plain
    t-test: 3.2–7.8 %), 4.9–5.1 % with 200; single pairs with heavy right tails up to 9 % at 54 queries,
    and the report warns where the changes are that right-skewed (n < 28 + 25γ²). Assumptions: the
    queries are a random sample, paired, under the same labels. Each row gives the change with its
    two-sided 1 − 2α interval (the measure fails when it lies wholly beyond δ), the margin, the p-values,
    the verdict (``holds``; ``inconclusive``: the change is beyond δ but not significantly; ``drop``;
    ``untested``: fewer than 2 paired queries, ``exit_code`` 2) and whether n queries catch a drop of
    twice the margin (0.02 when none is tolerated) 80 % of the time (Jennett & Welch's approximation of
    the noncentral t, at alpha / measures). The baseline's values of the gated measures must be finite
    numbers in the measure's range, one per query (else :class:`~ctxeval.FormatError`); queries whose
    value is undefined in either run are left out and named in the notes.
    With judged labels and ``human`` labels on a subset, the test uses the prediction-powered mean of
    the changes (Angelopoulos et al., Science 2023), so its interval includes the judge's error.

    ``baseline``: a :class:`Baseline` or its file. ``qrels`` and ``run`` (or ``samples``): the candidate,
    evaluated on the baseline's measures under ``policies``, ``rag`` and ``utility``, which must give the
    baseline's settings, as the qrels must give its labels, or :class:`~ctxeval.ConfigError` names what
    differs. Runs sharing a name (a tag such as ``rank``) are named by their files in the report;
    ``"NAME=FILE"`` names the candidate. ``max_drop``: the tolerated drop per measure (``{"nDCG@10": 0.02}``, ``"nDCG@10=0.02"`` or a
    number for all); only the measures it names are gated (every one of the baseline's at 0 when None).
    ``alpha``: the level of the one-sided tests, Holm-adjusted across the gated measures.

    >>> qrels = {f"q{i}": {"a": 1} for i in range(40)}
    >>> good = {f"q{i}": {"a": 2.0, "x": 1.0} for i in range(40)}
    >>> base = snapshot(qrels, good, ["RR"])
    >>> gate(base, qrels, good, max_drop={"RR": 0.02}).exit_code
    0
    >>> worse = {f"q{i}": {"x": 2.0, "a": 1.0} if i % 2 else {"a": 2.0} for i in range(40)}
    >>> rep = gate(base, qrels, worse, max_drop="RR=0.02")
    >>> rep.exit_code, rep.row("RR").change
    (1, -0.25)
    """
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0.0 < alpha < 0.5:
        raise ConfigError(f"alpha must be a number strictly between 0 and 0.5, got {alpha!r}")
    base = baseline if isinstance(baseline, Baseline) else Baseline.read(baseline)
    margins = parse_max_drop(max_drop, base.measures)
    for m in margins:
        base.check(m, parse_measure(m).spec.bounds)
    kw = {"policies": policies, "rag": rag, "utility": utility, "engine": engine}
    q, rr, result = _evaluated("gate", qrels, run, list(margins), samples, kw)
    labels = labels_fingerprint(q)
    settings = settings_fingerprint(result.settings)
    diffs = differences(base.labels, labels, "labels")
    stored = settings_fingerprint({k: v for k, v in base.settings.items() if k != "human_labels"})
    diffs += differences(stored, settings, "settings")
    human_vals = None
    if human is not None or "human_labels" in base.settings:
        if human is None or "human_labels" not in base.settings:
            side = (
                "the baseline has people's labels and the gate none"
                if human is None
                else "the gate has people's labels and the baseline none (give snapshot human=...)"
            )
            diffs.append(f"human labels: {side}")
        else:
            fp, human_vals = _human_values(human, run, samples, list(margins), kw)
            diffs += differences(base.settings["human_labels"], fp, "human_labels")
    if diffs:
        raise ConfigError(
            f"the baseline {base.source} was made under other labels or settings, so the gate cannot compare: "
            + "; ".join(diffs)
        )
    notes: list[str] = list(result.notes)
    note = _judged_note(labels)
    if note:
        notes.append(
            note
            + (
                "; the intervals include the judge's error (prediction-powered, people's labels on a subset)"
                if human_vals
                else "; the intervals cover the sampling of queries, not the judge's errors (give people's labels on a subset with --human for that)"
            )
        )
    cand = {m: rr.per_query(m) for m in margins}
    rows = [_row(m, margins[m], base, cand[m], alpha, len(margins), human_vals, base.human) for m in margins]
    only_base = len(set(base.queries) - set(rr.qids))
    only_cand = len(set(rr.qids) - set(base.queries))
    if only_base or only_cand:
        notes.append(
            f"{only_base} baseline queries have no candidate value and {only_cand} candidate queries no baseline "
            "value: the tests pair the queries both have"
        )
    notes += [n for m in margins for n in _left_out(m, base, cand[m])]
    notes += [n for r in rows for n in [_skew_note(r)] if n]
    p = np.array([r.p_value for r in rows])
    adj = adjust_pvalues(p, "holm") if p.size else p
    for r, pa in zip(rows, adj):
        r.p_adjusted = float(pa)
        r.verdict = _verdict(r, alpha)
    names, naming = _names(base, rr.name, run if samples is None else None)
    return GateReport(*names, rows, float(alpha), labels, naming + notes)


def _verdict(r: GateRow, alpha: float) -> str:
    """One of :data:`VERDICTS` from the adjusted p-value and the change (see :class:`GateRow`)."""
    if r.why or math.isnan(r.p_adjusted):
        r.why = r.why or f"{r.n} paired queries: a test needs 2"
        return "untested"
    if r.p_adjusted < alpha:
        return "drop"
    beyond = r.change < -r.margin if r.higher_is_better else r.change > r.margin
    return "inconclusive" if beyond else "holds"


def _left_out(m: str, base: Baseline, cand: dict[str, float]) -> list[str]:
    """A note naming the paired queries left out of ``m``'s test because a value is undefined."""
    b = base.per_query(m)
    both = [q for q in base.queries if q in cand]
    out = []
    for side, vals in (("the baseline", b), ("the candidate", cand)):
        gone = [q for q in both if math.isnan(vals[q])]
        if gone:
            shown = ", ".join(repr(q) for q in gone[:5]) + (", ..." if len(gone) > 5 else "")
            out.append(
                f"{m}: {len(gone)} of {len(both)} paired queries left out, {m} being undefined (null) there in "
                f"{side} ({shown})"
            )
    return out


def _skew_note(r: GateRow) -> str | None:
    """A warning when right-skewed changes make the false-alarm rate approximate (see :mod:`.stats`)."""
    if r.n < 2 or not r.skew > 0 or r.n >= skew_needs(r.skew):
        return None
    return (
        f"{r.measure}: the per-query changes are right-skewed (skewness {r.skew:.2f} toward the better side, over {r.n} "
        f"queries; the normal approximation of a mean wants {skew_needs(r.skew)}): the skew-corrected test's false-alarm "
        "rate is alpha only approximately here (on such real changes bench/gate_size.py measured up to about 1.8 x alpha)"
    )


def _names(base: Baseline, candidate: str, run: Any) -> tuple[tuple[str, str], list[str]]:
    """(baseline, candidate) names for the report: when both runs carry one name (a tag such as
    ``rank`` shared by every run of a system), each is named by its file instead, as compare does."""
    if candidate != base.run:
        return (base.run, candidate), []
    stem, theirs = _stem_of(run), base.file
    if stem and theirs:
        note = f"both runs carry the name {candidate!r} (their tag): named by their files instead ({theirs}, {stem})"
        return (theirs, stem), [note]
    return (f"{base.run} (baseline)", f"{candidate} (candidate)"), []


def _stem_of(run: Any) -> str | None:
    """The file stem of a run given as a path (None for ``NAME=FILE``, which names it, or a value)."""
    from .._io.model import split_named

    if not isinstance(run, (str, os.PathLike)):
        return None
    given, path = split_named(str(run))
    if given is not None or not os.path.isfile(path):
        return None
    name = os.path.basename(path)
    name = name[:-3] if name.lower().endswith(".gz") else name
    return os.path.splitext(name)[0] or name


def _row(
    m: str, margin: float, base: Baseline, cand: dict[str, float], alpha: float, k: int,
    human_cand: dict[str, dict[str, float]] | None, human_base: dict[str, dict[str, float]] | None,
) -> GateRow:  # fmt: skip
    measure = parse_measure(m)
    sign = 1.0 if measure.spec.higher_is_better else -1.0
    b = base.per_query(m)
    both = [q for q in base.queries if q in cand]
    xb = np.array([b[q] for q in both])
    xc = np.array([cand[q] for q in both])
    ok = ~np.isnan(xb) & ~np.isnan(xc)
    d = sign * (xc[ok] - xb[ok])
    if human_cand is not None and human_base is not None:
        test, method = _ppi_test(m, sign, margin, alpha, dict(zip(np.array(both)[ok], d)), human_base, human_cand)
    else:
        test, method = one_sided(d, margin, alpha), METHOD
    detect = 2.0 * margin if margin > 0 else DEFAULT_DETECT
    a = alpha / k  # Holm's first step: the plan errs on the side of more queries
    low, high = sorted((sign * test.low, sign * test.high))
    return GateRow(
        measure=m,
        higher_is_better=measure.spec.higher_is_better,
        margin=margin,
        n=test.n,
        n_dropped=int((~ok).sum()),
        baseline_mean=float(xb[ok].mean()) if ok.any() else math.nan,
        candidate_mean=float(xc[ok].mean()) if ok.any() else math.nan,
        change=sign * test.mean,
        low=low,
        high=high,
        p_value=test.p,
        p_adjusted=math.nan,
        verdict="untested",
        detectable=detectable_drop(test.n, test.sd, margin, a, PLAN_POWER),
        detect=detect,
        needed=needed_queries(test.sd, detect, margin, a, PLAN_POWER),
        method=method,
        sd=test.sd,
        skew=test.skew,
        why=""
        if test.n >= 2
        else f"{test.n} paired quer{'y' if test.n == 1 else 'ies'} with a value in both runs: a test needs 2",
    )


def _ppi_test(
    m: str, sign: float, margin: float, alpha: float, judge: dict[str, float],
    human_base: dict[str, dict[str, float]], human_cand: dict[str, dict[str, float]],
) -> tuple[Test, str]:  # fmt: skip
    """The one-sided test on the prediction-powered mean change (people's labels on a subset)."""
    from .._core.ppi import ppi_mean

    hb, hc = human_base.get(m, {}), human_cand.get(m, {})
    human = {q: sign * (hc[q] - hb[q]) for q in hb if q in hc and not math.isnan(hb[q]) and not math.isnan(hc[q])}
    est = ppi_mean(judge, human, alpha=2.0 * alpha)
    if not est.se > 0:
        p = 0.0 if est.mean < -margin else 1.0
        return Test(est.labelled + est.unlabelled, est.mean, 0.0, math.nan, p, est.low, est.high, math.nan), est.method
    t = (est.mean + margin) / est.se
    sd = est.se * math.sqrt(est.labelled + est.unlabelled)
    test = Test(est.labelled + est.unlabelled, est.mean, sd, t, t_cdf(t, est.df), est.low, est.high, math.nan)
    return test, est.method


@dataclass
class PowerPlan:
    """What :func:`power` found for one measure."""

    measure: str
    n: int
    sd: float  #: standard deviation of the per-query changes (observed, or assumed)
    sd_source: str
    margin: float
    drop: float
    alpha: float
    power: float
    needed: int | None  #: queries needed to catch ``drop`` with probability ``power``
    detectable: float  #: the smallest drop caught with probability ``power`` with n queries
    power_now: float  #: the probability of catching ``drop`` with n queries (formula)
    simulated_now: float  #: the same by the bootstrap check

    @property
    def never(self) -> str | None:
        """Why no number of queries catches ``drop`` (it is not beyond the tolerated drop), or None."""
        if self.drop > self.margin:
            return None
        at = "at" if self.drop == self.margin else "within"
        return (
            f"a drop of {self.drop:g} is {at} the tolerated drop ({self.margin:g}): the gate fails only on drops beyond "
            f"it, so it never flags this one, with any number of queries; ask how many queries catch a larger drop "
            f"(--drop {2 * self.margin:g}, twice the tolerance)"
        )

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, never_flagged=self.never)


def power(
    baseline: Baseline | str | Any,
    qrels: Any = None,
    run: Any = None,
    *,
    samples: Any = None,
    drop: float = 0.02,
    max_drop: Any = None,
    alpha: float = 0.05,
    power: float = 0.8,
    correlation: float = 0.7,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: Any = None,
    utility: Any = None,
) -> list[PowerPlan]:
    """Plan a gate: per measure, the queries needed to catch a true drop ``drop`` (beyond the tolerated
    ``max_drop``) with probability ``power`` at level ``alpha`` (divided by the number of measures, as
    Holm's first step), and the smallest drop the baseline's queries catch. The standard deviation of the
    per-query changes is observed between the baseline and a candidate ``run`` (with its ``qrels``, or
    one sample set as ``samples``); without one it is assumed from the baseline's own:
    sd·√(2(1 − correlation)).
    """
    base = baseline if isinstance(baseline, Baseline) else Baseline.read(baseline)
    margins = parse_max_drop(max_drop, base.measures)
    for name, v in (("alpha", alpha), ("power", power)):
        if not isinstance(v, (int, float)) or not 0.0 < v < 1.0:
            raise ConfigError(f"{name} must be a number strictly between 0 and 1, got {v!r}")
    if not -1.0 <= correlation < 1.0:
        raise ConfigError(f"correlation must be in [-1, 1), got {correlation!r}")
    cand = None
    if run is not None or samples is not None:
        kw = {"policies": policies, "rag": rag, "utility": utility}
        rep = gate(base, qrels, run, samples=samples, max_drop=margins, alpha=alpha, **kw)
        cand = rep.candidate
        _, rr, _ = _evaluated("power", qrels, run, list(margins), samples, kw)
    out = []
    a = alpha / len(margins)
    for m, margin in margins.items():
        sign = 1.0 if parse_measure(m).spec.higher_is_better else -1.0
        xb = base.values[m]
        if cand is not None:
            c = rr.per_query(m)
            xc = np.array([c.get(q, math.nan) for q in base.queries])
            ok = ~np.isnan(xb) & ~np.isnan(xc)
            d = sign * (xc[ok] - xb[ok])
            sd, src = float(d.std(ddof=1)) if d.size > 1 else math.nan, f"observed between {base.run} and {cand}"
        else:
            x = xb[~np.isnan(xb)]
            sd = float(x.std(ddof=1)) * math.sqrt(2.0 * (1.0 - correlation)) if x.size > 1 else math.nan
            src = f"assumed: the baseline's sd x sqrt(2(1 - {correlation:g})) (give a candidate run to observe it)"
            rng = np.random.default_rng(0)
            d = rng.permutation(x) - x  # a stand-in sample of changes with about that spread, for the check
            d = d * (sd / d.std(ddof=1)) if d.size > 1 and d.std(ddof=1) > 0 else d
        n = int(d.size)
        out.append(
            PowerPlan(
                m,
                n,
                sd,
                src,
                margin,
                float(drop),
                float(alpha),
                float(power),
                needed_queries(sd, drop, margin, a, power),
                detectable_drop(n, sd, margin, a, power),
                power_at(n, sd, drop, margin, a),
                simulated_power(d, n, drop, margin, a) if n > 1 else math.nan,
            )
        )
    return out
