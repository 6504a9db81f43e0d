"""The measure registry. Importing this package registers every built-in measure family, in the
order ``ctxeval measures`` lists them: classical (and ir_measures' Accuracy), rag, trec_eval, distraction, context, diversity
(ndeval's), cwl (cwl_eval's C/W/L measures), compat (Clarke's compatibility), fairness (AWRF: TREC Fair Ranking's
and FairRankTune's), spans; then the readings of span labels and token budgets (:mod:`.spans`, :mod:`.budget`).

Kernels read the core only (:mod:`ctxeval._core`): an ``EvalData`` and the measure's parameters.
"""

import importlib as _importlib
import pkgutil as _pkgutil
import sys as _sys

# isort: off
from . import classical as classical
from . import accuracy as accuracy
from . import rag as rag
from . import trec as trec
from . import trec_table as trec_table
from . import trec_prefs as trec_prefs
from . import distraction as distraction
from . import context as context
from . import diversity as diversity
from . import cwl as cwl
from . import compat as compat
from . import tie_kernels as tie_kernels
from . import tie_rules as tie_rules
from . import fairness as fairness
from . import spans as spans
from . import budget as budget

# isort: on
from .base import REGISTRY, Family, Measure, Param, TrecArgs, TrecSpec, families, make, register, trec_specs
from .grammar import parse_measure, parse_measures

# a module added to this package registers its families after the built-in ones (docs/development.md,
# "Add a measure"): every module not imported above, in the order of its name
for _info in sorted(_pkgutil.iter_modules(__path__), key=lambda i: i.name):
    if f"{__name__}.{_info.name}" not in _sys.modules:
        _importlib.import_module(f"{__name__}.{_info.name}")

__all__ = [
    "REGISTRY",
    "Family",
    "Measure",
    "Param",
    "TrecArgs",
    "TrecSpec",
    "families",
    "make",
    "parse_measure",
    "parse_measures",
    "register",
    "trec_specs",
]
