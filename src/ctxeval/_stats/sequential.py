"""Anytime-valid confidence sequences for a mean, and the decisions they settle: labelling that stops
as soon as a compare or gate decision is settled, with its error held at every look.

**The confidence sequence** is Lai's (1976) for a Gaussian mean with unknown variance, the mixture
that is a martingale in the scale-invariant filtration (Wang & Ramdas, "Anytime-valid t-tests and
confidence sequences for Gaussian means with unknown variance", 2023). With d_1 .. d_n the per-query
changes seen so far, S = Σ (d_i − μ), V = Σ (d_i − μ)² and c² the prior's precision (in queries),

    M_n(μ) = √(c² / (n + c²)) · (1 − S² / ((n + c²) V))^(−n/2)

is a nonnegative martingale with M_1 = 1 when μ is the true mean; by Ville's inequality
P(∃ n: M_n(μ) ≥ 1/α) ≤ α. The confidence sequence is {μ : M_n(μ) < 1/α}: with x̄ the mean,
Q = Σ (d_i − x̄)², R = ((n + c²) / (c² α²))^(1/n) and r = 1 − 1/R, it is x̄ ± h with

    h² = r (n + c²) Q / (n (n − r (n + c²)))   when n > r (n + c²), else the whole line.

Every interval holds at once, at every n, so a decision may be taken at any look, as often as one
likes, and its error stays at most α (the t-test of a fixed plan holds only at its planned n). c² is
set so that the sequence is tightest near ``tuned_for`` queries: c² = tuned_for / (2 log(1/α) + 1)
(the normal mixture's optimum, Howard, Ramdas, McAuliffe & Sekhon, "Time-uniform, nonparametric,
nonasymptotic confidence sequences", Ann. Statist. 2021, section 3.5). The changes are taken as
Gaussian; per-query changes of IR measures are bounded and often skewed, and ``bench/sequential.py``
measures the error on 10,000 A/A comparisons of real changes.

**The decisions** (:class:`Rule`):

* *compare* (two-sided, level α): the candidate is better when the interval is above 0, worse when it
  is below 0; given ``effect``, no difference of that size or more when the interval lies inside
  (−effect, effect).
* *gate* (the regression gate's one-sided question at tolerated drop δ = ``margin``): it fails when
  the interval (at level 2α, each side then holding α) is below −δ, it passes when it is above −δ.

>>> import numpy as np
>>> lo, hi = t_mixture_cs(np.array([0.1, 0.3, 0.2, 0.25, 0.15]), alpha=0.05, tuned_for=5)
>>> bool(np.isinf(lo[0])), bool(lo[-1] < 0.2 < hi[-1])
(True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Rule", "decide", "first_decision", "t_mixture_cs"]


def t_mixture_cs(d: np.ndarray, alpha: float, tuned_for: float) -> tuple[np.ndarray, np.ndarray]:
    """Lai's confidence sequence over the prefixes of ``d`` (the last axis): the lower and upper ends
    after 1, 2, .. n changes (-inf and inf while it is the whole line). ``d`` may be (n,) or
    (reps, n)."""
    x = np.asarray(d, dtype=float)
    n = np.arange(1, x.shape[-1] + 1, dtype=float)
    mean = np.cumsum(x, axis=-1) / n
    q = np.maximum(np.cumsum(x * x, axis=-1) - n * mean * mean, 0.0)
    c2 = max(float(tuned_for), 1.0) / (2.0 * math.log(1.0 / alpha) + 1.0)
    logr = (np.log(n + c2) - math.log(c2) - 2.0 * math.log(alpha)) / n
    r = -np.expm1(-logr)  # 1 - 1/R, accurate when R is near 1
    room = n - r * (n + c2)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.sqrt(r * (n + c2) * q / (n * room))
    h = np.where(room > 0, h, np.inf)
    return mean - h, mean + h


@dataclass(frozen=True)
class Rule:
    """A decision to settle: ``compare`` (is the candidate better or worse; given ``effect``, or is
    there no difference of that size) or ``gate`` (does it drop by more than ``margin``), at ``alpha``."""

    kind: str = "compare"
    alpha: float = 0.05
    margin: float = 0.0
    effect: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("compare", "gate"):
            raise ValueError(f"rule must be compare or gate, got {self.kind!r}")
        if not 0.0 < self.alpha < 0.5:
            raise ValueError(f"alpha must be in (0, 0.5), got {self.alpha!r}")
        if self.margin < 0 or (self.effect is not None and self.effect <= 0):
            raise ValueError("margin must be >= 0 and effect > 0")

    @property
    def level(self) -> float:
        """The level of the confidence sequence the rule reads (2 alpha for the gate's one side)."""
        return self.alpha if self.kind == "compare" else 2.0 * self.alpha


def decide(lo: float, hi: float, rule: Rule) -> str | None:
    """The decision an interval settles, or None.

    >>> decide(0.01, 0.2, Rule()), decide(-0.2, 0.3, Rule()), decide(-0.02, 0.03, Rule(effect=0.05))
    ('better', None, 'no difference')
    >>> decide(-0.2, -0.05, Rule("gate", margin=0.02)), decide(-0.01, 0.1, Rule("gate", margin=0.02))
    ('fail', 'pass')
    """
    if rule.kind == "gate":
        return "fail" if hi < -rule.margin else "pass" if lo > -rule.margin else None
    if lo > 0:
        return "better"
    if hi < 0:
        return "worse"
    if rule.effect is not None and lo > -rule.effect and hi < rule.effect:
        return "no difference"
    return None


def first_decision(d: np.ndarray, rule: Rule, tuned_for: float) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``d`` (reps, n): the number of changes seen when a decision was first settled
    (n + 1 when none was) and its code (0 none, 1 better / pass, -1 worse / fail, 2 no difference)."""
    lo, hi = t_mixture_cs(np.atleast_2d(d), rule.level, tuned_for)
    if rule.kind == "gate":
        codes = np.where(hi < -rule.margin, -1, np.where(lo > -rule.margin, 1, 0))
    else:
        codes = np.where(lo > 0, 1, np.where(hi < 0, -1, 0))
        if rule.effect is not None:
            codes = np.where((codes == 0) & (lo > -rule.effect) & (hi < rule.effect), 2, codes)
    hit = codes != 0
    any_hit = hit.any(axis=1)
    first = np.where(any_hit, hit.argmax(axis=1), codes.shape[1])
    code = np.where(any_hit, codes[np.arange(codes.shape[0]), np.minimum(first, codes.shape[1] - 1)], 0)
    return first + 1, code
