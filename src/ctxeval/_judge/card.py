"""The judge card: how far a judge's labels can stand in for people's, with a one-line verdict whose
thresholds sit next to the published figures they come from.

What the card holds (built by :func:`ctxeval._judge.verbs.agreement`):

* **coverage**: of the (query, doc) pairs people labelled, the share the judge labelled too; a measure
  under the judge's labels rests on the judge's pairs only (unjudged docs count as not relevant).
* **labels**, on the pairs both label and one scale: Cohen's kappa (unweighted, linear, quadratic)
  with the confusion matrix, the kappa of labels binarized at a stated level (relevant = grade >=
  level), Krippendorff's ordinal alpha, and **leniency**: the judge's relevant rate over people's
  on those pairs (> 1: the judge calls more relevant).
* **degenerate judge**: the judge's grade distribution against people's: the information (entropy, in
  bits) its grades carry over the information people's do; under half, its labels tell next to
  nothing and the card says so whatever the other figures (:mod:`.verdict`).
* **ranking**: Kendall's tau and tau_AP between the runs' orders under either labelling, the largest
  swap among the top systems (:mod:`.agreement`); each run's mean under either labelling, the share of
  its top k the judge labelled, and the prediction-powered estimate of its mean with people's labels
  on a subset (:mod:`ctxeval._stats.ppi`); the **circularity** check: each run's rank under either
  labelling on the pairs both label, and the runs that rise under the judge's beyond the others
  (:mod:`.systems`).
* **against chance**: every figure beside what null judges (permuted, constant, random) get on the
  same pairs and runs; a figure they reach is "not informative here" (:mod:`.nulls`).

**Verdict**: every failing rule, each with its threshold and source (:mod:`.verdict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._json import fields
from .._show import html_table, pandas
from .systems import describe_flag
from .verdict import MIN_RUNS, PUBLISHED, THRESHOLDS, verdict

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
    chance: dict[str, Any] | None = None  #: the null judges' figures beside the judge's (:mod:`.nulls`)
    circularity: dict[str, Any] | None = None  #: per run, its rank under either labelling and the flag

    def to_dict(self) -> dict[str, Any]:
        return {
            **fields(self, "human", "judge", "labelled_by", "scales", "coverage", "labels"),
            # the flat keys earlier versions wrote
            "pairs": {
                "human": self.coverage["human_pairs"],
                "judge": self.coverage["judge_pairs"],
                "both": self.coverage["both"],
            },
            "kappa": self.labels["kappa"],
            **fields(
                self, "degenerate", "measure", "ranking", "means", "ppi", "alpha", "verdict", "chance", "circularity"
            ),
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


def _degenerate_line(d: dict[str, Any]) -> list[str]:
    if not d.get("judgments"):
        return []
    ratio = d.get("entropy_ratio")
    bits = f"; its grades carry {d['entropy_judge']:.2f} bits, people's {d['entropy_human']:.2f}" + (
        f" (ratio {ratio:.2f})" if ratio is not None else ""
    )
    low = ratio < THRESHOLDS["degenerate"] if ratio is not None else d["entropy_judge"] == 0.0
    if d["flag"]:
        tail = f" < {THRESHOLDS['degenerate']}: DEGENERATE" if ratio is not None else ": one grade only: DEGENERATE"
    elif low:
        tail = " (too few labels to call the judge degenerate)"
    else:
        tail = f" (>= {THRESHOLDS['degenerate']})" if ratio is not None else ""
    return [f"degenerate   commonest judge grade {d['grade']}: {d['share']:.1%} of {d['judgments']} labels{bits}{tail}"]


_FIGURES = {
    "kappa": "kappa",
    "kappa_binary": "binarized kappa",
    "alpha_ordinal": "ordinal alpha",
    "kendall_tau": "system tau",
    "tau_ap": "tau_AP",
    "largest_swap": "top swap",
}


def _chance_lines(chance: dict[str, Any] | None) -> list[str]:
    """The judge's figures beside the null judges' (95th percentile; 5th for the swap)."""
    if not chance:
        return []
    out = [
        f"chance       each figure beside null judges on the same pairs and runs ({chance['draws']} draws of the "
        f"permuted and random judges, seed {chance['seed']}; 95th percentile, 5th for the swap)",
        f"  {'figure':<16}{'judge':>8}{'permuted':>10}{'constant':>10}{'random':>9}  ",
    ]
    for part in ("labels", "ranking"):
        for key, row in (chance.get(part) or {}).items():
            nulls = row["nulls"]
            cells = "".join(
                f"{_fmt(nulls.get(k, {}).get('quantile')):>{w}}"
                for k, w in (("permuted", 10), ("constant", 10), ("random", 9))
            )
            if row["judge"] is None:
                said = "undefined"
            elif row["informative"]:
                said = "informative"
            else:
                need = row.get("pairs_needed") or row.get("topics_needed")
                unit = "pairs" if "pairs_needed" in row else "topics"
                said = "not informative here" + (f" (would be with about {need} {unit})" if need else "")
            out.append(f"  {_FIGURES.get(key, key):<16}{_fmt(row['judge']):>8}{cells}  {said}")
    return out


def _circularity_lines(circ: dict[str, Any] | None) -> list[str]:
    if not circ:
        return []
    out = [
        f"circularity  each run's rank under people's and the judge's labels on the {circ['pairs']} pairs both label "
        f"({circ['topics']} topics resampled {circ['resamples']} times; flagged: it gains more from the judge's labels "
        f"than the median run in {circ['level']:.1%} of the resamples and rises)"
    ]
    why = circ.get("cannot_tell")
    if why:
        out.append(f"  CANNOT TELL whether a run is fitted to the judge: {why}")
    for name, r in circ["runs"].items():
        lo, hi = r["rank_judge_interval"]
        flag = "  FLAGGED: may be fitted to the judge" if r["flag"] else ("  cannot tell" if why else "")
        out.append(
            f"  {name:<20} people {r['rank_human']:>4g}  judge {r['rank_judge']:>4g} [{lo:g}, {hi:g}]  "
            f"excess lift {r['excess_lift']:+.4f} (>= {r['excess_lift_low']:+.4f}){flag}"
        )
    out.extend(f"  {describe_flag(n, circ['runs'][n])}" for n in circ["flagged"])
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
    out.extend(_degenerate_line(card.degenerate))
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
    out.extend(_chance_lines(card.chance))
    out.extend(_circularity_lines(card.circularity))
    out.append("thresholds   (the verdict's, beside the published figures they come from)")
    rows = [
        (f"binarized kappa >= {THRESHOLDS['kappa_binary']}", PUBLISHED["kappa_binary"]),
        (f"system tau >= {THRESHOLDS['tau']}", PUBLISHED["tau"]),
        ("graded kappa", PUBLISHED["kappa_graded"]),
        (f"degenerate: entropy ratio < {THRESHOLDS['degenerate']}", PUBLISHED["degenerate"]),
        (f"distractors relevant < {THRESHOLDS['distractors']:.0%}", PUBLISHED["distractors"]),
        ("ordinal alpha > 0", PUBLISHED["alpha"]),
        ("informative", PUBLISHED["informative"]),
        (f"runs >= {MIN_RUNS}", "for the ranking to count (over 2 runs tau is +1 or -1)"),
    ]
    out.extend(f"  {a:<32} {b}" for a, b in rows)
    out.extend(f"note: {n}" for n in card.notes)
    return "\n".join(out) + "\n"
