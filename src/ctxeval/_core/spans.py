"""Character spans as numpy: the atoms of a query's text, evidence units, and the side data of the
span measures (:class:`SpanData`) and of the token budgets (:class:`ChunkData`).

**Offsets.** Every position is a character offset into a document's text: a count of Unicode code
points of the text decoded from UTF-8 (a Python ``str`` index), newlines counted as they are (one
for ``\\n``, two for ``\\r\\n``); a span ``[start, end)`` holds ``text[start:end]`` (end exclusive).

**Atoms.** For one query, every boundary of every interval in play (its evidence spans, the chunks a
run retrieved for it, the chunks of the chunking near its evidence) cuts each document into atoms:
maximal stretches that every interval either holds whole or not at all. A measure over characters
(or tokens) is then a sum of atom weights: an atom weighs its characters, or the tokens a tokenizer
counts in its text. A chunk is the contiguous run of atoms ``[lo, hi)`` it covers.

**Evidence units.** A query's spans become disjoint units before anything is counted: spans of one
document and one grade that overlap (share a character) merge into their union; where spans of
different grades overlap, the shared characters belong to the higher grade, and the lower-grade
span keeps the rest (touching spans stay apart). Every atom of evidence is owned by exactly one
unit; a unit's weight W_u is the weight of the atoms it owns.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .evaldata import Cut
from .segments import offsets

__all__ = [
    "NO_GRADE",
    "Atoms",
    "ChunkData",
    "SpanCeiling",
    "SpanData",
    "atomise",
    "atomise_parts",
    "covered",
    "expand",
    "first_cover",
    "near",
    "units",
]

#: the grade of an atom no span covers
NO_GRADE = np.iinfo(np.int64).min


@dataclass(frozen=True)
class Atoms:
    """The atoms of a set of intervals (see the module docstring), sorted by (query, document,
    start), held as the packed key of their last point (``last``: the (query, document) pair above
    ``wbits`` bits of position, or, with ``pairs``, the pair's number among ``pairs``) and their
    ``length``; their query, document, start and end are read off the keys when asked for. Per
    interval given, its atom range [lo, hi)."""

    last: np.ndarray
    length: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    wbits: int = 1
    dbits: int = 1
    pairs: np.ndarray | None = None

    @property
    def q(self) -> np.ndarray:
        return self._pair() >> self.dbits

    @property
    def doc(self) -> np.ndarray:
        return self._pair() & ((1 << self.dbits) - 1)

    @property
    def start(self) -> np.ndarray:
        return self.end - self.length

    @property
    def end(self) -> np.ndarray:
        return self.last & ((1 << self.wbits) - 1)

    def _pair(self) -> np.ndarray:
        g = self.last >> self.wbits
        return g if self.pairs is None else self.pairs[g]

    def offsets(self, n_q: int) -> np.ndarray:
        """Per-query offsets of the atoms (queries 0..n_q-1), found in the sorted keys."""
        if self.pairs is not None or self.last.size == 0:
            return atom_offsets(self.q, n_q)
        shift = self.wbits + self.dbits
        present = int(self.last[-1] >> shift) + 1  # the queries up to the last atom's
        return np.searchsorted(self.last, np.minimum(np.arange(n_q + 1, dtype=np.int64), present) << shift)


#: intervals to atomise: (q, doc, start, end, rows): the intervals ``doc[rows]``, ``start[rows]``,
#: ``end[rows]`` (every one when ``rows`` is None) of the queries ``q``
Part = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, "np.ndarray | None"]


def atomise(q: np.ndarray, doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> Atoms:
    """Cut each (query, document) at every start and end of the intervals given (int arrays of one
    length; ``start <= end``). Each interval's [lo, hi) is the run of atoms it covers.

    >>> a = atomise(np.array([0, 0]), np.array([5, 5]), np.array([0, 4]), np.array([10, 6]))
    >>> a.start.tolist(), a.end.tolist(), a.lo.tolist(), a.hi.tolist()
    ([0, 4, 6], [4, 6, 10], [0, 1], [3, 2])
    """
    return atomise_parts([(np.asarray(q), np.asarray(doc), np.asarray(start), np.asarray(end), None)])


def atomise_parts(parts: list[Part]) -> Atoms:
    """:func:`atomise` of the intervals of ``parts``, one part after another, each written straight
    into the points to sort (no gathered and stacked copies of the inputs).

    A point's key is its (query, document) pair above its position; temporaries are overwritten in
    place and dropped early: the peak of fresh memory is what a call pays again in page faults
    (~0.5 ms of CPU a MiB), so the keys of the atoms are kept packed, as sorted.

    >>> a = atomise_parts([(np.array([1]), np.array([5]), np.array([2]), np.array([8]), None),
    ...                    (np.array([1, 0]), np.array([9, 5]), np.array([0, 4]), np.array([10, 6]), np.array([1, 0]))])
    >>> a.q.tolist(), a.start.tolist(), a.end.tolist(), a.lo.tolist(), a.hi.tolist()
    ([0, 1, 1, 1], [0, 2, 4, 6], [10, 4, 6, 8], [1, 2, 0], [4, 3, 1])
    """
    live = [p for p in parts if p[0].size]
    n = sum(p[0].size for p in live)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Atoms(empty, empty, empty, empty)
    # the widths from the whole arrays (an upper bound where rows pick some: the packing only)
    wbits = _bits(max(max(int(p[3].max()), 0) for p in live) + 1)
    dbits = _bits(max(int(p[1].max()) for p in live) + 1)
    gbits = _bits(max(int(p[0].max()) for p in live) + 1) + dbits  # the bits of a point's pair
    points = np.empty(2 * n, dtype=np.int64)
    at = np.empty(2 * n, dtype=np.int64)  # a scratch first, then each point's atom
    starts, pair = points[:n], points[n:]
    _fill(pair, live, 0)
    pair <<= dbits
    _fill(starts, live, 1)
    pair |= starts
    pairs = None
    if gbits + wbits + _bits(2 * n) > 63:  # number the pairs present
        pairs, pair[:] = _distinct_inverse(pair)
        gbits = _bits(pairs.size)
        if gbits + wbits > 62:
            raise ValueError("documents too long for 64-bit positions")
    pair <<= wbits
    _fill(starts, live, 2)
    starts |= pair
    _fill(at[:n], live, 3)
    pair |= at[:n]  # the ends
    s, order = _sorted(points, overwrite=True, width=gbits + wbits, index=np.int32 if 2 * n < 1 << 31 else np.int64)
    # ends: a point that is a new distinct value of its pair (not the pair's first): it ends an atom
    # that starts at the distinct value before it (s[i - 1]); same pair and a new value <=> 0 <
    # s[i] ^ s[i - 1] < 2**wbits, i.e. (s[i] ^ s[i - 1]) - 1 < 2**wbits - 1 unsigned
    x = at[1:]
    np.bitwise_xor(s[1:], s[:-1], out=x)
    x -= 1
    ends = np.empty(s.size, dtype=bool)
    ends[0] = False
    np.less(x.view(np.uint64), np.uint64((1 << wbits) - 1), out=ends[1:])
    last = ends[1:]
    a_last = np.compress(last, s[1:])  # np.compress: ~3x faster than a boolean index
    length = np.compress(last, s[:-1])  # the atoms' first points, then their lengths (one pair each)
    np.subtract(a_last, length, out=length)
    # a point's atom: the atoms that end at or before it (counted into the sorted points' buffer)
    np.cumsum(ends, out=s)
    at[order] = s
    return Atoms(a_last, length, at[:n], at[n:], wbits, dbits, pairs)


def _fill(out: np.ndarray, parts: list[Part], i: int) -> None:
    """Column ``i`` of the parts, one after another, into ``out`` (int64)."""
    o = 0
    for *cols, rows in parts:
        col, m = cols[i], cols[0].size
        if rows is None or i == 0:
            out[o : o + m] = col
        elif col.dtype == out.dtype:
            np.take(col, rows, out=out[o : o + m], mode="clip")  # rows are valid: "raise" would buffer a copy
        else:
            out[o : o + m] = col[rows]
        o += m


def _bits(n: int) -> int:
    """The bits that number ``n`` items (at least 1)."""
    return max(int(n - 1).bit_length(), 1)


def _sorted(
    a: np.ndarray, overwrite: bool = False, width: int | None = None, index: type = np.int64
) -> tuple[np.ndarray, np.ndarray]:
    """``a`` (int64) sorted, and the index in ``a`` of each sorted element (``overwrite``: ``a`` may
    be overwritten, the sorted values then held in its buffer; ``width``: the values are known to lie
    in [0, 2**width), so need not be checked; ``index``: the indices' type on the packed path, int32
    to halve their memory where they fit).

    When the values leave room for an element's index in their low bits (``0 <= a < 2**(63 -
    bits)``), values and indices are packed into one int64 and sorted by value (numpy's vectorised
    sort, several times faster than ``argsort``); else a stable ``argsort``. Equal values come in
    index order either way.

    >>> [x.tolist() for x in _sorted(np.array([7, 3, 7, 0]))], _sorted(np.array([2**62, 5]))[1].tolist()
    ([[0, 3, 7, 7], [3, 1, 0, 2]], [1, 0])
    """
    n = a.size
    bits = _bits(n)
    fits = width + bits <= 63 if width is not None else n and int(a.min()) >= 0 and int(a.max()) < 1 << (63 - bits)
    if n and fits:
        packed = a if overwrite else a.copy()
        packed <<= bits
        order: np.ndarray = np.arange(n, dtype=index)
        packed |= order
        packed.sort()
        np.bitwise_and(packed, (1 << bits) - 1, out=order)
        packed >>= bits
        return packed, order
    order = np.argsort(a, kind="stable")
    return a[order], order


def _lexsort(keys: tuple[np.ndarray, ...]) -> np.ndarray:
    """``np.lexsort(keys)`` (the last key primary, ties in index order), by one vectorised sort of
    the keys packed with the index into an int64 when their ranges fit its 63 bits.

    >>> _lexsort((np.array([3, 1, 2, 1]), np.array([0, 1, 0, 1]))).tolist()
    [2, 0, 1, 3]
    """
    n = keys[0].size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    lows = [int(k.min()) for k in keys]
    widths = [_bits(int(k.max()) - lo + 1) for k, lo in zip(keys, lows)]
    ibits = _bits(n)
    if sum(widths) + ibits > 63:
        return np.lexsort(keys)
    packed = np.zeros(n, dtype=np.int64)
    for k, lo, b in zip(reversed(keys), reversed(lows), reversed(widths)):
        packed <<= b
        packed |= k - lo
    packed <<= ibits
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    return packed & ((1 << ibits) - 1)


def _distinct_inverse(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct values of ``a`` (int64) and the index of each element among them.

    >>> v, inv = _distinct_inverse(np.array([7, 3, 7, 0]))
    >>> v.tolist(), inv.tolist(), _distinct_inverse(np.array([2**62, 5, 2**62]))[1].tolist()
    ([0, 3, 7], [2, 1, 2, 0], [1, 0, 1])
    """
    s, order = _sorted(a)
    first = np.r_[True, s[1:] != s[:-1]] if s.size else np.zeros(0, dtype=bool)
    inverse = np.empty(a.size, dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return s[first], inverse


def near(
    s_doc: np.ndarray, s_start: np.ndarray, s_end: np.ndarray, c_doc: np.ndarray, c_start: np.ndarray, c_end: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (span, chunk) pair of one document that overlap or touch (c_start <= s_end and c_end >=
    s_start): (span index, chunk index, whether they share a character), by span then chunk start.

    >>> near(np.array([0]), np.array([5]), np.array([9]), np.array([0, 0, 0, 1]), np.array([0, 9, 12, 5]),
    ...      np.array([5, 12, 20, 9]))
    (array([0, 0]), array([0, 1]), array([False, False]))
    """
    empty = np.zeros(0, dtype=np.int64)
    if s_doc.size == 0 or c_doc.size == 0:
        return empty, empty, np.zeros(0, dtype=bool)
    width = int(max(s_end.max(), c_end.max())) + 2
    key, order = _sorted(c_doc * width + c_start, overwrite=True)  # the chunks by (document, start)
    n_docs = int(max(c_doc.max(), s_doc.max())) + 1
    longest = np.zeros(n_docs, dtype=np.int64)
    np.maximum.at(longest, c_doc, c_end - c_start)
    # the spans searched in the order of their keys (a search near the last one found: ~3x faster
    # than in the spans' own order), the bounds put back in theirs
    first, by = _sorted(s_doc * width + np.maximum(s_start - longest[s_doc], 0), overwrite=True)
    lo, hi = np.empty_like(first), np.empty_like(first)
    lo[by] = np.searchsorted(key, first, side="left")
    hi[by] = np.searchsorted(key, (s_doc * width + s_end)[by], side="right")
    span, at = expand(lo, hi)
    chunk = order[at]
    ok = (c_doc[chunk] == s_doc[span]) & (c_end[chunk] >= s_start[span])
    span, chunk = span[ok], chunk[ok]
    share = np.minimum(c_end[chunk], s_end[span]) > np.maximum(c_start[chunk], s_start[span])
    return span, chunk, share


def expand(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(interval index, atom index) of every atom of every interval [lo, hi).

    >>> [x.tolist() for x in expand(np.array([4, 0, 7]), np.array([6, 0, 8]))]
    [[0, 0, 2], [4, 5, 7]]
    """
    n = np.maximum(hi - lo, 0)
    which = np.repeat(np.arange(lo.size, dtype=np.int64), n)
    shift = lo - np.cumsum(n)  # atom k of interval i is lo_i + (k - the atoms of the intervals before i)
    shift += n
    atom = np.arange(which.size, dtype=np.int64)
    atom += np.repeat(shift, n)
    return which, atom


def units(
    n_atoms: int,
    q: np.ndarray,
    doc: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    grade: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The evidence units of spans (see the module docstring): per atom its grade (the highest of the
    spans covering it, :data:`NO_GRADE` where none) and owning unit (-1: none); per unit its query
    and grade.

    >>> g, own, uq, ug = units(3, np.zeros(3, int), np.zeros(3, int), np.array([0, 2, 4]), np.array([3, 5, 6]),
    ...                        np.array([1, 1, 2]), np.array([0, 1, 2]), np.array([2, 3, 3]))
    >>> g.tolist(), own.tolist(), ug.tolist()  # [0,3) and [2,5) merge (grade 1); [4,6) grade 2 takes [4,5)
    ([1, 1, 2], [0, 0, 1], [1, 2])
    """
    grade = np.asarray(grade, dtype=np.int64)
    a_grade = np.full(n_atoms, NO_GRADE, dtype=np.int64)
    a_unit = np.full(n_atoms, -1, dtype=np.int64)
    if grade.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return a_grade, a_unit, empty, empty
    # merge overlapping spans of one (query, document, grade): sorted by start, a span opens a new
    # unit when it starts at or after the furthest end before it
    order = _lexsort((start, grade, doc, q))
    sq, sd, sg, ss, se = q[order], doc[order], grade[order], start[order], end[order]
    new_key = np.r_[True, (sq[1:] != sq[:-1]) | (sd[1:] != sd[:-1]) | (sg[1:] != sg[:-1])]
    key_id = np.cumsum(new_key) - 1
    width = int(max(se.max(), 0)) + 1
    reach = np.maximum.accumulate(key_id * width + se) - key_id * width  # furthest end so far, per key
    opens = new_key.copy()
    opens[1:] |= ss[1:] >= reach[:-1]
    unit_sorted = np.cumsum(opens) - 1
    unit_of = np.empty_like(unit_sorted)
    unit_of[order] = unit_sorted
    u_q = sq[opens]
    u_grade = sg[opens]
    lo, hi = np.asarray(lo), np.asarray(hi)
    which, atom = expand(lo, hi)
    if bool((lo[1:] >= hi[:-1]).all()):  # no atom in two spans (the usual case): each owned by its span
        a_grade[atom] = grade[which]
        a_unit[atom] = unit_of[which]
    elif atom.size:
        g = grade[which]
        pick = _lexsort((-g, atom))
        first = np.r_[True, atom[pick][1:] != atom[pick][:-1]]
        top = pick[first]
        a_grade[atom[top]] = g[top]
        a_unit[atom[top]] = unit_of[which[top]]
    return a_grade, a_unit, u_q, u_grade


def covered(n_atoms: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Mask over the atoms: covered by at least one interval [lo, hi).

    >>> covered(5, np.array([0, 3]), np.array([2, 4])).tolist()
    [True, True, False, True, False]
    """
    d = np.bincount(lo, minlength=n_atoms + 1)
    d -= np.bincount(hi, minlength=n_atoms + 1)
    d = d[:n_atoms]
    return np.cumsum(d, out=d) > 0


def first_cover(lo: np.ndarray, hi: np.ndarray, atom_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For the atoms of ``atom_mask`` covered by some interval: (atom, the first interval covering it),
    intervals given in order (rank order: the first is the best ranked).

    >>> first_cover(np.array([1, 0]), np.array([3, 2]), np.ones(4, bool))
    (array([0, 1, 2]), array([1, 0, 0]))
    """
    before = np.r_[0, np.cumsum(atom_mask)]  # masked atoms before each atom position
    marked = np.flatnonzero(atom_mask)
    m_lo, m_hi = before[lo], before[hi]
    which, slot = expand(m_lo, m_hi)
    if slot.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    order = np.argsort(slot, kind="stable")  # expanded in interval order: the first is the best
    ss = slot[order]
    first = order[np.r_[True, ss[1:] != ss[:-1]]]
    return marked[slot[first]], which[first]


@dataclass(frozen=True, eq=False)
class ChunkData:
    """Where every ranked row's chunk lies and what it costs: ``doc`` (a document code), ``start``,
    ``end`` (characters) and ``tokens`` (-1: unknown) per ranked row; per query (``q_off``) the judged
    chunks' grades (``q_util``: on the 1–5 scale after the grade map in force) and tokens (-1: unknown), for the ideal at a budget; ``tokenizer`` names how tokens
    were counted, ``overflow`` the rule for the chunk that does not fit a budget
    (:mod:`ctxeval._core.budget`)."""

    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    tokens: np.ndarray
    q_off: np.ndarray
    q_grade: np.ndarray
    q_util: np.ndarray
    q_tokens: np.ndarray
    tokenizer: str
    overflow: str = "stop"
    source: str = "<chunks>"

    def cut(self, cut: Cut) -> ChunkData:
        r = cut.rows
        return replace(self, doc=self.doc[r], start=self.start[r], end=self.end[r], tokens=self.tokens[r])


@dataclass(frozen=True, eq=False)
class AtomData:
    """What the span side data share: per query (``a_off``) its atoms' characters ``a_len``, tokens
    ``a_tok`` (None: no tokenizer over the documents) and grade ``a_grade`` (the highest grade covering
    the atom, :data:`NO_GRADE` where none)."""

    a_off: np.ndarray
    a_len: np.ndarray
    a_tok: np.ndarray | None
    a_grade: np.ndarray

    @property
    def n_atoms(self) -> int:
        return int(self.a_len.size)

    @property
    def a_q(self) -> np.ndarray:
        return np.repeat(np.arange(self.a_off.size - 1, dtype=np.int64), np.diff(self.a_off))


@dataclass(frozen=True, eq=False)
class SpanData(AtomData):
    """The side data of the span measures (see the module docstring).

    Atoms (:class:`AtomData`), and ``a_unit`` (the unit owning each, -1: none). Units: ``u_q``, ``u_grade``, ``u_util`` (the grade on the 1–5 scale
    after the grade map in force), ``u_len`` and ``u_tok`` (the weight it owns). Spans as given
    (Chroma's sums run over them): ``s_q``, ``s_grade``, ``s_lo``, ``s_hi``. Ranked rows: ``r_lo``,
    ``r_hi``."""

    a_unit: np.ndarray
    u_q: np.ndarray
    u_grade: np.ndarray
    u_util: np.ndarray
    u_len: np.ndarray
    u_tok: np.ndarray | None
    s_q: np.ndarray
    s_grade: np.ndarray
    s_lo: np.ndarray
    s_hi: np.ndarray
    r_lo: np.ndarray
    r_hi: np.ndarray
    tokenizer: str | None = None

    def cut(self, cut: Cut) -> SpanData:
        return replace(self, r_lo=self.r_lo[cut.rows], r_hi=self.r_hi[cut.rows])


def atom_offsets(a_q: np.ndarray, n_q: int) -> np.ndarray:
    """Per-query offsets of atoms sorted by query."""
    return offsets(np.bincount(a_q, minlength=n_q).astype(np.int64))


@dataclass(frozen=True, eq=False)
class SpanCeiling(AtomData):
    """precision_Omega's side data: atoms of each query's evidence and of the chunking's chunks that
    overlap or touch it (``a_off``, ``a_len``, ``a_tok``, ``a_grade`` as :class:`SpanData`'s); those
    chunks' atom ranges ``h_lo``, ``h_hi``; and per (chunk, span) pair that overlap or touch ``p_h``,
    ``p_s`` (the span, with grade ``s_grade[p_s]``) and ``p_overlap`` (False: they only touch). It does
    not depend on the run: a cut keeps it."""

    s_grade: np.ndarray
    h_lo: np.ndarray
    h_hi: np.ndarray
    p_h: np.ndarray
    p_s: np.ndarray
    p_overlap: np.ndarray

    def cut(self, cut: Cut) -> SpanCeiling:
        return self
