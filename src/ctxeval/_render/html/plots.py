"""Inline SVG plots with matplotlib (an optional extra), deterministic bytes."""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np

from ..._errors import CtxevalError, DependencyError
from .cells import _DASHES, PALETTE

#: matplotlib settings applied on top of its default style while a report is drawn.
_RC = {
    "svg.hashsalt": "ctxeval",
    "svg.fonttype": "none",
    "svg.image_inline": True,
    "text.parse_math": False,
    "font.family": ["DejaVu Sans"],
    "font.size": 8.5,
    "axes.grid": True,
    "grid.alpha": 0.35,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "savefig.dpi": 144,
}


_SVG_START = re.compile(r"<svg\b")


_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.DOTALL)


_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


_TAG = re.compile(r"<[^<>]+>")


_ROOT_SIZE = re.compile(r'\s(?:width|height)="[^"]*"')


class _Plotter:
    """Draws figures with matplotlib (imported on first use) and returns them as inline SVG."""

    def __init__(self) -> None:
        try:
            import matplotlib
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
        except ImportError as exc:
            raise DependencyError("the HTML report", "matplotlib", "report") from exc
        self.mpl = matplotlib
        self._figure = Figure
        self._canvas = FigureCanvasAgg
        self.version = matplotlib.__version__

    def figure(self, width: float, height: float) -> Any:
        fig = self._figure(figsize=(width, height), layout="constrained")
        self._canvas(fig)  # the Agg canvas: no GUI backend, no pyplot state
        return fig

    def svg(self, fig: Any, fid: int) -> str:
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        text = buf.getvalue()
        start = _SVG_START.search(text)
        if start is None:  # pragma: no cover - matplotlib always writes an <svg> root
            raise CtxevalError("matplotlib wrote no <svg> element")
        text = _METADATA.sub("", _COMMENT.sub("", text[start.start() :])).strip()
        prefix = f"f{fid}-"

        def fix(m: re.Match[str]) -> str:
            tag = m.group(0)
            tag = re.sub(r'(\s)id="', rf'\1id="{prefix}', tag)
            return tag.replace('href="#', f'href="#{prefix}').replace("url(#", f"url(#{prefix}")

        text = _TAG.sub(fix, text)
        root_end = text.index(">")
        root = _ROOT_SIZE.sub("", text[:root_end])
        return f'{root} class="plot" role="img" aria-labelledby="cap{fid}"{text[root_end:]}'


def _style(index: int) -> dict[str, Any]:
    return {"color": PALETTE[index % len(PALETTE)], "linestyle": _DASHES[(index // len(PALETTE)) % len(_DASHES)]}


def _figure_html(svg: str, fid: int, caption: str) -> str:
    return f'<figure>{svg}<figcaption id="cap{fid}">{caption}</figcaption></figure>'


#: at most this many steps per per-query difference plot; more queries are drawn in bins
MAX_STEPS = 800


def _envelope(d: np.ndarray, max_steps: int = MAX_STEPS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step edges and the positive and negative heights that draw the sorted differences ``d``.

    Query i (1-based rank) spans [i - 0.5, i + 0.5]. With more than ``max_steps`` queries, consecutive
    ranks are grouped into ``max_steps`` bins and each bin is drawn at its largest positive and its
    smallest negative value (an outer envelope: no difference is drawn smaller than it is, and the
    extremes stay visible), so the SVG stays small whatever the number of queries.

    >>> _envelope(np.array([-1.0, 0.0, 2.0]))
    (array([0.5, 1.5, 2.5, 3.5]), array([0., 0., 2.]), array([-1.,  0.,  0.]))
    >>> edges, pos, neg = _envelope(np.array([-3.0, -1.0, 1.0, 2.0, 5.0]), max_steps=2)
    >>> edges.tolist(), pos.tolist(), neg.tolist()
    ([0.5, 2.5, 5.5], [0.0, 5.0], [-3.0, 0.0])
    """
    n = d.size
    if n <= max_steps:
        bounds = np.arange(n + 1)
        hi = lo = d
    else:
        bounds = np.unique(np.linspace(0, n, max_steps + 1).round().astype(np.int64))
        hi = np.maximum.reduceat(d, bounds[:-1])
        lo = np.minimum.reduceat(d, bounds[:-1])
    return bounds + 0.5, np.where(hi > 0, hi, 0.0), np.where(lo < 0, lo, 0.0)
