"""Per-passage utility: labels through the utility map, presets and overrides of the detection rules, known distractors, LLM utilities, the side-file readers; nothing dropped silently."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ctxeval import ConfigError, FormatError, InputError, evaluate
from ctxeval._context.utility import DistractorRules, UtilityConfig, parse_utility_map
from ctxeval._core.extras import WHY_KNOWN, WHY_LABEL, WHY_LLM, WHY_RANK, WHY_SCORE
from ctxeval._errors import DuplicateError, EmptyInputError
from ctxeval._io.side import read_distractors, read_utilities
from distraction_cases import EXAMPLE, HAND_QRELS, HAND_RUN, means, rows_for, sig

# --- rules, presets, known list, LLM utilities -------------------------------------------------------------


def test_presets_and_overrides() -> None:
    assert [
        (r.tau, r.top_rank, r.penalty) for r in map(DistractorRules.resolve, ["default", "strict", "lenient", "off"])
    ] == [
        (0.7, 3, -0.5),
        (0.5, 3, -1.0),
        (0.9, 3, -0.2),
        (None, 0, -0.5),
    ]
    custom = DistractorRules.resolve("strict", top_rank=1, penalty=-0.25)
    assert (custom.preset, custom.based_on, custom.tau, custom.top_rank, custom.penalty) == (
        "custom",
        "strict",
        0.5,
        1,
        -0.25,
    )
    assert DistractorRules.resolve("lenient", tau=0.9).preset == "lenient"  # an override equal to the preset
    assert not DistractorRules.resolve("off").active
    for bad, msg in [
        ({"preset": "paranoid"}, "distractor rules must be one of default, strict, lenient, off"),
        ({"tau": 1.5}, "tau (relative-score threshold) must be in [0, 1], got 1.5"),
        ({"penalty": 0.5}, "penalty (utility of a hard negative) must be in [-1, 0], got 0.5"),
        ({"penalty": 0}, "penalty must be < 0"),
        ({"top_rank": -1}, "top_rank must be a whole number >= 0"),
    ]:
        with pytest.raises(ConfigError, match=None) as info:
            DistractorRules.resolve(**bad)  # type: ignore[arg-type]
        assert msg in str(info.value)


def test_presets_change_detection() -> None:
    # rank 1 grade 5; then judged non-relevant docs with relative scores .8, .6, .4 at ranks 2-4 and an
    # unlabelled passage of score 0 at rank 5 (so (s - s_min) / (s_max - s_min) = s)
    qrels = {"q": {"a": 5, "b": 2, "c": 2, "d": 2}}
    run = {"q": {"a": 1.0, "b": 0.8, "c": 0.6, "d": 0.4, "e": 0.0}}
    got = {}
    for preset in ["default", "strict", "lenient", "off"]:
        _, rows = rows_for(qrels, run, UtilityConfig.resolve(rules=preset))
        got[preset] = rows.u.tolist()
    assert got["default"] == [1.0, -0.5, -0.5, 0.0, 0.0]  # b by score (.8 >= .7), c by rank (3 <= 3)
    assert got["strict"] == [1.0, -1.0, -1.0, 0.0, 0.0]  # b, c by score (>= .5), d: rank 4 > 3
    assert got["lenient"] == [1.0, -0.2, -0.2, 0.0, 0.0]  # b, c by rank only (.8 < .9)
    assert got["off"] == [1.0, 0.0, 0.0, 0.0, 0.0]
    _, rows = rows_for(qrels, run, UtilityConfig.resolve(rules="off", tau=0.5))
    assert rows.u.tolist() == [1.0, -0.5, -0.5, 0.0, 0.0]  # off + tau: the score rule alone, default penalty


def test_rank_rule_touches_every_passage_of_utility_0_judged_or_unlabelled() -> None:
    # The issue: "For passages whose utility is still 0 (judged not relevant, or unlabelled), detection
    # rules ...: a passage whose relative score is >= tau is a hard negative; a non-relevant passage at
    # rank <= r is a hard negative too; otherwise its labelled utility stands (0 if unlabelled)."
    # Ranks 1-5: a (grade 5), u1 (unlabelled, rel .375), j2 (grade 2, rel .25), u3 (unlabelled, rank 4, rel .125),
    # c (grade 3, utility .5, rank 5). Default rules: tau .7, r = 3, penalty -.5.
    qrels = {"q": {"a": 5, "j2": 2, "c": 3}}
    run = {"q": {"a": 1.0, "u1": 0.5, "j2": 0.4, "u3": 0.3, "c": 0.2}}
    _, rows = rows_for(qrels, run)
    #  a: utility 1, untouched;  u1: unlabelled, rank 2 <= 3 -> -0.5;  j2: grade 2 (utility 0), rank 3 -> -0.5
    #  u3: unlabelled, rank 4 > 3, relative score .125 < .7 -> 0 (unlabelled);  c: utility 0.5, never touched
    assert rows.u.tolist() == [1.0, -0.5, -0.5, 0.0, 0.5]
    assert rows.why.tolist() == [WHY_LABEL, WHY_RANK, WHY_RANK, WHY_LABEL, WHY_LABEL]
    _, rows = rows_for({"q": {"a": 5}}, {"q": {"a": 1.0, "u1": 0.9, "z": 0.0}})
    assert rows.why.tolist() == [WHY_LABEL, WHY_SCORE, WHY_RANK]  # the score rule applies to unlabelled rows as well
    # passages whose utility is not 0 are never touched: grade 1 (-1), grade 3 (0.5), at any score or rank
    _, rows = rows_for({"q": {"b": 1, "c": 3}}, {"q": {"b": 1.0, "c": 0.99}}, UtilityConfig.resolve(rules="strict"))
    assert rows.u.tolist() == [-1.0, 0.5] and rows.why.tolist() == [WHY_LABEL, WHY_LABEL]
    # the reason given for an unlabelled rank-rule hit says so
    from ctxeval._distraction import distraction_table

    t = distraction_table(qrels, run, 5)
    whys = {w["doc"]: w["why"] for w in t["rows"][0]["worst_distractors"]}
    assert whys == {
        "u1": "hard negative: unlabelled passage at rank 2 <= 3",
        "j2": "hard negative: utility 0 (grade 2) at rank 3 <= 3",
    }


def test_known_list_overrides_labels() -> None:
    known = {"q": ["a", "c"]}
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(distractors=known))
    assert rows.u.tolist() == [-1.0, 0.5, -1.0, 1.0, 0.0]  # a is grade 5 but listed
    assert rows.why.tolist() == [WHY_KNOWN, WHY_LABEL, WHY_KNOWN, WHY_LABEL, WHY_LABEL]
    # the listed grade-5 doc leaves the ideal: positives 1 (x5), 1 (d), 0.5 (b)
    ideal = 1 + 1 / math.log2(3) + 0.5 / math.log2(4)
    ddcg = -1 + 0.5 / math.log2(3) - 1 / math.log2(4) + 1 / math.log2(5)
    got = means(HAND_QRELS, HAND_RUN, ["ndDCG@5", "UDCG@5"], distractors=known)
    assert got["ndDCG@5"] == pytest.approx(ddcg / ideal)
    # UDCG: a and c are known distractors -> irrelevant with u = 1; b, d relevant; e 0
    assert got["UDCG@5"] == pytest.approx(sig((2 - 2 / 3) / 5))


def test_llm_utilities_replace_labels_and_are_signed_by_relevance() -> None:
    llm = {"q": {"a": 0.9, "c": 0.6, "e": 0.1, "x5": 0.8}}  # b and d have none
    # threshold 0: every irrelevant passage with an LLM utility is a distractor (the default 0.5 is tested below)
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm, llm_threshold=0.0))
    assert rows.u.tolist() == [0.9, 0.5, -0.6, 1.0, -0.1]
    assert rows.why.tolist() == [WHY_LLM, WHY_LABEL, WHY_LLM, WHY_LABEL, WHY_LLM]
    assert rows.counts()["without LLM utility"] == 2
    # UDCG with LLM utilities: relevant a (0.9), b (none), d (none); irrelevant c (0.6), e (0.1)
    # non-reference: b, d left out of C -> (0.9 - (0.6 + 0.1)/3) / 3;  reference: counted in |C| = 5
    got = means(HAND_QRELS, HAND_RUN, ["UDCG@5", "UDCG(reference=true)@5", "ndDCG@5"], utilities=llm, llm_threshold=0.0)
    assert got["UDCG@5"] == pytest.approx(sig((0.9 - 0.7 / 3) / 3))
    assert got["UDCG(reference=true)@5"] == pytest.approx(sig((0.9 - 0.7 / 3) / 5))
    # ideal from the same per-doc utilities: a 0.9, x5 0.8, d 1 (label), b 0.5 (label) -> 1, .9, .8, .5
    ideal = 1 + 0.9 / math.log2(3) + 0.8 / math.log2(4) + 0.5 / math.log2(5)
    ddcg = 0.9 + 0.5 / math.log2(3) - 0.6 / math.log2(4) + 1 / math.log2(5) - 0.1 / math.log2(6)
    assert got["ndDCG@5"] == pytest.approx(ddcg / ideal)
    res = evaluate(HAND_QRELS, HAND_RUN, ["UDCG@5"], utility={"utilities": llm})
    assert res.settings["utility"]["utility_source"] == "llm"
    assert res.to_dict()["runs"][0]["utility"]["without LLM utility"] == 2


# --- readers ------------------------------------------------------------------------------------------------


def test_reader_errors_name_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "dist.txt"
    p.write_text("# known\nq1 d1\nq1 d2 extra\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        read_distractors(p)
    assert str(info.value) == f"{p}:3: expected two fields (qid docid), found 3 (line: 'q1 d2 extra')"
    p.write_text("# only a comment\n\n", encoding="utf-8")
    with pytest.raises(EmptyInputError, match="no known-distractor lines"):
        read_distractors(p)
    u = tmp_path / "u.txt"
    for text, line, problem in [
        ("q1 d1 0.5\nq1 d2\n", 2, "expected three fields (qid docid u), found 2"),
        ("q1 d1 0.5\nq1 d2 high\n", 2, "utility 'high' is not a number"),
        ("q1 d1 1.5\n", 1, "utility '1.5' is outside [0, 1]"),
        ("q1 d1 nan\n", 1, "utility 'nan' is outside [0, 1]"),
    ]:
        u.write_text(text, encoding="utf-8")
        with pytest.raises(FormatError) as info:
            read_utilities(u)
        assert str(info.value).startswith(f"{u}:{line}: {problem}")
    u.write_text("q1 d1 0.5\n# c\nq1 d2 0.1\nq1 d1 0.7\n", encoding="utf-8")
    with pytest.raises(DuplicateError, match=r"doc 'd1' given twice \(lines 1 and 4\)"):
        read_utilities(u)
    with pytest.raises(InputError, match="no such file"):
        read_utilities(tmp_path / "nope.txt")
    # the CLI reports the same error on one line with exit status 2
    from ctxeval._cli import cli

    out = CliRunner().invoke(
        cli,
        [
            "evaluate",
            str(EXAMPLE / "qrels.txt"),
            str(EXAMPLE / "runs" / "bm25.run"),
            "-m",
            "dDCG@5",
            "--utilities",
            str(u),
        ],
    )
    assert out.exit_code == 2 and "given twice (lines 1 and 4)" in out.output


def test_example_files_read() -> None:
    known = read_distractors(EXAMPLE / "distractors.txt")
    llm = read_utilities(EXAMPLE / "utilities.txt")
    assert known.height == 32 and llm.height == 769


def test_pair_lookup_survives_hash_collisions(monkeypatch: pytest.MonkeyPatch) -> None:
    """Looking (query, doc) pairs up in a side table (known distractors, LLM utilities) is exact even
    when every doc hash collides: the string check rejects the false matches."""
    import numpy as np

    from ctxeval._core.ids import ArrayIds
    from ctxeval._core.join import pair_lookup

    qids = np.array(["q1", "q2"])
    q = np.array([0, 1, 1])  # rows (q1, d1), (q2, d1), (q2, d2)
    ids = ArrayIds.from_strings(["d1", "d1", "d2"])
    table = read_utilities({"q1": {"d1": 0.25}}).columns
    assert pair_lookup(q, ids, table, qids)[0].tolist() == [0]
    calls = []

    def collide(self: ArrayIds, lo: int = 0, hi: int | None = None) -> np.ndarray:
        calls.append(lo)
        return np.zeros(len(self) if hi is None else hi - lo, dtype=np.uint64)

    monkeypatch.setattr(ArrayIds, "hash", collide)
    rows, found = pair_lookup(q, ids, table, qids)
    assert rows.tolist() == [0] and table.values[found].tolist() == [0.25]
    assert calls  # the hashes did collide


def test_utility_inputs_nothing_dropped_silently(tmp_path: Path) -> None:
    from ctxeval._distraction import distraction_table

    # a known-distractor file listing one pair twice, and one pair the run never retrieves
    known = tmp_path / "known.txt"
    known.write_text("q c\n# again\nq c\nq zz\nq7 a\n", encoding="utf-8")
    pairs = read_distractors(known)
    assert (pairs.height, pairs.duplicates) == (3, 1)  # (q, c), (q, zz), (q7, a); (q, c) twice
    cfg = UtilityConfig.resolve(distractors=known)
    assert cfg.describe()["known_distractors"] == {"source": str(known), "pairs": 3, "duplicate_lines": 1}
    assert any("1 duplicate line ignored" in line for line in cfg.lines())
    # LLM utilities for pairs the run does not retrieve: (q, x5) is judged (used by the ideal), (q, nope), (q9, a)
    llm = tmp_path / "u.txt"
    llm.write_text("q a 0.9\nq c 0.6\nq x5 0.8\nq nope 0.3\nq9 a 0.5\n", encoding="utf-8")
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(distractors=known, utilities=llm))
    c = rows.counts()
    assert c["LLM pairs not retrieved"] == 3 and c["without LLM utility"] == 3  # b, d, e have none
    assert c["known pairs not retrieved"] == 2
    t = distraction_table(HAND_QRELS, HAND_RUN, 5, utility={"distractors": str(known), "utilities": str(llm)})
    assert t["rows"][0]["utility_counts"]["LLM pairs not retrieved"] == 3
    # a utility map naming a grade twice is an error, not "the last one wins"
    with pytest.raises(ConfigError, match=r"utility map '5:1,4:1,5:0.5': grade 5 is given twice"):
        parse_utility_map("5:1,4:1,5:0.5")
    # the text reports print the same counts
    from ctxeval._cli import cli

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q 0 {d} {g}\n" for d, g in HAND_QRELS["q"].items()), encoding="utf-8")
    run = tmp_path / "r.run"
    run.write_text(
        "".join(f"q Q0 {d} {i + 1} {s} r\n" for i, (d, s) in enumerate(HAND_RUN["q"].items())), encoding="utf-8"
    )
    out = CliRunner().invoke(
        cli, ["distraction", str(qrels), str(run), "--distractors", str(known), "--utilities", str(llm)]
    )
    text = " ".join(out.output.split())
    assert out.exit_code == 0 and "(u = -1; 1 duplicate lines ignored)" in text
    assert (
        "LLM pairs not retrieved 3" in text
        and "known pairs not retrieved 2" in text
        and "without LLM utility 3" in text
    )
    ev = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "-m", "dDCG@5", "--distractors", str(known)])
    assert "(1 duplicate lines ignored)" in " ".join(ev.output.split())
    ev = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "-m", "dDCG@5", "--utilities", str(llm)])
    # a and c have LLM utilities; b, d, e keep their label utilities
    assert "r: passages by utility rule: label 3, known distractor 0," in " ".join(ev.output.split())
    assert (
        "LLM utility 2, negative 1, without LLM utility 3, LLM utility below threshold 0, LLM pairs not retrieved 3"
        in " ".join(ev.output.split())
    )


def test_llm_threshold_decides_which_irrelevant_passages_distract(tmp_path: Path) -> None:
    # HAND_RUN ranks a (5), b (3), c (2), d (4), e (2). LLM utilities: a .9, c .6, e .1 (x5 .8, not retrieved).
    # Irrelevant passages (c, e) count as distractors (u = -LLM u) only when their LLM utility is >= the
    # threshold (default 0.5); below it they are junk the LLM ignores: u = 0. Relevant ones keep +u.
    llm = {"q": {"a": 0.9, "c": 0.6, "e": 0.1, "x5": 0.8}}
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm))
    assert rows.u.tolist() == [0.9, 0.5, -0.6, 1.0, 0.0]
    assert rows.why.tolist() == [WHY_LLM, WHY_LABEL, WHY_LLM, WHY_LABEL, WHY_LLM]
    assert rows.counts()["LLM utility below threshold"] == 1
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm, llm_threshold=0.0))
    assert rows.u.tolist() == [0.9, 0.5, -0.6, 1.0, -0.1]  # threshold 0: every irrelevant passage distracts
    _, rows = rows_for(HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm, llm_threshold=0.7))
    assert rows.u.tolist() == [0.9, 0.5, 0.0, 1.0, 0.0]
    # a listed known distractor is a distractor whatever its LLM utility: -u
    _, rows = rows_for(
        HAND_QRELS, HAND_RUN, UtilityConfig.resolve(utilities=llm, distractors={"q": ["c", "e"]}, llm_threshold=0.7)
    )
    assert rows.u.tolist() == [0.9, 0.5, -0.6, 1.0, -0.1]
    # the measures built on u follow: DistractorRate@5 = 1/5 (c only), harm 0.6, dDCG without e's -0.1
    got = means(HAND_QRELS, HAND_RUN, ["DistractorRate@5", "DistractorHarm@5", "dDCG@5"], utilities=llm)
    assert got["DistractorRate@5"] == pytest.approx(1 / 5) and got["DistractorHarm@5"] == pytest.approx(0.6)
    assert got["dDCG@5"] == pytest.approx(0.9 + 0.5 / math.log2(3) - 0.6 / math.log2(4) + 1 / math.log2(5))
    # UDCG (released form) reads the LLM utilities as given: the threshold changes nothing
    # relevant a (.9); irrelevant c (.6), e (.1); b, d without a utility are left out of C
    for th in (0.0, 0.5, 0.95):
        got = means(HAND_QRELS, HAND_RUN, ["UDCG@5", "UDCG(reference=true)@5"], utilities=llm, llm_threshold=th)
        assert got["UDCG@5"] == pytest.approx(sig((0.9 - 0.7 / 3) / 3))
        assert got["UDCG(reference=true)@5"] == pytest.approx(sig((0.9 - 0.7 / 3) / 5))
    # so does the positional form: u- of e is its LLM utility .1 at any threshold
    fit = tmp_path / "fit.json"
    fit.write_text(
        json.dumps({"alpha": [1.0, 1.0, 1.0, 1.0, 1.0], "beta": [0.0, 0.0, 0.0, 0.0, -2.0], "bias": 0.0}),
        encoding="utf-8",
    )
    for th in (0.0, 0.5):
        got = means(HAND_QRELS, HAND_RUN, [f"UDCG-pos(fit='{fit}')@5"], utilities=llm, llm_threshold=th)
        assert got[f"UDCG-pos(fit='{fit}')@5"] == pytest.approx(sig(0.9 + 0.5 + 1.0 - 2.0 * 0.1))
    # the threshold is validated and reported
    with pytest.raises(ConfigError, match=r"llm_threshold .* must be in \[0, 1\], got 1.5"):
        UtilityConfig.resolve(utilities=llm, llm_threshold=1.5)
    res = evaluate(HAND_QRELS, HAND_RUN, ["dDCG@5"], utility={"utilities": llm})
    assert res.settings["utility"]["utilities"]["threshold"] == 0.5
    assert (
        "LLM utilities from <utilities> (relevant: u; other passages: -u when u >= 0.5, else 0; known distractors: -u; UDCG reads u as given)"
        in " ".join(__import__("ctxeval._render.text", fromlist=["render"]).render(res, "table").split())
    )
