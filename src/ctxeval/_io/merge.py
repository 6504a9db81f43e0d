"""Judged label files merged with their provenance: ``ctxeval labels merge A B -o C``, :func:`merge_labels`."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from .._errors import ConfigError, FormatError, InputError, OutputError
from .labels import LabelKind, check_sidecar, read_sidecar, sidecar_path, write_sidecar
from .model import Qrels
from .side import fields, read_utilities, text_lines
from .writers import write_text

__all__ = ["Merged", "merge_labels"]

#: the provenance fields every merged file must share, and what each is called in a message
_SAME = ("judge", "model", "heuristic", "task", "prompt_version")


@dataclass(frozen=True)
class Merged:
    """What :func:`merge_labels` wrote: the labels file, its sidecar (None without one), their kind
    (None: the inputs had no sidecar, so who wrote the labels is unknown), and how many pairs."""

    path: Path
    sidecar: Path | None
    labels: LabelKind | None
    pairs: int
    files: int

    def describe(self) -> str:
        who = self.labels.describe() if self.labels is not None else "no sidecar: who wrote these labels is unknown"
        return f"{self.path}: {self.pairs} pairs from {self.files} files; {who}"


def _format_of(kind: LabelKind | None, path: Path, first: list[str]) -> str:
    if kind is not None:
        return "utility" if kind.scale == "utility" else "qrels"
    if len(first) == 3:
        return "utility"
    if len(first) == 4:
        return "qrels"
    raise FormatError(
        str(path),
        1,
        f"expected judged grades (qid 0 docid grade) or utilities (qid docid u), found {len(first)} fields",
    )


def _pairs(path: Path, fmt: str) -> dict[tuple[str, str], tuple[str, int]]:
    """The file's labels, (query, passage) -> (value as written, line), validated by its reader."""
    if fmt == "utility":
        read_utilities(str(path))  # every line valid: three fields, u in [0, 1], no pair twice
    else:
        Qrels.from_file(path)  # every line valid (its sidecar checked against the grades)
    out: dict[tuple[str, str], tuple[str, int]] = {}
    for lineno, line in text_lines(path, "labels"):
        f = fields(line)
        q, d, v = (f[0], f[1], f[2]) if fmt == "utility" else (f[0], f[2], f[3])
        out[(q, d)] = (v, lineno)
    return out


def _same_value(a: str, b: str, fmt: str) -> bool:
    return float(a) == float(b) if fmt == "utility" else int(float(a)) == int(float(b))


def _merged_kind(kinds: list[tuple[Path, LabelKind]], pairs: int) -> LabelKind:
    (first_path, first), *rest = kinds
    for path, k in rest:
        if (k.kind, k.scale) != (first.kind, first.scale):
            raise InputError(
                f"{path}: its sidecar says {k.kind} labels on the {k.scale} scale, {first_path}'s {first.kind} on the "
                f"{first.scale} scale: merge only labels of one kind and scale"
            )
        a, b = first.provenance, k.provenance
        if (a is None) != (b is None):
            raise InputError(f"{path if b is None else first_path}: its sidecar names no judge, the other's does")
        for name in _SAME if a is not None and b is not None else ():
            if getattr(a, name) != getattr(b, name):
                raise InputError(
                    f"{path}: written by another judge than {first_path} ({name} {getattr(b, name)!r}, not "
                    f"{getattr(a, name)!r}): merge only labels of one judge, or keep them apart"
                )
    provs = [k.provenance for _, k in kinds if k.provenance is not None]
    if not provs:
        return replace(first, origin="merged", notes=())
    depths = [p.depth for p in provs if p.depth is not None]

    def total(name: str) -> int | None:
        values = [getattr(p, name) for p in provs]
        return sum(v for v in values if v) if any(v is not None for v in values) else None

    runs = tuple(dict.fromkeys(r for p in provs for r in p.runs))
    prov = replace(
        provs[0],
        depth=min(depths) if depths else None,
        pairs=pairs,
        undecided=total("undecided"),
        ties=total("ties"),
        not_sent=total("not_sent"),
        runs=runs,
    )
    return LabelKind(first.kind, first.scale, "merged", prov)


def merge_labels(paths: list[str | os.PathLike[str]], output: str | os.PathLike[str]) -> Merged:
    """Merge judged label files into ``output``, and their sidecars into ``output.labels.json``.

    A judge writes one labels file per run or sample set it judged (``bm25.u``, ``dense.u``), each
    with its sidecar (:class:`~ctxeval.LabelKind`). ``sort -u`` makes one file of them but drops the
    sidecars, and labels without a sidecar say nothing of who wrote them (a model, a word-overlap
    heuristic, people). Here:

    * the files hold one format: judged grades (TREC qrels, ``qid 0 docid grade``) or utilities
      (``qid docid u``), as their sidecars' scale says (without sidecars, as their lines say);
    * a (query, passage) pair labelled in several files carries the same value in each, or the merge is
      refused naming both files and lines (two judges disagreeing is not for a merge to settle);
    * either every file has a sidecar or none has: with sidecars, they name the same judge, model, task,
      prompt version, kind and scale (else refused, naming the field), none describes an older version of
      its file, and the merged sidecar records: ``depth`` the smallest (None, every chunk, counts as the
      deepest), ``pairs`` the distinct pairs written, ``undecided`` / ``ties`` / ``not_sent`` the sums (a
      pair undecided in two files counts twice), ``runs`` the union. Without sidecars the labels are
      merged and the result says their provenance is unknown.

    The merged file lists the pairs sorted by query id then passage id (byte order of their UTF-8), so the
    same labels give the same bytes whatever the order of the files or of their lines.

    Returns what was written (:class:`Merged`: the paths, the merged kind, the pairs).

    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> judge = {"judge": "lexical", "model": "lexical-1", "heuristic": True, "task": "utility"}
    >>> for name, lines in (("a.u", "q1 d1 0.9\\nq1 d2 0.1\\n"), ("b.u", "q1 d2 0.1\\nq2 d3 0.5\\n")):
    ...     _ = (d / name).write_text(lines)
    ...     side = {"ctxeval_labels": 1, "kind": "judged", "scale": "utility", "labelled_by": judge,
    ...             "pairs": 2, "runs": [name[0]]}
    ...     _ = (d / f"{name}.labels.json").write_text(json.dumps(side))
    >>> merged = merge_labels([d / "a.u", d / "b.u"], d / "all.u")
    >>> (d / "all.u").read_text()
    'q1 d1 0.9\\nq1 d2 0.1\\nq2 d3 0.5\\n'
    >>> side = json.loads((d / "all.u.labels.json").read_text())
    >>> side["pairs"], side["runs"], side["labelled_by"]["heuristic"]
    (3, ['a', 'b'], True)
    """
    files = [Path(p) for p in paths]
    if len(files) < 2:
        raise ConfigError("merge needs two label files or more")
    out = Path(output)
    for p in files:
        if not p.is_file():
            raise InputError(f"{p}: no such file (labels)")
        if out.exists() and os.path.samefile(p, out):
            raise OutputError(f"{out}: the output is one of the inputs; choose another")
    kinds: list[tuple[Path, LabelKind | None]] = [(p, read_sidecar(p)) for p in files]
    with_side = [p for p, k in kinds if k is not None]
    if with_side and len(with_side) != len(files):
        bare = next(p for p, k in kinds if k is None)
        raise InputError(
            f"{bare}: no sidecar ({sidecar_path(bare).name}), while {with_side[0]} has one: its labels' provenance is "
            "unknown, so the merge could not say who wrote them; merge labels of one judge, each with its sidecar"
        )
    for _, k in kinds:
        if k is not None and k.notes:  # the recorded hash differs: the file was edited after judging
            raise InputError(
                f"{k.notes[0]}; re-judge it, or remove the sidecar to merge it as labels of unknown origin"
            )
    first_line = text_lines(files[0], "labels")
    if not first_line:
        raise InputError(f"{files[0]}: no labels (the file is empty)")
    fmt = _format_of(kinds[0][1], files[0], fields(first_line[0][1]))
    merged: dict[tuple[str, str], tuple[str, Path, int]] = {}
    for p in files:
        for pair, (value, line) in _pairs(p, fmt).items():
            seen = merged.get(pair)
            if seen is None:
                merged[pair] = (value, p, line)
            elif not _same_value(seen[0], value, fmt):
                raise InputError(
                    f"{seen[1]}:{seen[2]} and {p}:{line}: query {pair[0]!r}, passage {pair[1]!r} labelled {seen[0]} "
                    f"and {value}: the files disagree; merge labels that agree (one judge, one prompt)"
                )
    order = sorted(merged, key=lambda qd: (qd[0].encode("utf-8"), qd[1].encode("utf-8")))
    template = "{q} {d} {v}\n" if fmt == "utility" else "{q} 0 {d} {v}\n"
    write_text(out, "".join(template.format(q=q, d=d, v=merged[(q, d)][0]) for q, d in order))
    given = [(p, k) for p, k in kinds if k is not None]
    if not given:
        stale = sidecar_path(out)
        if stale.exists():  # an older merge's sidecar would now describe labels it never saw
            stale.unlink()
        return Merged(out, None, None, len(order), len(files))
    kind = _merged_kind(given, len(order))
    values = [float(merged[qd][0]) for qd in order]
    check_sidecar(kind, out, values)
    return Merged(out, write_sidecar(out, kind), kind, len(order), len(files))
