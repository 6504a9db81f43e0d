"""Judge once, re-chunk freely (ctxeval._judge.reuse): a corpus judged through one chunking is judged again
through another without asking the judge about any text already judged. A scripted server on 127.0.0.1
counts and records the requests; the lexical judge runs the same flow offline. The truth is brute force
over sets of characters: which text of each pooled chunk no earlier label covers, and the highest grade
of the labels a chunk shares a character with."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from ctxeval._cli import cli
from judge_server import Reply, Server, chat, fenced

WORDS = [
    "amber",
    "basil",
    "cedar",
    "delta",
    "ember",
    "fjord",
    "grove",
    "heron",
    "iris",
    "juniper",
    "kelp",
    "lotus",
    "maple",
    "nectar",
    "opal",
    "pine",
]
DOCS = {f"d{i}": " ".join(f"{WORDS[(i * 5 + j % 5) % len(WORDS)]}-{j}" for j in range(60)) + "." for i in range(3)}
QUESTIONS = {"q1": "amber cedar ember", "q2": "grove iris kelp"}


def _files(tmp: Path, name: str, cuts: int, overlap: int = 0) -> tuple[Path, Path]:
    """A chunking of every document into ``cuts`` equal windows (each reaching ``overlap`` characters into
    the next), and a run ranking all of its chunks for both questions (so the pool holds every chunk)."""
    rows, run = [], []
    for d, text in DOCS.items():
        step = len(text) // cuts
        for i in range(cuts):
            s, e = i * step, len(text) if i == cuts - 1 else min(len(text), (i + 1) * step + overlap)
            rows.append({"chunk_id": f"{name}-{d}-{i}", "doc_id": d, "start": s, "end": e})
    for q in QUESTIONS:
        run += [f"{q} Q0 {r['chunk_id']} {n} {1000 - n} r\n" for n, r in enumerate(rows, start=1)]
    chunks, runfile = tmp / f"{name}.chunks.jsonl", tmp / f"{name}.run"
    chunks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    runfile.write_text("".join(run))
    return chunks, runfile


def _common(tmp: Path) -> tuple[Path, Path]:
    docs = tmp / "docs"
    docs.mkdir(exist_ok=True)
    for d, t in DOCS.items():
        (docs / f"{d}.txt").write_text(t, encoding="utf-8", newline="")
    queries = tmp / "q.tsv"
    queries.write_text("".join(f"{q}\t{t}\n" for q, t in QUESTIONS.items()))
    return docs, queries


def _judge(tmp: Path, run: Path, chunks: Path, url: str | None, *extra: str) -> Any:
    docs, queries = _common(tmp)
    how = ["--judge-url", url, "--model", "m"] if url else ["--judge", "lexical"]
    args = [
        "judge", "grade", str(run), "--queries", str(queries), "--chunks", str(chunks), "--documents", str(docs),
        "--depth", "100", "--cache", str(tmp / "cache.sqlite"), "-q", *how, *extra,
    ]  # fmt: skip
    return CliRunner(env={"CTXEVAL_JUDGE_API_KEY": "k"}).invoke(cli, args)


def _grade(body: dict[str, Any], n: int) -> Reply:
    """A grade from the passage: 5 when it holds a question word of its question, else 2."""
    passage, question = fenced(body, "passage"), fenced(body, "question")
    return chat(json.dumps({"grade": 5 if set(question.split()) & set(re.findall(r"\w+", passage)) else 2}))


def _spans(path: Path) -> list[tuple[str, str, int, int, int]]:
    out = []
    for line in path.read_text().splitlines():
        q, _, d, s, e, g = line.split()
        out.append((q, d, int(s), int(e), int(g)))
    return out


def _chunk_table(path: Path) -> dict[str, tuple[str, int, int]]:
    return {r["chunk_id"]: (r["doc_id"], r["start"], r["end"]) for r in map(json.loads, path.read_text().splitlines())}


def test_a_rechunked_judged_corpus_asks_the_judge_nothing_about_judged_text(tmp_path: Path) -> None:
    a_chunks, a_run = _files(tmp_path, "a", 4)
    b_chunks, b_run = _files(tmp_path, "b", 6, overlap=7)  # other boundaries, overlapping windows
    with Server(_grade) as srv:
        first = _judge(
            tmp_path,
            a_run,
            a_chunks,
            srv.url,
            "--spans-out",
            str(tmp_path / "a.spans"),
            "-o",
            str(tmp_path / "a.qrels"),
        )
        assert first.exit_code == 0, first.output
        asked_a = len(srv.requests)
        assert asked_a == 2 * 12  # every chunk of a for both questions: nothing judged before
        second = _judge(
            tmp_path, b_run, b_chunks, srv.url, "--spans", str(tmp_path / "a.spans"), "--spans-out",
            str(tmp_path / "b.spans"), "-o", str(tmp_path / "b.qrels"), "--report", str(tmp_path / "b.json"),
        )  # fmt: skip
        assert second.exit_code == 0, second.output
        # a judged every character of the corpus for both questions: b's chunks are all judged text
        assert len(srv.requests) == asked_a
    report = json.loads((tmp_path / "b.json").read_text())
    assert report["reuse"] == {
        "pool": 36, "judged_before": 36, "straddling": 0, "new": 0, "wordless": 0, "asked": 0, "saved": 36,
    }  # fmt: skip
    assert "36 calls saved" in second.stderr
    # every b chunk graded by the highest grade of the a labels it shares a character with (brute force)
    labels = _spans(tmp_path / "a.spans")
    table = _chunk_table(b_chunks)
    want = {}
    for q in QUESTIONS:
        for c, (d, s, e) in table.items():
            shared = [g for lq, ld, ls, le, g in labels if lq == q and ld == d and ls < e and s < le]
            want[(q, c)] = max(shared)
    got = {(ln.split()[0], ln.split()[2]): int(ln.split()[3]) for ln in (tmp_path / "b.qrels").read_text().splitlines()}
    assert got == want and set(got.values()) == {2, 5}
    assert _spans(tmp_path / "b.spans") == labels  # nothing new learnt, nothing lost


def test_only_text_no_judgment_covers_is_asked(tmp_path: Path) -> None:
    a_chunks, a_run = _files(tmp_path, "a", 4)
    b_chunks, b_run = _files(tmp_path, "b", 5, overlap=3)
    # judge only a's first two chunks of each document (a run holding them alone)
    keep = {c for c, (_, s, _) in _chunk_table(a_chunks).items() if c.endswith(("-0", "-1"))}
    a_run.write_text("".join(ln for ln in a_run.read_text().splitlines(keepends=True) if ln.split()[2] in keep))
    with Server(_grade) as srv:
        assert (
            _judge(tmp_path, a_run, a_chunks, srv.url, "--spans-out", str(tmp_path / "a.spans"), "-o", "-").exit_code
            == 0
        )
        before = len(srv.requests)
        res = _judge(tmp_path, b_run, b_chunks, srv.url, "--spans", str(tmp_path / "a.spans"),
                     "--spans-out", str(tmp_path / "b.spans"), "-o", str(tmp_path / "b.qrels"))  # fmt: skip
        assert res.exit_code == 0, res.output
        asks = [(fenced(b, "question"), fenced(b, "passage")) for b in srv.requests[before:]]
    labels = _spans(tmp_path / "a.spans")
    table = _chunk_table(b_chunks)
    # brute force: per question, walk b's pool in rank order; a chunk is asked about its characters that
    # no a label and no earlier ask covers (stretches with a word only), joined by " … "
    expected = []
    for q, text in QUESTIONS.items():
        covered = {(d, i) for lq, d, s, e, _ in labels if lq == q for i in range(s, e)}
        for _c, (d, s, e) in table.items():
            free = [i for i in range(s, e) if (d, i) not in covered]
            runs, cur = [], []
            for i in free:
                if cur and i != cur[-1] + 1:
                    runs.append(cur)
                    cur = []
                cur.append(i)
            runs += [cur] if cur else []
            covered |= {(d, i) for i in free}
            parts = [DOCS[d][r[0] : r[-1] + 1] for r in runs if re.search(r"\w", DOCS[d][r[0] : r[-1] + 1])]
            if parts:
                expected.append((text, " … ".join(parts)))
    assert sorted(asks) == sorted(expected) and asks  # no passage holds a character judged before
    judged_chars = {(q, d, i) for q, d, s, e, _ in labels for i in range(s, e)}
    new = [x for x in _spans(tmp_path / "b.spans") if x not in labels]
    assert new and not any((q, d, i) in judged_chars for q, d, s, e, _ in new for i in range(s, e))


def test_the_lexical_judge_runs_the_same_flow_offline(tmp_path: Path) -> None:
    a_chunks, a_run = _files(tmp_path, "a", 3)
    b_chunks, b_run = _files(tmp_path, "b", 7)
    assert _judge(tmp_path, a_run, a_chunks, None, "--spans-out", str(tmp_path / "a.spans"), "-o", "-").exit_code == 0
    res = _judge(tmp_path, b_run, b_chunks, None, "--spans", str(tmp_path / "a.spans"), "-o", str(tmp_path / "b.qrels"))
    assert res.exit_code == 0, res.output
    assert "0 asked, 42 calls saved" in res.stderr
    assert len((tmp_path / "b.qrels").read_text().splitlines()) == 42


def test_spans_without_chunks_is_an_error(tmp_path: Path) -> None:
    _docs, queries = _common(tmp_path)
    res = CliRunner().invoke(
        cli, ["judge", "grade", "x.run", "--queries", str(queries), "--spans", "a.spans", "--judge", "lexical"]
    )
    assert res.exit_code == 2 and "--spans and --spans-out place the pooled chunks by their chunk table" in res.stderr
