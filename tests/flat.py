"""Settings written flat (``missing="ignore"``, ``distractors=path``) grouped as the verbs take them
(``policies=``, ``rag=``, ``utility=``, ``stats=``): lets a table of test cases list them plainly."""

from __future__ import annotations

from typing import Any

__all__ = ["grouped"]

_GROUPS = {
    "policies": {"ties": "ties", "missing": "missing", "duplicates": "duplicates"},
    "rag": {k: k for k in ("grade_map", "pool", "pool_depth", "allow_outside_pool", "groups")},
    "utility": {
        "utility_map": "utility_map",
        "distractors": "distractors",
        "utilities": "utilities",
        "distractor_rules": "rules",
        "rules": "rules",
        "tau": "tau",
        "top_rank": "top_rank",
        "penalty": "penalty",
        "llm_threshold": "llm_threshold",
    },
    "stats": {k: k for k in ("test", "alpha", "correction", "permutations", "resamples", "seed", "ci", "confidence")},
}


def grouped(**flat: Any) -> dict[str, Any]:
    """``grouped(missing="ignore", distractors=p, k=5)`` -> ``{"policies": {"missing": "ignore"},
    "utility": {"distractors": p}, "k": 5}`` (keys of no group are kept as they are)."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        group = next((g for g, keys in _GROUPS.items() if key in keys), None)
        if group is None:
            out[key] = value
        else:
            out.setdefault(group, {})[_GROUPS[group][key]] = value
    return out
