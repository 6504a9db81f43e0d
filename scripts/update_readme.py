"""Regenerate the README's measure list from the registry: python scripts/update_readme.py"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from ctxeval._render.measures import measure_list  # noqa: E402

START, END = "<!-- measures:start -->", "<!-- measures:end -->"


def updated(text: str) -> str:
    body = measure_list("markdown")
    return re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: f"{START}\n{body}{END}", text, flags=re.S)


if __name__ == "__main__":
    readme = ROOT / "README.md"
    readme.write_text(updated(readme.read_text(encoding="utf-8")), encoding="utf-8")
