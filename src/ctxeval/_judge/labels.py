"""Labels from the judge, by kind: :data:`LABELS` (one :class:`~.items.Labeling` per ``ctxeval judge``
command, from :mod:`ctxeval._judge.kinds`), what they judge (:mod:`.items`: the pool of a set of runs,
or the chunks of a sample set) and the functions each kind asks its tasks with."""

from __future__ import annotations

from .items import (
    Item,
    JudgeOptions,
    Labeling,
    item_asks,
    items_from_runs,
    items_from_samples,
    judgment_pool,
    merged,
    open_field,
    samples_text,
)
from .kinds import LABELS
from .kinds.attribution import attribution
from .kinds.claims import claims
from .kinds.grade import grades, qrels_text
from .kinds.nuggets import nuggets
from .kinds.relevance import relevance
from .kinds.utility import utilities, utility_text

__all__ = [
    "LABELS",
    "Item",
    "JudgeOptions",
    "Labeling",
    "attribution",
    "claims",
    "grades",
    "item_asks",
    "items_from_runs",
    "items_from_samples",
    "judgment_pool",
    "merged",
    "nuggets",
    "open_field",
    "qrels_text",
    "relevance",
    "samples_text",
    "utilities",
    "utility_text",
]
