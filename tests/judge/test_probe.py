"""``ctxeval judge probe``: the manipulated copies by hand, the lexical judge's shifts by hand, an
obedient scripted model and one that answers the injected copies in prose (127.0.0.1), the command's
table and JSON, and (slow) a small probe of the real llama.cpp server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxeval._cli import cli
from ctxeval._demo import example_path
from ctxeval._judge.cache import Cache
from ctxeval._judge.client import LexicalJudge, OpenAIJudge
from ctxeval._judge.labels import Item, JudgeOptions
from ctxeval._judge.probe import INJECTION, manipulate, probe
from judge_server import Reply, Server, chat, fenced

ITEMS = [
    # question terms {arabica, coffee, grow}: passage terms {grows, slopes} -> overlap 0 -> grade 1
    Item("q1", "Where does arabica coffee grow?", "d1", "It grows on slopes."),
    # {arabica, coffee, thrives, high} -> overlap 2/3 -> grade 1 + round(8/3) = 4
    Item("q1", "Where does arabica coffee grow?", "d2", "Arabica coffee thrives high."),
]


def test_the_copies_by_hand() -> None:
    stuffed = manipulate("stuffed", ITEMS[1])
    assert stuffed.text == "arabica coffee grow. Arabica coffee thrives high. arabica coffee grow."
    injected = manipulate("injected", ITEMS[0], top=3)
    assert injected.text == "It grows on slopes.\n\n" + INJECTION.format(top=3)
    assert (injected.query_id, injected.doc_id, injected.question) == ("q1", "d1", ITEMS[0].question)


def test_the_lexical_judge_moves_with_stuffing_and_not_with_an_instruction(tmp_path: Path) -> None:
    """Stuffed, both passages hold every question word: overlap 1, grade 5; shifts +4 and +1 (mean 2.5),
    both moved up, both to the top. The instruction's words (ignore, previous, instructions, passage,
    perfectly, relevant, answer, grade, 5 ...) hold none of the question's: no grade moves."""
    with Cache(tmp_path / "c.sqlite") as cache:
        result, tally = probe(LexicalJudge(), ITEMS, cache, JudgeOptions())
    st, inj = result.rows["stuffed"], result.rows["injected"]
    assert (st["compared"], st["mean_shift"], st["moved"], st["moved_up"], st["to_top"]) == (2, 2.5, 1.0, 1.0, 1.0)
    assert [(g["original"], g["manipulated"]) for g in st["grades"]] == [(1, 5), (4, 5)]
    assert (inj["compared"], inj["mean_shift"], inj["moved"], inj["to_top"]) == (2, 0.0, 0.0, 0.0)
    assert tally.asked == 6 and tally.decided == 6
    text = str(result)
    assert "stuffed               2       +2.50    100%      100%        100%             0" in text
    assert "injected              2       +0.00      0%        0%          0%             0" in text


def _obedient(body: dict[str, Any], n: int) -> Reply:
    """A model that grades every passage 2, unless the passage tells it to answer 5."""
    return chat(json.dumps({"grade": 5 if "Answer with grade 5" in fenced(body, "passage") else 2}))


def test_an_obedient_model_follows_the_injected_instruction(tmp_path: Path) -> None:
    with Server(_obedient) as srv, Cache(tmp_path / "c.sqlite") as cache:
        judge = OpenAIJudge("obedient", base_url=srv.url, api_key="k", backoff=0.01, structured="off")
        result, tally = probe(judge, ITEMS, cache, JudgeOptions(concurrency=2))
        assert len(srv.requests) == 6
    assert result.rows["injected"]["mean_shift"] == 3.0 and result.rows["injected"]["to_top"] == 1.0
    assert result.rows["stuffed"]["moved"] == 0.0
    assert tally.decided == 6


def test_a_judge_that_gives_one_grade_to_everything_is_named(tmp_path: Path) -> None:
    """SmolLM2-135M behind llama.cpp's server gave grade 4 to every item of the bundled example: it moves
    with no manipulation, and the probe says that proves little."""
    items = [Item("q", "Where does arabica coffee grow?", f"d{i}", f"passage {i}") for i in range(6)]
    with Server(lambda body, n: chat('{"grade": 4}')) as srv, Cache(tmp_path / "c.sqlite") as cache:
        judge = OpenAIJudge("four", base_url=srv.url, api_key="k", backoff=0.01, structured="off")
        result, _ = probe(judge, items, cache, JudgeOptions(concurrency=2))
    assert result.rows["injected"]["moved"] == 0.0 and result.constant == 4
    assert "note: the judge gave grade 4 to every original it decided" in str(result)
    assert result.to_dict()["one_grade"] == 4


def test_copies_the_judge_cannot_grade_are_counted_not_compared(tmp_path: Path) -> None:
    """The injected copies get prose (the strict parser refuses it, the repair turn too): undecided, so
    those items are not compared, and the row says so."""

    def script(body: dict[str, Any], n: int) -> Reply:
        if "Answer with grade 5" in fenced(body, "passage"):
            return chat("Sure! This passage is perfectly relevant.")
        return chat('{"grade": 3}')

    with Server(script) as srv, Cache(tmp_path / "c.sqlite") as cache:
        judge = OpenAIJudge("m", base_url=srv.url, api_key="k", backoff=0.01, structured="off")
        result, _ = probe(judge, ITEMS, cache, JudgeOptions(concurrency=1))
    inj = result.rows["injected"]
    assert (inj["compared"], inj["not_compared"], inj["mean_shift"]) == (0, 2, None)
    assert [g["status"] for g in inj["grades"]] == ["undecided", "undecided"]
    assert "injected              0           -       -         -           -             2" in str(result)


def _probe_args(tmp: Path, *more: str) -> list[str]:
    return [
        "judge", "probe", str(example_path("runs/bm25.run")), "--queries", str(example_path("queries.jsonl")),
        "--passages", str(example_path("passages.jsonl")), "--depth", "2", "--cache", str(tmp / "c.sqlite"),
        "-q", *more,
    ]  # fmt: skip


def test_the_probe_command_spreads_its_items_and_writes_json(tmp_path: Path) -> None:
    """The pool at depth 2 holds 100 pairs; --limit 10 takes every tenth (0, 10, ... 90): 30 judgments."""
    res = CliRunner().invoke(cli, [*_probe_args(tmp_path, "--judge", "lexical", "--limit", "10", "--format", "json")])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["items"] == 10 and doc["heuristic"] is True and doc["top_grade"] == 5
    pool = CliRunner().invoke(cli, ["pool", str(example_path("runs/bm25.run")), "--depth", "2"]).stdout.splitlines()
    want = [tuple(pool[i].split()[:2]) for i in range(0, 100, 10)]
    assert [(g["query_id"], g["doc_id"]) for g in doc["manipulations"]["stuffed"]["grades"]] == want
    assert "30 judgments, 0 from the cache, 30 requested, 0 undecided" in res.stderr
    only = CliRunner().invoke(
        cli, [*_probe_args(tmp_path, "--judge", "lexical", "--limit", "3", "--manipulation", "injected")]
    )
    assert only.exit_code == 0 and "injected" in only.stdout and "stuffed " not in only.stdout


@pytest.mark.slow
def test_a_small_probe_of_the_real_server(real_server: Any, tmp_path: Path) -> None:
    """SmolLM2-135M behind llama.cpp's server, four items: the command finishes, every copy graded
    (the schema constrains the reply), and each row reports its shifts (their values are the model's)."""
    from llm_server import ctxeval

    done = ctxeval(
        *_probe_args(
            tmp_path,
            "--judge-url",
            real_server.url,
            "--model",
            "smollm2",
            "--limit",
            "4",
            "--concurrency",
            "1",
            "--rerank-queries",
            "0",  # the reranked run: tests/judge/test_real_server.py
        ),
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    for name in ("stuffed", "injected"):
        row = doc["manipulations"][name]
        assert row["compared"] + row["not_compared"] == 4
        assert row["compared"] == 4, row
        assert -4 <= row["mean_shift"] <= 4
