"""The comparison report as one self-contained HTML page (see :mod:`.page`)."""

from .cells import PALETTE
from .page import CSP, render_html

__all__ = ["CSP", "PALETTE", "render_html"]
