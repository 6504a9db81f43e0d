#!/usr/bin/env python3
"""What ``--ties expected`` costs: the evaluation step (the join and every measure, the run already read)
under trec_eval's order and under the expected value over every order of the ties, with the best and
worst orders beside it; and a closed form against the exact average over the orders it replaces.

Data: bench/data/<scale> (``python bench/generate.py --scale S``: about 1 % of the rows tie with the row
above) and, when ``../shared/data/real`` is there, TREC DL19's BM25 run with its scores cut to integers
(4,274 of its 4,300 rows tie). No peer computes expected values under ties, so the baseline is ctxeval's
own trec_eval order (pytrec_eval's and trec_eval's, whose cost the other sections of bench/README give).

    python bench/ties_cost.py [--scale S] [--repeat 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from ctxeval._evaluate import evaluate_runs
from ctxeval._measures.base import averaged, make
from ctxeval._session import open_session
from shared_data import shared_folder

MEASURES = ["nDCG@10", "AP", "RR", "P@10", "R@100"]


def _best(fn, repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t0)
    return out


def _row(label: str, qrels: str, run: str, measures: list[str], repeat: int) -> None:
    times = {}
    for ties in ("trec", "expected"):
        session, runs = open_session(qrels, [run], measures, policies={"ties": ties})
        times[ties] = _best(lambda s=session, r=runs: evaluate_runs(s, r, s.measures), repeat)
    print(
        f"{label:<34} {', '.join(measures):<44} {times['trec'] * 1000:9.1f} {times['expected'] * 1000:10.1f} "
        f"{times['expected'] / times['trec']:6.1f}x"
    )


def _closed_vs_averaged(label: str, qrels: str, run: str, names: list[str], repeat: int) -> None:
    session, runs = open_session(qrels, [run], names, policies={"ties": "expected"})
    data = session.prepare(runs[0])
    for name in names:
        m = make(*_parts(name))
        closed = _best(lambda m=m: m.compute(data), repeat)
        try:
            exact = f"{_best(lambda m=m: averaged(data, m), 1) * 1000:.1f} ms"
        except Exception as exc:  # the average refused: too many orders
            exact = f"refused: it would enumerate {str(exc).split(' would enumerate ')[-1].split(';')[0]}"
        print(f"{label:<34} {name:<8} closed form {closed * 1000:6.2f} ms; exact average {exact}")


def _parts(name: str):  # type: ignore[no-untyped-def]
    from ctxeval import parse_measure

    m = parse_measure(name)
    return m.family, dict(m.params), m.cutoff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="S")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'data':<34} {'measures':<44} {'trec (ms)':>9} {'expected':>10} {'ratio':>7}")
    data = ROOT / "bench" / "data" / args.scale
    if (data / "run.txt").is_file():
        _row(f"synthetic {args.scale}", str(data / "qrels.txt"), str(data / "run.txt"), MEASURES, args.repeat)
    else:
        print(f"bench/data/{args.scale} is absent: python bench/generate.py --scale {args.scale}")
    real = shared_folder() / "real" / "dl19"
    if not real.is_dir():
        print("../shared/data/real is absent: the real run is left out")
        return
    with tempfile.TemporaryDirectory() as tmp:
        rounded = Path(tmp) / "bm25.int.run"
        rows = []
        for line in (real / "runs" / "bm25.top100.txt").read_text(encoding="utf-8").splitlines():
            q, q0, d, rank, score, tag = line.split()
            rows.append(f"{q} {q0} {d} {rank} {int(float(score))} {tag}\n")
        rounded.write_text("".join(rows), encoding="utf-8")
        qrels = str(real / "qrels.dl19-passage.txt")
        _row("DL19 BM25, scores cut to integers", qrels, str(rounded), MEASURES, args.repeat)
        _row("DL19 BM25, scores cut to integers", qrels, str(rounded), ["ERR(gmax=3)@10"], 1)
        print()
        _closed_vs_averaged("DL19 BM25, scores cut to integers", qrels, str(rounded), ["P@10", "nDCG@10", "AP"], 3)


if __name__ == "__main__":
    main()
