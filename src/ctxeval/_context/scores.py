"""``scores``: the run's score of every judged run row, for measures whose ideal ordering reads them
(Compat breaks ties among equally relevant docs by the run's scores, as ir_measures does)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.extras import JudgedScores
from .._errors import ConfigError
from .registry import Inputs, SideData, register

if TYPE_CHECKING:
    from .._core.evaldata import EvalData

__all__ = ["ScoresProvider"]


class ScoresProvider(SideData):
    name = "scores"

    def build(self, data: EvalData, inputs: Inputs) -> JudgedScores:
        if data.rows is None:
            raise ConfigError("the run's scores need its ranked rows (keep_rows)")
        return JudgedScores(data.rows.score[data.j_idx].astype("float64"))


register(ScoresProvider())
