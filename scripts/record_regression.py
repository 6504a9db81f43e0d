#!/usr/bin/env python3
"""Record the regression corpus (tests/regression/cases.py) under tests/data/regression.

    python scripts/record_regression.py [NAME ...]     # all cases, or the named ones

Run it only when a change of output is intended, and commit the recordings with that change.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from regression.cases import CASES, RECORDINGS, needs_trec_eval_files, setup_scratch
from regression.runner import run_case
from shared_data import trec_eval_missing


def main(names: list[str]) -> int:
    unknown = set(names) - {c.name for c in CASES}
    if unknown:
        print(f"unknown case(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    RECORDINGS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        setup_scratch(scratch)
        for case in CASES:
            if names and case.name not in names:
                continue
            if needs_trec_eval_files(case) and trec_eval_missing() is not None:
                print(f"{case.name}: kept as recorded: {trec_eval_missing()}")
                continue
            text = run_case(case, scratch)
            (RECORDINGS / f"{case.name}.txt").write_text(text, encoding="utf-8")
            print(f"{case.name}: {text.splitlines()[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
