"""``snapshot``, ``gate`` and ``power``: a regression gate for CI that fails on a real drop, not on noise.

* :func:`snapshot` evaluates one run (the baseline) and returns a :class:`~.baseline.Baseline` to write.
* :func:`gate` evaluates a candidate under the same labels and settings (or refuses, naming what
  differs), tests each gated measure with the one-sided test of :mod:`ctxeval._stats.onesided` at its
  tolerated drop, adjusts the p-values with Holm across the measures, and returns a frozen
  :class:`~.model.GateResult` (``exit_code``: 0 holds, 1 a significant drop, 2 untested; the public
  :class:`~ctxeval.GateReport` of :mod:`ctxeval._render.gate` adds its renderings).
* :func:`power` plans: how many queries a gate needs to catch a given drop, and the smallest drop the
  current set catches, from the observed variance of the per-query changes.

Judged labels. When the qrels are a judge's labels (``labelled_by`` a model), the report says so. Given
people's labels on a subset of the queries (``human=``, also given to ``snapshot``), the change and its
test use the prediction-powered mean (:func:`ctxeval._stats.ppi.ppi_mean`) of the per-query changes: the
changes under people's labels where there are some, corrected by the judge's changes everywhere, so the
interval includes the judge's error.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from .._engines.base import provider
from .._errors import ConfigError
from .._evaluate import evaluate
from .._io.model import Qrels, split_named
from .._io.samples import Samples, pair_by_question, union_qrels
from .._measures import parse_measure
from .._policies import Policies
from .._session import sample_sets
from .._stats.adjust import adjust_pvalues
from .._stats.onesided import Test, one_sided, skew_needs
from .._stats.power import detectable_drop, needed_queries, power_at, simulated_power
from .._stats.ppi import ppi_mean
from .._stats.special import t_cdf
from .baseline import Baseline, differences, labels_fingerprint, settings_fingerprint
from .model import METHOD, GateResult, GateRow, PowerPlan
from .settings import GateSettings, PowerSettings, parse_max_drop

__all__ = ["gate", "power", "snapshot"]


def _evaluated(
    verb: str, qrels: Any, run: Any, measures: Any, samples: Any, kw: dict[str, Any], base: Baseline | None = None
) -> tuple[Any, Any, Any, Any]:
    """(qrels read, the run's RunResult, the Result, the sample set or None) of one run or one sample
    set; a candidate sample set's samples named as the ``base``\'s (:func:`_as_baseline`)."""
    pol = Policies.coerce(kw.get("policies"))
    if samples is not None:
        if qrels is not None or run is not None:
            raise ConfigError(f"{verb}: give either one sample set or QRELS and RUN, not both")
        kw["engine"].refuse(pol, None, (), True)
        sets = sample_sets(samples, pol.duplicates)
        if len(sets) != 1:
            raise ConfigError(f"{verb} reads one run: give one sample set, not {len(sets)}")
        st, paired = _as_baseline(sets[0], base)
        result = evaluate(samples=st, measures=measures, **kw)
        result.notes[:0] = paired
        return union_qrels([st]), result.runs[0], result, st
    if qrels is None or run is None:
        raise ConfigError(f"{verb} needs QRELS and a RUN, or one sample set")
    if isinstance(run, (list, tuple)):
        raise ConfigError(f"{verb} reads one run, not {len(run)}")
    q = Qrels.coerce(qrels, duplicates=pol.duplicates, columns=pol.columns)
    result = evaluate(q, [run], measures, **kw)
    return q, result.runs[0], result, None


def _as_baseline(st: Samples, base: Baseline | None) -> tuple[Samples, list[str]]:
    """The candidate set ``st`` with its samples named as the baseline's: where the baseline's set had
    no query ids (named line-1 ... by position), by their questions, as sets read together are paired
    (:func:`~ctxeval._io.samples.pair_by_question`: a question missing from one side, asked twice, or a
    sample without one is refused, naming the rows); and the note that says so."""
    if base is None or (base.questions is None and not st.by_position):
        return st, []
    if base.questions is None:
        raise ConfigError(
            f"{st.source} names its samples by position (no query_id) and the baseline {base.source} its queries by "
            "query_id: a gate pairs the candidate's queries with the baseline's; give the candidate the same query_id"
        )
    lines = sorted(base.questions, key=lambda name: int(name.rsplit("-", 1)[1]))
    made = Samples.from_records([{"question": base.questions[n], "retrieved_ids": []} for n in lines], name=base.run)
    (_, paired), notes = pair_by_question([replace(made, source=f"the baseline {base.source}"), st])
    return paired, notes


def baseline_questions(st: Samples | None) -> dict[str, str] | None:
    """What a baseline keeps of a sample set named by position (no query_id): each sample's question,
    by which a gate pairs its candidate (None for any other set); a sample without one is refused."""
    if st is None or not st.by_position:
        return None
    lacking = [s.query_id for s in st.samples if not s.question]
    if lacking:
        rows = ", ".join(lacking[:3]) + (f" and {len(lacking) - 3} more" if len(lacking) > 3 else "")
        raise ConfigError(
            f"{st.source}: samples {rows} have no question, and the set no query_id: a gate pairs its candidate's "
            "samples with the baseline's by query_id, or by their questions; give every sample one of them"
        )
    return {s.query_id: s.question for s in st.samples if s.question}


def _human_values(
    human: Any, run: Any, samples: Any, measures: list[str], kw: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """The fingerprint of people's labels and the run's per-query values under them (their queries only)."""
    if samples is not None:
        raise ConfigError("human labels (human=...) go with QRELS and a RUN, not with a sample set")
    pol = Policies.coerce(kw.get("policies"))
    hq = Qrels.coerce(human, duplicates=pol.duplicates, columns=pol.columns)
    kw = dict(kw, policies=replace(pol, missing="ignore", overlap="any"))
    _, rr, _, _ = _evaluated("human labels", hq, run, measures, None, kw)
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
    kw = {"policies": policies, "rag": rag, "utility": utility, "engine": provider(engine)}
    q, rr, result, st = _evaluated("snapshot", qrels, run, measures, samples, kw)
    names = [str(m) for m in result.measures]
    values = {str(m): np.asarray(rr.values[m], dtype=np.float64) for m in result.measures}
    settings, human_vals = settings_fingerprint(result.settings), None
    if human is not None:
        fp, human_vals = _human_values(human, run, samples, names, kw)
        settings = dict(settings, human_labels=fp)
    file = _stem_of(run) if samples is None else None
    return Baseline(
        rr.name,
        names,
        list(rr.qids),
        values,
        settings,
        labels_fingerprint(q),
        human=human_vals,
        file=file,
        questions=baseline_questions(st),
    )


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
) -> GateResult:
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

    >>> import ctxeval
    >>> qrels = {f"q{i}": {"a": 1} for i in range(40)}
    >>> good = {f"q{i}": {"a": 2.0, "x": 1.0} for i in range(40)}
    >>> base = ctxeval.snapshot(qrels, good, ["RR"])
    >>> gate(base, qrels, good, max_drop={"RR": 0.02}).exit_code
    0
    >>> worse = {f"q{i}": {"x": 2.0, "a": 1.0} if i % 2 else {"a": 2.0} for i in range(40)}
    >>> rep = gate(base, qrels, worse, max_drop="RR=0.02")
    >>> rep.exit_code, rep.row("RR").change
    (1, -0.25)
    """
    base = baseline if isinstance(baseline, Baseline) else Baseline.read(baseline)
    settings = GateSettings.resolve(max_drop, alpha, base.measures)
    for m in settings.measures:
        base.check(m, parse_measure(m).spec.bounds)
    kw = {"policies": policies, "rag": rag, "utility": utility, "engine": provider(engine)}
    q, rr, result, _ = _evaluated("gate", qrels, run, list(settings.measures), samples, kw, base)
    labels = labels_fingerprint(q)
    human_vals = _same_inputs(base, labels, result.settings, human, (run, samples, settings.measures, kw))
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
    cand = {m: rr.per_query(m) for m in settings.measures}
    pair = (human_vals, base.human) if human_vals is not None and base.human is not None else None
    rows = [_row(m, settings, base, cand[m], pair) for m in settings.measures]
    only_base = len(set(base.queries) - set(rr.qids))
    only_cand = len(set(rr.qids) - set(base.queries))
    if only_base or only_cand:
        notes.append(
            f"{only_base} baseline queries have no candidate value and {only_cand} candidate queries no baseline "
            "value: the tests pair the queries both have"
        )
    notes += [n for m in settings.measures for n in _left_out(m, base, cand[m])]
    notes += [n for r in rows for n in [_skew_note(r)] if n]
    p = np.array([r.p_value for r in rows])
    adj = adjust_pvalues(p, "holm") if p.size else p
    rows = [_verdict(replace(r, p_adjusted=float(pa)), settings.alpha) for r, pa in zip(rows, adj)]
    names, naming = _names(base, rr.name, run if samples is None else None)
    return GateResult(*names, tuple(rows), settings.alpha, labels, (*naming, *notes))


def _same_inputs(
    base: Baseline, labels: dict[str, Any], now: Mapping[str, Any], human: Any, inputs: tuple[Any, Any, Any, Any]
) -> dict[str, dict[str, float]] | None:
    """Refuse a baseline made under other labels or settings (a :class:`ConfigError` naming each
    difference); the candidate's values under people's labels when both sides have them."""
    run, samples, measures, kw = inputs
    diffs = differences(base.labels, labels, "labels")
    stored = settings_fingerprint({k: v for k, v in base.settings.items() if k != "human_labels"})
    diffs += differences(stored, settings_fingerprint(now), "settings")
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
            fp, human_vals = _human_values(human, run, samples, list(measures), kw)
            diffs += differences(base.settings["human_labels"], fp, "human_labels")
    if diffs:
        raise ConfigError(
            f"the baseline {base.source} was made under other labels or settings, so the gate cannot compare: "
            + "; ".join(diffs)
        )
    return human_vals


def _verdict(r: GateRow, alpha: float) -> GateRow:
    """The row with its verdict (one of :data:`~.model.VERDICTS`) from its adjusted p-value and change."""
    if r.why or math.isnan(r.p_adjusted):
        return replace(r, verdict="untested", why=r.why or f"{r.n} paired queries: a test needs 2")
    if r.p_adjusted < alpha:
        return replace(r, verdict="drop")
    beyond = r.change < -r.margin if r.higher_is_better else r.change > r.margin
    return replace(r, verdict="inconclusive" if beyond else "holds")


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
    if not isinstance(run, (str, os.PathLike)):
        return None
    given, path = split_named(str(run))
    if given is not None or not os.path.isfile(path):
        return None
    name = os.path.basename(path)
    name = name[:-3] if name.lower().endswith(".gz") else name
    return os.path.splitext(name)[0] or name


def _row(
    m: str, settings: GateSettings, base: Baseline, cand: dict[str, float],
    human: tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]] | None,
) -> GateRow:  # fmt: skip
    """One measure's test, before Holm (``p_adjusted`` NaN, ``verdict`` untested); ``human``: the
    candidate's and the baseline's values under people's labels, for the prediction-powered test."""
    margin, alpha = settings.max_drop[m], settings.alpha
    measure = parse_measure(m)
    sign = 1.0 if measure.spec.higher_is_better else -1.0
    b = base.per_query(m)
    both = [q for q in base.queries if q in cand]
    xb = np.array([b[q] for q in both])
    xc = np.array([cand[q] for q in both])
    ok = ~np.isnan(xb) & ~np.isnan(xc)
    d = sign * (xc[ok] - xb[ok])
    if human is not None:
        test, method = _ppi_test(m, sign, margin, alpha, dict(zip(np.array(both)[ok], d)), human[1], human[0])
    else:  # summed in the order of the values, not of the query names (a sample set named by position lists
        # them in its file's order: the figures must not depend on it)
        test, method = one_sided(np.sort(d), margin, alpha), METHOD
    detect = settings.detect_for(margin)
    a = settings.plan_alpha  # Holm's first step: the plan errs on the side of more queries
    low, high = sorted((sign * test.low, sign * test.high))
    return GateRow(
        measure=m,
        higher_is_better=measure.spec.higher_is_better,
        margin=margin,
        n=test.n,
        n_dropped=int((~ok).sum()),
        baseline_mean=float(np.sort(xb[ok]).mean()) if ok.any() else math.nan,
        candidate_mean=float(np.sort(xc[ok]).mean()) if ok.any() else math.nan,
        change=sign * test.mean,
        low=low,
        high=high,
        p_value=test.p,
        p_adjusted=math.nan,
        verdict="untested",
        detectable=detectable_drop(test.n, test.sd, margin, a, settings.plan_power),
        detect=detect,
        needed=needed_queries(test.sd, detect, margin, a, settings.plan_power),
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


def power(
    baseline: Baseline | str | Any,
    qrels: Any = None,
    run: Any = None,
    *,
    samples: Any = None,
    drop: float = 0.02,
    max_drop: Any = None,
    alpha: float = 0.05,
    plan: PowerSettings | Mapping[str, Any] | None = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: Any = None,
    utility: Any = None,
    engine: Any = "local",
) -> list[PowerPlan]:
    """Plan a gate: per measure, the queries needed to catch a true drop ``drop`` (beyond the tolerated
    ``max_drop``) with probability ``plan.power`` (default 0.8) at level ``alpha`` (divided by the
    number of measures, as Holm's first step), and the smallest drop the baseline's queries catch. The
    standard deviation of the per-query changes is observed between the baseline and a candidate
    ``run`` (with its ``qrels``, or one sample set as ``samples``, evaluated on ``engine``); without one
    it is assumed from the baseline's own: sd·√(2(1 − ``plan.correlation``)) (default 0.7).
    """
    base = baseline if isinstance(baseline, Baseline) else Baseline.read(baseline)
    margins = parse_max_drop(max_drop, base.measures)  # alpha may reach 1 here: a plan, not a gate
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    assumed = PowerSettings.coerce(plan)
    power, correlation = assumed.power, assumed.correlation
    cand = None
    if run is not None or samples is not None:
        kw = {"policies": policies, "rag": rag, "utility": utility, "engine": provider(engine)}
        rep = gate(base, qrels, run, samples=samples, max_drop=margins, alpha=alpha, **kw)
        cand = rep.candidate
        _, rr, _, _ = _evaluated("power", qrels, run, list(margins), samples, kw, base)
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
