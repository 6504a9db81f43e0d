"""CoverageRecall and AttributionRate: from a sample set's facets and citations, by hand; NA where a
sample lacks the field; clear errors where the data or the input cannot serve them."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ctxeval
from ctxeval import ConfigError, FormatError, InputError, Samples
from ctxeval._calibrate import prefix_measure
from ctxeval._session import open_session, samples_inputs

RECS = [
    {
        "query_id": "q1",
        "retrieved_ids": ["a", "b", "c", "d"],
        "reference_ids": ["a"],
        # x is covered by b (rank 2), y by d (rank 4), w by nothing retrieved
        "facets": [{"name": "x", "ids": ["b", "z"]}, {"name": "y", "ids": ["d"]}, {"name": "w", "ids": ["q"]}],
        "citations": ["a", "c"],
    },
    {"query_id": "q2", "retrieved_ids": ["e", "f"], "reference_ids": ["f"]},  # neither field
    {"query_id": "q3", "retrieved_ids": ["g"], "reference_ids": ["g"], "facets": [], "citations": []},
]


def test_by_hand() -> None:
    r = ctxeval.evaluate(
        samples=RECS,
        measures=["CoverageRecall@1", "CoverageRecall@2", "CoverageRecall@4", "AttributionRate", "AttributionRate@2"],
    ).runs[0]
    pq = {str(m): r.per_query(m) for m in r.values}
    # q1: top 1 (a) covers nothing; top 2 adds b -> x; top 4 adds d -> y: 0, 1/3, 2/3
    assert pq["CoverageRecall@1"]["q1"] == 0.0
    assert pq["CoverageRecall@2"]["q1"] == pytest.approx(1 / 3) and pq["CoverageRecall@4"]["q1"] == pytest.approx(2 / 3)
    # cited a and c of the 4 given: 1/2; of the top 2 (a, b): a -> 1/2
    assert pq["AttributionRate"]["q1"] == 0.5 and pq["AttributionRate@2"]["q1"] == 0.5
    # q2 gives neither field: NA, left out of the means; q3 gives empty ones: coverage NA (no facet), attribution 0
    assert math.isnan(pq["CoverageRecall@2"]["q2"]) and math.isnan(pq["AttributionRate"]["q2"])
    assert math.isnan(pq["CoverageRecall@2"]["q3"]) and pq["AttributionRate"]["q3"] == 0.0
    assert r.mean("AttributionRate") == pytest.approx((0.5 + 0.0) / 2)


def test_the_prefix_cut_agrees_with_evaluate_on_the_cut_samples() -> None:
    """calibrate's prefix cuts carry the sample labels: CoverageRecall / AttributionRate of the first
    L chunks equal evaluate on the samples cut to L chunks."""
    qrels, runs, _, sets = samples_inputs(RECS)
    for name in ("CoverageRecall@4", "AttributionRate"):
        m = ctxeval.parse_measure(name)
        session, (run,) = open_session(qrels, runs, [m], samples=sets)
        got = prefix_measure(session.prepare(run, [m], keep_rows=True), m, 4)
        for length in range(1, 5):
            cut = [
                {
                    **rec,
                    "retrieved_ids": rec["retrieved_ids"][:length],
                    "citations": [c for c in rec.get("citations", []) if c in rec["retrieved_ids"][:length]],
                }
                if "citations" in rec
                else {**rec, "retrieved_ids": rec["retrieved_ids"][:length]}
                for rec in RECS
            ]
            want = ctxeval.evaluate(samples=cut, measures=[name]).runs[0].values[m]
            np.testing.assert_allclose(got[:, length], want, equal_nan=True, err_msg=f"{name} L={length}")


def test_errors() -> None:
    with pytest.raises(ConfigError, match="read facets, nuggets and citations of a sample set"):
        ctxeval.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["AttributionRate"])
    bad = [{"query_id": "q1", "retrieved_ids": ["a"], "reference_ids": ["a"], "citations": ["zz"]}]
    with pytest.raises(
        InputError, match="query 'q1': the response cites chunk 'zz', which the sample did not retrieve"
    ):
        ctxeval.evaluate(samples=bad, measures=["AttributionRate"])
    with pytest.raises(FormatError, match=r"<samples>:1: facets\[1\] must be an object with ids"):
        Samples.from_records([{"query_id": "q", "retrieved_ids": ["a"], "facets": ["a"]}])


def test_compare_takes_samples_with_their_side_data_and_categories() -> None:
    a = [{**rec, "category": "factoid" if rec["query_id"] != "q2" else "multi"} for rec in RECS]
    b = [{**rec, "citations": rec.get("citations") and ["a"]} if rec["query_id"] == "q1" else rec for rec in a]
    b = [{k: v for k, v in rec.items() if v is not None} for rec in b]
    rep = ctxeval.compare(
        samples=[Samples.from_records(a, name="first"), Samples.from_records(b, name="second")],
        measures=["AttributionRate", "CoverageRecall@2"],
        stats={"permutations": 100, "resamples": 100},
        sections={"curves_k": 0},
    ).to_dict()
    agg = {r["name"]: r["aggregate"] for r in rep["runs"]}
    # first: q1 cites a, c of 4 (1/2), q3 none of 1 (0) -> 1/4; second: q1 cites a (1/4), q3 0 -> 1/8
    assert agg["first"]["AttributionRate"] == pytest.approx(0.25) and agg["second"]["AttributionRate"] == pytest.approx(
        0.125
    )
    assert agg["first"]["CoverageRecall@2"] == pytest.approx(1 / 3)  # q1 only (q2, q3 have no facets)
    # the samples' categories stratify the report
    assert {s["kind"] for s in rep["settings"]["strata"]} >= {"num_rel"} and "factoid" in rep["strata"]


NUGGETS = [
    {
        "query_id": "q1",
        "retrieved_ids": ["a", "b", "c"],
        "reference_ids": ["a"],
        "nuggets": [
            {"text": "n1", "importance": "vital", "supported_by": ["b"]},
            {"text": "n2", "importance": "vital", "partially_supported_by": ["a"]},
            {"text": "n3", "importance": "okay", "supported_by": ["c", "z"]},
            {"text": "n4", "importance": "okay"},
        ],
    },
    {
        "query_id": "q2",
        "retrieved_ids": ["d"],
        "reference_ids": ["d"],
        "nuggets": [{"text": "n", "importance": "okay", "supported_by": ["d"]}],
    },
    {"query_id": "q3", "retrieved_ids": ["e"], "reference_ids": ["e"]},
]


@pytest.mark.parametrize(
    ("score", "q1_at_2"),
    [
        # top 2 = a, b: n1 supported (1), n2 partially (0.5), n3 only at rank 3 (0), n4 unsupported (0)
        ("vital_strict", (1 + 0) / 2),
        ("vital", (1 + 0.5) / 2),
        ("all_strict", 1 / 4),
        ("all", 1.5 / 4),
        ("weighted_strict", (1 * 1) / (1 + 1 + 0.5 + 0.5)),
        ("weighted", (1 * 1 + 1 * 0.5) / (1 + 1 + 0.5 + 0.5)),
    ],
)
def test_nugget_recall_by_hand(score: str, q1_at_2: float) -> None:
    name = f"NuggetRecall(score={score})@2" if score != "vital_strict" else "NuggetRecall@2"
    pq = ctxeval.evaluate(samples=NUGGETS, measures=[name]).runs[0].per_query(name)
    assert pq["q1"] == pytest.approx(q1_at_2)
    # q2 has one okay nugget, supported: vital scores 0.0 (no vital nugget: nuggetizer's reading; NA with
    # empty=na), the others 1; q3 has no nuggets field: NA
    assert math.isnan(pq["q3"])
    if score.startswith("vital"):
        assert pq["q2"] == 0.0
        na_name = f"NuggetRecall(score={score},empty=na)@2"
        assert math.isnan(ctxeval.evaluate(samples=NUGGETS, measures=[na_name]).runs[0].per_query(na_name)["q2"])
    else:
        assert pq["q2"] == 1.0


def test_nugget_recall_follows_the_prefix_cut() -> None:
    qrels, runs, _, sets = samples_inputs(NUGGETS)
    m = ctxeval.parse_measure("NuggetRecall(score=all)@3")
    session, (run,) = open_session(qrels, runs, [m], samples=sets)
    got = prefix_measure(session.prepare(run, [m], keep_rows=True), m, 3)
    for length in range(1, 4):
        cut = [{**rec, "retrieved_ids": rec["retrieved_ids"][:length]} for rec in NUGGETS]
        want = ctxeval.evaluate(samples=cut, measures=[str(m)]).runs[0].values[m]
        np.testing.assert_allclose(got[:, length], want, equal_nan=True, err_msg=f"L={length}")


def test_nugget_errors() -> None:
    with pytest.raises(FormatError, match=r"nuggets\[1\].importance must be 'vital' or 'okay', got 'key'"):
        Samples.from_records(
            [{"query_id": "q", "retrieved_ids": ["a"], "nuggets": [{"text": "t", "importance": "key"}]}]
        )
    with pytest.raises(ctxeval.MeasureError, match="score"):
        ctxeval.parse_measure("NuggetRecall(score=best)@5")
