"""One registry entry per task: every task the judge asks belongs to one kind of label, carries its
prompt, its JSON schema (unless it is read from logprobs), its strict parser and its offline rule;
the offline rule's answer passes both the parser and the schema (checked by a small validator
written here from the JSON Schema keywords the schemas use)."""

from __future__ import annotations

from typing import Any

import pytest

from ctxeval._judge.labels import LABELS
from ctxeval._judge.tasks import TASKS

VALUES = {
    "question": "Where does arabica coffee grow best?",
    "passage": "Arabica coffee grows best on high slopes between 1,000 and 2,000 metres. Frost kills it.",
    "answer": "Arabica grows best between 1,000 and 2,000 metres. It dies in frost.",
    "claim": "Arabica grows best between 1,000 and 2,000 metres.",
    "context": "Arabica grows best between 1,000 and 2,000 metres. Frost kills it. Brazil grows most of it.",
    "nugget": "arabica grows between 1,000 and 2,000 metres",
}


def valid(value: Any, schema: dict[str, Any]) -> bool:
    if "enum" in schema and value not in schema["enum"]:
        return False
    kind = schema.get("type")
    if kind == "object":
        props = schema["properties"]
        return (
            isinstance(value, dict)
            and set(schema.get("required", ())) <= set(value)
            and (schema.get("additionalProperties", True) or set(value) <= set(props))
            and all(valid(v, props[k]) for k, v in value.items() if k in props)
        )
    if kind == "array":
        return (
            isinstance(value, list)
            and schema.get("minItems", 0) <= len(value) <= schema.get("maxItems", len(value))
            and all(valid(v, schema["items"]) for v in value)
        )
    checks = {
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
    }
    checks["string"] = lambda v: isinstance(v, str)
    return checks[kind](value) if kind in checks else True


def test_every_task_belongs_to_one_kind_of_label() -> None:
    owners = [t for kind in LABELS.values() for t in kind.tasks]
    assert sorted(owners) == sorted(TASKS) and len(owners) == len(set(owners))


@pytest.mark.parametrize("name", sorted(TASKS))
def test_the_offline_answer_passes_the_parser_and_the_schema(name: str) -> None:
    import json

    task = TASKS[name]
    value = task.offline({f: VALUES[f] for f in task.fields})
    if task.logprobs:
        assert task.schema is None and 0.0 <= value <= 1.0
        return
    assert task.schema is not None and task.shape
    assert valid(value, dict(task.schema))
    task.parse(json.dumps(value))  # the strict parser takes it
    assert not valid({**value, "extra": 1}, dict(task.schema))  # and the schema is closed
