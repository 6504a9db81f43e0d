"""Hard negatives do not depend on a run's score scale (issue 12, point 2).

Shaped like the TREC DL case: BM25 scores spread over a top 100 (lowest s / s_max about 0.27) and a
dense run whose cosine scores are squeezed into [0.863, 1]. Under the earlier rule (s / s_max >= 0.7)
every utility-0 passage of the dense run was a "hard negative"; the relative score is now min-max within
the list, so any increasing affine change of the scores gives the same utilities and verdicts, and a run
whose rule still flags most of its utility-0 passages is noted.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import ctxeval
from ctxeval._context.utility import FLAG_SHARE
from ctxeval._distraction import distraction_table

DEPTH = 100


def _named(**runs: dict) -> list[ctxeval.Run]:
    return [ctxeval.Run.from_dict(r, name=n) for n, r in runs.items()]


def _case(seed: int = 3, n_queries: int = 6) -> tuple[dict, dict, dict]:
    """Per query: 100 passages with BM25-like scores from 30 down to 8 (s / s_max down to 0.27), a
    grade-5 passage at rank 1, grade-3 at rank 4, grade 1 (a distractor) at rank 6, a few grade-2
    (utility 0) passages and the rest unjudged. The dense run ranks alike with scores
    0.863 + 0.137 * (s - 8) / 22, i.e. in [0.863, 1]."""
    rng = random.Random(seed)
    qrels: dict = {}
    bm25: dict = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"{qid}-d{i:03d}" for i in range(DEPTH)]
        scores = sorted((rng.uniform(8.0, 30.0) for _ in range(DEPTH - 2)), reverse=True)
        scores = [30.0, *scores, 8.0]
        qrels[qid] = {docs[0]: 5, docs[3]: 3, docs[5]: 1} | {docs[i]: 2 for i in (1, 8, 20, 50)}
        bm25[qid] = dict(zip(docs, scores))
    dense = {q: {d: 0.863 + 0.137 * (s - 8.0) / 22.0 for d, s in docs.items()} for q, docs in bm25.items()}
    return qrels, bm25, dense


def test_the_old_rule_would_flag_every_utility_0_passage_of_the_dense_run() -> None:
    _, bm25, dense = _case()
    lowest = {
        name: min(min(s / max(d.values()) for s in d.values()) for d in run.values())
        for name, run in (("bm25", bm25), ("dense", dense))
    }
    assert lowest["dense"] == pytest.approx(0.863) and lowest["bm25"] == pytest.approx(8 / 30)  # the case's shape


@pytest.mark.parametrize("k", [5, 20, 100])
def test_dense_and_bm25_get_the_same_hard_negatives_and_verdict(k: int) -> None:
    qrels, bm25, dense = _case()
    t = distraction_table(qrels, _named(bm25=bm25, dense=dense), k=k)
    a, b = t["rows"]
    assert a["hard_negatives"] == b["hard_negatives"]
    assert a["verdict"] == b["verdict"] and a["distractor_rate"] == b["distractor_rate"]
    assert a["utility_counts"] == b["utility_counts"]
    # hand count of the top k of every query: utility-0 passages are the grade-2 ones and the unjudged;
    # hard negative when at rank <= 3 or relative score (s - 8) / 22 >= 0.7
    judged = unlabelled = 0
    for qid, docs in bm25.items():
        for rank, (d, s) in enumerate(sorted(docs.items(), key=lambda x: -x[1])[:k], start=1):
            g = qrels[qid].get(d)
            if g in (None, 2) and (rank <= 3 or (s - 8.0) / 22.0 >= 0.7):
                judged += g == 2
                unlabelled += g is None
    assert a["hard_negatives"]["top_k"] == {"judged": judged, "unlabelled": unlabelled}
    assert judged > 0 and unlabelled > 0


@given(st.floats(0.001, 1000.0), st.floats(-100.0, 100.0))
def test_any_increasing_affine_change_of_the_scores_changes_nothing(a: float, b: float) -> None:
    qrels, bm25, _ = _case(n_queries=2)
    moved = {q: {d: a * s + b for d, s in docs.items()} for q, docs in bm25.items()}
    # the change must keep the order of the scores as float32 (the ranking's precision)
    for docs in moved.values():
        v = np.array(sorted(docs.values(), reverse=True), dtype=np.float32)
        assume(bool(np.all(np.diff(v) < 0)))
    names = ["DistractorRate@10", "DistractorHarm@10", "dDCG@10", "UDCG@10"]
    r = ctxeval.evaluate(qrels, _named(bm25=bm25, moved=moved), names)
    for n in names:
        assert r.runs[1].values[ctxeval.parse_measure(n)] == pytest.approx(
            r.runs[0].values[ctxeval.parse_measure(n)], abs=1e-9
        )


def test_a_run_whose_rule_flags_most_utility_0_passages_is_noted() -> None:
    """95 of 100 scores within 2 % of the top and 5 far below: min-max puts the 95 above 0.7, so the
    rule flags nearly every utility-0 passage; the note names the counts. BM25 is not noted."""
    qrels, bm25, _ = _case(n_queries=2)
    squeezed = {}
    for qid, docs in bm25.items():
        ranked = sorted(docs, key=lambda d: -docs[d])
        squeezed[qid] = {d: (1.0 - 0.0002 * i if i < 95 else 0.1 - 0.01 * i / 100) for i, d in enumerate(ranked)}
    t = distraction_table(qrels, _named(bm25=bm25, squeezed=squeezed), k=10)
    whole = t["rows"][1]["hard_negatives"]["whole_list"]
    # per query: 100 passages, 3 of non-zero utility (grades 5, 3, 1), 97 of utility 0; ranks 1-95 are
    # >= 0.7 except the 3 non-zero ones: 92 by score; 95-99 (ranks 96-100) are below: not flagged
    assert whole["utility_0"] == 2 * 97 and whole["by_score"] == 2 * 92
    assert whole["by_score"] > FLAG_SHARE * whole["utility_0"]
    notes = [n for n in t["notes"] if "relative-score rule" in n]
    assert notes == [
        "squeezed: the relative-score rule (>= 0.7) flags 184 of the run's 194 utility-0 passages (95 %) as hard "
        "negatives: its scores sit close to the top of each list, so its distractor figures rest on tau more than on "
        "the run (LLM utilities, --utilities, do not)"
    ]
    r = ctxeval.evaluate(qrels, _named(bm25=bm25, squeezed=squeezed), ["DistractorRate@10"])
    assert [n for n in r.notes if "relative-score rule" in n] == notes
