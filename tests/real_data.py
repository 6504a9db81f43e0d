"""Real data sets of other projects (TREC DL qrels, runs and texts) under ``shared/data/real``, found
as :mod:`shared_data` finds the shared folder (``../shared/data`` beside the repository, or where
``CTXEVAL_SHARED_DATA`` points). Never copied into the tree; a test that needs it skips, saying why,
when it is absent."""

from __future__ import annotations

from pathlib import Path

from shared_data import shared_data


def real(*parts: str) -> Path:
    """A path under ``shared/data/real``; skips the calling test when it is not there."""
    return shared_data("real", *parts)


def dl19_grades() -> dict[str, dict[str, int]]:
    """TREC DL 2019's NIST grades (0-3), by query then passage."""
    out: dict[str, dict[str, int]] = {}
    for line in real("dl19", "qrels.dl19-passage.txt").read_text().splitlines():
        q, _, d, g = line.split()
        out.setdefault(q, {})[d] = int(g)
    return out


def dl19_ranked(run: str) -> dict[str, list[str]]:
    """A DL19 run of ``dl19/runs`` (``bm25.top100.txt``, ...): each query's passages in rank order."""
    rows: dict[str, list[tuple[int, str]]] = {}
    for line in real("dl19", "runs", run).read_text().splitlines():
        q, _, d, rank, _, _ = line.split()
        rows.setdefault(q, []).append((int(rank), d))
    return {q: [d for _, d in sorted(v)] for q, v in rows.items()}


def dl19_texts() -> dict[str, str]:
    """The DL19 passages' texts by id (``dl19-text/passages.jsonl``; a file iterated ends lines at \\n)."""
    import json

    out = {}
    with open(real("dl19-text", "passages.jsonl"), encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            out[rec["id"]] = rec["text"]
    return out
