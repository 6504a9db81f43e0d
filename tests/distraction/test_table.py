"""The distraction table, optimal k, safety verdicts and the distraction command; every report states the utility settings."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from ctxeval import ConfigError, distraction_table, evaluate, parse_measure
from ctxeval._distraction import dynamic_k_summary, optimal_k
from distraction_cases import EXAMPLE

# --- optimal k --------------------------------------------------------------------------------------------


def test_optimal_k_hand_examples() -> None:
    # U(k) for [1, -0.5, 1, -1, 0]: 1, 0.5, 1.5, 0.5, 0.5 -> k = 3
    # [-1, 0.5]: -1, -0.5 -> every prefix < 0 -> k = 0;  empty -> 0;  [0, 0] -> U = 0 everywhere -> 0
    # [0.5, -0.5, 0.5]: 0.5, 0, 0.5 -> the smallest maximiser, 1
    off = np.array([0, 5, 7, 7, 9, 12])
    u = np.array([1, -0.5, 1, -1, 0, -1, 0.5, 0, 0, 0.5, -0.5, 0.5])
    assert optimal_k(off, u).tolist() == [3, 0, 0, 0, 1]
    # discounted: [0.2, 1, -0.1]: 0.2, 0.2 + 1/log2(3) = 0.831, 0.831 - 0.1/2 -> k = 2
    assert optimal_k(np.array([0, 3]), np.array([0.2, 1.0, -0.1]), discount=True).tolist() == [2]
    assert optimal_k(off, u, max_k=2).tolist() == [1, 0, 0, 0, 1]


@given(
    st.lists(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0, 0.25]), max_size=8), min_size=1, max_size=6),
    st.booleans(),
)
def test_optimal_k_maximises_u(segs: list[list[float]], discount: bool) -> None:
    off = np.r_[0, np.cumsum([len(x) for x in segs])].astype(np.int64)
    u = np.array([v for x in segs for v in x], dtype=np.float64)
    ks = optimal_k(off, u, discount=discount)
    for x, k in zip(segs, ks.tolist()):
        prefix = [0.0]
        for j, v in enumerate(x):
            prefix.append(prefix[-1] + (v / math.log2(j + 2) if discount else v))
        best = max(prefix)
        assert prefix[k] == pytest.approx(best, abs=1e-9)  # it maximises U
        assert all(p < best - 1e-9 for p in prefix[:k])  # and is the smallest that does
    s = dynamic_k_summary(off, u, discount=discount)
    assert s["mean"] == pytest.approx(float(np.mean(ks))) and s["median"] == pytest.approx(float(np.median(ks)))
    assert sum(s["histogram"]) == len(segs) and s["histogram"][int(ks.max())] > 0
    # best fixed K by enumeration: mean over queries of U(min(K, len)), smallest maximiser
    longest = max(len(x) for x in segs)

    def U(x: list[float], K: int) -> float:
        return sum((v / math.log2(j + 2) if discount else v) for j, v in enumerate(x[:K]))

    fixed = [sum(U(x, K) for x in segs) / len(segs) for K in range(longest + 1)]
    best_fixed = max(fixed)
    assert fixed[s["best_fixed_k"]] == pytest.approx(best_fixed, abs=1e-9)
    assert all(f < best_fixed - 1e-9 for f in fixed[: s["best_fixed_k"]])
    assert s["mean_utility_at_optimal_k"] == pytest.approx(
        sum(max(0.0, max(U(x, K) for K in range(len(x) + 1))) for x in segs) / len(segs)
    )
    assert s["mean_utility_at_optimal_k"] >= s["mean_utility_at_best_fixed_k"] - 1e-9


# --- verdict and the distraction command --------------------------------------------------------------------


def test_verdict_thresholds() -> None:
    from ctxeval._distraction import safety_verdict

    assert [safety_verdict(x) for x in (0.0, 0.10, 0.1000001, 0.5, 0.5000001, 1.0)] == [
        "SAFE",
        "SAFE",
        "RISKY",
        "RISKY",
        "DANGEROUS",
        "DANGEROUS",
    ]
    assert [safety_verdict(x, safe=0.2, risky=0.3) for x in (0.2, 0.25, 0.31)] == ["SAFE", "RISKY", "DANGEROUS"]
    assert safety_verdict(float("nan")) == "NA"
    with pytest.raises(ConfigError, match="must not exceed risky"):
        safety_verdict(0.1, safe=0.6, risky=0.5)


def test_distraction_cli_json(tmp_path: Path) -> None:
    from ctxeval._cli import cli

    runs = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "rrf", "rrf-rerank")]
    args = [
        "distraction",
        str(EXAMPLE / "qrels.txt"),
        *runs,
        "-k",
        "5",
        "--distractors",
        str(EXAMPLE / "distractors.txt"),
        "--format",
        "json",
    ]
    out = CliRunner().invoke(cli, [*args, "--risky", "0.45"])
    assert out.exit_code == 0, out.output
    again = CliRunner().invoke(cli, [*args, "--risky", "0.45"])
    assert out.output == again.output  # deterministic bytes
    t = json.loads(out.output)
    assert {"k", "rules", "utility_map", "utility_source", "rows"} <= set(t)
    assert t["k"] == 5 and t["utility_source"] == "labels" and t["rules"]["tau"] == 0.7 and t["rel"] == 3
    assert t["utility_map"] == {"5": 1.0, "4": 1.0, "3": 0.5, "2": 0.0, "1": -1.0}
    known = {tuple(line.split()) for line in (EXAMPLE / "distractors.txt").read_text().splitlines() if line.strip()}
    ref = evaluate(
        EXAMPLE / "qrels.txt",
        runs,
        ["RR(rel=3)", "R(rel=3)@5", "nDCG@5", "dDCG@5", "ndDCG@5", "UDCG@5", "DistractorRate@5", "DistractorHarm@5"],
        utility={"distractors": EXAMPLE / "distractors.txt"},
    )
    for row, r in zip(t["rows"], ref.runs):
        assert {
            "run",
            "measures",
            "distractor_rate",
            "distractor_harm",
            "verdict",
            "optimal_k",
            "hidden_harm",
            "worst_distractors",
        } <= set(row)
        assert row["run"] == r.name
        for m in ref.measures:
            assert row["measures"][str(m)] == pytest.approx(r.mean(m))
        rate = r.mean("DistractorRate@5")
        assert row["distractor_rate"] == pytest.approx(rate)
        assert row["verdict"] == ("SAFE" if rate <= 0.10 else "RISKY" if rate <= 0.45 else "DANGEROUS")
        nd = r.values[parse_measure("ndDCG@5")]
        ok = ~np.isnan(nd)
        # hidden harm: never negative, and 0 exactly when no query's top 5 holds a negative utility
        assert row["hidden_harm"] >= 0 and (row["hidden_harm"] > 0) == (r.mean("DistractorHarm@5") > 0)
        assert row["valid"]["hidden harm"] == int(ok.sum())
        wd = row["worst_distractors"]
        assert len(wd) == 5 and all(w["utility"] < 0 and 1 <= w["rank"] <= 5 for w in wd)
        assert [w["utility"] for w in wd] == sorted(w["utility"] for w in wd)
        for w in wd:
            if w["why"].startswith("known distractor"):
                assert (w["query"], w["doc"]) in known
    assert {row["verdict"] for row in t["rows"]} == {"RISKY", "DANGEROUS"}
    csv_out = CliRunner().invoke(cli, [*args[:-1], "csv"])
    assert csv_out.exit_code == 0 and csv_out.output.splitlines()[0].startswith(
        "run,RR(rel=3),R(rel=3)@5,nDCG@5,dDCG@5"
    )
    table = CliRunner().invoke(cli, [*args[:-1], "table"])
    assert "distractor rules: default" in table.output and "utility map: 5:1,4:1,3:0.5,2:0,1:-1" in table.output


# --- audit of issue 4 ---------------------------------------------------------------------------------------


def _rate_case(bad_per_query: list[int], k: int) -> tuple[dict, dict]:
    """One query per entry: k retrieved docs, the first ``bad`` of them grade 1 (u = -1), the rest grade 5."""
    qrels: dict = {}
    run: dict = {}
    for qi, bad in enumerate(bad_per_query):
        q = f"q{qi}"
        qrels[q] = {f"d{i}": 1 if i < bad else 5 for i in range(k)}
        run[q] = {f"d{i}": float(k - i) for i in range(k)}
    return qrels, run


def test_verdict_at_the_exact_thresholds_despite_float_noise() -> None:
    from ctxeval._distraction import distraction_table

    # 3 queries, k = 10, with 2, 1 and 0 distractors: the mean rate is exactly 3/30 = 0.10, which is SAFE
    # (SAFE <= 0.10). The float mean of the per-query rates 0.2, 0.1, 0.0 is 0.10000000000000002.
    qrels, run = _rate_case([2, 1, 0], 10)
    t = distraction_table(qrels, run, 10, utility={"rules": "off"})
    assert t["rows"][0]["distractor_rate"] == pytest.approx(0.1, abs=1e-15)
    assert t["rows"][0]["verdict"] == "SAFE"
    # exactly 0.5 (15 of 30: 6, 5, 4) is RISKY (RISKY <= 0.50), one more distractor is DANGEROUS
    qrels, run = _rate_case([6, 5, 4], 10)
    assert distraction_table(qrels, run, 10, utility={"rules": "off"})["rows"][0]["verdict"] == "RISKY"
    qrels, run = _rate_case([6, 5, 5], 10)
    assert distraction_table(qrels, run, 10, utility={"rules": "off"})["rows"][0]["verdict"] == "DANGEROUS"


def test_distraction_table_accounts_for_every_query_and_row(tmp_path: Path) -> None:
    from ctxeval._cli import cli
    from ctxeval._distraction import distraction_table

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 5\nq1 0 b 2\nq2 0 d 2\nq3 0 e 5\n", encoding="utf-8")
    run = tmp_path / "r.run"
    # q1: a, b, then a repeated (dropped with --duplicates first); q2: d; q9: unjudged query; q3: absent
    run.write_text(
        "q1 Q0 a 1 3.0 r\nq1 Q0 b 2 2.0 r\nq1 Q0 a 3 1.0 r\nq2 Q0 d 1 0.5 r\nq9 Q0 z 1 1.0 r\n", encoding="utf-8"
    )
    t = distraction_table(str(qrels), [str(run)], 5, policies={"duplicates": "first"})
    row = t["rows"][0]
    # q1, q2 evaluated; q3 judged but absent (scored as zero: an empty list, in every mean); q9 ignored
    assert row["accounting"] == {
        "evaluated": 2,
        "missing_from_run": 1,
        "missing_policy": "zero",
        "scored_as_zero": 1,
        "ignored_missing": 0,
        "unjudged_in_run": 1,
    }
    assert row["queries"] == 3  # the queries every mean is taken over
    assert row["dropped_duplicates"] == 1
    # q1: u = [1, -0.5 (grade 2 at rank 2)], q2: d grade 2 at rank 1 -> -0.5, q3: nothing; the rate is over the
    # passages given (2, 1 and 0 of the 5 slots): (1/2 + 1/1 + 0) / 3
    assert row["distractor_rate"] == pytest.approx((1 / 2 + 1 / 1 + 0) / 3)
    assert any("k=5 exceeds the ranked list's depth on 2 of 2 queries (median depth 1.5)" in n for n in t["notes"])
    # ndDCG@5 is NA on q2 (no judged doc of positive utility): the gap is over q1 and q3 only
    assert row["valid"] == {"ndDCG@5": 2, "hidden harm": 2}
    out = CliRunner().invoke(cli, ["distraction", str(qrels), str(run), "--duplicates", "first", "--missing", "zero"])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert (
        "r: 2 queries evaluated; 1 judged but missing from the run (scored 0, --missing zero); 1 in the run without judgments (ignored); 1 duplicate rows dropped"
        in text
    )
    assert (
        "r: ndDCG@5 and the hidden harm undefined (NA) on 1 queries (no judged passage of positive utility), excluded from their means"
        in text
    )
    ignore = distraction_table(str(qrels), [str(run)], 5, policies={"duplicates": "first", "missing": "ignore"})[
        "rows"
    ][0]
    assert ignore["queries"] == 2 and ignore["accounting"]["ignored_missing"] == 1


def test_every_report_prints_the_utility_settings(tmp_path: Path) -> None:
    from ctxeval._cli import cli

    qrels, run = str(EXAMPLE / "qrels.txt"), str(EXAMPLE / "runs" / "bm25.run")
    known = ["--distractors", str(EXAMPLE / "distractors.txt")]
    expect = [
        "utility map: 5:1,4:1,3:0.5,2:0,1:-1 (unjudged: 0); distractor rules strict: a passage of utility 0 (judged or unlabelled) "
        "is a hard negative if relative score >= 0.5 or rank <= 3, penalty -1",
        f"known distractors: 32 pairs from {EXAMPLE / 'distractors.txt'}",
        "utility source: labels (UDCG: label-derived stand-ins)",
    ]
    outputs = {
        "curve": CliRunner().invoke(
            cli, ["curve", qrels, run, "-m", "dDCG", "-k", "1:3", "--distractor-rules", "strict", *known]
        ),
        "calibrate": CliRunner().invoke(
            cli,
            [
                "calibrate",
                qrels,
                run,
                "-k",
                "5",
                "--distractor-rules",
                "strict",
                *known,
                "-o",
                str(tmp_path / "p.json"),
            ],
        ),
        "fit-udcg": CliRunner().invoke(
            cli,
            [
                "fit-udcg",
                qrels,
                run,
                "--answers",
                str(EXAMPLE / "answers.tsv"),
                "-k",
                "3",
                "--distractor-rules",
                "strict",
                *known,
                "-o",
                str(tmp_path / "f.json"),
            ],
        ),
        "evaluate": CliRunner().invoke(
            cli, ["evaluate", qrels, run, "-m", "dDCG@5", "--distractor-rules", "strict", *known]
        ),
    }
    for name, out in outputs.items():
        assert out.exit_code == 0, (name, out.output)
        text = " ".join(out.output.split())
        for line in expect:
            assert line in text, (name, line)
    # a curve of measures that read no utilities has none to print
    plain = CliRunner().invoke(cli, ["curve", qrels, run, "-m", "nDCG", "-k", "1:3"])
    assert plain.exit_code == 0 and "utility map" not in plain.output


def test_distraction_text_and_csv_report_the_whole_optimal_k_summary() -> None:
    from ctxeval._distraction import distraction_table
    from ctxeval._render.distraction import render_distraction

    # q0: u = [1, -1, 1, 1] -> U = 1, 0, 1, 2 -> k = 4;  q1: [-1, 1] -> -1, 0 -> k = 0;  q2: [1, 1, -1] -> k = 2
    # best fixed K: mean U(K) over queries (a shorter list gives all its rows) for K = 0..4:
    # K=1 (1 - 1 + 1)/3, K=2 (0 + 0 + 2)/3, K=3 (1 + 0 + 1)/3, K=4 (2 + 0 + 1)/3 = 1 -> 4
    qrels = {"q0": {"a": 5, "b": 1, "c": 5, "d": 5}, "q1": {"e": 1, "f": 5}, "q2": {"g": 5, "h": 5, "i": 1}}
    run = {
        "q0": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0},
        "q1": {"e": 2.0, "f": 1.0},
        "q2": {"g": 3.0, "h": 2.0, "i": 1.0},
    }
    t = distraction_table(qrels, run, 5, utility={"rules": "off"})
    ok = t["rows"][0]["optimal_k"]
    assert (ok["mean"], ok["median"], ok["histogram"], ok["best_fixed_k"]) == (2.0, 2.0, [1, 0, 1, 0, 1], 4)
    text = " ".join(render_distraction(t, "table").split())
    assert (
        "best fixed k" in text
        and "run: optimal k per query (k: queries): 0: 1, 2: 1, 4: 1; best fixed k 4 (mean U 1.0000)" in text
    )
    csv_text = render_distraction(t, "csv").splitlines()
    assert csv_text[0].endswith("best_fixed_k,optimal_k_histogram,hidden_harm")
    assert csv_text[1].split(",")[-2] == "1 0 1 0 1"


def test_markdown_comparison_report_states_the_utility_settings() -> None:
    from ctxeval import compare

    runs = [str(EXAMPLE / "runs" / f"{n}.run") for n in ("bm25", "rrf")]
    rep = compare(
        EXAMPLE / "qrels.txt",
        runs,
        ["dDCG@5"],
        sections={"curves_k": 0},
        utility={"rules": "lenient"},
        stats={"permutations": 100, "resamples": 100},
    )
    md = rep.to_markdown()
    assert (
        "- utility map: 5:1,4:1,3:0.5,2:0,1:-1 (unjudged: 0); distractor rules lenient: a passage of utility 0 (judged or unlabelled) is a hard negative if relative score &gt;= 0.9 or rank &lt;= 3, penalty -0.2"
        in md
    )
    assert "- utility source: labels (UDCG: label-derived stand-ins)" in md
    plain = compare(
        EXAMPLE / "qrels.txt", runs, ["nDCG@5"], sections={"curves_k": 0}, stats={"permutations": 100, "resamples": 100}
    ).to_markdown()
    assert "utility map" not in plain
    tex = rep.to_latex()
    assert "\n% utility map: 5:1,4:1,3:0.5,2:0,1:-1 (unjudged: 0); distractor rules lenient:" in tex
    assert "\n% utility source: labels (UDCG: label-derived stand-ins)\n" in tex
    assert (
        "% utility"
        not in compare(
            EXAMPLE / "qrels.txt",
            runs,
            ["nDCG@5"],
            sections={"curves_k": 0},
            stats={"permutations": 100, "resamples": 100},
        ).to_latex()
    )


def test_hidden_harm_by_hand() -> None:
    """The issue's hand case: ranks 1-5 hold utilities 1, 0.5, -0.5 (grade 2 at rank 3, a hard negative
    by rank), 1, 0; the ideal holds the positive utilities 1, 1, 1, 0.5 (x5 unretrieved). The hidden harm
    is the distractor's discounted cost over the ideal, the same gains on both sides."""
    from distraction_cases import HAND_QRELS, HAND_RUN

    t = distraction_table(HAND_QRELS, HAND_RUN, 5)
    ideal = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4) + 0.5 / math.log2(5)
    assert t["rows"][0]["hidden_harm"] == pytest.approx((0.5 / math.log2(4)) / ideal, rel=1e-12)
    # ndDCG without the distractor minus ndDCG: the same number
    plus = (1 / math.log2(2) + 0.5 / math.log2(3) + 1 / math.log2(5)) / ideal
    nd = t["rows"][0]["measures"]["ndDCG@5"]
    assert t["rows"][0]["hidden_harm"] == pytest.approx(plus - nd, rel=1e-12)
