"""How result objects show themselves in a notebook: a number as a short text, a small HTML table for
``_repr_html_`` (escaped, no scripts, no styles from anywhere), and the optional packages a frame or a
plot needs, asked for by the extra that installs them.

>>> fmt(0.41234), fmt(float("nan")), fmt(None), fmt(3)
('0.4123', 'NA', 'NA', '3')
>>> html_table(["run", "RR"], [["bm25 <b>", 0.5]], caption="means")
'<table><caption>means</caption><thead><tr><th>run</th><th>RR</th></tr></thead><tbody><tr><td>bm25 &lt;b&gt;</td><td>0.5000</td></tr></tbody></table>'
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

from ._errors import DependencyError

__all__ = ["fmt", "html_table", "pandas", "pyplot", "short", "text_table"]


def fmt(x: Any, digits: int = 4) -> str:
    """A value for a table: NA for None or NaN, floats to ``digits`` decimals, the rest as text."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "NA"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def short(items: Sequence[str], limit: int = 4) -> str:
    """``a, b, c, ...`` (at most ``limit`` items, then how many more).

    >>> short(["a", "b", "c", "d", "e", "f"])
    'a, b, c, d and 2 more'
    """
    head = ", ".join(items[:limit])
    return head + (f" and {len(items) - limit} more" if len(items) > limit else "")


def html_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], caption: str | None = None) -> str:
    """A plain HTML table of ``rows`` under ``columns``, every cell escaped (see the module docstring)."""
    e = html.escape
    cap = f"<caption>{e(caption)}</caption>" if caption else ""
    head = "".join(f"<th>{e(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{e(fmt(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def text_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain text table for ``print()``: columns padded to their widest cell, numbers right-aligned.

    >>> print(text_table(["run", "RR"], [["bm25", 0.5], ["dense", float("nan")]]))
    run        RR
    bm25   0.5000
    dense      NA
    """
    cells = [[fmt(v) for v in row] for row in rows]
    widths = [max(len(str(c)), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    right = [i > 0 for i in range(len(columns))]

    def line(values: Sequence[str]) -> str:
        parts = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)]
        return "  ".join(parts).rstrip()

    return "\n".join([line([str(c) for c in columns]), *(line(r) for r in cells)])


def pandas(what: str) -> Any:
    """The pandas module, or a :class:`~ctxeval.DependencyError` naming ``what`` needs it and the extra."""
    try:
        import pandas as pd
    except ImportError:
        raise DependencyError(what, "pandas", "pandas") from None
    return pd


def pyplot(what: str) -> Any:
    """matplotlib's pyplot, or a :class:`~ctxeval.DependencyError` naming the ``report`` extra."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise DependencyError(what, "matplotlib", "report") from None
    return plt
