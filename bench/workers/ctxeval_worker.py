"""ctxeval worker: runs the ctxeval CLI's entry point in this process.

    ctxeval evaluate QRELS RUN -m nDCG@10 -m AP -m RR -m P@10 -m R@100
        --missing ignore --format json --output RAW.json

(``ctxeval._cli.main``, what ``python -m ctxeval`` and the ``ctxeval`` command call), then converts
its JSON (``{"measures": [...], "runs": [{"name", "aggregate": {...}, "valid_queries": {...}}],
"settings": {...}}``) into the common worker format. ``--missing ignore`` = average over queries in
both qrels and run (pytrec_eval rule).

Calling the entry point here rather than in a child process saves one bare interpreter start
(~20 ms) that no other worker pays; the work done is the CLI's, and the process ends as the CLI
does, with ``os._exit`` after flushing (no heap teardown). ``CTXEVAL_BENCH_SUBPROCESS=1`` runs
``python -m ctxeval`` as a child instead (os.wait4 in the harness then reports the child's peak RSS,
as the kernel folds reaped children into it). The CLI's own wall time is recorded as timings.cli_s.
"""

import time

T0 = time.perf_counter()
import json
import os
import sys

from _common import MEASURES, parse_args, write_result


def main():
    qrels_path, run_path, out = parse_args()
    raw = out + ".ctxeval-raw.json"
    args = ["evaluate", qrels_path, run_path]
    for m in MEASURES:
        args += ["-m", m]
    args += ["--missing", "ignore", "--format", "json", "--output", raw]
    t1 = time.perf_counter()
    if os.environ.get("CTXEVAL_BENCH_SUBPROCESS") == "1":
        import subprocess

        code = subprocess.run([sys.executable, "-m", "ctxeval", *args]).returncode
    else:
        from ctxeval._cli import main as cli_main

        code = cli_main(args)
    t2 = time.perf_counter()
    if code != 0:
        sys.exit(f"ctxeval CLI failed with exit code {code}: ctxeval {' '.join(args)}")
    with open(raw) as f:
        doc = json.load(f)
    run = doc["runs"][0]
    agg = run["aggregate"]
    vq = run.get("valid_queries")
    # valid_queries: {measure: count} (contract), tolerate a plain count / list of qids
    n = None
    if isinstance(vq, dict):
        counts = {v for v in vq.values() if isinstance(v, int)}
        if len(counts) == 1:
            n = counts.pop()
        elif "count" in vq and isinstance(vq["count"], int):
            n = vq["count"]
    elif isinstance(vq, int):
        n = vq
    elif isinstance(vq, list):
        n = len(vq)
    try:
        from importlib.metadata import version

        ver = version("ctxeval")
    except Exception:
        ver = None
    t3 = time.perf_counter()
    write_result(
        out,
        "ctxeval",
        ver,
        {m: agg[m] for m in MEASURES},
        n,
        {"cli_s": t2 - t1, "total_s": t3 - T0},
        notes=[f"valid_queries={json.dumps(vq)[:200]}", f"settings={json.dumps(doc.get('settings'))[:300]}"],
    )
    os.remove(raw)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # as the CLI does: no teardown of the evaluation's heap


if __name__ == "__main__":
    main()
