"""Words after a run line's sixth field: trec_eval ignores them (``ctxeval trec_eval`` reads such a
file as trec_eval does and counts the lines in a note), every other reader refuses them with an error
that names the way to read the file. Checked against a plain split of each line (trec_eval's reading:
its first six fields), through every tier (a small file, a file of several pieces, gzip)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import ctxeval
from ctxeval._cli import cli
from ctxeval._errors import FormatError
from ctxeval._io import columnar, trec
from ctxeval._io.frames import frame_of


def _rows(parsed: trec.Parsed) -> list[tuple[str, str, float]]:
    df = frame_of(parsed.columns, "score")
    return list(zip(df["query_id"].to_list(), df["doc_id"].to_list(), df["score"].to_list()))


def _expected(data: bytes) -> tuple[list[tuple[str, str, float]], int]:
    rows, cut = [], 0
    for line in data.decode().split("\n"):
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            rows.append((fields[0], fields[2], float(fields[4])))
            cut += len(fields) > 6
    return rows, cut


_WORDS = st.lists(st.sampled_from(["junk", "end", "of", "lines.", "#x", "0.5", "\u00e9t\u00e9"]), max_size=4)


@given(
    extra=st.lists(_WORDS, min_size=1, max_size=12),
    seps=st.lists(st.sampled_from([" ", "\t", "  ", " \t"]), min_size=1, max_size=12),
    crlf=st.booleans(),
)
def test_the_words_after_the_tag_are_dropped_and_counted(extra: list[list[str]], seps: list[str], crlf: bool) -> None:
    lines = []
    for i, words in enumerate(extra):
        sep = seps[i % len(seps)]
        fields = [f"q{i % 3}", "Q0", f"d{i}", str(i + 1), f"{1 - i / 100:.2f}", "tag", *words]
        lines.append(sep.join(fields) + ("\r\n" if crlf else "\n"))
    data = "".join(lines).encode()
    cut, n = trec.cut_trailing(data)
    assert n == _expected(data)[1] == sum(1 for words in extra if words)
    assert [line.split() for line in cut.decode().splitlines()] == [line.split()[:6] for line in lines]


@pytest.mark.parametrize(
    "size", ["small", pytest.param("past the light tier", marks=pytest.mark.slow), "gzip"]
)  # fmt: skip
def test_every_tier_reads_what_trec_eval_reads(size: str, tmp_path: Path) -> None:
    n = 3 if size != "past the light tier" else 2 * columnar.SUB_PIECE // 40 + 1000
    lines = [f"q{i // 100}\tQ0\td{i}\t{i}\t  {1000 - i / 1000:.4f}\tSTANDARD" for i in range(n)]
    lines[0] += " more junk at"
    lines[-1] += "\tend of lines."
    data = ("# a comment\n" + "\n".join(lines) + "\n").encode()
    path = tmp_path / ("run.gz" if size == "gzip" else "run")
    path.write_bytes(gzip.compress(data) if size == "gzip" else data)
    parsed = trec.read_trec(path, "run", str(path), trailing="ignore")
    rows, cut = _expected(data)
    assert _rows(parsed) == rows and parsed.trailing == cut == 2
    assert parsed.tag == "STANDARD"
    with pytest.raises(FormatError, match=r":2: expected 6 fields .* found 9; trec_eval ignores words after"):
        trec.read_trec(path, "run", str(path))


def test_evaluate_stays_strict_and_names_the_way_to_read_the_file(tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 0.5 tag more junk\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\n")
    with pytest.raises(ctxeval.FormatError) as err:
        ctxeval.evaluate(qrels, run, ["P@1"])
    assert "`ctxeval trec_eval` reads this file as it does" in str(err.value)
    assert "awk '{print $1,$2,$3,$4,$5,$6}'" in str(err.value)
    res = CliRunner().invoke(cli, ["trec_eval", "-m", "P.1", str(qrels), str(run)])
    assert res.exit_code == 0 and res.stdout == "P_1                   \tall\t1.0000\n"
    assert res.stderr == (
        f"note: {run}: 1 line with words after the run tag (the sixth field); ignored, as trec_eval ignores them\n"
    )
