"""AWRF against its references on generated queries: the TREC Fair Ranking track's definition written
out here doc by doc (its discount, its alignments, scipy's Jensen-Shannon distance squared, as the
track's code takes it) and FairRankTune 0.0.7's ``Metrics.AWRF`` (the oracle of ``AWRF-FRT``, run on
the rankings and groups it reads)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from FairRankTune import Metrics as frt  # the oracle (the test extra installs it)
from scipy.spatial.distance import jensenshannon

import ctxeval

N_DOCS = 120


def _corpus(rng: np.random.Generator, dims: int, multi: bool, unlabelled: float) -> list[tuple[str, str, str, float]]:
    """Label records (doc, dimension, level, weight) of the corpus's docs; some docs without any."""
    names = [""] if dims == 1 else ["geo", "gender", "age"][:dims]
    levels = {n: [f"{n or 'g'}{i}" for i in range(int(rng.integers(2, 5)))] for n in names}
    out = []
    for j in range(N_DOCS):
        if rng.random() < unlabelled:
            continue
        for n in names:
            if dims > 1 and rng.random() < 0.15:
                continue  # no label in this dimension: @unknown there
            k = int(rng.integers(1, 3)) if multi else 1
            for lv in rng.choice(levels[n], k, replace=False):
                out.append((f"d{j}", n, str(lv), float(rng.choice([1.0, 0.5, 2.0, 0.25])) if multi else 1.0))
    return out


def _alignments(records: list[tuple[str, str, str, float]]) -> dict[str, dict[str, float]]:
    """Every labelled doc's intersectional groups and weights, by the rule written out plainly."""
    dims = sorted({d for _, d, _, _ in records})
    per: dict[str, dict[str, dict[str, float]]] = {}
    for doc, dim, lv, w in records:
        per.setdefault(doc, {}).setdefault(dim, {})[lv] = w
    out = {}
    for doc, by_dim in per.items():
        vectors = []
        for dim in dims:
            v = by_dim.get(dim, {"@unknown": 1.0})
            tot = sum(v.values())
            vectors.append([(dim, lv, w / tot) for lv, w in v.items()])
        groups: dict[str, float] = {}
        for combo in itertools.product(*vectors):
            name = "&".join(lv if dim == "" else f"{dim}={lv}" for dim, lv, _ in combo)
            groups[name] = math.prod(w for _, _, w in combo)
        out[doc] = groups
    return out


def _batch(seed: int, n_q: int, dims: int = 1, multi: bool = False, unlabelled: float = 0.0):
    rng = np.random.default_rng(seed)
    records = _corpus(rng, dims, multi, unlabelled)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n_q):
        docs = [f"d{j}" for j in rng.choice(N_DOCS, int(rng.integers(2, 40)), replace=False)]
        qrels[f"q{i}"] = {d: int(rng.choice([0, 1, 1, 2])) for d in docs[: int(rng.integers(1, len(docs) + 1))]}
        ranked = docs[: int(rng.integers(1, len(docs) + 1))]
        ranked = [str(d) for d in rng.permutation(ranked)]
        run[f"q{i}"] = {d: float(len(ranked) - r) + 0.5 for r, d in enumerate(ranked)}  # distinct scores
    return records, qrels, run


def _file(records, path) -> str:
    path.write_text("".join(f"{d} {(dim + '=') if dim else ''}{lv} {w!r}\n" for d, dim, lv, w in records))
    return str(path)


def _ranking(run: dict[str, float]) -> list[str]:
    return sorted(run, key=lambda d: -run[d])


def _trec_awrf(ranking, align, target, disc) -> float:
    """The track's AWRF of one ranking: exposure by the discount over the docs it knows, their ranks
    kept; scipy's Jensen-Shannon distance, squared."""
    known = [(w, align[d]) for d, w in zip(ranking, disc) if d in align]
    groups = sorted({g for _, a in known for g in a} | set(target))
    P = np.array([sum(w * a.get(g, 0.0) for w, a in known) for g in groups])
    Q = np.array([target.get(g, 0.0) for g in groups])
    if not groups or P.sum() <= 0 or Q.sum() <= 0:
        return math.nan
    dist = jensenshannon(P, Q)
    return 1.0 - dist * dist


def _relevant_target(qrels_q, align, rel) -> dict[str, float]:
    docs = [d for d, g in qrels_q.items() if g >= rel and d in align]
    out: dict[str, float] = {}
    for d in docs:
        for g, w in align[d].items():
            out[g] = out.get(g, 0.0) + w / len(docs)
    return out


def _discount(n: int, p: float | None, dtype=np.float64) -> np.ndarray:
    ranks = np.arange(1, n + 1, dtype=dtype)
    if p is None:
        return np.reciprocal(np.log2(np.maximum(ranks, dtype(2))))
    return p * (1 - p) ** (ranks - 1)


def _close(want: dict[str, float], got: dict[str, float], tol: float) -> list:
    bad = []
    for q, w in want.items():
        g = got[q]
        if not ((math.isnan(w) and math.isnan(g)) or math.isclose(w, g, rel_tol=tol, abs_tol=tol)):
            bad.append((q, w, g))
    return bad


def _check_trec(seed: int, n_q: int, tmp_path, dims: int, multi: bool, unlabelled: float) -> int:
    records, qrels, run = _batch(seed, n_q, dims, multi, unlabelled)
    align = _alignments(records)
    rng = np.random.default_rng(seed + 1)
    k = int(rng.integers(1, 30))
    p = float(rng.choice([0.5, 0.1, float(rng.uniform(0.01, 0.99))]))
    rel = int(rng.choice([1, 2]))
    names = ["AWRF", f"AWRF@{k}", f"AWRF(p={p!r})@{k}", f"AWRF(rel={rel})", f"nDCG-AWRF@{k}"]
    res = ctxeval.evaluate(qrels, run, names, rag={"fair_groups": _file(records, tmp_path / f"g{seed}.txt")}).runs[0]
    want: dict[str, dict[str, float]] = {n: {} for n in names}
    for q in qrels:
        ranking = _ranking(run[q])
        tgt1, tgt = _relevant_target(qrels[q], align, 1), _relevant_target(qrels[q], align, rel)
        want["AWRF"][q] = _trec_awrf(ranking, align, tgt1, _discount(len(ranking), None))
        want[f"AWRF@{k}"][q] = _trec_awrf(ranking[:k], align, tgt1, _discount(k, None))
        want[f"AWRF(p={p!r})@{k}"][q] = _trec_awrf(ranking[:k], align, tgt1, _discount(k, p))
        want[f"AWRF(rel={rel})"][q] = _trec_awrf(ranking, align, tgt, _discount(len(ranking), None))
        # the track's nDCG: binary gains, its discount, the ideal over min(k, R) ranks
        disc = _discount(max(k, len(qrels[q])), None)
        R = sum(g >= 1 for g in qrels[q].values())
        dcg = sum(disc[i] for i, d in enumerate(ranking[:k]) if qrels[q].get(d, 0) >= 1)
        ndcg = dcg / disc[: min(k, R)].sum() if R else 0.0
        want[f"nDCG-AWRF@{k}"][q] = ndcg * want[f"AWRF@{k}"][q] if ndcg > 0 else 0.0
    for n in names:
        bad = _close(want[n], res.per_query(n), 1e-12)
        assert not bad, f"seed {seed}, {n}: {bad[:3]}"
    return n_q


@pytest.mark.parametrize(
    ("dims", "multi", "unlabelled"), [(1, False, 0.0), (1, True, 0.2), (2, True, 0.1), (3, False, 0.3)]
)
def test_awrf_equals_the_tracks_definition(tmp_path, dims: int, multi: bool, unlabelled: float) -> None:
    assert _check_trec(7 + dims, 150, tmp_path, dims, multi, unlabelled) == 150


@pytest.mark.slow
def test_awrf_equals_the_tracks_definition_on_ten_thousand_queries(tmp_path) -> None:
    cases = [(1, False, 0.0), (1, True, 0.2), (2, True, 0.1), (3, False, 0.3)]
    assert sum(_check_trec(100 + s, 1000, tmp_path, *cases[s % 4]) for s in range(10)) == 10_000


def test_the_tracks_float32_discount_moves_awrf_below_one_in_a_million(tmp_path) -> None:
    """The track's code computes its discount in float32 (wptrec.metrics.common.discount): its numbers
    and ctxeval's (float64) part by less than 1e-6."""
    records, qrels, run = _batch(3, 200, 2, True, 0.1)
    align = _alignments(records)
    got = ctxeval.evaluate(qrels, run, ["AWRF"], rag={"fair_groups": _file(records, tmp_path / "g.txt")})
    got_q = got.runs[0].per_query("AWRF")
    gaps = []
    for q in qrels:
        ranking = _ranking(run[q])
        tgt = _relevant_target(qrels[q], align, 1)
        w32 = _trec_awrf(ranking, align, tgt, _discount(len(ranking), None, np.float32).astype(np.float64))
        if not math.isnan(w32):
            gaps.append(abs(w32 - got_q[q]))
    assert gaps and max(gaps) < 1e-6
    assert max(gaps) > 0  # float32 and float64 do part: the bound is not vacuous


# --------------------------------------------------------------------------------------------------
# FairRankTune
# --------------------------------------------------------------------------------------------------

_COMBOS = ("MaxMinDiff", "MaxAbsDiff", "MeanAbsDev", "LTwo", "Variance")


def _frt(ranking: list[str], items: dict[str, str], p: float, combo: str) -> float:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        value, _ = frt.AWRF(pd.DataFrame({"r": ranking}), items, p, combo)
    return float(value)


def _check_frt(seed: int, n_q: int, tmp_path) -> int:
    records, qrels, run = _batch(seed, n_q)  # one group per doc, every doc labelled: FairRankTune's domain
    group = {d: lv for d, _, lv, _ in records}
    rng = np.random.default_rng(seed + 2)
    k = int(rng.integers(1, 30))
    p = float(rng.choice([0.5, 0.01, float(rng.uniform(0.01, 0.99))]))
    names = [f"AWRF-FRT(p={p!r})", f"AWRF-FRT(p={p!r})@{k}"] + [f"AWRF-FRT-gap(p={p!r},combo={c})@{k}" for c in _COMBOS]
    res = ctxeval.evaluate(qrels, run, names, rag={"fair_groups": _file(records, tmp_path / f"f{seed}.txt")}).runs[0]
    for n in names:
        combo = n.split("combo=")[1].split(")")[0] if "combo=" in n else "MinMaxRatio"
        cut = k if n.endswith(f"@{k}") else None
        want = {}
        for q in qrels:
            ranking = _ranking(run[q])
            items = {d: group[d] for d in ranking}  # the docs the run ranked, its whole list
            want[q] = _frt(ranking[:cut], items, p, combo)
        bad = _close(want, res.per_query(n), 1e-12)
        assert not bad, f"seed {seed}, {n}: {bad[:3]}"
    return n_q


def test_awrf_frt_equals_fairranktune(tmp_path) -> None:
    assert sum(_check_frt(seed, 150, tmp_path) for seed in range(2)) == 300


@pytest.mark.slow
def test_awrf_frt_equals_fairranktune_on_ten_thousand_queries(tmp_path) -> None:
    assert sum(_check_frt(seed, 1000, tmp_path) for seed in range(200, 210)) == 10_000


def test_fairranktune_documents_other_formulas_than_it_computes() -> None:
    """FairRankTune's docs give LTwo as the squared norm and Variance over G - 1; its code (the oracle)
    computes the norm and np.var over G: ctxeval follows the code."""
    qrels = {"q": {"a": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    groups = {"a": "x", "b": "y", "c": "y"}
    names = ["AWRF-FRT-gap(p=0.5,combo=LTwo)", "AWRF-FRT-gap(p=0.5,combo=Variance)"]
    got = ctxeval.evaluate(qrels, run, names, rag={"fair_groups": groups}).runs[0]
    v = np.array([50.0, (25.0 + 12.5) / 2])  # x: 100·0.5; y: (100·0.25 + 100·0.125) / 2
    assert got.mean(names[0]) == pytest.approx(float(np.sqrt((v * v).sum())), rel=1e-15)
    assert got.mean(names[1]) == pytest.approx(float(((v - v.mean()) ** 2).sum() / 2), rel=1e-15)
    assert got.mean(names[1]) != pytest.approx(float(((v - v.mean()) ** 2).sum() / 1), rel=1e-3)
    ranking = list(run["q"])
    assert got.mean(names[0]) == pytest.approx(_frt(ranking, groups, 0.5, "LTwo"), rel=1e-15)
    assert got.mean(names[1]) == pytest.approx(_frt(ranking, groups, 0.5, "Variance"), rel=1e-15)
