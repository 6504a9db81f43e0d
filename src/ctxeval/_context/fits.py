"""``fits``: fitted weights of the positional UDCG, by the hash of their content.

The session reads every fit file a measure names (``UDCG-pos(fit='udcg_fit.json')``) and renames the
measure by the fit's content hash (``UDCG-pos(fit='sha256:…')``), so results are keyed by the weights,
not by where they were stored; the kernel reads the weights from here, never from a file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.extras import Fits
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData

__all__ = ["FitsProvider"]


class FitsProvider(SideData):
    name = "fits"
    needs_rows = False

    def build(self, data: EvalData, inputs: Inputs) -> Fits:
        return Fits(dict(inputs.settings.fits))


register(FitsProvider())
