"""The judge against scripted servers on 127.0.0.1 for the failures a real server cannot be made to
show on demand: push-back (429), timeouts, a budget, two judges on one cache, a locked, read-only or
damaged cache, outputs that would overwrite an input, prompts refused for their length, both logprob
shapes, structured-output dialects, and the dry run."""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ctxeval import JudgeError
from ctxeval._judge.cache import Cache
from ctxeval._judge.client import OpenAIJudge, endpoint_id
from ctxeval._judge.runner import Ask, Prices, judge_many
from ctxeval._judge.tasks import TASKS
from judge_server import Reply, Server, chat, fenced


def _judge(server: Server, **kw: Any) -> OpenAIJudge:
    return OpenAIJudge("m", base_url=server.url, api_key="k", backoff=0.01, **kw)


def _asks(n: int, task: str = "grade", text: str = "passage") -> list[Ask]:
    return [
        Ask(
            TASKS[task],
            {"question": f"question {i}?", "passage": f"{text} {i}"},
            {"query_id": f"q{i}", "doc_id": f"d{i}"},
        )
        for i in range(n)
    ]


def _grade(body: dict[str, Any]) -> Reply:
    i = int(fenced(body, "passage").split()[-1])
    return chat(json.dumps({"grade": 1 + i % 5}))


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


# --- servers as they are -------------------------------------------------------------------------------


def test_concurrency_halves_on_429_and_grows_back() -> None:
    """The server takes 2 requests at once and answers 429 (no Retry-After) beyond that for its first
    60 requests, then takes any number. The limit halves from 8 to 2 or less on the 429s, and grows back to
    8 once the server stops pushing back; every judgment is right.

    No clock decides what the server sees: in its first 60 requests (after the probe, which the client
    sends alone) the server holds the requests it takes while the client's limit is above 2, so a third
    one always arrives and is refused; after them it holds each request until every one the client may
    have in flight (its limit, or the judgments left) has arrived, so the requests in flight at the
    server are the client's limit. (Holding past 20 s releases them: the test fails, it does not hang.)"""
    asks = 150
    live, seen, done = [0], [0], [0]  # in flight at the server, requests seen, judgments answered
    lock = threading.Lock()
    peaks: list[int] = []
    clients: list[OpenAIJudge] = []

    def hold_until(ready: Any) -> None:
        deadline = time.monotonic() + 20.0
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.001)  # looked at without the lock, which the requests arriving take

    def script(body: dict[str, Any], n: int) -> Reply:
        limiter = clients[0].limiter
        with lock:
            live[0] += 1
            seen[0] = max(seen[0], n)
            busy = live[0] > 2 and n <= 60
            peaks.append(live[0])
        try:
            if busy:
                return Reply(429, {"error": "slow down"})
            if 1 < n <= 60:  # it takes two: holds them while the client may send more (not the probe, sent alone)
                hold_until(lambda: limiter.limit <= 2 or seen[0] > 60)
            elif n > 60:  # all the client may send, in flight at once
                hold_until(lambda: live[0] >= min(limiter.limit, asks - done[0]))
            with lock:
                done[0] += 1
            return _grade(body)
        finally:
            with lock:
                live[0] -= 1

    with Server(script) as srv, _tmp_cache() as cache:
        judge = _judge(srv, concurrency=8)
        clients.append(judge)
        outcomes, tally = judge_many(judge, _asks(asks), cache=cache, concurrency=8)
        refused = sum(1 for b in srv.requests) - asks
    assert [o.value for o in outcomes] == [1 + i % 5 for i in range(asks)]
    assert refused >= 1 and judge.limiter.backoffs == refused
    assert judge.limiter.lowest <= 2 and judge.limiter.limit == 8
    assert max(peaks[-40:]) >= 5  # in flight again beyond the early limit once it grew back
    assert f"concurrency went down to {judge.limiter.lowest} of 8" in tally.line()


def _tmp_cache() -> Cache:
    import tempfile

    d = tempfile.mkdtemp()
    return Cache(Path(d) / "c.sqlite")


def test_timeouts_without_a_storm(tmp_path: Path) -> None:
    """A server that takes 1 s per request against --timeout 0.2: each request is sent once (the
    server keeps working on an abandoned one), the limit falls to 1, and after 3 timeouts in a row the
    run stops with an error that names --timeout and says that nothing was sent twice."""

    def script(body: dict[str, Any], n: int) -> Reply:
        return Reply(200, chat('{"grade": 3}').body, delay=1.0)

    with Server(script) as srv, Cache(tmp_path / "c.sqlite") as cache:
        with pytest.raises(JudgeError) as err:
            judge_many(_judge(srv, timeout=0.2, concurrency=4), _asks(12), cache=cache, concurrency=4)
        sent = [fenced(b, "passage") for b in srv.requests]
    assert len(sent) == len(set(sent)) <= 6
    assert "requests in a row got no reply within 0.2 s" in str(err.value) and "raise --timeout" in str(err.value)
    assert "none of them was sent twice" in str(err.value)


def test_the_first_reply_sets_the_timeout_and_the_estimate(tmp_path: Path) -> None:
    msgs: list[str] = []

    def script(body: dict[str, Any], n: int) -> Reply:
        r = _grade(body)
        r.delay = 0.3 if n == 1 else 0.0
        return r

    with Server(script) as srv, Cache(tmp_path / "c.sqlite") as cache:
        judge = _judge(srv, concurrency=4)
        judge_many(judge, _asks(5), cache=cache, concurrency=4, notify=msgs.append)
    assert judge.timeout == 60.0  # 3 x ~0.3 s x 4 is under the 60 s floor
    assert len(msgs) == 1 and re.match(
        r"first reply in \d+\.\d s: timeout 60 s per request \(--timeout sets it\); 4 more to ask: about \d+ s if the server answers one at a time",
        msgs[0],
    ), msgs
    judge2 = _judge(srv, concurrency=4)
    judge2.calibrate(25.0)  # a CPU server: 25 s per request, 4 queued behind one another
    assert judge2.timeout == 300.0


def test_the_budget_reserves_from_the_first_replies_usage(tmp_path: Path) -> None:
    """Each reply reports 300 prompt and 10 completion tokens; at 1000 / 4600 per million a request
    costs 0.3 + 0.046 = 0.346. With --max-cost 1.5 and 4 in flight, 4 requests fit (1.384) and the
    fifth would cross the budget: 4 are sent, 14 not sent, none undecided. (Before, each request in
    flight reserved ~1 token per prompt byte until usage was known: 1 was sent, 17 not.)"""
    passage = "x" * 700

    def script(body: dict[str, Any], n: int) -> Reply:
        time.sleep(0.05)
        return chat('{"grade": 2}', prompt_tokens=300, completion_tokens=10)

    prices = Prices.parse(["m=1000/4600"])
    with Server(script) as srv, Cache(tmp_path / "c.sqlite") as cache:
        outcomes, tally = judge_many(
            _judge(srv, concurrency=4), _asks(18, text=passage), cache=cache, concurrency=4, max_cost=1.5, prices=prices
        )
        assert len(srv.requests) == 4
    assert [o.status for o in outcomes] == ["decided"] * 4 + ["not sent"] * 14
    assert (tally.not_sent, tally.undecided, tally.requested) == (14, 0, 4)
    assert tally.cost == pytest.approx(4 * 0.346) and tally.cost <= 1.5
    assert "0 undecided, 14 not sent (the budget)" in tally.line()


def test_a_prompt_refused_for_its_length_is_that_items_reason(tmp_path: Path) -> None:
    def script(body: dict[str, Any], n: int) -> Reply:
        if "long" in fenced(body, "passage"):
            msg = "This model's maximum context length is 4096 tokens. However, you requested 5103 tokens."
            return Reply(400, {"error": {"message": msg, "code": "context_length_exceeded"}})
        return chat('{"grade": 4}')

    asks = [*_asks(3), Ask(TASKS["grade"], {"question": "q?", "passage": "long 9"}), *_asks(8)[3:]]
    with Server(script) as srv, Cache(tmp_path / "c.sqlite") as cache:
        outcomes, tally = judge_many(_judge(srv, structured="off"), asks, cache=cache)
    assert [o.status for o in outcomes].count("decided") == 8 and outcomes[3].status == "undecided"
    assert outcomes[3].reason == (
        "the server refused the prompt for its length: This model's maximum context length is 4096 tokens. "
        "However, you requested 5103 tokens."
    )
    assert tally.reasons == {"prompts too long for the model": 1}


@pytest.mark.parametrize("shape", ["chat", "completions"])
def test_logprobs_in_both_shapes(tmp_path: Path, shape: str) -> None:
    """Top first tokens NO 0.3, " NO-" 0.1, Paris 0.5: u = 1 - 0.4, in the chat shape (OpenAI, vLLM)
    and the completions shape (llama-cpp-python); a reply whose top tokens hold no prefix of
    NO-RESPONSE is undecided with the bound 1 - (listed mass), never 1.0."""

    def reply(top: dict[str, float]) -> Reply:
        if shape == "chat":
            lp: dict[str, Any] = {
                "content": [
                    {
                        "token": "x",
                        "logprob": -1.0,
                        "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in top.items()],
                    }
                ]
            }
        else:
            lp = {"tokens": ["x"], "token_logprobs": [-1.0], "top_logprobs": [{t: math.log(p) for t, p in top.items()}]}
        return Reply(body={"choices": [{"message": {"content": "x"}, "logprobs": lp}], "usage": {}})

    def script(body: dict[str, Any], n: int) -> Reply:
        if fenced(body, "passage").endswith("0"):
            return reply({"Paris": 0.5, "NO": 0.3, " NO-": 0.1, "The": 0.05})
        return reply({"Paris": 0.6, "The": 0.3})

    with Server(script) as srv, Cache(tmp_path / "c.sqlite") as cache:
        outcomes, _ = judge_many(_judge(srv), _asks(2, "utility"), cache=cache)
    assert outcomes[0].value == pytest.approx(0.6)
    assert outcomes[1].status == "undecided" and outcomes[1].value is None
    assert (
        outcomes[1].reason == "NO-RESPONSE is not among the top 2 first tokens: u >= 0.9000 only (a bound, not a value)"
    )


@pytest.mark.parametrize(
    ("accepts", "expect"),
    [("json_schema", "json_schema"), ("json_object", "json_object"), ("format", "format"), (None, "")],
)
def test_the_structured_dialect_is_detected_once_and_kept(tmp_path: Path, accepts: str | None, expect: str) -> None:
    """A server that follows one dialect: it refuses the others (HTTP 400 naming response_format) or,
    for Ollama's ``format``, ignores them and answers in prose. The first request finds the dialect;
    the next ones use it at once; a later run starts from the one the cache kept."""

    def script(body: dict[str, Any], n: int) -> Reply:
        rf = (body.get("response_format") or {}).get("type")
        sent = "format" if "format" in body else rf
        if accepts is None:  # ignores every dialect; answers the object only when a repair turn asks
            return _grade(body) if len(body["messages"]) == 4 else chat("The passage is about coffee.")
        if sent == accepts:
            return _grade(body)
        if accepts == "format":  # Ollama: refuses json_object, ignores json_schema
            return Reply(400, {"error": "response_format: unsupported"}) if sent == "json_object" else chat("Coffee.")
        return Reply(400, {"error": {"message": f"response_format type {rf!r} is not supported"}})

    with Server(script) as srv, Cache(tmp_path / "c.sqlite") as cache:
        judge = _judge(srv, structured="auto")
        first, _ = judge_many(judge, _asks(4), cache=cache, concurrency=1)
        n_detect = len(srv.requests) - 3
        assert judge.dialect == expect
        later = _asks(8)[4:]
        judge2 = _judge(srv, structured="auto")
        before = len(srv.requests)
        judge_many(judge2, later, cache=cache, concurrency=1)
        again = srv.requests[before:]
    if expect:
        assert [o.value for o in first] == [1, 2, 3, 4]
        assert n_detect == 1 + ("json_schema", "json_object", "format").index(expect)
        assert len(again) == 4 and all(("format" in b) == (expect == "format") for b in again)
    else:  # no dialect works: the prompt alone, then the repair turn
        assert [o.value for o in first] == [1, 2, 3, 4]
        assert n_detect == 3 + 1 + 3  # three dialects tried, then a repair turn for each
        assert len(again) == 8 and not any("format" in b or "response_format" in b for b in again)


# --- the cache under contention ------------------------------------------------------------------------


def test_two_judges_on_one_cache_ask_each_prompt_once(tmp_path: Path) -> None:
    """Two processes judge the same 40 pairs with one cache at the same time: each prompt is asked
    once (a process claims a prompt just before asking it; the other waits for its answer), and both
    write every grade."""
    counts: dict[str, int] = {}
    lock = threading.Lock()

    def script(body: dict[str, Any], n: int) -> Reply:
        p = fenced(body, "passage")
        with lock:
            counts[p] = counts.get(p, 0) + 1
        r = _grade(body)
        r.delay = 0.03
        return r

    args = _files(tmp_path, 40)
    with Server(script) as srv:
        common = [
            *args,
            "--judge-url",
            srv.url,
            "--model",
            "m",
            "--cache",
            str(tmp_path / "c.sqlite"),
            "-q",
            "--structured",
            "off",
        ]
        env = {**os.environ, "CTXEVAL_JUDGE_API_KEY": "k"}
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "ctxeval", "judge", "grade", *common, "--concurrency", "4", "-o", str(tmp_path / f"o{i}")],
                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            for i in range(2)
        ]  # fmt: skip
        outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert len(counts) == 40 and set(counts.values()) == {1}
    assert (tmp_path / "o0").read_bytes() == (tmp_path / "o1").read_bytes()
    assert len((tmp_path / "o0").read_text().splitlines()) == 40


def test_a_locked_cache_is_waited_for_and_no_answer_is_lost(tmp_path: Path) -> None:
    """Another process holds the cache's write lock for the whole run and past the wait: the answers
    received are kept beside the cache (and said so); the next run takes them in and asks nothing."""
    db = tmp_path / "c.sqlite"
    msgs: list[str] = []
    with Server(lambda body, n: _grade(body)) as srv:
        with Cache(db, write=True, lock_wait=1.0, notify=msgs.append) as cache:
            holder = sqlite3.connect(str(db), isolation_level=None)
            holder.execute("BEGIN IMMEDIATE")
            outcomes, _ = judge_many(_judge(srv, structured="off"), _asks(6), cache=cache)
            assert [o.value for o in outcomes] == [1 + i % 5 for i in range(6)]
        holder.execute("ROLLBACK")
        holder.close()
        assert any("another process holds its lock (6 judgments to store)" in m for m in msgs)
        assert any("6 judgments kept in" in m and ".pending-" in m for m in msgs)
        assert len(list(tmp_path.glob("c.sqlite.pending-*.jsonl"))) == 1
        n = len(srv.requests)
        with Cache(db, write=True) as cache:
            again, tally = judge_many(_judge(srv, structured="off"), _asks(6), cache=cache)
        assert len(srv.requests) == n and tally.from_cache == 6
        assert [o.value for o in again] == [o.value for o in outcomes]
    assert not list(tmp_path.glob("c.sqlite.pending-*.jsonl"))


def test_a_lock_released_during_the_run_is_waited_for_with_a_message(tmp_path: Path) -> None:
    """Another process holds the cache's write lock when the judge starts: the judge says it waits,
    and goes on once the lock is released; every judgment lands in the cache."""
    db = tmp_path / "c.sqlite"
    Cache(db).close()
    holder = sqlite3.connect(str(db), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with Server(lambda body, n: _grade(body)) as srv:
        args = [
            *_files(tmp_path, 10),
            "--judge-url",
            srv.url,
            "--model",
            "m",
            "--cache",
            str(db),
            "-q",
            "-o",
            str(tmp_path / "o"),
        ]
        env = {**os.environ, "CTXEVAL_JUDGE_API_KEY": "k"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "ctxeval", "judge", "grade", *args], env=env, stderr=subprocess.PIPE, text=True
        )
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if "waiting for the judgment cache" in line:
                assert srv.requests == []  # nothing is asked before the cache can be written
                holder.execute("ROLLBACK")
                break
        rest = proc.communicate(timeout=60)[1]
    assert proc.returncode == 0, "".join(seen) + rest
    assert f"waiting for the judgment cache {db}: another process holds its lock" in seen[-1]
    assert len((tmp_path / "o").read_text().splitlines()) == 10
    with Cache(db) as cache:
        assert len(list(cache.export())) == 10


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX users")
def test_a_read_only_cache_fails_before_any_request(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    Cache(db).close()
    files = _files(tmp_path, 5)
    if os.geteuid() == 0:  # root writes through permissions: make the file immutable instead
        if subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode != 0:
            pytest.skip("running as root where chattr +i is not available: cannot make a file read-only")
    else:
        os.chmod(db, 0o444)
    try:
        with Server(lambda body, n: _grade(body)) as srv:
            done = _cli("judge", "grade", *files, "--judge-url", srv.url, "--model", "m", "--cache", str(db))
            assert srv.requests == []
    finally:
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(db)], check=True)
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"ctxeval: error: --cache {db}: cannot be written (attempt to write a readonly database)")
    )
    assert "Traceback" not in done.stderr


def test_a_damaged_cache_or_one_below_a_file_is_a_one_line_error(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    with Cache(db) as cache:
        for i in range(300):
            cache.put(f"k{i}", model="m", task="grade", version="v", value=i, reply="x" * 200)
    raw = bytearray(db.read_bytes())
    raw[4096:12288] = b"\xff" * 8192  # pages 2 and 3: the table's b-tree
    db.write_bytes(bytes(raw))
    for args in (["judge", "cache", "stats", "--cache", str(db)], ["judge", "cache", "export", "--cache", str(db)]):
        done = _cli(*args)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.startswith(f"ctxeval: error: --cache {db}: not a usable judgment cache (")
        assert "move it aside or delete it" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    (tmp_path / "file.txt").write_text("x")
    done = _cli(
        "judge", "grade", *_files(tmp_path, 3), "--judge", "lexical", "--cache", str(tmp_path / "file.txt" / "c.sqlite")
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .startswith(f"ctxeval: error: --cache {tmp_path / 'file.txt' / 'c.sqlite'}: cannot create its folder")
    )


def test_report_and_output_never_overwrite_an_input_or_the_cache(tmp_path: Path) -> None:
    files = _files(tmp_path, 5)
    db = tmp_path / "c.sqlite"
    base = ["judge", "grade", *files, "--judge", "lexical", "--cache", str(db)]
    Cache(db).close()
    before = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    for extra, what in [
        (["--report", str(tmp_path / "r.run")], f"--report {tmp_path / 'r.run'}: that is an input"),
        (["--report", str(db)], f"--report {db}: that is the judgment cache"),
        (["-o", str(tmp_path / "q.tsv")], f"{tmp_path / 'q.tsv'}: the output is one of the inputs"),
        (["-o", str(tmp_path / "x"), "--report", str(tmp_path / "x")], f"-o and --report both name {tmp_path / 'x'}"),
    ]:
        done = _cli(*base, *extra)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith(f"ctxeval: error: {what}")
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


# --- honest failure, the dry run, the export -----------------------------------------------------------


def test_prose_replies_fail_the_run_and_write_nothing(tmp_path: Path) -> None:
    """A model that answers in prose whatever it is asked: every judgment undecided after its repair
    turn; exit 2 with the reason; no output file; the report lists each pair with its reason. A
    re-run says they come from the cache; --retry-undecided asks them again."""
    with Server(lambda body, n: chat("The passage provides information on coffee.")) as srv:
        args = [
            *_files(tmp_path, 6),
            "--judge-url",
            srv.url,
            "--model",
            "m",
            "--cache",
            str(tmp_path / "c.sqlite"),
            "-q",
        ]
        out, rep = tmp_path / "o.qrels", tmp_path / "rep.json"
        done = _cli("judge", "grade", *args, "-o", str(out), "--report", str(rep))
        assert len(srv.requests) == 3 + 1 + 5 * 2  # the three dialects tried on the first, a repair turn each
        again = _cli("judge", "grade", *args, "-o", str(out))
        n = len(srv.requests)
        retry = _cli("judge", "grade", *args, "-o", str(out), "--retry-undecided", "--structured", "off")
        assert len(srv.requests) == n + 12
    assert done.returncode == 2 and not out.exists()
    assert done.stderr.strip().splitlines()[-1] == (
        "ctxeval: error: grade: 6 of 6 judgments undecided (100%, over --max-undecided 50%): 6 replies not the "
        "JSON object asked for. Nothing written; the judgments are cached (--retry-undecided asks the undecided "
        "ones again)"
    )
    report = json.loads(rep.read_text())
    assert len(report["not_decided"]) == 6 and all(r["status"] == "undecided" for r in report["not_decided"])
    assert all(
        r["reason"].startswith("the reply is not the JSON object asked for, after a repair turn")
        for r in report["not_decided"]
    )
    assert "6 from the cache (6 of them undecided: --retry-undecided asks again), 0 requested" in again.stderr
    assert again.returncode == 2 and retry.returncode == 2


def test_the_dry_run_counts_and_estimates_without_asking(tmp_path: Path) -> None:
    args = _files(tmp_path, 10)
    db = tmp_path / "c.sqlite"
    with Server(lambda body, n: chat(json.dumps({"grade": 3}), prompt_tokens=120, completion_tokens=6)) as srv:
        first = _cli(
            "judge",
            "grade",
            *args[:-1],
            "1",
            "--judge-url",
            srv.url,
            "--model",
            "m",
            "--cache",
            str(db),
            "-q",
            "-o",
            str(tmp_path / "o"),
        )
        assert first.returncode == 0, first.stderr
        n = len(srv.requests)
        dry = _cli("judge", "grade", *args, "--judge-url", srv.url, "--model", "m", "--cache", str(db), "--dry-run",
                   "--price", "m=1/2", "--report", str(tmp_path / "plan.json"))  # fmt: skip
        assert len(srv.requests) == n
    assert dry.returncode == 0, dry.stderr
    plan = json.loads((tmp_path / "plan.json").read_text())["dry_run"]
    assert (plan["judgments"], plan["cached_decided"], plan["cached_undecided"], plan["to_ask"]) == (10, 5, 0, 5)
    assert plan["completion_tokens"] == 5 * 6
    assert plan["estimated_from"] == "5 cached judgments of m"
    assert plan["cost"] == pytest.approx((plan["prompt_tokens"] * 1 + 30 * 2) / 1e6)
    assert 100 * 5 <= plan["prompt_tokens"] <= 140 * 5  # the same prompts, +- the digits that differ
    assert "dry run: 10 judgments, 5 decided in the cache" in dry.stderr and "Nothing was sent." in dry.stderr
    assert not (tmp_path / "o2").exists()


def test_the_export_says_which_query_and_passage_each_judgment_is_for(tmp_path: Path) -> None:
    with Server(lambda body, n: _grade(body)) as srv:
        _cli(
            "judge",
            "grade",
            *_files(tmp_path, 4),
            "--judge-url",
            srv.url,
            "--model",
            "m",
            "--cache",
            str(tmp_path / "c.sqlite"),
            "-q",
            "-o",
            str(tmp_path / "o"),
        )
    done = _cli("judge", "cache", "export", "--cache", str(tmp_path / "c.sqlite"))
    recs = [json.loads(ln) for ln in done.stdout.splitlines()]
    assert sorted((r["ref"]["query_id"], r["ref"]["doc_id"], r["value"]) for r in recs) == [
        (f"q{i % 5}", f"d{i}", 1 + i % 5) for i in range(4)
    ]
    assert all(r["reason"] is None and r["prompt_bytes"] > 0 for r in recs)


def test_a_cache_written_before_the_reason_column_is_upgraded_in_place(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(str(db))
    con.execute(
        "CREATE TABLE judgments (key TEXT PRIMARY KEY, model TEXT NOT NULL, task TEXT NOT NULL, version TEXT NOT NULL, "
        "created REAL NOT NULL, value TEXT NOT NULL, reply TEXT, prompt_tokens INTEGER NOT NULL DEFAULT 0, "
        "completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0)"
    )
    con.execute("INSERT INTO judgments VALUES ('k1', 'm', 'grade', 'v', 0, '4', 'x', 10, 2, 0)")
    con.execute("INSERT INTO judgments VALUES ('k2', 'm', 'grade', 'v', 0, 'null', 'prose', 10, 2, 0)")
    con.commit()
    con.close()
    with Cache(db, write=True) as cache:
        assert cache.get("k1") is not None and cache.get("k1").value == 4  # type: ignore[union-attr]
        old = cache.get("k2")
        assert old is not None and old.undecided and old.reason is None
        assert [r["ref"] for r in cache.export()] == [None, None]


def test_judged_labels_carry_their_provenance(tmp_path: Path) -> None:
    """`judge grade -o FILE` writes the labels' sidecar (the labels' own reader reads it back): a model
    wrote them, which task and prompt version, how deep, how many pairs labelled and left without a
    label, the runs pooled; `evaluate` on the file then says so."""
    from ctxeval._io.labels import read_sidecar

    def script(body: dict[str, Any], n: int) -> Reply:
        return chat("no idea") if fenced(body, "passage") == "passage 3" else _grade(body)

    out = tmp_path / "j.qrels"
    with Server(script) as srv:
        args = [*_files(tmp_path, 10)[:-1], "2", "--judge-url", srv.url, "--model", "m", "--cache", str(tmp_path / "c")]
        done = _cli("judge", "grade", *args, "--structured", "off", "-q", "-o", str(out))
        to_stdout = _cli("judge", "grade", *args, "--structured", "off", "-q")
    assert done.returncode == 0, done.stderr
    kind = read_sidecar(out)
    assert kind is not None and (kind.kind, kind.scale) == ("judged", "rag")
    p = kind.provenance
    assert p is not None
    assert (p.judge, p.model, p.heuristic, p.task, p.prompt_version) == ("openai", "m", False, "grade", "grade-rag-1")
    assert (p.depth, p.pairs, p.undecided, p.runs) == (2, 9, 1, ("r",))
    assert len(out.read_text().splitlines()) == 9
    assert "labels written to stdout carry no provenance" in to_stdout.stderr
    ev = _cli("evaluate", str(out), str(tmp_path / "r.run"), "-m", "nDCG@10")
    assert "top 2 of each list, 9 pairs judged, 1 undecided" in " ".join((ev.stdout + ev.stderr).split())


def test_sample_labels_keep_undecided_ties_and_not_sent_apart(tmp_path: Path) -> None:
    """``judge relevance`` / ``attribution`` on a sample set, 2 votes each, a budget: a chunk the model
    answers yes twice is relevant; one it answers in prose is undecided; one it answers yes then no
    is a tie; the chunks the budget stopped are not sent. Each chunk is written in exactly one place
    (relevant or decided no, ``undecided``, ``tied``, ``not_sent``), the places' sizes equal the
    tally's counts, and the measures leave every kind of open chunk out (never guessed)."""
    texts = {"a1": "yes", "a2": "prose", "a3": "split", "b1": "yes", "b2": "no", "b3": "yes"}
    samples = tmp_path / "s.jsonl"
    samples.write_text(
        "".join(
            json.dumps(
                {
                    "query_id": q,
                    "question": f"question {q}?",
                    "reference_answer": "an answer",
                    "response": "a response",
                    "retrieved": [{"id": d, "text": f"passage {texts[d]}"} for d in ds],
                }
            )
            + "\n"
            for q, ds in (("A", ("a1", "a2", "a3")), ("B", ("b1", "b2", "b3")))
        )
    )

    def script(body: dict[str, Any], n: int) -> Reply:
        kind = fenced(body, "passage").split()[-1]
        key = "relevant" if "useful" in json.dumps(body["messages"]) else "used"
        yes = {"yes": True, "no": False, "split": body["seed"] % 2 == 0}.get(kind)
        if yes is None:
            return chat("The passage says things.", prompt_tokens=100, completion_tokens=5)
        return chat(json.dumps({key: yes}), prompt_tokens=100, completion_tokens=5)

    got = {}
    for task in ("relevance", "attribution"):
        with Server(script) as srv:
            out, rep = tmp_path / f"{task}.jsonl", tmp_path / f"{task}.json"
            done = _cli(
                "judge", task, "--samples", str(samples), "--judge-url", srv.url, "--model", "m",
                "--cache", str(tmp_path / f"{task}.sqlite"), "--votes", "2", "--concurrency", "1",
                "--price", "m=1000/0", "--max-cost", "0.95", "--max-undecided", "1", "-q",
                "-o", str(out), "--report", str(rep),
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        got[task] = ([json.loads(ln) for ln in out.read_text().splitlines()], json.loads(rep.read_text()))
    (a, b), report = got["relevance"]
    tally = report["tallies"][0]
    # 0.1 a request (100 prompt tokens at 1000 per million): a1 2 votes, a2 2 votes and a repair turn
    # each, a3 2 votes, and one more: 0.9; b1's two votes would cross 0.95: B is not sent
    assert a["judged"] == {"relevant": ["a1"], "undecided": ["a2"], "tied": ["a3"]}
    assert b["judged"] == {"relevant": [], "undecided": [], "not_sent": ["b1", "b2", "b3"]}
    assert [tally[k] for k in ("decided", "undecided", "ties", "not_sent")] == [1, 1, 1, 3]
    assert tally["reasons"] == {"replies not the JSON object asked for": 1, "votes tied": 1}
    assert "6 judgments, 0 from the cache, 9 requested, 1 undecided, 1 tie, 3 not sent (the budget)" in done.stderr
    (a, b), _ = got["attribution"]
    assert (a["citations"], a["citations_undecided"], a["citations_tied"]) == (["a1"], ["a2"], ["a3"])
    assert (b["citations"], b["citations_undecided"], b["citations_not_sent"]) == ([], [], ["b1", "b2", "b3"])
    assert "citations_not_sent" not in a and "citations_tied" not in b
    # a budget that sends nothing: no labels, so nothing is written, exit 2, and the reason
    with Server(script) as srv:
        out = tmp_path / "none.jsonl"
        none = _cli(
            "judge", "relevance", "--samples", str(samples), "--judge-url", srv.url, "--model", "m", "--cache",
            str(tmp_path / "none.sqlite"), "--price", "m=1000/0", "--max-cost", "0.01", "-q", "-o", str(out),
        )  # fmt: skip
        assert srv.requests == []
    assert none.returncode == 2 and not out.exists()
    assert none.stderr.strip().splitlines()[-1] == (
        "ctxeval: error: no relevance to write (6 not sent (the budget)); nothing written"
    )
    # read back: every open chunk is left out of ContextPrecision(method=judge) (A: rank 1 relevant,
    # ranks 2-3 open -> NA, never 1.0 or 1/3); B's open chunks the same
    import ctxeval

    back = ctxeval.Samples.coerce(str(tmp_path / "relevance.jsonl"))
    assert next(s for s in back.samples if s.query_id == "A").judged == (("a1",), ("a2",), ("a3",), ())
    per_q = ctxeval.evaluate(samples=back, measures=["ContextPrecision(method=judge)"]).runs[0]
    values = per_q.per_query("ContextPrecision(method=judge)")
    assert "A" not in values or math.isnan(values["A"])
    ev = _cli("evaluate", "--samples", str(tmp_path / "relevance.jsonl"), "-m", "ContextPrecision(method=judge)")
    assert ev.returncode == 0, ev.stderr
    assert "2 samples list chunks a judge left without a judgment (1 undecided, 1 tied, 3 not sent)" in " ".join(
        (ev.stdout + ev.stderr).split()
    )


def test_the_sidecar_counts_undecided_ties_and_not_sent_apart(tmp_path: Path) -> None:
    """`judge grade` with 2 votes and a budget: d0 grades 1 twice, d1 answers in prose (2 votes and a
    repair turn each), d2 grades 2 then 4 (a tie); each request costs 0.1, and the budget 0.95 lets
    d3's first vote go (0.9) and stops its second and d4: d3 and d4 are not sent (d3's reason says 1 of
    2 votes went, cached). The sidecar says 1 pair labelled, 1 undecided, 1 tied, 2 not sent, and
    `evaluate` names all three."""
    from ctxeval._io.labels import read_sidecar

    def script(body: dict[str, Any], n: int) -> Reply:
        i = int(fenced(body, "passage").split()[-1])
        if i == 1:
            return chat("no idea", prompt_tokens=100)
        return chat(json.dumps({"grade": 2 + 2 * (body["seed"] % 2) if i == 2 else 1}), prompt_tokens=100)

    out = tmp_path / "j.qrels"
    with Server(script) as srv:
        args = [*_files(tmp_path, 5)[:-1], "1", "--judge-url", srv.url, "--model", "m", "--cache", str(tmp_path / "c")]
        money = ["--votes", "2", "--concurrency", "1", "--price", "m=1000/0", "--max-cost", "0.95"]
        done = _cli(
            "judge", "grade", *args, *money, "--structured", "off", "--max-undecided", "1", "-q", "-o", str(out)
        )
        sent = [(fenced(b, "passage")[-1], b["seed"], len(b["messages"])) for b in srv.requests]
    assert done.returncode == 0, done.stderr
    assert sent == [("0", 0, 2), ("0", 1, 2), ("1", 0, 2), ("1", 0, 4), ("1", 1, 2), ("1", 1, 4), ("2", 0, 2),
                    ("2", 1, 2), ("3", 0, 2)]  # fmt: skip
    assert "5 judgments, 0 from the cache, 9 requested, 1 undecided, 1 tie, 2 not sent (the budget)" in done.stderr
    assert "not sent: q3 d3: not sent: the budget stopped after 1 of 2 votes (they are cached)" in done.stderr
    assert "not sent: q4 d4: not sent: the budget stopped first" in done.stderr
    assert "tie: q2 d2: the votes tie: 2 x1, 4 x1" in done.stderr
    assert out.read_text() == "q0 0 d0 1\n"
    p = read_sidecar(out).provenance  # type: ignore[union-attr]
    assert p is not None and (p.pairs, p.undecided, p.ties, p.not_sent) == (1, 1, 1, 2)
    doc = json.loads((tmp_path / "j.qrels.labels.json").read_text())
    assert (doc["pairs"], doc["undecided"], doc["ties"], doc["not_sent"]) == (1, 1, 1, 2)
    ev = _cli("evaluate", str(out), str(tmp_path / "r.run"), "-m", "nDCG@10")
    assert "1 pairs judged, 1 undecided, 1 tied, 2 not sent (the budget)" in " ".join((ev.stdout + ev.stderr).split())


# --- how a run ends: --report whatever ends it; the dry run's time from the serial rate ----------------


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
    lock = threading.Lock()

    def serial(body: dict[str, Any], n: int) -> Reply:
        with lock:  # one at a time, like llama.cpp's server with one slot
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
