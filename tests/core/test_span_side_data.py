"""The pieces of the span side data against plain readings: the labels' query positions found run by
run equal a search of every label; the queries of span labels their distinct ids, however built; the
run's chunks placed by key lookup, a dictionary's; the chunks near each span, every pair checked;
atoms of intervals given in parts (some gathered by rows), the atoms of the stacked intervals, and
their per-query offsets a count; and the evidence units a plain reading of their definition on both
of ``units``' paths (spans that share no atom, each atom owned by its span; and overlapping spans,
merged and given to the higher grade)."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ctxeval import SpanLabels
from ctxeval._core.join import positions, run_positions
from ctxeval._core.keys import lookup_keys
from ctxeval._core.spans import NO_GRADE, atom_offsets, atomise, atomise_parts, near, units

intervals = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 30), st.integers(0, 12)), min_size=1, max_size=25
)
spans = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 40), st.integers(1, 12), st.integers(-1, 3)),
    min_size=1,
    max_size=12,
)


def _columns(rows: list, far: int = 0) -> tuple[np.ndarray, ...]:
    q, doc, start, size = (np.array([r[i] for r in rows], dtype=np.int64) for i in range(4))
    return q, doc, start + far, start + far + size


@settings(max_examples=300, deadline=None)
@given(
    ids=st.lists(st.sampled_from(["a", "b", "bb", "c", "d"]), max_size=20),
    known=st.sets(st.sampled_from(["a", "b", "bb", "c", "e"])),
    as_list=st.booleans(),
)
def test_positions_found_run_by_run_equal_a_search_of_every_id(ids: list, known: set, as_list: bool) -> None:
    qids = sorted(known)
    arr = np.array(ids, dtype=str) if ids else np.zeros(0, dtype="U1")
    want = positions(arr, np.array(qids, dtype=str)) if qids else np.full(len(ids), -1)
    got = run_positions(arr, qids if as_list else np.array(qids, dtype=str))
    assert got.tolist() == want.tolist()
    assert got.tolist() == [qids.index(i) if i in known else -1 for i in ids]


@settings(max_examples=200, deadline=None)
@given(a=intervals, b=intervals, pick=st.lists(st.integers(0, 24), max_size=30), far=st.sampled_from([0, 1 << 55]))
def test_atoms_of_parts_equal_the_atoms_of_the_stacked_intervals(a: list, b: list, pick: list, far: int) -> None:
    rows = np.array([i % len(b) for i in pick], dtype=np.int64)
    qa, da, sa, ea = _columns(a, far)
    _, db, sb, eb = _columns(b, far)
    q_rows = np.array([r % 4 for r in pick], dtype=np.int64)  # the gathered part's own queries
    got = atomise_parts([(qa, da, sa, ea, None), (q_rows, db, sb, eb, rows)])
    want = atomise(np.r_[qa, q_rows], np.r_[da, db[rows]], np.r_[sa, sb[rows]], np.r_[ea, eb[rows]])
    for name in ("q", "doc", "start", "end", "length", "lo", "hi"):
        assert getattr(got, name).tolist() == getattr(want, name).tolist(), name
    n_q = 6
    assert got.offsets(n_q).tolist() == atom_offsets(got.q, n_q).tolist()
    assert got.offsets(n_q).tolist() == np.r_[0, np.cumsum(np.bincount(want.q, minlength=n_q))].tolist()


def plain_units(rows: list, atoms: list) -> tuple[list, list, list, list]:
    """Spans of one (query, document, grade) that share a character merge; units are numbered in
    (query, document, grade, start) order; an atom takes the highest grade of the spans holding it,
    and the unit of that span."""
    order = sorted(range(len(rows)), key=lambda i: (rows[i][0], rows[i][1], rows[i][4], rows[i][2]))
    unit_of, u_q, u_grade, reach, key = {}, [], [], None, None
    for i in order:
        q, d, s, e, g = rows[i]
        if (q, d, g) != key or s >= reach:
            u_q.append(q)
            u_grade.append(g)
            key, reach = (q, d, g), e
        reach = max(reach, e)
        unit_of[i] = len(u_q) - 1
    a_grade, a_unit = [], []
    for aq, ad, a_s, a_e in atoms:
        holding = [i for i, r in enumerate(rows) if (r[0], r[1]) == (aq, ad) and r[2] <= a_s and a_e <= r[3]]
        top = max(holding, key=lambda i: rows[i][4], default=None)
        a_grade.append(NO_GRADE if top is None else rows[top][4])
        a_unit.append(-1 if top is None else unit_of[top])
    return a_grade, a_unit, u_q, u_grade


@settings(max_examples=300, deadline=None)
@given(raw=spans, cuts=intervals, apart=st.booleans())
def test_units_equal_the_plain_reading_on_both_paths(raw: list, cuts: list, apart: bool) -> None:
    rows = [(q, d, s, s + n, g) for q, d, s, n, g in raw]
    if apart:  # spans that share no character: laid one after another in every (query, document)
        ends: dict[tuple[int, int], int] = {}
        laid = []
        for q, d, s, e, g in rows:
            at = max(s, ends.get((q, d), 0))
            laid.append((q, d, at, at + e - s, g))
            ends[(q, d)] = at + e - s
        rows = laid
    rows.sort(key=lambda r: r[:4])  # as span labels come: sorted by (query, document, start, end)
    if not apart:
        assume(any(a[:2] == b[:2] and a[2] < b[3] and b[2] < a[3] for a in rows for b in rows if a is not b))
    q, doc, start, end, grade = (np.array([r[i] for r in rows], dtype=np.int64) for i in range(5))
    cq, cd, cs, ce = _columns(cuts)  # other intervals cut the spans into more atoms
    at = atomise(np.r_[q, cq % 3], np.r_[doc, cd % 2], np.r_[start, cs], np.r_[end, ce])
    n = len(rows)
    got = units(at.q.size, q, doc, start, end, grade, at.lo[:n], at.hi[:n])
    atoms = list(zip(at.q.tolist(), at.doc.tolist(), at.start.tolist(), at.end.tolist()))
    assert [x.tolist() for x in got] == [list(x) for x in plain_units(rows, atoms)]


@settings(max_examples=200, deadline=None)
@given(
    table=st.lists(st.integers(0, 2**64 - 1), max_size=60, unique=True),
    extra=st.lists(st.integers(0, 2**64 - 1), max_size=60),
    picks=st.lists(st.integers(0, 59), max_size=80),
    crowd=st.integers(0, 64),
)
def test_key_lookup_equals_a_dictionary(table: list, extra: list, picks: list, crowd: int) -> None:
    # crowd: that many table keys share their top bits (one slot of the first table and more)
    t = [(k >> 40) | (0xABC << 52) if i < crowd else k for i, k in enumerate(table)]
    t = list(dict.fromkeys(t))
    keys = [t[i % len(t)] for i in picks] + extra if t else extra
    got = lookup_keys(np.array(keys, dtype=np.uint64), np.array(t, dtype=np.uint64))
    where = {k: n for n, k in enumerate(t)}
    assert got.tolist() == [where.get(k, -1) for k in keys]


@settings(max_examples=200, deadline=None)
@given(raw_spans=spans, chunks=intervals)
def test_the_chunks_near_each_span_equal_every_pair_checked(raw_spans: list, chunks: list) -> None:
    s_doc = np.array([r[1] for r in raw_spans], dtype=np.int64)
    s_start = np.array([r[2] for r in raw_spans], dtype=np.int64)
    s_end = s_start + np.array([r[3] for r in raw_spans], dtype=np.int64)
    _, c_doc, c_start, c_end = _columns(chunks)
    c_doc %= 2
    got = near(s_doc, s_start, s_end, c_doc, c_start, c_end)
    want = [
        (i, j, min(ce, se) > max(cs, ss))
        for i, (sd, ss, se) in enumerate(zip(s_doc.tolist(), s_start.tolist(), s_end.tolist()))
        for j, (cd, cs, ce) in sorted(
            enumerate(zip(c_doc.tolist(), c_start.tolist(), c_end.tolist())), key=lambda x: (x[1][1], x[0])
        )
        if cd == sd and cs <= se and ce >= ss
    ]
    assert list(zip(*(x.tolist() for x in got))) == want


@settings(max_examples=100, deadline=None)
@given(qs=st.lists(st.sampled_from(["q1", "q10", "q2", "a"]), max_size=12), direct=st.booleans())
def test_the_queries_of_span_labels_are_their_distinct_ids_however_built(qs: list, direct: bool) -> None:
    n = len(qs)
    if direct:  # the dataclass built as it is, rows in any order
        cols = (np.array(qs, dtype=str) if qs else np.zeros(0, dtype="U1"), np.array(["d"] * n, dtype=str))
        labels = SpanLabels(*cols, np.arange(n), np.arange(n) + 1, np.ones(n, dtype=np.int64))
    else:
        assume(qs)
        labels = SpanLabels.from_records(
            [{"query_id": q, "doc_id": "d", "start": i, "end": i + 1} for i, q in enumerate(qs)]
        )
    assert labels.chunk_grades(None).columns.layout.heads.tolist() == sorted(set(qs))
