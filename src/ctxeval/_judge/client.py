"""The judges: an OpenAI-compatible chat-completions client (httpx, the ``judge`` extra) and an
offline lexical heuristic, behind one interface (:class:`Judge`).

The client sends ``POST {base_url}/chat/completions`` with the model, the messages, temperature,
seed, ``max_tokens`` (and ``logprobs`` / ``top_logprobs`` for utilities).

**Structured replies.** A task with a JSON schema sends it in the dialect the server speaks:
``json_schema`` (``{"type": "json_schema", "json_schema": {"name", "schema", "strict"}}``: OpenAI,
vLLM, llama.cpp's ``llama-server``), ``json_object`` (``{"type": "json_object", "schema": ...}``:
llama-cpp-python's server) or ``format`` (``"format": schema``: Ollama). ``structured="auto"``
detects it on the first request, in that order: a dialect the server refuses (HTTP 400/422) or
ignores (a reply that is not a JSON object) gives way to the next one, and without any the prompt
alone asks for the object. The detected dialect is kept for the endpoint (and in the cache, for the
next run). ``"schema"`` / ``"json"`` force ``json_schema`` / ``json_object``; ``"off"`` sends none.

**Failures.** Retried, with exponential backoff and full jitter (``uniform(0, base * 2**attempt)``,
capped), never waiting less than a ``Retry-After`` header asks: refused connections, dropped or
truncated replies, bodies that are not JSON, HTTP 429 / 500 / 502 / 503. *Not* retried: a request
that timed out waiting for its reply, or an HTTP 504 (the server may still be working on it, and a
resend would queue a second generation behind it); it is that judgment's undecided reason. So is a
prompt the server refuses for its length (HTTP 400 ``context_length_exceeded``, "you requested N
tokens"): the batch goes on. Any other status fails at once (:class:`JudgeError`, naming the
endpoint, never the key). The API key goes in the ``Authorization`` header only: it is never printed,
logged, cached or written.

**Concurrency adapts** (additive increase, multiplicative decrease, as Arize Phoenix's evaluators and
TCP do): at most ``concurrency`` requests in flight; an HTTP 429 / 503 or a timeout halves the limit,
and it grows back by one after as many successes in a row as the limit.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import math
import os
import random
import re
import ssl
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._errors import ConfigError, DependencyError, JudgeError
from .interface import BaseJudge, Capabilities, Completion, ItemFailure, Judge, JudgeStatus, LexicalJudge
from .prompt import Task
from .reply import json_object

__all__ = [
    "Completion",
    "ItemFailure",
    "Judge",
    "LexicalJudge",
    "Limiter",
    "OpenAIJudge",
    "endpoint_id",
    "utility_of",
]

RETRY_STATUS = frozenset({429, 500, 502, 503})
DIALECTS = ("json_schema", "json_object", "format")
STRUCTURED = {"auto": DIALECTS, "schema": ("json_schema",), "json": ("json_object",), "off": ()}
_LENGTH = re.compile(
    r"context_length_exceeded|maximum context length|context window|you requested \d+ tokens|"
    r"exceeds? the (?:model'?s? )?(?:maximum )?context|prompt is too long|too many tokens",
    re.IGNORECASE,
)
_FORMAT = re.compile(r"response_format|json_schema|json_object|\bformat\b|\bschema\b", re.IGNORECASE)


# --- adaptive concurrency -----------------------------------------------------------------------------


class Limiter:
    """At most ``limit`` holders at once; :meth:`backoff` halves the limit, :meth:`success` grows it
    by one after ``limit`` successes in a row, up to ``most``."""

    def __init__(self, most: int) -> None:
        self.most = self.limit = self.lowest = most
        self.live = 0
        self.ok = 0
        self.backoffs = 0
        self._cond: asyncio.Condition | None = None

    def reset_loop(self) -> None:
        self._cond = None
        self.live = 0

    @property
    def cond(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def __aenter__(self) -> Limiter:
        async with self.cond:
            await self.cond.wait_for(lambda: self.live < self.limit)
            self.live += 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        async with self.cond:
            self.live -= 1
            self.cond.notify_all()

    def backoff(self) -> None:
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)
        self.ok = 0
        self.backoffs += 1

    def success(self) -> None:
        self.ok += 1
        if self.ok >= self.limit and self.limit < self.most:
            self.limit += 1  # the waiters see it when the holder that called this leaves (notify_all)
            self.ok = 0


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


def endpoint_id(base_url: str, model: str) -> str:
    """What an endpoint's dialect and serial rate are kept under: its chat-completions URL and the
    model, hashed (a dry run computes it without a client)."""
    endpoint = f"{base_url.rstrip('/')}/chat/completions"
    return hashlib.sha256(f"{endpoint}\n{model}".encode()).hexdigest()


def structured_fields(dialect: str, task: Task) -> dict[str, Any]:
    """The request fields that ask for ``task``'s schema in ``dialect``.

    >>> from ctxeval._judge.tasks import TASKS
    >>> structured_fields("json_object", TASKS["grade"])["response_format"]["type"]
    'json_object'
    """
    schema = dict(task.schema or {})
    if dialect == "json_schema":
        name = re.sub(r"[^a-zA-Z0-9_-]", "_", task.name)
        return {
            "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
        }
    if dialect == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if dialect == "format":
        return {"format": schema}
    return {}


@dataclass
class OpenAIJudge(BaseJudge):
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, Ollama,
    llama.cpp's server, ...). ``api_key`` defaults to ``$CTXEVAL_JUDGE_API_KEY``, then
    ``$OPENAI_API_KEY``; ``base_url`` to ``$CTXEVAL_JUDGE_URL``, then ``$OPENAI_BASE_URL``.
    ``timeout`` None: set from the first reply's latency (:meth:`calibrate`), 60 s until then."""

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float | None = None
    max_retries: int = 5
    backoff: float = 0.5  #: base of the exponential backoff, seconds
    backoff_cap: float = 30.0
    concurrency: int = 8
    structured: str = "auto"
    heuristic: bool = False
    requests_sent: int = 0
    dialect: str | None = None  #: the structured-output dialect in use ("" for none), once known
    _client: Any = field(default=None, repr=False)

    capabilities = Capabilities(dialects=True, rate_limited=True, timeouts=True, calibrated=True)

    def __post_init__(self) -> None:
        self.base_url = (
            self.base_url or os.environ.get("CTXEVAL_JUDGE_URL") or os.environ.get("OPENAI_BASE_URL") or ""
        ).rstrip("/")
        if not self.base_url:
            raise ConfigError("the judge needs a server: --judge-url URL (or $CTXEVAL_JUDGE_URL), or --judge lexical")
        if not self.model:
            raise ConfigError("the judge needs a model name: --model NAME")
        if self.structured not in STRUCTURED:
            raise ConfigError(f"--structured must be one of {', '.join(STRUCTURED)}, got {self.structured!r}")
        if self.api_key is None:
            self.api_key = os.environ.get("CTXEVAL_JUDGE_API_KEY") or os.environ.get("OPENAI_API_KEY")
        try:
            import httpx  # noqa: F401
        except ImportError:
            raise DependencyError("the LLM judge (--judge openai)", "httpx", "judge") from None
        self._rng = random.Random()
        self.timeout_given = self.timeout is not None
        self.timeout = 60.0 if self.timeout is None else float(self.timeout)
        self.limiter = Limiter(self.concurrency)
        self.timeouts = 0  #: requests that got no reply in time (none resent)
        self._in_a_row = 0
        if self.structured == "off":
            self.dialect = ""
        elif self.structured != "auto":
            self.dialect = STRUCTURED[self.structured][0]

    # --- what the runner reads and sets ---------------------------------------------------------------

    @property
    def describe(self) -> str:
        return f"{self.model} at {self.endpoint}"

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    @property
    def endpoint_id(self) -> str:
        """What the detected dialect is kept under (the endpoint and the model, hashed)."""
        return endpoint_id(self.base_url or "", self.model)

    def status(self) -> JudgeStatus:
        return JudgeStatus(
            self.endpoint_id,
            self.dialect,
            float(self.timeout or 60.0),
            self.timeout_given,
            self.timeouts,
            self.limiter.lowest,
        )

    def remember(self, dialect: str | None) -> None:
        """A dialect detected by an earlier run (tried first under ``auto``)."""
        if self.structured == "auto" and self.dialect is None and dialect is not None:
            self.dialect = dialect

    def calibrate(self, seconds: float) -> float:
        """Set the timeout from the first reply's latency, unless one was given: 3 x that latency x
        the requests in flight (a server that answers one at a time queues them), at least 60 s."""
        if not self.timeout_given:
            self.timeout = float(max(60, math.ceil(3.0 * seconds * self.concurrency)))
        return float(self.timeout or 60.0)

    def probe_timeout(self) -> float:
        """The first request's timeout: the one given, else 300 s (nothing is known yet)."""
        return float(self.timeout or 60.0) if self.timeout_given else max(300.0, float(self.timeout or 0.0))

    def begin_probe(self) -> float:
        """Wait :meth:`probe_timeout` for the first reply (:meth:`calibrate` sets the timeout after it)."""
        self.timeout = self.probe_timeout()
        return self.timeout

    async def _acquire(self) -> Any:
        """A client with one connection of its own, from a pool of ``concurrency`` of them (one shared
        client's connection pool costs O(requests x connections) per request in httpcore, which made
        32 concurrent requests client-bound)."""
        import httpx

        if self._client is None:
            import certifi  # httpx's own dependency (the judge extra)

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

    async def aclose(self) -> None:
        if self._client is not None:
            for c in self._all:
                await c.aclose()
            self._client = None
        self.limiter.reset_loop()

    # --- one judgment -------------------------------------------------------------------------------

    async def complete(
        self,
        task: Task,
        values: Mapping[str, str],
        messages: list[dict[str, str]],
        params: Mapping[str, Any],
        timeout: float | None = None,
    ) -> Completion:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": task.max_tokens, **params}
        if task.logprobs:
            body.update(logprobs=True, top_logprobs=20)
        if task.schema is None or self.dialect == "":
            return await self._send(task, body, timeout)
        if self.dialect is not None:
            try:
                return await self._send(task, {**body, **structured_fields(self.dialect, task)}, timeout)
            except _Refused:
                if self.structured != "auto":
                    raise JudgeError(
                        f"{self.endpoint}: the server refuses --structured {self.structured} "
                        f"({self.dialect}); try --structured auto or off"
                    ) from None
                self.dialect = None
        return await self._detect(task, body, timeout)

    async def _detect(self, task: Task, body: dict[str, Any], timeout: float | None) -> Completion:
        """Try each dialect in turn on this request; keep the first the server follows."""
        last: Completion | None = None
        for dialect in STRUCTURED["auto"]:
            try:
                comp = await self._send(task, {**body, **structured_fields(dialect, task)}, timeout)
            except _Refused:
                continue
            if json_object(comp.text) is not None:
                self.dialect = dialect
                return comp
            last = comp
        self.dialect = ""
        return last if last is not None else await self._send(task, body, timeout)

    async def _send(self, task: Task, body: dict[str, Any], timeout: float | None) -> Completion:
        import httpx

        failure = ""
        wait_for = float(timeout or self.timeout or 60.0)
        structured = "format" in body or "response_format" in body
        for attempt in range(self.max_retries + 1):
            wait = 0.0
            async with self.limiter:
                client = await self._acquire()
                t0 = time.perf_counter()
                try:
                    try:
                        self.requests_sent += 1
                        resp = await client.post(self.endpoint, json=body, timeout=wait_for)
                        await resp.aread()
                    except (httpx.ReadTimeout, httpx.WriteTimeout):
                        self._timed_out()
                        raise ItemFailure(
                            f"no reply within {wait_for:g} s (--timeout); not asked again, since the server "
                            "may still be working on it",
                            time.perf_counter() - t0,
                        ) from None
                    except httpx.TimeoutException:
                        failure = f"could not connect within {wait_for:g} s"
                    except httpx.TransportError as exc:
                        failure = f"connection failed ({type(exc).__name__})"
                    else:
                        seconds = time.perf_counter() - t0
                        if resp.status_code == 200:
                            try:
                                comp = self._completion(task, resp.json(), seconds)
                            except (ValueError, KeyError, IndexError, TypeError):
                                failure = "a reply that is not a chat completion (malformed or truncated JSON)"
                            else:
                                self.limiter.success()
                                self._in_a_row = 0
                                return comp
                        elif resp.status_code in (400, 413, 422) and _LENGTH.search(resp.text):
                            raise ItemFailure(
                                f"the server refused the prompt for its length: {_message(resp.text)}", seconds
                            )
                        elif structured and resp.status_code in (400, 422, 500) and _FORMAT.search(resp.text):
                            raise _Refused()  # llama-cpp-python answers an unknown dialect with HTTP 500
                        elif resp.status_code in RETRY_STATUS:
                            failure = f"HTTP {resp.status_code}"
                            wait = _retry_after(resp.headers.get("retry-after"))
                            if resp.status_code in (429, 503):
                                self.limiter.backoff()
                        elif resp.status_code == 504:
                            self._timed_out()
                            raise ItemFailure(
                                f"HTTP 504 from the server after {seconds:.1f} s (a gateway timed out; not asked "
                                "again, since the model may still be working on it; --timeout)",
                                seconds,
                            )
                        else:
                            self._refusal(resp, seconds)
                finally:
                    if self._client is not None:
                        self._client.put_nowait(client)
            if attempt == self.max_retries:
                break
            backoff = self._rng.uniform(0.0, min(self.backoff_cap, self.backoff * 2**attempt))
            await asyncio.sleep(max(wait, backoff))
        raise JudgeError(f"{self.endpoint}: {failure} (gave up after {self.max_retries + 1} attempts)")

    def _timed_out(self) -> None:
        self.limiter.backoff()
        self.timeouts += 1
        self._in_a_row += 1
        if self._in_a_row >= 3 and self.limiter.limit == 1:
            raise JudgeError(
                f"{self.endpoint}: {self._in_a_row} requests in a row got no reply within {self.timeout:g} s, one at a "
                "time: the server is stuck or far slower than that; raise --timeout (none of them was sent twice)"
            )

    def _refusal(self, resp: Any, seconds: float) -> None:
        text = resp.text
        raise JudgeError(f"{self.endpoint}: HTTP {resp.status_code} for model {self.model!r}: {_short(text)}")

    def _completion(self, task: Task, data: Mapping[str, Any], seconds: float) -> Completion:
        choice = data["choices"][0]
        usage = data.get("usage") or {}
        pt, ct = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        if task.logprobs:
            top = first_token_logprobs(choice.get("logprobs"))
            if not top:
                raise JudgeError(
                    f"{self.endpoint}: model {self.model!r} returned no logprobs: utilities are "
                    "1 - P(first token is NO-RESPONSE) and need a server that returns top_logprobs"
                )
            u, why = utility_bound(top)
            return Completion(json_dumps(top), pt, ct, utility=u, seconds=seconds, undecided=why)
        text = choice["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("no text")
        return Completion(text, pt, ct, seconds=seconds)


class _Refused(Exception):
    """The server refused the structured-output dialect of the request."""


def first_token_logprobs(lp: Any) -> list[dict[str, Any]]:
    """The first generated token's top alternatives as ``[{token, logprob}]``, from either shape:
    chat (``{content: [{token, logprob, top_logprobs: [{token, logprob}]}]}``: OpenAI, vLLM) or
    completions (``{tokens, token_logprobs, top_logprobs: [{token: logprob}]}``: llama-cpp-python).

    >>> first_token_logprobs({"tokens": ["NO"], "top_logprobs": [{"NO": -0.1, "Yes": -2.5}]})
    [{'token': 'NO', 'logprob': -0.1}, {'token': 'Yes', 'logprob': -2.5}]
    """
    if not isinstance(lp, Mapping):
        return []
    content = lp.get("content")
    if isinstance(content, list) and content and isinstance(content[0], Mapping):
        top = content[0].get("top_logprobs") or []
        return [{"token": str(t["token"]), "logprob": float(t["logprob"])} for t in top if t.get("logprob") is not None]
    tops = lp.get("top_logprobs")
    if isinstance(tops, list) and tops and isinstance(tops[0], Mapping):
        return [{"token": str(t), "logprob": float(v)} for t, v in tops[0].items() if v is not None]
    return []


def _prefix(token: str) -> bool:
    t = token.strip()
    return bool(t) and "NO-RESPONSE".startswith(t)


def utility_of(top: Sequence[Mapping[str, Any]]) -> float:
    """u = 1 - P(the first token starts "NO-RESPONSE"): the probabilities of the top first tokens that
    are a prefix of NO-RESPONSE (blanks stripped), summed (Trappolini et al.'s utility, the UDCG
    paper's). When none of them is, that sum is unknown, not 0: see :func:`utility_bound`.

    >>> round(utility_of([{"token": "NO", "logprob": math.log(0.7)}, {"token": "Paris", "logprob": math.log(0.2)}]), 6)
    0.3
    """
    p = sum(math.exp(float(t["logprob"])) for t in top if _prefix(str(t.get("token", ""))))
    return min(1.0, max(0.0, 1.0 - p))


def utility_bound(top: Sequence[Mapping[str, Any]]) -> tuple[float | None, str | None]:
    """``(u, None)`` when a prefix of NO-RESPONSE is among the top first tokens; else ``(None, why)``:
    its probability is then only known to be at most the mass the list leaves out, so u is a lower
    bound (``u >= 1 - that mass``), never 1.

    >>> utility_bound([{"token": "Paris", "logprob": math.log(0.9)}])
    (None, 'NO-RESPONSE is not among the top 1 first tokens: u >= 0.9000 only (a bound, not a value)')
    """
    if any(_prefix(str(t.get("token", ""))) for t in top):
        return utility_of(top), None
    listed = min(1.0, sum(math.exp(float(t["logprob"])) for t in top))
    return None, (
        f"NO-RESPONSE is not among the top {len(top)} first tokens: u >= {listed:.4f} only (a bound, not a value)"
    )


def json_dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _message(text: str) -> str:
    try:
        doc = json.loads(text)
        err = doc.get("error", doc) if isinstance(doc, dict) else doc
        msg = err.get("message") if isinstance(err, dict) else err
        return _short(str(msg))
    except ValueError:
        return _short(text)


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 200 else text[:197] + "..."
