"""The real-server fixture: llama.cpp's server with SmolLM2-135M-Instruct on 127.0.0.1, started once
per test session (when a test asks for it) and stopped at the end; skipped, with the reason printed at
the end of the run, only where the server's wheel cannot be installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_SKIPPED: list[str] = []


@pytest.fixture(scope="session")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    import llm_server

    why = llm_server.install()
    if why is not None:
        _SKIPPED.append(why)
        pytest.skip(f"no real llama.cpp server: {why}")
    server = llm_server.start(Path(tmp_path_factory.mktemp("llama-server")))
    try:
        yield server
    finally:
        server.stop()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _SKIPPED:
        terminalreporter.write_line(f"real-server tests skipped: {_SKIPPED[0]}", yellow=True)
