"""diagnose answers "cannot tell" where its test could not come out the other way (issue 29, point 12):
samples without a pool and K equal to the lists' depth (the top K is the whole pool, so no query can
fail at selection), and failing queries too few for the sign test ever to name a stage. With the pool
the reranker really chose from (the first stage's top 100), the same real data names the reranker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

import ctxeval
from real_data import dl19_grades, dl19_ranked
from scenario import planted

CANNOT = "cannot tell: the top {k} holds the whole pool on every query"


def _without_pool(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if k != "pool"} for r in rows]


def test_planted_samples_without_a_pool_at_the_lists_depth_cannot_tell(tmp_path: Path) -> None:
    files = planted.write(planted.make(), tmp_path)
    bare = _without_pool(files["refs_weak.jsonl"])
    d = ctxeval.diagnose(samples=bare, k=10)  # 10 = every list's depth: the run is its own pool
    assert d.advice.startswith(CANNOT.format(k=10)) and "`pool` field or `--pool`" in d.advice
    assert d.tested == {"retrieval": 0, "selection": 0, "left_out": 40}
    assert not any(q.selection_possible for q in d.queries)
    # the planted truth, with the pool the reranker chose from: 18 selection, 6 retrieval failures
    d = ctxeval.diagnose(samples=str(files["refs_weak.jsonl"]), k=planted.K)
    assert d.advice.startswith("fix the reranker first: 18 selection vs 6 retrieval failures (sign test p = 0.023)")
    assert d.p_value == pytest.approx(binomtest(18, 24, 0.5).pvalue, rel=1e-12)


def _dl19_samples() -> tuple[list[dict], dict[str, set[str]], dict[str, list[str]], dict[str, list[str]]]:
    """Per DL19 query, RankVicuna's top 10 of BM25's top 100 (the context), the references (NIST grade
    >= 2) and BM25's top 100 (the pool the reranker chose from)."""
    refs = {q: {d for d, g in docs.items() if g >= 2} for q, docs in dl19_grades().items()}
    pool, final = dl19_ranked("bm25.top100.txt"), dl19_ranked("rankvicuna_on_bm25.top100.txt")
    samples = [{"query_id": q, "retrieved_ids": final[q][:10], "reference_ids": sorted(refs[q])} for q in sorted(final)]
    return samples, refs, pool, final


def _verdicts(refs: dict[str, set[str]], pool: dict[str, list[str]], final: dict[str, list[str]], k: int) -> dict:
    """PROC@k and %PROC@k on binary labels written out (every reference weighs 1): the ideal holds
    min(k, |refs|), the pool's best k min(k, |pool ∩ refs|), the top k what it holds."""
    out = {}
    for q, docs in final.items():
        ideal = min(k, len(refs[q]))
        in_pool = min(k, len(set(pool[q]) & refs[q]))
        got = len(set(docs[:k]) & refs[q])
        proc = in_pool / ideal
        low_proc, low_pct = proc < 0.8, in_pool > 0 and got / in_pool < 0.8
        out[q] = {(True, True): "both", (True, False): "retrieval", (False, True): "selection"}.get(
            (low_proc, low_pct), "healthy"
        )
    return out


def test_real_dl19_sample_sets_cannot_tell_without_the_pool_and_name_the_reranker_with_it() -> None:
    samples, refs, pool, final = _dl19_samples()
    d = ctxeval.diagnose(samples=samples, k=10)
    truth = _verdicts(refs, {q: v[:10] for q, v in final.items()}, final, 10)
    assert {q.query_id: q.verdict for q in d.queries} == truth
    n_ret = sum(v == "retrieval" for v in truth.values())
    assert n_ret == 29 and "selection" not in truth.values()  # by construction
    assert d.advice.startswith(CANNOT.format(k=10)) and f"({n_ret} retrieval failures there" in d.advice
    with_pool = [{**s, "pool": pool[s["query_id"]]} for s in samples]
    d = ctxeval.diagnose(samples=with_pool, k=10)
    truth = _verdicts(refs, pool, final, 10)
    assert {q.query_id: q.verdict for q in d.queries} == truth
    r = sum(v == "retrieval" for v in truth.values())
    s = sum(v == "selection" for v in truth.values())
    assert (r, s) == (6, 18) and d.tested == {"retrieval": r, "selection": s, "left_out": 0}
    assert d.p_value == pytest.approx(binomtest(s, r + s, 0.5).pvalue, rel=1e-12)
    assert d.advice.startswith(f"fix the reranker first: {s} selection vs {r} retrieval failures (sign test p = 0.023)")


def _counted(retrieval: int, selection: int) -> dict:
    """``retrieval`` queries whose pool lacks the grade-5 doc, ``selection`` queries whose top 1 lost it;
    every pool reaches below the top 1, so both failures can occur everywhere."""
    qrels, pool, final = {}, {}, {}
    for i in range(retrieval):
        qrels[f"r{i}"] = {"gold": 5, "ok": 3}
        pool[f"r{i}"] = final[f"r{i}"] = {"ok": 2.0, "junk": 1.0}
    for i in range(selection):
        qrels[f"s{i}"] = {"gold": 5}
        pool[f"s{i}"] = {"gold": 2.0, "junk": 1.0}
        final[f"s{i}"] = {"junk": 2.0, "gold": 1.0}
    qrels["h"], pool["h"], final["h"] = {"gold": 5}, {"gold": 2.0, "x": 1.0}, {"gold": 2.0, "x": 1.0}
    return {"qrels": qrels, "run": final, "pool": pool}


@given(r=st.integers(0, 9), s=st.integers(0, 9))
def test_too_few_failures_for_the_sign_test_is_cannot_tell(r: int, s: int) -> None:
    d = ctxeval.diagnose(**_counted(r, s), k=1)
    assert (d.tested["retrieval"], d.tested["selection"], d.tested["left_out"]) == (r, s, 0)
    could_ever = r + s > 0 and binomtest(r + s, r + s, 0.5).pvalue < 0.05  # the most uneven split
    assert d.advice.startswith("cannot tell") == (r + s > 0 and not could_ever)
    if could_ever:
        assert d.advice.startswith(("fix the", "no clear winner"))
