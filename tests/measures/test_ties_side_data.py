"""Side data in another order of the tied rows: under ``ties="expected"`` the session builds each order's
side data again (``EvalData.arranged`` with its ``side``); side data that follows its rows (fairness
groups, chunk tokens, span atoms) cut by the permutation instead must give every measure the same
values, and both the values of the run written in that order."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

import ctxeval
from ctxeval._core.ties import order_by_key
from ctxeval._measures import parse_measure
from ctxeval._session import open_session

DOC = " ".join(f"w{i:02d}" for i in range(40))


def _case(seed: int) -> tuple[dict, dict, dict]:
    rnd = random.Random(seed)
    docs = [f"c{i}" for i in range(8)]
    qrels = {q: {d: rnd.choice([0, 1, 2]) for d in rnd.sample(docs, 5)} for q in ("q1", "q2", "q3")}
    run = {q: {d: float(rnd.choice([1, 2])) for d in rnd.sample(docs, rnd.randint(3, 8))} for q in qrels}
    groups = {d: rnd.choice(["x", "y", ["x", "y"], {"x": 1, "z": 3}]) for d in docs[:-1]}
    return qrels, run, groups


@pytest.mark.parametrize("seed", range(4))
def test_an_order_of_the_ties_reads_the_same_side_data_rebuilt_or_cut(seed: int) -> None:
    qrels, run, groups = _case(seed)
    rnd = random.Random(seed)
    table = ctxeval.Chunks.from_dict(
        {f"c{i}": ("D", s, s + rnd.randint(4, 30)) for i, s in enumerate(rnd.sample(range(80), 8))},
        documents={"D": DOC},
    )
    names = ["AWRF", "AWRF@3", "AWRF-FRT(p=0.5)@3", "nDCG-AWRF@4", "nDCG@9tok", "R@6tok", "P(judged_only=true)@2"]
    ms = [parse_measure(n) for n in names]
    session, runs = open_session(
        qrels, [run], ms, policies={"ties": "expected"}, rag={"fair_groups": groups, "chunks": table}
    )
    data = session.prepare(runs[0], ms)
    assert data.tie_groups is not None and data.tie_groups.tied
    perm = order_by_key(data.tie_groups, data.r_off, np.random.default_rng(seed).random(data.n_rows))
    assert not np.array_equal(perm, np.arange(data.n_rows))  # another order (else the test could not fail)
    rebuilt = data.arranged(perm)
    cut = dataclasses.replace(data, side=None).arranged(perm)
    # the run written in that order, read as it stands
    by_pos = {}
    for q in range(data.n_queries):
        rows = perm[data.r_off[q] : data.r_off[q + 1]]
        ids = data.rows.doc.to_list(rows) if data.rows is not None else []
        by_pos[data.qids[q]] = {d: float(len(ids) - j) for j, d in enumerate(ids)}
    written = ctxeval.evaluate(
        qrels, by_pos, names, policies={"ties": "input"}, rag={"fair_groups": groups, "chunks": table}
    ).runs[0]
    for m in ms:
        a = m.kernel_for(rebuilt)(rebuilt, m)
        b = m.kernel_for(cut)(cut, m)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15, err_msg=str(m))
        want = np.array([written.per_query(m)[q] for q in data.qids])
        np.testing.assert_allclose(a, want, rtol=1e-12, atol=1e-15, err_msg=str(m))
