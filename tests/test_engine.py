"""One ``engine=`` on the verbs that evaluate: ``evaluate`` and ``metric_at_k`` give the same values,
query accounting and run names on the local and the stream engine (Spark's side is in test_spark.py;
every verb on every engine in test_engine_matrix.py); the stream engine reads run files, one at a
time, and refuses frames and dicts in one line; bad engine settings are one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxeval

QRELS = "q1 0 a 2\nq1 0 c 1\nq2 0 b 1\nq3 0 z 1\n"
RUN = "q1 Q0 a 1 3.0 bm25\nq1 Q0 b 2 2.0 bm25\nq1 Q0 c 3 1.0 bm25\nq2 Q0 a 1 2.0 bm25\nq2 Q0 b 2 1.0 bm25\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "system.run").write_text(RUN)
    return str(tmp_path / "qrels"), str(tmp_path / "system.run")


def test_evaluate_on_the_stream_engine_equals_local(files: tuple[str, str]) -> None:
    qrels, run = files
    ms = ["AP", "nDCG@10", "P@2", "RR"]
    local = ctxeval.evaluate(qrels, run, ms)
    streamed = ctxeval.evaluate(qrels, run, ms, engine="stream")
    small = ctxeval.evaluate(qrels, [run], ms, engine=ctxeval.Engine("stream", chunk_mb=1))
    for res in (streamed, small):
        assert res.runs[0].name == local.runs[0].name == "bm25"  # one naming rule: the tag
        assert res.runs[0].qids == local.runs[0].qids == ["q1", "q2", "q3"]
        for m in local.measures:
            assert res.runs[0].values[m].tolist() == local.runs[0].values[m].tolist()
    # AP of q1: relevant a, c at ranks 1 and 3: (1 + 2/3) / 2; q2: b at rank 2: 1/2; q3 missing: 0
    ap = ctxeval.parse_measure("AP")
    assert streamed.runs[0].values[ap].tolist() == pytest.approx([5 / 6, 1 / 2, 0.0])
    named = ctxeval.evaluate(qrels, [f"mine={run}"], ["AP"], engine="stream")
    assert named.runs[0].name == "mine"


def test_metric_at_k_on_the_stream_engine(files: tuple[str, str]) -> None:
    qrels, run = files
    local = ctxeval.metric_at_k(qrels, run, ["P"], "1:3")
    streamed = ctxeval.metric_at_k(qrels, run, ["P"], "1:3", engine="stream")
    assert streamed["series"] == local["series"]
    # P@1..3 over q1 (a, b, c: rel, non, rel), q2 (a, b: non, rel), q3 (missing, 0)
    assert local["series"][0]["values"] == pytest.approx([1 / 3, (1 / 2 + 1 / 2) / 3, (2 / 3 + 1 / 3) / 3])


def test_stream_takes_run_files_one_at_a_time(files: tuple[str, str]) -> None:
    qrels, run = files
    both = ctxeval.evaluate(qrels, [run, run], ["AP"], engine="stream")
    assert both.to_dict() == ctxeval.evaluate(qrels, [run, run], ["AP"]).to_dict() | {"settings": both.settings}
    assert [r.name for r in both.runs] == ["bm25", "bm25#2"]
    with pytest.raises(ctxeval.ConfigError, match="the stream engine evaluates one run file"):
        ctxeval.evaluate(qrels, {"q1": {"a": 1.0}}, ["AP"], engine="stream")


def test_compare_on_the_stream_engine_equals_local(files: tuple[str, str]) -> None:
    """(compare refused the stream engine before engines became providers under the session)"""
    qrels, run = files
    kw = {"stats": {"permutations": 200, "resamples": 200}, "sections": {"curves_k": 0}}
    local = ctxeval.compare(qrels, [run, run], ["AP"], **kw).to_dict()
    streamed = ctxeval.compare(qrels, [run, run], ["AP"], engine="stream", **kw).to_dict()
    streamed["settings"].pop("streamed")
    assert streamed == local


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"name": "local", "master": "local[2]"}, "a master URL is for the spark engine"),
        ({"name": "spark", "chunk_mb": 8}, "chunk_mb and sort_first are for the stream engine"),
        ({"name": "stream", "chunk_mb": 0}, "chunk_mb must be a whole number of MiB >= 1"),
        ({"name": "stream", "chunks": 8}, "unknown engine settings"),
        ("gpu", "engine must be one of 'local', 'stream', 'spark'"),
    ],
)
def test_bad_engine_settings(files: tuple[str, str], value: object, message: str) -> None:
    qrels, run = files
    with pytest.raises(ctxeval.ConfigError, match=message):
        ctxeval.evaluate(qrels, run, ["AP"], engine=value)  # type: ignore[arg-type]
