"""Side data in another order of the tied rows: under ``ties="expected"`` the session builds each order's
side data again (``EvalData.arranged`` with its ``side``); the side data that follows its rows
(fairness groups, chunk tokens, span atoms: ``tie_orders.FOLLOWS_ROWS``, which the exact average cuts
instead of rebuilding) cut by the permutation must give every measure the same values, and both the
values of the run written in that order."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

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


def _same_either_way(data: Any, ms: list[Any], seed: int) -> tuple[Any, dict[str, dict[str, float]]]:
    """Another order of ``data``'s ties: every measure's values with the side data rebuilt (the
    session's) and cut by the permutation are the same; returns them and the run written in that order."""
    assert data.tie_groups is not None and data.tie_groups.tied
    perm = order_by_key(data.tie_groups, data.r_off, np.random.default_rng(seed).random(data.n_rows))
    assert not np.array_equal(perm, np.arange(data.n_rows))  # another order (else the test could not fail)
    rebuilt = data.arranged(perm)
    cut = dataclasses.replace(data, side=None).arranged(perm)
    for m in ms:
        a, b = m.kernel_for(rebuilt)(rebuilt, m), m.kernel_for(cut)(cut, m)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15, err_msg=str(m))
    by_pos = {}
    for q in range(data.n_queries):
        ids = data.rows.doc.to_list(perm[data.r_off[q] : data.r_off[q + 1]])
        by_pos[data.qids[q]] = {d: float(len(ids) - j) for j, d in enumerate(ids)}
    return rebuilt, by_pos


@pytest.mark.parametrize("seed", range(3))
def test_span_side_data_in_another_order_rebuilt_or_cut(seed: int) -> None:
    rnd = random.Random(50 + seed)
    table = ctxeval.Chunks.from_dict(
        {f"c{i}": ("D", s, s + rnd.randint(4, 30)) for i, s in enumerate(rnd.sample(range(80), 8))},
        documents={"D": DOC},
    )
    spans = [
        {"query_id": q, "doc_id": "D", "start": s, "end": s + rnd.randint(3, 20), "grade": rnd.choice([1, 2])}
        for q in ("q1", "q2")
        for s in rnd.sample(range(90), 2)
    ]
    run = {q: {f"c{i}": float(rnd.choice([1, 2])) for i in rnd.sample(range(8), 6)} for q in ("q1", "q2")}
    names = ["SpanRecall@3", "SpanIoU(mode=chroma)@2", "nDCG@3", "DCG", "SpanPrecision@9tok", "nDCG@12tok"]
    ms = [parse_measure(n) for n in names]
    labels = ctxeval.SpanLabels.from_records(spans)
    session, runs = open_session(labels, [run], ms, policies={"ties": "expected"}, rag={"chunks": table})
    data = session.prepare(runs[0], ms)
    rebuilt, by_pos = _same_either_way(data, ms, seed)
    written = ctxeval.evaluate(labels, by_pos, names, policies={"ties": "input"}, chunks=table).runs[0]
    for m in ms:
        want = np.array([written.per_query(m)[q] for q in data.qids])
        np.testing.assert_allclose(m.kernel_for(rebuilt)(rebuilt, m), want, rtol=1e-12, atol=1e-15, err_msg=str(m))


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
    rebuilt, by_pos = _same_either_way(data, ms, seed)
    written = ctxeval.evaluate(
        qrels, by_pos, names, policies={"ties": "input"}, rag={"fair_groups": groups, "chunks": table}
    ).runs[0]
    for m in ms:
        want = np.array([written.per_query(m)[q] for q in data.qids])
        np.testing.assert_allclose(m.kernel_for(rebuilt)(rebuilt, m), want, rtol=1e-12, atol=1e-15, err_msg=str(m))
