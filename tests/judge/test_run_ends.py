"""How a judging run ends and what it leaves: --report whatever ends it (a timeout, a failure, the
budget), with the reason; the dry run's time from the server's serial rate, measured on replies that
came with nothing else in flight (not from cached latencies, which include queueing)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxeval._judge.cache import Cache
from ctxeval._judge.client import endpoint_id
from judge_server import Reply, Server, chat


def _files(tmp: Path, n: int) -> list[str]:
    (tmp / "r.run").write_text("".join(f"q{i % 5} Q0 d{i} 1 {100 - i} r\n" for i in range(n)))
    (tmp / "q.tsv").write_text("".join(f"q{i}\tquestion {i}?\n" for i in range(5)))
    (tmp / "p.tsv").write_text("".join(f"d{i}\tpassage {i}\n" for i in range(n)))
    return [str(tmp / "r.run"), "--queries", str(tmp / "q.tsv"), "--passages", str(tmp / "p.tsv"), "--depth", "50"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CTXEVAL_JUDGE_API_KEY": "k"}
    return subprocess.run(
        [sys.executable, "-m", "ctxeval", *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_a_run_stopped_by_its_timeout_writes_the_report_with_the_reason(tmp_path: Path) -> None:
    """The issue's case: a server slower than --timeout; three timeouts in a row stop the run (exit 2).
    Before, no --report was written although asked for; now it is, saying why the run ended."""

    def slow(body: dict[str, Any], n: int) -> Reply:
        return Reply(200, chat('{"grade": 3}').body, delay=1.0)

    report = tmp_path / "r.json"
    with Server(slow) as srv:
        done = _cli("judge", "grade", *_files(tmp_path, 6), "--judge-url", srv.url, "--model", "m", "--cache",
                    str(tmp_path / "c.sqlite"), "--timeout", "0.2", "--concurrency", "1", "--max-retries", "0",
                    "-q", "--report", str(report), "-o", str(tmp_path / "o"))  # fmt: skip
    assert done.returncode == 2, done.stderr
    doc = json.loads(report.read_text())
    assert doc["ended"].startswith("failed: ") and "raise --timeout" in doc["ended"]
    assert "the same command asks only the rest" in doc["kept"]
    assert not (tmp_path / "o").exists()


def test_a_finished_run_and_a_budget_stop_say_how_they_ended(tmp_path: Path) -> None:
    with Server(lambda body, n: chat(json.dumps({"grade": 2}), prompt_tokens=100, completion_tokens=5)) as srv:
        base = [*_files(tmp_path, 6), "--judge-url", srv.url, "--model", "m", "-q"]
        ok = _cli("judge", "grade", *base, "--cache", str(tmp_path / "a"), "--report", str(tmp_path / "a.json"),
                  "-o", str(tmp_path / "a.qrels"))  # fmt: skip
        broke = _cli("judge", "grade", *base, "--cache", str(tmp_path / "b"), "--report", str(tmp_path / "b.json"),
                     "--price", "m=1/1", "--max-cost", "0", "-o", str(tmp_path / "b.qrels"))  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "a.json").read_text())["ended"] == "finished"
    assert broke.returncode == 2
    ended = json.loads((tmp_path / "b.json").read_text())["ended"]
    assert ended.startswith("failed: no grades to write (6 not sent (the budget))")


@pytest.mark.slow  # about 10 s: a server that answers one request at a time
def test_the_dry_run_estimates_time_from_the_serial_rate(tmp_path: Path) -> None:
    """A server that answers one request at a time in 0.5 s: 4 requests in flight each wait behind the
    others (about 2 s each, the latency a cache records), so an estimate from cached latencies is 4x
    too long. The run keeps the latency of the replies that came alone (the first one, sent alone to
    set the timeout): the dry run's time is that rate times the requests, and says so."""
    import threading

    lock = threading.Lock()

    def serial(body: dict[str, Any], n: int) -> Reply:
        with lock:  # one at a time, like llama.cpp's server with one slot
            import time

            time.sleep(0.5)
        return chat(json.dumps({"grade": 2}))

    db = tmp_path / "c.sqlite"
    with Server(serial) as srv:
        first = _cli("judge", "grade", *_files(tmp_path, 24)[:-1], "3", "--judge-url", srv.url, "--model", "m",
                     "--cache", str(db), "--concurrency", "4", "-q", "-o", str(tmp_path / "o"))  # fmt: skip
        assert first.returncode == 0, first.stderr
        dry = _cli("judge", "grade", *_files(tmp_path, 24), "--judge-url", srv.url, "--model", "m", "--cache",
                   str(db), "--dry-run", "--report", str(tmp_path / "plan.json"))  # fmt: skip
        url = srv.url
    assert dry.returncode == 0, dry.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())["dry_run"]
    with Cache(db) as cache:
        rate = cache.serial_rate(endpoint_id(url, "m"))
        cached = cache.usage("m")["seconds"]
    assert rate is not None and 0.45 <= rate[0] <= 1.5 and rate[1] >= 1
    assert cached > 1.5 * rate[0]  # the cached latencies include the wait behind the others
    assert plan["to_ask"] == 9 and abs(plan["seconds_one_at_a_time"] - 9 * rate[0]) < 1e-9
    assert "at the server's serial rate (" in dry.stderr and "with nothing else in flight, measured on" in dry.stderr
