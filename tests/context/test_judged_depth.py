"""Depth notes on judged labels come from the runs evaluated (issue 33, point 5): a judge given the top 12
of each list but whose labels cover 10-20 % of the runs' top 10 must say the latter, Judged@k of every
run, once per command, not "top 12 of each list" from its sidecar, nor one note per run per k.

The case: labels of a judge on a sample of pairs (a few per query, as a card's calibration set is
drawn), a sidecar saying depth 12, runs 100 deep. The shares are worked out by hand from the files."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli
from ctxeval._io.labels import LabelKind, Provenance, write_sidecar

RUNS = ("bm25", "dense", "hybrid")


def _write(tmp_path: Path, qrels: dict[str, dict[str, int]], runs: dict[str, dict[str, list[str]]]) -> list[Path]:
    q = tmp_path / "judged.qrels"
    q.write_text("".join(f"{qid} 0 {d} {g}\n" for qid, docs in qrels.items() for d, g in docs.items()))
    prov = Provenance("openai", "SmolLM2-135M", depth=12, pairs=sum(map(len, qrels.values())), undecided=0)
    write_sidecar(q, LabelKind("judged", "trec", provenance=prov))
    paths = [q]
    for name, ranked in runs.items():
        p = tmp_path / f"{name}.run"
        p.write_text(
            "".join(f"{qid} Q0 {d} {i + 1} {100 - i} {name}\n" for qid, ds in ranked.items() for i, d in enumerate(ds))
        )
        paths.append(p)
    return paths


def _shallow(seed: int = 7) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, list[str]]]]:
    """Three runs of 100 docs over 12 queries from one collection of 300 docs; the judge labelled
    12 docs per query drawn from the union of the runs' top 30 (a sampled calibration set)."""
    rng = random.Random(seed)
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in RUNS}
    qrels: dict[str, dict[str, int]] = {}
    for qi in range(12):
        qid = f"q{qi}"
        docs = [f"d{qi}_{j}" for j in range(300)]
        for name in RUNS:
            runs[name][qid] = rng.sample(docs, 100)
        top = sorted({d for name in RUNS for d in runs[name][qid][:30]})
        qrels[qid] = {d: rng.randrange(4) for d in rng.sample(top, 12)}
    return qrels, runs


def _judged_at(qrels: dict[str, dict[str, int]], ranked: dict[str, list[str]], k: int | None) -> float:
    """Judged@k by hand: the judged docs among each query's top k over k (over the whole list: its
    length), the mean over the judged queries."""
    shares = []
    for qid, judged in qrels.items():
        top = ranked[qid] if k is None else ranked[qid][:k]
        shares.append(sum(d in judged for d in top) / (len(top) if k is None else k))
    return sum(shares) / len(shares)


def _judged_notes(notes: list[str]) -> list[str]:
    return [n for n in notes if "judge" in n and ("Judged@" in n or "reads" in n)]


def test_evaluate_says_judged_at_k_of_each_run_once(tmp_path: Path) -> None:
    qrels, runs = _shallow()
    q, *paths = _write(tmp_path, qrels, runs)
    res = ctxeval.evaluate(str(q), [str(p) for p in paths], ["nDCG@10", "nDCG@20", "AP", "Judged@10"])
    [note] = _judged_notes(res.notes)
    assert note.startswith("judged labels (task grade by openai / SmolLM2-135M, given the top 12 of each list): ")
    want = "; ".join(
        f"{at} " + ", ".join(f"{name} {100 * _judged_at(qrels, runs[name], k):.0f} %" for name in RUNS)
        for at, k in (("@10", 10), ("@20", 20), ("whole lists", None))
    )
    assert note.endswith(": " + want), (note, want)
    # the shares are the runs' own Judged@10, as the measure prints it (well under the judge's depth of 12)
    for r, name in zip(res.runs, RUNS):
        assert r.mean("Judged@10") == pytest.approx(_judged_at(qrels, runs[name], 10), abs=1e-12)
        assert 0.05 < r.mean("Judged@10") < 0.4
    # the sidecar's depth stays in the labels' own line, described as what the judge was given
    assert any(n.startswith("labels: judged on the trec scale") and "top 12 of each list" in n for n in res.notes)


def test_compare_says_it_once_for_every_run_at_the_depths_asked(tmp_path: Path) -> None:
    """compare evaluates each run apart and reads the curves' depths too (nDCG@1..20, P@1..20): one
    note, naming the three runs at the two depths asked for."""
    qrels, runs = _shallow()
    q, *paths = _write(tmp_path, qrels, runs)
    got = CliRunner().invoke(
        cli, ["compare", str(q), *map(str, paths), "-m", "nDCG@10", "-m", "P@20", "--format", "json"]
    )
    assert got.exit_code == 0, got.output
    notes = json.loads(got.stdout)["settings"]["notes"]
    [note] = _judged_notes(notes)
    cells = re.findall(r"(@\d+|whole lists) ([^;]+)", note.split("(the rest count as not relevant): ")[1])
    assert [at for at, _ in cells] == ["@10", "@20"]
    for (_, listed), k in zip(cells, (10, 20)):
        assert listed == ", ".join(f"{n} {100 * _judged_at(qrels, runs[n], k):.0f} %" for n in RUNS)


def test_the_note_is_the_same_streamed_and_silent_where_every_rank_read_is_labelled(tmp_path: Path) -> None:
    qrels, runs = _shallow(3)
    q, *paths = _write(tmp_path, qrels, runs)
    whole = ctxeval.evaluate(str(q), str(paths[0]), ["nDCG@10", "P@5"])
    streamed = ctxeval.evaluate(str(q), str(paths[0]), ["nDCG@10", "P@5"], engine="stream")
    assert _judged_notes(whole.notes) == _judged_notes(streamed.notes) and len(_judged_notes(whole.notes)) == 1
    # the judge labelled every doc of the top 5 of bm25: nothing to say at 5; at 10 the share is said
    full = {qid: {**judged, **dict.fromkeys(runs["bm25"][qid][:5], 1)} for qid, judged in qrels.items()}
    (tmp_path / "full").mkdir()
    q2, run = _write(tmp_path / "full", full, {"bm25": runs["bm25"]})
    assert not _judged_notes(ctxeval.evaluate(str(q2), str(run), ["nDCG@5", "P@3"]).notes)
    [note] = _judged_notes(ctxeval.evaluate(str(q2), str(run), ["nDCG@5", "P@10"]).notes)
    assert "@5 bm25 100 %; @10 bm25" in note


def test_the_issue_s_case_on_dl19(tmp_path: Path) -> None:
    """TREC DL19: 120 judged pairs over 10 topics (30 per NIST grade, the design of the issue's card),
    a sidecar of depth 12; BM25 and TAS-B evaluated at nDCG@10. The note gives each run's Judged@10
    (by hand from the files), once."""
    from real_data import dl19_grades, dl19_ranked

    grades = dl19_grades()
    rng = random.Random(0)
    topics = sorted(grades)[:10]
    by_grade = [[(q, d) for q in topics for d, g in sorted(grades[q].items()) if g == grade] for grade in range(4)]
    picked = [pair for pool in by_grade for pair in rng.sample(pool, 30)]
    qrels: dict[str, dict[str, int]] = {}
    for q, d in picked:
        qrels.setdefault(q, {})[d] = grades[q][d]
    runs = {name: dl19_ranked(f"{name}.top100.txt") for name in ("bm25", "tasb")}
    q, *paths = _write(tmp_path, qrels, runs)
    res = ctxeval.evaluate(str(q), [str(p) for p in paths], ["nDCG@10"])
    [note] = _judged_notes(res.notes)
    shares = {name: _judged_at(qrels, runs[name], 10) for name in runs}
    assert note.endswith(": " + ", ".join(f"{n} {100 * s:.0f} %" for n, s in shares.items())), note
    assert all(0 < s < 0.5 for s in shares.values()), shares  # far from the judge's "top 12"
