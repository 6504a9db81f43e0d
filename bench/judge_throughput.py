#!/usr/bin/env python3
"""The LLM judge's client against a local scripted OpenAI-compatible server: 10,000 grade judgments
with 50 ms of server latency at concurrency 32, then the same 10,000 again from the cache.

    python bench/judge_throughput.py [--n 10000] [--latency 0.05] [--concurrency 32] [--ragas-n 2000]
                                     [--ragas-python VENV/bin/python]

Prints judgments per second (the goal: >= 400/s, i.e. bound by the latency, 32 / 0.05 = 640/s at
most, not by the client), the ideal rate, the cache look-up cost per judgment, the peak memory
(RSS) of the client process, and the CPU the client spends per judgment next to ragas 0.2.15's
(LLMContextPrecisionWithReference: one LLM call per one-chunk sample, through LangChain's ChatOpenAI)
against the same server in the same run. The server runs in a process of its own (asyncio); both
share the machine's cores, so the rates are lower bounds of the clients' own; CPU per judgment is
the steadier figure on a shared machine. The test extra pins another ragas: ``--ragas-python`` names
the Python of a venv holding ragas 0.2.15 and LangChain's ChatOpenAI (``pip install ragas==0.2.15
langchain-openai``); the peer then runs there, in a process of its own, and only its scoring is timed.
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


def serve(latency: float) -> None:
    """A lean scripted server: asyncio, HTTP/1.1 keep-alive, every reply after ``latency`` seconds (the
    tests' threaded server spends more CPU per request than the client under test)."""
    import asyncio

    from judge_server import chat

    def reply(content: str) -> bytes:
        body = {**chat(content).body, "created": 0, "model": "bench-model"}
        payload = json.dumps(body).encode()
        return (
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % len(payload) + payload
        )

    ours = reply(json.dumps({"grade": 3}))
    theirs = reply(json.dumps({"reason": "The context states the answer.", "verdict": 1}))  # ragas's Verification

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                headers = await reader.readuntil(b"\r\n\r\n")
                n = 0
                for line in headers.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                body = await reader.readexactly(n)
                await asyncio.sleep(latency)
                writer.write(ours if b'{\\"grade\\": N}' in body else theirs)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        print(f"http://127.0.0.1:{port}/v1", flush=True)
        await server.serve_forever()

    asyncio.run(main())


def ragas_run(url: str, n: int, concurrency: int) -> tuple[float, float, int]:
    """ragas 0.2.15's LLMContextPrecisionWithReference over ``n`` one-chunk samples against the same
    server (one LLM call per sample, through LangChain's ChatOpenAI): wall and CPU seconds, calls."""
    import os

    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
    import ragas
    from langchain_openai import ChatOpenAI
    from ragas import EvaluationDataset, RunConfig, SingleTurnSample, evaluate
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import LLMContextPrecisionWithReference

    if ragas.__version__ != "0.2.15":
        raise SystemExit(f"the peer is ragas 0.2.15; found {ragas.__version__} (pip install ragas==0.2.15)")
    llm = LangchainLLMWrapper(ChatOpenAI(model="bench-model", base_url=url, api_key="k", max_retries=0, temperature=0))
    ds = EvaluationDataset(
        [
            SingleTurnSample(
                user_input=f"question {i % 500}?", retrieved_contexts=[f"passage number {i}"], reference=f"answer {i}"
            )
            for i in range(n)
        ]
    )
    metric = LLMContextPrecisionWithReference(llm=llm)
    c0, t0 = time.process_time(), time.perf_counter()
    result = evaluate(
        ds, metrics=[metric], run_config=RunConfig(max_workers=concurrency, timeout=60), show_progress=False
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    scores = [r["llm_context_precision_with_reference"] for r in result.scores]
    if len(scores) != n or any(abs(v - 1.0) > 1e-9 for v in scores):
        raise SystemExit("ragas: unexpected scores")
    return wall, cpu, n


def peer(python: str | None, url: str, n: int, concurrency: int) -> tuple[float, float, int]:
    """ragas's run here, or in ``python``'s process (a venv with ragas 0.2.15)."""
    if python is None:
        return ragas_run(url, n, concurrency)
    out = subprocess.run(
        [python, __file__, "--peer", url, str(n), str(concurrency)], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"the peer failed: {out.stderr.strip()[-500:]}")
    wall, cpu, done = json.loads(out.stdout.strip().splitlines()[-1])
    return float(wall), float(cpu), int(done)


def main() -> None:
    if sys.argv[1:2] == ["--serve"]:
        serve(float(sys.argv[2]))
        return
    if sys.argv[1:2] == ["--peer"]:
        print(json.dumps(ragas_run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
        return
    from ctxeval._judge.cache import Cache
    from ctxeval._judge.client import OpenAIJudge
    from ctxeval._judge.runner import Ask, judge_all
    from ctxeval._judge.tasks import TASKS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--latency", type=float, default=0.05)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--ragas-n", type=int, default=2_000, help="judgments for ragas (0: leave it out)")
    ap.add_argument("--ragas-python", help="the Python of a venv with ragas 0.2.15 (default: this one)")
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
        with tempfile.TemporaryDirectory() as tmp, Cache(Path(tmp) / "c.sqlite") as cache:
            judge = OpenAIJudge("bench-model", base_url=url, api_key="k", concurrency=args.concurrency)
            c0, t0 = time.process_time(), time.perf_counter()
            values, tally = judge_all(judge, asks, cache=cache, concurrency=args.concurrency)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if tally.requested != args.n or any(v != 3 for v in values):
                raise SystemExit(f"unexpected: {tally.line()}")
            judge = OpenAIJudge("bench-model", base_url=url, api_key="k", concurrency=args.concurrency)
            t1 = time.perf_counter()
            _, again = judge_all(judge, asks, cache=cache, concurrency=args.concurrency)
            cached = time.perf_counter() - t1
            if again.from_cache != args.n or again.requested:
                raise SystemExit(f"the cached re-run requested: {again.line()}")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        other = peer(args.ragas_python, url, args.ragas_n, args.concurrency) if args.ragas_n else None
    finally:
        server.kill()
    ideal = args.concurrency / args.latency
    print(
        f"server latency {args.latency * 1000:.0f} ms, concurrency {args.concurrency}; CPU = the client process's user+sys"
    )
    print(f"{'':<40} {'judgments':>9} {'wall (s)':>9} {'judgments/s':>12} {'CPU per judgment':>17}")
    print(
        f"{'ctxeval (requested from the server)':<40} {args.n:>9,} {wall:>9.2f} {args.n / wall:>12.0f} "
        f"{cpu / args.n * 1e3:>14.2f} ms"
    )
    if other is not None:
        pw, pc, pn = other
        print(
            f"{'ragas 0.2.15 (LLMContextPrecisionWithRef.)':<40} {pn:>9,} {pw:>9.2f} {pn / pw:>12.0f} {pc / pn * 1e3:>14.2f} ms"
        )
    print(f"{'ideal (latency-bound)':<40} {args.n:>9,} {args.n / ideal:>9.2f} {ideal:>12.0f}")
    print(f"{'ctxeval from the cache':<40} {args.n:>9,} {cached:>9.2f} {args.n / cached:>12.0f}")
    print(f"peak RSS of ctxeval's run {peak:.0f} MiB")


if __name__ == "__main__":
    main()
