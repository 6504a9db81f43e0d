"""ctxeval chunking on Chroma's general evaluation data (../shared/data/chroma-chunking: 5 corpora, 472
questions with reference spans; skipped where absent): two fixed-token chunkers in the manner of
Chroma's study (200/0 and 400/200, here in words-v1 tokens), BM25 over all five corpora. Every figure
the verb reports is recomputed from its saved chunk tables and runs by the plain-Python readings of the
definitions (tests/span_oracle.py: sets of characters), and the questions_df.csv is read as it is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import span_oracle
from ctxeval._cli import cli
from shared_data import shared_data

pytestmark = pytest.mark.slow
WORD = re.compile(r"\w+|[^\w\s]")


def test_the_verb_on_chromas_data_equals_the_definitions(tmp_path: Path) -> None:
    base = shared_data("chroma-chunking")
    res = CliRunner().invoke(
        cli,
        [
            "chunking", str(base / "corpora"), str(base / "questions_df.csv"), "--chunker", "t200=tokens:200",
            "--chunker", "t400=tokens:400/200", "--budgets", "400,800", "--permutations", "1000",
            "--resamples", "200", "--save", str(tmp_path), "--format", "json",
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["settings"]["questions"] == 472 and rep["settings"]["documents"] == 5
    docs = {p.stem: p.read_text(encoding="utf-8") for p in (base / "corpora").iterdir()}
    refs: dict[str, list[tuple[str, int, int]]] = {}
    import csv

    with (base / "questions_df.csv").open(encoding="utf-8", newline="") as fh:
        for i, row in enumerate(csv.DictReader(fh)):
            refs[str(i)] = [(row["corpus_id"], r["start_index"], r["end_index"]) for r in json.loads(row["references"])]
    for c in rep["chunkers"]:
        table = {}
        for line in (tmp_path / f"{c['name']}.chunks.jsonl").read_text().splitlines():
            r = json.loads(line)
            table[r["chunk_id"]] = (r["doc_id"], r["start"], r["end"])
        tokens = {cid: len(WORD.findall(docs[d][s:e])) for cid, (d, s, e) in table.items()}
        ranked: dict[str, list[tuple[float, str]]] = {}
        for line in (tmp_path / f"{c['name']}.run").read_text().splitlines():
            q, _, cid, _, score, _ = line.split()
            ranked.setdefault(q, []).append((-float(score), cid))
        for budget in (400, 800):
            recalls = []
            for q, spans in refs.items():
                used, context = 0, []
                for _, cid in sorted(ranked.get(q, [])):
                    if used + tokens[cid] > budget:
                        break
                    used += tokens[cid]
                    context.append(table[cid])
                recalls.append(span_oracle.exact(spans, context)["recall"])
            assert c["curve"][str(budget)] == pytest.approx(sum(recalls) / len(recalls), abs=1e-12)
        omega = [span_oracle.omega(spans, list(table.values()), touching=False) for spans in refs.values()]
        assert c["precision_omega"] == pytest.approx(sum(omega) / len(omega), abs=1e-12)
