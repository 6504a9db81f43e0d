"""The circularity check with the real-server tier's model (issue 33's done-when), reduced to what the
slow tier affords: SmolLM2-135M behind llama.cpp's server grades a fixed pool of 19 TREC DL19 pairs
once (5 topics, the NIST-judged passages among the ten runs' top 1; about 10 s a judgment on a busy
2-core machine; the judge's SQLite cache in the test's folder), then the check runs over 50 seeded
resamplings of 4 of the 5 topics with those labels (``tests/circularity_design.py``). The full design
(204 pairs, 12 topics, 10 a seed) is ``bench/circularity_real.py``.

What is asserted is what the card honestly says. This model gives nearly one grade to everything:
its grades carry under half the information NIST's do on the same pairs, so no run can be fitted to
them, and the check says "cannot tell" in every seed, flagging nothing (measured: grade 2 for 15 of
the 19 pairs, 1 for the others; before, the run reranked by these very labels was flagged in 25 of
the 50 seeds, a coin toss). Should the model's grades vary, the seeds where the check can
tell must flag the planted run more often than not and at most 1 honest run in 25. The lexical judge
on the same pool is the control: its grades vary, and the check can tell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import circularity_design as design
from llm_server import ctxeval

pytestmark = pytest.mark.slow


def _lexical(inputs: dict[str, Path], p: design.Pool) -> design.Pairs:
    from ctxeval._judge.kinds.grade import GRADE_TREC

    topics = {json.loads(ln)["qid"]: json.loads(ln)["text"] for ln in inputs["queries.jsonl"].read_text().splitlines()}
    texts = {json.loads(ln)["id"]: json.loads(ln)["text"] for ln in inputs["passages.jsonl"].read_text().splitlines()}
    return {(t, d): GRADE_TREC.offline({"question": topics[t], "passage": texts[d]})["grade"] for t, d in p.pairs}


def _check_outcomes(res: dict[str, Any]) -> None:
    """Where the check cannot tell, it flags nothing; where it can, the planted run is flagged in most
    of those seeds and at most 1 honest run in 25."""
    told = [r for r in res["per_seed"] if not r["cannot_tell"]]
    assert all(r["flagged"] == 0 for r in res["per_seed"] if r["cannot_tell"])
    if told:
        assert sum(r["planted"] for r in told) > len(told) / 2, res
        assert sum(r["honest"] for r in told) <= len(told) * len(design.HONEST) / 25, res


def test_the_check_on_the_real_model_s_labels_says_what_it_can_tell(real_server: Any, tmp_path: Path) -> None:
    p = design.pool(5, 1)
    inputs = design.write_inputs(p, tmp_path)
    judged = tmp_path / "judged.qrels"
    done = ctxeval(
        "judge", "grade", str(inputs["pool.run"]), "--queries", str(inputs["queries.jsonl"]), "--passages",
        str(inputs["passages.jsonl"]), "--depth", "100", "--scale", "trec", "--judge-url", real_server.url, "--model",
        "smollm2", "--cache", str(tmp_path / "cache.sqlite"), "--concurrency", "1", "--timeout", "900", "-q", "-o",
        str(judged), timeout=1800,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    judge = design.read_labels(judged)
    assert set(judge) == set(p.pairs) and len(p.pairs) == 19  # every pair graded once, none undecided

    from ctxeval._judge.systems import cannot_tell

    why = cannot_tell(p.human, judge)
    res = design.seeded(p, judge, seeds=50, topics_per_seed=4)
    _check_outcomes(res)
    # the card over the whole pool says the same, in its JSON, its text and its verdict
    runs = [str(inputs[name]) for name in sorted(p.runs)]
    card = ctxeval("agreement", str(inputs["human.qrels"]), str(judged), *runs, "--format", "json")
    text = ctxeval("agreement", str(inputs["human.qrels"]), str(judged), *runs)
    assert card.returncode == 0 and text.returncode == 0, card.stderr + text.stderr
    circ = json.loads(card.stdout)["circularity"]
    assert circ["cannot_tell"] == why
    if why is not None:  # SmolLM2: nearly one grade; the card cannot tell, and flags nothing
        assert circ["flagged"] == [] and res["cannot_tell"] >= 45, res
        assert "CANNOT TELL whether a run is fitted to the judge: the judge gives grade" in text.stdout
        assert "whether a run is fitted to the judge cannot be told" in text.stdout.splitlines()[1]
    else:
        assert "CANNOT TELL" not in text.stdout
    # the control: the lexical judge's grades on the same pool vary, and the check can tell
    lexical = design.seeded(p, _lexical(inputs, p), seeds=50, topics_per_seed=4)
    assert lexical["cannot_tell"] == 0
    _check_outcomes(lexical)
