"""Comparing ranking profiles by the harm they do to an LLM reader: ``ctxeval distraction``.

:func:`distraction_table` evaluates every run at one k and returns the ``distraction`` object of the
report contract: per run RR, R@k, nDCG@k, dDCG@k, ndDCG@k, UDCG@k, the distractor rate and harm, the
safety verdict, the optimal k (mean, median, histogram, best fixed K), the gap nDCG@k - ndDCG@k
("harm the rank metrics do not see") and the worst distractors with the reason each was flagged,
plus the utility map and the detection rules in force.

Safety verdict from the mean DistractorRate@k over queries: SAFE when <= ``safe`` (0.10), RISKY when
<= ``risky`` (0.50), DANGEROUS above. A mean within 1e-9 of a threshold counts as equal to it: the mean
of per-query rates carries float noise (0.2, 0.1 and 0.0 average to 0.10000000000000002, not 0.1), and
a rate is a multiple of 1/(k·queries), far coarser than that.

>>> safety_verdict(0.1), safety_verdict(0.2), safety_verdict(0.51), safety_verdict(0.3, safe=0.3)
('SAFE', 'RISKY', 'DANGEROUS', 'SAFE')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._context.grades import relevance
from .._context.labels import HOW_TO_JUDGE
from .._context.settings import RagConfig
from .._context.utility import UtilityConfig, flag_counts, flag_note
from .._core.extras import WHY_KNOWN, WHY_LLM, WHY_RANK, WHY_SCORE, Utilities
from .._core.segments import ratio
from .._engines.base import provider
from .._engines.blocks import Block, Ragged, sized_counts
from .._errors import ConfigError
from .._io.model import Qrels
from .._json import num as _num
from .._measures import Measure, make
from .._measures.distraction import ideal_ddcg, top_rows, unknown_queries
from .._names import once, unique_names
from .._policies import Policies
from .._session import depth_note, list_depths, open_session, resolve_inputs
from .._show import fmt, html_table, pandas
from .dynamic_k import dynamic_k_parts, summary_of

__all__ = ["RISKY", "SAFE", "VERDICTS", "DistractionTable", "auto_rel", "distraction_table", "safety_verdict"]

SAFE, RISKY = 0.10, 0.50
_VERDICT_TOL = 1e-9
VERDICTS = ("SAFE", "RISKY", "DANGEROUS")


def _check_thresholds(safe: float, risky: float) -> None:
    for name, v in (("safe", safe), ("risky", risky)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            raise ConfigError(f"verdict threshold {name} must be a number in [0, 1], got {v!r}")
    if safe > risky:
        raise ConfigError(f"verdict thresholds: safe ({safe:g}) must not exceed risky ({risky:g})")


def safety_verdict(rate: float | None, safe: float = SAFE, risky: float = RISKY) -> str:
    """SAFE when rate <= safe, RISKY when safe < rate <= risky, DANGEROUS above; NA when undefined."""
    _check_thresholds(safe, risky)
    if rate is None or (isinstance(rate, float) and math.isnan(rate)):
        return "NA"
    return "SAFE" if rate <= safe + _VERDICT_TOL else "RISKY" if rate <= risky + _VERDICT_TOL else "DANGEROUS"


def _mean(v: np.ndarray) -> float:
    ok = v[~np.isnan(v)]
    return float(ok.mean()) if ok.size else math.nan


def auto_rel(qrels: Qrels, config: UtilityConfig, gm: Any) -> tuple[int, list[str]]:
    """The smallest qrels grade whose utility (after the grade map) is positive, for RR and R@k; a note
    when a higher grade has a utility <= 0 (a non-monotone map)."""
    grades = sorted(set(np.unique(qrels.columns.values).tolist()))
    umap = config.map
    notes: list[str] = []

    def util(g: int) -> float | None:
        mapped = gm.mapping.get(g, g) if gm is not None and gm.mapping else g
        return umap.get(mapped)

    positive = [g for g in grades if (util(g) or 0.0) > 0]
    if not positive:
        after = f" after the grade map {gm.describe()}" if gm is not None and gm.mapping else ""
        raise ConfigError(
            f"no qrels grade ({', '.join(map(str, grades))}) has a positive utility under the utility map "
            f"{','.join(f'{g}:{u:g}' for g, u in umap.items())}{after}: nothing is relevant. Reference ids or other "
            "binary labels (relevant or not)? say so: --labels binary (labels='binary'); another scale: a grade map "
            "(--grade-map trec-dl for TREC's 0-3) or a utility map (--utility-map)"
        )
    rel = min(positive)
    odd = [g for g in grades if g > rel and (util(g) or 0.0) <= 0]
    if odd:
        notes.append(f"grades {odd} lie above rel={rel} but have utility <= 0: RR and R count them as relevant")
    return rel, notes


class DistractionTable(dict[str, Any]):
    """What :func:`distraction_table` returns: the dict of the report contract (as ``ctxeval distraction
    --format json`` prints it), with a short ``repr``, an HTML table in a notebook and :meth:`to_pandas`."""

    def __repr__(self) -> str:
        rows = ", ".join(f"{r['run']} {r['verdict']} (rate {fmt(r['distractor_rate'])})" for r in self["rows"][:4])
        more = f" and {len(self['rows']) - 4} more" if len(self["rows"]) > 4 else ""
        return f"DistractionTable(k={self['k']}: {rows}{more}; {len(self['notes'])} notes)"

    def _repr_html_(self) -> str:
        names = list(self["rows"][0]["measures"]) if self["rows"] else []
        rows = [
            [r["run"], *r["measures"].values(), r["verdict"], r["optimal_k"]["mean"], r["hidden_harm"]]
            for r in self["rows"]
        ]
        reasons = [f"{r['run']}: {r['verdict_reason']}" for r in self["rows"] if r.get("verdict_reason")]
        cap = f"distraction at k = {self['k']}" + (f"; {reasons[0]}" if reasons else "")
        return html_table(["run", *names, "verdict", "optimal k (mean)", "hidden harm"], rows, cap)

    def to_pandas(self) -> Any:
        """One row per run: its measures, ``verdict``, ``verdict_reason``, ``optimal_k_mean``,
        ``optimal_k_median``, ``best_fixed_k`` and ``hidden_harm``."""
        pd = pandas("DistractionTable.to_pandas")
        rows = [
            {
                "run": r["run"],
                **r["measures"],
                "verdict": r["verdict"],
                "verdict_reason": r.get("verdict_reason"),
                "optimal_k_mean": r["optimal_k"]["mean"],
                "optimal_k_median": r["optimal_k"]["median"],
                "best_fixed_k": r["optimal_k"]["best_fixed_k"],
                "hidden_harm": r["hidden_harm"],
            }
            for r in self["rows"]
        ]
        return pd.DataFrame(rows)


def no_verdict_why() -> str:
    """What a missing verdict's reason says after its counts (the same for every run)."""
    return (
        ", and binary labels (reference ids) say which chunks are relevant, not which distract. To get labels that "
        f"do: {HOW_TO_JUDGE}"
    )


def _no_verdict(unknown: int, queries: int, k: int) -> str:
    """Why there is no safety verdict: chunks nobody labelled in the top k (binary labels)."""
    return f"no verdict: in {unknown} of {queries} queries the top {k} holds chunks nobody labelled{no_verdict_why()}"


def hidden_harm(
    data: Any, urows: Utilities, tidx: np.ndarray, tseg: np.ndarray, trank: np.ndarray, k: int
) -> np.ndarray:
    """Per query, the harm the rank measures do not see, on one gain scale: ndDCG⁺@k - ndDCG@k =
    Σ_{i<=k} max(-u_i, 0) / log2(i + 1) / IdDCG@k, where ndDCG⁺ counts only the positive utilities.
    Always >= 0, 0 exactly when the top k holds no passage of negative utility; NA where IdDCG@k = 0
    (no judged passage of positive utility). (nDCG - ndDCG, shown before, mixed two gain scales, the
    qrels grades and the utilities, so its sign said nothing about harm.)"""
    harm = np.maximum(-urows.u[tidx], 0.0) / np.log2(trank + 1.0)
    total = np.bincount(tseg, weights=harm, minlength=data.n_queries).astype(np.float64)
    return ratio(total, ideal_ddcg(data, k))


def _why_text(
    code: int,
    grade: int | None,
    rel_score: float,
    rank: int,
    llm: float | None,
    known: bool,
    label: float,
    config: UtilityConfig,
) -> str:
    rules = config.rules
    if code == WHY_KNOWN:
        return "known distractor" + (f" (grade {grade})" if grade is not None else " (unjudged)")
    if code == WHY_SCORE:
        judged = f"grade {grade}" if grade is not None else "unjudged"
        return f"hard negative: relative score {rel_score:.3f} >= tau {rules.tau:g} ({judged})"
    if code == WHY_RANK:
        what = f"utility 0 (grade {grade})" if grade is not None else "unlabelled passage"
        return f"hard negative: {what} at rank {rank} <= {rules.top_rank}"
    if code == WHY_LLM:
        if known:
            return f"LLM utility {llm:.3g} of a known distractor"
        what = f"grade {grade}" if grade is not None else "unjudged"
        return f"LLM utility {llm:.3g} >= {config.llm_threshold:g} of a non-relevant passage ({what})"
    return f"label: grade {grade} has utility {label:g}" if grade is not None else "label"


@dataclass(frozen=True)
class _Rows:
    """distraction_table's block function (:mod:`ctxeval._engines.blocks`): per query the measures,
    the hidden harm and whether the top k holds chunks nobody labelled, the optimal k and each row's
    gain; per block the counts and its ``worst`` distractors."""

    measures: tuple[tuple[str, Measure], ...]
    k: int
    worst: int
    discount: bool

    def __call__(self, session: Any, data: Any) -> Block:
        k, config = self.k, session.utility
        urows: Utilities = data.extra("utility")
        block = Block(list(data.qids), values={key: m.compute(data) for key, m in self.measures})
        block.values["depth"] = list_depths(data)
        ks, at_opt, w = dynamic_k_parts(data.r_off, urows.u, discount=self.discount)
        block.values["optimal_k"], block.values["at_optimal_k"] = ks, at_opt
        block.rows["gain"] = Ragged(data.n_ret, w)
        tidx, tseg, trank = top_rows(data, k)
        block.values["hidden"] = hidden_harm(data, urows, tidx, tseg, trank, k)
        unknown = unknown_queries(data, k)
        if unknown is not None:
            block.values["unknown"] = unknown
        block.totals["in_list"] = flag_counts(urows, data.r_judged)
        block.totals["in_top"] = flag_counts(urows, data.r_judged, tidx)
        block.totals["utility"] = urows.block_counts()
        neg = urows.u[tidx] < 0
        idx, qseg, nrank = tidx[neg], tseg[neg], trank[neg]
        rows = data.rows
        if rows is None:
            raise ConfigError("the distraction table needs the run's ranked rows (keep_rows)")
        docs = (
            np.array([d.encode("utf-8") for d in rows.doc.to_list(idx)], dtype=object)
            if idx.size
            else np.zeros(0, dtype=object)
        )
        order = np.lexsort((docs, qseg, nrank, urows.u[idx]))
        found = []
        for at in order[: self.worst].tolist():
            j = int(idx[at])
            g = int(data.r_grade[j]) if data.r_judged[j] else None
            llm = None if urows.llm_u is None or math.isnan(urows.llm_u[j]) else float(urows.llm_u[j])
            known = bool(urows.known[j]) if urows.known is not None else False
            query = data.qids[int(data.r_seg[j])]
            row = {
                "query": query,
                "doc": docs[at].decode("utf-8"),
                "rank": int(data.r_rank[j]),
                "utility": float(urows.u[j]),
                "why": _why_text(
                    int(urows.why[j]),
                    g,
                    float(urows.rel[j]),
                    int(data.r_rank[j]),
                    llm,
                    known,
                    float(urows.label[j]),
                    config,
                ),
                "grade": g,
            }
            found.append(((row["utility"], row["rank"], query.encode("utf-8"), docs[at]), row))
        block.totals["worst"] = found
        return block


def distraction_table(
    qrels: Any = None,
    runs: Any = None,
    k: int = 5,
    *,
    samples: Any = None,
    utility: UtilityConfig | Mapping[str, Any] | None = None,
    rel: int | None = None,
    thresholds: tuple[float, float] | Mapping[str, float] = (SAFE, RISKY),
    worst: int = 5,
    discount: bool = False,
    policies: Policies | Mapping[str, Any] | None = None,
    rag: RagConfig | Mapping[str, Any] | None = None,
    engine: Any = "local",
) -> DistractionTable:
    """One row per run: rank measures next to the distraction-aware ones, the safety verdict, the
    optimal k and the worst distractors. Returns the ``distraction`` object of the report contract
    (``k``, ``rules``, ``utility_map``, ``utility_source``, ``rows``) plus the settings that shaped it
    (``rel``, ``verdict_thresholds``, ``known_distractors``, ``utilities``, ``notes``).

    ``utility`` (a :class:`~ctxeval.UtilityConfig`) decides the per-passage utilities; with LLM
    utilities an irrelevant passage counts as a distractor (u = -LLM utility) only when its LLM
    utility is >= the configuration's ``llm_threshold`` (default 0.5), else its utility is 0; UDCG
    reads the LLM utilities as given. ``rel`` (for RR and R@k; also passed to UDCG when given)
    defaults to the smallest grade whose utility is positive. ``rag.grade_map`` maps the grades first.
    ``thresholds``: the verdict's (safe, risky) rates (a pair, or ``{"safe": ..., "risky": ...}``).
    ``hidden_harm`` is the mean of :func:`hidden_harm` over the queries where ndDCG@k is defined: what
    the distractors in the top k cost, as a share of the ideal. Every row says how many queries its means cover (``queries``: with
    ``missing="zero"`` the judged queries absent from the run count, with an empty list), how the
    run's queries were treated (``accounting``), the duplicate rows dropped, on how many queries
    ndDCG and the gap are defined (``valid``) and which rule set how many utilities
    (``utility_counts``); the text table prints the same. The optimal k is computed over the whole ranked list (``discount``: U(k) with
    log2 discounts). ``samples`` (instead of ``qrels`` and ``runs``): sample sets, as for
    :func:`ctxeval.evaluate`; on their reference ids (binary labels) the verdict needs labels that
    say which chunks distract, and says so (``verdict_reason``) where they are missing. ``engine``:
    where the rows are computed, as for :func:`ctxeval.evaluate`.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(f"k must be a whole number >= 1, got {k!r}")
    if isinstance(worst, bool) or not isinstance(worst, int) or worst < 0:
        raise ConfigError(f"worst must be a whole number >= 0, got {worst!r}")
    safe, risky = _thresholds(thresholds)
    eng = provider(engine)
    qrels, runs, input_notes, sets = resolve_inputs("distraction", qrels, runs, samples, policies, eng)
    session, run_objs = open_session(
        qrels, runs, policies=policies, rag=rag, utility=utility, samples=sets, engine=eng, extras=["utility"]
    )
    if not run_objs:
        raise ConfigError("distraction needs at least one run")
    qr = session.qrels
    config = session.utility
    gm = session.rag.grade_map
    notes: list[str] = list(input_notes)
    if rel is None:
        rel_used, more = auto_rel(qr, config, gm)
        notes += more
    else:
        rel_used = rel
    ms: dict[str, Measure] = {
        "RR": make("RR", {"rel": rel_used}),
        "R": make("R", {"rel": rel_used}, k),
        "nDCG": make("nDCG", None, k),
        "dDCG": make("dDCG", None, k),
        "ndDCG": make("ndDCG", None, k),
        "UDCG": make("UDCG", {"rel": rel} if rel is not None else None, k),
        "DistractorRate": make("DistractorRate", None, k),
        "DistractorHarm": make("DistractorHarm", None, k),
    }
    session.label_notes(ms.values(), scale_read=True)
    if qr.labels.binary:
        notes.append(
            "optimal k on binary labels: an unlabelled chunk costs nothing there (utility 0), so it is the depth of "
            "the last reference, not a trade-off with distractors"
        )
    if config.llm is None:
        notes.append(
            "UDCG uses label-derived stand-in utilities (relevant 1, others the size of their negative utility): no LLM utilities file"
        )
    else:
        notes.append(
            f"UDCG reads the LLM utilities as given; the threshold {config.llm_threshold:g} only decides which irrelevant passages count as distractors"
        )
    fn = _Rows(tuple(ms.items()), k, worst, discount)
    mapped = [session.blocks(run, list(ms.values()), fn, keep_rows=True) for run in run_objs]
    rows_out = []
    for run, name in zip(mapped, unique_names(mapped)):
        block = run.block
        note = depth_note(
            name,
            block.values["depth"],
            k,
            f"DistractorRate@{k} and the verdict are over the passages given (min(k, depth)), not k slots",
        )
        if note:
            notes.append(note)
        values = {key: block.values[key] for key in ms}
        rate = _mean(values["DistractorRate"])
        gain = block.rows["gain"]
        dyn = summary_of(gain.off, block.values["optimal_k"], block.values["at_optimal_k"], gain.flat, discount, None)
        hidden = block.values["hidden"]
        unknown = block.values.get("unknown")
        n_unknown = int(unknown.sum()) if unknown is not None else 0
        if unknown is not None:
            hidden = np.where(unknown, np.nan, hidden)
        both = ~np.isnan(hidden)
        gap: float | None = float(np.mean(hidden[both])) if both.any() else math.nan
        in_list, in_top = block.totals["in_list"], block.totals["in_top"]
        note = flag_note(name, in_list, config.rules)
        if note:
            notes.append(note)
        worst_rows = [row for _, row in sorted(block.totals["worst"], key=lambda x: x[0])[:worst]]
        means = {key: _num(_mean(v)) for key, v in values.items()}
        if n_unknown:  # no verdict: no figure of harm either (a mean over the other queries reads as "none")
            means["DistractorRate"] = means["DistractorHarm"] = gap = None
        rows_out.append(
            {
                "run": name,
                "measures": {str(m): means[key] for key, m in ms.items()},
                "distractor_rate": means["DistractorRate"],
                "distractor_harm": means["DistractorHarm"],
                "verdict": safety_verdict(rate, safe, risky) if not n_unknown else "NA",
                "optimal_k": {
                    "mean": dyn["mean"],
                    "median": dyn["median"],
                    "histogram": dyn["histogram"],
                    "best_fixed_k": dyn["best_fixed_k"],
                    "mean_utility_at_best_fixed_k": dyn["mean_utility_at_best_fixed_k"],
                    "mean_utility_at_optimal_k": dyn["mean_utility_at_optimal_k"],
                },
                "hidden_harm": None if gap is None else _num(gap),
                "worst_distractors": worst_rows,
                "queries": len(block.qids),
                "accounting": run.accounting.to_dict(),
                "dropped_duplicates": int(run.dropped_duplicates),
                "valid": {str(ms["ndDCG"]): int((~np.isnan(values["ndDCG"])).sum()), "hidden harm": int(both.sum())},
                "utility_counts": sized_counts(block.totals["utility"]),
                "hard_negatives": {
                    "top_k": {key: in_top[key] for key in ("judged", "unlabelled")},
                    "whole_list": in_list,
                },
            }
        )
        if n_unknown:
            rows_out[-1]["verdict_reason"] = _no_verdict(n_unknown, len(block.qids), k)
    said = [*session.notes, *(n for r in mapped for n in r.notes)]
    return DistractionTable(
        {
            "k": k,
            "rules": config.rules.describe(),
            "utility_map": {str(g): u for g, u in config.utility_map},
            "utility_source": config.source,
            "rel": rel_used,
            "rel_relevance": relevance(rel_used, gm, True),
            "verdict_thresholds": {"safe": float(safe), "risky": float(risky)},
            "known_distractors": config.describe()["known_distractors"],
            "utilities": config.describe()["utilities"],
            "grade_map": gm.describe() if gm is not None else None,
            "qrels_dropped_duplicates": int(qr.dropped_duplicates),
            "discount": bool(discount),
            "notes": once(notes + list(dict.fromkeys(said)), [str(r["run"]) for r in rows_out]),
            "rows": rows_out,
        }
    )


def _thresholds(value: tuple[float, float] | Mapping[str, float]) -> tuple[float, float]:
    """The verdict's (safe, risky) rates from a pair or a mapping, checked."""
    if isinstance(value, Mapping):
        unknown = set(value) - {"safe", "risky"}
        if unknown:
            raise ConfigError(f"verdict thresholds are safe and risky, got {sorted(unknown)}")
        safe, risky = value.get("safe", SAFE), value.get("risky", RISKY)
    elif isinstance(value, (tuple, list)) and len(value) == 2:
        safe, risky = value
    else:
        raise ConfigError(f"verdict thresholds are a pair (safe, risky) or a mapping, got {value!r}")
    _check_thresholds(safe, risky)
    return safe, risky
