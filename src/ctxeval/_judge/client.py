"""The judges: an OpenAI-compatible chat-completions client (httpx, the ``judge`` extra) and an
offline lexical heuristic, behind one interface (:class:`Judge`).

The client sends ``POST {base_url}/chat/completions`` with the model, the messages, temperature,
seed, ``max_tokens`` (and ``logprobs`` / ``top_logprobs`` for utilities). It retries timeouts,
dropped or truncated connections, bodies that are not JSON, and HTTP 429 / 500 / 502 / 503 / 504,
with exponential backoff and full jitter (``uniform(0, base * 2**attempt)``, capped), never waiting
less than a ``Retry-After`` header asks; after the last retry it raises :class:`JudgeError` naming
the endpoint and the last failure. Other statuses (400, 401, 404, ...) fail at once. The API key
goes in the ``Authorization`` header only: it is never printed, logged, cached or written.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import os
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from .._errors import ConfigError, DependencyError, JudgeError
from .tasks import Task

__all__ = ["Completion", "Judge", "LexicalJudge", "OpenAIJudge"]

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Completion:
    """One reply: its text (or, for utilities, the utility itself), and the usage the server reports."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    utility: float | None = None


class Judge(Protocol):
    """Something that answers a task's rendered messages."""

    @property
    def model(self) -> str: ...

    @property
    def heuristic(self) -> bool:
        """True for a judge that is not a model (reports label its labels as heuristic)."""
        ...

    @property
    def describe(self) -> str: ...

    async def complete(
        self, task: Task, values: Mapping[str, str], messages: list[dict[str, str]], params: Mapping[str, Any]
    ) -> Completion: ...

    async def aclose(self) -> None: ...


# --- the lexical heuristic ------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "will",
        "with",
        "you",
        "your",
    ]
)


def _terms(text: str) -> set[str]:
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP}


def overlap(needle: str, haystack: str) -> float:
    """Share of ``needle``'s content words (lower-cased, stop words left out) found in ``haystack``;
    0 when it has none.

    >>> overlap("Where does arabica coffee grow?", "Arabica grows on high slopes; coffee likes shade.")
    0.666...
    """
    want = _terms(needle)
    return len(want & _terms(haystack)) / len(want) if want else 0.0


@dataclass(frozen=True)
class LexicalJudge:
    """The offline judge: word overlap instead of a model, for the demo, the tests and a first look.
    Its labels are a heuristic, and every report says so. Grade (1-5) = 1 + round(4 * overlap of the
    question's words in the passage); TREC grade = round(3 * overlap); utility = overlap; a claim or
    nugget is supported when >= 60 % of its words are in the passage (partially from 30 %); a
    passage is relevant to an answer when >= 30 % of the answer's words are in it; a response used a
    passage when >= 30 % of the passage's words are in the response; claims are the
    answer's sentences; nuggets the reference material's sentences (the first half vital)."""

    model: str = "lexical-1"
    heuristic: bool = True
    describe: str = "lexical word overlap (a heuristic, no model)"

    async def complete(
        self, task: Task, values: Mapping[str, str], messages: list[dict[str, str]], params: Mapping[str, Any]
    ) -> Completion:
        import json

        name = task.version
        if task.name == "grade" and name.startswith("grade-trec"):
            return Completion(json.dumps({"grade": round(3 * overlap(values["question"], values["passage"]))}))
        if task.name == "grade":
            return Completion(json.dumps({"grade": 1 + round(4 * overlap(values["question"], values["passage"]))}))
        if task.name == "utility":
            return Completion("", utility=overlap(values["question"], values["passage"]))
        if task.name == "claims-split":
            sents = _sentences(values["answer"])[:20]
            return Completion(json.dumps({"claims": sents}) if sents else "{}")
        if task.name == "claims-support":
            return Completion(json.dumps({"supported": overlap(values["claim"], values["passage"]) >= 0.6}))
        if task.name == "attribution":
            return Completion(json.dumps({"used": overlap(values["passage"], values["answer"]) >= 0.3}))
        if task.name == "relevance":
            return Completion(json.dumps({"relevant": overlap(values["answer"], values["passage"]) >= 0.3}))
        if task.name == "nuggets-create":
            sents = _sentences(values["context"])[:30]
            half = (len(sents) + 1) // 2
            return Completion(
                json.dumps(
                    {
                        "nuggets": [
                            {"text": s, "importance": "vital" if i < half else "okay"} for i, s in enumerate(sents)
                        ]
                    }
                )
                if sents
                else "{}"
            )
        if task.name == "nuggets-assign":
            o = overlap(values["nugget"], values["passage"])
            return Completion(
                json.dumps({"support": "support" if o >= 0.6 else "partial_support" if o >= 0.3 else "not_support"})
            )
        raise ConfigError(f"the lexical judge cannot do the task {task.name!r}")  # pragma: no cover

    async def aclose(self) -> None:
        return None


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if _terms(s)]


# --- the OpenAI-compatible client ---------------------------------------------------------------------


def _retry_after(value: str | None) -> float:
    """Seconds a ``Retry-After`` header asks to wait (delta-seconds or an HTTP date); 0 when absent."""
    if not value:
        return 0.0
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return 0.0
    return max(0.0, when.timestamp() - time.time())


@dataclass
class OpenAIJudge:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, Ollama,
    llama.cpp's server, ...). ``api_key`` defaults to ``$CTXEVAL_JUDGE_API_KEY``, then
    ``$OPENAI_API_KEY``; ``base_url`` to ``$CTXEVAL_JUDGE_URL``, then ``$OPENAI_BASE_URL``."""

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = 0.5  #: base of the exponential backoff, seconds
    backoff_cap: float = 30.0
    concurrency: int = 8
    heuristic: bool = False
    requests_sent: int = 0
    _client: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.base_url = (
            self.base_url or os.environ.get("CTXEVAL_JUDGE_URL") or os.environ.get("OPENAI_BASE_URL") or ""
        ).rstrip("/")
        if not self.base_url:
            raise ConfigError("the judge needs a server: --judge-url URL (or $CTXEVAL_JUDGE_URL), or --judge lexical")
        if not self.model:
            raise ConfigError("the judge needs a model name: --model NAME")
        if self.api_key is None:
            self.api_key = os.environ.get("CTXEVAL_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        try:
            import httpx  # noqa: F401
        except ImportError:
            raise DependencyError("the LLM judge (--judge openai)", "httpx", "judge") from None
        self._rng = random.Random()

    async def _acquire(self) -> Any:
        """A client with one connection of its own, from a pool of ``concurrency`` of them (one shared
        client's connection pool costs O(requests x connections) per request in httpcore, which made
        32 concurrent requests client-bound)."""
        import httpx

        if self._client is None:
            import ssl

            import certifi

            headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
            limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
            tls = ssl.create_default_context(cafile=certifi.where())  # one context, not one per client
            self._all = [
                httpx.AsyncClient(headers=headers, timeout=self.timeout, limits=limits, verify=tls)
                for _ in range(self.concurrency)
            ]
            self._client = asyncio.Queue()
            for c in self._all:
                self._client.put_nowait(c)
        return await self._client.get()

    @property
    def describe(self) -> str:
        return f"{self.model} at {self.endpoint}"

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    async def aclose(self) -> None:
        if self._client is not None:
            for c in self._all:
                await c.aclose()
            self._client = None

    async def complete(
        self, task: Task, values: Mapping[str, str], messages: list[dict[str, str]], params: Mapping[str, Any]
    ) -> Completion:
        import httpx

        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": task.max_tokens, **params}
        if task.logprobs:
            body.update(logprobs=True, top_logprobs=20)
        failure = ""
        for attempt in range(self.max_retries + 1):
            wait = 0.0
            client = await self._acquire()
            try:
                try:
                    self.requests_sent += 1
                    resp = await client.post(self.endpoint, json=body)
                    await resp.aread()
                except httpx.TimeoutException:
                    failure = f"timed out after {self.timeout:g} s"
                except httpx.TransportError as exc:
                    failure = f"connection failed ({type(exc).__name__})"
                else:
                    if resp.status_code == 200:
                        try:
                            data = resp.json()
                            return self._completion(task, data)
                        except (ValueError, KeyError, IndexError, TypeError):
                            failure = "a reply that is not a chat completion (malformed or truncated JSON)"
                    elif resp.status_code in RETRY_STATUS:
                        failure = f"HTTP {resp.status_code}"
                        wait = _retry_after(resp.headers.get("retry-after"))
                    else:
                        raise JudgeError(
                            f"{self.endpoint}: HTTP {resp.status_code} for model {self.model!r}: {_short(resp.text)}"
                        )
            finally:
                if self._client is not None:
                    self._client.put_nowait(client)
            if attempt == self.max_retries:
                break
            backoff = self._rng.uniform(0.0, min(self.backoff_cap, self.backoff * 2**attempt))
            await asyncio.sleep(max(wait, backoff))
        raise JudgeError(f"{self.endpoint}: {failure} (gave up after {self.max_retries + 1} attempts)")

    def _completion(self, task: Task, data: Mapping[str, Any]) -> Completion:
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        pt, ct = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        if task.logprobs:
            lp = (choice.get("logprobs") or {}).get("content") or []
            if not lp or not lp[0].get("top_logprobs"):
                raise JudgeError(
                    f"{self.endpoint}: model {self.model!r} returned no logprobs: utilities are "
                    "1 - P(first token is NO-RESPONSE) and need a server that returns top_logprobs"
                )
            return Completion(json_dumps(lp[0]["top_logprobs"]), pt, ct, utility=utility_of(lp[0]["top_logprobs"]))
        text = choice["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("no text")
        return Completion(text, pt, ct)


def utility_of(top: list[Mapping[str, Any]]) -> float:
    """u = 1 - P(the first token starts "NO-RESPONSE"): the probabilities of the top first tokens that
    are a prefix of NO-RESPONSE (blanks stripped), summed (Trappolini et al.'s utility, the UDCG
    paper's).

    >>> round(utility_of([{"token": "NO", "logprob": math.log(0.7)}, {"token": "Paris", "logprob": math.log(0.2)}]), 6)
    0.3
    """
    target = "NO-RESPONSE"
    p = sum(
        math.exp(float(t["logprob"]))
        for t in top
        if str(t.get("token", "")).strip() and target.startswith(str(t["token"]).strip())
    )
    return min(1.0, max(0.0, 1.0 - p))


def json_dumps(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."
