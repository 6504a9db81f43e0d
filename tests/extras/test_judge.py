"""ctxeval[judge] alone: ``ctxeval judge grade`` against an OpenAI-compatible server on 127.0.0.1
(a scripted one: a stdlib HTTP server that grades each passage by the digit its text ends with)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import ctxeval_by_path


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = " ".join(str(m.get("content", "")) for m in body["messages"])
        grade = int(re.findall(r"passage worth (\d)", prompt)[-1])
        reply = {
            "id": "x",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": json.dumps({"grade": grade})},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


def test_judge_grades_through_httpx(tmp_path: Path, server: str) -> None:
    want = {("q1", "c1"): 4, ("q1", "c2"): 1, ("q2", "c3"): 5}
    samples = [
        {
            "query_id": "q1",
            "question": "What is one?",
            "retrieved": [{"id": "c1", "text": "a passage worth 4"}, {"id": "c2", "text": "a passage worth 1"}],
        },
        {"query_id": "q2", "question": "What is two?", "retrieved": [{"id": "c3", "text": "a passage worth 5"}]},
    ]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    done = ctxeval_by_path(
        "judge",
        "grade",
        "--samples",
        "s.jsonl",
        "--judge-url",
        server,
        "--model",
        "m",
        "--quiet",
        "--cache",
        str(tmp_path / "cache.sqlite"),
        "-o",
        "judged.qrels",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    got = {}
    for line in (tmp_path / "judged.qrels").read_text().splitlines():
        q, _, d, g = line.split()
        got[(q, d)] = int(g)
    assert got == want
