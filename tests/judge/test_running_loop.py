"""The judge called where an event loop already runs (a Jupyter kernel, Playwright's sync API):
``asyncio.run`` refuses a second loop in one thread, so the runner moves to a worker thread there."""

from __future__ import annotations

import asyncio

from ctxeval._judge.cache import Cache
from ctxeval._judge.client import LexicalJudge
from ctxeval._judge.runner import Ask, judge_many
from ctxeval._judge.tasks import TASKS


def _asks() -> list[Ask]:
    passages = ["coffee grows best at high altitude", "tea is a drink", "arabica coffee altitude 1000 m"]
    return [
        Ask(TASKS["grade"], {"question": "At what altitude does coffee grow best?", "passage": p}) for p in passages
    ]


def test_the_judge_runs_inside_a_running_event_loop(tmp_path) -> None:
    with Cache(tmp_path / "outside.sqlite") as cache:
        outside, _ = judge_many(LexicalJudge(), _asks(), cache=cache)

    async def in_a_loop():
        asyncio.get_running_loop()  # the situation of a notebook cell
        with Cache(tmp_path / "inside.sqlite") as cache:
            return judge_many(LexicalJudge(), _asks(), cache=cache)

    inside, _ = asyncio.run(in_a_loop())
    assert [o.status for o in inside] == ["decided"] * 3
    # the same answers as outside a loop (the offline rule's grades, computed independently of the thread)
    assert [o.value for o in inside] == [o.value for o in outside]
    assert [o.value for o in inside] == [TASKS["grade"].offline(a.values)["grade"] for a in _asks()]
