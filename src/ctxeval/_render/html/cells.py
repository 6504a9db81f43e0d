"""Escaping, number formats and the small pieces of markup every section uses."""

from __future__ import annotations

import html
import json
import math
from typing import Any

#: Run colours (matplotlib's tab10), by run position; runs 11-20 and 21-30 get dashed and dotted lines.
_BETTER, _WORSE, _NEUTRAL = "#2166ac", "#b2182b", "#6f6f6f"
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")


_DASHES = ("-", "--", ":")


_COMPARISON_NUMBERS = (
    "mean",
    "baseline_mean",
    "diff",
    "p_value",
    "p_adjusted",
    "wins",
    "ties",
    "losses",
    "n_queries",
    "n_dropped",
)


_VERDICT_CLASS = {"SAFE": "v-safe", "RISKY": "v-risky", "DANGEROUS": "v-danger"}


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _f(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "NA"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    out = f"{x:.{digits}f}"
    return out[1:] if out.startswith("-") and float(out) == 0 else out  # no "-0.0000"


def _p(x: float | None) -> str:
    if x is None:
        return "NA"
    return f"{x:.4f}" if x >= 0.001 else f"{x:.1e}"


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


def _value_cell(value: Any) -> str:
    """A settings value: plain text for scalars, indented JSON for the rest; always escaped."""
    if value is None:
        return '<span class="muted">none</span>'
    if isinstance(value, (str, int, float, bool)):
        return _e(_json_text(value) if isinstance(value, bool) else value)
    return f"<pre>{_e(_json_text(value))}</pre>"


def _swatch(index: int) -> str:
    return f'<span class="sw c{index % len(PALETTE)} d{(index // len(PALETTE)) % len(_DASHES)}"></span>'


def _row_head(index: int, name: str, tail: str = "") -> str:
    """The row header of a run: colour swatch and escaped name; long names may wrap."""
    cls = "run long" if len(name) > 28 else "run"
    return f'<th scope="row" class="{cls}">{_swatch(index)}{_e(name)}{tail}</th>'


class _Ids:
    """Sequential ids for captions and figures (never derived from input)."""

    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n
