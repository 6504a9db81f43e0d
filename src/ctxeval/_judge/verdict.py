"""The judge card's verdict: every rule, its threshold and where the threshold comes from, and every
rule that fails, listed (not only the first).

Rules (thresholds in :data:`THRESHOLDS`, sources in :data:`PUBLISHED`):

* **degenerate**: the judge's grades carry less than half the information people's do: the entropy
  (bits) of its grade distribution over less than 0.5 times people's, on the scale both are compared
  on (ctxeval's threshold); a judge that answers one grade to nearly everything tells nothing, whatever
  the share of that grade. Needs 10 labels or more.
* **distractors**: on RA-nWG's 1-5 scale, a judge that calls half or more of people's distractors
  (grade 1) relevant (ctxeval's threshold; those chunks hurt a RAG system most).
* **binarized kappa >= 0.42**: LLMJudge, TREC DL 2023 (Rahmani et al. 2024): 0.42-0.43; Thomas et
  al. 2024 (SIGIR): 0.64. On four-level labels the same judges reached 0.06-0.29: printed, never gated.
* **ordinal alpha > 0**: the grades agree better than chance (Krippendorff 2011).
* **system tau >= 0.83** over 5 runs or more: the lowest of the LLMJudge judges (0.83-0.95).
* **informative**: a figure a null judge reaches (:mod:`.nulls`) says nothing about the judge on
  these pairs and runs: the binarized kappa and the system tau count only when informative.

Verdict: *reject* when the judge is degenerate, takes distractors for evidence, or its tau is below
the threshold; *replace* when the ranking and the labels both pass; *rank-only* when the ranking
passes and the labels do not; *labels-only* when the labels pass and the ranking cannot be judged
(too few runs, or not informative); *reject* when the labels fail and the ranking cannot save them;
*none* when nothing can be measured.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["FEW_PAIRS", "MIN_RUNS", "PUBLISHED", "THRESHOLDS", "verdict"]

#: the verdict's thresholds (see the module docstring)
THRESHOLDS = {"kappa_binary": 0.42, "tau": 0.83, "degenerate": 0.5, "distractors": 0.5}

#: fewer runs than this: the system ranking is not judged (tau moves in steps of 4 / (N (N - 1)))
MIN_RUNS = 5

#: published figures the thresholds come from, printed beside them
PUBLISHED = {
    "kappa_binary": "LLMJudge, TREC DL 2023 (Rahmani et al. 2024): 0.42-0.43; Thomas et al. 2024 (SIGIR): 0.64",
    "kappa_graded": "LLMJudge, TREC DL 2023, four-level labels: 0.06-0.29 (for context; not a threshold)",
    "tau": "LLMJudge, TREC DL 2023: system ranking tau 0.83-0.95",
    "degenerate": "ctxeval's threshold on the judge's grade entropy over people's",
    "distractors": "people's grade-1 pairs on 1-5 (ctxeval's threshold)",
    "alpha": "grades better than chance (Krippendorff 2011)",
    "informative": "above what null judges get on the same pairs and runs (ctxeval)",
}

FEW_PAIRS = 50  # fewer pairs both label than this: kappa is fragile


def _fmt(v: float | None, digits: int = 2) -> str:
    return "undefined" if v is None else f"{v:.{digits}f}"


def _not_informative(what: str, value: float | None, row: Mapping[str, Any], needed: str) -> str:
    by = row.get("reached_by", [])
    parts = []
    for kind in by:
        x = row["nulls"][kind]
        q = x["quantile"]
        parts.append(
            f"a constant judge gets {_fmt(q)}"
            if kind == "constant"
            else f"a {kind} judge {_fmt(q)} (95th percentile of {x['draws']} draws)"
        )
    return f"{what} {_fmt(value)} is not informative here ({'; '.join(parts)}){needed}"


def verdict(
    labels: dict[str, Any],
    degenerate: dict[str, Any],
    ranking: dict[str, Any] | None,
    coverage: dict[str, Any],
    chance: Mapping[str, Any] | None = None,
    circularity: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The verdict and every failing rule (see the module docstring). ``chance``: the null judges'
    figures (``{"labels": {...}, "ranking": {...}}``, :mod:`.nulls`), when computed; ``circularity``:
    the circularity check (:mod:`.systems`), whose flagged runs the verdict names.

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
    lab_chance = (chance or {}).get("labels") or {}
    rank_chance = (chance or {}).get("ranking") or {}
    fragile = []
    if coverage["both"] < FEW_PAIRS:
        fragile.append(f"only {coverage['both']} pairs both label")
    if coverage.get("share") is not None and coverage["share"] < 0.5:
        fragile.append(f"the judge labelled {coverage['share']:.0%} of the pairs people labelled")
    lvl = f" (relevant: grade >= {kb['level']})" if kb.get("level") is not None else ""
    lvl_in = f"; relevant: grade >= {kb['level']}" if kb.get("level") is not None else ""
    fails: list[str] = []  # the rules that reject the judge outright
    label_fails: list[str] = []
    rank_open: list[str] = []  # why the ranking cannot be judged
    if degenerate.get("flag"):
        ratio = degenerate.get("entropy_ratio")
        why = (
            f": its grades carry {ratio:.2f} of the information people's do, < {t['degenerate']} "
            f"({PUBLISHED['degenerate']})"
            if ratio is not None
            else ": it used one grade only"
        )
        fails.append(
            f"a degenerate judge (grade {degenerate['grade']} for {degenerate['share']:.0%} of its "
            f"{degenerate['judgments']} labels){why}"
        )
    if dis.get("flag"):
        fails.append(
            f"it calls {dis['called_relevant']} of people's {dis['pairs']} distractors (grade {dis['grade']}) "
            f"relevant ({dis['share']:.0%} >= {t['distractors']:.0%})"
        )
    tau_row: Mapping[str, Any] = rank_chance.get("kendall_tau") or {}
    tau_informative = bool(tau_row.get("informative", True))
    rank_ok: bool | None = None
    if ranking:
        if runs < MIN_RUNS:
            rank_open.append(f"{runs} runs are too few to judge the ranking (tau {_fmt(tau)}; {MIN_RUNS} or more)")
        elif tau is not None and tau < t["tau"]:
            fails.append(f"system tau {_fmt(tau)} < {t['tau']} over {runs} runs ({PUBLISHED['tau']})")
            rank_ok = False
        elif tau is not None and not tau_informative:
            need = tau_row.get("topics_needed")
            more = (
                f"; it would be with about {need} topics"
                if need
                else "; more topics would not make it so: judge deeper, so that the runs' top ranks are labelled"
            )
            rank_open.append(_not_informative("system tau", tau, tau_row, more))
        elif tau is not None:
            rank_ok = True
    k_why = f"binarized kappa {_fmt(kappa)} {'>=' if kappa is not None and kappa >= t['kappa_binary'] else '<'} {t['kappa_binary']}"
    label_ok: bool | None = None
    if kappa is not None:
        label_ok = kappa >= t["kappa_binary"]
        if not label_ok:
            label_fails.append(
                f"its labels agree less than published LLM judges ({k_why}{lvl_in}; {PUBLISHED['kappa_binary']})"
            )
        if alpha is not None and alpha <= 0:
            label_ok = False
            label_fails.append(f"ordinal alpha {_fmt(alpha)} <= 0 (its grades agree no better than chance)")
        kb_row = lab_chance.get("kappa_binary")
        if label_ok and kb_row is not None and not kb_row.get("informative", True):
            label_ok = False
            need = kb_row.get("pairs_needed")
            label_fails.append(
                _not_informative(
                    "binarized kappa", kappa, kb_row, f"; it would be with about {need} pairs" if need else ""
                )
            )
    no = "do not use in place of people's labels: "
    if fails or (label_ok is False and rank_ok is not True):
        key, text = "reject", no + "; ".join(fails + label_fails + rank_open)
    elif rank_ok and label_ok:
        key = "replace"
        text = f"can stand in for people's labels: {k_why} and system tau {_fmt(tau)} >= {t['tau']}{lvl}"
    elif rank_ok:
        why = (
            "label agreement cannot be measured on people's relevant-only labels"
            if refs
            else "; ".join(label_fails) or f"{k_why}{lvl}"
        )
        key = "rank-only"
        text = f"compare systems with it, but its values are not people's: system tau {_fmt(tau)} >= {t['tau']}; {why}"
    elif label_ok:
        check = f"; {'; '.join(rank_open)}" if rank_open else "; give 5 or more runs to check the system ranking"
        key, text = "labels-only", f"labels agree like published LLM judges ({k_why}{lvl_in}){check}"
    else:
        why = labels.get("kappa_binary_undefined") or "neither the binarized kappa nor the system tau is defined"
        key, text = "none", f"no verdict: {why}" + (f"; {'; '.join(rank_open)}" if rank_open else "")
    flagged = list((circularity or {}).get("flagged") or [])
    if flagged:
        text += f"; {', '.join(flagged)} may be fitted to the judge (they rise under its labels beyond the others)"
    if (circularity or {}).get("cannot_tell"):
        text += "; whether a run is fitted to the judge cannot be told (its grades barely vary)"
    if fragile:
        text += f" (fragile: {'; '.join(fragile)})"
    return {"verdict": key, "text": text, "fragile": fragile, "failing": fails + label_fails + rank_open}
