"""Plain-Python readings of the span measures, written from their definitions with sets of
characters (no atoms, no numpy): the oracle the vectorised kernels are checked against.

A span or chunk is ``(doc, start, end)``; a set of characters is a set of ``(doc, position)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

Span = tuple[str, int, int]


def chars(spans: Sequence[Span]) -> set[tuple[str, int]]:
    return {(d, i) for d, s, e in spans for i in range(s, e)}


def weight(cs: set[tuple[str, int]], w: Callable[[tuple[str, int]], float] | None = None) -> float:
    return float(len(cs)) if w is None else float(sum(w(c) for c in cs))


def exact(refs: Sequence[Span], context: Sequence[Span], w=None) -> dict[str, float]:
    r, c = chars(refs), chars(context)
    inter = weight(r & c, w)
    return {
        "recall": inter / weight(r, w) if weight(r, w) else math.nan,
        "precision": inter / weight(c, w) if weight(c, w) else 0.0,
        "iou": inter / weight(r | c, w) if weight(r | c, w) else 0.0,
    }


def chroma(refs: Sequence[Span], context: Sequence[Span]) -> dict[str, float]:
    """As chunking_evaluation's README describes its code: sums over the reference list and the
    retrieved list, unused reference characters per reference."""
    r, c = chars(refs), chars(context)
    inter = len(r & c)
    sum_ref = sum(e - s for _, s, e in refs)
    sum_ret = sum(e - s for _, s, e in context)
    unused = sum(len(chars([x]) - c) for x in refs)
    return {
        "recall": inter / sum_ref,
        "precision": inter / sum_ret if sum_ret else 0.0,
        "iou": inter / (sum_ret + unused) if sum_ret + unused else 0.0,
    }


def omega(refs: Sequence[Span], table: Sequence[Span], touching: bool, w=None) -> float:
    """|R ∩ ∪H| / |∪H ∪ R|, H the table's chunks sharing a character with R (or touching it)."""
    r = chars(refs)

    def near(ch: Span) -> bool:
        return any(
            ch[0] == d and (min(ch[2], e) > max(ch[1], s) or (touching and ch[1] <= e and ch[2] >= s))
            for d, s, e in refs
        )

    h = chars([ch for ch in table if near(ch)])
    den = weight(h | r, w)
    return weight(r & h, w) / den if den else 0.0


def units(refs: Sequence[tuple[str, int, int, int]]) -> list[tuple[int, set[tuple[str, int]]]]:
    """Evidence units by their definition: same-grade spans sharing a character merged (transitively),
    then each character owned by the highest grade covering it: (grade, owned characters) per unit."""
    groups: list[tuple[int, set[tuple[str, int]]]] = []
    for d, s, e, g in refs:
        cs = chars([(d, s, e)])
        merged = [u for u in groups if u[0] == g and u[1] & cs]
        for u in merged:
            groups.remove(u)
            cs |= u[1]
        groups.append((g, cs))
    out = []
    for g, cs in groups:
        owned = {c for c in cs if not any(g2 > g and c in cs2 for g2, cs2 in groups)}
        if owned:
            out.append((g, owned))
    return out


def span_gains(
    refs: Sequence[tuple[str, int, int, int]], ranking: Sequence[Span], gain: Callable[[int], float]
) -> list[float]:
    """Each ranked chunk's new evidence: Σ_u gain(g_u) · |owned(u) ∩ chunk \\ earlier chunks| / |owned(u)|."""
    us = units(refs)
    seen: set[tuple[str, int]] = set()
    out = []
    for ch in ranking:
        cs = chars([ch]) - seen
        out.append(sum(gain(g) * len(owned & cs) / len(owned) for g, owned in us))
        seen |= chars([ch])
    return out


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))
