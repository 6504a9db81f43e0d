"""The runs on the judge card: each run under both labellings, the ranking agreement, the prediction-
powered means, the null judges' rankings (:mod:`.nulls`) and the circularity check.

**Circularity** (a run fitted to the judge: reranked by it, or tuned on its labels, rises under the
judge's labels but not under people's; Clarke & Dietz saw such a run place 5th under an LLM judge and
28th under people at TREC 2024 RAG). On the pairs both label, every run is evaluated under either
labelling; its *lift* is its mean under the judge's labels minus its mean under people's, and its
*excess lift* that lift minus the median lift of the runs (a lenient judge lifts every run; a run
fitted to it is lifted more than the others). Topics are resampled with replacement (``resamples``
times, seeded); a run whose excess lift is above 0 in all but ``alpha / runs`` of the resamples
(Bonferroni over the runs: the interval is one-sided at level 1 - alpha / runs) and whose rank under
the judge is better than under people's is flagged: "this run may be fitted to the judge". Its rank
under either labelling and the interval of its rank under the judge's labels are reported beside it.

**Cannot tell.** Where the judge's grades on the pairs both label barely vary (one grade for 80 %
of them or more, or under half the bits their grades allow, as ``judge probe`` says of a judge; or
under half the bits people's grades carry on the same pairs, the card's degenerate rule), there is
nothing to fit: a run reranked by the judge is reordered at random among
its ties, and whether a run rises under such labels is set by which pairs it retrieves, not by its
fit. The check then flags no run and says "cannot tell", with the reason, rather than pass or fail
by the luck of the draw.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import ConfigError
from .._evaluate import evaluate
from .._io.model import Qrels, Run
from .._stats.ppi import ppi_mean
from .agreement import grade_bits, ranking_agreement
from .items import ranked
from .nulls import NULLS, NullSettings, null_labels, ranking_nulls
from .verdict import THRESHOLDS

__all__ = ["SystemSettings", "cannot_tell", "circularity", "cut_runs", "grade_spread", "nested", "systems"]

Pairs = dict[tuple[str, str], int]


@dataclass(frozen=True)
class SystemSettings:
    """The measure, the level of the intervals, the top systems the largest swap is sought in, the
    null judges' settings and the resamples of the circularity check."""

    measure: Any
    alpha: float = 0.05
    top: int = 5
    nulls: NullSettings = field(default_factory=NullSettings)
    resamples: int = 1000


def nested(pairs: Pairs) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (q, d), g in pairs.items():
        out.setdefault(q, {})[d] = g
    return out


def cut_runs(runs: Sequence[Any], depth: int | None, queries: set[str] | None = None) -> list[Run]:
    """Each run cut to its top ``depth`` of each query (None: whole) and to ``queries`` (None: all),
    in its ranking order; a measure at cutoff ``depth`` gives the same values on the cut run."""
    out = []
    for r in runs:
        run, q, d, s = ranked(r)
        kept: dict[str, dict[str, float]] = {}
        for qid, doc, score in zip(q, d, s):
            if queries is not None and qid not in queries:
                continue
            got = kept.setdefault(qid, {})
            if depth is None or len(got) < depth:
                got[doc] = score
        out.append(Run.from_dict(kept, name=run.name, source=run.source) if kept else run)
    return out


def _matrix(
    qrels: Qrels, runs: Sequence[Run], measure: str, judged: str | None = None
) -> tuple[Any, np.ndarray, list[str]]:
    """The evaluation, the per-query values as (runs, queries) and the queries (the qrels')."""
    ms = [measure, judged] if judged else [measure]
    res = evaluate(qrels, list(runs), ms, policies={"missing": "zero"})
    per = [r.per_query(measure) for r in res.runs]
    qids = sorted(set().union(*per), key=lambda q: q.encode())
    mat = np.array([[p.get(q, 0.0) for q in qids] for p in per], dtype=float)
    return res, mat, qids


def systems(
    hc: Pairs, jc: Pairs, runs: Sequence[Any], s: SystemSettings, sources: tuple[str, str], notes: list[str]
) -> dict[str, Any]:
    """Each run under both labellings, the ranking agreement beside the null judges', the
    prediction-powered means and the circularity check (see the module docstring)."""
    if len(runs) < 2:
        raise ConfigError("the system ranking needs at least two runs")
    m = s.measure
    k = int(m.cutoff) if m.cutoff is not None else 10
    judged = f"Judged@{k}"
    h = Qrels.from_dict(nested(hc), source=sources[0])
    j = Qrels.from_dict(nested(jc), source=sources[1])
    by_h, vh, qh = _matrix(h, runs, str(m))
    by_j, vj, qj = _matrix(j, runs, str(m), judged)
    mm = by_h.measures[0]
    names = [r.name for r in by_h.runs]
    hm = {r.name: r.mean(mm) for r in by_h.runs}
    jm = {r.name: r.mean(mm) for r in by_j.runs}
    means = {
        r.name: {"human": hm[r.name], "judge": jm[r.name], "judged": r.mean(judged), "judged_label": judged}
        for r in by_j.runs
    }
    ppi: dict[str, Any] = {}
    for rh, rj in zip(by_h.runs, by_j.runs):
        try:
            ppi[rh.name] = ppi_mean(rj.per_query(mm), rh.per_query(mm), alpha=s.alpha).to_dict()
        except ConfigError as e:
            notes.append(f"{rh.name}: no prediction-powered estimate: {e}")
    lost = max((p["human_only"] for p in ppi.values()), default=0)
    if lost:
        notes.append(
            f"{lost} queries people labelled have no value under the judge's labels (it labelled nothing there): "
            "left out of the prediction-powered estimates"
        )
    if ppi:
        notes.append(
            "the prediction-powered intervals assume the queries people labelled are a random sample of all the "
            "queries; with every query labelled they are people's own t intervals"
        )
    ranking = ranking_agreement(hm, jm, s.top)
    chance = None
    if s.nulls.draws > 0:
        cut = cut_runs(runs, int(m.cutoff) if m.cutoff is not None else None, set(qj))
        vnull = _null_values(jc, hc, cut, str(m), qj, s.nulls)
        common = [q for q in qh if q in set(qj)]
        ih = np.array([qh.index(q) for q in common], dtype=np.int64)
        ij = np.array([qj.index(q) for q in common], dtype=np.int64)
        chance = ranking_nulls(vh, vj, vnull, names, s.top, s.nulls, (ih, ij))
    both = {p: g for p, g in hc.items() if p in jc}
    circ = circularity(both, {p: jc[p] for p in both}, runs, s) if both else None
    return {"measure": str(mm), "ranking": ranking, "means": means, "ppi": ppi, "chance": chance, "circularity": circ}


def _null_values(
    jc: Pairs, hc: Pairs, runs: Sequence[Run], measure: str, qids: Sequence[str], settings: NullSettings
) -> dict[str, np.ndarray]:
    """Per null judge, (draws, runs, queries) per-query values of the runs under its labels: every
    draw's queries renamed apart (``query<TAB>draw``) and evaluated in one call."""
    rng = np.random.default_rng(settings.seed)
    n = max(settings.draws, 1)
    many = [  # every run once per draw, its queries renamed apart; the constant judge reads the first draw
        Run.from_dict({f"{q}\t{b}": docs for b in range(n) for q, docs in r.to_dict().items()}, name=r.name)
        for r in runs
    ]
    out = {}
    for kind in NULLS:
        draws = 1 if kind == "constant" else n
        qrels: dict[str, dict[str, int]] = {}
        for b in range(draws):
            for (q, d), g in null_labels(kind, jc, hc, rng).items():
                qrels.setdefault(f"{q}\t{b}", {})[d] = g
        _, mat, got = _matrix(Qrels.from_dict(qrels), many, measure)
        at = {x: i for i, x in enumerate(got)}
        cols = np.array([[at.get(f"{q}\t{b}", -1) for q in qids] for b in range(draws)])  # (draws, queries)
        vals = np.where(cols[None, :, :] >= 0, mat[:, np.maximum(cols, 0)], 0.0)  # (runs, draws, queries)
        out[kind] = np.transpose(vals, (1, 0, 2))
    return out


def _ranks(means: np.ndarray) -> np.ndarray:
    """1-based ranks of each row's runs (axis -1), best (highest) first, ties sharing the average rank."""
    x = -means
    less = (x[..., :, None] > x[..., None, :]).sum(axis=-1)
    equal = (x[..., :, None] == x[..., None, :]).sum(axis=-1)
    return less + (equal + 1) / 2.0


def grade_spread(jc: Pairs, hc: Pairs) -> dict[str, Any]:
    """The judge's commonest grade and its share, and the information its grades carry against
    people's: the entropy of each side's grade distribution (its own labels, on the scale both are
    compared on) and their ratio; flagged under :data:`~.verdict.THRESHOLDS` ``degenerate`` with 10
    labels or more (where people used one grade only, when the judge did too); ``low`` whatever the
    number of labels."""
    grades, counts = np.unique(np.fromiter(jc.values(), dtype=np.int64), return_counts=True)
    top = int(np.argmax(counts))
    hj, hh = grade_bits(list(jc.values())), grade_bits(list(hc.values()))
    ratio = hj / hh if hh > 0 else None
    low = ratio < THRESHOLDS["degenerate"] if ratio is not None else hj == 0.0
    return {
        "grade": int(grades[top]),
        "share": float(counts[top] / counts.sum()),
        "judgments": int(counts.sum()),
        "entropy_judge": hj,
        "entropy_human": hh,
        "entropy_ratio": ratio,
        "low": bool(low),
        "flag": bool(low and counts.sum() >= 10),
    }


#: the judge's grades barely vary where one grade holds this share of the pairs or more, or where they
#: carry under this fraction of the bits the grades in use allow (as ``judge probe`` says of a judge)
BARELY = (0.8, 0.5)


def cannot_tell(both_h: Pairs, both_j: Pairs) -> str | None:
    """Why the circularity check cannot tell a run fitted to the judge from one that is not, or None
    (see the module docstring): the judge's grades on the pairs both label barely vary, by ``judge
    probe``'s rule (:data:`BARELY`: one grade for 80 % of them or more, or under half the bits the
    grades in use on these pairs allow) or the card's degenerate rule (under half the bits people's
    grades carry: :func:`grade_spread`).

    >>> cannot_tell({("q", "a"): 0, ("q", "b"): 3}, {("q", "a"): 2, ("q", "b"): 2})[:52]
    'the judge gives grade 2 to 100% of the 2 pairs both '
    """
    d = grade_spread(both_j, both_h)
    used = len(set(both_h.values()) | set(both_j.values()))
    most = math.log2(used) if used > 1 else 0.0
    if not (d["low"] or d["share"] >= BARELY[0] or d["entropy_judge"] < BARELY[1] * most):
        return None
    return (
        f"the judge gives grade {d['grade']} to {d['share']:.0%} of the {d['judgments']} pairs both label "
        f"({d['entropy_judge']:.2f} bits of the {most:.2f} their {used} grades allow; people's {d['entropy_human']:.2f}): "
        "a run cannot be fitted to labels that barely vary, so whether one rises under them is set by the pairs it "
        "retrieves, not by a fit"
    )


def circularity(both_h: Pairs, both_j: Pairs, runs: Sequence[Any], s: SystemSettings) -> dict[str, Any]:
    """Per run: its rank under people's and the judge's labels on the pairs both label, its excess
    lift and the one-sided bootstrap bound of it over topics, and whether it is flagged (see the
    module docstring)."""
    m = str(s.measure)
    h = Qrels.from_dict(nested(both_h))
    j = Qrels.from_dict(nested(both_j))
    res_h, vh, qh = _matrix(h, runs, m)
    _, vj, qj = _matrix(j, runs, m)
    names = [r.name for r in res_h.runs]
    common = [q for q in qh if q in set(qj)]
    vh = vh[:, [qh.index(q) for q in common]]
    vj = vj[:, [qj.index(q) for q in common]]
    n_runs, n_q = vh.shape
    rng = np.random.default_rng(s.nulls.seed + 2)
    idx = rng.integers(0, n_q, (s.resamples, n_q))
    mh = vh[:, idx].mean(axis=2).T  # (resamples, runs)
    mj = vj[:, idx].mean(axis=2).T
    lift = mj - mh
    excess = lift - np.median(lift, axis=1, keepdims=True)
    level = s.alpha / max(n_runs, 1)
    bound = np.quantile(excess, level, axis=0)  # one-sided lower bound of each run's excess lift
    rank_h, rank_j = _ranks(vh.mean(axis=1)), _ranks(vj.mean(axis=1))
    boot_rank_j = _ranks(mj)
    lo = np.quantile(boot_rank_j, s.alpha / 2, axis=0)
    hi = np.quantile(boot_rank_j, 1 - s.alpha / 2, axis=0)
    obs = vj.mean(axis=1) - vh.mean(axis=1)
    obs_excess = obs - float(np.median(obs))
    why = cannot_tell(both_h, both_j)
    rows = {}
    for i, name in enumerate(names):
        flag = bool(bound[i] > 0 and rank_j[i] < rank_h[i]) and why is None
        rows[name] = {
            "rank_human": float(rank_h[i]),
            "rank_judge": float(rank_j[i]),
            "rank_judge_interval": [float(lo[i]), float(hi[i])],
            "rise": float(rank_h[i] - rank_j[i]),
            "excess_lift": float(obs_excess[i]),
            "excess_lift_low": float(bound[i]),
            "flag": flag,
        }
    return {
        "runs": rows,
        "topics": n_q,
        "pairs": len(both_h),
        "resamples": s.resamples,
        "level": 1 - level,
        "flagged": [n for n, r in rows.items() if r["flag"]],
        "cannot_tell": why,
    }


def describe_flag(name: str, row: Mapping[str, Any]) -> str:
    """One line for a flagged run."""
    lo, hi = row["rank_judge_interval"]
    return (
        f"{name} may be fitted to the judge: rank {row['rank_judge']:g} under its labels, {row['rank_human']:g} under "
        f"people's on the same pairs (its rank under the judge's labels over resampled topics: {lo:g}-{hi:g}); it "
        f"gains {row['excess_lift']:+.4f} more than the median run from the judge's labels (at least "
        f"{row['excess_lift_low']:+.4f} in the resamples)"
    )


def finite(x: float | None) -> bool:
    return x is not None and not math.isnan(x)
