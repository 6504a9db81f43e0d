"""Span measures and the ideal at a budget: ctxeval's vectorised kernels beside plain Python readings
of the same definitions, with the time and the peak memory of each, printed side by side.

    python bench/spans_cost.py [--questions 10000] [--chunks 20] [--candidates 100] [--budget 4096]

1. **Span scoring**: ``--questions`` questions, each with 1-3 reference spans in one of 100 documents
   of 300,000 characters (the size of Chroma's corpora), chunked by a sliding window (1,000
   characters, 200 of overlap: 37,400 chunks), each retrieving ``--chunks`` chunks (some on its evidence, some elsewhere in its
   document, some in other documents). ctxeval computes Chroma's recall, precision, IoU and
   precision_Omega (``mode=chroma``) from the labels, the chunk table and the run as ctxeval objects
   (the session, the join, the side data and the kernels: what ``ctxeval.evaluate`` costs once its
   inputs are read), and the kernels alone on the prepared side data; the
   plain reading follows Chroma's definition as its README measures it (per question: each
   retrieved chunk against each reference, the intersections unioned by sorting, the unused
   reference characters cut out range by range; precision_Omega by scanning every chunk of the
   question's document). Both give the same values (checked).
2. **The ideal at a budget**: ``--candidates`` judged chunks per query (50-400 tokens each, grades
   0-3), the best ordered selection within ``--budget`` tokens (IDCG@B, nDCG's ideal) and the best
   set (the 0/1 knapsack, RA-nWG's G_ideal), for a block of queries at once; the plain reading is
   the same dynamic programme written with Python lists, on a few queries (its time per query is
   what is compared).

Times are the best of ``--repeat`` untraced runs (wall clock); peak memory is tracemalloc's peak
over one more run of the same computation (Python objects and numpy buffers alike), never timed.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np

import ctxeval
from ctxeval._core.knapsack import ordered_optimum, set_optimum

N_DOCS, DOC_LEN, WINDOW, STRIDE = 100, 300_000, 1_000, 800  # Chroma's five corpora average 289,000 characters


def measured(fn, repeat: int = 1):
    """(wall seconds, CPU seconds, peak bytes, result): the best wall and CPU times of ``repeat``
    untraced runs, and tracemalloc's peak over one more run. Never both at once: tracing slows every
    Python-level allocation (the plain readings' lists, tuples and floats) several fold, numpy's few
    large buffers hardly at all, so a time taken under tracemalloc flatters the vectorised side (the
    span rows' plain reading took 4.2 s traced against 0.3-0.45 s untraced). The ratios are of CPU
    times (this process's; one thread either way), which a loaded machine moves less than wall times."""
    wall = cpu = math.inf
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return wall, cpu, peak, out


def row(name: str, t: tuple, plain: tuple | None, per: float = 1.0, unit: float = 1.0) -> None:
    """One printed row: wall and CPU time (per ``per`` items, scaled by ``unit``), peak MiB, x plain (CPU)."""
    ratio = 1.0 if plain is None else (plain[1] / plain[4]) / (t[1] / per)
    print(f"{name:34}{unit * t[0] / per:>10.3f}{unit * t[1] / per:>10.3f}{t[2] / 2**20:>10.1f}{ratio:>9.1f}")


def synthetic(n_q: int, k: int, seed: int = 7) -> tuple[list, dict, dict]:
    rng = np.random.default_rng(seed)
    starts = np.arange(0, DOC_LEN - WINDOW + 1, STRIDE)
    table = {f"d{d}:{i}": (f"d{d}", int(s), int(s + WINDOW)) for d in range(N_DOCS) for i, s in enumerate(starts)}
    labels, run = [], {}
    for q in range(n_q):
        doc = int(rng.integers(N_DOCS))
        n_ref = int(rng.integers(1, 4))
        cuts = np.sort(rng.choice(DOC_LEN // 500, size=n_ref, replace=False)) * 500
        refs = [(int(c), int(c + rng.integers(100, 400))) for c in cuts]
        labels += [{"query_id": f"q{q}", "doc_id": f"d{doc}", "start": s, "end": e} for s, e in refs]
        near = [i for i, s in enumerate(starts) for a, b in refs if s < b and s + WINDOW > a]
        same = rng.choice(len(starts), size=k, replace=False).tolist()
        other = [(int(rng.integers(N_DOCS)), int(rng.integers(len(starts)))) for _ in range(k)]
        ids = list(
            dict.fromkeys(
                [f"d{doc}:{i}" for i in near] + [f"d{doc}:{i}" for i in same] + [f"d{d}:{i}" for d, i in other]
            )
        )
        picked = [ids[i] for i in sorted(rng.choice(len(ids), size=k, replace=False).tolist())]
        run[f"q{q}"] = {c: float(k - r) for r, c in enumerate(picked)}
    return labels, table, run


# --- the plain reading of Chroma's definition (chunking_evaluation's README, section 2) -------------------


def _union_len(ranges):
    total, end = 0, -1
    for s, e in sorted(ranges):
        if e <= end:
            continue
        total += e - max(s, end)
        end = e
    return total


def _cut(ranges, s, e):
    out = []
    for a, b in ranges:
        if b <= s or a >= e:
            out.append((a, b))
            continue
        if a < s:
            out.append((a, s))
        if b > e:
            out.append((e, b))
    return out


def chroma_plain(labels, table, run, omega: bool = True) -> dict[str, dict[str, float]]:
    refs: dict[str, list] = {}
    doc_of: dict[str, str] = {}
    for rec in labels:
        refs.setdefault(rec["query_id"], []).append((rec["start"], rec["end"]))
        doc_of[rec["query_id"]] = rec["doc_id"]
    by_doc: dict[str, list] = {}
    for d, s, e in table.values():
        by_doc.setdefault(d, []).append((s, e))
    out = {}
    for q, rs in refs.items():
        ranked = sorted(run[q], key=lambda c: -run[q][c])
        ret = [table[c] for c in ranked]
        unused, num = list(rs), []
        for d, cs, ce in ret:
            if d != doc_of[q]:
                continue
            for s, e in rs:
                a, b = max(cs, s), min(ce, e)
                if a <= b:
                    unused = _cut(unused, a, b)
                    num.append((a, b))
        n = _union_len(num)
        sum_ret = sum(e - s for _, s, e in ret)
        sum_ref = sum(e - s for s, e in rs)
        out[q] = {
            "recall": n / sum_ref,
            "precision": n / sum_ret,
            "iou": n / (sum_ret + sum(e - s for s, e in unused)),
        }
        if not omega:
            continue
        h = [(cs, ce) for cs, ce in by_doc[doc_of[q]] if any(cs <= e and ce >= s for s, e in rs)]
        hn = [(max(cs, s), min(ce, e)) for cs, ce in h for s, e in rs if max(cs, s) < min(ce, e)]
        h_unused = list(rs)
        for cs, ce in h:
            h_unused = _cut(h_unused, cs, ce)
        den = _union_len(h + h_unused)
        out[q]["precision_omega"] = _union_len(hn) / den if h else 0.0
    return out


def ideal_plain(gains, weights, budget, ordered: bool) -> float:
    """The same DP with Python lists (gain-descending items; exactly-j-items rows when ordered)."""
    items = sorted(((g, w) for g, w in zip(gains, weights) if g > 0 and w <= budget), key=lambda x: -x[0])
    if not ordered:
        best = [0.0] * (budget + 1)
        for g, w in items:
            for c in range(budget, w - 1, -1):
                if best[c - w] + g > best[c]:
                    best[c] = best[c - w] + g
        return best[budget]
    ninf = -math.inf
    rows = [[0.0] * (budget + 1)]
    for i, (g, w) in enumerate(items):
        rows.append([ninf] * (budget + 1))
        for j in range(min(i + 1, len(rows) - 1), 0, -1):
            gd = g / math.log2(j + 1)
            prev, cur = rows[j - 1], rows[j]
            for c in range(w, budget + 1):
                v = prev[c - w] + gd
                if v > cur[c]:
                    cur[c] = v
    return max(r[budget] for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--chunks", type=int, default=20)
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--budget", type=int, default=4096)
    ap.add_argument("--queries", type=int, default=200, help="queries of the budget ideal solved by ctxeval")
    ap.add_argument("--plain-queries", type=int, default=2, help="queries solved by the plain DP")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each span scoring row (the best is shown)")
    ap.add_argument("--parts", default="spans,ideal", help="what to run: spans, ideal or both (comma-separated)")
    args = ap.parse_args()

    if "spans" in args.parts.split(","):
        span_scoring(args)
    if "ideal" in args.parts.split(","):
        ideal(args)


def span_scoring(args: argparse.Namespace) -> None:
    labels, table, run = synthetic(args.questions, args.chunks)
    names = ["SpanRecall(mode=chroma)", "SpanPrecision(mode=chroma)", "SpanIoU(mode=chroma)"]
    ms = [f"{n}@{args.chunks}" for n in names] + ["PrecisionOmega(mode=chroma)"]

    spans = ctxeval.SpanLabels.from_records(labels)
    chunks = ctxeval.Chunks.from_dict(table)
    run_obj = ctxeval.Run.from_dict(run)

    def with_ctxeval():
        return ctxeval.evaluate(spans, run_obj, ms, chunks=chunks).runs[0]

    with_ctxeval()  # imports and first-call caches out of the timing
    ce = (*measured(with_ctxeval, args.repeat), 1)
    res = ce[3]
    from ctxeval._session import open_session

    session, (r,) = open_session(spans, [run_obj], ms, rag={"chunks": chunks})
    data = session.prepare(r)
    measures = session.measures
    # the kernels on the prepared side data, each run with an empty memo (a shared one would return
    # the first run's sums)
    kern = measured(lambda: [m.compute(replace(data, _memo={})) for m in measures], args.repeat)
    py = (*measured(lambda: chroma_plain(labels, table, run), args.repeat), 1)
    plain = py[3]
    py3 = (*measured(lambda: chroma_plain(labels, table, run, omega=False), args.repeat), 1)
    ce3 = measured(lambda: ctxeval.evaluate(spans, run_obj, ms[:3], chunks=chunks), args.repeat)
    worst = max(
        abs(res.per_query(m)[q] - plain[q][f])
        for m, f in zip(ms, ("recall", "precision", "iou", "precision_omega"))
        for q in plain
    )
    print(
        f"span scoring: {args.questions:,} questions x {args.chunks} chunks, {len(table):,} chunks in {N_DOCS} documents "
        f"(recall, precision, IoU, precision_Omega; largest difference {worst:.1e})"
    )
    print(f"{'':34}{'wall s':>10}{'CPU s':>10}{'peak MiB':>10}{'x plain':>9}")
    row("ctxeval.evaluate (mode=chroma)", ce, py)
    row("ctxeval kernels, side data built", kern, py)
    row("plain Python (Chroma definition)", py, None)
    print("recall, precision and IoU alone (no precision_Omega, whose plain reading scans the document's chunks):")
    row("ctxeval.evaluate (mode=chroma)", ce3, py3)
    row("plain Python (Chroma definition)", py3, None)


def ideal(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(11)
    nq, n = args.queries, args.candidates
    gains = rng.choice([0, 1, 2, 3], p=[0.4, 0.3, 0.2, 0.1], size=nq * n).astype(np.float64)
    weights = rng.integers(50, 401, size=nq * n)
    off = np.arange(nq + 1) * n
    disc = 1.0 / np.log2(np.arange(2, n + 2))
    o = measured(lambda: ordered_optimum(off, gains, weights, args.budget, disc))
    st = measured(lambda: set_optimum(off, gains, weights, args.budget))
    k = args.plain_queries
    po = measured(
        lambda: [
            ideal_plain(gains[i * n : (i + 1) * n], weights[i * n : (i + 1) * n], args.budget, True) for i in range(k)
        ]
    )
    ps = measured(
        lambda: [
            ideal_plain(gains[i * n : (i + 1) * n], weights[i * n : (i + 1) * n], args.budget, False) for i in range(k)
        ]
    )
    assert np.allclose(o[3][:k], po[3])
    assert np.allclose(st[3][:k], ps[3])
    print(f"\nideal at B = {args.budget:,} tokens over {n} candidate chunks (50-400 tokens, grades 0-3), per query")
    print(f"{'':34}{'wall ms':>10}{'CPU ms':>10}{'peak MiB':>10}{'x plain':>9}")
    row("ctxeval ordered (IDCG@B)", o, (*po, k), nq, 1e3)
    row("plain Python ordered DP", po, None, k, 1e3)
    row("ctxeval set (0/1 knapsack)", st, (*ps, k), nq, 1e3)
    row("plain Python set DP", ps, None, k, 1e3)
    print(f"(ctxeval: {nq} queries in one call; plain: {k} queries)")


if __name__ == "__main__":
    main()
