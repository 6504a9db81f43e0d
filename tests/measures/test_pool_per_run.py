"""--pool RUN=POOL (issue 12, point 4): a comparison can mix first stages, each run against its own pool."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval import ConfigError
from ctxeval._cli import cli
from ctxeval._demo import example_path

Q = str(example_path("qrels.txt"))
RUNS = {name: str(example_path(f"runs/{name}.run")) for name in ("bm25", "bm25-rerank", "rrf", "rrf-rerank")}
MEASURES = ["PROC@5", "%PROC@5"]


def _alone(run: str, pool: str) -> dict[str, float]:
    r = ctxeval.evaluate(Q, RUNS[run], MEASURES, rag={"pool": RUNS[pool]})
    return {m: r.runs[0].mean(m) for m in MEASURES}


def test_each_run_is_measured_against_its_own_pool() -> None:
    res = ctxeval.evaluate(
        Q,
        [RUNS["bm25-rerank"], RUNS["rrf-rerank"]],
        MEASURES,
        rag={"pools": {"bm25-rerank": RUNS["bm25"], "rrf-rerank": RUNS["rrf"]}},
    )
    got = {r.name: {m: r.mean(m) for m in MEASURES} for r in res.runs}
    assert got["bm25-rerank"] == _alone("bm25-rerank", "bm25")
    assert got["rrf-rerank"] == _alone("rrf-rerank", "rrf")
    # the pool matters (the test can fail): against rrf's pool bm25-rerank holds docs outside it
    with pytest.raises(ctxeval.PoolError, match="not in the retrieval pool 'rrf'"):
        _alone("bm25-rerank", "rrf")
    assert res.settings["pool"]["per_run"] == {"bm25-rerank": RUNS["bm25"], "rrf-rerank": RUNS["rrf"]}


def test_a_shared_pool_and_a_run_of_its_own_mix() -> None:
    res = ctxeval.evaluate(
        Q,
        [RUNS["bm25-rerank"], RUNS["rrf-rerank"]],
        MEASURES,
        rag={"pool": RUNS["bm25"], "pools": {"rrf-rerank": RUNS["rrf"]}},
    )
    assert {m: res.runs[0].mean(m) for m in MEASURES} == _alone("bm25-rerank", "bm25")
    assert {m: res.runs[1].mean(m) for m in MEASURES} == _alone("rrf-rerank", "rrf")


def test_cli_compare_with_a_pool_per_run() -> None:
    args = ["compare", Q, RUNS["bm25-rerank"], RUNS["rrf-rerank"], "-m", "PROC@5", "--format", "json"]
    res = CliRunner().invoke(
        cli, [*args, "--pool", f"bm25-rerank={RUNS['bm25']}", "--pool", f"rrf-rerank={RUNS['rrf']}"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    means = {r["name"]: r["aggregate"]["PROC@5"] for r in doc["runs"]}
    assert means["bm25-rerank"] == _alone("bm25-rerank", "bm25")["PROC@5"]
    assert means["rrf-rerank"] == _alone("rrf-rerank", "rrf")["PROC@5"]
    assert doc["settings"]["pool"]["per_run"] == {"bm25-rerank": RUNS["bm25"], "rrf-rerank": RUNS["rrf"]}


@pytest.mark.parametrize(
    ("pools", "message"),
    [
        ({"nope": RUNS["bm25"]}, "pool nope=...: no run is named 'nope' (the runs: 'bm25-rerank', 'rrf-rerank')"),
        ({"": RUNS["bm25"]}, "pools must map run names to pools"),
    ],
)
def test_a_pool_naming_no_run_is_an_error(pools: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ctxeval.evaluate(Q, [RUNS["bm25-rerank"], RUNS["rrf-rerank"]], MEASURES, rag={"pools": pools})


def test_cli_two_unnamed_pools_are_one_line() -> None:
    res = CliRunner().invoke(
        cli, ["evaluate", Q, RUNS["bm25-rerank"], "-m", "PROC@5", "--pool", RUNS["bm25"], "--pool", RUNS["rrf"]]
    )
    assert res.exit_code == 2
    assert (
        res.stderr.startswith("ctxeval: error: --pool given twice without a run name") and res.stderr.count("\n") == 1
    )
