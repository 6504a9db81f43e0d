"""Sample sets (issue 13, first part): JSON lines / dicts / frames with RAGAS's field names too, the
conversion to qrels and a run, malformed samples with exact messages, and a round trip."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxeval
from ctxeval import ConfigError, EmptyInputError, FormatError, Samples

SAMPLES = [
    # ids as parallel lists, reference ids (grade 1)
    {"query_id": "q1", "question": "who?", "retrieved_ids": ["a", "b", "c"], "reference_ids": ["a", "c", "z"]},
    # RAGAS's names: user_input, retrieved_context_ids, reference_context_ids
    {
        "query_id": "q2",
        "user_input": "what?",
        "retrieved_contexts": ["text d", "text e"],
        "retrieved_context_ids": ["d", "e"],
        "reference_context_ids": ["e"],
    },
    # objects with scores, graded references
    {"query_id": "q3", "retrieved": [{"id": "f", "score": 2.5}, {"id": "g", "score": 0.5}], "grades": {"g": 2, "h": 1}},
]


def _write(tmp_path: Path, records: list, name: str = "rag.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return p


def test_samples_evaluate_by_hand(tmp_path: Path) -> None:
    path = _write(tmp_path, SAMPLES)
    res = ctxeval.evaluate(samples=str(path), measures=["RR", "ContextPrecision", "ContextRecall", "P@2"])
    r = res.runs[0]
    assert r.name == "rag" and r.qids == ["q1", "q2", "q3"]
    # q1: a . c relevant of a, c, z; q2: e at rank 2 of e; q3: g (grade 2) at rank 2 of g, h
    assert r.per_query("RR") == {"q1": 1.0, "q2": 0.5, "q3": 0.5}
    assert r.per_query("ContextPrecision") == pytest.approx({"q1": (1 + 2 / 3) / 2, "q2": 0.5, "q3": 0.5})
    assert r.per_query("ContextRecall") == pytest.approx({"q1": 2 / 3, "q2": 1.0, "q3": 0.5})
    assert r.per_query("P@2") == pytest.approx({"q1": 0.5, "q2": 0.5, "q3": 0.5})
    s = Samples.from_jsonl(path)
    assert s.query_texts() == {"q1": "who?", "q2": "what?"}
    assert s.samples[1].retrieved_texts == ("text d", "text e")
    # the same from records and from a polars frame
    assert Samples.from_records(SAMPLES).run().to_dict() == s.run().to_dict()
    frame = pl.DataFrame([SAMPLES[0], {**SAMPLES[0], "query_id": "q9"}])
    assert Samples.from_frame(frame).qrels().to_dict() == {
        "q1": {"a": 1, "c": 1, "z": 1},
        "q9": {"a": 1, "c": 1, "z": 1},
    }


def test_list_order_is_the_ranking_and_scores_that_disagree_are_said() -> None:
    recs = [
        {"query_id": "q1", "retrieved_ids": ["a", "b"], "retrieved_scores": [0.1, 0.9], "reference_ids": ["b"]},
        # a tie: the ranking would put d (the larger id) first, so the list order decides
        {"query_id": "q2", "retrieved_ids": ["c", "d"], "retrieved_scores": [0.5, 0.5], "reference_ids": ["d"]},
        # a tie the ranking orders as listed (e > d): the scores are kept
        {"query_id": "q4", "retrieved_ids": ["e", "d"], "retrieved_scores": [0.5, 0.5], "reference_ids": ["d"]},
        {"query_id": "q3", "retrieved_ids": ["e", "f"], "retrieved_scores": [0.9, 0.1], "reference_ids": ["f"]},
    ]
    s = Samples.from_records(recs, name="rerank")
    run = s.run().to_dict()
    assert run == {
        "q1": {"a": 2.0, "b": 1.0},
        "q2": {"c": 2.0, "d": 1.0},
        "q3": {"e": 0.9, "f": 0.1},
        "q4": {"e": 0.5, "d": 0.5},
    }
    assert s.notes == (
        "<samples>: 2 samples list scores that would rank their chunks in another order than the list's (compared "
        "as float32, ties by id, as the ranking does): ranked by list order (scores n .. 1), their scores are not used",
    )
    res = ctxeval.evaluate(samples=s, measures=["RR"])
    assert res.runs[0].per_query("RR") == {"q1": 0.5, "q2": 0.5, "q3": 0.5, "q4": 0.5}
    assert res.notes[0] == s.notes[0]


def test_samples_without_query_ids_are_named_by_position() -> None:
    s = Samples.from_records([{"retrieved_ids": ["a"], "reference_ids": ["a"]}, {"retrieved_ids": ["b"]}])
    assert [x.query_id for x in s.samples] == ["line-1", "line-2"]
    assert s.notes == (
        "<samples>: no sample has a query_id: the samples are named line-1 .. line-2 by position",
        "<samples>: 2 samples give no scores: scored n .. 1 by list order, so relative-score rules (hard negatives, "
        "calibrate's tau) read ranks there",
    )
    # the sample without references has no judgments: left out, as an unjudged query
    res = ctxeval.evaluate(samples=s, measures=["RR"])
    assert res.runs[0].qids == ["line-1"] and res.runs[0].accounting.unjudged == 1


MALFORMED = [
    (
        '{"query_id": "q1", "retrieved_ids": ["a", "b", "a"]}',
        "s.jsonl:1: retrieved: chunk id 'a' is given twice (positions 1 and 3); duplicates='first' / --duplicates first keeps the first",
    ),
    (
        '{"query_id": "q1", "retrieved_ids": ["a"]}\n{"query_id": "q1", "retrieved_ids": ["b"]}',
        "s.jsonl:2: query_id 'q1' was already given by the sample at line 1",
    ),
    (
        '{"query_id": "q1", "retrieved_ids": ["a"]}\n{"retrieved_ids": ["b"]}',
        "s.jsonl:2: no query_id (other samples have one)",
    ),
    ('{"query_id": "q1", "retrieved_ids": ["a"]\n', "s.jsonl:1: not valid JSON (Expecting ',' delimiter)"),
    ('["q1", "a"]', "s.jsonl:1: a sample must be a JSON object, got list"),
    (
        '{"query_id": "q1", "retrieved": [{"id": "a", "score": 1}, {"id": "b"}]}',
        "s.jsonl:1: retrieved[2]: some chunks have a score and others not",
    ),
    ('{"query_id": "q1", "retrieved": [{"score": 1}]}', "s.jsonl:1: retrieved[1] has neither an id nor a text"),
    (
        '{"query_id": "q1", "retrieved_contexts": ["same", "other", "same"]}',
        "s.jsonl:1: retrieved: the same chunk text is given twice (positions 1 and 3)",
    ),
    ('{"query_id": "q1", "retrieved_ids": ["a"], "pool": "a b"}', "s.jsonl:1: pool must be a list, got str"),
    (
        '{"query_id": "q1", "retrieved_ids": ["a", "b"], "retrieved_scores": [1.0]}',
        "s.jsonl:1: retrieved_scores has 1 items but retrieved_ids 2",
    ),
    (
        '{"query_id": "q1", "retrieved_ids": ["a"], "retrieved_scores": ["high"]}',
        "s.jsonl:1: retrieved_scores[1] must be a finite number, got 'high'",
    ),
    (
        '{"query_id": "q1", "retrieved_ids": ["a"], "grades": {"a": 1.5}}',
        "s.jsonl:1: grades['a'] must be a whole number, got 1.5",
    ),
    ('{"query_id": "q1", "retrieved_ids": "a"}', "s.jsonl:1: retrieved_ids must be a list, got str"),
    ('{"query_id": true, "retrieved_ids": ["a"]}', "s.jsonl:1: query_id must be a non-empty string, got True"),
]


@pytest.mark.parametrize(("text", "message"), MALFORMED)
def test_malformed_samples(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError) as err:
        Samples.from_jsonl(p)
    assert str(err.value).replace(str(tmp_path) + "/", "").startswith(message)


def test_duplicates_first_keeps_the_first(tmp_path: Path) -> None:
    s = Samples.from_records(
        [{"query_id": "q", "retrieved_ids": ["a", "b", "a"], "reference_ids": ["a"]}], duplicates="first"
    )
    assert s.run().to_dict() == {"q": {"a": 2.0, "b": 1.0}}


def test_no_references_anywhere_and_conflicting_sets(tmp_path: Path) -> None:
    with pytest.raises(EmptyInputError, match="no sample gives reference_ids, grades, reference_contexts or labels"):
        ctxeval.evaluate(samples=[{"query_id": "q", "retrieved_ids": ["a"]}], measures=["RR"])
    a = Samples.from_records([{"query_id": "q", "retrieved_ids": ["a"], "grades": {"a": 2}}], source="a.jsonl")
    b = Samples.from_records([{"query_id": "q", "retrieved_ids": ["a"], "grades": {"a": 1}}], source="b.jsonl")
    with pytest.raises(ConfigError, match=r"query 'q' chunk 'a': grade 2 in a.jsonl but 1 in b.jsonl"):
        ctxeval.evaluate(samples=[a, b], measures=["RR"])
    with pytest.raises(ConfigError, match="either samples or qrels and runs"):
        ctxeval.evaluate({"q": {"a": 1}}, samples=[a])


def test_several_sample_sets_compare_as_runs(tmp_path: Path) -> None:
    one = _write(tmp_path, SAMPLES, "dense.jsonl")
    flipped = [{**SAMPLES[0], "retrieved_ids": ["b", "a", "c"]}, SAMPLES[1], SAMPLES[2]]
    two = _write(tmp_path, flipped, "hybrid.jsonl")
    res = ctxeval.evaluate(samples=[str(one), str(two)], measures=["RR"])
    assert [r.name for r in res.runs] == ["dense", "hybrid"]
    assert res.runs[1].per_query("RR")["q1"] == 0.5 and res.runs[0].per_query("RR")["q1"] == 1.0


@st.composite
def _collections(draw: st.DrawFn) -> tuple[dict, dict]:
    n_q = draw(st.integers(1, 4))
    qrels: dict = {}
    run: dict = {}
    for q in range(n_q):
        docs = draw(st.lists(st.sampled_from([f"d{i}" for i in range(8)]), min_size=1, max_size=6, unique=True))
        scores = sorted(
            draw(st.lists(st.integers(1, 10_000), min_size=len(docs), max_size=len(docs), unique=True)), reverse=True
        )
        run[f"q{q}"] = {d: s / 8 for d, s in zip(docs, scores)}
        judged = draw(st.lists(st.sampled_from([f"d{i}" for i in range(10)]), min_size=1, max_size=5, unique=True))
        qrels[f"q{q}"] = {d: draw(st.integers(0, 3)) for d in judged}
    return qrels, run


@given(_collections())
def test_round_trip_loses_nothing(coll: tuple[dict, dict]) -> None:
    qrels, run = coll
    records = [
        {"query_id": q, "retrieved": [{"id": d, "score": s} for d, s in docs.items()], "grades": qrels[q]}
        for q, docs in run.items()
    ]
    s = Samples.from_records(records)
    assert s.qrels().to_dict() == qrels and s.run().to_dict() == run and s.notes == ()
    assert not any(
        math.isnan(v) for v in ctxeval.evaluate(samples=s, measures=["AP"]).runs[0].values[ctxeval.parse_measure("AP")]
    )


def test_cli_evaluate_samples(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ctxeval._cli import cli

    one = _write(tmp_path, SAMPLES, "dense.jsonl")
    res = CliRunner().invoke(cli, ["evaluate", "--samples", str(one), "-m", "ContextRecall", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["runs"][0]["name"] == "dense"
    assert doc["runs"][0]["aggregate"]["ContextRecall"] == pytest.approx((2 / 3 + 1.0 + 0.5) / 3)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1", "retrieved_ids": ["a", "a"]}\n')
    res = CliRunner().invoke(cli, ["evaluate", "--samples", str(bad)])
    assert res.exit_code == 2 and res.stderr.startswith(
        f"ctxeval: error: {bad}:1: retrieved: chunk id 'a' is given twice"
    )
    assert res.stderr.count("\n") == 1


def test_the_bundled_sample_set_is_the_rrf_rerank_run_as_samples() -> None:
    """samples.jsonl holds, per query, rrf-rerank's top 10 with the passages' texts and the query's
    judgments; through it the measures read what they read from the TREC files."""
    from ctxeval._demo import example_path

    s = Samples.from_jsonl(example_path("samples.jsonl"))
    assert len(s) == 50 and s.notes == ()
    qrels = ctxeval.Qrels.from_file(example_path("qrels.txt")).to_dict()
    run = ctxeval.Run.from_file(example_path("runs/rrf-rerank.run")).to_dict()
    texts = {
        rec["doc_id"]: rec["text"]
        for rec in map(json.loads, example_path("passages.jsonl").read_text(encoding="utf-8").splitlines())
    }
    for sample in s.samples:
        top = sorted(run[sample.query_id].items(), key=lambda x: -x[1])[:10]
        assert list(sample.retrieved_ids) == [d for d, _ in top]
        assert dict(sample.grades or {}) == qrels[sample.query_id]
        assert list(sample.retrieved_texts or ()) == [texts[d] for d, _ in top]
    names = ["nDCG@10", "P(rel=3)@5", "R(rel=4)@10", "RA-nWG@5"]
    via_samples = ctxeval.evaluate(samples=s, measures=names).runs[0]
    via_trec = ctxeval.evaluate(str(example_path("qrels.txt")), str(example_path("runs/rrf-rerank.run")), names).runs[0]
    for n in names:
        assert via_samples.mean(n) == pytest.approx(via_trec.mean(n), rel=1e-12), n


@pytest.mark.parametrize(
    "command",
    [
        ["compare", "-m", "RR", "--curve-k", "0", "--format", "json"],
        ["distraction", "-k", "2", "--format", "json"],
        ["curve", "-m", "RR", "-k", "1:2", "--format", "json"],
    ],
)
def test_every_multi_run_verb_takes_samples(tmp_path: Path, command: list[str]) -> None:
    from click.testing import CliRunner

    from ctxeval._cli import cli

    graded = [
        {**s, "grades": dict.fromkeys(s.get("reference_ids", s.get("reference_context_ids", [])), 5)}
        for s in SAMPLES[:2]
    ]
    graded.append({**SAMPLES[2], "grades": {"g": 4, "h": 1}})
    one = _write(tmp_path, graded, "dense.jsonl")
    two = _write(tmp_path, [{**graded[0], "retrieved_ids": ["b", "a", "c"]}, graded[1], graded[2]], "hybrid.jsonl")
    res = CliRunner().invoke(cli, [command[0], "--samples", str(one), str(two), *command[1:]])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    text = json.dumps(doc)
    assert "dense" in text and "hybrid" in text
    if command[0] == "compare":
        rr = {r["name"]: r["aggregate"]["RR"] for r in doc["runs"]}
        # hand: dense q1 a first (1), q2 e at 2 (1/2), q3 g at 2 (1/2); hybrid q1 a at 2
        assert rr == pytest.approx({"dense": (1 + 0.5 + 0.5) / 3, "hybrid": (0.5 + 0.5 + 0.5) / 3})


@given(_collections(), st.sampled_from([None, 1, 3]))
def test_trec_to_samples_and_back(coll: tuple[dict, dict], depth: int | None) -> None:
    """(qrels, run) -> samples -> (qrels, run) keeps the judgments of the run's queries and the
    ranked lists (cut at depth), and every measure reads the same."""
    qrels, run = coll
    s = Samples.from_trec(qrels, run, questions={"q0": "first?"}, passages={"d1": "text one"}, depth=depth)
    assert s.notes == () and s.samples[0].question == "first?"
    back_run = s.run().to_dict()
    for q, docs in run.items():
        ranked = sorted(docs.items(), key=lambda x: (-x[1], x[0]))  # distinct scores: the ties never decide
        assert back_run[q] == dict(ranked if depth is None else ranked[:depth])
    assert s.qrels().to_dict() == {q: g for q, g in qrels.items() if q in run}
    if depth is None:
        names = ["AP", "nDCG@5", "RR"]
        a = ctxeval.evaluate(qrels, run, names, policies={"missing": "ignore"}).runs[0]
        b = ctxeval.evaluate(samples=s, measures=names, policies={"missing": "ignore"}).runs[0]
        for n in names:
            assert a.per_query(n) == pytest.approx(b.per_query(n))


def test_cli_one_run_verbs_take_one_sample_set(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ctxeval._cli import cli
    from ctxeval._demo import example_path

    path = str(example_path("samples.jsonl"))
    res = CliRunner().invoke(cli, ["diagnose", "--samples", path, "-k", "5", "--format", "json"])
    assert res.exit_code == 0, res.output
    via_trec = ctxeval.diagnose(
        str(example_path("qrels.txt")), str(example_path("runs/rrf-rerank.run")), k=5
    ).to_dict()["aggregate"]
    # RA-nWG@5 reads only the top 5 and the judgments: the same through the samples (PROC differs: the
    # sample set's own pool is its top 10)
    assert json.loads(res.stdout)["aggregate"]["RA-nWG@5"] == pytest.approx(via_trec["RA-nWG@5"])
    out = tmp_path / "p.json"
    res = CliRunner().invoke(cli, ["calibrate", "--samples", path, "-k", "8", "-o", str(out)])
    assert res.exit_code in (0, 1), res.output
    bad = CliRunner().invoke(cli, ["calibrate", "--samples", path, path])
    assert bad.exit_code == 2 and "--samples takes one sample set here" in bad.stderr


def test_text_only_samples_by_hand() -> None:
    """RAGAS-schema samples with texts only: chunks are named by a hash of their text, a reference
    context equal to a retrieved text is its judgment, and method=similarity matches by normalised
    Levenshtein similarity, worked out by hand:

    retrieved: r1 "the cat sat" , r2 "a dog ran", r3 "the cat sat down"; references: "the cat sat down",
    "a dog barked".
    sim = 1 - edits / max(len): r1~ref1: 5 edits (append " down") / 16 -> 0.6875; r2~ref2: "a dog ran" ->
    "a dog barked": 5 edits ("ran" -> "barked": r->b, keep a, n->r, +k +e +d) / 12 -> 7/12 = 0.583;
    r3~ref1: 1.0. r1~ref2, r2~ref1 and r3~ref2 are far below 0.5 (checked below with rapidfuzz).
    Precision: v = (1, 1, 1) -> (1/1 + 2/2 + 3/3) / 3 = 1; @1 = 1. Recall: both references matched -> 1;
    @1: only ref1 (by r1) -> 0.5. By ids (exact text): only r3 equals ref1, relevant at rank 3 ->
    ContextPrecision = (1/3) / 1 = 1/3, ContextRecall = 1 / 2 (ref2 has no equal chunk)."""
    from rapidfuzz.distance import Levenshtein

    r = ["the cat sat", "a dog ran", "the cat sat down"]
    ref = ["the cat sat down", "a dog barked"]
    assert Levenshtein.normalized_similarity(r[0], ref[0]) == pytest.approx(11 / 16)
    assert Levenshtein.normalized_similarity(r[1], ref[1]) == pytest.approx(7 / 12)
    assert max(Levenshtein.normalized_similarity(r[0], ref[1]), Levenshtein.normalized_similarity(r[2], ref[1])) < 0.5
    assert Levenshtein.normalized_similarity(r[1], ref[0]) < 0.5
    s = Samples.from_records(
        [{"user_input": "what did the animals do?", "retrieved_contexts": r, "reference_contexts": ref}]
    )
    assert any("named by a hash of its text" in n for n in s.notes)
    assert any("equals a reference context exactly" in n for n in s.notes)
    got = ctxeval.evaluate(
        samples=s,
        measures=[
            "ContextPrecision(method=similarity)",
            "ContextPrecision(method=similarity)@1",
            "ContextRecall(method=similarity)",
            "ContextRecall(method=similarity)@1",
            "ContextPrecision",
            "ContextRecall",
        ],
    ).runs[0]
    assert got.mean("ContextPrecision(method=similarity)") == 1.0
    assert got.mean("ContextPrecision(method=similarity)@1") == 1.0
    assert got.mean("ContextRecall(method=similarity)") == 1.0
    assert got.mean("ContextRecall(method=similarity)@1") == 0.5
    assert got.mean("ContextPrecision") == pytest.approx(1 / 3)
    assert got.mean("ContextRecall") == 0.5
    # a stricter threshold: r2~ref2 (0.583) no longer matches -> precision (1/1 + 0 + 2/3) / 2, recall 1/2
    strict = ctxeval.evaluate(
        samples=s,
        measures=[
            "ContextPrecision(method=similarity,threshold=0.68)",
            "ContextRecall(method=similarity,threshold=0.68)",
        ],
    ).runs[0]
    assert strict.mean("ContextPrecision(method=similarity,threshold=0.68)") == pytest.approx((1 + 2 / 3) / 2)
    assert strict.mean("ContextRecall(method=similarity,threshold=0.68)") == 0.5


def test_similarity_is_na_without_texts_and_an_error_without_samples(tmp_path: Path) -> None:
    got = ctxeval.evaluate(
        samples=[
            {"query_id": "a", "retrieved_ids": ["x"], "reference_ids": ["x"]},
            {"query_id": "b", "retrieved_contexts": ["same text"], "reference_contexts": ["same text"]},
        ],
        measures=["ContextRecall(method=similarity)"],
    ).runs[0]
    per = got.per_query("ContextRecall(method=similarity)")
    assert math.isnan(per["a"]) and per["b"] == 1.0
    assert got.mean("ContextRecall(method=similarity)") == 1.0
    (tmp_path / "q").write_text("a 0 x 1\n")
    (tmp_path / "r").write_text("a Q0 x 1 1.0 r\n")
    with pytest.raises(ConfigError, match=r"method=similarity\) compare texts of a sample set"):
        ctxeval.evaluate(str(tmp_path / "q"), str(tmp_path / "r"), ["ContextRecall(method=similarity)"])


def test_sample_pools_serve_proc() -> None:
    """A sample's pool (first-stage candidates) is its run's pool for PROC. Grades 5, 4, 3, one each
    (p_g = 1/3): RA-nWG weights w5 = 1, w4 = min(r4/r5, cap4) = b4/b5 = 0.5; G_ideal@2 = 1.5. The pool
    holds a (5) and c (4): PROC@2 = 1.5 / 1.5 = 1; without it the pool is the retrieved list (a, b):
    PROC@2 = 1 / 1.5 = 2/3."""
    base = {"query_id": "q1", "retrieved_ids": ["a", "b"], "grades": {"a": 5, "c": 4, "z": 3}}
    with_pool = ctxeval.evaluate(samples=[{**base, "pool": ["a", "b", "c", "d"]}], measures=["PROC@2"]).runs[0]
    without = ctxeval.evaluate(samples=[base], measures=["PROC@2"]).runs[0]
    assert with_pool.mean("PROC@2") == 1.0
    assert without.mean("PROC@2") == pytest.approx(2 / 3)


def test_csv_and_parquet_sample_files_read_like_jsonl(tmp_path: Path) -> None:
    recs = [
        {"query_id": "q1", "retrieved_ids": ["a", "b", "c"], "reference_ids": ["c", "z"], "category": "how"},
        {"query_id": "q2", "retrieved_ids": ["d", "e"], "reference_ids": ["d"], "category": "what"},
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    pl.DataFrame(recs).write_parquet(tmp_path / "s.parquet")
    csv = "query_id,retrieved_ids,reference_ids,category\n" + "".join(
        f'{r["query_id"]},"{json.dumps(r["retrieved_ids"]).replace(chr(34), chr(34) * 2)}",'
        f'"{json.dumps(r["reference_ids"]).replace(chr(34), chr(34) * 2)}",{r["category"]}\n'
        for r in recs
    )
    (tmp_path / "s.csv").write_text(csv)
    want = Samples.from_path(tmp_path / "s.jsonl")
    for suffix in ("parquet", "csv"):
        got = Samples.from_path(tmp_path / f"s.{suffix}")
        assert got.samples == want.samples
        assert got.qrels().to_dict() == {"q1": {"c": 1, "z": 1}, "q2": {"d": 1}}
    res = ctxeval.evaluate(samples=str(tmp_path / "s.csv"), measures=["ContextRecall"]).runs[0]
    assert res.per_query("ContextRecall") == {"q1": 0.5, "q2": 1.0}


def test_csv_cell_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text('query_id,retrieved_ids\nq1,"[""a""]"\nq2,[a b]\n')
    with pytest.raises(FormatError) as err:
        Samples.from_path(tmp_path / "s.csv")
    assert (
        str(err.value)
        .replace(str(tmp_path) + "/", "")
        .startswith("s.csv:3: retrieved_ids: not valid JSON (Expecting value)")
    )


def test_every_verb_reads_the_samples_side_data(tmp_path: Path) -> None:
    """curve reads facets and texts, diagnose the sample's pool, with nothing but --samples.
    Facets f1 = {a} (rank 1), f2 = {c} (rank 3): CoverageRecall@1..3 = 1/2, 1/2, 1. The one reference
    context "some text!" is 0.9 similar to chunk b (rank 2): ContextRecall(method=similarity)@1..3 =
    0, 1, 1. Grades a 5, c 4, z 3 (w5 = 1, w4 = 0.5); the pool holds c: PROC@2 = (1 + 0.5) / 1.5 = 1,
    RA-nWG@2 = 1 / 1.5 (a and b in the top 2): a selection failure."""
    from click.testing import CliRunner

    from ctxeval._cli import cli

    rec = {
        "query_id": "q1",
        "retrieved_ids": ["a", "b", "c"],
        "retrieved_contexts": ["x y", "some text", "other"],
        "reference_contexts": ["some text!"],
        "grades": {"a": 5, "c": 4, "z": 3},
        "pool": ["a", "b", "c", "z"],
        "facets": [{"name": "f1", "ids": ["a"]}, {"name": "f2", "ids": ["c"]}],
    }
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    res = CliRunner().invoke(
        cli,
        [
            *("curve", "--samples", str(path), "-m", "CoverageRecall", "-m", "ContextRecall(method=similarity)"),
            *("-k", "1,2,3", "--format", "csv"),
        ],
    )
    assert res.exit_code == 0, res.output
    rows = [line.split(",") for line in res.stdout.splitlines()[1:]]
    got = {(m, int(k)): float(v) for _, m, k, v in rows}
    assert [got[("CoverageRecall", k)] for k in (1, 2, 3)] == [0.5, 0.5, 1.0]
    assert [got[("ContextRecall(method=similarity)", k)] for k in (1, 2, 3)] == [0.0, 1.0, 1.0]
    res = CliRunner().invoke(cli, ["diagnose", "--samples", str(path), "-k", "2", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["counts"]["selection"] == 1
    assert out["aggregate"]["PROC@2"] == 1.0
    assert out["aggregate"]["RA-nWG@2"] == pytest.approx(2 / 3)
