"""Fairness group labels of docs and target distributions of queries: the side files of AWRF (the TREC
Fair Ranking track's attention-weighted rank fairness).

**Group labels** say which groups a doc belongs to, and how much:

* text: ``docid group [weight]`` lines, fields separated by spaces and tabs (the reading rule of every
  side file: blank lines and ``#`` comments skipped, compressed files read);
* JSON lines: ``{"doc_id": ..., "group": ..., "dimension": ..., "weight": ...}`` (dimension and weight
  optional; a group may hold spaces here), or ``{"doc_id": ..., "groups": {dimension: level | [levels]
  | {level: weight}}}``, several dimensions on one line;
* a mapping ``{doc: group | [group, ...] | {group: weight}}``.

A group is a level (``female``) or ``dimension=level`` (``gender=female``; the first ``=`` splits).
Rules, as the track's page alignments read: the weights (default 1, finite, >= 0; 0: not a member) of
a doc in one dimension are scaled to sum to 1, its *alignment* (a doc listed in two groups without weights counts
half in each); a doc, a dimension and a level given twice is an error naming both lines; several
dimensions make intersectional groups, a doc's weight in ``gender=female&geo=Asia`` being the product
of its weights in each dimension (TREC 2022's outer product of the dimensions' alignments); a doc
labelled in some dimension but not in another has the level ``@unknown`` there (TREC 2022's unknown
level). A doc absent from the file has no label: AWRF leaves it out (see :mod:`ctxeval._measures.fairness`).

**Targets** give each query the distribution its ranking's exposure is compared with (instead of the
groups' distribution among its relevant docs): ``qid group weight`` lines, ``group`` an
intersectional group written ``dimension=level&dimension=level`` (every dimension named; a single
unnamed dimension: the level alone); qid ``*`` gives the target of every query without lines of its
own; JSON lines ``{"qid": ..., "group": "..." | {dimension: level}, "weight": ...}``; a mapping
``{qid: {group: weight}}``. Weights are scaled to sum to 1 per query; a (query, group) given twice is
an error naming both lines.

>>> g = read_fair_groups({"d1": "a", "d2": ["a", "b"], "d3": {"b": 3, "c": 1}})
>>> g.labels, g.group.tolist(), g.weight.tolist()
(('a', 'b', 'c'), [0, 0, 1, 1, 2], [1.0, 0.5, 0.5, 0.75, 0.25])
>>> read_fair_groups({"d1": ["gender=f", "geo=Asia"], "d2": "gender=m"}).labels
('gender=f&geo=Asia', 'gender=m&geo=@unknown')
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._core.ids import ArrayIds, Ids
from .._errors import ConfigError, DuplicateError, EmptyInputError, FormatError, InputError
from .side import fields, text_lines
from .tables import _DOC_NAMES, _QID_NAMES, json_value

__all__ = [
    "ALL_QUERIES",
    "UNKNOWN",
    "FairGroups",
    "FairTargets",
    "group_label",
    "read_fair_groups",
    "read_fair_targets",
]

UNKNOWN = "@unknown"  #: the level of a doc in a dimension it is not labelled in
ALL_QUERIES = "*"  #: the qid of a target line that serves every query without lines of its own
_MAX_GROUPS = 1 << 40  #: intersectional groups beyond this are an error (a file of free-text levels)


@dataclass(frozen=True, eq=False)
class FairGroups:
    """Group labels of docs: ``doc`` (distinct ids); doc ``i``'s groups are
    ``group[ptr[i]:ptr[i + 1]]`` (codes into ``labels``, ascending) with weights summing to 1."""

    doc: Ids
    ptr: np.ndarray
    group: np.ndarray
    weight: np.ndarray
    labels: tuple[str, ...]
    dimensions: tuple[str, ...]  #: dimension names, ascending ("" : the unnamed one)
    source: str

    @property
    def n_docs(self) -> int:
        return len(self.doc)


@dataclass(frozen=True, eq=False)
class FairTargets:
    """Target distributions by query: query ``qids[i]`` (ascending; ``*``: every other query) gives
    ``labels[group[ptr[i]:ptr[i + 1]]]`` the weights ``weight[...]`` (summing to 1)."""

    qids: tuple[str, ...]
    ptr: np.ndarray
    group: np.ndarray
    weight: np.ndarray
    labels: tuple[str, ...]
    source: str


def group_label(levels: Mapping[str, str]) -> str:
    """The name of an intersectional group: ``dimension=level`` joined by ``&`` in the order of the
    dimensions' names (the unnamed dimension's level alone).

    >>> group_label({"geo": "Asia", "gender": "f"}), group_label({"": "a"})
    ('gender=f&geo=Asia', 'a')
    """
    return "&".join(lv if dim == "" else f"{dim}={lv}" for dim, lv in sorted(levels.items()))


# --------------------------------------------------------------------------------------------------
# records: (key, dimension, level, weight, where) from every form
# --------------------------------------------------------------------------------------------------


@dataclass
class _Records:
    key: list[str]
    dim: list[str]
    level: list[str]
    weight: list[float]
    where: list[int]  #: line number (files) or record number (mappings)
    source: str
    lines: bool  #: where are line numbers


def _split_group(text: str, where: str) -> tuple[str, str]:
    dim, sep, level = text.partition("=")
    if not sep:
        dim, level = "", text
    if sep and not dim:
        raise InputError(f"{where}: group {text!r} names no dimension before '='")
    return _checked(dim, level, where)


def _checked(dim: str, level: str, where: str) -> tuple[str, str]:
    """A dimension and a level that name one group: no ``&`` (it joins the levels of an intersectional
    group), no ``=`` in the dimension, a level that is not empty."""
    if not level:
        raise InputError(f"{where}: a group names no level")
    if "&" in dim or "&" in level or "=" in dim:
        raise InputError(
            f"{where}: group {dim + '=' if dim else ''}{level!s} holds '&' or a dimension holds '=': a doc's label "
            "names one level of one dimension (one line per dimension; intersectional groups follow from them)"
        )
    return dim, level


def _weight(x: Any, where: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(float(x)) or float(x) < 0:
        raise InputError(f"{where}: weight {x!r} is not a finite number >= 0")
    return float(x)


def _text_weight(text: str, source: str, lineno: int, line: str) -> float:
    try:
        w = float(text)
    except ValueError:
        raise FormatError(source, lineno, f"weight {text!r} is not a number", line) from None
    if not math.isfinite(w) or w < 0:
        raise FormatError(source, lineno, f"weight {text!r} is not a finite number >= 0", line)
    return w


def _spread(rec: _Records, key: str, value: Any, where: int, what: str, dim: str | None = None) -> None:
    """One doc's groups as a mapping gives them: a group, a list of groups or {group: weight}; groups
    are ``dimension=level`` strings, or levels of ``dim`` when it is given."""
    at = f"{rec.source}: {what} {key!r}"
    if isinstance(value, str):
        items: Iterable[tuple[Any, Any]] = [(value, 1.0)]
    elif isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, Iterable) and not isinstance(value, bytes):
        items = [(g, 1.0) for g in value]
    else:
        raise InputError(f"{at}: expected a group, a list of groups or {{group: weight}}, got {value!r}")
    for g, w in items:
        if not isinstance(g, str):
            raise InputError(f"{at}: group {g!r} is not a string")
        d, level = _split_group(g, at) if dim is None else _checked(dim, g, at)
        rec.key.append(key)
        rec.dim.append(d)
        rec.level.append(level)
        rec.weight.append(_weight(w, at))
        rec.where.append(where)


def _json_group_line(rec: _Records, obj: Mapping[str, Any], lineno: int, line: str) -> None:
    src = rec.source
    dk = next((k for k in obj if k.lower() in _DOC_NAMES), None)
    if dk is None or not isinstance(obj[dk], (str, int)) or isinstance(obj[dk], bool):
        raise FormatError(src, lineno, f"no doc id ({', '.join(_DOC_NAMES[:3])} ...)", line)
    doc = str(obj[dk])
    if "groups" in obj:
        groups = obj["groups"]
        if not isinstance(groups, Mapping) or not groups:
            raise FormatError(src, lineno, "'groups' must map dimensions to a level, levels or {level: weight}", line)
        for dim, value in groups.items():
            try:
                _spread(rec, doc, _levels(value, src, lineno, line), lineno, "doc", str(dim))
            except InputError as exc:
                if isinstance(exc, FormatError):
                    raise
                raise FormatError(src, lineno, str(exc).split(": ", 2)[-1], line) from None
        return
    group = obj.get("group")
    if not isinstance(group, str) or not group:
        raise FormatError(src, lineno, "expected 'group' (a string) or 'groups' (dimension -> levels)", line)
    dim = obj.get("dimension", "")
    if not isinstance(dim, str):
        raise FormatError(src, lineno, f"dimension {dim!r} is not a string", line)
    w = obj.get("weight", 1.0)
    try:
        w = _weight(w, f"{src}:{lineno}")
    except InputError as exc:
        raise FormatError(src, lineno, str(exc).split(": ", 1)[1], line) from None
    try:
        dim, group = _checked(dim, group, "")
    except InputError as exc:
        raise FormatError(src, lineno, str(exc).split(": ", 1)[1], line) from None
    rec.key.append(doc)
    rec.dim.append(dim)
    rec.level.append(group)
    rec.weight.append(w)
    rec.where.append(lineno)


def _levels(value: Any, src: str, lineno: int, line: str) -> dict[str, Any]:
    if isinstance(value, str):
        return {value: 1.0}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return dict.fromkeys(value, 1.0)
    raise FormatError(src, lineno, f"levels {value!r}: expected a level, a list of levels or {{level: weight}}", line)


def _json_lines(path: Any, what: str) -> tuple[list[tuple[int, str]], bool]:
    """The lines of a side file, and whether they are JSON lines (the first starts with ``{``)."""
    lines = text_lines(path, what)
    return lines, bool(lines) and lines[0][1].lstrip().startswith("{")


def _parse_json(source: str, lineno: int, line: str) -> Mapping[str, Any]:
    obj = json_value(source, lineno, line, line)
    if not isinstance(obj, dict):
        raise FormatError(source, lineno, "expected a JSON object", line)
    return obj


def _group_records(value: Any) -> _Records:
    if isinstance(value, (str, os.PathLike)):
        rec = _Records([], [], [], [], [], str(value), True)
        lines, is_json = _json_lines(value, "fairness groups")
        for lineno, line in lines:
            if is_json:
                _json_group_line(rec, _parse_json(rec.source, lineno, line), lineno, line)
                continue
            parts = fields(line)
            if len(parts) not in (2, 3):
                raise FormatError(rec.source, lineno, f"expected docid group [weight], found {len(parts)} fields", line)
            try:
                dim, level = _split_group(parts[1], f"{rec.source}:{lineno}")
            except InputError as exc:
                raise FormatError(rec.source, lineno, str(exc).split(": ", 1)[1], line) from None
            rec.key.append(parts[0])
            rec.dim.append(dim)
            rec.level.append(level)
            rec.weight.append(_text_weight(parts[2], rec.source, lineno, line) if len(parts) == 3 else 1.0)
            rec.where.append(lineno)
    elif isinstance(value, Mapping):
        rec = _Records([], [], [], [], [], "<fairness groups>", False)
        for i, (doc, groups) in enumerate(value.items(), start=1):
            _spread(rec, str(doc), groups, i, "doc")
    else:
        raise ConfigError(
            f"fairness groups must be a file path or a mapping of doc id to groups, got {type(value).__name__}"
        )
    if not rec.key:
        raise EmptyInputError(f"{rec.source}: no fairness group labels (the file is empty or only comments)")
    return rec


def _codes(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    names, code = np.unique(np.array(values, dtype=str), return_inverse=True)
    return names, code.reshape(-1).astype(np.int64)


def _first_duplicate(keys: tuple[np.ndarray, ...], where: np.ndarray) -> tuple[int, int] | None:
    """The two records (positions) of the first key given twice, by their line, or None."""
    order = np.lexsort((where, *reversed(keys)))
    same = np.ones(order.size - 1, dtype=bool) if order.size > 1 else np.zeros(0, dtype=bool)
    for k in keys:
        same &= k[order[1:]] == k[order[:-1]]
    hits = np.flatnonzero(same)
    if hits.size == 0:
        return None
    pairs = [(int(order[h]), int(order[h + 1])) for h in hits]
    return min(pairs, key=lambda p: (where[p[1]], where[p[0]]))


def _where(rec: _Records, *at: int) -> str:
    nums = " and ".join(str(rec.where[i]) for i in at)
    return (
        f"{'lines' if rec.lines else 'records'} {nums}"
        if len(at) > 1
        else f"{'line' if rec.lines else 'record'} {nums}"
    )


def read_fair_groups(value: Any) -> FairGroups:
    """Fairness group labels from a file (text or JSON lines) or a mapping (see the module docstring)."""
    if isinstance(value, FairGroups):
        return value
    rec = _group_records(value)
    doc_names, doc = _codes(rec.key)
    dim_names, dim = _codes(rec.dim)
    where = np.asarray(rec.where, dtype=np.int64)
    weight = np.asarray(rec.weight, dtype=np.float64)
    # levels coded within their dimension
    lv_names: list[np.ndarray] = []
    level = np.zeros(doc.size, dtype=np.int64)
    lv_all = np.array(rec.level, dtype=str)
    for k in range(dim_names.size):
        at = np.flatnonzero(dim == k)
        names, code = np.unique(lv_all[at], return_inverse=True)
        lv_names.append(names)
        level[at] = code.reshape(-1)
    dup = _first_duplicate((doc, dim, level), where)
    if dup is not None:
        a, b = dup
        what = rec.level[a] if rec.dim[a] == "" else f"{rec.dim[a]}={rec.level[a]}"
        raise DuplicateError(f"{rec.source}: doc {rec.key[a]!r} is in group {what!r} twice ({_where(rec, a, b)})")
    # a doc without a label in some dimension has the unknown level there
    n_docs, n_dims = doc_names.size, dim_names.size
    has = np.zeros((n_docs, n_dims), dtype=bool)
    has[doc, dim] = True
    lack_doc, lack_dim = np.nonzero(~has)
    if lack_doc.size:
        extra_level = np.empty(lack_doc.size, dtype=np.int64)
        for k in range(n_dims):
            at = np.flatnonzero(lack_dim == k)
            if at.size == 0:
                continue
            names = lv_names[k]
            pos = int(np.searchsorted(names, UNKNOWN))
            if pos >= names.size or names[pos] != UNKNOWN:
                lv_names[k] = np.array([*names[:pos].tolist(), UNKNOWN, *names[pos:].tolist()], dtype=str)
                level[dim == k] += level[dim == k] >= pos
            extra_level[at] = pos
        doc = np.r_[doc, lack_doc]
        dim = np.r_[dim, lack_dim]
        level = np.r_[level, extra_level]
        weight = np.r_[weight, np.ones(lack_doc.size)]
        where = np.r_[where, np.full(lack_doc.size, -1, dtype=np.int64)]
    # the alignment: weights of a doc in a dimension summed in level order, scaled to sum to 1
    order = np.lexsort((level, dim, doc))
    doc, dim, level, weight, where = doc[order], dim[order], level[order], weight[order], where[order]
    cell = doc * n_dims + dim
    total = np.bincount(cell, weights=weight, minlength=n_docs * n_dims)
    if np.any(total[cell] <= 0):
        i = int(order[np.flatnonzero(total[cell] <= 0)[0]])
        name = rec.dim[i] or "(unnamed)"
        raise InputError(
            f"{rec.source}: doc {rec.key[i]!r} has weights summing to 0 in dimension {name} ({_where(rec, i)})"
        )
    weight = weight / total[cell]
    doc, group, weight = _intersect(doc, dim, level, weight, n_docs, [n.size for n in lv_names])
    member = weight > 0  # a weight of 0 says the doc is not in the group
    doc, group, weight = doc[member], group[member], weight[member]
    codes, group = np.unique(group, return_inverse=True)
    labels = tuple(_label_of(int(c), dim_names, lv_names) for c in codes)
    ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc, minlength=n_docs), out=ptr[1:])
    return FairGroups(
        doc=ArrayIds.from_strings(doc_names.tolist()),
        ptr=ptr,
        group=group.reshape(-1).astype(np.int64),
        weight=weight,
        labels=labels,
        dimensions=tuple(dim_names.tolist()),
        source=rec.source,
    )


def _intersect(
    doc: np.ndarray, dim: np.ndarray, level: np.ndarray, weight: np.ndarray, n_docs: int, sizes: list[int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every doc's intersectional groups (mixed-radix codes over the dimensions' levels, the first
    dimension the most significant) and weights (products), by doc then code; the records are sorted
    by (doc, dimension, level)."""
    if math.prod(sizes) > _MAX_GROUPS:
        raise InputError(f"fairness groups: {math.prod(sizes)} intersectional groups; too many to evaluate")
    at = np.flatnonzero(dim == 0)
    c_doc, c_code, c_w = doc[at], level[at], weight[at]
    for k in range(1, len(sizes)):
        at = np.flatnonzero(dim == k)
        r_doc, r_level, r_w = doc[at], level[at], weight[at]
        n_r = np.bincount(r_doc, minlength=n_docs)
        r_start = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(n_r, out=r_start[1:])
        times = n_r[c_doc]  # each current row meets every row of its doc in dimension k
        left = np.repeat(np.arange(c_doc.size), times)
        block = np.repeat(np.cumsum(times) - times, times)
        right = r_start[c_doc[left]] + np.arange(left.size) - block
        c_doc = c_doc[left]
        c_code = c_code[left] * sizes[k] + r_level[right]
        c_w = c_w[left] * r_w[right]
    return c_doc, c_code, c_w


def _label_of(code: int, dims: np.ndarray, levels: list[np.ndarray]) -> str:
    parts: dict[str, str] = {}
    for k in range(dims.size - 1, -1, -1):
        code, lv = divmod(code, levels[k].size)
        parts[str(dims[k])] = str(levels[k][lv])
    return group_label(parts)


# --------------------------------------------------------------------------------------------------
# targets
# --------------------------------------------------------------------------------------------------


def _target_group(text: Any, dims: tuple[str, ...], where: str) -> str:
    """A target's group as a canonical label, each of ``dims`` given one level."""
    if isinstance(text, Mapping):
        parts = {str(d): str(lv) for d, lv in text.items()}
    elif isinstance(text, str) and text:
        parts = {}
        for piece in text.split("&"):
            dim, sep, level = piece.partition("=")
            if not sep:
                dim, level = "", piece
            if dim in parts:
                raise InputError(f"{where}: group {text!r} names dimension {dim or '(unnamed)'} twice")
            parts[dim] = level
    else:
        raise InputError(f"{where}: group {text!r} is not a group name")
    if any(not lv for lv in parts.values()) or sorted(parts) != list(dims):
        shown = ", ".join(d or "(unnamed)" for d in dims)
        example = group_label(dict.fromkeys(dims, "..."))
        raise InputError(
            f"{where}: target group {text!r} must name one level of each dimension of the groups ({shown}), e.g. {example!r}"
        )
    return group_label(parts)


def read_fair_targets(value: Any, groups: FairGroups) -> FairTargets:
    """Target distributions from a file (text or JSON lines) or a mapping ``{qid: {group: weight}}``,
    their groups named over the dimensions of ``groups`` (see the module docstring).

    >>> g = read_fair_groups({"d1": "a", "d2": "b"})
    >>> t = read_fair_targets({"*": {"a": 1, "b": 1}, "q1": {"a": 3, "b": 1}}, g)
    >>> t.qids, t.labels, t.weight.tolist()
    (('*', 'q1'), ('a', 'b'), [0.5, 0.5, 0.75, 0.25])
    """
    if isinstance(value, FairTargets):
        return value
    rec = _Records([], [], [], [], [], "<fairness targets>", False)
    dims = groups.dimensions
    if isinstance(value, (str, os.PathLike)):
        rec = _Records([], [], [], [], [], str(value), True)
        lines, is_json = _json_lines(value, "fairness targets")
        for lineno, line in lines:
            try:
                if is_json:
                    obj = _parse_json(rec.source, lineno, line)
                    qk = next((k for k in obj if k.lower() in _QID_NAMES), None)
                    if qk is None:
                        raise FormatError(rec.source, lineno, "no query id (qid, query_id ...)", line)
                    q, g, w = str(obj[qk]), obj.get("group"), _weight(obj.get("weight"), "weight")
                else:
                    parts = fields(line)
                    if len(parts) != 3:
                        raise FormatError(
                            rec.source, lineno, f"expected qid group weight, found {len(parts)} fields", line
                        )
                    q, g, w = parts[0], parts[1], _text_weight(parts[2], rec.source, lineno, line)
                label = _target_group(g, dims, "target")
            except InputError as exc:
                if isinstance(exc, FormatError):
                    raise
                raise FormatError(rec.source, lineno, str(exc).split(": ", 1)[1], line) from None
            rec.key.append(q)
            rec.level.append(label)
            rec.weight.append(w)
            rec.where.append(lineno)
    elif isinstance(value, Mapping):
        for i, (q, dist) in enumerate(value.items(), start=1):
            if not isinstance(dist, Mapping):
                raise InputError(f"{rec.source}: query {q!r} maps to {dist!r}, expected {{group: weight}}")
            for g, w in dist.items():
                at = f"{rec.source}: query {q!r}"
                rec.key.append(str(q))
                rec.level.append(_target_group(g, dims, at))
                rec.weight.append(_weight(w, at))
                rec.where.append(i)
    else:
        raise ConfigError(
            f"fairness targets must be a file path or a mapping of qid to {{group: weight}}, got {type(value).__name__}"
        )
    if not rec.key:
        raise EmptyInputError(f"{rec.source}: no fairness targets (the file is empty or only comments)")
    q_names, qc = _codes(rec.key)
    labels, gc = _codes(rec.level)
    where = np.asarray(rec.where, dtype=np.int64)
    dup = _first_duplicate((qc, gc), where)
    if dup is not None:
        a, b = dup
        raise DuplicateError(
            f"{rec.source}: target of query {rec.key[a]!r}, group {rec.level[a]!r} given twice ({_where(rec, a, b)})"
        )
    weight = np.asarray(rec.weight, dtype=np.float64)
    order = np.lexsort((gc, qc))
    qc, gc, weight = qc[order], gc[order], weight[order]
    total = np.bincount(qc, weights=weight, minlength=q_names.size)
    if np.any(total <= 0):
        bad = str(q_names[int(np.flatnonzero(total <= 0)[0])])
        raise InputError(f"{rec.source}: the target of query {bad!r} has weights summing to 0")
    ptr = np.zeros(q_names.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(qc, minlength=q_names.size), out=ptr[1:])
    return FairTargets(
        qids=tuple(q_names.tolist()),
        ptr=ptr,
        group=gc,
        weight=weight / total[qc],
        labels=tuple(labels.tolist()),
        source=rec.source,
    )
