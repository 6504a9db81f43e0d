"""ragas (the test extra's 0.4.3) as an oracle: its metric classes and scores, without its deprecation
warnings (its ID-based classes live in ``ragas.metrics`` only, deprecated there in 0.4 in favour of
``ragas.metrics.collections``, which has none yet)."""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = ["ragas_metric", "ragas_score"]


def ragas_metric(name: str) -> Any:
    """A ragas metric class from ``ragas.metrics``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return getattr(importlib.import_module("ragas.metrics"), name)


def ragas_score(metric: Any, sample: Any = None, **fields: Any) -> float:
    """``metric``'s score of a ``SingleTurnSample`` (or of one made of ``fields``)."""
    from ragas.dataset_schema import SingleTurnSample

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return float(metric.single_turn_score(sample if sample is not None else SingleTurnSample(**fields)))
