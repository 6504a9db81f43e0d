"""A run that shares no query with the qrels is an error (almost always the wrong file); a small overlap
is noted with its counts; ``overlap="any"`` (``--overlap any``) scores either as it is."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxeval import QueryMismatchError, diagnose, distraction_table, evaluate
from ctxeval._cli import cli

QRELS = {f"q{i}": {"a": 5, "b": 1} for i in range(20)}
#: TREC DL query ids in a run whose qrels are another collection's: no query in common
WRONG_RUN = {"1037798": {"a": 2.0, "b": 1.0}, "104861": {"b": 1.0}}


def test_zero_overlap_is_an_error_naming_both_sides() -> None:
    with pytest.raises(QueryMismatchError) as err:
        evaluate(QRELS, WRONG_RUN, ["RR"])
    msg = str(err.value)
    assert "run 'run' shares no query with the qrels" in msg
    assert "the run's 2 queries, e.g. '1037798', '104861'" in msg and "the qrels' 20, e.g. 'q0'" in msg
    assert "--overlap any" in msg


@pytest.mark.parametrize("verb", [distraction_table, diagnose])
def test_every_verb_refuses_zero_overlap(verb: object) -> None:
    with pytest.raises(QueryMismatchError, match="shares no query"):
        verb(QRELS, WRONG_RUN)  # type: ignore[operator]


def test_overlap_any_scores_the_wrong_run_as_zero() -> None:
    res = evaluate(QRELS, WRONG_RUN, ["RR"], policies={"overlap": "any"})
    # missing="zero": the 20 judged queries are all scored 0; the run's 2 unjudged queries are ignored
    assert res.runs[0].mean("RR") == 0.0 and res.runs[0].accounting.evaluated == 0
    assert res.notes == [] and res.settings["overlap"] == "any"


def test_a_small_overlap_is_noted_with_its_counts() -> None:
    run = {"q3": {"a": 1.0}, "x1": {"a": 1.0}}  # 1 of the qrels' 20 queries (5 % < 10 %)
    res = evaluate(QRELS, run, ["RR"])
    assert res.notes == [
        "run: the run and the qrels share only 1 of their queries (the run has 2, the qrels 20): "
        "check that the files belong together"
    ]
    assert res.runs[0].mean("RR") == pytest.approx(1 / 20)  # q3 scores 1, the 19 others 0
    # two queries of 20 are exactly a tenth: no note
    assert evaluate(QRELS, {"q3": {"a": 1.0}, "q4": {"a": 1.0}}, ["RR"]).notes == []
    # a small share of the run's queries is noted too
    big_run = {f"x{i}": {"a": 1.0} for i in range(30)} | {"q1": {"a": 1.0}, "q2": {"a": 1.0}}
    assert "the run has 32, the qrels 20" in evaluate(QRELS, big_run, ["RR"]).notes[0]
    assert evaluate(QRELS, run, ["RR"], policies={"overlap": "any"}).notes == []


def test_cli_zero_overlap_is_one_line_naming_the_file(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("".join(f"q{i} 0 a 1\n" for i in range(5)))
    run.write_text("1037798 Q0 a 1 2.0 bm25\n")
    result = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "-m", "RR"])
    assert result.exit_code == 2
    assert result.stderr == (
        f"ctxeval: error: {run}: run 'bm25' shares no query with the qrels (the run's 1 queries, e.g. '1037798'; "
        "the qrels' 5, e.g. 'q0', 'q1', 'q2'): probably the wrong file; --overlap any (overlap='any') scores it anyway\n"
    )
    ok = CliRunner().invoke(cli, ["evaluate", str(qrels), str(run), "-m", "RR", "--overlap", "any"])
    assert ok.exit_code == 0 and "0.0000" in ok.stdout
