"""The README's measure list is generated from the registry and must stay in step with it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_measure_list_is_current() -> None:
    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "scripts" / "update_readme.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert mod.updated(text) == text, "README measure list is stale: run python scripts/update_readme.py"
