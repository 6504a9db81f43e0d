"""Preference judgments (trec_eval's ``-R prefs`` / ``-R qrels_prefs``) counted against a run: the
extra ``preferences`` that the ``prefs_*`` measures of ``ctxeval trec_eval`` read.

This is trec_eval 10.0's ``form_prefs_counts.c``, query by query:

1. The run's docs are ranked by score (descending; a double in 10.0, a float in 9.x), ties by doc id
   *ascending* (this file's own rule, unlike the rest of trec_eval), and cut to ``-M``. Every doc
   named in the query's preferences gets an index: the retrieved ones ``0 .. njr-1`` in rank order,
   the others ``njr ..`` in doc-id order.
2. Each judgment group (JG) becomes its preferences: with one sub-group (JSG), every doc of a higher
   level is preferred to every doc of a lower level (equivalence classes, a doc listed twice counts
   twice); with several, a 0/1 matrix of the sub-groups' preferences closed under transitivity (a
   conflict is an error, as is a doc with level 0 and a level above 0 in one JG).
3. A preference ``a > b`` is *fulfilled* when ``a`` ranks above ``b``: both retrieved (``ret``), only
   ``a`` retrieved (``imp``, implied), neither (never fulfilled: ``notoccur``). The counts of every
   JG, and how many JGs prefer ``i`` to ``j`` (``pairs``), are what the measures read.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby

import numpy as np

from .._core.extras import Preferences, PrefGroup, QueryPrefs
from .._errors import FormatError
from .._io.model import Run
from .._io.rel_formats import PrefLine

__all__ = ["build_preferences"]


def build_preferences(
    lines: Sequence[PrefLine],
    run: Run,
    qids: Sequence[str],
    *,
    source: str,
    version: int = 10,
    max_docs: int | None = None,
) -> Preferences:
    """The preferences of every query in ``qids`` (the evaluated queries, in order) against ``run``;
    ``source`` names the preference file in errors."""
    by_query: dict[str, list[PrefLine]] = {}
    for line in lines:
        by_query.setdefault(line.qid, []).append(line)
    cols = run.columns
    lay = cols.layout
    segment = {str(q): i for i, q in enumerate(lay.heads.tolist())}
    docs = cols.doc.to_list()
    keys = (-cols.values.astype(np.float64 if version >= 10 else np.float32)).tolist()
    out = []
    for qid in qids:
        at = segment.get(qid)
        rows = range(0, 0) if at is None else range(int(lay.starts[at]), int(lay.starts[at] + lay.lengths[at]))
        order = [docs[r] for r in sorted(rows, key=lambda r: (keys[r], docs[r]))]
        if max_docs is not None:
            order = order[: max(int(max_docs), 0)]
        out.append(_query(by_query.get(qid, []), order, qid, source))
    return Preferences(tuple(out))


def _query(prefs: list[PrefLine], ranking: list[str], qid: str, source: str) -> QueryPrefs:
    judged = {line.doc for line in prefs}
    retrieved = [doc for doc in ranking if doc in judged]
    index = {doc: i for i, doc in enumerate(retrieved)}
    njr = len(retrieved)
    for doc in sorted(judged - index.keys()):
        index[doc] = len(index)
    n = len(index)
    pairs = np.zeros((n, n), dtype=np.int32)
    # trec_eval's order: JG, JSG, level descending, index
    rows = sorted(((p.jg, p.jsg, -p.rel, index[p.doc], p) for p in prefs), key=lambda r: r[:4])
    groups = []
    for jg, members in groupby(rows, key=lambda r: r[0]):
        lines = [(r[1], -r[2], r[3], r[4]) for r in members]
        where = f"query {qid!r}, judgment group {jg!r}"
        if len({jsg for jsg, *_ in lines}) > 1:
            group = _matrix_group(lines, n, njr, source, where)
        else:
            group = _class_group(lines, n, njr, source, where)
        pairs += group.prefs
        groups.append(group)
    return QueryPrefs(n, njr, tuple(groups), pairs)


def _counts(prefs: np.ndarray, njr: int) -> dict[str, int]:
    """Preferences (``prefs[i, j]``: how often ``i > j``) by where ``i`` and ``j`` rank."""
    ret = prefs[:njr, :njr]
    ful_ret = int(np.triu(ret, 1).sum())
    ful_imp = int(prefs[:njr, njr:].sum())
    return {
        "ful_ret": ful_ret,
        "poss_ret": ful_ret + int(np.tril(ret, -1).sum()),
        "ful_imp": ful_imp,
        "poss_imp": ful_imp + int(prefs[njr:, :njr].sum()),
        "notoccur": int(prefs[njr:, njr:].sum()),
    }


_Line = tuple[str, float, int, PrefLine]  # sub-group, level, doc index, the line


def _class_group(lines: list[_Line], n: int, njr: int, source: str, where: str) -> PrefGroup:
    """One sub-group: equivalence classes by level (``form_jg_ec``)."""
    classes = [np.array([i for _, _, i, _ in members]) for _, members in groupby(lines, key=lambda r: r[1])]
    levels = [rel for rel, _ in groupby(r[1] for r in lines)]
    prefs = np.zeros((n, n), dtype=np.int32)
    for a in range(len(classes)):
        for b in range(a + 1, len(classes)):
            hi, lo = np.meshgrid(classes[a], classes[b], indexing="ij")
            if bool((hi == lo).any()):
                twice = set(classes[a].tolist()) & set(classes[b].tolist())
                line = max((p for _, _, i, p in lines if i in twice), key=lambda p: p.line)
                raise FormatError(source, line.line, f"{where}: doc {line.doc!r} has two levels in one sub-group")
            np.add.at(prefs, (hi.ravel(), lo.ravel()), 1)
    rel = sum(len(c) for c, lv in zip(classes, levels) if lv > 0)
    rel_ret = sum(int((c < njr).sum()) for c, lv in zip(classes, levels) if lv > 0)
    nonrel = sum(len(c) for c, lv in zip(classes, levels) if lv <= 0)
    nonrel_ret = sum(int((c < njr).sum()) for c, lv in zip(classes, levels) if lv <= 0)
    return PrefGroup(
        prefs=prefs,
        num_rel=rel,
        num_rel_ret=rel_ret,
        num_nonrel=nonrel,
        num_nonrel_ret=nonrel_ret,
        classes=tuple(classes),
        levels=None,
        **_counts(prefs, njr),
    )


def _matrix_group(lines: list[_Line], n: int, njr: int, source: str, where: str) -> PrefGroup:
    """Several sub-groups: a preference matrix closed under transitivity (``form_jg_pa``)."""
    levels = np.full(n, -1.0)
    prefs = np.zeros((n, n), dtype=bool)
    for _, members in groupby(lines, key=lambda r: r[0]):
        sub = list(members)
        for i, (_, rel, at, line) in enumerate(sub):
            if (levels[at] > 0.0 and rel == 0.0) or (levels[at] == 0.0 and rel > 0.0):
                raise FormatError(source, line.line, f"{where}: doc {line.doc!r} has level 0 and a level above 0")
            levels[at] = rel
            lower = [j for _, r, j, _ in sub[i + 1 :] if r != rel]
            prefs[at, lower] = True
    closed = prefs | np.eye(n, dtype=bool)
    while True:  # the reflexive transitive closure, by squaring
        step = (closed.astype(np.float32) @ closed.astype(np.float32)) > 0
        if bool((step == closed).all()):
            break
        closed = step
    np.fill_diagonal(closed, False)
    conflict = closed & closed.T
    if bool(conflict.any()):
        i, j = (int(x) for x in np.argwhere(conflict)[0])
        docs = {at: line.doc for _, _, at, line in lines}
        raise FormatError(
            source, None, f"{where}: the preferences contradict each other ({docs[i]!r} > {docs[j]!r} > {docs[i]!r})"
        )
    is_rel, is_nonrel = levels > 0.0, levels == 0.0
    counts = closed.astype(np.int32)
    return PrefGroup(
        prefs=counts,
        num_rel=int(is_rel.sum()),
        num_rel_ret=int(is_rel[:njr].sum()),
        num_nonrel=int(is_nonrel.sum()),
        num_nonrel_ret=int(is_nonrel[:njr].sum()),
        classes=None,
        levels=levels,
        **_counts(counts, njr),
    )
