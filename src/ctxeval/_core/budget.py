"""The context a budget of B tokens holds: a run's ranked chunks packed in rank order.

The chunks of a query's ranking enter in order while the budget allows. The rule for the first chunk
that does not fit (its tokens exceed what is left):

* ``stop`` (the default): leave it out and stop. The context is the longest prefix of the ranking
  that fits. This is how a RAG prompt is usually packed: walk the ranked chunks, add each while the
  running token count stays within the budget, break at the first that would exceed it (the
  packing loop of OpenAI's cookbook "Question answering using embeddings"; LangChain's and
  LlamaIndex's token-limited retrievers and memory buffers likewise keep a prefix). It never lets a
  lower-ranked chunk displace what the ranker put first.
* ``skip``: leave it out and go on: every later chunk that still fits enters (first fit). The context
  is no longer a prefix, and a long chunk ranked high can let short lower-ranked ones in instead.

(A third rule, cutting the chunk to the tokens left, is not offered: which part of a cut chunk
holds its evidence is unknown to chunk-id labels, and a prompt cut mid-chunk is rarely what a team
ships.) Positions in the context are 1, 2, ... in rank order, whichever rows were left out.
"""

from __future__ import annotations

import re

import numpy as np

from .segments import offsets

__all__ = ["OVERFLOW_RULES", "budget_caps", "budget_grid", "number_list", "pack"]

OVERFLOW_RULES = ("stop", "skip")


def pack(r_off: np.ndarray, tokens: np.ndarray, budget: int, rule: str = "stop") -> np.ndarray:
    """Mask over the ranked rows (queries by ``r_off``, rows in rank order): in the context of
    ``budget`` tokens under ``rule`` (see the module docstring).

    >>> off, tok = np.array([0, 4]), np.array([3, 5, 1, 1])
    >>> pack(off, tok, 5).tolist(), pack(off, tok, 5, "skip").tolist()
    ([True, False, False, False], [True, False, True, True])
    """
    tokens = np.asarray(tokens, dtype=np.int64)
    if rule == "stop":
        n = np.diff(r_off)
        cum = np.cumsum(tokens)
        cum -= np.repeat(np.r_[0, cum][r_off[:-1]], n)
        return cum <= budget
    if rule != "skip":
        raise ValueError(f"overflow rule must be one of {', '.join(OVERFLOW_RULES)}, got {rule!r}")
    n = np.diff(r_off)
    keep = np.zeros(tokens.size, dtype=bool)
    left = np.full(n.size, budget, dtype=np.int64)
    for pos in range(int(n.max()) if n.size else 0):
        q = np.flatnonzero(n > pos)
        rows = r_off[q] + pos
        fits = tokens[rows] <= left[q]
        keep[rows[fits]] = True
        left[q[fits]] -= tokens[rows[fits]]
    return keep


def context_sizes(keep: np.ndarray, r_off: np.ndarray) -> np.ndarray:
    """Per query: the rows in the context."""
    seg = np.repeat(np.arange(r_off.size - 1), np.diff(r_off))
    return np.bincount(seg[keep], minlength=r_off.size - 1).astype(np.int64)


def context_offsets(keep: np.ndarray, r_off: np.ndarray) -> np.ndarray:
    return offsets(context_sizes(keep, r_off))


def budget_caps(r_off: np.ndarray, tokens: np.ndarray, budgets: list[int]) -> np.ndarray:
    """``int64[n_q, len(budgets)]``: how many leading rows of each query fit each budget under the
    ``stop`` rule (the context :func:`pack` gives is that prefix).

    >>> budget_caps(np.array([0, 3, 4]), np.array([3, 5, 1, 9]), [4, 8, 9]).tolist()
    [[1, 2, 3], [0, 0, 1]]
    """
    n = np.diff(r_off)
    seg = np.repeat(np.arange(n.size), n)
    cum = np.cumsum(np.asarray(tokens, dtype=np.int64))
    cum -= np.repeat(np.r_[0, cum][r_off[:-1]], n)
    out = np.empty((n.size, len(budgets)), dtype=np.int64)
    for j, b in enumerate(budgets):
        out[:, j] = np.bincount(seg[cum <= b], minlength=n.size)
    return out


def number_list(text: str) -> list[int] | None:
    """``"a:b"`` / ``"a:b:step"`` (a to b inclusive) or ``"a,b,c"`` as whole numbers; None for anything else.

    >>> number_list("2:8:3"), number_list("5, 1"), number_list("x")
    ([2, 5, 8], [5, 1], None)
    """
    m = re.fullmatch(r"(\d+):(\d+)(?::(\d+))?", text.strip())
    if m:
        lo, hi, step = int(m[1]), int(m[2]), int(m[3] or 1)
        return list(range(lo, hi + 1, step)) if step >= 1 else []
    if re.fullmatch(r"\d+(\s*,\s*\d+)*", text.strip()):
        return [int(x) for x in text.split(",")]
    return None


def budget_grid(spec: str) -> list[int] | None:
    """The budgets of a policy's grid from a spec ending in ``tok``: ``"256:4096:256tok"`` (from, to,
    step), ``"512,1024,2048tok"``, or ``"4096tok"`` (32 equal steps up to it); None for a spec without
    ``tok`` (a number of passages).

    >>> budget_grid("256:1024:256tok"), budget_grid("64tok")[:3], budget_grid("20")
    ([256, 512, 768, 1024], [2, 4, 6], None)
    """
    text = spec.strip()
    if not text.endswith("tok"):
        return None
    text = text[: -len("tok")].strip()
    if text.isdigit():
        top = int(text)
        step = max(1, -(-top // 32))
        out = list(range(step, top + 1, step))
        out = out if out and out[-1] == top else [*out, top]
    else:
        out = number_list(text) or []
    if not out or min(out) < 1:
        raise ValueError(f"budgets look like 4096tok, 512,1024,2048tok or 256:4096:256tok, got {spec!r}")
    return sorted(set(out))
