"""The answers of ``ctxeval chunking``: at each budget, the chunker that beats every other, or "cannot
tell" and why (:mod:`.model` states the rule); the headline; what the equal-K view shows."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._compare.model import Report
from .._compare.settings import Stats
from .._measures import Measure
from .model import ChunkerRow, Verdict

__all__ = ["at_k_text", "headline", "verdicts"]

#: the equal-K view says that K compares unlike contexts when their mean tokens differ this much
UNLIKE = 1.5


def _p(x: float) -> str:
    return "NA" if math.isnan(x) else f"{x:.2g}" if x < 0.001 else f"{x:.3f}"


def _pair(report: Report, a: str, b: str, m: Measure) -> tuple[float, float, float, bool, int, int, int]:
    """a against b on ``m``: a's mean minus b's, p, adjusted p, significant, and the questions where a
    is better / equal / worse (in the measure's direction)."""
    for c in report.comparisons:
        if c.measure != m:
            continue
        if (c.run, c.against or report.baseline) == (a, b):
            return c.diff, c.p_value, c.p_adjusted, c.significant, c.wins, c.ties, c.losses
        if (c.run, c.against or report.baseline) == (b, a):
            return -c.diff, c.p_value, c.p_adjusted, c.significant, c.losses, c.ties, c.wins
    raise KeyError(f"no comparison of {a} and {b} on {m}")  # pragma: no cover - compare tests every pair


def verdicts(
    rows: Sequence[ChunkerRow], grid: Sequence[int], asked: Sequence[Measure], report: Report, cfg: Stats
) -> list[Verdict]:
    """One :class:`Verdict` per budget of ``grid``."""
    names = [r.name for r in rows]
    family = len(report.comparisons)
    out = []
    for j, (b, m) in enumerate(zip(grid, asked)):
        sign = 1.0 if m.spec.higher_is_better else -1.0
        means = {r.name: r.curve[j] for r in rows}
        order = sorted(names, key=lambda n: (math.isnan(means[n]), -sign * means[n], names.index(n)))
        best = order[0]
        if len(order) == 1:
            out.append(Verdict(b, None, best, None, None, None, f"only one chunker ({best}): nothing to compare"))
            continue
        lost = None
        for other in order[1:]:
            diff, p, padj, sig, w, t, l_ = _pair(report, best, other, m)
            if not (sig and sign * diff > 0):
                lost = (other, diff, p, padj, w, t, l_)
                break
        if lost is None:
            second = order[1]
            diff, _, padj, *_ = _pair(report, best, second, m)
            text = (
                f"{best} at {b} tokens: {m} {means[best]:.4f}, ahead of {second} by {diff:+.4f} (adjusted p = "
                f"{_p(padj)}) and significantly ahead of every other chunker"
            )
            out.append(Verdict(b, best, best, second, diff, padj, text))
            continue
        other, diff, p, padj, w, t, l_ = lost
        out.append(
            Verdict(
                b,
                None,
                best,
                other,
                diff,
                padj,
                f"cannot tell at {b} tokens: " + _why(best, other, m, lost, family, cfg),
            )
        )
    return out


def _why(best: str, other: str, m: Measure, lost: tuple[Any, ...], family: int, cfg: Stats) -> str:
    _, diff, p, padj, w, t, l_ = lost
    differ = w + l_
    if differ == 0:
        return f"{best} and {other} score the same {m} on every question"
    if cfg.test in ("randomization", "wilcoxon") and family * 2.0 ** (1 - differ) >= cfg.alpha:
        return (
            f"only {differ} questions tell {best} and {other} apart on {m}: no paired test over so few can reach "
            f"alpha = {cfg.alpha:g} after {cfg.correction} over {family} tests (the smallest two-sided p over "
            f"{differ} differences is 2/2^{differ})"
        )
    return (
        f"{best} leads {other} on {m} by {diff:+.4f}, not significantly (p = {_p(p)}, adjusted {_p(padj)} over "
        f"{family} tests; {w}/{t}/{l_} questions better/equal/worse)"
    )


def headline(found: Sequence[Verdict], focus: Sequence[int], measure: str) -> str:
    """The answer: the verdict at the budget asked, or over the budgets."""
    asked = [v for v in found if v.budget in set(focus)]
    if len(asked) == 1:
        return asked[0].text
    winners = {v.winner for v in asked}
    if len(winners) == 1 and None not in winners:
        (w,) = winners
        return (
            f"{w} at every budget from {asked[0].budget} to {asked[-1].budget} tokens: significantly ahead of every "
            f"other chunker on {measure} at each"
        )
    parts = [f"{v.budget}: {v.winner or 'cannot tell'}" for v in asked]
    return f"{measure} by budget (tokens): " + "; ".join(parts)


def at_k_text(rows: Sequence[ChunkerRow], k: int, measure: str) -> str:
    """What the equal-K view shows: who leads at K chunks, and how many tokens each chunker's K hold."""
    top = max((r.at_k for r in rows if not math.isnan(r.at_k)), default=math.nan)
    leads = [r.name for r in rows if not math.isnan(top) and abs(r.at_k - top) <= 1e-12]
    pool = [r for r in rows if r.name in leads] if len(leads) > 1 else list(rows)
    big = max(pool, key=lambda r: r.tokens_at_k)
    small = min(pool, key=lambda r: r.tokens_at_k)
    text = f"at K={k} chunks {' and '.join(leads) or 'no chunker'} lead{'s' if len(leads) == 1 else ''} ({measure}@{k} {top:.4f})"
    if small.tokens_at_k > 0 and big.tokens_at_k / small.tokens_at_k >= UNLIKE:
        text += (
            f", but the top {k} chunks hold {big.tokens_at_k:.0f} tokens on average for {big.name} against "
            f"{small.tokens_at_k:.0f} for {small.name} ({big.tokens_at_k / small.tokens_at_k:.1f}x): equal K compares "
            "contexts of unlike sizes and rewards big chunks; compare at equal budgets"
        )
    else:
        text += f"; the chunkers' top {k} hold contexts of like sizes ({small.tokens_at_k:.0f} to {big.tokens_at_k:.0f} tokens)"
    return text
