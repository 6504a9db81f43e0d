"""A labels sidecar that contradicts the labels beside it is refused, naming both files and what
contradicts (issue 29, point 11): a sidecar saying ``binary`` beside grades 1-5 read every grade,
distractors included, as relevant; one saying ``trec`` beside grades 4 and 5 got an error blaming a
grade map nobody gave."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import ctxeval
from ctxeval._cli import cli
from ctxeval._io.labels import SCALES, LabelKind, Provenance, write_sidecar

#: what each scale may hold, written out (a whole-number grade; a utility in [0, 1])
ALLOWED = {"binary": lambda g: g <= 1, "trec": lambda g: 0 <= g <= 3, "rag": lambda g: 1 <= g <= 5}


def _files(tmp: Path, grades: dict[str, int], sidecar: dict | None) -> tuple[Path, Path]:
    q, r = tmp / "judged.qrels", tmp / "run.txt"
    q.write_text("".join(f"q1 0 {d} {g}\n" for d, g in grades.items()))
    r.write_text("".join(f"q1 Q0 {d} {i} {10 - i} sys\n" for i, d in enumerate(grades, 1)))
    if sidecar is not None:
        (tmp / "judged.qrels.labels.json").write_text(json.dumps({"ctxeval_labels": 1, **sidecar}))
    return q, r


GRADED_1_5 = {"a": 5, "b": 1, "c": 4, "d": 1, "e": 3, "f": 2}


@pytest.mark.parametrize(
    ("sidecar", "bad"),
    [
        ({"kind": "judged", "scale": "binary", "labelled_by": {"judge": "x"}}, "grades 2, 3, 4, 5"),
        ({"kind": "judged", "scale": "trec", "labelled_by": {"judge": "x"}}, "grades 4, 5"),
        ({"kind": "binary"}, "grades 2, 3, 4, 5"),
        ({"kind": "graded", "scale": "trec"}, "grades 4, 5"),
    ],
)
def test_a_sidecar_that_contradicts_its_labels_is_an_error_naming_both(tmp_path: Path, sidecar: dict, bad: str) -> None:
    q, r = _files(tmp_path, GRADED_1_5, sidecar)
    with pytest.raises(ctxeval.InputError) as err:
        ctxeval.Qrels.from_file(q)
    msg = str(err.value)
    assert msg.startswith(f"{q}.labels.json: the sidecar says judged.qrels holds")
    assert f"but {q} holds {bad}," in msg and "contradicts" in msg and "grade map" not in msg
    res = CliRunner().invoke(cli, ["evaluate", str(q), str(r), "-m", "RA-nWG@3"])
    assert res.exit_code == 2 and "RA-nWG" not in res.stdout
    assert res.stderr.count("\n") == 1 and "labels.json: the sidecar says" in res.stderr
    assert "Traceback" not in res.output


def test_a_sidecar_that_agrees_reads_as_before(tmp_path: Path) -> None:
    """Binary 0/1 and TREC 0-3 sidecars are read as they say: RA-nWG@3 worked out by hand.
    TREC: grades 3, 0, 2, 2 through trec-dl (3:5, 2:4, 1:3, 0:2) are utilities 5, 2, 4, 4; RA-nWG's
    weights with rarity (n5 = 1, n4 = 2): w5 = 1, w4 = min(0.5 * 1/2, 1) = 0.25, w2 = 0. The ideal top 3:
    1 + 0.25 + 0.25 = 1.5; the run's (a, b, c): 1 + 0 + 0.25 = 1.25 -> 5/6."""
    q, r = _files(tmp_path, {"a": 3, "b": 0, "c": 2, "d": 2}, {"kind": "graded", "scale": "trec"})
    assert ctxeval.evaluate(q, r, ["RA-nWG@3"]).runs[0].mean("RA-nWG@3") == pytest.approx(1.25 / 1.5, abs=1e-15)
    q, r = _files(tmp_path, {"a": 1, "b": 0, "c": 1}, {"kind": "binary"})
    assert ctxeval.Qrels.from_file(q).labels.binary


def test_an_edited_file_under_a_contradicting_sidecar_says_it_changed(tmp_path: Path) -> None:
    q, _ = _files(tmp_path, {"a": 1, "b": 0}, None)
    write_sidecar(q, LabelKind("judged", "binary", provenance=Provenance("lexical", heuristic=True)))
    q.write_text("q1 0 a 5\nq1 0 b 1\n")
    with pytest.raises(ctxeval.InputError, match=r"holds grade 5, where binary .*the file was changed after"):
        ctxeval.Qrels.from_file(q)


def test_a_utilities_sidecar_on_a_scale_of_grades_is_refused(tmp_path: Path) -> None:
    u = tmp_path / "u.txt"
    u.write_text("q1 a 0.9\nq1 b 0.25\n")
    (tmp_path / "u.txt.labels.json").write_text(json.dumps({"ctxeval_labels": 1, "kind": "judged", "scale": "rag",
                                                             "labelled_by": {"judge": "x"}}))  # fmt: skip
    with pytest.raises(
        ctxeval.InputError, match=r"u\.txt\.labels\.json: .*u\.txt holds grades 0\.25, 0\.9, where the rag"
    ):
        ctxeval.UtilityConfig.resolve(utilities=str(u))


def test_a_declared_scale_the_grades_contradict_blames_the_declaration_not_a_grade_map(tmp_path: Path) -> None:
    q, r = _files(tmp_path, GRADED_1_5, None)
    res = CliRunner().invoke(cli, ["evaluate", str(q), str(r), "-m", "RA-nWG@3", "--labels", "trec"])
    assert res.exit_code == 2
    assert "declared graded on the trec scale (given)" in res.stderr and "holds grades 4, 5" in res.stderr
    assert "does not map" not in res.stderr


@given(
    scale=st.sampled_from(sorted(ALLOWED)),
    grades=st.lists(st.integers(-3, 7), min_size=1, max_size=8),
)
def test_refused_exactly_when_a_grade_lies_outside_the_declared_scale(scale: str, grades: list[int]) -> None:
    from ctxeval._io.labels import contradiction

    outside = sorted({g for g in grades if not ALLOWED[scale](g)})
    got = contradiction(scale, grades)
    assert (got is None) == (not outside)
    if outside:
        named = ", ".join(map(str, outside[:6]))
        assert got.startswith(f"grade{'s' * (len(outside) > 1)} {named}") and scale in SCALES
