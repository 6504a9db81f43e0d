"""Every kind of label the judge writes, one module each (its tasks, how it asks them, how it writes
the labels): a module here that defines ``LABELING`` (an :class:`~ctxeval._judge.items.Labeling`) is
registered, and ``ctxeval judge`` gets a command of its name. See docs/development.md, "Add a judge
task".

Sources: the 1-5 grade rubric is RA-nWG's utility scale (5 decisive .. 1 distractor); the 0-3 scale
follows UMBRELA (Upadhyay et al., 2024); the utility prompt follows the UDCG authors'; claims and
relevance follow RAGAS's context recall and context precision; nuggets the TREC 2024 RAG track's
AutoNuggetizer (Pradeep et al., 2024).
"""

from __future__ import annotations

import importlib
import pkgutil

from ..items import Labeling
from ..prompt import Task

__all__ = ["LABELS", "TASKS"]

_MODULES = [
    importlib.import_module(f"{__name__}.{m.name}")
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name)
]

#: every kind of label, by the name of its ``ctxeval judge`` command
LABELS: dict[str, Labeling] = {m.LABELING.name: m.LABELING for m in _MODULES}

#: every task by name (``grade`` has two scales: ``grade`` is the 1-5 one, ``grade-trec`` 0-3)
TASKS: dict[str, Task] = {name: task for kind in LABELS.values() for name, task in kind.tasks.items()}
