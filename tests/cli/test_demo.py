"""The demo on the bundled example: its claims match what the API computes independently."""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from ctxeval import evaluate
from ctxeval._cli import main
from ctxeval._demo import demo_report, example_path, example_runs


def _distractor_rate_by_hand(run_path: str) -> float:
    """DistractorRate@5 with the default rules written out: u < 0 when the doc is a known distractor,
    has grade 1, or has utility 0 (grade 2 or unlabelled) and either ranks <= 3 or has relative
    score >= 0.7 ((s - s_min) / (s_max - s_min) over the query's list)."""
    qrels = {
        (q, d): int(g)
        for q, _, d, g in (line.split() for line in example_path("qrels.txt").read_text().splitlines() if line.strip())
    }
    known = {tuple(line.split()) for line in example_path("distractors.txt").read_text().splitlines() if line.strip()}
    run = pl.read_csv(run_path, separator=" ", has_header=False, new_columns=["q", "Q0", "d", "r", "s", "t"])
    rates = []
    for (q,), grp in run.group_by(["q"], maintain_order=True):
        grp = grp.with_columns(pl.col("s").cast(pl.Float32).alias("s32")).sort(["s32", "d"], descending=[True, True])
        s = grp["s"].to_numpy().astype(float)
        rel = (s - s.min()) / (s.max() - s.min())
        bad = 0
        for i, (d, rs) in enumerate(zip(grp["d"].to_list()[:5], rel[:5]), start=1):
            g = qrels.get((q, d))
            if (q, d) in known or g == 1 or (g in (None, 2) and (rs >= 0.7 or i <= 3)):
                bad += 1
        rates.append(bad / 5)
    return float(np.mean(rates))


def test_demo_names_the_most_dangerous_run_and_the_recall_leader() -> None:
    text = demo_report()
    for section in (
        "1. Rank view",
        "2. Set view",
        "3. Fix the retriever",
        "4. Distraction",
        "5. Calibrated runtime policy",
    ):
        assert section in text
    rates = {p.stem: _distractor_rate_by_hand(str(p)) for p in example_runs()}
    worst = max(rates, key=lambda k: rates[k])
    assert f"the most dangerous run at K = 5 is {worst} (" in text
    assert f"distractor rate {rates[worst]:.4f}" in text
    recall = evaluate(example_path("qrels.txt"), [str(p) for p in example_runs()], ["R(rel=4)@50"])
    best = max(r.mean("R(rel=4)@50") for r in recall.runs)
    assert f"({best:.4f})" in text


def test_demo_policy_lines_match_the_calibrate_command(tmp_path, capsys) -> None:
    out = tmp_path / "policy.json"
    qrels, run = example_path("qrels.txt"), example_path("runs/bm25.run")
    assert (
        main(
            [
                "calibrate",
                str(qrels),
                str(run),
                "-k",
                "20",
                "--distractors",
                str(example_path("distractors.txt")),
                "-o",
                str(out),
            ]
        )
        == 0
    )
    policy = json.loads(out.read_text())
    written = tmp_path / "demo-policy.json"
    text = demo_report(policy=written)
    row = next(line for line in text.splitlines() if line.startswith("  bm25 "))
    cv = policy["cross_validation"]
    assert row.split() == [
        "bm25",
        str(policy["k_max"]),
        f"{policy['tau']:g}",
        f"{cv['objective']:.4f}",
        f"{cv['objective_at_best_fixed_k']:.4f}",
        f"(K={policy['in_sample']['best_fixed_k']})",
        f"{cv['gain']:+.4f}",
        f"{cv['mean_selected']:.2f}",
    ]
    # bm25 has the best held-out objective of the five: the demo writes its policy, byte for byte the
    # calibrate command's, and says where (no pointer to a file it did not write)
    assert "The best held-out policy is bm25's" in text and f"written to {written.resolve()}" in text
    assert written.read_bytes() == out.read_bytes()
    assert "policy.json" not in demo_report().replace("-o policy.json", "")


def test_demo_writes_the_html_report_of_a_real_comparison(tmp_path) -> None:
    from ctxeval import compare
    from ctxeval._demo import COMPARE_VIEW

    out = tmp_path / "report.html"
    text = demo_report(out)
    assert f"HTML report (self-contained, opens offline): {out.resolve()}" in text
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "http://" not in page.replace("http://www.w3.org", "")
    # the listed differences are exactly the significant comparisons of the same compare() call
    rep = compare(
        example_path("qrels.txt"),
        [str(p) for p in example_runs_in_demo_order()],
        COMPARE_VIEW,
        baseline="bm25",
        strata=str(example_path("categories.tsv")),
        utility={"distractors": str(example_path("distractors.txt"))},
    ).to_dict()
    # the num_rel strata count the docs the RAG measures call relevant on the example's 1-5 scale
    # (grade >= 3); at the default level 1 every judged doc would count and all 50 queries fall in > 5
    counts: dict[str, int] = {}
    for line in example_path("qrels.txt").read_text(encoding="utf-8").splitlines():
        q, _, _, g = line.split()
        counts[q] = counts.get(q, 0) + (int(g) >= 3)
    by_hand = {
        "num_rel:2-5": sum(2 <= c <= 5 for c in counts.values()),
        "num_rel:>5": sum(c > 5 for c in counts.values()),
    }
    assert {k: v["n_queries"] for k, v in rep["strata"].items() if v["source"] == "num_rel"} == by_hand
    assert len(by_hand) > 1 and rep["settings"]["strata"][1]["level"] == 3
    significant = [(c["run"], c["measure"]) for c in rep["comparisons"] if c["significant"]]
    section = text.split("6. Did a change help?", 1)[1]
    listed = [tuple(line.split()[:2]) for line in section.splitlines()[1:] if line.startswith("  ") and "[" in line]
    assert listed == significant
    assert page == __import__("ctxeval._render.html", fromlist=["render_html"]).render_html(rep)


def example_runs_in_demo_order():
    from ctxeval._demo import SYSTEMS

    return [example_path(f"runs/{name}") for name in SYSTEMS]


def _flagged_in_top(run_path: str, k: int) -> tuple[int, int]:
    """(unlabelled, judged) passages of utility 0 the default rules make hard negatives in the top k, by
    hand: not a known distractor, unlabelled or grade 2 (utility 0), and ranked <= 3 or relative score
    >= 0.7 over the query's whole list (trec_eval's order: score, then doc id, both descending)."""
    qrels = {
        (q, d): int(g)
        for q, _, d, g in (line.split() for line in example_path("qrels.txt").read_text().splitlines() if line.strip())
    }
    known = {tuple(line.split()) for line in example_path("distractors.txt").read_text().splitlines() if line.strip()}
    run = pl.read_csv(run_path, separator=" ", has_header=False, new_columns=["q", "Q0", "d", "r", "s", "t"])
    unlabelled = judged = 0
    for (q,), grp in run.group_by(["q"], maintain_order=True):
        grp = grp.with_columns(pl.col("s").cast(pl.Float32).alias("s32")).sort(["s32", "d"], descending=[True, True])
        s = grp["s"].to_numpy().astype(float)
        rel = (s - s.min()) / (s.max() - s.min())
        for i, (d, rs) in enumerate(zip(grp["d"].to_list()[:k], rel[:k]), start=1):
            g = qrels.get((q, d))
            if (q, d) not in known and g in (None, 2) and (rs >= 0.7 or i <= 3):
                unlabelled += g is None
                judged += g == 2
    return unlabelled, judged


def test_demo_raises_no_warning_its_own_data_should_not(tmp_path) -> None:
    """The example is a clean data set: one note explains a choice (UDCG reads label stand-ins without
    an LLM utilities file); no overlap, depth, scale, relevance-level or calibration warning, no
    repeated per-run boilerplate. One fragility is real and said once: the qrels are a pool judged to
    depth 5, calibration reads the top 20, and reciprocal-rank fusion's scores sit so close together that
    the relative-score rule makes most of rrf's unlabelled passages there hard negatives; its policy
    rests on them. The other runs' scores spread, so theirs do not (counts checked by hand)."""
    text = demo_report(tmp_path / "r.html", tmp_path / "p.json")
    notes = [line for line in text.splitlines() if "note" in line.lower()]
    counts = {p.stem: _flagged_in_top(str(p), 20) for p in example_runs()}
    assert {name for name, (u, _) in counts.items() if u} == {"rrf"}
    unlabelled, judged = counts["rrf"]
    assert notes == [
        "note: UDCG uses label-derived stand-in utilities (relevant 1, others the size of their negative utility): "
        "no LLM utilities file",
        f"  note: rrf: in the top 20, the hard-negative rules made {unlabelled} passages nobody labelled distractors "
        f"(and {judged} judged ones); the figures that count distractors rest on them (--no-flag-unlabelled leaves "
        "unlabelled passages alone)",
    ]
    lines = [line for line in text.splitlines() if line.strip()]
    per_run = [line for line in lines if line.endswith(": 50 queries evaluated") and not line.startswith("all 5 runs")]
    assert per_run == ["samples: 50 queries evaluated"]  # section 7's one run
    assert len(lines) < 150
