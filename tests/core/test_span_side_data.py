"""The pieces of the span side data against plain readings: the labels' query positions found run by
run equal a search of every label."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxeval._core.join import positions, run_positions


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
