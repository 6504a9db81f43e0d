"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for the judge's tests: each
request goes to ``script(body, n)`` (``n``: the request's number, from 1), which returns a
:class:`Reply`; the server records every request body."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None  #: a dict (sent as JSON) or raw bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    truncate: bool = False  #: announce a longer body than sent, then close


def chat(content: str, prompt_tokens: int = 100, completion_tokens: int = 5) -> Reply:
    return Reply(
        body={
            "id": "x",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
        }
    )


def logprobs(top: dict[str, float]) -> Reply:
    return Reply(
        body={
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": next(iter(top))},
                    "logprobs": {
                        "content": [
                            {
                                "token": next(iter(top)),
                                "logprob": math.log(max(top.values())),
                                "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()],
                            }
                        ]
                    },
                }
            ],
            "usage": {"prompt_tokens": 50, "completion_tokens": 1},
        }
    )


class Server:
    def __init__(self, script: Callable[[dict[str, Any], int], Reply]) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms wait for a delayed ACK)

            def log_message(self, *a: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(n))
                with outer._lock:
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers))
                    count = len(outer.requests)
                reply = outer.script(body, count)
                if reply.delay:
                    time.sleep(reply.delay)
                raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw) + (50 if reply.truncate else 0)))
                if reply.truncate:
                    self.send_header("connection", "close")
                self.end_headers()
                try:
                    self.wfile.write(raw)
                    if reply.truncate:
                        self.wfile.flush()
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):  # the client gave up on this request
                    self.close_connection = True

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def user_text(body: dict[str, Any]) -> str:
    """The first user message (the prompt; a repair turn comes after it)."""
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def fenced(body: dict[str, Any], tag: str) -> str:
    text = user_text(body)
    start, end = text.index(f"<{tag}>\n") + len(tag) + 3, text.index(f"\n</{tag}>")
    return text[start:end]
