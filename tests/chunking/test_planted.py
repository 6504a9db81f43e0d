"""The planted-truth scenario of issue 30: a generated corpus with a fact at a known span in each of 40
documents (ctxeval._planted_chunks); chunker A (tokens:40) cuts every fact in two, B (tokens:64) keeps
each whole, C (tokens:2000) buries each in a chunk of 2,000 tokens. The truth comes from how the text is
made, checked here by plain Python over the saved chunk tables and runs: at a budget of 64 tokens B's
context holds the whole fact on every question, A's first chunk only part of it, C's context nothing
(its first chunk does not fit); at K = 5 every chunker holds the fact, C by reading ten times B's tokens.
``ctxeval chunking`` must pick B at 64 tokens with a significant difference, and say why K misleads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli
from ctxeval._planted_chunks import DOC_TOKENS, FACT_TOKENS, QUESTIONS, write_chunking_corpus

WORD = re.compile(r"\w+|[^\w\s]")


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, list[dict]]:
    folder = tmp_path_factory.mktemp("chunking")
    write_chunking_corpus(folder / "corpus")
    res = CliRunner().invoke(
        cli,
        [
            "chunking", str(folder / "corpus" / "docs"), str(folder / "corpus" / "spans.jsonl"),
            "--questions", str(folder / "corpus" / "questions.jsonl"),
            "--chunker", "A=tokens:40", "--chunker", "B=tokens:64", "--chunker", "C=tokens:2000",
            "--budgets", "64,128,2048", "--budget", "64", "--permutations", "2000", "--resamples", "500",
            "--save", str(folder / "out"), "--format", "json",
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr or res.output
    spans = [json.loads(line) for line in (folder / "corpus" / "spans.jsonl").read_text().splitlines()]
    return folder, json.loads(res.stdout), spans


def _table(folder: Path, name: str) -> dict[str, tuple[str, int, int]]:
    rows = [json.loads(x) for x in (folder / "out" / f"{name}.chunks.jsonl").read_text().splitlines()]
    return {r["chunk_id"]: (r["doc_id"], r["start"], r["end"]) for r in rows}


def _ranked(folder: Path, name: str) -> dict[str, list[str]]:
    out: dict[str, list[tuple[float, str]]] = {}
    for line in (folder / "out" / f"{name}.run").read_text().splitlines():
        q, _, doc, _, score, _ = line.split()
        out.setdefault(q, []).append((-float(score), doc))
    return {q: [d for _, d in sorted(v)] for q, v in out.items()}


def test_the_planted_chunkings_are_what_the_scenario_says(ran: tuple[Path, dict, list[dict]]) -> None:
    folder, _, spans = ran
    docs = {p.stem: p.read_text(encoding="utf-8") for p in (folder / "corpus" / "docs").iterdir()}
    assert len(spans) == QUESTIONS and all(len(WORD.findall(t)) == DOC_TOKENS for t in docs.values())
    for name, whole in (("A", False), ("B", True), ("C", True)):
        table = _table(folder, name)
        for s in spans:
            assert len(WORD.findall(docs[s["doc_id"]][s["start"] : s["end"]])) == FACT_TOKENS
            holding = [c for c, (d, a, b) in table.items() if d == s["doc_id"] and a < s["end"] and s["start"] < b]
            inside = [c for c in holding if table[c][1] <= s["start"] and s["end"] <= table[c][2]]
            assert (len(inside) == 1) == whole and len(holding) == (1 if whole else 2), (name, s)


def test_at_equal_budgets_the_command_picks_b_with_a_significant_difference(ran: tuple[Path, dict, list[dict]]) -> None:
    folder, rep, spans = ran
    v64 = next(v for v in rep["verdicts"] if v["budget"] == 64)
    assert v64["winner"] == "B" and rep["answer"] == v64["text"] and rep["answer"].startswith("B at 64 tokens")
    tests = {(c["run"], c.get("against")): c for c in rep["comparisons"] if c["measure"] == "SpanRecall@64tok"}
    for other in ("A", "C"):
        c = tests.get((other, "B")) or tests[("B", other)]
        assert c["significant"] and c["p_adjusted"] < 0.05
        # B holds the whole fact on every question; the other is below it on every question
        assert (c["wins"], c["losses"]) in ((0, QUESTIONS), (QUESTIONS, 0))
    # the planted truth, in plain Python: the share of each fact in the context of 64 tokens
    means = {c["name"]: c["curve"]["64"] for c in rep["chunkers"]}
    by_q = {s["query_id"]: s for s in spans}
    for name in ("A", "B", "C"):
        table, ranked = _table(folder, name), _ranked(folder, name)
        docs = {p.stem: p.read_text(encoding="utf-8") for p in (folder / "corpus" / "docs").iterdir()}
        shares = []
        for q, s in by_q.items():
            used, held = 0, set()
            for c in ranked.get(q, []):
                d, a, b = table[c]
                n = len(WORD.findall(docs[d][a:b]))
                if used + n > 64:
                    break
                used += n
                held |= {(d, i) for i in range(a, b)}
            fact = {(s["doc_id"], i) for i in range(s["start"], s["end"])}
            shares.append(len(fact & held) / len(fact))
        assert means[name] == pytest.approx(sum(shares) / len(shares), abs=1e-12)
        if name == "B":
            assert shares == [1.0] * QUESTIONS
        if name == "C":
            assert shares == [0.0] * QUESTIONS
        if name == "A":
            assert all(0 < x < 1 for x in shares)


def test_at_equal_k_it_shows_why_k_compares_unlike_things(ran: tuple[Path, dict, list[dict]]) -> None:
    _, rep, _ = ran
    rows = {c["name"]: c for c in rep["chunkers"]}
    assert rows["B"]["at_k"] == rows["C"]["at_k"] == 1.0  # at K = 5, C looks as good as B ...
    assert rows["C"]["tokens_at_k"] >= 10 * rows["B"]["tokens_at_k"] == 10 * 5 * 64  # ... reading 10x the tokens
    assert "unlike sizes" in rep["at_k"] and "C" in rep["at_k"] and "B" in rep["at_k"]
    # precision_Omega, the chunking's ceiling, is printed per chunker and ranks the chunkings as planted
    assert rows["B"]["precision_omega"] > rows["A"]["precision_omega"] > rows["C"]["precision_omega"] > 0


def test_the_text_report_names_the_answer_and_the_tokenizer(ran: tuple[Path, dict, list[dict]]) -> None:
    folder, _, _ = ran
    res = CliRunner().invoke(
        cli,
        [
            "chunking", str(folder / "corpus" / "docs"), str(folder / "corpus" / "spans.jsonl"),
            "--questions", str(folder / "corpus" / "questions.jsonl"), "--chunker", "A=tokens:40",
            "--chunker", "B=tokens:64", "--budgets", "64", "--permutations", "500", "--resamples", "200",
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "answer: B at 64 tokens" in res.stdout and "tokens counted by words-v1" in res.stdout
    assert "P_Omega" in res.stdout
