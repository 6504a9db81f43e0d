"""Calibrated runtime policy: how many passages to pass to the LLM, and from which relative score."""

from .calibrate import Calibration, calibrate, prefix_measure
from .grid import TAUS, assign_folds, fit, grid_sums, lead_lengths, prefix_utility

__all__ = [
    "TAUS",
    "Calibration",
    "assign_folds",
    "calibrate",
    "fit",
    "grid_sums",
    "lead_lengths",
    "prefix_measure",
    "prefix_utility",
]
