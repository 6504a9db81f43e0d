"""The plain-Python reference engine: every fast path is checked against it.

``oracle`` ranks and joins a run and qrels by the rules written out directly: queries byte-wise
ascending, rows by float32 score descending then doc id descending (``ties="trec"``) or in file order
(``ties="input"``), the judged rows with their grades, every query's judged grades descending.
"""

from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["oracle"]


def oracle(run: pl.DataFrame, qrels: pl.DataFrame, missing: str, ties: str) -> dict[str, object]:
    judged: dict[str, dict[str, int]] = {}
    for q, d, g in qrels.iter_rows():
        judged.setdefault(q, {})[d] = g
    per_q: dict[str, list[tuple[int, str, float]]] = {}
    for i, (q, d, s) in enumerate(run.iter_rows()):
        per_q.setdefault(q, []).append((i, d, s))
    both = sorted(set(judged) & set(per_q), key=lambda s: s.encode())
    qids = sorted(judged, key=lambda s: s.encode()) if missing == "zero" else both
    r_off, j_idx, j_grade, q_off, q_grade = [0], [], [], [0], []
    for q in qids:
        rows = per_q.get(q, [])
        if ties == "trec":
            rows = sorted(rows, key=lambda r: r[1].encode(), reverse=True)  # doc id descending ...
            rows = sorted(rows, key=lambda r: -float(np.float32(r[2])))  # ... within float32 score descending
        for pos, (_, d, _) in enumerate(rows):
            if d in judged[q]:
                j_idx.append(r_off[-1] + pos)
                j_grade.append(judged[q][d])
        r_off.append(r_off[-1] + len(rows))
        grades = sorted(judged[q].values(), reverse=True)
        q_grade.extend(grades)
        q_off.append(q_off[-1] + len(grades))
    return {
        "qids": qids,
        "r_off": r_off,
        "j_idx": j_idx,
        "j_grade": j_grade,
        "q_off": q_off,
        "q_grade": q_grade,
        "has_run": [q in per_q for q in qids],
    }
