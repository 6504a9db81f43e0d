"""What an engine hands a verb: the outputs of the verb's block function, one per block of whole
queries, merged into one value in query-id order, with the run's name and query accounting.

A verb asks the session for a run's blocks (:meth:`ctxeval._session.Session.blocks`) with a block
function ``fn(session, data) -> Block``: ``data`` is the :class:`~ctxeval._core.evaldata.EvalData` of
a block of whole queries (the local engine: the whole run; the stream engine: one chunk of the file,
then the judged queries the run lacks; Spark: one partition, on an executor). What the function
returns is per query (arrays whose first axis is the block's queries, rows of varying length per
query, Python objects per query) or a total over the block (counts); :func:`merge` puts the blocks'
queries in query-id order (byte-wise, as :func:`ctxeval._core.join.join` orders them) and adds the
totals. A verb reduces the merged block exactly as it would reduce a whole run's, so every engine
gives the same bytes: a float summed over queries is summed by the verb over the merged per-query
values, never block by block.

>>> a = Block(["q2"], values={"x": np.array([2.0])}, totals={"n": 1, "by": {"a": 1}})
>>> b = Block(["q1", "q3"], values={"x": np.array([1.0, 3.0])}, totals={"n": 2, "by": {"a": 1, "b": 1}})
>>> m = merge([a, b])
>>> m.qids, m.values["x"].tolist(), m.totals
(['q1', 'q2', 'q3'], [1.0, 2.0, 3.0], {'n': 3, 'by': {'a': 2, 'b': 1}})
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.evaldata import QueryAccounting
from .._core.segments import offsets, segment_rows
from .._errors import QueryMismatchError

__all__ = ["Block", "BlockFn", "Mapped", "Ragged", "merge", "merge_accounting", "overlap_check", "sized_counts"]


@dataclass(frozen=True, eq=False)
class Ragged:
    """Rows of varying length per query: query ``i``'s rows are ``flat[off[i]:off[i + 1]]``."""

    lengths: np.ndarray
    flat: np.ndarray

    @property
    def off(self) -> np.ndarray:
        return offsets(self.lengths)

    def take(self, order: np.ndarray) -> Ragged:
        """The queries in ``order``."""
        lengths = self.lengths[order]
        return Ragged(lengths, self.flat[segment_rows(self.off[:-1][order], lengths)])


@dataclass
class Block:
    """A block function's output for a block of whole queries (see the module docstring): ``values``
    (per query, first axis the queries of ``qids``), ``rows`` (per query, of varying length),
    ``items`` (a Python object per query) and ``totals`` (counts over the block: ints are added,
    mappings added key by key, sets united, lists joined; a verb sorts what it reads of a list)."""

    qids: list[str]
    values: dict[Any, np.ndarray] = field(default_factory=dict)
    rows: dict[Any, Ragged] = field(default_factory=dict)
    items: dict[Any, list[Any]] = field(default_factory=dict)
    totals: dict[Any, Any] = field(default_factory=dict)


#: a verb's block function: (the session of the block, its data) -> what the verb reduces
BlockFn = Callable[[Any, Any], Block]


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, dict):
        out = dict(a)
        for k, v in b.items():
            out[k] = _add(out[k], v) if k in out else v
        return out
    if isinstance(a, (set, frozenset)):
        return a | b
    return a + b


def merge(blocks: Sequence[Block]) -> Block:
    """The blocks as one, its queries in query-id order (see the module docstring)."""
    if len(blocks) == 1:
        return blocks[0]
    if not blocks:
        return Block([])
    qids = [q for b in blocks for q in b.qids]
    order = np.argsort(np.array(qids, dtype=str), kind="stable") if qids else np.zeros(0, dtype=np.int64)
    first = blocks[0]
    out = Block([qids[i] for i in order.tolist()])
    for key in first.values:
        out.values[key] = np.concatenate([b.values[key] for b in blocks])[order]
    for key in first.rows:
        parts = [b.rows[key] for b in blocks]
        joined = Ragged(np.concatenate([p.lengths for p in parts]), np.concatenate([p.flat for p in parts]))
        out.rows[key] = joined.take(order)
    for key in first.items:
        every = [x for b in blocks for x in b.items[key]]
        out.items[key] = [every[i] for i in order.tolist()]
    for b in blocks:
        for key, value in b.totals.items():
            out.totals[key] = _add(out.totals[key], value) if key in out.totals else value
    return out


def sized_counts(total: Mapping[str, Any]) -> dict[str, int]:
    """Counts of a whole run from the sum of its blocks' ``{"counts": ..., "sizes": ...}``, where a
    count of what a block did not use of something (a file's pairs no ranked row matched) is kept as
    minus what it used, and the something's size in ``sizes`` (its ``(key, size)``, the same in every
    block) is added back once.

    >>> a = {"counts": {"rows": 2, "pairs unused": -3}, "sizes": frozenset({("pairs unused", 10)})}
    >>> b = {"counts": {"rows": 1, "pairs unused": -2}, "sizes": frozenset({("pairs unused", 10)})}
    >>> sized_counts(merge([Block([], totals={"u": a}), Block([], totals={"u": b})]).totals["u"])
    {'rows': 3, 'pairs unused': 5}
    """
    out = dict(total["counts"])
    for key, size in total["sizes"]:
        out[key] += size
    return out


@dataclass
class Mapped:
    """One run's blocks, merged: its name (the given one, else its one tag, else its file's name),
    where it came from, the duplicate rows its reading dropped, the query accounting of all its
    blocks, the merged block and what the engine says about the run (``notes``)."""

    name: str
    source: str
    dropped_duplicates: int
    accounting: QueryAccounting
    block: Block
    run: Any = None  #: the run as the session holds it (a Run, or the engine's handle of one)
    notes: list[str] = field(default_factory=list)


def merge_accounting(parts: Iterable[QueryAccounting], policy: str, missing_ids: Sequence[str]) -> QueryAccounting:
    """The accounting of a run read in blocks: the counts added, the judged queries it lacks given
    (``missing_ids``, known only once every block is read), the unjudged ids in order."""
    every = list(parts)
    unjudged = sorted({q for p in every for q in p.unjudged_ids})
    return QueryAccounting(
        sum(p.evaluated for p in every),
        len(missing_ids),
        sum(p.unjudged for p in every),
        policy,
        missing_ids=tuple(missing_ids),
        unjudged_ids=tuple(unjudged),
        beyond_float32=sum(p.beyond_float32 for p in every),
    )


#: an overlap below this share of the run's or of the qrels' queries is noted
SMALL_OVERLAP = 0.1


def overlap_check(name: str, acc: QueryAccounting, source: str | None = None) -> str | None:
    """A :class:`QueryMismatchError` when the run and the qrels share no query (almost always the
    wrong file: under ``missing="zero"`` every measure would read 0); a note naming the counts when
    they share less than :data:`SMALL_OVERLAP` of the run's or of the qrels' queries; else None."""
    shared = acc.evaluated
    in_run = shared + acc.unjudged
    judged = shared + acc.missing
    if shared == 0:
        run_ids = ", ".join(repr(q) for q in acc.unjudged_ids[:3])
        qrels_ids = ", ".join(repr(q) for q in acc.missing_ids[:3])
        raise QueryMismatchError(
            f"{source + ': ' if source else ''}run {name!r} shares no query with the qrels (the run's {in_run} queries, e.g. {run_ids or 'none'}; "
            f"the qrels' {judged}, e.g. {qrels_ids or 'none'}): probably the wrong file; "
            "--overlap any (overlap='any') scores it anyway"
        )
    if shared < SMALL_OVERLAP * in_run or shared < SMALL_OVERLAP * judged:
        return (
            f"{name}: the run and the qrels share only {shared} of their queries (the run has {in_run}, "
            f"the qrels {judged}): check that the files belong together"
        )
    return None
