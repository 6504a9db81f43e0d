#!/usr/bin/env python3
"""The circularity check with a real model behind a real server (issue 33's done-when), at the size the
slow tier cannot afford: SmolLM2-135M-Instruct behind llama.cpp's server (``scripts/install-llm-server``)
grades a fixed pool of TREC DL19 pairs once (12 topics, the NIST-judged passages among the ten runs' top
6: 204 pairs), then the check runs over 50 seeded resamplings of 10 of the 12 topics with those labels,
beside the lexical judge on the same pool and seeds (``tests/circularity_design.py`` holds the design;
``tests/judge/test_circularity_real.py`` is its reduced version in the slow tier).

    python bench/circularity_real.py [--topics 12] [--depth 6] [--per-seed 10] [--seeds 50] [--cache FILE]

Prints, per judge: its grade distribution beside NIST's on the pool, the seeds where the check says it
cannot tell, and over the others the planted run (reranked by the judge's own grades) flagged and the
honest runs flagged; and the time the model took per judgment. ``--cache FILE`` keeps the judgments (a
second run asks nothing). Needs ``../shared/data/real`` (DL19 qrels, runs and texts).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _lexical(inputs: dict[str, Path], pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    from ctxeval._judge.kinds.grade import GRADE_TREC

    topics = {json.loads(ln)["qid"]: json.loads(ln)["text"] for ln in inputs["queries.jsonl"].read_text().splitlines()}
    texts = {json.loads(ln)["id"]: json.loads(ln)["text"] for ln in inputs["passages.jsonl"].read_text().splitlines()}
    return {(t, d): GRADE_TREC.offline({"question": topics[t], "passage": texts[d]})["grade"] for t, d in pairs}


def _line(name: str, res: dict) -> str:
    told = [r for r in res["per_seed"] if not r["cannot_tell"]]
    planted = sum(r["planted"] for r in told)
    honest = sum(r["honest"] for r in told)
    return (
        f"{name:<10} grades {res['judge_grades']}  cannot tell {res['cannot_tell']:>2}/{res['seeds']}  "
        f"planted flagged {planted:>2}/{len(told):<2}  honest flagged {honest:>3}/{len(told) * 5}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topics", type=int, default=12)
    ap.add_argument("--depth", type=int, default=6)
    ap.add_argument("--per-seed", type=int, default=10)
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--cache", type=Path, default=None, help="the judgment cache (SQLite), kept between runs")
    args = ap.parse_args()
    try:
        import circularity_design as design
        import llm_server
    except ImportError as exc:  # pragma: no cover
        sys.exit(f"circularity_real: {exc}")
    from ctxeval._judge.systems import cannot_tell

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        try:
            p = design.pool(args.topics, args.depth)
        except Exception as exc:  # the shared data is absent: real_data skips a test, here it says so
            sys.exit(f"circularity_real: no DL19 data ({exc}); it reads ../shared/data/real")
        inputs = design.write_inputs(p, tmp)
        why = llm_server.install()
        if why is not None:
            sys.exit(f"circularity_real: no real server: {why}")
        server = llm_server.start(tmp)
        try:
            cache = args.cache or tmp / "cache.sqlite"
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "ctxeval", "judge", "grade", str(inputs["pool.run"]), "--queries",
                 str(inputs["queries.jsonl"]), "--passages", str(inputs["passages.jsonl"]), "--depth", "1000",
                 "--scale", "trec", "--judge-url", server.url, "--model", "smollm2", "--cache", str(cache),
                 "--concurrency", "1", "--timeout", "900", "-q", "-o", str(tmp / "judged.qrels")],
                capture_output=True, text=True,
            )  # fmt: skip
            took = time.perf_counter() - started
        finally:
            server.stop()
        if done.returncode != 0:
            sys.exit(f"circularity_real: judge grade failed: {done.stderr[-2000:]}")
        judge = design.read_labels(tmp / "judged.qrels")
        asked = done.stderr.strip().splitlines()[-1]
        print(
            f"pool: {len(p.pairs)} DL19 pairs, {len(p.topics)} topics (the NIST-judged among the runs' top {args.depth})"
        )
        print(
            f"SmolLM2-135M via llama.cpp's server, one thread: {took:.0f} s ({took / len(p.pairs):.1f} s a pair); {asked}"
        )
        print(f"NIST       grades {design.seeded(p, p.human, seeds=1)['judge_grades']}")
        print(f"whole pool, SmolLM2: {cannot_tell(p.human, judge) or 'the check can tell'}")
        print(f"{args.seeds} seeds, {args.per_seed} of the {len(p.topics)} topics each:")
        for name, labels in (("SmolLM2", judge), ("lexical", _lexical(inputs, list(p.pairs)))):
            print(_line(name, design.seeded(p, labels, seeds=args.seeds, topics_per_seed=args.per_seed)), flush=True)


if __name__ == "__main__":
    main()
