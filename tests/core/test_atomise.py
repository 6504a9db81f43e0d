"""The atoms of the span measures against a plain reading of their definition, on both of atomise's
paths: keys packed into one int64 with each point's index (the fast sort), and the fallbacks taken
when positions are too far apart for that (the (query, document) pairs numbered, ``argsort``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxeval._core.spans import _lexsort, atomise, units

intervals = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 30), st.integers(0, 12)), min_size=1, max_size=25
)


def plain_atoms(q: list[int], doc: list[int], start: list[int], end: list[int]) -> tuple[list, list, list]:
    """Every (query, document)'s boundaries cut it into atoms, sorted; an interval covers the atoms
    from the one at its start to the one at its end (the atoms before each point counted)."""
    cuts: dict[tuple[int, int], set[int]] = {}
    for qq, d, s, e in zip(q, doc, start, end):
        cuts.setdefault((qq, d), set()).update((s, e))
    atoms = [(g[0], g[1], a, b) for g in sorted(cuts) for a, b in zip(sorted(cuts[g]), sorted(cuts[g])[1:])]

    def before(g: tuple[int, int], x: int) -> int:  # the atoms before point x of group g
        return sum(1 for a in atoms if a[:2] < g or (a[:2] == g and a[2] < x))

    lo = [before((qq, d), s) for qq, d, s in zip(q, doc, start)]
    return atoms, lo, [before((qq, d), e) for qq, d, e in zip(q, doc, end)]


@settings(max_examples=200, deadline=None)
@given(rows=intervals, far=st.sampled_from([0, 1 << 40, 1 << 55]))
def test_atoms_equal_the_plain_reading_on_every_path(rows: list, far: int) -> None:
    q = np.array([r[0] for r in rows], dtype=np.int64)
    doc = np.array([r[1] for r in rows], dtype=np.int64)
    start = np.array([r[2] for r in rows], dtype=np.int64) + far  # far: keys too wide to pack with an index
    end = start + np.array([r[3] for r in rows], dtype=np.int64)
    got = atomise(q, doc, start, end)
    atoms, lo, hi = plain_atoms(q.tolist(), doc.tolist(), start.tolist(), end.tolist())
    assert list(zip(got.q.tolist(), got.doc.tolist(), got.start.tolist(), got.end.tolist())) == atoms
    assert got.lo.tolist() == lo and got.hi.tolist() == hi


@settings(max_examples=200, deadline=None)
@given(
    cols=st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 9), st.integers(0, 1 << 30)), min_size=1, max_size=40),
    wide=st.booleans(),
)
def test_packed_lexsort_is_numpys_stable_lexsort(cols: list, wide: bool) -> None:
    keys = tuple(np.array([c[i] for c in cols], dtype=np.int64) << (33 if wide and i == 2 else 0) for i in range(3))
    assert _lexsort(keys).tolist() == np.lexsort(keys).tolist()


def test_units_merge_overlaps_and_give_shared_characters_to_the_higher_grade() -> None:
    # one query, one document: [0,4) and [2,6) of grade 1 merge; [5,8) of grade 2 takes [5,6) from them
    q, doc = np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.int64)
    start, end, grade = np.array([0, 2, 5]), np.array([4, 6, 8]), np.array([1, 1, 2])
    at = atomise(q, doc, start, end)
    a_grade, a_unit, u_q, u_grade = units(at.q.size, q, doc, start, end, grade, at.lo, at.hi)
    assert list(zip(at.start.tolist(), at.end.tolist())) == [(0, 2), (2, 4), (4, 5), (5, 6), (6, 8)]
    assert a_grade.tolist() == [1, 1, 1, 2, 2] and a_unit.tolist() == [0, 0, 0, 1, 1]
    assert u_q.tolist() == [0, 0] and u_grade.tolist() == [1, 2]
