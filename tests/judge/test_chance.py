"""Agreement against chance and the circularity check.

Null judges (permuted within each query, constant, random from people's grades): their draws against
scikit-learn's kappa on the same pairs; on the issue's DL19-shaped shallow design (the real NIST
qrels and runs: 120 pairs over 10 topics, 30 per grade) a constant, a permuted and a random judge are
rejected or "not informative", and people's labels with 10 % noise are accepted. Circularity: a run
reranked by the lexical judge itself is flagged on the real DL19 data in >= 49 of 50 seeds, runs that
do not match words (dense, learned sparse, LLM rerankers over dense) at most once in 25."""

from __future__ import annotations

import glob
import json
import os
import random
import zlib
from typing import Any

import numpy as np
import pytest

from ctxeval._io.model import Qrels, Run
from ctxeval._judge.kinds.grade import GRADE_TREC
from ctxeval._judge.nulls import NULLS, NullSettings, label_nulls, null_labels
from ctxeval._judge.systems import SystemSettings, circularity
from ctxeval._judge.verbs import agreement
from ctxeval._measures import parse_measures
from real_data import real


def test_the_null_judges_keep_what_they_should() -> None:
    rng = np.random.default_rng(0)
    judge = {(f"q{i % 3}", f"d{i}"): i % 4 for i in range(30)}
    human = {(f"q{i % 3}", f"d{i}"): [0, 0, 1, 3][i % 4] for i in range(40)}
    perm = null_labels("permuted", judge, human, rng)
    for q in ("q0", "q1", "q2"):  # each query's grades, shuffled among its own pairs
        assert sorted(g for (qq, _), g in perm.items() if qq == q) == sorted(
            g for (qq, _), g in judge.items() if qq == q
        )
    assert set(null_labels("constant", judge, human, rng).values()) == {0}  # the commonest grade (ties: lowest)
    drawn = [g for _ in range(200) for g in null_labels("random", judge, human, rng).values()]
    assert set(drawn) <= {0, 1, 3} and abs(np.mean(np.array(drawn) == 0) - 0.5) < 0.03  # people's distribution


def test_the_null_quantiles_against_scikit_learn() -> None:
    """label_nulls' draws, redrawn here with the same seed and scored by scikit-learn: the same 95th
    percentiles; the judge's own kappa beside them."""
    from sklearn.metrics import cohen_kappa_score

    rng = random.Random(1)
    pairs = [(f"q{i % 8}", f"d{i}") for i in range(160)]
    human = {p: rng.choice([0, 1, 2, 3]) for p in pairs}
    judge = {p: g if rng.random() < 0.6 else rng.choice([0, 1, 2, 3]) for p, g in human.items()}
    s = NullSettings(draws=30, seed=4)
    got = label_nulls(judge, human, sorted(pairs), (0, 1, 2, 3), 2, s)
    redraw = np.random.default_rng(4)
    want: dict[str, list[float]] = {}
    both = sorted(pairs)
    for kind in NULLS:
        for _ in range(1 if kind == "constant" else s.draws):
            nj = null_labels(kind, {p: judge[p] for p in both}, human, redraw)
            want.setdefault(kind, []).append(
                cohen_kappa_score([human[p] for p in both], [nj[p] for p in both], labels=[0, 1, 2, 3])
            )
    for kind in ("permuted", "random"):
        assert got["kappa"]["nulls"][kind]["quantile"] == pytest.approx(np.quantile(want[kind], 0.95))
    assert got["kappa"]["judge"] == pytest.approx(cohen_kappa_score([human[p] for p in both], [judge[p] for p in both]))
    assert got["kappa"]["informative"]


def _dl19() -> tuple[dict[str, dict[str, int]], list[str]]:
    d = real("dl19")
    return Qrels.coerce(str(d / "qrels.dl19-passage.txt")).to_dict(), sorted(glob.glob(str(d / "runs" / "*.txt")))


def _design(qrels: dict[str, dict[str, int]], seed: int) -> dict[str, dict[str, int]]:
    """The issue's shallow design: 10 topics, 30 pairs of each NIST grade (120)."""
    rng = random.Random(seed)
    topics = sorted(t for t in qrels if all(sum(g == k for g in qrels[t].values()) >= 3 for k in range(4)))
    ts = rng.sample(topics, 10)
    human: dict[str, dict[str, int]] = {}
    for k in range(4):
        pool = [(t, d) for t in ts for d, g in sorted(qrels[t].items()) if g == k]
        for t, d in rng.sample(pool, 30):
            human.setdefault(t, {})[d] = k
    return human


def _judge_of(kind: str, human: dict[str, dict[str, int]], seed: int) -> dict[str, dict[str, int]]:
    rng = random.Random(seed + 100)
    if kind == "constant":
        return {t: dict.fromkeys(ds, 2) for t, ds in human.items()}
    if kind == "permuted":
        out = {}
        for t, ds in human.items():
            g = list(ds.values())
            rng.shuffle(g)
            out[t] = dict(zip(ds, g))
        return out
    if kind == "random":
        return {t: {d: rng.randint(0, 3) for d in ds} for t, ds in human.items()}
    return {  # people's labels, 10 % of them moved to another grade
        t: {d: g if rng.random() >= 0.1 else rng.choice([x for x in range(4) if x != g]) for d, g in ds.items()}
        for t, ds in human.items()
    }


@pytest.mark.slow  # about 40 s: 8 cards, each with 200 draws of two null judges over 10 real runs
@pytest.mark.parametrize("seed", [0, 1])
def test_null_judges_on_the_dl19_shallow_design_are_rejected_and_a_noisy_copy_of_people_is_accepted(seed: int) -> None:
    qrels, runs = _dl19()
    human = _design(qrels, seed)
    for kind in ("constant", "permuted", "random", "noisy"):
        card = agreement(human, _judge_of(kind, human, seed), runs)
        v = card.verdict
        assert card.chance is not None and card.chance["draws"] == 200
        if kind == "noisy":
            assert v["verdict"] in ("replace", "rank-only", "labels-only"), v
            assert card.chance["labels"]["kappa_binary"]["informative"]
        else:
            tau = card.chance["ranking"]["kendall_tau"]
            assert v["verdict"] == "reject" or not tau["informative"], (kind, v)
            assert not card.chance["labels"]["kappa_binary"]["informative"] or v["verdict"] == "reject"
            assert v["verdict"] not in ("replace", "rank-only"), (kind, v)


def _texts() -> tuple[dict[str, str], dict[str, str]]:
    d = real("dl19-text")
    passages = {}
    with open(d / "passages.jsonl", "rb") as f:  # one JSON object a line (some texts hold U+2028)
        for line in f:
            rec = json.loads(line)
            passages[rec["id"]] = rec["text"]
    topics = dict(ln.split("\t", 1) for ln in (d / "topics.tsv").read_text().splitlines() if "\t" in ln)
    return topics, passages


@pytest.mark.slow  # about 90 s: 50 seeds of 11 runs on 10 real topics, 1000 topic resamples each
def test_a_run_reranked_by_the_judge_is_flagged_and_honest_runs_are_not() -> None:
    qrels, paths = _dl19()
    topics, passages = _texts()
    runs = {os.path.basename(p).split(".")[0]: Run.coerce(p) for p in paths}
    tables = {n: r.to_dict() for n, r in runs.items()}
    cache: dict[tuple[str, str], int] = {}

    def grade(t: str, d: str) -> int:
        if (t, d) not in cache:
            cache[t, d] = GRADE_TREC.offline({"question": topics[t], "passage": passages[d]})["grade"]
        return cache[t, d]

    pool: dict[str, set[str]] = {}
    for table in tables.values():
        for t, docs in table.items():
            pool.setdefault(t, set()).update(d for d, _ in sorted(docs.items(), key=lambda kv: -kv[1])[:20])
    honest = ["tasb", "openai_ada2", "spladepp_ed", "rankvicuna_on_tasb", "rankvicuna_on_openai_ada2"]
    s = SystemSettings(parse_measures(["nDCG@10"])[0])
    planted_flags, honest_flags = [], []
    for seed in range(50):
        rng = random.Random(seed)
        ts = rng.sample(sorted(qrels), 10)
        human = {(t, d): g for t in ts for d, g in qrels[t].items()}
        judge = {p: grade(*p) for p in human}
        planted: dict[str, dict[str, float]] = {}
        for t in ts:  # the pool's top 20 by the judge's own grade: a run built to please it
            docs = sorted(pool[t])
            rng.shuffle(docs)
            planted[t] = {d: float(20 - i) for i, d in enumerate(sorted(docs, key=lambda d: -grade(t, d))[:20])}
        rs: list[Any] = [Run.from_dict(planted, name="planted")]
        rs += [Run.from_dict({t: tables[n][t] for t in ts}, name=n) for n in tables]
        c = circularity(human, judge, rs, s)
        planted_flags.append("planted" in c["flagged"])
        honest_flags.append(sum(h in c["flagged"] for h in honest))
    assert sum(planted_flags) >= 49
    assert sum(honest_flags[:5]) <= 1 and sum(honest_flags) <= 10  # at most 1 in 25 honest runs


def _fitted_design(judge_of: Any, seed: int) -> tuple[dict, dict, list[Any]]:
    """12 topics of 40 docs with people's grades 0-3; six honest runs (people's order, noisier and
    noisier); a planted run: each topic's docs by the judge's grade, ties shuffled."""
    rng = random.Random(seed)
    human = {(f"t{t}", f"d{t}_{i}"): rng.choice([0, 0, 0, 1, 1, 2, 3]) for t in range(12) for i in range(40)}
    judge = {p: judge_of(p, g, rng) for p, g in human.items()}
    runs: list[Any] = []
    for noise, name in zip((0.5, 1, 1.5, 2, 3, 4), "abcdef"):
        table: dict[str, dict[str, float]] = {}
        for (t, d), g in human.items():
            table.setdefault(t, {})[d] = g + rng.gauss(0, noise)
        runs.append(Run.from_dict(table, name=name))
    planted: dict[str, dict[str, float]] = {}
    for t in sorted({t for t, _ in human}):
        docs = [d for tt, d in human if tt == t]
        rng.shuffle(docs)
        planted[t] = {d: float(40 - i) for i, d in enumerate(sorted(docs, key=lambda d: -judge[t, d])[:20])}
    return human, judge, [Run.from_dict(planted, name="planted"), *runs]


def test_a_judge_whose_grades_barely_vary_cannot_tell_a_fitted_run() -> None:
    """A judge giving grade 2 to about 90 % of the pairs: the run reranked by it is reordered at random
    among its ties, so the check cannot tell (and says why) in every seed, flagging nothing; a judge
    of its own (grades from something people do not see) lifts the run fitted to it, and the check
    can tell and flags it."""
    s = SystemSettings(parse_measures(["nDCG@10"])[0], resamples=300)
    for seed in range(3):
        human, judge, runs = _fitted_design(lambda p, g, rng: 2 if rng.random() < 0.9 else rng.choice([1, 3]), seed)
        c = circularity(human, judge, runs, s)
        share = sum(g == 2 for g in judge.values()) / len(judge)
        assert c["cannot_tell"].startswith(f"the judge gives grade 2 to {share:.0%} of the 480 pairs both label")
        assert c["flagged"] == [] and not any(r["flag"] for r in c["runs"].values())
        human, judge, runs = _fitted_design(lambda p, g, rng: zlib.crc32(p[1].encode()) % 4, seed)  # not people's
        c = circularity(human, judge, runs, s)
        assert c["cannot_tell"] is None and "planted" in c["flagged"], c["flagged"]
