#!/usr/bin/env python3
"""What the reading rule's byte checks cost the CLI, next to the code before the restructure.

    python bench/reader_rule_cost.py --scale M L [--ref ../before] [--repeat 9]

Three variants of ``ctxeval evaluate QRELS RUN -m nDCG@10 -m AP -m RR -m P@10 -m R@100 --missing
ignore --format json`` on ``bench/data/<scale>`` (make it with ``bench/generate.py``), each in a fresh
process, interleaved round by round (wall time from spawn to exit; run it with ``CTXEVAL_NATIVE=0``: the
compiled scanner, when it is in use, reads these files before the vectorised tier):

* ``ctxeval``: this checkout, as shipped;
* ``no byte checks``: this checkout with the vectorised TREC tier's two rule checks turned off in the
  process (``plain_piece``: no space next to a tab, no NUL, no doubled separator; and the column
  past the format's that catches a line with too many fields). The output is the same on these
  files, which follow the rule; on files that do not, this variant would read them wrongly: it
  exists only to measure;
* ``ref``: ``--ref``'s checkout (e.g. a worktree of the commit before the restructure), if given.

Prints the medians and the ratios to ``ref``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
MEASURES = ["nDCG@10", "AP", "RR", "P@10", "R@100"]

_RUN = """
import sys
{patch}
from ctxeval._cli import main
sys.exit(main(sys.argv[1:]))
"""
_NO_CHECKS = """
import ctxeval._io.columnar as columnar
columnar.plain_piece = lambda piece, sep: True
columnar.checked_schema = columnar.trec_schema
"""


def _one(code: str, args: list[str], env: dict[str, str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", nargs="+", default=["M"])
    ap.add_argument("--ref", type=Path, default=None, help="a checkout of the code to compare with")
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args()
    here = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    variants = {"ctxeval": (_RUN.format(patch=""), here), "no byte checks": (_RUN.format(patch=_NO_CHECKS), here)}
    if a.ref is not None:
        variants["ref"] = (_RUN.format(patch=""), dict(os.environ, PYTHONPATH=str(a.ref.resolve() / "src")))
    for scale in a.scale:
        data = BENCH / "data" / scale
        if not (data / "run.txt").exists():
            print(f"{data}: no data; run python bench/generate.py --scale {scale}", file=sys.stderr)
            return 1
        out = BENCH / "data" / f"rule-cost-{scale}.json"
        args = ["evaluate", str(data / "qrels.txt"), str(data / "run.txt")]
        for m in MEASURES:
            args += ["-m", m]
        args += ["--missing", "ignore", "--format", "json", "--output", str(out)]
        for path in (data / "qrels.txt", data / "run.txt"):  # page cache
            with open(path, "rb") as fh:
                while fh.read(1 << 24):
                    pass
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(a.repeat):
            for name, (code, env) in variants.items():
                times[name].append(_one(code, args, env))
        base = statistics.median(times["ref"]) if "ref" in times else None
        print(f"scale {scale} (median of {a.repeat}, wall s from spawn to exit)")
        for name, ts in times.items():
            med = statistics.median(ts)
            ratio = f"  x ref {med / base:.3f}" if base else ""
            print(f"  {name:15s} {med:6.3f}  (min {min(ts):.3f}){ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
