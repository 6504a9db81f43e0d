"""Chroma's chunking data (../shared/data/chroma-chunking): its recorded values, and where its
fixed-token chunker's windows truly lie (the README's diagnostics give the true position of every
chunk Chroma's placement moved to a first copy)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["expected", "true_windows"]


@cache
def expected(base: Path) -> dict[str, Any]:
    return json.loads((base / "expected.json").read_text(encoding="utf-8"))


def true_windows(exp: dict[str, Any], corpus: str, text: str, step: int = 1) -> list[tuple[int, int]]:
    """Every chunk's true [start, end) in ``text``: its start (Chroma's range, or the sequential one
    where the placement moved it); its end the start of the chunk ``step`` further on (the windows tile
    the text: 200/0 has step 1, 400/200 step 2), the text's end for the last, and Chroma's end for a
    window before it whose end no later start gives."""
    ranges = exp["chunks"][corpus]
    moved = {
        x["chunk"]: x["sequential"][0]
        for x in exp["chunk_mapping_diagnostics"][corpus]["mapped_not_at_sequential_position"]
    }
    starts = [moved.get(i, r[0]) for i, r in enumerate(ranges)]
    ends = [starts[i + step] if i + step < len(starts) else ranges[i][1] for i in range(len(starts))]
    ends[-1] = len(text)
    return list(zip(starts, ends))
