"""The judge interface: what the runner needs of a judge, and a frozen value saying what else it does.

A judge answers a task's rendered messages (:meth:`Judge.complete`) and declares, once, in its
:class:`Capabilities`, what it does beyond that: remember the structured-output dialect its server
speaks, adapt its concurrency when the server pushes back, time requests out, set its timeout from
the first reply (the runner then sends that request alone). The runner reads the declaration and the
judge's :class:`JudgeStatus`; it never probes a judge for attributes. (httpx's transports are the
model: one protocol, and a base class, :class:`BaseJudge`, that gives every optional part a default.)

>>> LexicalJudge().capabilities
Capabilities(dialects=False, rate_limited=False, timeouts=False, calibrated=False)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from .prompt import Task

__all__ = ["BaseJudge", "Capabilities", "Completion", "ItemFailure", "Judge", "JudgeStatus", "LexicalJudge"]


@dataclass(frozen=True)
class Capabilities:
    """What a judge does beyond answering (all False: it answers, and that is all)."""

    dialects: bool = False  #: detects the structured-output dialect of its endpoint (the runner keeps it in the cache)
    rate_limited: bool = False  #: adapts the requests in flight to the server's push-back
    timeouts: bool = False  #: its requests can time out (counted; none is sent twice)
    calibrated: bool = False  #: sets its timeout from the first reply's latency (the runner sends that one alone)


@dataclass(frozen=True)
class JudgeStatus:
    """A judge's state as the runner reads it: the endpoint its dialect is kept under ("" for none),
    the dialect in use (None: not known yet; "" none), the timeout and whether it was given, the
    requests timed out so far, and the lowest concurrency the server pushed it down to (None: it
    does not adapt)."""

    endpoint_id: str = ""
    dialect: str | None = None
    timeout: float = 60.0
    timeout_given: bool = False
    timeouts: int = 0
    lowest_concurrency: int | None = None


@dataclass(frozen=True)
class Completion:
    """One reply: its text (or, for utilities, the utility itself), the usage the server reports, the
    seconds it took, and (``undecided``) why the reply gives no value although it came."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    utility: float | None = None
    seconds: float = 0.0
    undecided: str | None = None


class ItemFailure(Exception):
    """One judgment cannot be had (timed out, too long for the model): it is undecided for this
    reason, and the batch goes on."""

    def __init__(self, reason: str, seconds: float = 0.0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.seconds = seconds


class Judge(Protocol):
    """Something that answers a task's rendered messages, and declares what else it does."""

    @property
    def model(self) -> str: ...

    @property
    def heuristic(self) -> bool:
        """True for a judge that is not a model (reports label its labels as heuristic)."""
        ...

    @property
    def describe(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def status(self) -> JudgeStatus: ...

    def remember(self, dialect: str | None) -> None:
        """A dialect an earlier run detected for :attr:`JudgeStatus.endpoint_id` (``dialects``)."""
        ...

    def begin_probe(self) -> float:
        """Set and return the first request's timeout, before anything is known (``calibrated``)."""
        ...

    def calibrate(self, seconds: float) -> float:
        """Set the timeout from the first reply's latency, unless one was given; the timeout (``calibrated``)."""
        ...

    async def complete(
        self, task: Task, values: Mapping[str, str], messages: list[dict[str, str]], params: Mapping[str, Any]
    ) -> Completion: ...

    async def aclose(self) -> None: ...


class BaseJudge:
    """Defaults for every optional part of :class:`Judge` (a judge that only answers subclasses this
    and gives ``model``, ``heuristic``, ``describe`` and ``complete``)."""

    capabilities = Capabilities()

    def status(self) -> JudgeStatus:
        return JudgeStatus()

    def remember(self, dialect: str | None) -> None:
        return None

    def begin_probe(self) -> float:
        return self.status().timeout

    def calibrate(self, seconds: float) -> float:
        return self.status().timeout

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True)
class LexicalJudge(BaseJudge):
    """The offline judge: each task's word-overlap rule (:mod:`.tasks`) instead of a model, for the
    demo, the tests and a first look. Its labels are a heuristic, and every report says so."""

    model: str = "lexical-1"
    heuristic: bool = True
    describe: str = "lexical word overlap (a heuristic, no model)"

    async def complete(
        self, task: Task, values: Mapping[str, str], messages: list[dict[str, str]], params: Mapping[str, Any]
    ) -> Completion:
        value = task.offline(values)
        if task.logprobs:
            return Completion("", utility=value)
        return Completion(json.dumps(value) if value is not None else "{}")
