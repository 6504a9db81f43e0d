#!/usr/bin/env python3
"""What one bad line at the end of a large run costs, next to reading the valid run (issue 29 point 4).

    python bench/error_path_cost.py [--mb 100] [--repeat 3] [--ref ../before]

Writes a run of about ``--mb`` MB (``bench/data/error-path/``: grouped queries of 100 lines, 6-decimal
scores) and the same run with a last line of five fields, then times ``Run.from_file`` on each in a
fresh process (wall time and peak RSS), with the compiled scanner on and off (``CTXEVAL_NATIVE=0``:
the vectorised tier), and ``--ref``'s checkout beside when given. The bad run must give the error
naming its last line; the ratio bad / valid is the figure (the issue's target: at most ~1.5x in time
and memory; it was 49x and 25x).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent

_READ = """
import resource, sys, time
from ctxeval import Run, FormatError
t = time.perf_counter()
try:
    Run.from_file(sys.argv[1])
    out = "read"
except FormatError as exc:
    out = str(exc)[:120]
wall = time.perf_counter() - t
print(f"{wall:.3f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} {out}")
"""


def write(folder: Path, mb: int) -> tuple[Path, Path, int]:
    folder.mkdir(parents=True, exist_ok=True)
    valid, bad = folder / "valid.run", folder / "bad.run"
    n = mb * 1_000_000 // 42
    if not valid.exists() or valid.stat().st_size < mb * 900_000:
        with open(valid, "w") as fh:
            for start in range(0, n, 100_000):
                fh.write(
                    "".join(
                        f"{1_000_000 + i // 100} Q0 D{(i * 7919) % 9_000_000:07d} {i % 100 + 1} {1 - (i % 100) / 1e3:.6f} run\n"
                        for i in range(start, min(n, start + 100_000))
                    )
                )
        with open(bad, "wb") as out, open(valid, "rb") as src:
            while block := src.read(1 << 24):
                out.write(block)
            out.write(b"1999999 Q0 D0000001 1 0.5\n")
    lines = 0
    with open(valid, "rb") as fh:
        while block := fh.read(1 << 24):
            lines += block.count(b"\n")
    return valid, bad, lines + 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ref", type=Path, default=None, help="a checkout of the code to compare with")
    a = ap.parse_args()
    valid, bad, bad_line = write(BENCH / "data" / "error-path", a.mb)
    print(f"runs: {valid} ({valid.stat().st_size / 1e6:.0f} MB); {bad}: the bad line is line {bad_line:,}")
    checkouts = {"ctxeval": REPO} | ({"ref": a.ref.resolve()} if a.ref else {})
    rows = []
    for label, root in checkouts.items():
        for native in ("1", "0"):
            env = {**os.environ, "PYTHONPATH": str(root / "src"), "CTXEVAL_NATIVE": native}
            got: dict[str, list[tuple[float, float]]] = {"valid": [], "bad": []}
            for _ in range(a.repeat):
                for name, path in (("valid", valid), ("bad", bad)):
                    done = subprocess.run(
                        [sys.executable, "-c", _READ, str(path)], env=env, capture_output=True, text=True
                    )
                    wall, peak, what = done.stdout.split(" ", 2)
                    if name == "bad" and f":{bad_line}:" not in what:
                        print(f"{label} native={native}: the bad run gave {what!r}", file=sys.stderr)
                        return 1
                    got[name].append((float(wall), float(peak)))
            med = {k: (statistics.median(w for w, _ in v), max(m for _, m in v)) for k, v in got.items()}
            rows.append((label, "scanner" if native == "1" else "vectorised", med))
    print(
        f"{'code':8} {'tier':11} {'valid s':>8} {'valid MB':>9} {'bad s':>8} {'bad MB':>8} {'time x':>7} {'mem x':>6}"
    )
    for label, tier, med in rows:
        (vw, vm), (bw, bm) = med["valid"], med["bad"]
        print(f"{label:8} {tier:11} {vw:8.2f} {vm:9.0f} {bw:8.2f} {bm:8.0f} {bw / vw:7.2f} {bm / vm:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
