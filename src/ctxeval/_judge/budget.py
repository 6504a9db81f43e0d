"""What judgments cost: the models' prices, the budget a run keeps to (see :mod:`.runner` for the
rule), and the plan of a dry run (what a run would ask and its estimated tokens, cost and time)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import ConfigError
from .cache import Cache, key_of
from .interface import Completion
from .prompt import Ask, Task

__all__ = ["Budget", "Prices", "duration", "nbytes", "plan", "plan_line"]


def nbytes(messages: list[dict[str, str]]) -> int:
    """A rendered prompt's size in bytes (its contents, and 8 for each message's framing)."""
    return sum(len(m["content"].encode("utf-8")) + 8 for m in messages)


@dataclass(frozen=True)
class Prices:
    """Prices in currency units per million tokens, per model: ``{model: (prompt, completion)}``."""

    table: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    def of(self, model: str) -> tuple[float, float] | None:
        return self.table.get(model)

    @classmethod
    def parse(cls, specs: Sequence[str]) -> Prices:
        """``MODEL=PROMPT/COMPLETION`` strings (per million tokens), e.g. ``gpt-4o-mini=0.15/0.6``."""
        table: dict[str, tuple[float, float]] = {}
        for spec in specs:
            model, eq, prices = spec.partition("=")
            a, slash, b = prices.partition("/")
            try:
                pa, pb = float(a), float(b)
            except ValueError:
                pa = pb = float("nan")
            if not eq or not slash or not model or not (pa >= 0 and pb >= 0):
                raise ConfigError(
                    f"--price {spec!r}: expected MODEL=PROMPT/COMPLETION per million tokens, e.g. m=0.15/0.6"
                )
            table[model] = (pa, pb)
        return cls(table)


def plan(
    model: str,
    asks: Sequence[Ask],
    *,
    cache: Cache,
    votes: int = 1,
    retry_undecided: bool = False,
    prices: Prices | None = None,
    concurrency: int = 8,
    endpoint: str | None = None,
) -> dict[str, Any]:
    """What a run would do, without asking anything: the judgments, those the cache holds (decided,
    undecided), the requests to send, and the estimated prompt and completion tokens, cost and time.
    Tokens come from this model's cached judgments when there are some (tokens per prompt byte,
    completion tokens per request; else 4 bytes a token and ``max_tokens`` of completion); time from
    the server's serial rate (seconds per request with nothing else in flight, measured by an earlier
    run on its first replies to ``endpoint``; a cached request's own latency includes its wait behind
    the others in flight, so it is not used), else unknown."""
    keys: dict[str, tuple[Task, int]] = {}
    for ask in asks:
        messages = ask.task.render(ask.values)
        for v in range(votes):
            params = {"temperature": 0 if votes == 1 else 1, "seed": v}
            keys.setdefault(
                key_of(model, ask.task.name, ask.task.version, messages, params), (ask.task, nbytes(messages))
            )
    decided = undecided = 0
    todo = []
    for k, job in keys.items():
        hit = cache.get(k)
        if hit is not None and not hit.undecided:
            decided += 1
        elif hit is not None and not retry_undecided:
            undecided += 1
        else:
            todo.append(job)
    usage = cache.usage(model, next(iter(keys.values()))[0].name if keys else None)
    known = usage["known"] > 0
    ratio = usage["tokens_per_byte"] if known else 0.25
    prompt = round(sum(n for _, n in todo) * ratio)
    completion = round(sum(min(t.max_tokens, usage["completion_tokens"]) if known else t.max_tokens for t, _ in todo))
    price = (prices or Prices()).of(model)
    cost = None if price is None else (prompt * price[0] + completion * price[1]) / 1e6
    rate = cache.serial_rate(endpoint) if endpoint else None
    seconds = rate[0] * len(todo) if rate else None
    return {
        "judgments": len(asks),
        "requests": len(keys),
        "cached_decided": decided,
        "cached_undecided": undecided,
        "to_ask": len(todo),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "estimated_from": f"{int(usage['known'])} cached judgments of {model}" if known else "a guess: 4 bytes a token",
        "concurrency": concurrency,
        "cost": cost,
        "serial_seconds": rate[0] if rate else None,
        "serial_replies": rate[1] if rate else 0,
        "seconds_one_at_a_time": seconds,
        "seconds_at_concurrency": None if seconds is None else seconds / concurrency,
    }


def plan_line(p: Mapping[str, Any]) -> str:
    """The plan as one line for the terminal."""
    cost = "" if p["cost"] is None else f", cost about {p['cost']:.4f}"
    if p["seconds_one_at_a_time"] is None:
        when = "time unknown until the server has answered a first request (a run measures its serial rate)"
    else:
        n = p["serial_replies"]
        when = (
            f"about {duration(p['seconds_one_at_a_time'])} at the server's serial rate ({p['serial_seconds']:.2f} s a "
            f"request with nothing else in flight, measured on {n} repl{'y' if n == 1 else 'ies'} of an earlier run); "
            f"{duration(p['seconds_at_concurrency'])} if it serves --concurrency {p['concurrency']} at once"
        )
    return (
        f"dry run: {p['judgments']} judgments, {p['cached_decided']} decided in the cache, {p['cached_undecided']} "
        f"undecided in the cache (--retry-undecided asks them), {p['to_ask']} to ask; about {p['prompt_tokens']} prompt "
        f"+ {p['completion_tokens']} completion tokens ({p['estimated_from']}){cost}; {when}. Nothing was sent."
    )


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Budget:
    """The running cost, the requests in flight and what they may cost (see :mod:`.runner`)."""

    def __init__(self, max_cost: float | None, price: tuple[float, float] | None) -> None:
        self.max_cost, self.price = max_cost, price
        self.spent = 0.0
        self.reserved = 0.0
        self.in_flight = 0
        self.ratio = 0.0  # prompt tokens per byte, the highest seen (0: unknown, 1 is assumed)
        self.stopped = False
        self._cond: asyncio.Condition | None = None

    @property
    def cond(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    def cost_of(self, comp: Completion) -> float:
        if self.price is None:
            return 0.0
        return (comp.prompt_tokens * self.price[0] + comp.completion_tokens * self.price[1]) / 1e6

    def most(self, nbytes: int, max_tokens: int) -> float:
        assert self.price is not None
        ratio = self.ratio * 1.1 if self.ratio else 0.5  # unknown until a reply: 2 bytes a token
        return (nbytes * ratio * self.price[0] + max_tokens * self.price[1]) / 1e6

    async def reserve(self, nbytes: int, max_tokens: int) -> float | None:
        """The most this request can cost, reserved; None: it would cross the budget even with
        nothing else in flight (then every later request is refused too, in order)."""
        if self.max_cost is None or self.price is None:
            return 0.0
        async with self.cond:
            while True:
                if self.stopped:
                    return None
                most = self.most(nbytes, max_tokens)
                if self.spent + self.reserved + most <= self.max_cost:
                    self.reserved += most
                    self.in_flight += 1
                    return most
                if self.in_flight == 0:
                    self.stopped = True
                    return None
                await self.cond.wait()

    async def release(self, amount: float | None) -> None:
        if self.max_cost is None or self.price is None or amount is None:
            return
        async with self.cond:
            self.reserved -= amount
            self.in_flight -= 1
            self.cond.notify_all()

    def spend(self, comp: Completion, nbytes: int) -> None:
        self.spent += self.cost_of(comp)
        if comp.prompt_tokens and nbytes:
            self.ratio = max(self.ratio, comp.prompt_tokens / nbytes)
