"""The site's generated pages stay in step with what they are generated from: the measure reference
with the registry (every family has its entry, with its formula and its source), the command-line
reference with every command's --help, the sample format's table with its field table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import ctxeval
from ctxeval._io.samples.fields import FIELDS

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("update_docs", ROOT / "scripts" / "update_docs.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_measure_page_is_current() -> None:
    mod = _script()
    text = mod.PAGE.read_text(encoding="utf-8")
    assert mod.updated(text) == text, "docs/reference/measures.md is stale: run python scripts/update_docs.py"


def test_the_command_line_page_is_current() -> None:
    mod = _script()
    text = mod.CLI_PAGE.read_text(encoding="utf-8")
    assert mod.cli_updated(text) == text, "docs/reference/cli.md is stale: run python scripts/update_docs.py"
    from ctxeval._cli import _COMMANDS

    for name in _COMMANDS:
        assert f"## ctxeval {name} {{#{name}}}" in text, name


def test_every_family_has_its_entry_with_formula_and_source() -> None:
    mod = _script()
    text = mod.PAGE.read_text(encoding="utf-8")
    for fam in ctxeval.families():
        entry = text.split(f"### {fam.name} {{#{mod.anchor(fam.name)}}}\n", 1)[1].split("\n### ", 1)[0]
        assert f"`{fam.formula}`" in entry and fam.citation.split(",")[0] in entry, fam.name


def test_the_sample_format_table_is_the_field_table() -> None:
    mod = _script()
    text = mod.FORMATS_PAGE.read_text(encoding="utf-8")
    assert mod.formats_updated(text) == text, "docs/reference/formats.md is stale: run python scripts/update_docs.py"
    table = text.split(mod.FIELDS_START, 1)[1].split(mod.FIELDS_END, 1)[0]
    for name in FIELDS:  # every name the reader takes is on the page
        assert f"`{name}`" in table, name
