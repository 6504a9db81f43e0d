"""The shapes a sample field's value takes: how each is read (checked, with the error wording that
names the field), written back, held in a CSV cell, and decoded by the columnar reader. The field
table (:mod:`.fields`) gives every field one of them.

A per-chunk field's shape is the shape of one chunk's value (:data:`ID`, :data:`TEXT`, :data:`SCORE`,
:data:`OFFSET`, :data:`META`); :func:`list_of` makes the shape of the whole list.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .reader import Reader

__all__ = [
    "CLAIMS",
    "FACETS",
    "GRADES",
    "ID",
    "IDS",
    "JUDGED",
    "KEPT_LIST",
    "KEPT_TEXT",
    "LABELLED_BY",
    "META",
    "NUGGETS",
    "OFFSET",
    "OPEN",
    "QUERY_ID",
    "SCORE",
    "TEXT",
    "TEXTS",
    "Claim",
    "Nugget",
    "Shape",
    "as_is",
    "list_of",
]

#: (text, vital, supporting ids, partially supporting ids, undecided ids, tied ids, ids not sent)
Nugget = tuple[str, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: (text, supporting ids, undecided ids, tied ids, ids not sent)
Claim = tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: ids without a judgment, by why: undecided, tied, not sent (what the judge writes beside its labels)
OPEN = ("undecided", "tied", "not_sent")


def as_is(v: Any) -> Any:
    return v


@dataclass(frozen=True)
class Shape:
    """How one field's value looks in a sample object."""

    what: str  #: the form, as the format reference gives it
    #: a given value (not null) -> the sample's value, checked; its errors name the field as told
    read: Callable[[Reader, Any, str], Any]
    write: Callable[[Any], Any] = as_is  #: the sample's value -> the JSON value written back
    cell: bool = True  #: a CSV cell holds it as JSON text (lists and objects)
    #: how the columnar reader decodes it (string, float, strings, floats, grades); None: it declines it
    column: str | None = None
    given_name: bool = False  #: errors name the name it was given under (else the field's first name)
    #: a list of such values checked in one pass (the common case), None when one must be checked one by one
    many: Callable[[tuple[Any, ...]], tuple[Any, ...] | None] | None = None


def list_of(each: Shape, what: str) -> Shape:
    """A list of values of the shape ``each`` (an error names the item: ``field[2]``)."""

    def read(r: Reader, value: Any, name: str) -> tuple[Any, ...]:
        items = r.items(value, name) or ()
        quick = each.many(items) if each.many is not None else None
        if quick is not None:
            return quick
        return tuple(each.read(r, v, f"{name}[{i}]") for i, v in enumerate(items, start=1))

    column = {"string": "strings", "float": "floats"}.get(each.column or "")
    return Shape(what, read, list, cell=True, column=column)


def _ascii_texts(items: tuple[Any, ...]) -> tuple[Any, ...] | None:
    return items if set(map(type, items)) <= {str} and all(map(str.isascii, items)) else None


def _finite_floats(items: tuple[Any, ...]) -> tuple[Any, ...] | None:
    if set(map(type, items)) <= {float} and all(map(math.isfinite, items)):
        return tuple(float(v) for v in items)
    return None


def _meta(r: Reader, v: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(v, Mapping):
        raise r.fail(f"{what} must be an object, got {type(v).__name__}")
    return r.clean(dict(v))


def _query_id(r: Reader, value: Any, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
        raise r.fail(f"query_id must be a non-empty string, got {value!r}")
    return r.check_id(str(value), name)


QUERY_ID = Shape("a string (or a whole number)", _query_id, cell=False, column="string", given_name=True)
TEXT = Shape("a string", Reader.text, cell=False, column="string", given_name=True, many=_ascii_texts)
ID = Shape("an id", Reader.an_id, cell=False, column="string")
SCORE = Shape("a finite number", Reader.score, cell=False, column="float", many=_finite_floats)
OFFSET = Shape("a whole number >= 0", Reader.offset, cell=False)
META = Shape("an object", _meta)
IDS = list_of(ID, "a list of chunk ids")
TEXTS = list_of(TEXT, "a list of strings")
KEPT_TEXT = Shape("anything (kept as it is)", lambda r, v, _: r.clean(v), cell=False)
KEPT_LIST = Shape("anything (kept as it is)", lambda r, v, _: r.clean(v))


def _grades(r: Reader, given: Any, _: str) -> dict[str, int]:
    """``{id: grade}``, whole numbers within 64 bits ({} when given empty)."""
    if not isinstance(given, Mapping):
        raise r.fail(f"grades must be an object {{id: grade}}, got {type(given).__name__}")
    out = {}
    for k, v in given.items():
        d = r.an_id(k, f"grades key {k!r}")
        if isinstance(v, bool) or not isinstance(v, int):
            raise r.fail(f"grades[{k!r}] must be a whole number, got {v!r}")
        if not -(2**63) <= v < 2**63:
            raise r.fail(f"grades[{k!r}] must be a whole number within 64 bits, got one of {len(str(abs(v)))} digits")
        out[d] = v
    return out


GRADES = Shape("{id: grade}", _grades, dict, column="grades")


def _opens(r: Reader, obj: Mapping[str, Any], where: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    undecided, tied, not_sent = (r.ids(obj.get(k), f"{where}.{k}") or () for k in OPEN)
    return undecided, tied, not_sent


def _open_fields(opens: Iterable[tuple[str, ...]]) -> dict[str, list[str]]:
    """The ids without a judgment by why: ``undecided`` always, ``tied`` and ``not_sent`` when any."""
    return {k: list(v) for k, v in zip(OPEN, opens) if v or k == "undecided"}


def _facets(r: Reader, value: Any, _: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``[{"name", "ids": [...]}]``: the aspects an answer needs, each with the chunks that cover it."""
    out = []
    for i, f in enumerate(r.items(value, "facets", " of {name, ids} objects") or (), start=1):
        if not isinstance(f, Mapping) or "ids" not in f:
            raise r.fail(f"facets[{i}] must be an object with ids (and a name)")
        name = r.text(f["name"], f"facets[{i}].name") if f.get("name") is not None else f"facet {i}"
        out.append((name, r.ids(f["ids"], f"facets[{i}].ids") or ()))
    return tuple(out)


FACETS = Shape('[{"name", "ids"}]', _facets, lambda v: [{"name": n, "ids": list(ids)} for n, ids in v])


def _nuggets(r: Reader, value: Any, _: str) -> tuple[Nugget, ...]:
    """``[{"text", "importance": "vital"|"okay", "supported_by"?, "partially_supported_by"?, "undecided"?,
    "tied"?, "not_sent"?}]``."""
    out = []
    for i, n in enumerate(r.items(value, "nuggets", " of objects") or (), start=1):
        if not isinstance(n, Mapping):
            raise r.fail(f"nuggets[{i}] must be an object with text and importance")
        imp = n.get("importance", "okay")
        if imp not in ("vital", "okay"):
            raise r.fail(f"nuggets[{i}].importance must be 'vital' or 'okay', got {imp!r}")
        text = r.text(n["text"], f"nuggets[{i}].text") if n.get("text") is not None else f"nugget {i}"
        lists = [r.ids(n.get(k), f"nuggets[{i}].{k}") or () for k in ("supported_by", "partially_supported_by")]
        out.append((text, imp == "vital", *lists, *_opens(r, n, f"nuggets[{i}]")))
    return tuple(out)


def _nuggets_record(v: tuple[Nugget, ...]) -> list[dict[str, Any]]:
    return [
        {
            "text": t,
            "importance": "vital" if vital else "okay",
            "supported_by": list(f),
            "partially_supported_by": list(p),
            **_open_fields(opens),
        }
        for t, vital, f, p, *opens in v
    ]


NUGGETS = Shape(
    '[{"text", "importance": "vital"|"okay", "supported_by", "partially_supported_by", "undecided", "tied"?, '
    '"not_sent"?}]',
    _nuggets,
    _nuggets_record,
)


def _claims(r: Reader, value: Any, _: str) -> tuple[Claim, ...]:
    """``[{"text", "supported_by": [ids], "undecided"?, "tied"?, "not_sent"?: [ids]}]`` (``ctxeval judge
    claims`` writes it)."""
    out: list[Claim] = []
    for i, c in enumerate(r.items(value, "claims", " of objects") or (), start=1):
        if not isinstance(c, Mapping) or not isinstance(c.get("text"), str):
            raise r.fail(f"claims[{i}] must be an object with a text")
        full: tuple[str, ...] = r.ids(c.get("supported_by"), f"claims[{i}].supported_by") or ()
        out.append((r.text(c["text"], f"claims[{i}].text"), full, *_opens(r, c, f"claims[{i}]")))
    return tuple(out)


CLAIMS = Shape(
    '[{"text", "supported_by", "undecided", "tied"?, "not_sent"?}]',
    _claims,
    lambda v: [{"text": t, "supported_by": list(f), **_open_fields(opens)} for t, f, *opens in v],
)


def _judged(r: Reader, value: Any, _: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """``{"relevant": [ids], "undecided"?, "tied"?, "not_sent"?: [ids]}`` (``ctxeval judge relevance``
    writes it)."""
    if not isinstance(value, Mapping) or "relevant" not in value:
        raise r.fail("judged must be an object {relevant: [ids], undecided: [ids]}")
    relevant = r.ids(value["relevant"], "judged.relevant") or ()
    undecided, tied, not_sent = _opens(r, value, "judged")
    return relevant, undecided, tied, not_sent


JUDGED = Shape(
    '{"relevant", "undecided", "tied"?, "not_sent"?}',
    _judged,
    lambda v: {"relevant": list(v[0]), **_open_fields(v[1:])},
)


def _labelled_by(r: Reader, value: Any, _: str) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, list) or not all(isinstance(x, Mapping) for x in value):
        raise r.fail("labelled_by must be a list of objects {judge, model, heuristic, task}")
    return tuple(r.clean(dict(x)) for x in value)


LABELLED_BY = Shape(
    '[{"judge", "model", "heuristic", "task"}]', _labelled_by, lambda v: [dict(x) for x in v] if v else None
)
