"""Label kinds: binary reference ids, graded judgments and judged labels keep their meaning in every verb.

Each case is small enough to work out by hand; the expected values are written out beside it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import ctxeval
from ctxeval._io.labels import LabelKind, Provenance, read_sidecar, write_sidecar

# q1 retrieves a (ref), x, b (ref), y; its references are a, b, c. q2 retrieves x2, d (ref).
BINARY = [
    {"query_id": "q1", "retrieved_ids": ["a", "x", "b", "y"], "reference_ids": ["a", "b", "c"]},
    {"query_id": "q2", "retrieved_ids": ["x2", "d"], "reference_ids": ["d"]},
]


def _write(tmp: Path, name: str, rows: list[dict]) -> Path:
    p = tmp / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return p


def test_kind_is_inferred_from_what_the_samples_give(tmp_path: Path) -> None:
    refs = ctxeval.Samples.coerce(_write(tmp_path, "refs.jsonl", BINARY))  # columnar reader
    assert refs.labels.kind == "binary" and refs.qrels().labels.binary
    graded = ctxeval.Samples.from_records([{"query_id": "q", "retrieved_ids": ["a"], "grades": {"a": 4}}])
    assert graded.labels.kind == "graded" and not graded.qrels().labels.binary
    texts = ctxeval.Samples.from_records(
        [{"user_input": "q?", "retrieved_contexts": ["A.", "B."], "reference_contexts": ["A."]}]
    )
    assert texts.labels.binary and "exact text" in texts.labels.origin
    line_reader = ctxeval.Samples.from_jsonl(tmp_path / "refs.jsonl", fast=False)
    assert line_reader.labels == refs.labels
    # a qrels file is graded unless told otherwise
    q = tmp_path / "q.txt"
    q.write_text("q1 0 a 1\n", encoding="utf-8")
    assert ctxeval.Qrels.from_file(q).labels.kind == "graded"
    assert ctxeval.Qrels.from_file(q, labels="binary").labels.binary


def test_diagnose_on_reference_ids_reads_references_as_relevant() -> None:
    # binary reading: a, b, c, d are grade 5 (weight 1 each). k = 2, the run is its own pool.
    # q1: G_ideal@2 = 2; the pool (the whole list) holds a and b: PROC = 2/2 = 1; the top 2 (a, x)
    #     hold 1: %PROC = 1/2 -> a selection failure (PROC >= 0.8, %PROC < 0.8).
    # q2: one reference, d, at rank 2: PROC = 1/1, %PROC = 1 -> healthy.
    d = ctxeval.diagnose(samples=BINARY, k=2)
    assert (d["q1"].verdict, d["q1"].proc, d["q1"].pct_proc) == ("selection", 1.0, 0.5)
    assert (d["q2"].verdict, d["q2"].proc, d["q2"].pct_proc) == ("healthy", 1.0, 1.0)
    assert d.settings["grade_map"] == "binary (1:5)"
    assert any("labels: binary" in n for n in d.notes)


def test_distraction_on_reference_ids_gives_no_verdict_and_says_what_is_missing() -> None:
    t = ctxeval.distraction_table(samples=BINARY, k=2)
    (row,) = t["rows"]
    # both top 2 hold an unlabelled chunk (x, x2): the rate is unknown, not 0 and not 0.5
    assert row["distractor_rate"] is None and row["verdict"] == "NA"
    assert "judge utility --samples" in row["verdict_reason"]
    assert row["hard_negatives"]["top_k"] == {"judged": 0, "unlabelled": 0}
    assert t["rel"] == 1  # a reference is relevant: not "nothing is relevant"


def test_distraction_with_llm_utilities_on_reference_ids(tmp_path: Path) -> None:
    # u: a 0.8 (reference: +0.8), x 0.9 (not a reference, >= 0.5: -0.9), x2 0.1 (< 0.5: 0), d 0.7 (+0.7)
    # top 2: q1 [a, x] -> rate 1/2; q2 [x2, d] -> rate 0; mean 0.25 -> RISKY (0.10 < 0.25 <= 0.50)
    u = tmp_path / "u.txt"
    u.write_text("q1 a 0.8\nq1 x 0.9\nq2 x2 0.1\nq2 d 0.7\n", encoding="utf-8")
    t = ctxeval.distraction_table(samples=BINARY, k=2, utility={"utilities": str(u)})
    (row,) = t["rows"]
    assert row["distractor_rate"] == pytest.approx(0.25) and row["verdict"] == "RISKY"


def test_flagging_unlabelled_chunks_is_explicit_and_counted() -> None:
    # --flag-unlabelled with the default rules: x (rank 2) and x2 (rank 1) are at rank <= 3 -> -0.5
    # q1 top 2 [a, x]: 1/2; q2 [x2, d]: 1/2 -> mean 0.5 -> RISKY (<= 0.50); two unlabelled flagged
    t = ctxeval.distraction_table(samples=BINARY, k=2, utility={"flag_unlabelled": True})
    (row,) = t["rows"]
    assert row["distractor_rate"] == pytest.approx(0.5) and row["verdict"] == "RISKY"
    assert row["hard_negatives"]["top_k"] == {"judged": 0, "unlabelled": 2}


def test_measures_that_need_negative_labels_are_na_on_binary_labels() -> None:
    r = ctxeval.evaluate(samples=BINARY, measures=["Harm@1", "Harm@2", "DistractorRate@1", "RA-nWG@2"]).runs[0]
    # Harm@1: q1's top 1 is a (judged, grade 5): 0; q2's is x2 (unlabelled): NA
    assert (r.mean("Harm@1"), r.valid("Harm@1")) == (0.0, 1)
    assert r.valid("Harm@2") == 0 and math.isnan(r.mean("Harm@2"))
    assert r.valid("DistractorRate@1") == 1
    # RA-nWG@2: q1 top 2 holds a (w 1) of ideal 2 -> 0.5; q2 holds d of ideal 1 -> 1
    assert r.mean("RA-nWG@2") == pytest.approx(0.75)


def test_evaluate_notes_say_how_to_get_labels() -> None:
    res = ctxeval.evaluate(samples=BINARY, measures=["Harm@2"])
    assert any("ctxeval judge utility --samples" in n for n in res.notes)
    assert res.settings["labels"]["kind"] == "binary"


def test_graded_labels_keep_the_rules_on_unlabelled_chunks() -> None:
    # graded qrels: the unlabelled x at rank 2 is a hard negative by the default rank rule (-0.5),
    # as before; the report counts it as unlabelled
    t = ctxeval.distraction_table({"q1": {"a": 5}}, {"q1": {"a": 2.0, "x": 1.0}}, k=2)
    (row,) = t["rows"]
    assert row["distractor_rate"] == pytest.approx(0.5) and row["verdict"] == "RISKY"
    assert row["hard_negatives"]["top_k"] == {"judged": 0, "unlabelled": 1}


def test_positives_only_qrels_read_as_graded_are_flagged(tmp_path: Path) -> None:
    q = tmp_path / "msmarco.qrels"
    q.write_text("q1 0 a 1\nq2 0 d 1\n", encoding="utf-8")
    run = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"d": 2.0}}
    with pytest.raises(ctxeval.ConfigError, match="--labels binary"):
        ctxeval.distraction_table(str(q), run, k=2)
    cal = ctxeval.calibrate(str(q), run, k=2, folds=2)
    assert any("grade 1 is a distractor" in n for n in cal.notes)
    ok = ctxeval.calibrate(str(q), run, k=2, folds=2, rag={"labels": "binary"})
    assert any("on binary labels no passage costs anything" in n for n in ok.notes)
    assert ok.policy["in_sample"]["objective_at_best_fixed_k"] == pytest.approx(1.0)  # one reference each


def test_calibrate_says_when_the_run_misses_most_judged_queries() -> None:
    qrels = {f"q{i}": {"a": 5} for i in range(5)}
    run = {"q0": {"a": 2.0, "b": 1.0}, "q1": {"a": 1.0}}
    cal = ctxeval.calibrate(qrels, run, k=2, folds=2)
    assert any("3 of the 5 judged queries have no line in the run" in n for n in cal.notes)


def test_sidecar_round_trip_and_judged_notes(tmp_path: Path) -> None:
    q = tmp_path / "judged.qrels"
    q.write_text("q1 0 a 5\nq1 0 b 3\n", encoding="utf-8")
    prov = Provenance("lexical", heuristic=True, task="grade", depth=1, pairs=2, undecided=1, runs=("r",))
    write_sidecar(q, LabelKind("judged", "rag", provenance=prov))
    kind = read_sidecar(q)
    assert kind is not None and kind.judged and kind.scale == "rag" and kind.provenance == prov
    assert not kind.notes
    # nDCG@3 reads ranks a (judged), x (not), b (judged): Judged@3 = 2/3; nDCG@1 reads a: Judged@1 = 1
    res = ctxeval.evaluate(str(q), {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}}, ["nDCG@3", "nDCG@1"])
    joined = " | ".join(res.notes)
    assert "a word-overlap heuristic" in joined and "top 1 of each list" in joined
    assert "the share of its top k the judge labelled" in joined and "@1 run 100 %; @3 run 67 %" in joined
    # a file changed after its sidecar was written is read with a note
    q.write_text("q1 0 a 5\n", encoding="utf-8")
    stale = read_sidecar(q)
    assert stale is not None and "another version" in stale.notes[0]


def test_malformed_sidecar_is_a_one_line_error(tmp_path: Path) -> None:
    q = tmp_path / "j.qrels"
    q.write_text("q1 0 a 5\n", encoding="utf-8")
    (tmp_path / "j.qrels.labels.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ctxeval.FormatError, match=r"j\.qrels\.labels\.json"):
        ctxeval.Qrels.from_file(q)
    (tmp_path / "j.qrels.labels.json").write_text(
        '{"ctxeval_labels": 1, "kind": "judged", "depth": 0, "labelled_by": {"judge": "x"}}'
    )
    with pytest.raises(ctxeval.FormatError, match="depth must be a whole number >= 1"):
        ctxeval.Qrels.from_file(q)


def test_trec_scale_reads_through_trec_dl() -> None:
    qrels = ctxeval.Qrels.from_dict({"q1": {"a": 3, "b": 0}}, labels="trec")
    r = ctxeval.evaluate(qrels, {"q1": {"a": 1.0}}, ["RA-nWG@1"])
    assert r.settings["grade_map"] == "trec-dl (3:5,2:4,1:3,0:2)" and r.runs[0].mean("RA-nWG@1") == 1.0


def test_judged_utilities_read_deeper_than_judged_are_noted(tmp_path: Path) -> None:
    u = tmp_path / "u.txt"
    u.write_text("q1 a 0.9\nq2 d 0.8\n", encoding="utf-8")
    prov = Provenance("lexical", heuristic=True, task="utility", depth=1, pairs=2, undecided=0)
    write_sidecar(u, LabelKind("judged", "utility", provenance=prov))
    res = ctxeval.evaluate(samples=BINARY, measures=["DistractorRate@2", "dDCG@1"], utility={"utilities": str(u)})
    joined = " | ".join(res.notes)
    # top 2: q1 [a (u), x (none)], q2 [x2 (none), d (u)]: one of the top 2 of each query carries an LLM
    # utility; top 1: q1's a alone
    assert (
        "the share of each run's top k that carries an LLM utility" in joined
        and "@1 samples 50 %; @2 samples 50 %" in joined
    )
    assert "utilities: judged on the utility scale" in joined


def test_unlabelled_hard_negatives_are_counted_in_evaluate_and_calibrate() -> None:
    # graded qrels; x (unlabelled) at rank 2 of both queries is a hard negative by the rank rule
    qrels = {"q1": {"a": 5}, "q2": {"b": 5}}
    run = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"b": 2.0, "x": 1.0}}
    res = ctxeval.evaluate(qrels, run, ["DistractorRate@2"])
    assert any("made 2 passages nobody labelled distractors" in n for n in res.notes)
    cal = ctxeval.calibrate(qrels, run, k=2, folds=2)
    assert any("made 2 passages nobody labelled distractors" in n for n in cal.notes)
    # only the ranks the figures read count: at 1 the top holds a and b (judged), nothing to say
    one = ctxeval.evaluate(qrels, run, ["DistractorRate@1", "nDCG@2"])
    assert not any("nobody labelled" in n for n in one.notes)
    assert not any("nobody labelled" in n for n in ctxeval.calibrate(qrels, run, k=1, folds=2).notes)
    [note] = [n for n in res.notes if "nobody labelled" in n]
    assert note.startswith("run: in the top 2, the hard-negative rules made 2 passages")
    # several runs: one note, each run with its count (y, z: 1 unlabelled at rank 2 of q1 only)
    other = {"q1": {"a": 2.0, "y": 1.0}, "q2": {"b": 2.0}}
    runs = [ctxeval.Run.from_dict(run, name="one"), ctxeval.Run.from_dict(other, name="two")]
    both = [n for n in ctxeval.evaluate(qrels, runs, ["DistractorRate@2"]).notes if "nobody labelled" in n]
    assert both == [
        "in the top 2, the hard-negative rules made passages nobody labelled distractors: one 2 (and 0 judged ones), "
        "two 1 (and 0 judged ones); the figures that count distractors rest on them (--no-flag-unlabelled leaves "
        "unlabelled passages alone)"
    ]


def test_fit_udcg_takes_named_sample_sets(tmp_path: Path) -> None:
    answers = tmp_path / "answers.csv"
    rows = [(q, r, c) for q in ("q1", "q2") for r, c in (("good", 1), ("weak", 0))]
    answers.write_text("query_id,run,correct\n" + "".join(f"{q},{r},{c}\n" for q, r, c in rows), encoding="utf-8")
    weak = [
        {"query_id": s["query_id"], "retrieved_ids": s["retrieved_ids"][::-1], "reference_ids": s["reference_ids"]}
        for s in BINARY
    ]
    fit = ctxeval.fit_udcg(samples={"good": BINARY, "weak": weak}, answers=str(answers), k=2, folds=2)
    assert fit.report["runs"] == ["good", "weak"] and fit.report["n_observations"] == 4
