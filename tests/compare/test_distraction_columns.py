"""compare with the distraction-aware measures: utility options reach every evaluation, and the
report carries the same distraction table as ``distraction_table``."""

from __future__ import annotations

import json

from ctxeval import compare, distraction_table, evaluate
from ctxeval._cli import main
from ctxeval._demo import example_path

RUNS = [str(example_path(f"runs/{n}.run")) for n in ("bm25", "rrf")]
QRELS = str(example_path("qrels.txt"))
KNOWN = str(example_path("distractors.txt"))


def test_compare_passes_the_utility_options_and_adds_the_table() -> None:
    rep = compare(
        QRELS,
        RUNS,
        ["dDCG@5", "DistractorRate@5"],
        sections={"curves_k": 0},
        utility={"distractors": KNOWN, "rules": "strict"},
        stats={"permutations": 200, "resamples": 200},
    )
    ev = evaluate(QRELS, RUNS, ["dDCG@5", "DistractorRate@5"], utility={"distractors": KNOWN, "rules": "strict"})
    d = rep.to_dict()
    for run, ref in zip(d["runs"], ev.runs):
        assert run["aggregate"]["dDCG@5"] == ref.mean("dDCG@5")
        assert run["aggregate"]["DistractorRate@5"] == ref.mean("DistractorRate@5")
    # the distraction k defaults to the first distraction measure's cutoff
    assert d["distraction"] == json.loads(
        json.dumps(distraction_table(QRELS, RUNS, 5, utility={"distractors": KNOWN, "rules": "strict"}))
    )
    # a harm-like measure: a higher rate is worse, so rrf's higher rate counts as losses
    c = next(c for c in d["comparisons"] if c["measure"] == "DistractorRate@5")
    assert c["diff"] > 0 and c["losses"] > c["wins"]


def test_compare_without_distraction_measures_has_no_table_unless_asked(tmp_path) -> None:
    rep = compare(QRELS, RUNS, ["nDCG@5"], sections={"curves_k": 0}, stats={"permutations": 100, "resamples": 100})
    assert rep.to_dict()["distraction"] is None
    out = tmp_path / "r.json"
    assert (
        main(
            [
                "compare",
                QRELS,
                *RUNS,
                "-m",
                "nDCG@5",
                "--distraction-k",
                "3",
                "--permutations",
                "100",
                "--resamples",
                "100",
                "--format",
                "json",
                "-o",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    table = json.loads(out.read_text())["distraction"]
    assert table["k"] == 3 and [r["run"] for r in table["rows"]] == ["bm25", "rrf"]


def test_curve_command_takes_the_utility_options(tmp_path) -> None:
    out = tmp_path / "c.json"
    assert (
        main(
            [
                "curve",
                QRELS,
                RUNS[1],
                "-m",
                "dDCG",
                "-k",
                "1:4",
                "--distractors",
                KNOWN,
                "--distractor-rules",
                "off",
                "--format",
                "json",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    series = json.loads(out.read_text())["series"][0]["values"]
    ev = evaluate(
        QRELS, RUNS[1], [f"dDCG@{k}" for k in range(1, 5)], utility={"distractors": KNOWN, "rules": "off"}
    ).runs[0]
    assert series == [ev.mean(f"dDCG@{k}") for k in range(1, 5)]
