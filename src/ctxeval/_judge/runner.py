"""Making many judgments: the cache first, then the judge, concurrently, within a budget.

:func:`judge_many` takes the asks (a task, its fields, and the ids they belong to), renders each,
looks its key up in the cache, and sends the rest to the judge: first one request alone (the probe:
its latency sets the timeout and the estimate of the time left, and it detects the server's
structured-output dialect), then the others with at most ``concurrency`` in flight (fewer while the
server pushes back, see :class:`~ctxeval._judge.client.Limiter`). Just before asking a prompt it
looks it up again and claims it, so that two processes sharing a cache ask it once. Each reply is
parsed strictly; one that does not parse gets a repair turn (the model's own reply and the
instruction to answer with the object only), then the judgment is *undecided* with its reason. Each
finished judgment, decided or not, is committed to the cache at once, with the usage the server
reported.

Every ask ends in one of four states, kept apart everywhere: *decided* (a value), *undecided* (with
its reason: the reply did not parse, the request timed out, the prompt was too long for the model,
a utility only bounded), *tie* (votes split evenly), *not sent* (the budget stopped first).

Budget (``max_cost``): a request is sent only while the cost so far, plus the most the requests in
flight can cost, plus the most this one can cost, stays within the budget; the most a request can
cost is its prompt's tokens, estimated from its bytes at the highest tokens-per-byte ratio the
replies so far reported (+10 %; before the first reply, the ratio of this model's cached judgments,
else 1 token per 2 bytes, twice English text's: the probe is sent alone so that the others are
estimated from its usage),
plus ``max_tokens`` of completion, at the model's prices. A request that does not fit while others
are in flight waits for them; the run stops only when the next request would cross the budget with
nothing in flight. Everything judged is kept (and cached); the asks not sent are counted.

Votes (``votes`` > 1): each ask is sent ``votes`` times (temperature 1, seeds 0 .. votes-1; one
vote is temperature 0, seed 0); the value is the majority of the decided votes (an even split is a
*tie*; utilities are averaged), and the share of asks whose votes all agree is reported.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from .._errors import ConfigError, JudgeError
from .budget import Budget, Prices, duration, nbytes
from .cache import BUSY, Cache, Entry, key_of
from .interface import Completion, ItemFailure, Judge
from .prompt import Ask, ParseError, Task, repair

__all__ = ["NOT_SENT", "Ask", "Outcome", "Prices", "Tally", "check_undecided", "judge_all", "judge_many"]

NOT_SENT = object()  #: the value :func:`judge_all` gives an ask the budget stopped before it was sent
DECIDED, UNDECIDED, TIE, UNSENT = "decided", "undecided", "tie", "not sent"


@dataclass(frozen=True)
class Outcome:
    """How one ask ended: ``status`` decided / undecided / tie / not sent, the ``value`` when decided,
    and the ``reason`` otherwise."""

    status: str
    value: Any = None
    reason: str | None = None

    @property
    def decided(self) -> bool:
        return self.status == DECIDED


@dataclass
class Tally:
    """What a batch of judgments took."""

    judge: str
    heuristic: bool
    task: str = ""
    asked: int = 0  #: distinct judgments asked (votes count once)
    from_cache: int = 0  #: found in the cache (at the start, or landed meanwhile from another process)
    cached_undecided: int = 0  #: of those, undecided ones (``--retry-undecided`` asks them again)
    from_others: int = 0  #: of those, answered by another process sharing the cache while this one ran
    requested: int = 0  #: requests sent (each vote and each repair turn is one)
    decided: int = 0
    undecided: int = 0
    ties: int = 0
    not_sent: int = 0  #: stopped by the budget
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    priced: bool = False
    votes: int = 1
    unanimous: float | None = None  #: share of asks whose decided votes all agree (votes > 1)
    timeouts: int = 0  #: requests that got no reply in time (none was sent again)
    concurrency: int = 0  #: the most requests in flight allowed
    concurrency_low: int = 0  #: the lowest the limit went while the server pushed back
    reasons: dict[str, int] = field(default_factory=dict)  #: undecided reasons (their kind) and counts

    @classmethod
    def merged(cls, tallies: Sequence[Tally]) -> Tally:
        """One tally of several batches of the same judge and task (counts and costs added; the lowest
        concurrency reached; unanimity weighted by the asks)."""
        first = tallies[0]
        out = cls(first.judge, first.heuristic, first.task, priced=first.priced, votes=first.votes)
        out.concurrency = first.concurrency
        out.concurrency_low = min(t.concurrency_low for t in tallies)
        for name in ("asked", "from_cache", "cached_undecided", "from_others", "requested", "decided", "undecided",
                     "ties", "not_sent", "prompt_tokens", "completion_tokens", "cost", "timeouts"):  # fmt: skip
            setattr(out, name, sum(getattr(t, name) for t in tallies))
        for t in tallies:
            for k, n in t.reasons.items():
                out.reasons[k] = out.reasons.get(k, 0) + n
        agreed = [(t.unanimous, t.asked) for t in tallies if t.unanimous is not None]
        if agreed:
            out.unanimous = sum(u * n for u, n in agreed) / max(sum(n for _, n in agreed), 1)
        return out

    def to_dict(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["cost"] = round(self.cost, 6) if self.priced else None
        return out

    @property
    def undecided_share(self) -> float:
        """Undecided (and tied) asks over the asks that got an answer (not sent ones left out)."""
        n = self.decided + self.undecided + self.ties
        return (self.undecided + self.ties) / n if n else 0.0

    def line(self) -> str:
        cost = f", cost {self.cost:.4f}" if self.priced else ""
        kind = " (a heuristic, not a model)" if self.heuristic and "heuristic" not in self.judge else ""
        cached = ""
        if self.cached_undecided:
            cached = f" ({self.cached_undecided} of them undecided: --retry-undecided asks again)"
        if self.from_others:
            cached += f" ({self.from_others} answered meanwhile by another process)"
        extra = f", {self.ties} tie{'s' if self.ties != 1 else ''}" if self.ties else ""
        extra += f", {self.not_sent} not sent (the budget)" if self.not_sent else ""
        votes = (
            f", votes {self.votes} (unanimous {self.unanimous:.1%})"
            if self.votes > 1 and self.unanimous is not None
            else ""
        )
        flow = ""
        if self.timeouts:
            flow += f"; {self.timeouts} timed out (none sent twice; --timeout)"
        if self.concurrency_low and self.concurrency_low < self.concurrency:
            flow += f"; concurrency went down to {self.concurrency_low} of {self.concurrency} (the server pushed back)"
        return (
            f"judge {self.judge}{kind}: {self.asked} judgments, {self.from_cache} from the cache{cached}, "
            f"{self.requested} requested, {self.undecided} undecided{extra}; tokens {self.prompt_tokens} in / "
            f"{self.completion_tokens} out{cost}{votes}{flow}"
        )


def check_undecided(tallies: Sequence[Tally], most: float) -> None:
    """Fail (:class:`JudgeError`) when a task's undecided share (ties included) is over ``most``,
    saying why the judgments were undecided."""
    for t in tallies:
        if t.undecided_share > most and t.undecided + t.ties:
            why = "; ".join(f"{n} {r}" for r, n in sorted(t.reasons.items(), key=lambda kv: (-kv[1], kv[0])))
            n = t.decided + t.undecided + t.ties
            raise JudgeError(
                f"{t.task or 'judge'}: {t.undecided + t.ties} of {n} judgments undecided ({t.undecided_share:.0%}, "
                f"over --max-undecided {most:.0%}): {why}. Nothing written; the judgments are cached "
                "(--retry-undecided asks the undecided ones again)"
            )


def judge_all(judge: Judge, asks: Sequence[Ask], *, cache: Cache, **options: Any) -> tuple[list[Any], Tally]:
    """The value of every ask in order (None: undecided or a tie; :data:`NOT_SENT`: the budget
    stopped first), and the tally. ``options``: those of :func:`judge_many`, which gives each ask's
    :class:`Outcome`."""
    outcomes, tally = judge_many(judge, asks, cache=cache, **options)
    return [o.value if o.decided else NOT_SENT if o.status == UNSENT else None for o in outcomes], tally


def judge_many(
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
    retry_undecided: bool = False,
    notify: Callable[[str], None] | None = None,
) -> tuple[list[Outcome], Tally]:
    """Each ask's :class:`Outcome`, in order, and the tally (``notify`` receives one-line messages:
    the probe's latency and the timeout it set, waits for another process)."""
    if concurrency < 1:
        raise ConfigError(f"--concurrency must be >= 1, got {concurrency}")
    if votes < 1:
        raise ConfigError(f"--votes must be >= 1, got {votes}")
    price = (prices or Prices()).of(judge.model)
    if max_cost is not None and price is None and not judge.heuristic:
        raise ConfigError(
            f"--max-cost needs the model's prices: --price {judge.model}=PROMPT/COMPLETION (per million tokens)"
        )
    run = _Run(judge, asks, cache, concurrency, max_cost, price, votes, parse_retries, retry_undecided)
    run.notify = notify or (lambda msg: None)
    return _run_coroutine(run.go(progress))


def _run_coroutine(coro: Any) -> Any:
    """``asyncio.run(coro)``, or on a worker thread when this thread already runs an event loop (a
    Jupyter kernel, Playwright's sync API), where ``asyncio.run`` refuses to start a second loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1, thread_name_prefix="ctxeval-judge") as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass
class _Job:
    task: Task
    values: Mapping[str, str]
    messages: list[dict[str, str]]
    params: dict[str, Any]
    ref: Mapping[str, Any] | None
    nbytes: int


class _Run:
    def __init__(
        self,
        judge: Judge,
        asks: Sequence[Ask],
        cache: Cache,
        concurrency: int,
        max_cost: float | None,
        price: tuple[float, float] | None,
        votes: int,
        parse_retries: int,
        retry_undecided: bool,
    ) -> None:
        self.judge, self.cache, self.concurrency = judge, cache, concurrency
        self.votes, self.parse_retries, self.retry_undecided = votes, parse_retries, retry_undecided
        self.tally = Tally(judge.describe, judge.heuristic, priced=price is not None, votes=votes)
        self.tally.task = ", ".join(dict.fromkeys(a.task.name for a in asks))
        self.tally.concurrency = self.tally.concurrency_low = concurrency
        self.notify: Callable[[str], None] = lambda msg: None
        # one request per distinct (ask, vote): asks repeated across runs are judged once
        self.jobs: dict[str, _Job] = {}
        self.keys_of: list[list[str]] = []
        for ask in asks:
            messages = ask.task.render(ask.values)
            ks = []
            for v in range(votes):
                params = {"temperature": 0 if votes == 1 else 1, "seed": v}
                k = key_of(judge.model, ask.task.name, ask.task.version, messages, params)
                if k not in self.jobs:
                    self.jobs[k] = _Job(ask.task, ask.values, messages, params, ask.ref, nbytes(messages))
                ks.append(k)
            self.keys_of.append(ks)
        self.timeouts_before = judge.status().timeouts  # a judge may serve several runs
        self.done: dict[str, Entry] = {}
        self.start_hits: set[str] = set()
        self.late_hits: set[str] = set()  #: landed meanwhile (another process asked them)
        self.unsent: set[str] = set()
        self.in_flight = self.started = 0  #: requests in flight now, and started so far
        self.solo: list[float] = []  #: seconds of the replies that came with nothing else in flight
        self.budget = Budget(max_cost, price)
        if max_cost is not None and price is not None:
            self.budget.ratio = cache.usage(judge.model)["tokens_per_byte"]

    async def go(self, progress: bool) -> tuple[list[Outcome], Tally]:
        tally, cache = self.tally, self.cache
        for k in self.jobs:
            hit = cache.get(k)
            if hit is not None and not (hit.undecided and self.retry_undecided):
                self.done[k] = hit
        self.start_hits = set(self.done)
        todo = [k for k in self.jobs if k not in self.done]
        can = self.judge.capabilities
        endpoint = self.judge.status().endpoint_id
        if can.dialects:
            self.judge.remember(cache.dialect(endpoint))
        bar = _Bar(progress, len(todo), tally)
        self.bar = bar
        tasks: list[asyncio.Future[Any]] = []
        try:
            todo = await self._probe(todo)
            sem = asyncio.Semaphore(self.concurrency)
            deferred: list[str] = []

            async def one(k: str) -> None:
                async with sem:
                    if await self._one(k) is BUSY:
                        deferred.append(k)

            tasks = [asyncio.ensure_future(one(k)) for k in todo]
            await asyncio.gather(*tasks)
            await self._wait_for_others(deferred)
        finally:  # a failure stops the others before the clients close (what finished is cached)
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            bar.close()
            await self.judge.aclose()
            self._keep_dialect()
            self._keep_rate()
            cache.flush(wait=True)
        status = self.judge.status()
        if can.rate_limited and status.lowest_concurrency is not None:
            tally.concurrency_low = min(self.concurrency, status.lowest_concurrency)
        tally.timeouts = status.timeouts - self.timeouts_before
        tally.cost = self.budget.spent
        return self._outcomes(), tally

    def _keep_dialect(self) -> None:
        """The dialect the judge found, kept for its endpoint (the next run need not detect it again)."""
        status = self.judge.status()
        if self.judge.capabilities.dialects and status.dialect is not None:
            self.cache.set_dialect(status.endpoint_id, status.dialect)

    def _keep_rate(self) -> None:
        """The server's serial rate (the median latency of the replies that came with nothing else in
        flight), kept for its endpoint: a dry run's estimate of time."""
        endpoint = self.judge.status().endpoint_id
        if endpoint and self.solo:
            ordered = sorted(self.solo)
            mid = len(ordered) // 2
            median = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
            self.cache.set_serial_rate(endpoint, median, len(ordered))

    async def _probe(self, todo: list[str]) -> list[str]:
        """Ask alone until one request gets a reply: its latency sets the timeout (unless given)."""
        judge = self.judge
        if not judge.capabilities.calibrated or not todo:
            return todo
        judge.begin_probe()
        while todo:
            k = todo.pop(0)
            t0 = time.perf_counter()
            got = await self._one(k, probe=True)
            if got is BUSY:
                await self._wait_for_others([k])
                continue
            if isinstance(got, Completion):
                self._keep_dialect()  # at once: a killed run's successor need not detect it again
                self._keep_rate()
                timeout = judge.calibrate(got.seconds or time.perf_counter() - t0)
                lat = got.seconds or time.perf_counter() - t0
                left = len(todo)
                if left:
                    eta = duration(left * lat)
                    self.notify(
                        f"first reply in {lat:.1f} s: timeout {timeout:g} s per request"
                        f"{'' if judge.status().timeout_given else ' (--timeout sets it)'}; {left} more to ask: about {eta} "
                        f"if the server answers one at a time (the serial rate of this first reply, sent alone), less if "
                        f"it serves {self.concurrency} at once"
                    )
                break
        return todo

    async def _one(self, k: str, probe: bool = False) -> Any:
        """Ask job ``k`` (cache claim, budget, request, repair turn, cache write)."""
        job = self.jobs[k]
        ttl = 2.0 * self.judge.status().timeout * (1 + self.parse_retries) + 60.0
        # a heuristic costs nothing to ask again: only a model's prompts are claimed across processes
        claim = True if self.judge.heuristic else self.cache.claim(k, ttl, self.retry_undecided)
        if claim is BUSY:
            return BUSY
        if isinstance(claim, Entry):
            self.done[k] = claim
            self.late_hits.add(k)
            self.bar.advance(self.budget.spent)
            return None
        reserve = await self.budget.reserve(job.nbytes, job.task.max_tokens)
        if reserve is None:
            self.unsent.add(k)
            if not self.judge.heuristic:
                self.cache.release(k)
            return None
        comps: list[Completion] = []
        seconds = 0.0
        alone, self.in_flight, self.started = self.in_flight == 0, self.in_flight + 1, self.started + 1
        first = self.started
        try:
            value, reason = await self._ask(job, comps)
        except ItemFailure as f:
            value, reason, seconds = None, f.reason, f.seconds
        finally:
            self.in_flight -= 1
            await self.budget.release(reserve)
        if alone and self.started == first:  # nothing else was in flight: the server's serial latency
            self.solo.extend(c.seconds for c in comps if c.seconds > 0)
        last = comps[-1] if comps else None
        pt = sum(c.prompt_tokens for c in comps)
        ct = sum(c.completion_tokens for c in comps)
        cost = sum(self.budget.cost_of(c) for c in comps)
        self.cache.put(
            k,
            model=self.judge.model,
            task=job.task.name,
            version=job.task.version,
            value=value,
            reply=last.text if last else None,
            prompt_tokens=pt,
            completion_tokens=ct,
            cost=cost,
            reason=reason,
            ref=job.ref,
            seconds=sum(c.seconds for c in comps) or seconds or None,
            prompt_bytes=job.nbytes,
        )
        self.done[k] = Entry(value, pt, ct, cost, reason)
        self.bar.advance(self.budget.spent)
        return comps[0] if comps else None

    async def _ask(self, job: _Job, comps: list[Completion]) -> tuple[Any, str | None]:
        messages = job.messages
        for attempt in range(self.parse_retries + 1):
            if attempt:
                more = await self.budget.reserve(nbytes(messages), job.task.max_tokens)
                if more is None:
                    return None, "the reply did not parse and the budget left no room for a repair turn"
            try:
                comp = await self.judge.complete(job.task, job.values, messages, job.params)
            finally:
                if attempt:
                    await self.budget.release(more)
            comps.append(comp)
            self.tally.requested += 1
            self.tally.prompt_tokens += comp.prompt_tokens
            self.tally.completion_tokens += comp.completion_tokens
            self.budget.spend(comp, nbytes(messages))
            if job.task.logprobs:
                return comp.utility, comp.undecided
            try:
                return job.task.parse(comp.text), None
            except ParseError as exc:
                problem = str(exc)
                messages = repair(job.task, job.messages, comp.text, problem)
        turns = "after a repair turn" if self.parse_retries else "(no repair turn)"
        return None, f"the reply is not the JSON object asked for, {turns}: {problem}"

    async def _wait_for_others(self, keys: list[str]) -> None:
        """Judgments another process claimed: wait until they land (or the claim lapses: then ask)."""
        if not keys:
            return
        self.notify(f"waiting for {len(keys)} judgments that another process sharing the cache is asking")
        while keys:
            await asyncio.sleep(0.2)
            left = []
            for k in keys:
                if await self._one(k) is BUSY:
                    left.append(k)
            keys = left

    def _outcomes(self) -> list[Outcome]:
        tally = self.tally
        reasons: Counter[str] = Counter()
        out: list[Outcome] = []
        agree = []
        for ks in self.keys_of:
            entries = [self.done.get(k) for k in ks]
            if any(e is None for e in entries):
                part = sum(e is not None for e in entries)
                why = f"after {part} of {len(entries)} votes (they are cached)" if part else "first"
                out.append(Outcome(UNSENT, reason=f"not sent: the budget stopped {why}"))
                continue
            got = [e for e in entries if e is not None]
            decided = [e.value for e in got if e.value is not None]
            if not decided:
                why = "; ".join(dict.fromkeys(e.reason or "undecided (no reason recorded)" for e in got))
                out.append(Outcome(UNDECIDED, reason=why))
                for e in got[:1]:
                    reasons[_kind(e.reason)] += 1
            elif isinstance(decided[0], float):
                out.append(Outcome(DECIDED, sum(decided) / len(decided)))
            else:
                counts = Counter(json.dumps(g, sort_keys=True) for g in decided).most_common()
                if len(counts) > 1 and counts[0][1] == counts[1][1]:
                    split = ", ".join(f"{json.loads(c)} x{n}" for c, n in counts)
                    out.append(Outcome(TIE, reason=f"the votes tie: {split}"))
                    reasons["votes tied"] += 1
                else:
                    out.append(Outcome(DECIDED, json.loads(counts[0][0])))
            if self.votes > 1 and decided:
                agree.append(len({json.dumps(g, sort_keys=True) for g in decided}) == 1)
        cached = self.start_hits | self.late_hits
        from_cache = [ks for ks in self.keys_of if all(k in cached for k in ks)]
        tally.asked = len(self.keys_of)
        tally.from_cache = len(from_cache)
        tally.cached_undecided = sum(all(self.done[k].undecided for k in ks) for ks in from_cache)
        tally.from_others = sum(any(k in self.late_hits for k in ks) for ks in self.keys_of)
        tally.decided = sum(o.status == DECIDED for o in out)
        tally.undecided = sum(o.status == UNDECIDED for o in out)
        tally.ties = sum(o.status == TIE for o in out)
        tally.not_sent = sum(o.status == UNSENT for o in out)
        tally.reasons = dict(reasons)
        if self.votes > 1 and agree:
            tally.unanimous = sum(agree) / len(agree)
        return out


def _kind(reason: str | None) -> str:
    """A short name for an undecided reason (the run's summary counts them)."""
    r = reason or ""
    for needle, kind in (
        ("not the JSON object", "replies not the JSON object asked for"),
        ("no reply within", "timed out (--timeout)"),
        ("HTTP 504", "timed out (--timeout)"),
        ("for its length", "prompts too long for the model"),
        ("NO-RESPONSE is not among", "utilities only bounded (NO-RESPONSE not among the top logprobs)"),
        ("budget", "repair turns the budget did not allow"),
    ):
        if needle in r:
            return kind
    return r if r else "undecided (no reason recorded)"


class _Bar:
    """A progress bar on stderr: judgments, rate, ETA and the running cost (only when asked)."""

    def __init__(self, on: bool, total: int, tally: Tally) -> None:
        self.progress = None
        if not on or total == 0:
            return
        self.priced = tally.priced
        self.progress = Progress(
            TextColumn("judging"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}/s"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[cost]}"),
            console=Console(file=sys.stderr),
            transient=True,
        )
        self.task = self.progress.add_task("judging", total=total, rate="-", cost="")
        self.progress.start()
        self.t0 = time.perf_counter()
        self.n = 0

    def advance(self, spent: float) -> None:
        if self.progress is None:
            return
        self.n += 1
        rate = self.n / max(time.perf_counter() - self.t0, 1e-9)
        self.progress.update(self.task, advance=1, rate=f"{rate:.1f}", cost=f"cost {spent:.4f}" if self.priced else "")

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
