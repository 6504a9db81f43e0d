"""Run names made distinct, and a command's notes said once.

Every engine names a run by one rule (the name given, else the one tag used throughout its file, else
the file's name); :func:`unique_names` makes the names of several runs distinct, :func:`once` and
:func:`merge_notes` say each note once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = ["Named", "merge_notes", "naming_notes", "once", "unique_names"]


class Named(Protocol):
    """What naming reads of a run: its name (given, else its tag, else its file) and its source."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> str: ...


def unique_names(runs: Sequence[Named]) -> list[str]:
    """Run names made distinct: runs that share a name (often a tag such as ``rank`` used by every
    run of a system) take their file names instead when those differ (:func:`naming_notes` says so);
    whatever still repeats gets ``#2``, ``#3`` ..."""
    names = [r.name for r in runs]
    out = list(names)
    for name in dict.fromkeys(names):
        at = [i for i, x in enumerate(names) if x == name]
        stems = [_file_stem(runs[i]) for i in at]
        others = set(names) - {name}
        if len(at) > 1 and all(stems) and len(set(stems)) == len(stems) and not set(stems) & others:
            for i, stem in zip(at, stems):
                out[i] = stem  # type: ignore[assignment]
    seen: dict[str, int] = {}
    final = []
    for n in out:
        k = seen.get(n, 0) + 1
        seen[n] = k
        final.append(n if k == 1 else f"{n}#{k}")
    return final


def naming_notes(runs: Sequence[Named], names: Sequence[str]) -> list[str]:
    """What :func:`unique_names` did, for the report."""
    notes = []
    for name in dict.fromkeys(r.name for r in runs):
        renamed = [n for r, n in zip(runs, names) if r.name == name and n != name]
        if renamed:
            shared = sum(r.name == name for r in runs)
            how = "named by their files" if all("#" not in n for n in renamed) else "numbered"
            notes.append(f"{shared} runs share the name {name!r} (their tag): {how} instead ({', '.join(renamed)})")
    return notes


def once(notes: Sequence[str], names: Iterable[str]) -> list[str]:
    """A command's notes, each said once: exact repeats dropped, and notes that open with one of
    ``names`` (runs, files) and say the same of several merged into one line naming them (see
    :func:`merge_notes`).

    >>> once(["bm25: k=10 exceeds the depth", "dense: k=10 exceeds the depth", "labels: binary", "labels: binary"],
    ...      ["bm25", "dense"])
    ['2 runs (bm25, dense): k=10 exceeds the depth', 'labels: binary']
    """
    return merge_notes([[n] for n in dict.fromkeys(notes)], "runs", frozenset(names))


def merge_notes(
    per_input: Sequence[Sequence[str]], what: str = "sample sets", names: frozenset[str] | None = None
) -> list[str]:
    """The notes of several inputs, each said once: a note repeated by several inputs apart from the
    input's name at its start (``FILE: ...``) becomes one line naming them; when they differ only in
    the count that opens the note, the line gives each input's count.

    >>> merge_notes([["a.jsonl: 3 samples give no scores"], ["b.jsonl: 5 samples give no scores"], ["b.jsonl: x"]])
    ['2 sample sets: 3 (a.jsonl), 5 (b.jsonl) samples give no scores', 'b.jsonl: x']
    >>> merge_notes([["a.jsonl: no sample has a query_id"], ["b.jsonl: no sample has a query_id"]])
    ['2 sample sets (a.jsonl, b.jsonl): no sample has a query_id']
    """
    by_rest: dict[str, list[tuple[str, str, str]]] = {}
    for notes in per_input:
        for n in notes:
            src, sep, rest = n.partition(": ")
            if names is not None and src not in names:
                src, sep, rest = "", "", n
            count, blank, tail = rest.partition(" ")
            counted = bool(sep) and count.isdigit() and bool(blank)
            key = ("#" + tail if counted else rest) if sep else n
            by_rest.setdefault(key, []).append((src if sep else "", count if counted else "", n))
    out: list[str] = []
    for key, said in by_rest.items():
        srcs = list(dict.fromkeys(s for s, _, _ in said))
        counts = list(dict.fromkeys(c for _, c, _ in said))
        if len(said) == 1 or not all(srcs) or len(srcs) < len(said):
            out.extend(dict.fromkeys(n for _, _, n in said))
        elif len(counts) == 1:
            text = f"{counts[0]} {key[1:]}" if counts[0] else key
            out.append(f"{len(srcs)} {what} ({', '.join(srcs)}): {text}")
        else:
            each = ", ".join(f"{c} ({s})" for s, c, _ in said)
            out.append(f"{len(srcs)} {what}: {each} {key[1:]}")
    return out


def _file_stem(run: Named) -> str | None:
    src = run.source
    if not src or not os.path.isfile(src):
        return None
    base = os.path.basename(src)
    if base.lower().endswith(".gz"):
        base = base[:-3]
    return os.path.splitext(base)[0] or base
