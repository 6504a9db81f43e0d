"""Streaming evaluation against the in-memory path: on generated runs (ties, unjudged and missing
queries, graded labels, duplicates kept first, gzip), read in pieces as small as one line, every
per-query value, the aggregates and the query accounting are identical; a run that is not grouped
by query is an error naming the line where grouping breaks, and --sort-first sorts it out of core."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxeval
from ctxeval import FormatError
from ctxeval._aliases import evaluate_stream

MEASURES = ["AP", "nDCG@10", "P@5", "RR", "ERR(gmax=3)@5", "recall@10", "RA-nWG@5", "ContextPrecision", "num_ret"]


@st.composite
def _collection(draw: st.DrawFn) -> tuple[str, str]:
    nq = draw(st.integers(1, 8))
    qrels, run = [], []
    for q in range(nq):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 9)))]
        judged = draw(st.lists(st.sampled_from(docs), unique=True, max_size=len(docs)))
        if q == 0 or draw(st.integers(0, 4)):  # most queries judged, the first always
            judged = judged or docs[:1]
            qrels += [f"q{q} 0 {d} {draw(st.integers(1, 5))}" for d in judged]
        if draw(st.integers(0, 5)):  # some judged queries are missing from the run
            for d in docs:
                run.append(f"q{q} Q0 {d} 0 {draw(st.sampled_from([0.5, 1.0, 2.0, 3.25]))} sys")
    if not run:
        run.append("qx Q0 d0 0 1.0 sys")  # an unjudged query
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def _same(a: ctxeval.Result, b: ctxeval.Result) -> None:
    ra, rb = a.runs[0], b.runs[0]
    assert ra.name == rb.name and ra.qids == rb.qids
    assert ra.accounting.to_dict() == rb.accounting.to_dict()
    for m in a.measures:
        va, vb = ra.values[m], rb.values[m]
        assert [x if not math.isnan(x) else "nan" for x in va.tolist()] == [
            x if not math.isnan(x) else "nan" for x in vb.tolist()
        ], str(m)
        assert ra.summary[m] == rb.summary[m]


@settings(max_examples=80, deadline=None)
@given(_collection(), st.sampled_from([1, 40, 200, 1 << 20]), st.sampled_from(["zero", "ignore"]))
def test_streaming_equals_the_in_memory_path(
    tmp_path_factory: pytest.TempPathFactory, coll: tuple[str, str], piece: int, missing: str
) -> None:
    tmp = tmp_path_factory.mktemp("s")
    (tmp / "qrels").write_text(coll[0])
    (tmp / "run.txt").write_text(coll[1])
    pol = {"missing": missing, "overlap": "any"}
    whole = ctxeval.evaluate(str(tmp / "qrels"), str(tmp / "run.txt"), MEASURES, policies=pol)
    streamed = evaluate_stream(str(tmp / "qrels"), tmp / "run.txt", MEASURES, policies=pol, chunk_bytes=piece)
    _same(whole, streamed)
    with gzip.open(tmp / "run.txt.gz", "wt") as fh:
        fh.write(coll[1])
    _same(
        whole,
        evaluate_stream(str(tmp / "qrels"), tmp / "run.txt.gz", MEASURES, policies=pol, chunk_bytes=piece, name="sys"),
    )


def test_an_ungrouped_run_names_the_line_and_sort_first_fixes_it(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 s\nq2 Q0 b 1 2.0 s\nq1 Q0 c 2 1.0 s\n")
    for piece in (1, 1 << 20):
        with pytest.raises(FormatError) as err:
            evaluate_stream(str(tmp_path / "qrels"), tmp_path / "run", ["AP"], chunk_bytes=piece)
        assert str(err.value).endswith(
            "run:3: query 'q1' comes back after other queries (its first line is 1): the run is not grouped by "
            "query, which streaming needs; --sort-first (sort_first=True) sorts it out of core"
        )
    want = ctxeval.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), ["AP", "num_ret"])
    got = evaluate_stream(str(tmp_path / "qrels"), tmp_path / "run", ["AP", "num_ret"], sort_first=True)
    _same(want, got)  # it fits in memory: read whole
    assert got.settings["streamed"]["read_whole"] is True
    assert any("--sort-first read the run whole" in n for n in got.notes)


def test_sort_first_out_of_core_when_the_run_does_not_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxeval._engines.stream as stream

    monkeypatch.setattr(stream, "available_memory", lambda: 10)  # 10 bytes free: sorted out of core
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 s\nq2 Q0 b 1 2.0 s\nq1 Q0 c 2 1.0 s\n")
    want = ctxeval.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run"), ["AP", "num_ret"])
    got = evaluate_stream(str(tmp_path / "qrels"), tmp_path / "run", ["AP", "num_ret"], sort_first=True)
    _same(want, got)
    assert "read_whole" not in got.settings["streamed"]


def test_the_default_chunk_is_an_eighth_of_the_text_within_bounds(tmp_path: Path) -> None:
    from ctxeval._io.stream import CHUNK_MAX, CHUNK_MIN, auto_chunk_bytes, text_size

    small = tmp_path / "small.run"
    small.write_bytes(b"q1 Q0 a 1 2.0 s\n" * 1000)
    assert auto_chunk_bytes(small) == CHUNK_MIN
    big = tmp_path / "big.run"
    with big.open("wb") as fh:  # sparse: 1 GiB of text without writing it
        fh.truncate(1 << 30)
    assert auto_chunk_bytes(big) == CHUNK_MAX
    mid = tmp_path / "mid.run"
    with mid.open("wb") as fh:
        fh.truncate(200 << 20)
    assert auto_chunk_bytes(mid) == 25 << 20
    data = b"q1 Q0 a 1 2.0 s\n" * 5000
    (tmp_path / "z.run.gz").write_bytes(gzip.compress(data))
    assert text_size(tmp_path / "z.run.gz") == len(data)  # the uncompressed size from gzip's trailer


def test_a_truncated_gzip_is_one_line_not_aborted(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ctxeval._cli import cli

    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    data = b"".join(b"q%d Q0 d%d 1 %d.5 s\n" % (i // 50, i, i) for i in range(50_000))
    (tmp_path / "run.gz").write_bytes(gzip.compress(data)[:-4000])
    res = CliRunner().invoke(cli, ["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run.gz"), "--stream"])
    assert res.exit_code == 2
    assert "Aborted" not in res.output
    assert "run.gz: the gzip data is cut short or damaged" in res.output
    assert "the file is incomplete" in res.output


def test_columns_apply_to_a_streamed_parquet_run(tmp_path: Path) -> None:
    import polars as pl

    rows = [(f"q{q}", f"d{d}", float(d % 4), float(-d)) for q in range(4) for d in range(6)]
    pl.DataFrame(rows, schema=["topic", "passage", "other", "sim"], orient="row").write_parquet(tmp_path / "r.parquet")
    (tmp_path / "qrels").write_text("".join(f"q{q} 0 d{q + 1} 1\n" for q in range(4)))
    cols = {"qid": "topic", "doc": "passage", "score": "sim"}
    (tmp_path / "qrels.csv").write_text("topic,passage,relevance\n" + "".join(f"q{q},d{q + 1},1\n" for q in range(4)))
    want = ctxeval.evaluate(
        str(tmp_path / "qrels.csv"), str(tmp_path / "r.parquet"), ["RR"], policies={"columns": cols}
    )
    got = evaluate_stream(str(tmp_path / "qrels.csv"), tmp_path / "r.parquet", ["RR"], policies={"columns": cols})
    _same(want, got)
    # ranked by sim = -d, the relevant d{q+1} of query q is at rank q + 2: RR = 1 / (q + 2)
    assert got.runs[0].values[got.measures[0]].tolist() == pytest.approx([1 / 2, 1 / 3, 1 / 4, 1 / 5])
    with pytest.raises(ctxeval.ConfigError, match=r"r\.parquet: no column 'nope'"):
        evaluate_stream(
            str(tmp_path / "qrels.csv"),
            tmp_path / "r.parquet",
            ["RR"],
            policies={"columns": {"qid": "topic", "doc": "passage", "score": "nope"}},
        )


def test_missing_error_and_zero_overlap_as_in_memory(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 s\n")
    with pytest.raises(ctxeval.QueryMismatchError, match=r"1 judged query is missing from the run \(q2\)"):
        evaluate_stream(str(tmp_path / "qrels"), tmp_path / "run", ["AP"], policies={"missing": "error"})
    (tmp_path / "other").write_text("x1 Q0 a 1 2.0 s\n")
    with pytest.raises(ctxeval.QueryMismatchError) as a:
        evaluate_stream(str(tmp_path / "qrels"), tmp_path / "other", ["AP"])
    with pytest.raises(ctxeval.QueryMismatchError) as b:
        ctxeval.evaluate(str(tmp_path / "qrels"), str(tmp_path / "other"), ["AP"])
    assert str(a.value) == str(b.value)


def test_parquet_streams_by_row_slices(tmp_path: Path) -> None:
    import polars as pl

    rows = [(f"q{q}", f"d{d}", float(d % 3)) for q in range(5) for d in range(7)]
    pl.DataFrame(rows, schema=["query_id", "doc_id", "score"], orient="row").write_parquet(
        tmp_path / "run.parquet", row_group_size=4
    )
    (tmp_path / "qrels").write_text("".join(f"q{q} 0 d{q} {1 + q % 3}\n" for q in range(6)))
    want = ctxeval.evaluate(str(tmp_path / "qrels"), str(tmp_path / "run.parquet"), MEASURES[:6])
    _same(want, evaluate_stream(str(tmp_path / "qrels"), tmp_path / "run.parquet", MEASURES[:6], chunk_rows=5))


def test_a_pool_is_held_whole_and_said_so(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("q1 0 a 5\nq1 0 b 4\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 s\n")
    (tmp_path / "pool").write_text("q1 Q0 a 1 2.0 p\nq1 Q0 b 2 1.0 p\n")
    got = evaluate_stream(str(tmp_path / "qrels"), tmp_path / "run", ["PROC@2"], rag={"pool": str(tmp_path / "pool")})
    want = ctxeval.evaluate(
        str(tmp_path / "qrels"), str(tmp_path / "run"), ["PROC@2"], rag={"pool": str(tmp_path / "pool")}
    )
    _same(want, got)
    assert any("the retrieval pool is held in memory (2 rows)" in n for n in got.notes)


# VmHWM: this process image's peak (ru_maxrss would start from the forking parent's resident set)
_PEAK = r"""
import sys
from ctxeval._cli import main
code = main(["evaluate", sys.argv[1], sys.argv[2], "-m", "nDCG@10 AP RR P@10 R@100", "--format", "json",
             "--output", sys.argv[3], *sys.argv[4:]])
print([l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM:")][0])
sys.exit(code)
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak from /proc")
def test_the_default_chunk_never_costs_more_memory_than_reading_whole(tmp_path: Path) -> None:
    """The peak resident memory of each path, each in a fresh process (the kernel's high-water mark,
    not a timing), on the benchmark's S data (1,000 queries x 100, 4 MB: one default chunk of the
    old 4 MiB floor held the whole text beside its columns, 3 MB above reading whole): streaming
    with the default chunk must stay at or below the in-memory path's."""
    import json
    import subprocess
    import sys

    bench = Path(__file__).resolve().parents[1] / "bench" / "generate.py"
    subprocess.run(
        [sys.executable, str(bench), "--scale", "S", "--out", str(tmp_path)], check=True, capture_output=True
    )
    qrels, run = tmp_path / "S" / "qrels.txt", tmp_path / "S" / "run.txt"
    peaks, outs = [], []
    for mode in ([], ["--stream"]):
        out = tmp_path / f"out{len(mode)}.json"
        cmd = [sys.executable, "-c", _PEAK, str(qrels), str(run), str(out), *mode]
        done = subprocess.run(cmd, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        peaks.append(int(done.stdout.split()[-1]))
        outs.append(json.loads(out.read_text())["runs"][0]["aggregate"])
    whole, streamed = peaks
    assert streamed <= whole, f"streaming peaked at {streamed} KiB, reading whole at {whole} KiB"
    assert outs[0] == outs[1]
