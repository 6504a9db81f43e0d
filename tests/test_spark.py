"""The Spark engine against the local engine (local mode): identical per-query values, aggregates and
query accounting on generated data with ties, missing and unjudged queries, graded labels, a pool
and LLM utilities; and Spark MLlib's own RankingMetrics where it overlaps, each difference shown.
Skipped, with the reason, only when no Java runtime exists (the test extra installs pyspark)."""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

import ctxeval

if shutil.which("java") is None:  # pragma: no cover
    pytest.skip(
        "no Java runtime: the Spark engine needs Java 17 (apt install openjdk-17-jre-headless)", allow_module_level=True
    )

from ctxeval._aliases import evaluate_spark
from ctxeval._engines.spark.runtime import spark_session

pytestmark = pytest.mark.slow  # a JVM starts: 30-140 s on a busy 2-core machine

MEASURES = [
    "AP",
    "nDCG@10",
    "P@5",
    "RR",
    "ERR(gmax=3)@5",
    "recall@10",
    "RA-nWG@5",
    "PROC@5",
    "%PROC@5",
    "UDCG@5",
    "dDCG@5",
    "num_ret",
]


@pytest.fixture(scope="module")
def spark() -> Any:
    s = spark_session("local[2]")
    yield s
    s.stop()


def _collection(seed: int, tmp: Path) -> tuple[Path, list[Path], Path, Path]:
    rng = random.Random(seed)
    qrels, pool, util = [], [], []
    runs: list[list[str]] = [[], []]
    for q in range(40):
        docs = [f"d{i}" for i in range(rng.randint(3, 25))]
        if q % 9 != 4:  # some queries unjudged
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                qrels.append(f"q{q} 0 {d} {rng.randint(1, 5)}")
        for d in docs:
            pool.append(f"q{q} Q0 {d} 0 {rng.random():.3f} pool")
            util.append(f"q{q} {d} {rng.random():.3f}")
        for r, run in enumerate(runs):
            if q % 7 == r + 1:
                continue  # some judged queries missing from a run
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                run.append(f"q{q} Q0 {d} 0 {rng.choice([0.5, 1.0, 1.5, rng.random()])} sys{r}")
    (tmp / "qrels").write_text("\n".join(qrels) + "\n")
    paths = []
    for r, run in enumerate(runs):
        paths.append(tmp / f"sys{r}.run")
        paths[-1].write_text("\n".join(run) + "\n")
    (tmp / "pool.run").write_text("\n".join(pool) + "\n")
    (tmp / "utilities.txt").write_text("\n".join(util) + "\n")
    return tmp / "qrels", paths, tmp / "pool.run", tmp / "utilities.txt"


def _values(r: Any, m: Any) -> list[Any]:
    return ["nan" if math.isnan(x) else x for x in r.values[m].tolist()]


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("missing", ["zero", "ignore"])
def test_spark_equals_the_local_engine(spark: Any, tmp_path: Path, seed: int, missing: str) -> None:
    qrels, runs, pool, util = _collection(seed, tmp_path)
    kw: dict[str, Any] = {
        "policies": {"missing": missing},
        "rag": {"pool": str(pool)},
        "utility": {"utilities": str(util)},
    }
    local = ctxeval.evaluate(str(qrels), [str(r) for r in runs], MEASURES, **kw)
    remote, frame = evaluate_spark(
        str(qrels), [str(r) for r in runs], MEASURES, spark=spark, names=["sys0", "sys1"], **kw
    )
    assert [str(m) for m in remote.measures] == [str(m) for m in local.measures]
    for a, b in zip(remote.runs, local.runs):
        assert a.name == b.name and a.qids == b.qids
        assert a.accounting.to_dict() == b.accounting.to_dict()
        for m in local.measures:
            assert _values(a, m) == _values(b, m), str(m)
            assert a.summary[m] == b.summary[m]
    assert frame.count() == sum(len(r.qids) for r in local.runs)


def test_spark_reads_frames_and_err_takes_its_named_gmax(spark: Any) -> None:
    """ERR's gmax is named (never the qrels' highest grade): with gmax 4, q1's ERR@1 with a grade-2 doc at
    rank 1 is (2^2 - 1) / 2^4 = 3/16 in every partition."""
    q = spark.createDataFrame([("q1", "a", 2), ("q2", "b", 4)], "query_id string, doc_id string, relevance int")
    r = spark.createDataFrame([("q1", "a", 1.0), ("q2", "b", 1.0)], "query_id string, doc_id string, score double")
    res, _ = evaluate_spark(q, [r], ["ERR(gmax=4)@1"], spark=spark, names=["r"])
    assert res.runs[0].per_query("ERR(gmax=4)@1") == {"q1": pytest.approx(3 / 16), "q2": pytest.approx(15 / 16)}


@pytest.mark.filterwarnings("ignore::FutureWarning")  # MLlib's RDD API builds a deprecated SQLContext
def test_mllib_ranking_metrics_where_they_overlap(spark: Any) -> None:
    """Spark MLlib's RankingMetrics on the same lists. Predictions a, b, c, d, e; relevant {a, c, z}
    (z never retrieved). P@k: both |rel in top k| / k -> P@5 = 2/5. MAP: both sum precision at each
    relevant hit / |relevant| = (1/1 + 2/3) / 3 = 5/9 (ctxeval's AP). MAP@2 differs in normalisation:
    MLlib divides by min(k, |relevant|) = 2: (1/1) / 2 = 1/2; ctxeval's AP@2 by |relevant| = 3: 1/3.
    nDCG@5 with binary labels: both DCG = 1/log2(2) + 1/log2(4) = 1.5, IDCG = 1 + 1/log2(3) + 1/log2(4)
    = 2.1309 -> 0.7039. With grades (a: 3, c: 1, z: 1) MLlib's set-based ndcgAt ignores them (0.7039)
    while ctxeval's nDCG@5 uses them: DCG = 3 + 1/2 = 3.5, IDCG = 3 + 1/log2(3) + 1/2 = 4.1309 -> 0.8473."""
    from pyspark.mllib.evaluation import RankingMetrics

    pred = ["a", "b", "c", "d", "e"]
    rm = RankingMetrics(spark.sparkContext.parallelize([(pred, ["a", "c", "z"])]))
    run = {"q": {d: float(5 - i) for i, d in enumerate(pred)}}
    binary = ctxeval.evaluate({"q": {"a": 1, "c": 1, "z": 1}}, run, ["P@5", "AP", "AP@2", "nDCG@5"]).runs[0]
    graded = ctxeval.evaluate({"q": {"a": 3, "c": 1, "z": 1}}, run, ["nDCG@5"]).runs[0]
    assert rm.precisionAt(5) == pytest.approx(binary.mean("P@5")) == pytest.approx(2 / 5)
    assert rm.meanAveragePrecision == pytest.approx(binary.mean("AP")) == pytest.approx(5 / 9)
    assert rm.meanAveragePrecisionAt(2) == pytest.approx(1 / 2)
    assert binary.mean("AP@2") == pytest.approx(1 / 3)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert rm.ndcgAt(5) == pytest.approx(binary.mean("nDCG@5")) == pytest.approx(1.5 / idcg)
    assert graded.mean("nDCG@5") == pytest.approx(3.5 / (3 + 1 / math.log2(3) + 0.5))
    assert rm.ndcgAt(5) != pytest.approx(graded.mean("nDCG@5"))


def test_cli_engine_spark(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ctxeval._cli import cli

    qrels, runs, _, _ = _collection(3, tmp_path)
    args = ["evaluate", str(qrels), str(runs[0]), "-m", "AP", "-m", "nDCG@10", "--format", "json"]
    local = CliRunner().invoke(cli, args)
    remote = CliRunner().invoke(cli, [*args, "--engine", "spark", "--spark-master", "local[2]"])
    assert remote.exit_code == 0, remote.output
    import json

    a, b = json.loads(local.stdout), json.loads(remote.stdout)
    assert a["runs"][0]["aggregate"] == b["runs"][0]["aggregate"]
    assert b["settings"]["engine"] == "spark"


def test_compare_on_spark_equals_the_local_report(spark: Any, tmp_path: Path) -> None:
    qrels, runs, _, _ = _collection(4, tmp_path)
    kw: dict[str, Any] = {"stats": {"permutations": 200, "resamples": 200}, "sections": {"curves_k": 0}}
    local = ctxeval.compare(str(qrels), [str(r) for r in runs], ["AP", "nDCG@10"], **kw)
    remote = ctxeval.compare(str(qrels), [str(r) for r in runs], ["AP", "nDCG@10"], engine="spark", **kw)
    assert [(c.run, str(c.measure), c.mean, c.baseline_mean, c.p_value) for c in remote.comparisons] == [
        (c.run, str(c.measure), c.mean, c.baseline_mean, c.p_value) for c in local.comparisons
    ]


def test_sample_sets_on_spark_equal_the_local_reader(spark: Any, tmp_path: Path) -> None:
    """Scores in list order are kept, scores out of order (or ties broken the other way) become n .. 1,
    grades win over reference ids, a repeated reference id counts once: as the local reader does."""
    import json

    recs = [
        {
            "query_id": "q1",
            "retrieved_ids": ["a", "b", "c"],
            "retrieved_scores": [3.0, 2.0, 1.0],
            "grades": {"c": 3, "z": 1},
        },
        {
            "query_id": "q2",
            "retrieved_ids": ["d", "e"],
            "retrieved_scores": [1.0, 5.0],
            "reference_ids": ["e", "e", "x"],
        },
        {"query_id": "q3", "retrieved_ids": ["f", "g"], "retrieved_scores": [2.0, 2.0], "reference_ids": ["g"]},
        {"query_id": "q4", "retrieved_ids": ["h", "i", "j"], "reference_ids": ["j"]},
        {"query_id": "q5", "retrieved": [{"id": "k", "score": 0.2}, {"id": "l", "score": 0.9}], "grades": {"l": 2}},
        {"query_id": "q6", "retrieved": [{"id": "m", "score": 0.9}, {"id": "n", "score": 0.2}], "grades": {"n": 1}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    ms = ["AP", "nDCG@10", "RR", "ContextPrecision", "ContextRecall"]
    local = ctxeval.evaluate(samples=str(path), measures=ms)
    remote, _ = evaluate_spark(None, [str(path)], ms, spark=spark, names=["s"])
    for m in local.measures:
        assert _values(remote.runs[0], m) == _values(local.runs[0], m), str(m)
    assert remote.runs[0].qids == local.runs[0].qids


def test_spark_reads_reference_ids_as_binary_labels(spark: Any, tmp_path: Path) -> None:
    """Reference ids are binary labels on every engine: RA-nWG reads them as relevant (grade 5) and
    Harm is NA where the top k holds an unlabelled chunk, as the local engine reads them."""
    recs = [
        {"query_id": "q1", "retrieved_ids": ["a", "x", "b"], "reference_ids": ["a", "b", "c"]},
        {"query_id": "q2", "retrieved_ids": ["d", "y"], "reference_ids": ["d"]},
    ]
    path = tmp_path / "refs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    ms = ["RA-nWG@2", "Harm@1", "nDCG@2"]
    local = ctxeval.evaluate(samples=str(path), measures=ms)
    remote, _ = evaluate_spark(None, [str(path)], ms, spark=spark, names=["refs"])
    for m in local.measures:
        assert _values(remote.runs[0], m) == _values(local.runs[0], m), str(m)
    assert local.runs[0].mean("RA-nWG@2") == 0.75  # q1: a of ideal 2 -> 1/2; q2: d of ideal 1 -> 1


def test_spark_errors_are_one_line(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\n")
    with pytest.raises(ctxeval.InputError, match=r"nope\.run: no such file"):
        evaluate_spark(str(tmp_path / "qrels"), [str(tmp_path / "nope.run")], ["AP"], spark=spark)


def test_one_naming_rule_and_engine_spark_on_evaluate(spark: Any, tmp_path: Path) -> None:
    """The tag names a run when one tag is used throughout; runs that share a tag take their file
    names; NAME=PATH wins: the same names from every engine."""
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "one.run").write_text("q1 Q0 a 1 2.0 bm25\nq2 Q0 b 1 1.0 bm25\n")
    (tmp_path / "two.run").write_text("q1 Q0 b 1 2.0 bm25\nq2 Q0 b 1 1.0 bm25\n")
    (tmp_path / "three.run").write_text("q1 Q0 a 1 2.0 dense\nq2 Q0 a 1 1.0 dense\n")
    (tmp_path / "mixed.run").write_text("q1 Q0 a 1 2.0 x\nq2 Q0 a 1 1.0 y\n")
    runs = [str(tmp_path / f) for f in ("one.run", "two.run", "three.run", "mixed.run")]
    runs.append(f"mine={tmp_path / 'three.run'}")
    local = ctxeval.evaluate(str(tmp_path / "qrels"), runs, ["AP"])
    on_spark = ctxeval.evaluate(str(tmp_path / "qrels"), runs, ["AP"], engine={"name": "spark", "master": "local[2]"})
    want = ["one", "two", "dense", "mixed", "mine"]
    assert [r.name for r in local.runs] == want
    assert [r.name for r in on_spark.runs] == want
    assert [r.mean("AP") for r in on_spark.runs] == [r.mean("AP") for r in local.runs] == [1.0, 0.5, 0.5, 0.5, 0.5]
    assert any("share the name 'bm25'" in n for n in on_spark.notes)
    alone = {r: ctxeval.evaluate(str(tmp_path / "qrels"), r, ["AP"], engine="stream").runs[0].name for r in runs}
    assert list(alone.values()) == ["bm25", "bm25", "dense", "mixed", "mine"]  # alone, a shared tag names its run
