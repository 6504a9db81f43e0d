#!/usr/bin/env python3
"""Whole-process benchmark: ctxeval vs pytrec_eval, ir_measures and ranx.

    python bench/run.py --scale S [M L] [--tools ctxeval,pytrec_eval,ir_measures,ranx]
                        [--repeat 1] [--json FILE] [--ranx-cold] [--timeout SEC]

For every scale and tool one fresh Python process (``sys.executable
bench/workers/<tool>_worker.py QRELS RUN OUT.json``) loads the TREC files from
disk, computes nDCG@10, AP, RR, P@10 and R@100 per query and writes the means
over the queries present in both qrels and run.  The harness records

* wall time: time.perf_counter() around the child (spawn to reap);
* peak memory: ru_maxrss of the child from os.wait4() (KiB on Linux; the
  kernel reports the max over the child and its reaped descendants, so the
  ctxeval worker's CLI grandchild is covered).

and checks that every tool's means agree with pytrec_eval's within 1e-6
(ranx breaks score ties differently, so its differences are flagged as
expected and do not fail the run).  Exit status: 0 ok, 1 unexpected mismatch
or worker failure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
WORKERS = BENCH / "workers"
ALL_TOOLS = ["ctxeval", "pytrec_eval", "ir_measures", "ranx"]
MEASURES = ["nDCG@10", "AP", "RR", "P@10", "R@100"]
REFERENCE = "pytrec_eval"
TOL = 1e-6
EXPECTED_DIFF = {"ranx": "ranx breaks score ties differently from trec_eval"}
IMPORT_NAME = {
    "ctxeval": "ctxeval",
    "pytrec_eval": "pytrec_eval",
    "ir_measures": "ir_measures",
    "ranx": "ranx",
    "ctxeval@ref": "ctxeval",
}
REF_TOOL = "ctxeval@ref"  # ctxeval from another checkout (--ref), for before/after figures


# --------------------------------------------------------------------------- helpers
def tool_env(tool: str) -> tuple[dict | None, str]:
    """Environment in which `tool` imports, or (None, reason)."""
    env = dict(os.environ)
    mod = IMPORT_NAME[tool]
    chk = [sys.executable, "-c", f"import {mod}"]
    r = subprocess.run(chk, env=env, capture_output=True, text=True)
    if r.returncode == 0:
        return env, ""
    reason = (r.stderr.strip().splitlines() or ["import failed"])[-1]
    # src layout: fall back to the in-repo sources if the package is not installed
    src = REPO / "src"
    if tool == "ctxeval" and (src / "ctxeval").is_dir():
        env["PYTHONPATH"] = os.pathsep.join([str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        r = subprocess.run(chk, env=env, capture_output=True, text=True)
        if r.returncode == 0:
            return env, f"using PYTHONPATH={src} (package not installed)"
        reason = (r.stderr.strip().splitlines() or ["import failed"])[-1]
    return None, reason


def ref_env(checkout: Path) -> tuple[dict | None, str]:
    """Environment importing ctxeval from ``checkout``/src (ahead of the installed one)."""
    src = checkout.resolve() / "src"
    if not (src / "ctxeval").is_dir():
        return None, f"{src} holds no ctxeval package"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(src)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    r = subprocess.run(
        [sys.executable, "-c", "import ctxeval, os; print(os.path.dirname(ctxeval.__file__))"],
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 or not r.stdout.strip().startswith(str(src)):
        return None, f"cannot import ctxeval from {src}: {(r.stderr.strip().splitlines() or [r.stdout.strip()])[-1]}"
    return env, f"ctxeval from {src}"


def byte_compile(tool: str, env: dict) -> str:
    """Byte-compile the tool's package, as pip does when it installs a wheel.

    An editable or PYTHONPATH checkout has no bytecode, and with PYTHONDONTWRITEBYTECODE=1 (set on
    the development machine) Python would recompile every module at every start (~40 ms for
    ctxeval); the peers are pip-installed and have theirs. compileall writes regardless of that
    variable, and the interpreter reads the result.
    """
    r = subprocess.run(
        [sys.executable, "-c", f"import os, {IMPORT_NAME[tool]} as m; print(os.path.dirname(m.__file__))"],
        env=env,
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        return f"not byte-compiled ({(r.stderr.strip().splitlines() or ['?'])[-1]})"
    pkg = r.stdout.strip()
    c = subprocess.run([sys.executable, "-m", "compileall", "-q", pkg], env=env, capture_output=True, text=True)
    return f"byte-compiled {pkg}" if c.returncode == 0 else f"compileall failed: {c.stdout.strip()[-200:]}"


def ensure_data(data_root: Path, scale: str) -> Path:
    d = data_root / scale
    if not ((d / "qrels.txt").exists() and (d / "run.txt").exists()):
        print(f"[{scale}] data missing in {d}; generating ...", flush=True)
        subprocess.run(
            [sys.executable, str(BENCH / "generate.py"), "--scale", scale, "--out", str(data_root)], check=True
        )
    return d


def warm_page_cache(*paths: Path) -> None:
    """Read the inputs once so no tool pays the cold disk read."""
    for p in paths:
        with open(p, "rb", buffering=0) as f:
            while f.read(1 << 24):
                pass


def run_child(cmd: list[str], env: dict, log_path: Path, timeout: float | None):
    """Spawn cmd, reap it with os.wait4; return (wall_s, maxrss_kib, exitcode, timed_out, cpu_s)."""
    lock = threading.Lock()
    state = {"done": False, "timed_out": False}
    with open(log_path, "wb") as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=str(REPO))

        def on_timeout():
            with lock:
                if not state["done"]:
                    state["timed_out"] = True
                    os.kill(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, on_timeout) if timeout else None
        if timer:
            timer.start()
        while True:
            try:
                _, status, ru = os.wait4(proc.pid, 0)
                break
            except InterruptedError:
                continue
        wall = time.perf_counter() - t0
        with lock:
            state["done"] = True
        if timer:
            timer.cancel()
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code  # already reaped; keep Popen from waiting again
    return wall, ru.ru_maxrss, code, state["timed_out"], ru.ru_utime + ru.ru_stime


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


# --------------------------------------------------------------------------- main
def bench_scale(scale: str, tools: list[str], args, envs: dict, workdir: Path) -> dict:
    d = ensure_data(Path(args.data), scale)
    qrels, run = d / "qrels.txt", d / "run.txt"
    params = {}
    if (d / "params.json").exists():
        params = json.loads((d / "params.json").read_text())
    warm_page_cache(qrels, run)
    print(
        f"\n=== scale {scale}: {qrels} ({qrels.stat().st_size / 2**20:.1f} MiB), "
        f"{run} ({run.stat().st_size / 2**20:.1f} MiB) ===",
        flush=True,
    )

    # Repeats are interleaved (round 1: every tool once, round 2: ...), so that every tool meets the
    # same machine conditions (a neighbour's load, the kernel still reclaiming a previous process's
    # memory) rather than one tool taking all its repeats in one stretch.
    results: dict[str, dict] = {}
    state: dict[str, dict] = {}
    for tool in tools:
        env = envs[tool]
        if env is None:
            results[tool] = {"status": "skipped", "reason": envs.get(f"{tool}:reason", "")}
            continue
        env = dict(env)
        cold_dir = None
        if tool == "ranx" and args.ranx_cold:
            cold_dir = Path(tempfile.mkdtemp(prefix="numba-cold-", dir=workdir))
            env["NUMBA_CACHE_DIR"] = str(cold_dir)
        state[tool] = {"env": env, "cold_dir": cold_dir, "runs": [], "res": {"status": "ok"}}
    for i in range(args.repeat):
        for tool, st in state.items():
            if st["res"]["status"] != "ok":
                continue
            cold_dir = st["cold_dir"]
            if cold_dir is not None and i > 0:  # every repeat cold
                shutil.rmtree(cold_dir, ignore_errors=True)
                cold_dir.mkdir()
            out = workdir / f"{scale}-{tool}-{i}.json"
            log = workdir / f"{scale}-{tool}-{i}.log"
            worker = "ctxeval" if tool == REF_TOOL else tool
            cmd = [sys.executable, str(WORKERS / f"{worker}_worker.py"), str(qrels), str(run), str(out)]
            print(f"[{scale}] {tool} #{i + 1}/{args.repeat} ...", end=" ", flush=True)
            # again before every process, not only once: on this kind of virtual machine the host
            # reclaims guest memory left idle for a few seconds, page cache included, and reading the
            # 400 MB run back then costs 0.2-0.6 s; without this, whichever tool follows a long one
            # pays it and the one that follows a short one does not (measured: bench/README)
            warm_page_cache(qrels, run)
            wall, rss_kib, code, timed_out, cpu = run_child(cmd, st["env"], log, args.timeout)
            if code != 0 or not out.exists():
                why = "timeout" if timed_out else f"exit code {code}"
                tail = log.read_text(errors="replace").strip().splitlines()[-15:]
                print(f"FAILED ({why}, {wall:.1f}s)\n    " + "\n    ".join(tail), flush=True)
                st["res"] = {"status": "failed", "reason": why, "log_tail": tail}
                continue
            doc = json.loads(out.read_text())
            print(f"{wall:.2f}s (cpu {cpu:.2f}s), {rss_kib / 1024:.0f} MB", flush=True)
            st["runs"].append({"wall_s": wall, "cpu_s": cpu, "peak_rss_kib": rss_kib, "worker": doc})
    for tool, st in state.items():
        if st["cold_dir"] is not None:
            shutil.rmtree(st["cold_dir"], ignore_errors=True)
        runs, res = st["runs"], st["res"]
        if runs and res["status"] == "ok":
            walls = [r["wall_s"] for r in runs]
            last = runs[-1]["worker"]
            res.update(
                wall_s=statistics.median(walls),
                wall_s_min=min(walls),
                wall_s_all=walls,
                cpu_s=statistics.median(r["cpu_s"] for r in runs),
                cpu_s_all=[r["cpu_s"] for r in runs],
                peak_rss_mb=max(r["peak_rss_kib"] for r in runs) / 1024,
                peak_rss_kib_all=[r["peak_rss_kib"] for r in runs],
                means=last["means"],
                n_queries=last.get("n_queries"),
                version=last.get("version"),
                timings_all=[r["worker"].get("timings") for r in runs],
                notes=sorted({n for r in runs for n in r["worker"].get("notes", [])}),
            )
            if any(r["worker"]["means"] != last["means"] for r in runs):
                res["notes"].append("means differ between repeats!")
        results[tool] = res
    results = {t: results[t] for t in tools if t in results}  # the table in the order asked

    # ---- table --------------------------------------------------------------
    ref = results.get(REFERENCE) if results.get(REFERENCE, {}).get("status") == "ok" else None
    head = (
        f"{'tool':<12} {'wall s':>8} {'cpu s':>7} {'peak MB':>8} {'wall x':>7} {'paired':>7} {'cpu x':>7} {'mem x':>7} "
        + " ".join(f"{m:>9}" for m in MEASURES)
        + f" {'queries':>8}"
    )
    print(
        f"\nscale {scale} (wall = median of {args.repeat}; ratios vs {REFERENCE}; paired = median of the rounds' "
        "wall ratios, each round's processes run one after another)"
    )
    print(head)
    print("-" * len(head))
    for tool in tools:
        r = results[tool]
        if r["status"] != "ok":
            print(f"{tool:<12} {r['status'].upper()}: {r.get('reason', '')}")
            continue
        wx = r["wall_s"] / ref["wall_s"] if ref else None
        mx = r["peak_rss_mb"] / ref["peak_rss_mb"] if ref else None
        cx = r["cpu_s"] / ref["cpu_s"] if ref else None
        px = None
        if ref and len(r["wall_s_all"]) == len(ref["wall_s_all"]):
            px = statistics.median(a / b for a, b in zip(r["wall_s_all"], ref["wall_s_all"]))
            r["wall_x_paired"] = px
        print(
            f"{tool:<12} {r['wall_s']:>8.2f} {r['cpu_s']:>7.2f} {r['peak_rss_mb']:>8.0f} {fmt(wx, '>7.2f')} "
            f"{fmt(px, '>7.2f')} {fmt(cx, '>7.2f')} {fmt(mx, '>7.2f')} "
            + " ".join(f"{r['means'][m]:>9.6f}" for m in MEASURES)
            + f" {fmt(r.get('n_queries'), '>8')}"
        )
    for tool in tools:
        r = results[tool]
        if r["status"] == "ok" and r.get("notes") and tool != "ir_measures":
            for n in r["notes"]:
                print(f"  note[{tool}]: {n}")

    # ---- agreement ----------------------------------------------------------
    agreement = []
    unexpected = 0
    if ref is None:
        print(f"  agreement: not checked ({REFERENCE} result unavailable)")
    else:
        for tool in tools:
            r = results[tool]
            if tool == REFERENCE or r["status"] != "ok":
                continue
            diffs = {m: r["means"][m] - ref["means"][m] for m in MEASURES if abs(r["means"][m] - ref["means"][m]) > TOL}
            nq_diff = (
                r.get("n_queries") is not None
                and ref.get("n_queries") is not None
                and r["n_queries"] != ref["n_queries"]
            )
            ok = not diffs and not nq_diff
            expected = tool in EXPECTED_DIFF
            agreement.append(
                {
                    "tool": tool,
                    "ok": ok,
                    "diffs": diffs,
                    "n_queries": r.get("n_queries"),
                    "expected": expected and not ok,
                }
            )
            if ok:
                print(f"  agree   {tool}: all means within {TOL:g} of {REFERENCE}")
                continue
            parts = [f"{m} {d:+.3e}" for m, d in diffs.items()]
            if nq_diff:
                parts.append(f"queries {r['n_queries']} vs {ref['n_queries']}")
            if expected:
                print(
                    f"  MISMATCH {tool} vs {REFERENCE} (expected, not a failure: "
                    f"{EXPECTED_DIFF[tool]}): " + ", ".join(parts)
                )
            else:
                unexpected += 1
                print(f"  MISMATCH {tool} vs {REFERENCE}: " + ", ".join(parts))
    failed = sum(1 for r in results.values() if r["status"] == "failed")
    return {
        "data": {"dir": str(d), "qrels_bytes": qrels.stat().st_size, "run_bytes": run.stat().st_size, **params},
        "tools": results,
        "agreement": agreement,
        "unexpected_mismatches": unexpected,
        "failed_tools": failed,
    }


def machine_info() -> dict:
    info = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    }
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    info["mem_total_kib"] = int(line.split()[1])
                    break
    except OSError:
        pass
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="ctxeval whole-process benchmark vs peers")
    ap.add_argument("--scale", nargs="+", default=["S"], type=str.upper, choices=["S", "M", "L"])
    ap.add_argument("--tools", default=",".join(ALL_TOOLS), help=f"comma-separated subset of {','.join(ALL_TOOLS)}")
    ap.add_argument("--repeat", type=int, default=1, help="processes per tool (median wall reported)")
    ap.add_argument("--json", metavar="FILE", help="write all figures to FILE")
    ap.add_argument("--data", default=str(BENCH / "data"), help="data root (default bench/data)")
    ap.add_argument("--timeout", type=float, default=None, help="kill a worker after SEC seconds")
    ap.add_argument(
        "--ranx-cold", action="store_true", help="fresh NUMBA_CACHE_DIR for each ranx process (timing includes JIT)"
    )
    ap.add_argument("--keep", action="store_true", help="keep worker outputs/logs (printed dir)")
    ap.add_argument(
        "--ref",
        metavar="CHECKOUT",
        help="also run ctxeval from CHECKOUT/src as the tool ctxeval@ref, interleaved with the others "
        "(before/after figures of a change: e.g. a git worktree of the commit before it)",
    )
    ap.add_argument(
        "--no-compile", action="store_true", help="do not byte-compile the ctxeval package before measuring it"
    )
    args = ap.parse_args(argv)

    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in ALL_TOOLS]
    if bad:
        ap.error(f"unknown tools {bad}; choose from {ALL_TOOLS}")
    # reference first so ratios/agreement are available, otherwise keep given order
    if args.ref:
        tools.append(REF_TOOL)
    tools = sorted(dict.fromkeys(tools), key=lambda t: t != REFERENCE)

    envs: dict = {}
    for t in tools:
        env, msg = ref_env(Path(args.ref)) if t == REF_TOOL else tool_env(t)
        envs[t] = env
        if env is None:
            envs[f"{t}:reason"] = f"`import {IMPORT_NAME[t]}` failed ({msg})"
            print(f"SKIP {t}: cannot `import {IMPORT_NAME[t]}` with {sys.executable}: {msg}")
        elif msg:
            print(f"{t}: {msg}")
        if env is not None and t in ("ctxeval", REF_TOOL) and not args.no_compile:
            print(f"{t}: {byte_compile(t, env)}")

    workdir = Path(tempfile.mkdtemp(prefix="ctxeval-bench-"))
    report = {
        "machine": machine_info(),
        "tools": tools,
        "repeat": args.repeat,
        "ranx_cold": args.ranx_cold,
        "tolerance": TOL,
        "reference": REFERENCE,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "scales": {},
    }
    try:
        for scale in args.scale:
            report["scales"][scale] = bench_scale(scale, tools, args, envs, workdir)
    finally:
        if args.keep:
            print(f"\nworker outputs and logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    bad_scales = [s for s, r in report["scales"].items() if r["unexpected_mismatches"] or r["failed_tools"]]
    if bad_scales:
        print(f"\nFAILED: unexpected mismatches or worker failures at scale(s) {', '.join(bad_scales)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
