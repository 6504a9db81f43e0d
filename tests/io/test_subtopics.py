"""Subtopic qrels (``qid subtopic docid grade``): read under the TREC files' rule, one error per bad
line naming it, the duplicate policy per (query, subtopic, doc), and the same numbers whatever the
order of the lines."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxeval
from ctxeval import DuplicateError, FormatError, Qrels
from ctxeval._io.subtopics import read_subtopic_qrels

LINES = ["q1 1 a 1", "q1 2 a 0", "q1 2 b 2", "q1 10 c 1", "q2 1 x 1", "q2 3 y 0"]
RUN = {"q1": {"a": 3.0, "c": 2.0, "b": 1.0, "z": 0.5}, "q2": {"y": 2.0, "x": 1.0}}
NAMES = ["alpha-nDCG@5", "ERR-IA@2", "NRBP", "MAP-IA", "P-IA@2", "S-recall@1", "nNRBP"]


def _values(qrels: Qrels) -> dict[str, dict[str, float]]:
    res = ctxeval.evaluate(qrels, RUN, NAMES).runs[0]
    return {n: res.per_query(n) for n in NAMES}


def test_the_file_and_the_tuples_read_alike(tmp_path: Path) -> None:
    p = tmp_path / "div.qrels"
    p.write_text("# diversity judgments\n" + "\r\n".join(LINES) + "\n\n")
    from_file = Qrels.from_file(p, labels="subtopic")
    from_rows = Qrels.from_subtopics([(*line.split()[:3], int(line.split()[3])) for line in LINES])
    assert from_file.labels.kind == "subtopic" and from_file.subtopics is not None
    assert from_file.subtopics.names.tolist() == ["1", "2", "3", "10"]  # numbers in numeric order
    assert from_file.to_dict() == {"q1": {"c": 1, "b": 2, "a": 1}, "q2": {"y": 0, "x": 1}}
    assert _values(from_file) == _values(from_rows)


def test_gzip_and_tabs(tmp_path: Path) -> None:
    p = tmp_path / "div.qrels.gz"
    p.write_bytes(gzip.compress("\n".join(line.replace(" ", "\t") for line in LINES).encode()))
    q = Qrels.from_file(p, labels="subtopic")
    assert q.subtopics is not None and q.subtopics.n_judgments == len(LINES)


def test_a_bad_line_is_named(tmp_path: Path) -> None:
    p = tmp_path / "bad.qrels"
    p.write_text("q1 1 a 1\nq1 2 b\n")
    with pytest.raises(FormatError) as err:
        Qrels.from_file(p, labels="subtopic")
    assert err.value.line == 2 and "expected 4 fields" in str(err.value)
    p.write_text("q1 1 a 1\nq1 2 b x\n")
    with pytest.raises(FormatError, match="relevance 'x' is not an integer") as err:
        Qrels.from_file(p, labels="subtopic")
    assert err.value.line == 2


def test_a_doc_judged_twice_for_one_subtopic(tmp_path: Path) -> None:
    p = tmp_path / "dup.qrels"
    p.write_text("q1 1 a 1\n# note\nq1 2 a 0\nq1 1 a 3\n")
    with pytest.raises(
        DuplicateError, match=r"doc 'a' is judged twice for subtopic '1' of query 'q1' \(lines 1 and 4\)"
    ):
        Qrels.from_file(p, labels="subtopic")
    first = read_subtopic_qrels(p, "first")
    best = read_subtopic_qrels(p, "best")
    assert first.grade.tolist() == [1, 0] and best.grade.tolist() == [3, 0] and first.dropped == best.dropped == 1


def test_subtopic_qrels_only_from_trec_text(tmp_path: Path) -> None:
    p = tmp_path / "div.csv"
    p.write_text("query_id,doc_id,relevance\nq1,a,1\n")
    with pytest.raises(ctxeval.ConfigError, match="subtopic qrels are read from TREC text"):
        Qrels.from_file(p, labels="subtopic", format="csv")


def test_plain_qrels_have_no_subtopics_for_the_diversity_measures() -> None:
    with pytest.raises(ctxeval.ConfigError, match="read them with labels='subtopic'"):
        ctxeval.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["alpha-nDCG@5"])


def test_a_file_given_for_a_diversity_measure_is_read_as_subtopic_qrels(tmp_path: Path) -> None:
    p = tmp_path / "div.qrels"
    p.write_text("\n".join(LINES) + "\n")
    res = ctxeval.evaluate(str(p), RUN, NAMES)
    assert {n: res.runs[0].per_query(n) for n in NAMES} == _values(Qrels.from_file(p, labels="subtopic"))
    assert res.notes == []
    plain = tmp_path / "plain.qrels"
    plain.write_text("q1 0 a 1\nq1 0 b 0\n")
    res = ctxeval.evaluate(str(plain), RUN, ["alpha-nDCG@5"])
    assert any("no query has two subtopics" in n for n in res.notes)


@settings(max_examples=30, deadline=None)
@given(st.randoms(use_true_random=False))
def test_the_order_of_the_lines_does_not_matter(rnd: random.Random) -> None:
    rng = np.random.default_rng(rnd.randrange(1 << 30))
    rows = []
    for q in range(6):
        subs = rng.choice(12, int(rng.integers(1, 5)), replace=False)
        for d in rng.choice(30, int(rng.integers(1, 10)), replace=False):
            for s in rng.choice(subs, int(rng.integers(1, subs.size + 1)), replace=False):
                rows.append((f"q{q}", str(s), f"d{d}", int(rng.integers(-1, 4))))
    run = {f"q{q}": {f"d{d}": float(rng.random()) for d in range(0, 30, 2)} for q in range(6)}
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    names = [*NAMES, "alpha-nDCG(alpha=0.3)@10"]
    a = ctxeval.evaluate(Qrels.from_subtopics(rows), run, names).runs[0]
    b = ctxeval.evaluate(Qrels.from_subtopics(shuffled), run, names).runs[0]
    for n in names:
        assert a.per_query(n) == pytest.approx(b.per_query(n), nan_ok=True, rel=0, abs=0), n


def test_the_provider_matches_doc_ids_when_the_join_gives_no_qrels_rows() -> None:
    from dataclasses import replace

    from ctxeval._context import Inputs
    from ctxeval._context.settings import Settings
    from ctxeval._context.subtopics import SubtopicsProvider
    from ctxeval._session import prepare

    qrels = Qrels.from_subtopics([(*line.split()[:3], int(line.split()[3])) for line in LINES])
    run = ctxeval.Run.from_dict(RUN)
    data = prepare(qrels, run, keep_rows=True)
    inputs = Inputs(qrels, run, Settings())
    by_join = SubtopicsProvider().build(data, inputs)
    by_ids = SubtopicsProvider().build(replace(data, _memo={}), inputs)
    for field in ("p_row", "p_group", "p_grade", "g_seg", "d_seg", "d_ptr", "q_group", "q_grade"):
        assert getattr(by_join, field).tolist() == getattr(by_ids, field).tolist(), field
    assert by_join.p_row.size == 6  # the judgments of the retrieved docs: a (subtopics 1, 2), c, b; y, x
