#!/usr/bin/env python3
"""The LLM judge's client against a local scripted OpenAI-compatible server: 10,000 grade judgments
with 50 ms of server latency at concurrency 32, then the same 10,000 again from the cache.

    python bench/judge_throughput.py [--n 10000] [--latency 0.05] [--concurrency 32]

Prints judgments per second (the goal: >= 400/s, i.e. bound by the latency, 32 / 0.05 = 640/s at
most, not by the client), the ideal rate, the cache look-up cost per judgment, and the peak memory
(RSS) of the client process. The server runs in a process of its own (threads, one per connection);
both share the machine's cores, so the figure is a lower bound of the client's own rate.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from ctxeval._judge.cache import Cache
from ctxeval._judge.client import OpenAIJudge
from ctxeval._judge.runner import Ask, judge_all
from ctxeval._judge.tasks import TASKS
from judge_server import chat


def serve(latency: float) -> None:
    """A lean scripted server: asyncio, HTTP/1.1 keep-alive, every reply after ``latency`` seconds (the
    tests' threaded server spends more CPU per request than the client under test)."""
    import asyncio

    payload = json.dumps(chat(json.dumps({"grade": 3})).body).encode()
    head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(payload)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                headers = await reader.readuntil(b"\r\n\r\n")
                n = 0
                for line in headers.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                await reader.readexactly(n)
                await asyncio.sleep(latency)
                writer.write(head + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}/v1", flush=True)
        await server.serve_forever()

    asyncio.run(main())


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        serve(float(sys.argv[2]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=32)
    args = ap.parse_args()
    asks = [
        Ask(TASKS["grade"], {"question": f"question {i % 500}?", "passage": f"passage number {i}"})
        for i in range(args.n)
    ]
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(args.latency)], stdout=subprocess.PIPE, text=True
    )
    try:
        url = server.stdout.readline().strip()  # type: ignore[union-attr]
        srv = argparse.Namespace(url=url)
        with tempfile.TemporaryDirectory() as tmp, Cache(Path(tmp) / "c.sqlite") as cache:
            judge = OpenAIJudge("bench-model", base_url=srv.url, api_key="k", concurrency=args.concurrency)
            t0 = time.perf_counter()
            values, tally = judge_all(judge, asks, cache=cache, concurrency=args.concurrency)
            wall = time.perf_counter() - t0
            if tally.requested != args.n or any(v != 3 for v in values):
                raise SystemExit(f"unexpected: {tally.line()}")
            judge = OpenAIJudge("bench-model", base_url=srv.url, api_key="k", concurrency=args.concurrency)
            t1 = time.perf_counter()
            _, again = judge_all(judge, asks, cache=cache, concurrency=args.concurrency)
            cached = time.perf_counter() - t1
            if again.from_cache != args.n or again.requested:
                raise SystemExit(f"the cached re-run requested: {again.line()}")
    finally:
        server.kill()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ideal = args.concurrency / args.latency
    print(f"{args.n:,} judgments, server latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}")
    print(f"{'':<28} {'wall (s)':>9} {'judgments/s':>12} {'per judgment':>13}")
    print(f"{'requested (to the server)':<28} {wall:>9.2f} {args.n / wall:>12.0f} {wall / args.n * 1e3:>10.2f} ms")
    print(f"{'ideal (latency-bound)':<28} {args.n / ideal:>9.2f} {ideal:>12.0f} {1e3 / ideal:>10.2f} ms")
    print(f"{'from the cache':<28} {cached:>9.2f} {args.n / cached:>12.0f} {cached / args.n * 1e6:>10.0f} us")
    print(f"peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
