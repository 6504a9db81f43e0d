"""The judge card: how far a judge's labels can stand in for people's, with a one-line verdict whose
thresholds sit next to the published figures they come from.

What the card holds (built by :func:`ctxeval._judge.verbs.agreement`):

* **coverage**: of the (query, doc) pairs people labelled, the share the judge labelled too; a measure
  under the judge's labels rests on the judge's pairs only (unjudged docs count as not relevant).
* **labels**, on the pairs both label and one scale: Cohen's kappa (unweighted, linear, quadratic)
  with the confusion matrix, the kappa of labels binarized at a stated level (relevant = grade >=
  level), Krippendorff's ordinal alpha, and **leniency**: the judge's relevant rate over people's
  on those pairs (> 1: the judge calls more relevant).
* **degenerate judge**: the share of all the judge's labels that carry its commonest grade; at 90 % or
  more its labels carry next to no information and the card says so whatever the other figures.
* **ranking**: Kendall's tau and tau_AP between the runs' orders under either labelling, the largest
  swap among the top systems (:mod:`.agreement`); each run's mean under either labelling, the share of
  its top k the judge labelled, and the prediction-powered estimate of its mean with people's labels
  on a subset (:mod:`ctxeval._core.ppi`).

**Verdict.** Thresholds and where they come from (:data:`PUBLISHED`):

* binarized kappa >= 0.42: the LLM judges of the LLMJudge challenge on TREC DL 2023 reached 0.42–0.43
  on binarized labels (Rahmani et al., "LLMJudge: LLMs for relevance judgments", LLM4Eval at SIGIR
  2024, arXiv:2408.08896); Thomas et al.'s best prompt reached 0.64 against TREC assessors (Thomas,
  Spielman, Craswell, Mitra, "Large language models can accurately predict searcher preferences",
  SIGIR 2024, arXiv:2309.10621). On four-level labels the same LLMJudge judges reached only 0.06–0.29:
  the graded kappa is printed for context, never gated on.
* system tau >= 0.83: the lowest system-ranking Kendall's tau among the LLMJudge judges (0.83–0.95),
  over 5 runs or more (:data:`MIN_RUNS`: over 2 runs tau is +1 or -1 whatever the judge; fewer runs
  leave the ranking unjudged, and the card says so).
* the grades agree better than chance: Krippendorff's ordinal alpha > 0 (a judge with a decent
  binarized kappa but alpha <= 0 has the grades in the wrong order).
* on RA-nWG's 1–5 scale, where grade 1 is a *distractor* (looks relevant, would mislead): a judge that
  calls half or more of people's distractors relevant is rejected (ctxeval's own threshold; no
  published figure): those are the chunks that hurt a RAG system most.
* Everything holds: the labels can stand in for people's. The ranking holds and the labels do not:
  compare systems with them, but do not read their values as people's. The ranking fails, the judge
  is degenerate, or it takes distractors for evidence: do not use them in place of people's labels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._show import html_table, pandas

__all__ = ["MIN_RUNS", "PUBLISHED", "THRESHOLDS", "JudgeCard", "Scale", "render_card", "verdict"]


@dataclass(frozen=True)
class Scale:
    """A grade scale: its grades (lowest first) and the level from which a grade counts as relevant
    (None where no level is conventional: binarizing then needs one)."""

    name: str
    grades: tuple[int, ...]
    level: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "grades": list(self.grades), "level": self.level}


#: the verdict's thresholds (see the module docstring)
THRESHOLDS = {"kappa_binary": 0.42, "tau": 0.83, "degenerate": 0.9, "distractors": 0.5}

#: fewer runs than this: the system ranking is not judged (tau moves in steps of 4 / (N (N - 1)))
MIN_RUNS = 5

#: published figures the thresholds come from, printed beside them
PUBLISHED = {
    "kappa_binary": "LLMJudge, TREC DL 2023 (Rahmani et al. 2024): 0.42-0.43; Thomas et al. 2024 (SIGIR): 0.64",
    "kappa_graded": "LLMJudge, TREC DL 2023, four-level labels: 0.06-0.29 (for context; not a threshold)",
    "tau": "LLMJudge, TREC DL 2023: system ranking tau 0.83-0.95",
}

_FEW_PAIRS = 50  # fewer pairs both label than this: kappa is fragile


@dataclass(frozen=True)
class JudgeCard:
    """The judge card (see the module docstring); ``to_dict()`` is its JSON form, ``str()`` its text."""

    human: str
    judge: str
    labelled_by: str | None  #: who wrote the judge's labels, when their provenance says
    scales: dict[str, Any]
    coverage: dict[str, Any]
    labels: dict[str, Any]
    degenerate: dict[str, Any]
    measure: str | None
    ranking: dict[str, Any] | None
    means: dict[str, dict[str, float]]
    ppi: dict[str, dict[str, Any]]
    alpha: float
    verdict: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "human": self.human,
            "judge": self.judge,
            "labelled_by": self.labelled_by,
            "scales": self.scales,
            "coverage": self.coverage,
            "labels": self.labels,
            # the flat keys earlier versions wrote
            "pairs": {
                "human": self.coverage["human_pairs"],
                "judge": self.coverage["judge_pairs"],
                "both": self.coverage["both"],
            },
            "kappa": self.labels["kappa"],
            "degenerate": self.degenerate,
            "measure": self.measure,
            "ranking": self.ranking,
            "means": self.means,
            "ppi": self.ppi,
            "alpha": self.alpha,
            "verdict": self.verdict,
            "thresholds": dict(THRESHOLDS),
            "published": dict(PUBLISHED),
            "notes": list(self.notes),
        }

    def __str__(self) -> str:
        return render_card(self)

    def __repr__(self) -> str:
        return f"JudgeCard({self.judge!r} against {self.human!r}: {self.verdict['text']})"

    def _rows(self) -> list[list[Any]]:
        rows = []
        for name, mm in self.means.items():
            p = self.ppi.get(name) or {}
            rows.append([name, mm["human"], mm["judge"], mm["judged"], p.get("mean"), p.get("low"), p.get("high")])
        return rows

    def _repr_html_(self) -> str:
        lab, r = self.labels, self.ranking or {}
        summary = [
            ["verdict", self.verdict["text"]],
            ["coverage", f"{self.coverage['both']} of {self.coverage['human_pairs']} pairs people labelled"],
            ["binarized kappa", (lab.get("kappa_binary") or {}).get("kappa")],
            ["ordinal alpha", lab.get("alpha_ordinal")],
            ["Kendall's tau", r.get("kendall_tau")],
        ]
        head = html_table(["", ""], summary, f"judge card: {self.judge} against {self.human}")
        if not self.means:
            return head
        pct = f"{100 * (1 - self.alpha):.0f}%"
        cols = ["run", "people", "judge", "judged", "PPI mean", f"{pct} low", f"{pct} high"]
        return head + html_table(cols, self._rows(), f"{self.measure} by run")

    def to_pandas(self) -> Any:
        """One row per run: ``run, people, judge, judged`` (the measure's mean under each side's labels
        and the share of its top ranks the judge labelled), ``ppi_mean, ppi_low, ppi_high`` (the
        prediction-powered estimate and its interval; NaN without one)."""
        pd = pandas("JudgeCard.to_pandas")
        cols = ["run", "people", "judge", "judged", "ppi_mean", "ppi_low", "ppi_high"]
        rows = [[float("nan") if v is None else v for v in row] for row in self._rows()]
        return pd.DataFrame(rows, columns=cols)


def _fmt(v: float | None, digits: int = 2) -> str:
    return "undefined" if v is None else f"{v:.{digits}f}"


def verdict(
    labels: dict[str, Any], degenerate: dict[str, Any], ranking: dict[str, Any] | None, coverage: dict[str, Any]
) -> dict[str, Any]:
    """The one-line verdict and why (thresholds in :data:`THRESHOLDS`, their sources in :data:`PUBLISHED`).

    Rejected outright: a degenerate judge; one that calls most of people's distractors relevant; a
    system tau below the threshold over enough runs. Labels agree when the binarized kappa reaches its
    threshold and the grades agree better than chance (ordinal alpha > 0). The ranking counts, either
    way, only over :data:`MIN_RUNS` runs or more (over 2 runs tau is +1 or -1 whatever the judge).

    >>> v = verdict({"kappa_binary": {"kappa": 0.5, "level": 2}, "alpha_ordinal": 0.6}, {"flag": False},
    ...             {"kendall_tau": 0.9, "runs": 8}, {"both": 400, "share": 1.0})
    >>> v["verdict"]
    'replace'
    >>> print(v["text"])
    can stand in for people's labels: binarized kappa 0.50 >= 0.42 and system tau 0.90 >= 0.83 (relevant: grade >= 2)
    """
    t = THRESHOLDS
    kb = labels.get("kappa_binary") or {}
    refs = bool(labels.get("positives_only"))
    kappa = None if refs else kb.get("kappa")
    alpha = None if refs else labels.get("alpha_ordinal")
    dis = labels.get("distractors") or {}
    tau = ranking.get("kendall_tau") if ranking else None
    runs = ranking["runs"] if ranking else 0
    fragile = []
    if coverage["both"] < _FEW_PAIRS:
        fragile.append(f"only {coverage['both']} pairs both label")
    if coverage.get("share") is not None and coverage["share"] < 0.5:
        fragile.append(f"the judge labelled {coverage['share']:.0%} of the pairs people labelled")
    lvl = f" (relevant: grade >= {kb['level']})" if kb.get("level") is not None else ""
    lvl_in = f"; relevant: grade >= {kb['level']}" if kb.get("level") is not None else ""
    k_txt = f"binarized kappa {_fmt(kappa)}"
    label_ok = None if kappa is None else kappa >= t["kappa_binary"] and (alpha is None or alpha > 0)
    k_why = f"{k_txt} {'>=' if kappa is not None and kappa >= t['kappa_binary'] else '<'} {t['kappa_binary']}"
    if kappa is not None and kappa >= t["kappa_binary"] and alpha is not None and alpha <= 0:
        k_why += f" but ordinal alpha {_fmt(alpha)} <= 0 (its grades agree no better than chance)"
    rank_ok = None if tau is None or runs < MIN_RUNS else tau >= t["tau"]
    few_runs = f"{runs} runs are too few to judge the ranking (tau {_fmt(tau)}; {MIN_RUNS} or more)" if ranking else ""
    no = "do not use in place of people's labels: "
    if degenerate.get("flag"):
        key, text = (
            "reject",
            f"{no}a degenerate judge (grade {degenerate['grade']} for {degenerate['share']:.0%} of its "
            f"{degenerate['judgments']} labels)",
        )
    elif dis.get("flag"):
        key, text = (
            "reject",
            f"{no}it calls {dis['called_relevant']} of people's {dis['pairs']} distractors (grade {dis['grade']}) "
            f"relevant ({dis['share']:.0%} >= {t['distractors']:.0%})",
        )
    elif rank_ok is False:
        key, text = "reject", f"{no}system tau {_fmt(tau)} < {t['tau']} over {runs} runs"
    elif rank_ok and label_ok:
        key, text = (
            "replace",
            f"can stand in for people's labels: {k_why} and system tau {_fmt(tau)} >= {t['tau']}{lvl}",
        )
    elif rank_ok:
        why = "label agreement cannot be measured on people's relevant-only labels" if refs else f"{k_why}{lvl}"
        key = "rank-only"
        text = f"compare systems with it, but its values are not people's: system tau {_fmt(tau)} >= {t['tau']}; {why}"
    elif label_ok is not None:
        check = f"; {few_runs}" if few_runs else "; give 5 or more runs to check the system ranking"
        key, text = (
            ("labels-only", f"labels agree like published LLM judges ({k_why}{lvl_in}){check}")
            if label_ok
            else ("reject", f"{no}its labels agree less than published LLM judges ({k_why}{lvl_in}){check}")
        )
    else:
        why = labels.get("kappa_binary_undefined") or "neither the binarized kappa nor the system tau is defined"
        key, text = "none", f"no verdict: {why}" + (f"; {few_runs}" if few_runs else "")
    if fragile:
        text += f" (fragile: {'; '.join(fragile)})"
    return {"verdict": key, "text": text, "fragile": fragile}


def _ranking_lines(card: JudgeCard) -> list[str]:
    r = card.ranking or {}
    sw = r["largest_swap"]
    tau = _fmt(r["kendall_tau"], 4)
    if r["kendall_tau"] is None:
        tau += " (a side gives every run the same value)"
    swap = (
        f"{sw['run']} (people's rank {sw['human_rank']:g}, the judge's {sw['judge_rank']:g})"
        if sw["by"] > 0
        else "none (the same ranks)"
    )
    out = [
        f"ranking      by {card.measure} over {r['runs']} runs: Kendall's tau {tau}, tau_AP {_fmt(r['tau_ap'], 4)}; "
        f"largest swap in the top {r['top']}: {swap}"
    ]
    pct = f"{100 * (1 - card.alpha):.0f}%"
    judged = next(iter(card.means.values()), {}).get("judged_label", "judged")
    out.append(
        f"{'run':<20} {'people':>8} {'judge':>8} {judged:>10} {'PPI mean':>9}  {pct + ' interval':<18}  people only"
    )
    for name, mm in card.means.items():
        p = card.ppi.get(name)
        est = (
            f"{p['mean']:>9.4f}  [{p['low']:.4f}, {p['high']:.4f}]  [{p['human_low']:.4f}, {p['human_high']:.4f}]"
            if p
            else f"{'-':>9}"
        )
        out.append(f"{name:<20} {mm['human']:>8.4f} {mm['judge']:>8.4f} {mm['judged']:>10.1%} {est}")
    if card.ppi:
        ps = list(card.ppi.values())
        methods = sorted({p["method"] for p in ps})
        lams = [p["lam"] for p in ps]
        counts = sorted({(p["labelled"], p["unlabelled"]) for p in ps})
        lam = f"{min(lams):.2f}" if max(lams) - min(lams) < 0.005 else f"{min(lams):.2f}-{max(lams):.2f}"
        out.append(
            "PPI          "
            + "; ".join(f"{a} queries labelled by people, {b} by the judge only" for a, b in counts)
            + f"; {', '.join(methods)}; judge weight lambda {lam}"
        )
    return out


def render_card(card: JudgeCard) -> str:
    """The card as text (the ``agreement`` command's table output)."""
    c, lab, sc = card.coverage, card.labels, card.scales
    out = [
        f"judge card: {card.judge} against {card.human}"
        + (f" (labels by {card.labelled_by})" if card.labelled_by else ""),
        f"verdict: {card.verdict['text']}",
        "",
        f"coverage     the judge labelled {c['both']} of the {c['human_pairs']} pairs people labelled"
        + (f" ({c['share']:.1%})" if c["share"] is not None else "")
        + f"; {c['judge_only']} judge labels have no human label; queries: {c['queries_both']} of {c['queries_human']}",
        f"scales       people: {sc['human']['name']}; judge: {sc['judge']['name']}; compared on {sc['common']['name']}"
        + (f" ({sc['how']})" if sc.get("how") else ""),
    ]
    d = card.degenerate
    if d.get("judgments"):
        if d["flag"]:
            tail = f" >= {THRESHOLDS['degenerate']:.0%}: DEGENERATE"
        elif d["share"] >= THRESHOLDS["degenerate"]:
            tail = " (too few labels to call the judge degenerate)"
        else:
            tail = f" (< {THRESHOLDS['degenerate']:.0%})"
        out.append(
            f"degenerate   commonest judge grade {d['grade']}: {d['share']:.1%} of {d['judgments']} labels{tail}"
        )
    k = lab["kappa"]
    kb = lab.get("kappa_binary") or {}
    len_ = lab.get("leniency") or {}
    if lab.get("positives_only"):
        out.append(f"labels       {lab['positives_only']}")
    else:
        used = [g for g, col in zip(k["grades"], zip(*k["confusion"])) if any(col)]
        if k["kappa"] is None:
            out.append(
                f"kappa        undefined (one grade is all anyone used; scikit-learn: NaN) on {k['pairs']} pairs; "
                f"exact agreement {k['exact_agreement']:.1%}"
            )
        else:
            why = f" (the judge used grade {used[0]} only: kappa is 0 by construction)" if len(used) == 1 else ""
            out.append(
                f"kappa        {_fmt(k['kappa'], 4)} (linear {_fmt(k['kappa_linear'], 4)}, quadratic "
                f"{_fmt(k['kappa_quadratic'], 4)}) on {k['pairs']} pairs{why}; exact agreement {k['exact_agreement']:.1%}"
            )
        if kb:
            out.append(
                f"binarized    kappa {_fmt(kb['kappa'], 4)} at grade >= {kb['level']} relevant"
                + (
                    f" ({lab['kappa_binary_undefined']})"
                    if kb["kappa"] is None and lab.get("kappa_binary_undefined")
                    else ""
                )
            )
        out.append(f"alpha        Krippendorff's ordinal alpha {_fmt(lab['alpha_ordinal'], 4)}")
    dis = lab.get("distractors")
    if dis:
        out.append(
            f"distractors  the judge calls {dis['called_relevant']} of people's {dis['pairs']} distractors (grade "
            f"{dis['grade']}) relevant ({dis['share']:.1%})"
            + (f" >= {THRESHOLDS['distractors']:.0%}: it takes distractors for evidence" if dis["flag"] else "")
        )
    if len_:
        ratio = "undefined (people call none relevant)" if len_["ratio"] is None else f"{len_['ratio']:.2f}"
        out.append(
            f"leniency     the judge calls {len_['judge_rate']:.1%} relevant where people call {len_['human_rate']:.1%}: {ratio}"
        )
    out.append("confusion    rows: people's grade, columns: the judge's")
    out.append("        " + "".join(f"{g:>7}" for g in k["grades"]))
    out.extend(f"{g:>7} " + "".join(f"{x:>7}" for x in row) for g, row in zip(k["grades"], k["confusion"]))
    if card.ranking is not None:
        out.extend(_ranking_lines(card))
    out.append("thresholds   (the verdict's, beside the published figures they come from)")
    rows = [
        (f"binarized kappa >= {THRESHOLDS['kappa_binary']}", PUBLISHED["kappa_binary"]),
        (f"system tau >= {THRESHOLDS['tau']}", PUBLISHED["tau"]),
        ("graded kappa", PUBLISHED["kappa_graded"]),
        (f"degenerate: one grade >= {THRESHOLDS['degenerate']:.0%}", "of the judge's labels (ctxeval's threshold)"),
        (
            f"distractors relevant < {THRESHOLDS['distractors']:.0%}",
            "people's grade-1 pairs on 1-5 (ctxeval's threshold)",
        ),
        ("ordinal alpha > 0", "grades better than chance (Krippendorff 2011)"),
        (f"runs >= {MIN_RUNS}", "for the ranking to count (over 2 runs tau is +1 or -1)"),
    ]
    out.extend(f"  {a:<32} {b}" for a, b in rows)
    out.extend(f"note: {n}" for n in card.notes)
    return "\n".join(out) + "\n"
