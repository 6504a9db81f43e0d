"""Every verb that evaluates, on every engine, on the same inputs: the outputs are the same bytes.

The inputs are generated with what makes engines differ when they are wrong: graded labels on the 1-5
scale, tied scores, judged queries a run lacks (scored 0, ``missing="zero"``) and queries only a run
has (unjudged), two runs sharing no tag, a retrieval pool, LLM utilities, answers for fit-udcg. The
stream engine reads the runs in chunks of a few hundred bytes (several queries each, so that blocks
are merged and the judged queries a run lacks come last); Spark (``local[2]``) in partitions. Each
verb's output (its JSON, or the dict of the report contract) is compared with the local engine's
after removing what an engine says about itself: the settings' ``engine``/``master`` (Spark) or
``streamed`` entry, and the stream engine's note that the pool is held in memory. The Spark cells are
slow (a JVM starts) and run where Java is (CI installs it: scripts/install-java).
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ctxeval
from ctxeval._engines.stream import StreamEngine

MEASURES = ["AP", "nDCG@10", "P@5", "RR", "ERR(gmax=5)@5", "R@20", "RA-nWG@5", "PROC@5", "%PROC@5", "UDCG@5"]
STATS = {"permutations": 300, "resamples": 300}
#: what an engine says about itself: removed before the outputs are compared
ENGINE_KEYS = frozenset({"engine", "master", "streamed"})
ENGINE_NOTE = "the retrieval pool is held in memory"


def _collection(tmp: Path, seed: int = 7) -> dict[str, str]:
    rng = random.Random(seed)
    qrels, pool, util, answers = [], [], [], ["qid,run,correct"]
    runs: dict[str, list[str]] = {"bm25": [], "dense": []}
    for q in range(36):
        qid = f"q{q:02d}"
        docs = [f"d{i}" for i in range(rng.randint(4, 18))]
        if q % 11 != 5:  # some queries unjudged (only the runs have them)
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                qrels.append(f"{qid} 0 {d} {rng.randint(1, 5)}")
        for d in docs:
            pool.append(f"{qid} Q0 {d} 0 {rng.random():.4f} pool")
            util.append(f"{qid} {d} {rng.random():.3f}")
        for r, (name, lines) in enumerate(runs.items()):
            if q % 7 == r + 2:
                continue  # judged queries a run lacks
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                lines.append(f"{qid} Q0 {d} 0 {rng.choice([0.5, 1.0, 1.5, round(rng.random(), 3)])} {name}")
            answers.append(f"{qid},{name},{rng.randint(0, 1)}")
    files = {"qrels": qrels, "pool": pool, "utilities": util, "answers": answers, **runs}
    out = {}
    for name, lines in files.items():
        path = tmp / (f"{name}.run" if name in runs else f"{name}.txt")
        path.write_text("\n".join(lines) + "\n")
        out[name] = str(path)
    return out


def _plain(value: Any) -> Any:
    """``value`` without what an engine says about itself."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if k not in ENGINE_KEYS}
    if isinstance(value, list):
        return [_plain(v) for v in value if not (isinstance(v, str) and ENGINE_NOTE in v)]
    return value


def _bytes(value: Any) -> str:
    if isinstance(value, str):
        value = json.loads(value)
    return json.dumps(_plain(value), sort_keys=True)  # floats by repr: the same bits or not the same text


def _verbs(f: dict[str, str], tmp: Path) -> dict[str, Callable[[Any], Any]]:
    """Each verb that evaluates, as a function of the engine, returning its output."""
    runs = [f["bm25"], f["dense"]]
    rag = {"pool": f["pool"]}
    utility = {"utilities": f["utilities"]}
    base = ctxeval.snapshot(f["qrels"], f["bm25"], ["nDCG@10", "RR", "AP"], rag=rag)
    return {
        "evaluate": lambda e: ctxeval.evaluate(
            f["qrels"], runs, MEASURES, rag=rag, utility=utility, ci=True, engine=e
        ).to_dict(per_query=True),
        "evaluate-ties-expected": lambda e: ctxeval.evaluate(
            f["qrels"], runs, ["AP", "nDCG@10", "RR"], policies={"ties": "expected"}, engine=e
        ).to_dict(per_query=True),
        "compare": lambda e: ctxeval.compare(
            f["qrels"],
            runs,
            ["nDCG@10", "AP", "RA-nWG@5", "UDCG@5"],
            stats=STATS,
            strata="num_rel",
            sections={"curves_k": "1:6", "distraction_k": 5},
            rag=rag,
            utility=utility,
            engine=e,
        ).to_json(),
        "metric_at_k": lambda e: dict(ctxeval.metric_at_k(f["qrels"], runs, ["nDCG", "P"], "1:8", engine=e)),
        "snapshot": lambda e: ctxeval.snapshot(f["qrels"], f["dense"], ["nDCG@10", "RR"], rag=rag, engine=e).to_json(),
        "gate": lambda e: ctxeval.gate(
            base, f["qrels"], f["dense"], max_drop="nDCG@10=0.02", rag=rag, engine=e
        ).to_json(),
        "power": lambda e: [
            p.to_dict() for p in ctxeval.power(base, f["qrels"], f["dense"], drop=0.05, rag=rag, engine=e)
        ],
        "diagnose": lambda e: ctxeval.diagnose(f["qrels"], f["dense"], f["pool"], k=5, engine=e).to_dict(),
        "calibrate": lambda e: (lambda c: [json.loads(c.to_json()), c.values.tolist(), c.lead.tolist()])(
            ctxeval.calibrate(f["qrels"], f["bm25"], k=8, folds=3, utility=utility, engine=e)
        ),
        "calibrate-measure": lambda e: json.loads(
            ctxeval.calibrate(f["qrels"], f["dense"], objective="nDCG@5", k=6, folds=3, engine=e).to_json()
        ),
        "distraction": lambda e: dict(ctxeval.distraction_table(f["qrels"], runs, 5, utility=utility, engine=e)),
        "fit-udcg": lambda e: (lambda r: [r.fit, r.report])(
            ctxeval.fit_udcg(f["qrels"], runs, f["answers"], 3, folds=3, utility=utility, engine=e)
        ),
    }


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, str], dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("matrix")
    files = _collection(tmp)
    verbs = _verbs(files, tmp)
    local = {name: _bytes(verb("local")) for name, verb in verbs.items()}
    return files, local


VERBS = [
    "evaluate",
    "evaluate-ties-expected",
    "compare",
    "metric_at_k",
    "snapshot",
    "gate",
    "power",
    "diagnose",
    "calibrate",
    "calibrate-measure",
    "distraction",
    "fit-udcg",
]


@pytest.mark.parametrize("verb", VERBS)
def test_the_stream_engine_gives_the_local_engine_s_bytes(
    inputs: tuple[dict[str, str], dict[str, Any]], verb: str, tmp_path: Path
) -> None:
    files, local = inputs
    got = _bytes(_verbs(files, tmp_path)[verb](StreamEngine(chunk_bytes=300)))
    assert got == local[verb]


@pytest.fixture(scope="module")
def spark_engine() -> Any:
    if shutil.which("java") is None:
        pytest.skip("no Java runtime: the Spark engine needs Java 17 (scripts/install-java)")
    pytest.importorskip("pyspark")
    from ctxeval._engines.spark.engine import SparkEngine
    from ctxeval._engines.spark.runtime import spark_session

    spark = spark_session("local[2]")
    yield SparkEngine(spark=spark)
    spark.stop()


@pytest.mark.slow
@pytest.mark.parametrize("verb", [v for v in VERBS if v != "evaluate-ties-expected"])  # refused by Spark
def test_the_spark_engine_gives_the_local_engine_s_bytes(
    inputs: tuple[dict[str, str], dict[str, Any]], spark_engine: Any, verb: str, tmp_path: Path
) -> None:
    files, local = inputs
    got = _bytes(_verbs(files, tmp_path)[verb](spark_engine))
    assert got == local[verb]


def test_the_outputs_hold_what_they_compare(inputs: tuple[dict[str, str], dict[str, Any]]) -> None:
    """The comparison is not vacuous: the inputs hold judged queries a run lacks and queries only a run
    has, and every verb's output holds values of every judged query."""
    files, local = inputs

    def qids(path: str) -> set[str]:
        return {line.split()[0] for line in Path(path).read_text().splitlines()}

    judged, dense = qids(files["qrels"]), qids(files["dense"])
    assert judged - dense and dense - judged
    ev = json.loads(local["evaluate"])
    run = ev["runs"][1]
    assert run["name"] == "dense" and set(run["per_query"]) == judged
    assert run["queries"]["missing_from_run"] == len(judged - dense)
    assert run["queries"]["unjudged_in_run"] == len(dense - judged)
    assert {q["query_id"] for q in json.loads(local["diagnose"])["queries"]} == judged
    assert all(json.loads(out) for out in local.values())
