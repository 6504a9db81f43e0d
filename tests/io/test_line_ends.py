"""Lines end at ``\\n`` in every reader of line files and JSON lines (a ``\\r`` before it dropped):
a raw U+2028 (valid JSON; an MS MARCO passage holds one), U+2029, U+0085, a form feed or a lone
``\\r`` inside a JSON string or a field stays in its line, as the TREC reading rule says. Python's
``str.splitlines`` cuts at all of them, which broke the passages reader of ``judge`` and ``pool``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli
from ctxeval._io.side import read_passages, read_query_texts, read_utilities
from ctxeval._io.tables import split_lines
from real_data import real
from shared_data import ROOT

#: characters str.splitlines cuts at that a JSON string may hold raw (control characters it escapes)
RAW = ["\u2028", "\u2029", "\x85"]


@pytest.mark.parametrize("ch", RAW, ids=[f"U+{ord(c):04X}" for c in RAW])
def test_json_lines_keep_a_raw_line_separator_in_their_string(tmp_path: Path, ch: str) -> None:
    text = f"before{ch}after"
    p = tmp_path / "passages.jsonl"
    p.write_text('{"id": "d1", "text": "' + text + '"}\n{"id": "d2", "text": "x"}\n', encoding="utf-8")
    assert ch in p.read_text(encoding="utf-8")  # raw, not escaped
    got, _ = read_passages(str(p))
    assert dict(got) == {"d1": text, "d2": "x"}
    q = tmp_path / "queries.jsonl"
    q.write_text('{"qid": "q1", "text": "' + text + '"}\n', encoding="utf-8")
    assert read_query_texts(str(q))[0] == {"q1": text}
    qrels = tmp_path / "qrels.jsonl"
    qrels.write_text(
        '{"qid": "q' + ch + '1", "docid": "d1", "relevance": 2}\n{"qid": "q2", "docid": "d1", "relevance": 1}\n'
    )
    assert ctxeval.Qrels.from_file(qrels).query_ids == sorted([f"q{ch}1", "q2"])


def test_tab_separated_texts_and_utilities_count_lines_at_newlines_only(tmp_path: Path) -> None:
    p = tmp_path / "queries.tsv"
    p.write_text("q1\tone\u2028two\nq2\tthree\n", encoding="utf-8")
    assert read_query_texts(str(p))[0] == {"q1": "one\u2028two", "q2": "three"}
    u = tmp_path / "u.txt"
    u.write_text("q1 d\u2028x 0.5\nq1 d2 2.0\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"u\.txt:2: utility '2\.0' is outside"):  # line 2, not 3
        read_utilities(str(u))


def test_split_lines_is_the_newline_rule() -> None:
    assert split_lines("a\u2028b\r\nc\rd\n\ne") == ["a\u2028b", "c\rd", "", "e"]
    assert split_lines("") == [] and split_lines("\n") == [""]


def test_pool_and_judge_read_real_ms_marco_passages_with_u2028(tmp_path: Path) -> None:
    """DL19's passages 3609843 and 5600214 hold a raw U+2028; BM25 retrieves both for query 1110199."""
    texts = real("dl19-text", "passages.jsonl")
    run = real("dl19", "runs", "bm25.top100.txt")
    topics = real("dl19", "topics.dl19-passage.txt")
    one = tmp_path / "run.txt"
    one.write_text("".join(ln for ln in run.read_text().splitlines(True) if ln.startswith("1110199 ")))
    res = CliRunner().invoke(
        cli, ["pool", str(one), "--depth", "100", "--queries", str(topics), "--passages", str(texts)]
    )
    assert res.exit_code == 0, res.output
    rows = {r["doc_id"]: r["text"] for r in map(json.loads, res.stdout.split("\n")[:-1])}
    assert len(rows) == 100
    truth = {}
    with open(texts, encoding="utf-8") as f:
        for line in f:  # file iteration ends lines at \n only
            rec = json.loads(line)
            if rec["id"] in ("3609843", "5600214"):
                truth[rec["id"]] = rec["text"]
    assert all("\u2028" in t for t in truth.values()) and len(truth) == 2
    assert {d: rows[d] for d in truth} == truth
    out = tmp_path / "judged.qrels"
    res = CliRunner().invoke(
        cli,
        ["judge", "grade", str(one), "--queries", str(topics), "--passages", str(texts), "--depth", "100",
         "--judge", "lexical", "--cache", str(tmp_path / "c.sqlite"), "-q", "-o", str(out)],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert {ln.split()[2] for ln in out.read_text().splitlines()} >= set(truth)


def test_no_reader_cuts_lines_with_splitlines() -> None:
    """Every reader of line files and JSON lines cuts at \\n (split_lines or file iteration); str.splitlines
    stays only where it reads ctxeval's own messages or bytes (bytes.splitlines cuts at \\r and \\n only)."""
    allowed = {
        "_io/stream.py": 1,  # an exception's message
        "_io/samples/sets.py": 1,  # an exception's message
        "_engines/spark/engine.py": 1,  # an exception's message
        "_judge/probe.py": 1,  # a doctest
        "_trec_eval.py": 2,  # bytes
        "_io/trec.py": 1,  # bytes decoded with errors="replace", only to name a duplicate's lines
        "_judge/cache.py": 1,  # its own spill file, written with ensure_ascii (no raw separators)
    }
    found = {}
    src = ROOT / "src" / "ctxeval"
    for p in src.rglob("*.py"):
        n = len(re.findall(r"\.splitlines\(", p.read_text(encoding="utf-8")))
        if n:
            found[str(p.relative_to(src))] = n
    assert found == allowed
