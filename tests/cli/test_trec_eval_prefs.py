"""``ctxeval trec_eval -R prefs`` / ``-R qrels_prefs``: trec_eval 10.0's preference measures, byte for
byte against trec_eval 10.0's own outputs (its test suite's ``out.test.prefs`` and
``out.test.qrels_prefs``, and outputs of a 10.0 build on generated preferences, all in the shared folder: see ``tests/shared_data.py``),
and by hand on small cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli
from shared_data import OURS, needs_trec_eval, trec_eval_data

DATA = trec_eval_data()  # trec_eval's files and the recordings (outside the tree)


def _run(args: list[str]) -> tuple[int, str, str]:
    out = CliRunner().invoke(cli, ["trec_eval", *args])
    return out.exit_code, out.stdout, out.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("-m all_prefs -q -R prefs prefs.test prefs.results.test", "out.test.prefs"),
        ("-m all_prefs -q -R prefs prefs.comment.test prefs.results.test", "out.test.prefs"),
        # -J (judged docs only) does not touch the preference measures: 10.0 prints the same
        ("-m all_prefs -q -J -R prefs prefs.test prefs.results.test", "out.test.prefs"),
        ("-m all_prefs -q -R qrels_prefs qrels.test results.test", "out.test.qrels_prefs"),
        # three judgment groups (the iter column), levels -1, 0, 1
        ("-m all_prefs -q -R qrels_prefs qrels.123 results.test", "out.qrels_prefs.123"),
        # 40 generated topics: 1-3 groups of 1-3 sub-groups, judged topics without results (-c)
        ("-m all_prefs -q -c -R prefs prefs.gen prefs.gen.results", "out.prefs.gen.c"),
        ("-m all_prefs -q -c -M3 -R prefs prefs.gen prefs.gen.results", "out.prefs.gen.cM3"),
    ],
)
@needs_trec_eval
def test_byte_identical_to_trec_eval_10(args: str, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    code, out, err = _run([str(OURS / a) if a.startswith("prefs.gen") else a for a in args.split()])
    assert (code, err) == (0, "")
    assert out == (DATA / expected).read_text()


@needs_trec_eval
def test_a_judged_topic_without_results_stops_as_trec_eval_10_does() -> None:
    # without -c, 10.0 prints the topics before t04 (judged, no results), then stops with status 4
    code, out, err = _run(
        ["-m", "all_prefs", "-q", "-R", "prefs", str(OURS / "prefs.gen"), str(OURS / "prefs.gen.results")]
    )
    assert (code, out, err) == (
        4,
        (DATA / "out.prefs.gen").read_text(),
        "trec_eval: result qid 't04' not found in qrels\n",
    )


def _values(tmp_path: Path, prefs: str, run: str, *args: str) -> dict[str, str]:
    (tmp_path / "prefs").write_text(prefs)
    (tmp_path / "run").write_text(run)
    code, out, err = _run([*args, "-m", "all_prefs", "-R", "prefs", str(tmp_path / "prefs"), str(tmp_path / "run")])
    assert code == 0, err
    return {line.split("\t")[0].strip(): line.split("\t")[2] for line in out.splitlines()}


def test_one_sub_group_by_hand(tmp_path: Path) -> None:
    # levels a 2 > b 1 > c 0: preferences a>b, a>c, b>c. The run ranks b, a; c is not retrieved.
    # a>b both retrieved, not fulfilled; a>c and b>c implied (only the preferred doc retrieved): fulfilled.
    v = _values(tmp_path, "q A s a 2\nq A s b 1\nq A s c 0\n", "q Q0 b 1 2 t\nq Q0 a 2 1 t\n")
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"], v["prefs_num_prefs_ful_ret"]) == ("3", "2", "0")
    assert v["prefs_simp"] == "0.6667"  # 2 / 3
    assert v["prefs_simp_ret"] == "0.0000"  # 0 / 1
    assert v["prefs_simp_imp"] == "0.6667"  # (0 + 2) / (1 + 2)
    assert v["prefs_pair"] == "0.6667"  # pairs (b,a) 0/1, (b,c) 1/1, (a,c) 1/1
    # R = 2 relevant (a, b) >= N = 1 nonrelevant: R - N = 1 fulfilled preference added per retrieved
    # relevant doc (2) and per relevant doc (2) possible: (2 + 2) / (3 + 2)
    assert v["prefs_avgjg_Rnonrel"] == "0.8000"
    # _ret: R = 2 retrieved relevant, N = 0 retrieved nonrelevant: (0 + 2*2) / (1 + 2*2)
    assert v["prefs_avgjg_Rnonrel_ret"] == "0.8000"


def test_sub_groups_are_closed_under_transitivity(tmp_path: Path) -> None:
    # sub-group s1: a > b; s2: b > c; so a > c too. The run ranks c, b, a: none fulfilled.
    v = _values(
        tmp_path, "q A s1 a 2\nq A s1 b 1\nq A s2 b 2\nq A s2 c 1\n", "q Q0 c 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 1 t\n"
    )
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"]) == ("3", "0")
    # the reverse run fulfils all three
    v = _values(
        tmp_path, "q A s1 a 2\nq A s1 b 1\nq A s2 b 2\nq A s2 c 1\n", "q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 c 3 1 t\n"
    )
    assert (v["prefs_num_prefs_poss"], v["prefs_num_prefs_ful"], v["prefs_simp"]) == ("3", "3", "1.0000")


def test_two_groups_disagreeing_make_pair_differ_from_simp(tmp_path: Path) -> None:
    # groups A and C: a > b, B: b > a (three assessors). The run ranks a, b: simp = 2 fulfilled of 3;
    # pair: the one pair (a, b), C[a][b] = 2 of C[a][b] + C[b][a] = 3; avgjg: (1 + 0 + 1) / 3
    v = _values(
        tmp_path, "q A s a 1\nq A s b 0\nq B s b 1\nq B s a 0\nq C s a 1\nq C s b 0\n", "q Q0 a 1 2 t\nq Q0 b 2 1 t\n"
    )
    assert (v["prefs_simp"], v["prefs_pair"], v["prefs_avgjg"]) == ("0.6667", "0.6667", "0.6667")


def test_ties_in_the_run_break_by_doc_id_ascending(tmp_path: Path) -> None:
    # trec_eval's preference code breaks score ties by doc id ascending (the rest of trec_eval:
    # descending): a and b tie, so a ranks first and a > b is fulfilled
    v = _values(tmp_path, "q A s a 1\nq A s b 0\n", "q Q0 b 1 1 t\nq Q0 a 2 1 t\n")
    assert v["prefs_num_prefs_ful_ret"] == "1"


@pytest.mark.parametrize(
    ("prefs", "message"),
    [
        (
            "q A s1 a 2\nq A s1 b 1\nq A s2 b 2\nq A s2 a 1\n",
            "judgment group 'A': the preferences contradict each other",
        ),
        ("q A s1 a 2\nq A s1 b 0\nq A s2 b 1\nq A s2 c 0\n", "doc 'b' has level 0 and a level above 0"),
        ("q A s a 2\nq A s a 1\n", "doc 'a' has two levels in one sub-group"),
        ("q A s a\n", "prefs:1: expected 5 fields (qid jg jsg docid rel_level), found 4"),
        ("q A s a x\n", "prefs:1: rel_level 'x' is not a finite number"),
        ("# only a comment\n", "no preference lines found"),
    ],
)
def test_inconsistent_or_malformed_preferences_are_one_line_errors(tmp_path: Path, prefs: str, message: str) -> None:
    (tmp_path / "prefs").write_text(prefs)
    (tmp_path / "run").write_text("q Q0 a 1 2 t\nq Q0 b 2 1 t\n")
    code, out, err = _run(["-m", "all_prefs", "-R", "prefs", str(tmp_path / "prefs"), str(tmp_path / "run")])
    assert (code, out) == (2, "")
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-m", "P", "-R", "prefs", "prefs.test", "prefs.results.test"],
            "trec_eval.form_res_qrels: rel_info format not qrels or results format not trec_results\n"
            "trec_eval: Can't calculate measure 'P'\n",
        ),
        (
            ["-m", "prefs_simp", "qrels.test", "results.test"],
            "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) or results format not "
            "trec_results\ntrec_eval: Can't calculate measure 'prefs_simp'\n",
        ),
    ],
)
@needs_trec_eval
def test_a_measure_of_another_format_stops_as_trec_eval_does(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DATA)
    assert _run(args) == (4, "", message)


@needs_trec_eval
def test_the_prefs_set_is_trec_evals(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(DATA)
    code, out, _ = _run(["-m", "prefs", "-R", "prefs", "prefs.test", "prefs.results.test"])
    assert code == 0
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names == [
        "runid",
        "num_q",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
    ]
