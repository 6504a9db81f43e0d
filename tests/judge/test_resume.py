"""A judge run killed with SIGKILL mid-way resumes with every finished judgment kept and none of them
requested again (the server counts its requests)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from judge_server import Reply, Server, chat, fenced


def _files(tmp: Path, n: int) -> tuple[Path, Path, Path]:
    run = tmp / "r.run"
    run.write_text("".join(f"q{i % 10} Q0 d{i} 1 {100 - i} r\n" for i in range(n)))
    queries = tmp / "q.tsv"
    queries.write_text("".join(f"q{i}\tquestion {i}?\n" for i in range(10)))
    passages = tmp / "p.tsv"
    passages.write_text("".join(f"d{i}\tpassage {i}\n" for i in range(n)))
    return run, queries, passages


def _cached(db: Path) -> set[str]:
    if not db.exists():
        return set()
    con = sqlite3.connect(str(db), timeout=5)
    try:
        return {r[0] for r in con.execute("SELECT reply FROM judgments")}
    except sqlite3.OperationalError:
        return set()
    finally:
        con.close()


def test_sigkill_mid_run_resumes_without_losing_or_repeating(tmp_path: Path) -> None:
    def script(body: dict[str, Any], n: int) -> Reply:
        i = int(fenced(body, "passage").split()[-1])
        reply = chat(json.dumps({"grade": 1 + i % 5}))
        reply.delay = 0.03
        return reply

    run, queries, passages = _files(tmp_path, 120)
    db = tmp_path / "cache.sqlite"
    out = tmp_path / "judged.qrels"
    with Server(script) as srv:
        cmd = [
            sys.executable, "-m", "ctxeval", "judge", "grade", str(run), "--queries", str(queries),
            "--passages", str(passages), "--depth", "20", "--judge-url", srv.url, "--model", "m",
            "--cache", str(db), "--concurrency", "4", "-q", "-o", str(out),
        ]  # fmt: skip
        env = {**os.environ, "CTXEVAL_JUDGE_API_KEY": "k"}
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while len(srv.requests) < 40 and time.time() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        first = len(srv.requests)
        con = sqlite3.connect(str(db), timeout=5)
        kept = {r[0] for r in con.execute("SELECT key FROM judgments")}
        con.close()
        assert 30 <= len(kept) < 120 and not out.exists()
        asked_before = [fenced(b, "passage") for b in srv.requests]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        asked_after = [fenced(b, "passage") for b in srv.requests[first:]]
    # every judgment finished before the kill is kept and not asked again; only those in flight
    # (at most the concurrency) are asked twice
    assert len(asked_after) == 120 - len(kept)
    assert len(set(asked_before) & set(asked_after)) <= 4
    assert f"{len(kept)} from the cache, {120 - len(kept)} requested" in done.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 120
    assert {ln.split()[2]: int(ln.split()[3]) for ln in lines} == {f"d{i}": 1 + i % 5 for i in range(120)}
