"""ctxeval worker: runs the ctxeval CLI as a subprocess.

    python -m ctxeval evaluate QRELS RUN -m nDCG@10 -m AP -m RR -m P@10 -m R@100
        --missing ignore --format json --output RAW.json

and converts its JSON (``{"measures": [...], "runs": [{"name", "aggregate": {...},
"valid_queries": {...}}], "settings": {...}}``) into the common worker format.
``--missing ignore`` = average over queries in both qrels and run (pytrec_eval rule).

The benchmark harness measures this worker process; os.wait4 reports the max
RSS over the worker and its reaped children, so peak memory is the CLI's (this
wrapper itself is stdlib-only, a few MB).  Wall time includes one extra bare
interpreter start-up (~20 ms); the CLI's own wall time is recorded as
timings.cli_s.
"""
import time

T0 = time.perf_counter()
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from _common import MEASURES, parse_args, write_result  # noqa: E402


def main():
    qrels_path, run_path, out = parse_args()
    raw = out + ".ctxeval-raw.json"
    cmd = [sys.executable, "-m", "ctxeval", "evaluate", qrels_path, run_path]
    for m in MEASURES:
        cmd += ["-m", m]
    cmd += ["--missing", "ignore", "--format", "json", "--output", raw]
    t1 = time.perf_counter()
    proc = subprocess.run(cmd)
    t2 = time.perf_counter()
    if proc.returncode != 0:
        sys.exit(f"ctxeval CLI failed with exit code {proc.returncode}: {' '.join(cmd)}")
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
    write_result(out, "ctxeval", ver, {m: agg[m] for m in MEASURES},
                 n,
                 {"cli_s": t2 - t1, "total_s": t3 - T0},
                 notes=[f"valid_queries={json.dumps(vq)[:200]}", f"settings={json.dumps(doc.get('settings'))[:300]}"])
    os.remove(raw)


if __name__ == "__main__":
    main()
