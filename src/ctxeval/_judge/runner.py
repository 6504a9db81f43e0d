"""Making many judgments: the cache first, then the judge, concurrently, within a budget.

:func:`judge_all` takes the asks (a task and its fields), renders each, looks its key up in the cache,
sends the rest to the judge with at most ``concurrency`` requests in flight, parses each reply
strictly (one more request on a reply that does not parse, then *undecided*), commits each finished
judgment to the cache at once, and counts tokens and cost from the server's usage fields.

Budget (``max_cost``): a request is sent only while the cost so far, plus the most the requests in
flight can cost, plus the most this one can cost, stays within the budget; the most a request can
cost is its prompt's tokens (estimated from its bytes at the highest tokens-per-byte ratio seen so
far, 1 until a reply reports usage, plus 10 %) and ``max_tokens`` of completion at the model's prices.
So the run stops *before* the budget would be exceeded; everything judged so far is kept (and
cached), and the asks not sent are counted.

Votes (``votes`` > 1): each ask is sent ``votes`` times (temperature 1, seeds 0 .. votes-1; one
vote is temperature 0, seed 0); the value is the majority of the decided votes (a tie is
undecided; utilities are averaged), and the share of asks whose votes all agree is reported.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import ConfigError
from .cache import Cache, key_of
from .client import Completion, Judge
from .tasks import ParseError, Task

__all__ = ["NOT_SENT", "Ask", "Prices", "Tally", "judge_all"]

NOT_SENT = object()  #: the value of an ask the budget stopped before it was sent


@dataclass(frozen=True)
class Ask:
    task: Task
    values: Mapping[str, str]


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


@dataclass
class Tally:
    """What a batch of judgments took."""

    judge: str
    heuristic: bool
    asked: int = 0  #: distinct judgments asked (votes count once)
    from_cache: int = 0
    requested: int = 0  #: judgments sent to the judge (each vote is one)
    undecided: int = 0
    not_sent: int = 0  #: stopped by the budget
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    priced: bool = False
    votes: int = 1
    unanimous: float | None = None  #: share of asks whose decided votes all agree (votes > 1)

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["cost"] = round(self.cost, 6) if self.priced else None
        return out

    def line(self) -> str:
        cost = f", cost {self.cost:.4f}" if self.priced else ""
        kind = " (a heuristic, not a model)" if self.heuristic and "heuristic" not in self.judge else ""
        extra = f", {self.not_sent} not sent (the budget)" if self.not_sent else ""
        votes = (
            f", votes {self.votes} (unanimous {self.unanimous:.1%})"
            if self.votes > 1 and self.unanimous is not None
            else ""
        )
        return (
            f"judge {self.judge}{kind}: {self.asked} judgments, {self.from_cache} from the cache, {self.requested} "
            f"requested, {self.undecided} undecided{extra}; tokens {self.prompt_tokens} in / {self.completion_tokens} out"
            f"{cost}{votes}"
        )


def judge_all(
    judge: Judge,
    asks: Sequence[Ask],
    *,
    cache: Cache,
    concurrency: int = 8,
    max_cost: float | None = None,
    prices: Prices | None = None,
    votes: int = 1,
    parse_retries: int = 1,
    progress: bool = False,
) -> tuple[list[Any], Tally]:
    """The value of every ask (None: undecided; :data:`NOT_SENT`: the budget stopped first), in order,
    and the tally."""
    if concurrency < 1:
        raise ConfigError(f"--concurrency must be >= 1, got {concurrency}")
    if votes < 1:
        raise ConfigError(f"--votes must be >= 1, got {votes}")
    price = (prices or Prices()).of(judge.model)
    if max_cost is not None and price is None and not judge.heuristic:
        raise ConfigError(
            f"--max-cost needs the model's prices: --price {judge.model}=PROMPT/COMPLETION (per million tokens)"
        )
    return asyncio.run(_judge_all(judge, asks, cache, concurrency, max_cost, price, votes, parse_retries, progress))


async def _judge_all(
    judge: Judge,
    asks: Sequence[Ask],
    cache: Cache,
    concurrency: int,
    max_cost: float | None,
    price: tuple[float, float] | None,
    votes: int,
    parse_retries: int,
    progress: bool,
) -> tuple[list[Any], Tally]:
    tally = Tally(judge.describe, judge.heuristic, priced=price is not None, votes=votes)
    # one request per distinct (ask, vote): asks repeated across runs are judged once
    jobs: dict[str, tuple[Task, Mapping[str, str], list[dict[str, str]], dict[str, Any]]] = {}
    keys_of: list[list[str]] = []
    for ask in asks:
        messages = ask.task.render(ask.values)
        ks = []
        for v in range(votes):
            params = {"temperature": 0 if votes == 1 else 1, "seed": v}
            k = key_of(judge.model, ask.task.name, ask.task.version, messages, params)
            jobs.setdefault(k, (ask.task, ask.values, messages, params))
            ks.append(k)
        keys_of.append(ks)
    done: dict[str, Any] = {}
    for k in jobs:
        hit = cache.get(k)
        if hit is not None:
            done[k] = hit.value
    tally.from_cache = sum(all(k in done for k in ks) for ks in keys_of)
    state = _Budget(max_cost, price)
    sem = asyncio.Semaphore(concurrency)
    bar = _Bar(progress, len(jobs) - len(done), tally)

    async def one(k: str) -> None:
        task, values, messages, params = jobs[k]
        async with sem:
            reserve = state.reserve(messages, task.max_tokens)
            if reserve is None:
                tally.not_sent += 1
                return
            try:
                value, comp = None, None
                for r in range(parse_retries + 1):
                    p = params if r == 0 else {**params, "seed": int(params["seed"]) + 7919 * r}
                    comp = await judge.complete(task, values, messages, p)
                    tally.requested += 1
                    state.spend(comp, messages)
                    tally.prompt_tokens += comp.prompt_tokens
                    tally.completion_tokens += comp.completion_tokens
                    try:
                        value = comp.utility if task.logprobs else task.parse(comp.text)
                        break
                    except ParseError:
                        continue
            finally:
                state.release(reserve)
            assert comp is not None
            cache.put(
                k,
                model=judge.model,
                task=task.name,
                version=task.version,
                value=value,
                reply=comp.text,
                prompt_tokens=comp.prompt_tokens,
                completion_tokens=comp.completion_tokens,
                cost=state.cost_of(comp),
            )
            done[k] = value
            bar.advance(state.spent)

    tasks = [asyncio.ensure_future(one(k)) for k in jobs if k not in done]
    try:
        await asyncio.gather(*tasks)
    finally:  # a failure stops the others before the clients close (what finished is cached)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        bar.close()
        await judge.aclose()
    tally.cost = state.spent
    values: list[Any] = []
    agree = []
    for ks in keys_of:
        got = [done[k] for k in ks if k in done]
        if len(got) < len(ks):
            values.append(NOT_SENT)
            continue
        decided = [g for g in got if g is not None]
        if not decided:
            values.append(None)
        elif isinstance(decided[0], float):
            values.append(sum(decided) / len(decided))
        else:
            counts = Counter(json.dumps(g, sort_keys=True) for g in decided).most_common()
            tie = len(counts) > 1 and counts[0][1] == counts[1][1]
            values.append(None if tie else json.loads(counts[0][0]))
        if votes > 1 and decided:
            agree.append(len({json.dumps(g, sort_keys=True) for g in decided}) == 1)
    tally.asked = len(asks)
    tally.undecided = sum(v is None for v in values)
    if votes > 1 and agree:
        tally.unanimous = sum(agree) / len(agree)
    return values, tally


class _Budget:
    def __init__(self, max_cost: float | None, price: tuple[float, float] | None) -> None:
        self.max_cost, self.price = max_cost, price
        self.spent = 0.0
        self.reserved = 0.0
        self.ratio = 1.0  # tokens per byte of prompt, the highest seen (1 until a reply reports usage)
        self.stopped = False

    def cost_of(self, comp: Completion) -> float:
        if self.price is None:
            return 0.0
        return (comp.prompt_tokens * self.price[0] + comp.completion_tokens * self.price[1]) / 1e6

    def reserve(self, messages: list[dict[str, str]], max_tokens: int) -> float | None:
        if self.max_cost is None or self.price is None:
            return 0.0
        if self.stopped:
            return None
        n = sum(len(m["content"].encode("utf-8")) + 8 for m in messages)
        most = (n * self.ratio * 1.1 * self.price[0] + max_tokens * self.price[1]) / 1e6
        if self.spent + self.reserved + most > self.max_cost:
            self.stopped = True  # in order: later asks would not fit either
            return None
        self.reserved += most
        return most

    def release(self, amount: float | None) -> None:
        if amount:
            self.reserved -= amount

    def spend(self, comp: Completion, messages: list[dict[str, str]]) -> None:
        self.spent += self.cost_of(comp)
        n = sum(len(m["content"].encode("utf-8")) + 8 for m in messages)
        if comp.prompt_tokens and n:
            self.ratio = max(self.ratio if self.ratio != 1.0 else 0.0, comp.prompt_tokens / n)


class _Bar:
    """A progress bar on stderr: judgments, rate, ETA and the running cost (only when asked)."""

    def __init__(self, on: bool, total: int, tally: Tally) -> None:
        self.progress = None
        if not on or total == 0:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.priced = tally.priced
        self.progress = Progress(
            TextColumn("judging"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}/s"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[cost]}"),
            console=Console(stderr=True),
            transient=True,
        )
        self.task = self.progress.add_task("judging", total=total, rate="-", cost="")
        self.progress.start()
        import time

        self.t0 = time.perf_counter()
        self.n = 0

    def advance(self, spent: float) -> None:
        if self.progress is None:
            return
        import time

        self.n += 1
        rate = self.n / max(time.perf_counter() - self.t0, 1e-9)
        self.progress.update(self.task, advance=1, rate=f"{rate:.1f}", cost=f"cost {spent:.4f}" if self.priced else "")

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
