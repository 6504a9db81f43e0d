"""Budgets counted like Chroma's cl100k_base: tiktoken's encoding file rebuilt offline from the npm
package ``tiktoken`` (its ``encoders/cl100k_base.json``: the same ranks; nothing of the package is kept),
then checked by tiktoken itself (it verifies the file's sha256 when it loads it). Chroma's
FixedTokenChunker(200, 0) cut its corpora into windows of 200 cl100k_base tokens: the chunk texts
rebuilt from its ranges count 200 tokens under ``tiktoken:cl100k_base``, and a budget of 400 tokens
holds two of them."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from chroma_data import expected, true_windows
from ctxeval import Chunks, SpanLabels, Tokenizer, evaluate
from shared_data import shared_data

pytestmark = pytest.mark.slow

#: tiktoken's cache name of cl100k_base: the sha1 of its download URL (the offline-tokenizers note)
CACHE_NAME = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"


@pytest.fixture(scope="module")
def cl100k(tmp_path_factory: pytest.TempPathFactory) -> Tokenizer:
    tiktoken = pytest.importorskip("tiktoken")
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the encoding is rebuilt from the npm package tiktoken")
    work = tmp_path_factory.mktemp("cl100k")
    try:
        subprocess.run(
            [npm, "pack", "tiktoken@1.0.22", "--silent"], cwd=work, check=True, timeout=300, capture_output=True
        )
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"the npm registry cannot be reached ({type(exc).__name__}): the encoding is rebuilt from it")
    with tarfile.open(next(work.glob("tiktoken-*.tgz"))) as tar:
        member = tar.extractfile("package/encoders/cl100k_base.json")
        assert member is not None
        data = json.load(member)
    lines = []
    words = data["bpe_ranks"].split()
    i = 0
    while i < len(words):  # groups "! RANK TOKEN TOKEN ...": consecutive ranks from RANK
        assert words[i] == "!"
        rank = int(words[i + 1])
        i += 2
        while i < len(words) and words[i] != "!":
            base64.b64decode(words[i])  # a token is base64 bytes
            lines.append(f"{words[i]} {rank}\n")
            rank += 1
            i += 1
    cache = work / "cache"
    cache.mkdir()
    (cache / CACHE_NAME).write_text("".join(lines), encoding="ascii")
    old = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        tiktoken.get_encoding("cl100k_base")  # checks the file's sha256 against the official one
        return Tokenizer.coerce("tiktoken:cl100k_base")
    finally:
        if old is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = old


def test_chromas_200_token_chunks_count_200_tokens(cl100k: Tokenizer) -> None:
    base = shared_data("chroma-chunking")
    exp = expected(base)["chunkings"]["fixed_token_200_0"]
    counts = []
    for corpus in exp["chunks"]:
        text = (base / "corpora" / f"{corpus}.md").read_text(encoding="utf-8")
        windows = true_windows(exp, corpus, text)[:-1]  # the last window is short
        counts += cl100k.count([text[s:e] for s, e in windows]).tolist()
    assert cl100k.name == "tiktoken:cl100k_base"
    # a window's text encodes back to its 200 tokens unless the cut split a merge (then a token or so more)
    exactly = sum(n == 200 for n in counts) / len(counts)
    assert exactly > 0.9, exactly
    assert all(195 <= n <= 210 for n in counts)


def test_a_budget_of_400_cl100k_tokens_holds_two_chunks(cl100k: Tokenizer, tmp_path: Path) -> None:
    base = shared_data("chroma-chunking")
    exp = expected(base)["chunkings"]["fixed_token_200_0"]
    corpus = "state_of_the_union"
    text = (base / "corpora" / f"{corpus}.md").read_text(encoding="utf-8")
    ranges = exp["chunks"][corpus]
    table = Chunks.from_dict({f"c{i}": (corpus, s, e) for i, (s, e) in enumerate(ranges)}, documents={corpus: text})
    labels = SpanLabels.from_chroma(base / "questions_df.csv")
    rows = [q for q in exp["questions"] if q["corpus_id"] == corpus]
    run = {str(q["row"]): {f"c{c}": float(5 - r) for r, c in enumerate(q["retrieved_chunk_ids"])} for q in rows}
    keep = set(run)
    labels = SpanLabels.build([r for r in labels.rows() if r[0] in keep])
    ms = ["SpanRecall@2", "SpanRecall@400tok", "SpanRecall@410tok"]
    res = evaluate(labels, run, ms, chunks=table, rag={"tokenizer": cl100k}).runs[0]
    assert res.mean("SpanRecall@410tok") >= res.mean("SpanRecall@2") * 0.9
    tokens = {f"c{i}": n for i, n in enumerate(cl100k.count([text[s:e] for s, e in ranges]).tolist())}
    checked = 0
    for q in res.qids:  # where the first two chunks fit 400 tokens and the third does not, the context is the top 2
        first = sorted(run[q], key=lambda c: -run[q][c])
        if tokens[first[0]] + tokens[first[1]] <= 400 < tokens[first[0]] + tokens[first[1]] + tokens[first[2]]:
            assert res.per_query("SpanRecall@400tok")[q] == res.per_query("SpanRecall@2")[q]
            checked += 1
    assert checked > len(res.qids) / 2, checked
