"""Serving-time context selection: apply a calibrated (K_max, τ) policy to one query's candidates.

This module imports numpy and the standard library only (no polars, click, rich or evaluation
machinery), so it can live in a serving process: ``from ctxeval import ContextSelector``.

The policy (written by ``ctxeval calibrate``, see :mod:`ctxeval._calibrate`):

1. rank the candidates as the evaluation does: score descending, compared as 32-bit floats
   (trec_eval's precision), ties broken by doc id descending (ids compared as strings, which for
   str ids is byte-wise UTF-8 order, as the evaluation compares them);
2. compute every candidate's relative score over the whole candidate list
   (:func:`ctxeval._core.relscore.relative_scores`: ``(s - s_min) / (s_max - s_min)``, 1.0 everywhere
   when all scores are equal; the same under any increasing affine change of the scores). Pass the
   candidate list of the depth you calibrated on: ``s_min`` is the list's lowest score;
3. keep the candidates in rank order while their relative score is ≥ τ, at most ``K_max`` of them;
4. with a budget of B tokens (a policy "pass 1,500 tokens", ``budget_tokens`` in the policy,
   ``policy_format`` 3): keep them in that order while their tokens (given per candidate, counted by
   the tokenizer the policy names) add up to at most B, and stop at the first that would exceed it
   (the ``stop`` rule of :mod:`ctxeval._core.budget`, the rule ``calibrate`` evaluated).

Because a relative score never increases down the ranking, step 3 is "drop those with relative
score < τ, keep at most K_max". The one exception is scores that tie as float32 but differ as
float64: there the doc id decides the order and a later passage can score a hair higher. The
selection then stops at the first passage below τ, exactly as ``calibrate`` evaluated it, so the
selected set is always a prefix of the ranking.

A selection holding the same candidate id twice is an :class:`~ctxeval.InputError` naming both
positions (a passage would take two prompt slots). Only the selected candidates are compared, in
O(K_max): a repeat below the cut changes nothing selected, and looking for it would cost more than
the selection.

Cost: O(n) for n candidates (one pass to check the order, one for the relative scores, and a
partial partition instead of a sort when the input is not already ranked; of the candidates tied
with the ``K_max``-th score a heap keeps the ones with the largest ids, and only ``K_max`` candidates
are ever sorted).
"""

from __future__ import annotations

import heapq
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ._core.ranking import RANKING_RULE, score_key
from ._core.relscore import RELATIVE_SCORE_RULE, relative_scores_one
from ._errors import ConfigError, FormatError, InputError

__all__ = ["BUDGET_FORMAT", "POLICY_FORMAT", "RANKING_RULE", "RELATIVE_SCORE_RULE", "ContextSelector"]

#: the version of the policy JSON layout; ``from_dict`` rejects other versions. 2: the relative score
#: is min-max within the candidate list (1 used s / s_max when every score was > 0); 3: a policy with a
#: budget of tokens (``budget_tokens``), which a reader of format 2 would ignore, so it is refused there
POLICY_FORMAT = 2
BUDGET_FORMAT = 3


class ContextSelector:
    """Select the passages to put into the prompt: the top candidates with relative score ≥ ``tau``,
    at most ``k_max`` of them (see the module docstring for the exact rule).

    >>> sel = ContextSelector(k_max=3, tau=0.5)
    >>> sel.select(["a", "b", "c", "d", "e"], [0.9, 0.2, 0.8, 0.7, 0.85])   # rel = (s - 0.2) / 0.7
    ['a', 'e', 'c']
    >>> sel.select(["x", "y", "z"], [0.0325, 0.0161, 0.0159])             # RRF-like scores
    ['x']
    >>> sel.select_indices(["p", "q", "r"], [-1.0, 3.0, 1.0]).tolist()     # (s + 1) / 4 = 0, 1, 0.5
    [1, 2]
    >>> sel.select([], [])
    []
    >>> ContextSelector(k_max=10, tau=0.0, budget=1500).select(["a", "b", "c"], [3, 2, 1], tokens=[900, 700, 100])
    ['a']
    """

    __slots__ = ("budget", "k_max", "policy", "tau")

    def __init__(
        self, k_max: int, tau: float, *, budget: int | None = None, policy: Mapping[str, Any] | None = None
    ) -> None:
        if isinstance(k_max, bool) or not isinstance(k_max, (int, np.integer)) or k_max < 1:
            raise ConfigError(f"policy: k_max must be a whole number >= 1, got {k_max!r}")
        number = not isinstance(tau, bool) and isinstance(tau, (int, float, np.floating))
        if not number or not math.isfinite(float(tau)) or not 0.0 <= float(tau) <= 1.0:
            raise ConfigError(f"policy: tau must be a number in [0, 1] (a relative score), got {tau!r}")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1):
            raise ConfigError(f"policy: budget_tokens must be a whole number >= 1, got {budget!r}")
        self.k_max = int(k_max)
        self.tau = float(tau)
        #: the budget of tokens (None: no budget)
        self.budget = None if budget is None else int(budget)
        #: the whole policy document it was loaded from (objective, cross-validation figures...), or {}
        self.policy: dict[str, Any] = dict(policy) if policy is not None else {}

    # --- loading -----------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ContextSelector:
        """From a policy mapping (the JSON object ``ctxeval calibrate`` writes)."""
        if not isinstance(d, Mapping):
            raise ConfigError(f"a policy must be a JSON object / mapping, got {type(d).__name__}")
        fmt = d.get("policy_format")
        if fmt == 1:
            raise ConfigError(
                "policy_format 1 was written by an earlier ctxeval whose relative score was s / s_max; its tau "
                f"means something else under this version's rule ({RELATIVE_SCORE_RULE}): run 'ctxeval calibrate' again"
            )
        if fmt not in (POLICY_FORMAT, BUDGET_FORMAT):
            raise ConfigError(
                f"policy_format must be {POLICY_FORMAT} or {BUDGET_FORMAT} (written by 'ctxeval calibrate'), got {fmt!r}"
            )
        for key in ("k_max", "tau", *(("budget_tokens",) if fmt == BUDGET_FORMAT else ())):
            if key not in d:
                raise ConfigError(f"the policy has no {key!r}")
        if fmt == POLICY_FORMAT and d.get("budget_tokens") is not None:
            raise ConfigError(f"a policy with budget_tokens is policy_format {BUDGET_FORMAT}, got {fmt!r}")
        return cls(d["k_max"], d["tau"], budget=d.get("budget_tokens"), policy=d)

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> ContextSelector:
        """From a policy file written by ``ctxeval calibrate -o policy.json``."""
        p = Path(path)
        if not p.exists():
            raise InputError(f"{p}: no such file (policy written by 'ctxeval calibrate -o')")
        if p.is_dir():
            raise InputError(f"{p}: is a directory, expected a policy JSON file")
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{p}: not UTF-8 text (byte {exc.start}); a policy is the JSON file 'ctxeval calibrate -o' writes"
            ) from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            lines = text.split("\n")  # the decoder counts lines at \n only
            line = lines[exc.lineno - 1].rstrip("\r") if 0 < exc.lineno <= len(lines) else None
            raise FormatError(str(p), exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})", line) from None
        try:
            return cls.from_dict(doc)
        except ConfigError as exc:
            raise ConfigError(f"{p}: {exc}") from None

    # --- selection ---------------------------------------------------------------------------------
    def select_indices(
        self, ids: Sequence[Any], scores: Sequence[float] | np.ndarray, tokens: Sequence[int] | None = None
    ) -> np.ndarray:
        """Positions (into ``ids``/``scores``) of the selected candidates, in rank order (``int64``);
        ``tokens``: each candidate's tokens, needed by a policy with a budget."""
        s = _scores(ids, scores)
        toks = _tokens(tokens, s.size, self.budget)
        n = s.size
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        s32 = score_key(s)
        k = min(self.k_max, n)
        if _ranked(ids, s32):
            top = np.arange(k, dtype=np.int64)
        else:
            top = _top(ids, s32, k)
        rel = relative_scores_one(s, top)
        below = np.flatnonzero(rel < self.tau)
        chosen = top[: int(below[0])] if below.size else top
        if toks is not None and self.budget is not None:
            over = np.flatnonzero(np.cumsum(toks[chosen]) > self.budget)
            chosen = chosen[: int(over[0])] if over.size else chosen
        _check_distinct(ids, chosen)
        return chosen

    def select(
        self, ids: Sequence[Any], scores: Sequence[float] | np.ndarray, tokens: Sequence[int] | None = None
    ) -> list[Any]:
        """The selected ids, in rank order."""
        return [ids[i] for i in self.select_indices(ids, scores, tokens).tolist()]

    def to_dict(self) -> dict[str, Any]:
        """The policy document (``from_dict(sel.to_dict())`` gives an equal selector)."""
        out = dict(self.policy)
        fmt = POLICY_FORMAT if self.budget is None else BUDGET_FORMAT
        out.update({"policy_format": fmt, "k_max": self.k_max, "tau": self.tau})
        if self.budget is not None:
            out["budget_tokens"] = self.budget
        return out

    def _key(self) -> tuple[int, float, int | None]:
        return self.k_max, self.tau, self.budget

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ContextSelector) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        budget = "" if self.budget is None else f", budget={self.budget}"
        return f"ContextSelector(k_max={self.k_max}, tau={self.tau!r}{budget})"


def _scores(ids: Sequence[Any], scores: Sequence[float] | np.ndarray) -> np.ndarray:
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("scores must be numbers (one per candidate id)") from None
    if s.ndim != 1:
        raise InputError(f"scores must be one-dimensional (one per candidate id), got shape {s.shape}")
    try:
        n_ids = len(ids)
    except TypeError:
        raise InputError(f"ids must be a sequence (list, tuple or array), got {type(ids).__name__}") from None
    if n_ids != s.size:
        raise InputError(f"got {n_ids} ids but {s.size} scores; give one score per candidate")
    finite = np.isfinite(s)
    if not bool(finite.all()):
        i = int(np.flatnonzero(~finite)[0])
        bad = int((~finite).sum())
        raise InputError(
            f"scores must be finite numbers: candidate {i} (id {ids[i]!r}) has score {float(s[i])!r}"
            + (f" ({bad} non-finite scores in all)" if bad > 1 else "")
        )
    return s


def _tokens(tokens: Sequence[int] | None, n: int, budget: int | None) -> np.ndarray | None:
    """Each candidate's tokens (whole numbers >= 0, one per candidate); required by a budget."""
    if tokens is None:
        if budget is not None:
            raise InputError(
                f"this policy passes at most {budget} tokens: give each candidate's tokens (tokens=[...], counted by "
                "the tokenizer the policy names)"
            )
        return None
    try:
        t = np.asarray(tokens, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("tokens must be whole numbers (one per candidate)") from None
    if t.ndim != 1 or t.size != n:
        raise InputError(f"got {t.size} token counts for {n} candidates; give one per candidate")
    if t.size and (not np.isfinite(t).all() or (t < 0).any() or (t != np.round(t)).any()):
        i = int(np.flatnonzero(~np.isfinite(t) | (t < 0) | (t != np.round(t)))[0])
        raise InputError(f"tokens must be whole numbers >= 0: candidate {i} has {tokens[i]!r}")
    return t.astype(np.int64)


def _check_distinct(ids: Sequence[Any], chosen: np.ndarray) -> None:
    """The chosen candidates' ids are distinct: a passage listed twice would take two prompt slots
    (and the evaluation that calibrated the policy rejects a repeated (query, doc) pair too). Ids are
    compared as Python values (unhashable ones as their strings)."""
    picked = [ids[i] for i in chosen.tolist()]
    try:
        if len(set(picked)) == len(picked):
            return
        keys: list[Any] = picked
    except TypeError:  # unhashable ids
        keys = [str(i) for i in picked]
        if len(set(keys)) == len(keys):
            return
    seen: dict[Any, int] = {}
    for at, key in enumerate(keys):
        pos = int(chosen[at])
        if key in seen:
            raise InputError(
                f"candidate id {ids[pos]!r} is given twice (positions {min(seen[key], pos)} and {max(seen[key], pos)}); "
                "pass each candidate once (e.g. keep the higher score of a passage that two retrievers returned)"
            )
        seen[key] = pos


def _ranked(ids: Sequence[Any], s32: np.ndarray) -> bool:
    """Are the candidates already in rank order (float32 score desc, then id desc)?"""
    a, b = s32[:-1], s32[1:]
    if bool(np.any(a < b)):
        return False
    return all(str(ids[i]) > str(ids[i + 1]) for i in np.flatnonzero(a == b).tolist())


def _top(ids: Sequence[Any], s32: np.ndarray, k: int) -> np.ndarray:
    """Positions of the first ``k`` candidates in rank order, without sorting the whole list: a
    partition finds the k-th largest score; the candidates scoring more (fewer than k) are kept, and
    of those tying with it only the ones with the largest ids are picked (a heap, O(n log k), however
    many tie); then these k are sorted (by score, then id)."""
    n = s32.size
    if k < n:
        kth = np.partition(s32, n - k)[n - k]
        above = np.flatnonzero(s32 > kth)
        tied = np.flatnonzero(s32 == kth)
        need = k - above.size
        if tied.size > need:
            tied = np.array(heapq.nlargest(need, tied.tolist(), key=lambda i: str(ids[i])), dtype=np.int64)
        cand = np.concatenate([above, tied])
    else:
        cand = np.arange(n, dtype=np.int64)
    keys = np.array([str(ids[i]) for i in cand.tolist()], dtype=str)
    order = np.lexsort((keys, s32[cand]))[::-1]
    return cand[order[:k]].astype(np.int64)
