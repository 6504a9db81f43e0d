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

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _stats
from ._curve import curve_family, curves_from_result, parse_ks, pr_from_result, pr_measures
from ._curve import curve_measures as _curve_measures
from ._data import Qrels, Run
from ._errors import ConfigError, CtxevalError, MeasureError
from ._evaluate import DEFAULT_MEASURES, Result, _measure_list, _unique_names, aggregate, evaluate
from ._measures import Measure
from ._measures._base import make
from ._pool import is_rag
from ._strata import BUILTIN, StratumSet, load_query_texts, load_strata, num_rel_strata, query_length_strata

__all__ = ["compare", "Report", "Comparison"]

TIE_TOL = 1e-12
GM_FLOOR = 1e-5
TEST_NAMES = {
    "randomization": "paired randomization test (random sign flips), two-sided, p = (b + 1) / (B + 1)",
    "t": "paired t-test, two-sided",
    "wilcoxon": "Wilcoxon signed-rank test, two-sided (scipy's defaults: zeros dropped, exact for n <= 50 without ties or zeros, every sign flip for n <= 13 with them, normal approximation with tie correction otherwise)",
    "bootstrap": "paired studentized bootstrap test, two-sided, p = (b + 1) / (B + 1)",
}
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "no correction"}


def _num(x: float) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def _pair(ci: tuple[float, float] | None) -> list[float | None] | None:
    if ci is None or math.isnan(ci[0]) or math.isnan(ci[1]):
        return None
    return [float(ci[0]), float(ci[1])]


@dataclass
class Comparison:
    """One run against the baseline on one measure."""

    run: str
    measure: Measure
    mean: float
    baseline_mean: float
    diff: float
    ci: tuple[float, float] | None
    p_value: float
    p_adjusted: float
    significant: bool
    wins: int
    ties: int
    losses: int
    n_queries: int
    n_dropped: int

    @property
    def better(self) -> bool | None:
        """Significantly better (True), significantly worse (False), or not significant (None)."""
        if not self.significant or math.isnan(self.diff) or self.diff == 0:
            return None
        return (self.diff > 0) == self.measure.spec.higher_is_better

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "measure": str(self.measure),
            "mean": _num(self.mean),
            "baseline_mean": _num(self.baseline_mean),
            "diff": _num(self.diff),
            "ci": _pair(self.ci),
            "p_value": _num(self.p_value),
            "p_adjusted": _num(self.p_adjusted),
            "significant": bool(self.significant),
            "wins": int(self.wins),
            "ties": int(self.ties),
            "losses": int(self.losses),
            "n_queries": int(self.n_queries),
            "n_dropped": int(self.n_dropped),
        }


@dataclass
class RunSummary:
    """A run's summary over a set of queries (all of them, or one stratum)."""

    name: str
    aggregate: dict[Measure, float]
    valid: dict[Measure, int]
    ci: dict[Measure, tuple[float, float] | None]


@dataclass
class Block:
    """The figures of one table: every run's summaries and every comparison with the baseline."""

    n_queries: int
    runs: list[RunSummary]
    comparisons: list[Comparison]

    def comparison(self, run: str, measure: Measure) -> Comparison | None:
        for c in self.comparisons:
            if c.run == run and c.measure == measure:
                return c
        return None


@dataclass
class Stratum:
    name: str
    source: str  #: "file" | "num_rel" | "query_length"
    small: bool
    block: Block


# --------------------------------------------------------------------------------------------------
# the statistics of one block
# --------------------------------------------------------------------------------------------------


def _forward(m: Measure, x: np.ndarray) -> np.ndarray:
    """Values on the scale the summary averages: log(max(x, 1e-5)) for geometric means."""
    if m.spec.aggregate == "gmean":
        return np.log(np.maximum(x, GM_FLOOR))
    return x


def _resampled(m: Measure, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The summary of each resample from its sums and counts of (forward-transformed) defined values."""
    how = m.spec.aggregate
    if how == "sum":
        return sums
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
    return np.exp(mean) if how == "gmean" else mean


def _jackknife(m: Measure, col: np.ndarray) -> np.ndarray:
    """Leave-one-query-out summaries of a column of forward-transformed values (NaN = not defined)."""
    how = m.spec.aggregate
    if how == "sum":
        return _stats.jackknife_sums(col)
    jack = _stats.jackknife_means(col)
    return np.exp(jack) if how == "gmean" else jack


@dataclass
class _Config:
    test: str
    alpha: float
    correction: str
    permutations: int
    resamples: int
    seed: int
    ci: str
    confidence: float


class _Columns:
    """Columns of transformed per-query values for one bootstrap call, deduplicated by (run, measure,
    rows used)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.cols: list[np.ndarray] = []
        self.index: dict[tuple[Any, ...], int] = {}

    def add(self, key: tuple[Any, ...], mask: np.ndarray, values: np.ndarray) -> int:
        k = key + (mask.tobytes(),)
        if k not in self.index:
            col = np.full(self.n, np.nan)
            col[mask] = values[mask]
            self.index[k] = len(self.cols)
            self.cols.append(col)
        return self.index[k]

    def matrix(self) -> np.ndarray:
        return np.column_stack(self.cols) if self.cols else np.zeros((self.n, 0))


def _interval(cfg: _Config, boot: np.ndarray, estimate: float, jack: np.ndarray) -> tuple[float, float] | None:
    if boot.size == 0 or np.isnan(boot).all() or math.isnan(estimate):
        return None
    if cfg.ci == "bca":
        lo, hi = _stats.bca_interval(boot, estimate, jack, cfg.confidence)
    else:
        lo, hi = _stats.percentile_interval(boot, cfg.confidence)
    return float(lo), float(hi)


def _block(
    values: np.ndarray,
    present: np.ndarray,
    rows: np.ndarray,
    names: list[str],
    measures: list[Measure],
    base: int,
    cfg: _Config,
    tick: Any,
) -> Block:
    """Summaries, CIs, tests and corrections over the queries ``rows`` of the union query index."""
    R = len(names)
    n = rows.size
    V = values[:, rows, :]  # (R, n, M)
    P = present[:, rows]  # (R, n)
    cols = _Columns(n)
    run_cols: dict[tuple[int, int], int] = {}
    for r in range(R):
        for j, m in enumerate(measures):
            x = V[r, :, j]
            mask = P[r] & ~np.isnan(x)
            run_cols[(r, j)] = cols.add((r, j), mask, _forward(m, x))
    pairs: list[tuple[int, int, np.ndarray, int, int, int, int, int]] = []
    for r in range(R):
        if r == base:
            continue
        for j, m in enumerate(measures):
            xr, xb = V[r, :, j], V[base, :, j]
            both = P[r] & P[base]
            mask = both & ~np.isnan(xr) & ~np.isnan(xb)
            dropped = int((both & ~mask).sum())
            ir = cols.add((r, j), mask, _forward(m, xr))
            ib = cols.add((base, j), mask, _forward(m, xb))
            i_d = i_d2 = -1
            if cfg.test == "bootstrap":
                d = _forward(m, xr) - _forward(m, xb)
                i_d = cols.add(("d", r, j), mask, d)
                i_d2 = cols.add(("d2", r, j), mask, d * d)
            pairs.append((r, j, mask, dropped, ir, ib, i_d, i_d2))
    X = cols.matrix()
    sums, counts = _stats.resample_sums(X, resamples=cfg.resamples, seed=cfg.seed, progress=tick)

    summaries = []
    for r in range(R):
        agg: dict[Measure, float] = {}
        valid: dict[Measure, int] = {}
        ci: dict[Measure, tuple[float, float] | None] = {}
        for j, m in enumerate(measures):
            x = V[r, :, j][P[r]]
            mean, k = aggregate(m, x)
            agg[m], valid[m] = mean, k
            c = run_cols[(r, j)]
            if k == 0:
                ci[m] = None
                continue
            b = _resampled(m, sums[:, c], counts[:, c])
            ci[m] = _interval(cfg, b, mean, _jackknife(m, X[:, c]))
        summaries.append(RunSummary(names[r], agg, valid, ci))

    # tests
    D = np.full((n, len(pairs)), np.nan)
    for i, (r, j, mask, *_rest) in enumerate(pairs):
        m = measures[j]
        D[mask, i] = (_forward(m, V[r, :, j]) - _forward(m, V[base, :, j]))[mask]
    if not pairs:
        p = np.zeros(0)
    elif cfg.test == "randomization":
        p = np.atleast_1d(_stats.randomization_test(D, permutations=cfg.permutations, seed=cfg.seed, progress=tick))
    elif cfg.test == "t":
        p = np.atleast_1d(_stats.t_test(D)[1])
    elif cfg.test == "wilcoxon":
        p = np.atleast_1d(_stats.wilcoxon_test(D)[1])
    else:
        p = np.full(len(pairs), np.nan)
        for i, pr in enumerate(pairs):
            mask = pr[2]
            if mask.any():
                p[i] = _stats.studentized_p(sums[:, pr[6]], sums[:, pr[7]], counts[:, pr[6]], D[mask, i])
    if cfg.test in ("t", "wilcoxon") and tick:
        tick(1.0)
    p_adj = _stats.adjust_pvalues(p, cfg.correction) if p.size else p

    comparisons = []
    for i, pr in enumerate(pairs):
        r, j, mask, dropped, ir, ib = pr[:6]
        m = measures[j]
        k = int(mask.sum())
        xr, xb = V[r, :, j][mask], V[base, :, j][mask]
        mean_r, _ = aggregate(m, xr)
        mean_b, _ = aggregate(m, xb)
        diff = mean_r - mean_b if k else math.nan
        ci_d = None
        if k:
            b = _resampled(m, sums[:, ir], counts[:, ir]) - _resampled(m, sums[:, ib], counts[:, ib])
            jack = _jackknife(m, X[:, ir]) - _jackknife(m, X[:, ib])
            ci_d = _interval(cfg, b, diff, jack)
        raw = xr - xb
        up, down = int((raw > TIE_TOL).sum()), int((raw < -TIE_TOL).sum())
        wins, losses = (up, down) if m.spec.higher_is_better else (down, up)
        pa = float(p_adj[i])
        comparisons.append(
            Comparison(
                names[r], m, mean_r, mean_b, diff, ci_d, float(p[i]), pa, bool(not math.isnan(pa) and pa < cfg.alpha),
                wins, k - wins - losses, losses, k, dropped,
            )
        )
    return Block(n, summaries, comparisons)


# --------------------------------------------------------------------------------------------------
# progress
# --------------------------------------------------------------------------------------------------


class _Progress:
    """A rich progress display on stderr, or nothing."""

    def __init__(self, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(), console=Console(stderr=True), transient=True)

    def __enter__(self) -> _Progress:
        if self.bar is not None:
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)

    def task(self, description: str, total: float) -> Any:
        if self.bar is None:
            return None
        tid = self.bar.add_task(description, total=total)
        bar = self.bar

        def advance(step: float = 1.0) -> None:
            bar.advance(tid, step)

        return advance


# --------------------------------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------------------------------


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
                parts.append(f"{s.detail['queries_without_text']} evaluated queries have no text and are in no query_length stratum")
            k = s.detail.get("texts_not_evaluated", 0)
            if k:
                shown = ", ".join(s.detail["texts_not_evaluated_examples"]) + (", ..." if k > 5 else "")
                parts.append(f"{k} text{' is' if k == 1 else 's are'} of {'a query' if k == 1 else 'queries'} that {'was' if k == 1 else 'were'} not evaluated ({shown})")
            out.append(f"query texts {s.source}: " + "; ".join(parts))
    return out


def _check(cfg: _Config) -> None:
    if cfg.test not in _stats.TESTS:
        raise ConfigError(f"test must be one of {', '.join(_stats.TESTS)}, got {cfg.test!r}")
    if cfg.correction not in _stats.CORRECTIONS:
        raise ConfigError(f"correction must be one of {', '.join(_stats.CORRECTIONS)}, got {cfg.correction!r}")
    if cfg.ci not in _stats.CI_METHODS:
        raise ConfigError(f"ci must be one of {', '.join(_stats.CI_METHODS)}, got {cfg.ci!r}")
    for name in ("alpha", "confidence"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 < float(v) < 1.0:
            raise ConfigError(f"{name} must be a number strictly between 0 and 1, got {v!r}")
    for name in ("permutations", "resamples"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ConfigError(f"{name} must be a whole number >= 1, got {v!r}")
    if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, int) or cfg.seed < 0:
        raise ConfigError(f"seed must be a whole number >= 0, got {cfg.seed!r}")


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


def compare(
    qrels: Any,
    runs: Any,
    measures: Iterable[str | Measure] | str | Measure = DEFAULT_MEASURES,
    *,
    baseline: str | None = None,
    test: str = "randomization",
    alpha: float = 0.05,
    correction: str = "holm",
    permutations: int = 10000,
    resamples: int = 10000,
    seed: int = 0,
    ci: str = "percentile",
    confidence: float = 0.95,
    strata: Any = None,
    query_texts: Any = None,
    num_rel_level: int = 1,
    min_stratum: int = 10,
    curves_k: str | int | Iterable[int] | None = None,
    curve_measures: Sequence[str | Measure] | None = None,
    pr_rel: int | None = None,
    proc_k: int | None = None,
    missing: str = "zero",
    ties: str = "trec",
    duplicates: str = "error",
    grade_map: Any = None,
    pool: Any = None,
    pool_depth: int | None = None,
    allow_outside_pool: bool = False,
    groups: Any = None,
    utility_map: Any = None,
    distractors: Any = None,
    utilities: Any = None,
    distractor_rules: Any = "default",
    tau: float | None = None,
    top_rank: int | None = None,
    penalty: float | None = None,
    llm_threshold: float | None = None,
    distraction_k: int | None = None,
    progress: bool = False,
) -> Report:
    """Compare runs with a baseline run: summaries with CIs, paired tests, strata, curves.

    ``runs``: paths, dicts, frames or :class:`Run` objects (as :func:`evaluate`); ``baseline``: a run
    name (default: the first run). ``strata``: a ``qid category`` file, a mapping ``qid -> category
    | [categories]``, the built-in ``"num_rel"`` / ``"query_length"``, or a list of these;
    ``query_texts`` (a ``qid<TAB>text`` or JSONL file, or a mapping) adds the ``query_length`` strata.
    Every stratified report holds the ``num_rel`` strata (0, 1, 2–5, > 5 docs with grade ≥
    ``num_rel_level``), named or not.
    ``curves_k``: cutoffs of the metric@K curves (default 1..max(20, largest cutoff asked), at most
    100; 0 for none); ``curve_measures``: their families (default: those of ``measures`` that take a
    cutoff; nDCG when none of them does). ``pr_rel``: relevance level of the precision–recall curve (default: the ``rel`` of the
    first measure having one, else 1). ``proc_k``: the k of the PROC / %PROC data (default: the
    cutoff of the first PROC, %PROC or other RAG measure, else 10). ``distraction_k``: add the
    distraction table of :func:`ctxeval.distraction_table` at this k (default: the cutoff of the first
    distraction-aware measure asked for, else none); the utility options (``utility_map``,
    ``distractors``, ``utilities``, ``distractor_rules``, ``tau``, ``top_rank``, ``penalty``,
    ``llm_threshold``) serve it
    and the distraction-aware measures. Other options as :func:`evaluate`.

    >>> qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> base = {"q1": {"x": 2, "a": 1}, "q2": {"x": 2, "b": 1}, "q3": {"c": 1}}
    >>> new = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}}
    >>> rep = compare(qrels, [base, new], ["RR"], resamples=200, permutations=200, curves_k=0)
    >>> c = rep.comparisons[0]
    >>> round(c.mean, 3), round(c.baseline_mean, 3), (c.wins, c.ties, c.losses)
    (1.0, 0.667, (2, 1, 0))
    """
    cfg = _Config(test, alpha, correction, permutations, resamples, seed, ci, confidence)
    _check(cfg)
    if isinstance(min_stratum, bool) or not isinstance(min_stratum, int) or min_stratum < 0:
        raise ConfigError(f"min_stratum must be a whole number >= 0, got {min_stratum!r}")
    qr = Qrels.coerce(qrels, duplicates=duplicates)
    run_list = list(runs) if isinstance(runs, (list, tuple)) else [runs]
    if not run_list:
        raise ConfigError("compare needs at least one run")
    run_objs = [Run.coerce(r, duplicates=duplicates) for r in run_list]
    names = _unique_names(run_objs)
    run_objs = [r if r.name == n else r.with_name(n) for r, n in zip(run_objs, names)]
    if baseline is None:
        base = 0
    elif baseline in names:
        base = names.index(baseline)
    else:
        raise ConfigError(f"baseline {baseline!r} is not one of the runs ({', '.join(names)})")
    user = _measure_list(measures)
    pool_run = Run.coerce(pool, duplicates=duplicates) if pool is not None else None
    rag = any(is_rag(m) for m in user)

    # extra measures: curves, precision-recall, PROC
    if curves_k is None:
        ks = _default_curve_ks(user)
    elif isinstance(curves_k, int) and not isinstance(curves_k, bool) and curves_k == 0:
        ks = []
    else:
        ks = parse_ks(curves_k)
    curve_note = ""
    if curve_measures is None:
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
        fams = [curve_family(f) for f in curve_measures]
    curves = _curve_measures(fams, ks) if ks and fams else {}
    rel = _pr_rel(user) if pr_rel is None else int(pr_rel)
    prs = pr_measures(rel)
    want_proc = rag or pool_run is not None
    pk = _proc_k(user) if proc_k is None else int(proc_k)
    proc_ms = [make("PROC", None, pk), make("%PROC", None, pk)] if want_proc else []
    extra = [m for ms in curves.values() for m in ms] + prs + (proc_ms if rag else [])
    all_ms = list(user) + [m for m in dict.fromkeys(extra) if m not in user]
    utility_opts = dict(
        utility_map=utility_map, distractors=distractors, utilities=utilities, distractor_rules=distractor_rules, tau=tau, top_rank=top_rank, penalty=penalty,
        llm_threshold=llm_threshold,
    )
    options = dict(
        ties=ties, missing=missing, duplicates=duplicates, grade_map=grade_map, pool=pool_run, pool_depth=pool_depth,
        allow_outside_pool=allow_outside_pool, groups=groups, **utility_opts,
    )
    if distraction_k is None:
        distraction_k = next((int(m.cutoff) for m in user if m.spec.group == "distraction" and m.cutoff is not None), None)
    elif isinstance(distraction_k, bool) or not isinstance(distraction_k, int) or distraction_k < 1:
        raise ConfigError(f"distraction_k must be a whole number >= 1, got {distraction_k!r}")

    notes: list[str] = [curve_note] if curve_note else []
    if len(run_objs) == 1:
        notes.append("only one run: nothing to compare with the baseline (give two or more runs for paired tests)")
    with _Progress(progress) as bar:
        tick = bar.task("evaluating runs", len(run_objs))
        parts = []
        for run in run_objs:
            parts.append(evaluate(qr, run, all_ms, **options))
            if tick:
                tick()
        result = Result(parts[0].measures, [p.runs[0] for p in parts], parts[0].settings)
        proc_result = result if (want_proc and rag) else None
        if want_proc and not rag:
            try:
                pparts = [evaluate(qr, run, proc_ms, **options) for run in run_objs]
                proc_result = Result(pparts[0].measures, [p.runs[0] for p in pparts], pparts[0].settings)
            except ConfigError as exc:
                notes.append(f"PROC / %PROC data left out: {exc}")

        # the union query index
        union = sorted({q for r in result.runs for q in r.qids})
        pos = {q: i for i, q in enumerate(union)}
        R, N, M = len(result.runs), len(union), len(user)
        values = np.full((R, N, M), np.nan)
        present = np.zeros((R, N), dtype=bool)
        for i, r in enumerate(result.runs):
            idx = np.fromiter((pos[q] for q in r.qids), dtype=np.int64, count=len(r.qids))
            present[i, idx] = True
            for j, m in enumerate(user):
                values[i, idx, j] = r.values[m]

        # strata
        sets: list[StratumSet] = []
        texts, texts_source = load_query_texts(query_texts)
        sources = _strata_sources(strata)
        named = [s for s in sources if isinstance(s, str)]
        if (sources or texts) and "num_rel" not in named:
            sources.append("num_rel")  # built in: part of every stratified report
        if texts and "query_length" not in named:
            sources.append("query_length")
        for src in sources:
            if isinstance(src, str) and src in BUILTIN:
                if src == "num_rel":
                    sets.append(num_rel_strata(qr.frame, union, num_rel_level))
                else:
                    if not texts:
                        raise ConfigError("the query_length strata need the query texts (query_texts=... / --queries FILE)")
                    sets.append(query_length_strata(texts, union, texts_source))
            else:
                sets.append(load_strata(src, union))
        notes.extend(_strata_notes(sets))
        seen_names: dict[str, str] = {}
        for s in sets:
            for name in s.members:
                if name in seen_names:
                    raise ConfigError(f"stratum {name!r} comes from both {seen_names[name]} and {s.source}; rename one")
                seen_names[name] = s.source

        n_blocks = 1 + sum(len(s.members) for s in sets)
        tick = bar.task("statistics", 2.0 * n_blocks)
        overall = _block(values, present, np.arange(N), names, user, base, cfg, tick)
        strata_out: dict[str, Stratum] | None = None
        if sets:
            strata_out = {}
            for s in sets:
                for name, qids in s.members.items():
                    rows = np.array(sorted(pos[q] for q in set(qids) if q in pos), dtype=np.int64)
                    blk = _block(values, present, rows, names, user, base, cfg, tick)
                    strata_out[name] = Stratum(name, s.kind, rows.size < min_stratum, blk)

    for i, r in enumerate(result.runs):
        if i == base:
            continue
        only = int((present[i] ^ present[base]).sum())
        if only:
            notes.append(f"{r.name}: {only} queries evaluated for only one of {r.name} and the baseline {names[base]} (not paired, left out of its comparisons)")

    settings: dict[str, Any] = {
        "test": test,
        "test_description": TEST_NAMES[test],
        "alpha": alpha,
        "correction": correction,
        "correction_family": "every (run, measure) comparison of the overall table with a p-value; each stratum is its own family",
        "permutations": permutations,
        "resamples": resamples,
        "seed": seed,
        "ci_method": ci,
        "confidence": confidence,
    }
    settings.update(result.settings)
    settings.setdefault("pool", None)
    settings["tie_tolerance"] = TIE_TOL
    settings["measure_info"] = {str(m): {"higher_is_better": m.spec.higher_is_better, "aggregate": m.spec.aggregate} for m in user}
    settings["unpaired_queries"] = {r.name: int((present[i] ^ present[base]).sum()) for i, r in enumerate(result.runs) if i != base}
    if sets:
        settings["strata"] = [s.describe() for s in sets]
        settings["min_stratum"] = min_stratum
    if texts_source:
        settings["queries"] = texts_source
    settings["curves_k"] = ks
    settings["curve_measures"] = list(curves)
    settings["pr_rel"] = rel
    settings["proc_k"] = pk if proc_result is not None else None

    curves_out = curves_from_result(result, curves, ks) if ks and curves else None
    pr_out = pr_from_result(result, rel)
    proc_out = None
    if proc_result is not None:
        pm, pp = proc_ms
        proc_out = {
            "k": pk,
            "series": [
                {"run": r.name, "per_query": {q: [_num(float(r.values[pm][i])), _num(float(r.values[pp][i]))] for i, q in enumerate(r.qids)}}
                for r in proc_result.runs
            ],
        }
    report = Report(names[base], user, result, overall, strata_out, curves_out, pr_out, proc_out, settings, notes)
    if distraction_k is not None:
        from ._distraction import distraction_table

        report.distraction = distraction_table(
            qr, run_objs, distraction_k, grade_map=grade_map, ties=ties, missing=missing, duplicates=duplicates, **utility_opts
        )
    return report


# --------------------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------------------


class Report:
    """The outcome of :func:`compare`. ``to_dict()`` is the JSON of ``ctxeval compare --format json``."""

    def __init__(
        self,
        baseline: str,
        measures: list[Measure],
        result: Result,
        overall: Block,
        strata: dict[str, Stratum] | None,
        curves: dict[str, Any] | None,
        pr_curves: dict[str, Any] | None,
        proc: dict[str, Any] | None,
        settings: dict[str, Any],
        notes: list[str],
    ) -> None:
        self.baseline = baseline
        self.measures = measures
        self.result = result
        self.overall = overall
        self.strata = strata
        self.curves = curves
        self.pr_curves = pr_curves
        self.proc = proc
        self.settings = settings
        self.notes = notes
        self.distraction: dict[str, Any] | None = None

    @property
    def comparisons(self) -> list[Comparison]:
        return self.overall.comparisons

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.result.runs]

    def comparison(self, run: str, measure: str | Measure) -> Comparison:
        m = _measure_list(measure)[0]
        c = self.overall.comparison(run, m)
        if c is None:
            raise KeyError(f"no comparison of {run!r} on {m}")
        return c

    def __repr__(self) -> str:
        return f"Report(baseline={self.baseline!r}, runs={self.run_names}, measures={[str(m) for m in self.measures]})"

    # -- dict / JSON --------------------------------------------------------------------------------
    def _runs_dict(self, block: Block) -> list[dict[str, Any]]:
        return [
            {
                "name": s.name,
                "aggregate": {str(m): _num(s.aggregate[m]) for m in self.measures},
                "valid_queries": {str(m): s.valid[m] for m in self.measures},
                "ci": {str(m): _pair(s.ci[m]) for m in self.measures},
            }
            for s in block.runs
        ]

    def to_dict(self) -> dict[str, Any]:
        runs = []
        for r, s in zip(self.result.runs, self.overall.runs):
            entry: dict[str, Any] = {
                "name": r.name,
                "path": r.source,
                "aggregate": {str(m): _num(r.summary[m][0]) for m in self.measures},
                "valid_queries": {str(m): r.summary[m][1] for m in self.measures},
                "queries": r.accounting.to_dict(),
            }
            if r.dropped_duplicates:
                entry["dropped_duplicates"] = r.dropped_duplicates
            if r.pool is not None:
                entry["pool"] = dict(r.pool)
            entry["ci"] = {str(m): _pair(s.ci[m]) for m in self.measures}
            entry["per_query"] = {q: {str(m): _num(float(r.values[m][i])) for m in self.measures} for i, q in enumerate(r.qids)}
            runs.append(entry)
        out: dict[str, Any] = {
            "baseline": self.baseline,
            "measures": [str(m) for m in self.measures],
            "runs": runs,
            "comparisons": [c.to_dict() for c in self.overall.comparisons],
        }
        if self.strata is not None:
            out["strata"] = {
                name: {
                    "source": st.source,
                    "n_queries": st.block.n_queries,
                    "small": st.small,
                    "runs": self._runs_dict(st.block),
                    "comparisons": [c.to_dict() for c in st.block.comparisons],
                }
                for name, st in self.strata.items()
            }
        out["curves"] = self.curves
        out["pr_curves"] = self.pr_curves
        out["proc"] = self.proc
        out["distraction"] = self.distraction
        out["settings"] = dict(self.settings)
        if self.notes:
            out["settings"]["notes"] = list(self.notes)
        return out

    def to_json(self) -> str:
        from ._output import to_json

        return to_json(self.to_dict())

    # -- other formats --------------------------------------------------------------------------------
    def to_pandas(self, per_query: bool = False) -> Any:
        """One row per (run, measure): mean, CI, valid queries and the comparison with the baseline
        (NaN on the baseline's rows); with ``per_query=True`` the long per-query table of :meth:`to_csv`."""
        from ._report import to_pandas

        return to_pandas(self, per_query)

    def to_csv(self) -> str:
        """Long format: run, query, measure, value (every per-query value; empty = NA)."""
        from ._report import to_csv

        return to_csv(self)

    def to_markdown(self, digits: int = 4) -> str:
        from ._report import to_markdown

        return to_markdown(self, digits)

    def to_latex(self, digits: int = 3, ci: bool = False, label: str = "tab:ctxeval-compare") -> str:
        from ._report import to_latex

        return to_latex(self, digits, ci, label)

    def to_table(self, color: bool = False, width: int | None = None) -> str:
        """The rich terminal table (plain text unless ``color``)."""
        from ._report import to_table

        return to_table(self, color, width)

    def to_html(self) -> str:
        """One self-contained HTML file (rendered by ``ctxeval._html.render_html``)."""
        try:
            from ._html import render_html  # type: ignore[import-not-found]
        except ImportError as exc:
            raise CtxevalError(
                "HTML reports need the ctxeval._html module, which this build of ctxeval does not have "
                f"({exc}); use --format json/markdown/latex/table, or install a ctxeval that includes it"
            ) from None
        return render_html(self.to_dict())
