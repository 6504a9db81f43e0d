"""``compare``: did the change make the system better? Paired tests, confidence intervals, strata, curves.

Every run is evaluated with :func:`ctxeval.evaluate` (so every registered measure works, with the same
query-set policies), then compared with the baseline run (the first, unless named):

* **Pairing.** A comparison of a run with the baseline on a measure uses the queries both runs were
  evaluated on where both values are defined; queries where either value is NA (undefined, e.g.
  RA-nWG without relevant docs) are dropped pairwise and counted (``n_dropped``). Queries evaluated
  for only one of the two runs (possible with ``missing="ignore"``) are counted in the settings
  (``unpaired_queries``) and the text reports.
* **Means.** ``mean`` and ``baseline_mean`` are the measure's summary (mean; sum for count measures;
  geometric mean for ``gm_*``) over the paired queries, ``diff = mean − baseline_mean``. The runs'
  own ``aggregate`` is over all their queries, as ``evaluate`` reports it.
* **Tests** (two-sided, see :mod:`ctxeval._stats`) on the per-query differences, or for geometric-mean
  measures on the differences of log(max(x, 1e-5)): ``randomization`` (default; sign flips, p =
  (b + 1)/(B + 1)), ``t``, ``wilcoxon``, ``bootstrap`` (studentized paired bootstrap).
* **Confidence intervals** (default 95 %) of every run's summary and of every difference: bootstrap
  over the queries of the table, one set of resamples for every run and measure; each resample's
  summary is computed over the resampled queries where the value is defined (for a difference: where
  both runs' values are), as the summary itself is; ``percentile`` (default) or ``bca``.
* **Multiple comparisons.** p-values are adjusted across all (run, measure) comparisons of the report
  (Holm by default; each stratum is its own family); ``significant`` is ``p_adjusted < alpha``.
* **Win / tie / loss**: queries where the run is better / equal (|difference| ≤ 1e-12) / worse than the
  baseline; "better" is lower for measures where lower is better (``Harm``).
* **Strata** (:mod:`ctxeval._strata`): every measure per stratum, next to the overall figures;
  strata with fewer than ``min_stratum`` queries are flagged ``small``. A stratified report (strata
  given, or query texts) always holds the built-in strata by number of relevant docs (``num_rel``; after
  the requested strata unless named among them), and with query texts those by query length.
* **Curves**: metric@K (:mod:`ctxeval._curve`) for the families of the requested measures that take
  a cutoff, 11-point interpolated precision–recall, and for set-based evaluation (RAG measures
  requested or a pool given) PROC@k and %PROC@k per query.

The seed drives every random draw; the same inputs and seed give the same bytes of output, whatever
the number of threads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._context.grades import is_rag, relevance, scale_level
from .._context.settings import RagConfig
from .._context.utility import UtilityConfig
from .._curve import curve_family, curves_from_result, parse_ks, pr_from_result, pr_measures
from .._curve import curve_measures as _curve_measures
from .._diagnose import PCT_THRESHOLD, PROC_THRESHOLD, VERDICTS, classify
from .._distraction import distraction_table
from .._engines.base import Engine, provider
from .._errors import ConfigError, MeasureError
from .._evaluate import (
    DEFAULT_MEASURES,
    Result,
    default_measures,
    evaluate_runs,
    judged_notes,
    map_runs,
    reduce_runs,
    values_fn,
)
from .._io.model import Run
from .._json import num as _num
from .._measures import Measure, make
from .._names import naming_notes, once, unique_names
from .._policies import Policies
from .._session import Session, measure_list, open_session, resolve_inputs
from .blocks import TIE_TOL, block
from .model import Report, Stratum
from .progress import Progress
from .settings import TEST_NAMES, Sections, Stats, Strata
from .strata import BUILTIN, StratumSet, load_strata, num_rel_strata, query_length_strata, read_query_texts

__all__ = ["compare"]


def _strata_sources(strata: Any) -> list[Any]:
    if strata is None:
        return []
    if isinstance(strata, (str, os.PathLike)) or hasattr(strata, "items"):
        return [strata]
    return list(strata)


def _strata_notes(sets: list[StratumSet]) -> list[str]:
    """What the strata leave out: ids of a strata file that were not evaluated, evaluated queries in none
    of its strata, evaluated queries without a text (so in no query_length stratum)."""
    out = []
    for s in sets:
        if s.kind == "file" and (s.unknown or s.unassigned):
            where = f"strata file {s.source}" if not s.source.startswith("<") else f"strata {s.source}"
            parts = []
            if s.unknown:
                shown = ", ".join(s.unknown[:5]) + (", ..." if len(s.unknown) > 5 else "")
                parts.append(f"{len(s.unknown)} of its query ids were not evaluated ({shown})")
            if s.unassigned:
                parts.append(f"{s.unassigned} evaluated queries are in none of its strata")
            out.append(f"{where}: " + "; ".join(parts))
        if s.kind == "query_length" and (s.detail.get("queries_without_text") or s.detail.get("texts_not_evaluated")):
            parts = []
            if s.detail.get("queries_without_text"):
                parts.append(
                    f"{s.detail['queries_without_text']} evaluated queries have no text and are in no query_length stratum"
                )
            k = s.detail.get("texts_not_evaluated", 0)
            if k:
                shown = ", ".join(s.detail["texts_not_evaluated_examples"]) + (", ..." if k > 5 else "")
                parts.append(
                    f"{k} text{' is' if k == 1 else 's are'} of {'a query' if k == 1 else 'queries'} that {'was' if k == 1 else 'were'} not evaluated ({shown})"
                )
            out.append(f"query texts {s.source}: " + "; ".join(parts))
    return out


def _default_curve_ks(measures: list[Measure]) -> list[int]:
    cuts = [int(m.cutoff) for m in measures if m.cutoff is not None and m.spec.cutoff_kind == "int"]
    return list(range(1, min(100, max([20, *cuts])) + 1))


def _proc_k(measures: list[Measure]) -> int:
    for fam in ("PROC", "%PROC"):
        for m in measures:
            if m.family == fam:
                return int(m.cutoff)  # type: ignore[arg-type]
    for m in measures:
        if is_rag(m) and m.cutoff is not None:
            return int(m.cutoff)
    return 10


def _pr_rel(measures: list[Measure]) -> int:
    for m in measures:
        if any(p.name == "rel" for p in m.spec.params):
            return int(m["rel"])
    return 1


@dataclass(frozen=True)
class _Plan:
    """What a comparison evaluates besides the measures asked for, and at which relevance levels."""

    measures: list[Measure]  #: the measures asked for (the tables)
    ks: list[int]  #: cutoffs of the metric@K curves
    curves: dict[str, list[Measure]]  #: curve family -> its measures at ks
    curve_note: str
    pr_rel: int  #: relevance level of the precision-recall curve
    num_rel_level: int  #: relevance level of the num_rel strata
    on_scale: bool  #: levels are on the 1-5 scale (through the grade map)
    proc_k: int
    proc_ms: list[Measure]  #: PROC@k and %PROC@k when set-based evaluation is wanted
    rag_ms: bool  #: RAG measures asked for (PROC is then evaluated with them)
    distraction_k: int | None
    #: ties="expected": the precision-recall curve (IPrec, averaged over the orders of the ties, which
    #: may be too many) is evaluated apart, and left out with a note when it cannot be
    pr_apart: bool = False

    @property
    def all_measures(self) -> list[Measure]:
        extra = [m for ms in self.curves.values() for m in ms] + ([] if self.pr_apart else pr_measures(self.pr_rel))
        extra += self.proc_ms if self.rag_ms else []
        return list(self.measures) + [m for m in dict.fromkeys(extra) if m not in self.measures]


def _plan(session: Session, user: list[Measure], sec: Sections, num_rel_level: int | None) -> _Plan:
    """The curves, levels, PROC data and distraction k of a report (see :class:`Sections`)."""
    rag_ms = any(is_rag(m) for m in user)
    if sec.curves_k is None:
        ks = _default_curve_ks(user)
    elif isinstance(sec.curves_k, int) and sec.curves_k == 0:
        ks = []
    else:
        ks = parse_ks(sec.curves_k)
    curve_note = ""
    if sec.curve_measures is None:
        fams: list[str] = []
        for m in user:
            try:
                fams.append(curve_family(m))
            except MeasureError:
                continue
        if not fams and ks:
            fams = ["nDCG"]  # the curves are part of every report: the standard one when none asked for has a cutoff
            curve_note = "metric@K curves of nDCG: none of the measures asked for takes a cutoff @K"
    else:
        fams = [curve_family(f) for f in sec.curve_measures]
    gm = session.rag.grade_map
    on_scale = (
        (gm is not None and bool(gm.mapping))
        or rag_ms
        or sec.distraction_k is not None
        or any(m.spec.group == "distraction" for m in user)
    )
    implied = scale_level(session.grades, gm) if on_scale else 1
    rel = (implied if on_scale else _pr_rel(user)) if sec.pr_rel is None else int(sec.pr_rel)
    want_proc = rag_ms or session.has_pool
    pk = _proc_k(user) if sec.proc_k is None else int(sec.proc_k)
    dk = sec.distraction_k
    if dk is None:
        dk = next((int(m.cutoff) for m in user if m.spec.group == "distraction" and m.cutoff is not None), None)
    return _Plan(
        measures=list(user),
        ks=ks,
        curves=_curve_measures(fams, ks) if ks and fams else {},
        curve_note=curve_note,
        pr_rel=rel,
        num_rel_level=implied if num_rel_level is None else int(num_rel_level),
        on_scale=on_scale,
        proc_k=pk,
        proc_ms=[make("PROC", None, pk), make("%PROC", None, pk)] if want_proc else [],
        rag_ms=rag_ms,
        distraction_k=dk,
        pr_apart=session.policies.ties == "expected",
    )


def _apart(
    session: Session, runs: list[Any], names: list[str], measures: list[Measure], what: str, notes: list[str]
) -> Result | None:
    """``measures`` of every run, evaluated apart from the tables: None, with a note saying why, when
    they cannot be (the data they serve is then left out)."""
    try:
        parts = [evaluate_runs(session, [run.with_name(name)], measures) for run, name in zip(runs, names)]
    except ConfigError as exc:
        notes.append(f"{what} left out: {exc}")
        return None
    return Result(parts[0].measures, [p.runs[0] for p in parts], parts[0].settings)


def _evaluate_all(
    session: Session, run_objs: list[Any], plan: _Plan, tick: Any
) -> tuple[Result, Result | None, Result | None, list[str], list[str]]:
    """Every run's per-query values of the plan's measures (on the session's engine, each run named
    by the rule of every engine, made distinct), the PROC data, the precision-recall curve's data,
    the notes of all of them and what the naming did."""
    fn = values_fn(session, plan.all_measures)
    mapped = map_runs(session, run_objs, fn, tick)
    names = unique_names(mapped)
    parts = [reduce_runs(session, [m], fn, plan.all_measures, [n]) for m, n in zip(mapped, names)]
    result = Result(parts[0].measures, [p.runs[0] for p in parts], parts[0].settings)
    notes = list(dict.fromkeys(n for p in parts for n in p.notes))
    runs = [m.run for m in mapped]
    proc_result = result if (plan.proc_ms and plan.rag_ms) else None
    if plan.proc_ms and not plan.rag_ms:
        proc_result = _apart(session, runs, names, plan.proc_ms, "PROC / %PROC data", notes)
    pr_result: Result | None = result
    if plan.pr_apart:
        pr_result = _apart(session, runs, names, pr_measures(plan.pr_rel), "the precision-recall curve", notes)
    return result, proc_result, pr_result, notes, naming_notes(mapped, names)


def _cube(result: Result, measures: list[Measure]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The union of the runs' queries (sorted), values ``float64[R, N, M]`` (NaN = NA or not
    evaluated) and ``present[R, N]`` (the run was evaluated on the query)."""
    union = sorted({q for r in result.runs for q in r.qids})
    pos = {q: i for i, q in enumerate(union)}
    R, N, M = len(result.runs), len(union), len(measures)
    values = np.full((R, N, M), np.nan)
    present = np.zeros((R, N), dtype=bool)
    for i, r in enumerate(result.runs):
        idx = np.fromiter((pos[q] for q in r.qids), dtype=np.int64, count=len(r.qids))
        present[i, idx] = True
        for j, m in enumerate(measures):
            values[i, idx, j] = r.values[m]
    return union, values, present


def _strata_sets(st: Strata, session: Session, union: list[str], plan: _Plan) -> tuple[list[StratumSet], str | None]:
    """The stratum sets of the report (the built-in num_rel ones in every stratified report, the
    query_length ones with query texts) and where the texts came from."""
    sets: list[StratumSet] = []
    texts, texts_source = read_query_texts(st.queries)
    sources = _strata_sources(st.by)
    named = [s for s in sources if isinstance(s, str)]
    if (sources or texts) and "num_rel" not in named:
        sources.append("num_rel")  # built in: part of every stratified report
    if texts and "query_length" not in named:
        sources.append("query_length")
    gm = session.rag.grade_map
    for src in sources:
        if isinstance(src, str) and src in BUILTIN:
            if src == "num_rel":
                what = relevance(plan.num_rel_level, gm, plan.on_scale)
                sets.append(num_rel_strata(session.qrels.columns, union, plan.num_rel_level, what))
            elif not texts:
                raise ConfigError("the query_length strata need the query texts (query_texts=... / --queries FILE)")
            else:
                sets.append(query_length_strata(texts, union, texts_source))
        else:
            sets.append(load_strata(src, union))
    seen: dict[str, str] = {}
    for s in sets:
        for name in s.members:
            if name in seen:
                raise ConfigError(f"stratum {name!r} comes from both {seen[name]} and {s.source}; rename one")
            seen[name] = s.source
    return sets, texts_source


def _proc_data(proc_result: Result, plan: _Plan) -> dict[str, Any]:
    """Per query PROC@k and %PROC@k of every run, and the counts of diagnose's verdicts."""
    pm, pp = plan.proc_ms
    series = []
    for r in proc_result.runs:
        verdicts = classify(r.values[pm], r.values[pp], PROC_THRESHOLD, PCT_THRESHOLD)
        counts = np.bincount(verdicts, minlength=len(VERDICTS))
        per_query = {q: [_num(float(r.values[pm][i])), _num(float(r.values[pp][i]))] for i, q in enumerate(r.qids)}
        series.append({"run": r.name, "per_query": per_query, "verdicts": dict(zip(VERDICTS, counts.tolist()))})
    return {"k": plan.proc_k, "thresholds": {"PROC": PROC_THRESHOLD, "%PROC": PCT_THRESHOLD}, "series": series}


def _baselines(baseline: str | Sequence[str] | None, names: list[str], cfg: Stats) -> list[int]:
    """The positions of the baseline runs (default: the first run), each named once."""
    given = [baseline] if isinstance(baseline, str) else list(baseline or [])
    for b in given:
        if b not in names:
            raise ConfigError(f"baseline {b!r} is not one of the runs ({', '.join(names)})")
    if len(set(given)) != len(given):
        raise ConfigError(f"a baseline is named twice ({', '.join(given)})")
    if len(given) > 1 and cfg.pairs == "all":
        raise ConfigError("with every pair compared (pairs='all') name one baseline at most: it marks the main table")
    return [names.index(b) for b in given] or [0]


def _settings(cfg: Stats, result: Result, plan: _Plan, present: np.ndarray, bases: list[int]) -> dict[str, Any]:
    """The report's settings: the statistics, evaluate's settings, and the levels and cutoffs used."""
    what = "(pair of runs, measure)" if cfg.pairs == "all" else "(run, measure)"
    if len(bases) > 1:
        what = "(run, baseline, measure)"
    settings: dict[str, Any] = {
        "test": cfg.test,
        "test_description": TEST_NAMES[cfg.test],
        "alpha": cfg.alpha,
        "correction": cfg.correction,
        "correction_family": (
            f"every {what} comparison of the overall table with a p-value; each stratum is its own family"
        ),
        "permutations": cfg.permutations,
        "resamples": cfg.resamples,
        "seed": cfg.seed,
        "ci_method": cfg.ci,
        "confidence": cfg.confidence,
    }
    if cfg.pairs == "all":
        settings["pairs"] = "all"
    if len(bases) > 1:
        settings["baselines"] = [result.runs[b].name for b in bases]
    settings.update(result.settings)
    settings.setdefault("pool", None)
    settings["tie_tolerance"] = TIE_TOL
    settings["measure_info"] = {
        str(m): {"higher_is_better": m.spec.higher_is_better, "aggregate": m.spec.aggregate} for m in plan.measures
    }
    base = bases[0]
    settings["unpaired_queries"] = {
        r.name: int((present[i] ^ present[base]).sum()) for i, r in enumerate(result.runs) if i != base
    }
    return settings


def compare(
    qrels: Any = None,
    runs: Any = None,
    measures: Iterable[str | Measure] | str | Measure | None = None,
    *,
    samples: Any = None,
    baseline: str | Sequence[str] | None = None,
    stats: Stats | Mapping[str, Any] | None = None,
    strata: Strata | Any = None,
    sections: Sections | Mapping[str, Any] | None = None,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    engine: Engine | str | Mapping[str, Any] = "local",
) -> Report:
    """Compare runs with a baseline run: summaries with CIs, paired tests, strata, curves.

    ``runs``: paths, dicts, frames or :class:`Run` objects (as :func:`evaluate`); or ``samples`` instead
    of ``qrels`` and ``runs``: sample sets, each one run (as :func:`evaluate`), whose ``category`` fields
    stratify the report when ``strata`` is not given. ``baseline``: a run name (default: the first run),
    or several: every run is then compared with each of them (two baselines once, the later against the
    earlier), and the p-values of all those tests are adjusted as one family (``Stats.correction``:
    Holm or Benjamini-Hochberg over every test shown, never baseline by baseline); the main table's
    markers are against the first.
    ``stats`` (a :class:`~ctxeval.Stats`) sets the test, its level and correction, the bootstrap and
    the seed. ``strata`` (a :class:`~ctxeval.Strata`, or its ``by`` sources directly: a ``qid
    category`` file, a mapping ``qid -> category | [categories]``, the built-in ``"num_rel"`` /
    ``"query_length"``, or a list of these) stratifies the report; ``Strata(queries=...)`` (a
    ``qid<TAB>text`` or JSONL file, or a mapping) adds the ``query_length`` strata. Every stratified
    report holds the ``num_rel`` strata (0, 1, 2–5, > 5 docs with grade ≥ ``num_rel_level``), named or
    not. ``num_rel_level`` and ``Sections.pr_rel`` (the relevance level of the precision–recall curve)
    default to the level of the grade scale in force (the README's "Grade scales"):
    with a grade map, or with RAG or distraction measures (which read the 1–5 scale), the smallest
    qrels grade that is grade >= 3 on the 1–5 scale (grade 1 is a distractor, 2 useless); otherwise the
    ``rel`` of the first measure having one, else 1 (trec_eval's default). The settings say which
    scale each level is on. ``sections`` (a :class:`~ctxeval.Sections`) sets the curves, the PROC
    data and the distraction table (of :func:`ctxeval.distraction_table`; ``utility`` serves it and
    the distraction-aware measures). ``policies`` and ``rag`` are as for :func:`evaluate`; ``measures=None``: as for :func:`evaluate` (sample sets get the
    measures that fit their references).
    ``engine`` (``"local"``, ``"stream"``, ``"spark"``, a mapping or an :class:`~ctxeval.Engine`, as for
    :func:`ctxeval.evaluate`) computes each run's per-query values; the statistics then run on them, as
    always, so every engine gives the same report.

    >>> from ctxeval import Stats
    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> base = {"q1": {"x": 2, "a": 1}, "q2": {"x": 2, "b": 1}, "q3": {"c": 1}}
    >>> new = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> rep = compare(qrels, [base, new], ["RR"], stats=Stats(resamples=200, permutations=200), sections={"curves_k": 0})
    >>> c = rep.comparisons[0]
    >>> round(c.mean, 3), round(c.baseline_mean, 3), (c.wins, c.ties, c.losses)
    (1.0, 0.667, (2, 1, 0))
    """
    cfg, st, sec, eng = Stats.coerce(stats), Strata.coerce(strata), Sections.coerce(sections), provider(engine)
    qrels, runs, sample_notes, sample_sets = resolve_inputs("compare", qrels, runs, samples, policies, eng)
    if measures is None:  # sample sets: the measures that fit their references (evaluate's defaults)
        measures = list(DEFAULT_MEASURES)
        if sample_sets:
            measures, why = default_measures(qrels, runs, rag)
            sample_notes = [*sample_notes, why]
    user = measure_list(measures)
    if st.by is None and sample_sets:  # the samples' own categories stratify the report
        cats = {q: c for s in sample_sets for q, c in s.categories().items()}
        st = replace(st, by=cats or None)
    session, run_objs = open_session(
        qrels, runs, user, policies=policies, rag=rag, utility=utility, samples=sample_sets, engine=eng
    )
    if not run_objs:
        raise ConfigError("compare needs at least one run")
    user = session.measures
    if all(isinstance(r, Run) for r in run_objs):  # named before they are evaluated: a wrong baseline fails now
        _baselines(baseline, unique_names(run_objs), cfg)
    plan = _plan(session, user, sec, st.num_rel_level)

    notes: list[str] = [plan.curve_note] if plan.curve_note else []
    notes += sample_notes
    if len(run_objs) == 1:
        notes.append("only one run: nothing to compare with the baseline (give two or more runs for paired tests)")
    with Progress() as bar:
        result, proc_result, pr_result, eval_notes, naming = _evaluate_all(
            session, run_objs, plan, bar.task("evaluating runs", len(run_objs))
        )
        names = [r.name for r in result.runs]
        bases = _baselines(baseline, names, cfg)
        base = bases[0]
        at = int(bool(plan.curve_note)) + len(sample_notes)
        notes[at:at] = naming
        notes += [n for n in eval_notes if n not in notes]
        notes += judged_notes(session, result.runs, user)  # the measures asked for, not the curves' depths
        union, values, present = _cube(result, user)
        sets, texts_source = _strata_sets(st, session, union, plan)
        notes.extend(_strata_notes(sets))
        tick = bar.task("statistics", 2.0 * (1 + sum(len(s.members) for s in sets)))
        overall = block(values, present, np.arange(len(union)), names, user, bases, cfg, tick)
        strata_out: dict[str, Stratum] | None = {} if sets else None
        pos = {q: i for i, q in enumerate(union)}
        for s in sets:
            for name, qids in s.members.items():
                rows = np.array(sorted(pos[q] for q in set(qids) if q in pos), dtype=np.int64)
                blk = block(values, present, rows, names, user, bases, cfg, tick)
                strata_out[name] = Stratum(name, s.kind, rows.size < st.min_size, blk)  # type: ignore[index]

    for i, r in enumerate(result.runs):
        only = int((present[i] ^ present[base]).sum()) if i != base else 0
        if only:
            notes.append(
                f"{r.name}: {only} queries evaluated for only one of {r.name} and the baseline {names[base]} (not paired, left out of its comparisons)"
            )
    settings = _settings(cfg, result, plan, present, bases)
    gm = session.rag.grade_map
    if sets:
        settings["strata"] = [s.describe() for s in sets]
        settings["min_stratum"] = st.min_size
    if texts_source:
        settings["queries"] = texts_source
    settings["curves_k"] = plan.ks
    settings["curve_measures"] = list(plan.curves)
    settings["pr_rel"] = plan.pr_rel
    settings["pr_relevance"] = relevance(plan.pr_rel, gm, plan.on_scale)
    if sets:
        settings["num_rel_level"] = plan.num_rel_level
        settings["num_rel_relevance"] = relevance(plan.num_rel_level, gm, plan.on_scale)
    settings["proc_k"] = plan.proc_k if proc_result is not None else None

    curves_out = curves_from_result(result, plan.curves, plan.ks) if plan.ks and plan.curves else None
    pr_out = pr_from_result(pr_result, plan.pr_rel) if pr_result is not None else None
    proc_out = _proc_data(proc_result, plan) if proc_result is not None else None
    notes = once([*notes, *session.notes], names)
    report = Report(names[base], user, result, overall, strata_out, curves_out, pr_out, proc_out, settings, notes)
    if plan.distraction_k is not None:
        report.distraction = distraction_table(
            session.qrels,
            [r.with_name(n) for r, n in zip(run_objs, names)],
            plan.distraction_k,
            utility=session.utility,
            policies=session.policies,
            rag=RagConfig(grade_map=session.rag.grade_map),
            engine=session.engine,
        )
    return report
