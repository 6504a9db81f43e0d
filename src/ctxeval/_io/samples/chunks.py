"""The retrieved chunks of a sample, read and written from the per-chunk rows of the field table
(:data:`.fields.CHUNKS`), in either form: one ``retrieved`` object per chunk (each per-chunk field under
its key, the chunk's other keys kept with it), or parallel lists (``retrieved_ids``,
``retrieved_contexts``, ...), one value per chunk each.

The rules every per-chunk field follows: a list is as long as the chunks; as objects, every chunk
gives the key or none does (a text may be missing: an empty text); fields given together
(``Row.together``) come all or none; a field bounded by another (``Row.at_least``) is never below it;
a chunk given twice is an error, or (``duplicates="first"``) the first is kept with its values.
Beside them, the chunks' own rules: a chunk named by its text alone takes the text's id
(:func:`.reader.text_id`), and the given scores are the run's when they rank the list as given.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping
from typing import Any

from .fields import CHUNKS, Row, Sample
from .reader import Reader, named_by, text_id
from .shapes import list_of

__all__ = ["chunks_record", "read_chunks"]

_IDS, _TEXTS = CHUNKS[0], next(c for c in CHUNKS if c.attr == "retrieved_texts")
#: the per-chunk fields every chunk gives or none does (as objects)
_STRICT = tuple(c for c in CHUNKS[1:] if not c.partial)
_KEYS = frozenset(c.key for c in CHUNKS if c.key)
_LISTS = {c.attr: list_of(c.shape, "") for c in CHUNKS}
_BY_NAME = {c.name: c for c in CHUNKS}
_NAMES = tuple(n for c in CHUNKS for n in c.names)
_CHECKED = tuple(c for c in CHUNKS if c.together or c.at_least)
#: what :func:`chunks_record` writes beside the ids: (list name, attribute, object key)
_WRITTEN = tuple((c.name, c.attr, str(c.key)) for c in CHUNKS[1:])
_ID_NAME = _IDS.name


def read_chunks(r: Reader, duplicates: str) -> dict[str, Any]:
    """The sample's chunks: each per-chunk attribute's values (None: not given), checked, and the run's
    scores (``retrieved_scores``)."""
    items = r.rec.get("retrieved")
    if items is not None:
        given = [n for n in _NAMES if r.rec.get(n) is not None]
        if given:
            raise r.fail(f"retrieved and {given[0]} both give the retrieved chunks; give one of them")
        values = _objects(r, items)
    else:
        values = _lists(r)
    _check(r, values, items is not None)
    values = _unique(r, values, duplicates)
    ids, given = values[_IDS.attr], values["given_scores"]
    n = len(ids)
    if n == 0:
        r.tally.empty_retrieved += 1
    if given is not None and _ranks_as_listed(ids, given):
        values["retrieved_scores"] = given
    else:
        if given is not None:
            r.tally.reordered += 1
        elif n:
            r.tally.unscored += 1
        values["retrieved_scores"] = tuple(float(n - i) for i in range(n))
    return values


def _lists(r: Reader) -> dict[str, Any]:
    """The parallel lists: each checked, and as long as the ids (named by the texts when none are given)."""
    values: dict[str, Any] = {}
    given = r.rec.keys()
    for c in CHUNKS:
        v = None if given.isdisjoint(c.names) else r.first(c.names)[1]
        values[c.attr] = None if v is None else _LISTS[c.attr].read(r, v, c.name)
    ids, texts = values[_IDS.attr], values[_TEXTS.attr]
    if ids is None:
        ids = ()
        if texts:
            ids = tuple(map(text_id, texts))
            r.tally.text_named += 1
        values[_IDS.attr] = ids
    for c in CHUNKS[1:]:
        v = values[c.attr]
        if v is not None and len(v) != len(ids):
            raise r.fail(f"{c.name} has {len(v)} items but retrieved_ids {len(ids)}")
    if texts:
        r.tally.empty_texts += texts.count("")
    for c in CHUNKS[1:]:
        v = values[c.attr]
        if v is not None and c.partial and not (any(v) if c.key == "" else ids):
            values[c.attr] = None  # no chunk gives one
    return values


def _objects(r: Reader, items: Any) -> dict[str, Any]:
    """One object (or id) per chunk: its id, or its text naming it; each key of a per-chunk field; its
    other keys."""
    ids: list[str] = []
    texts: list[str] = []
    meta: list[Mapping[str, Any]] = []
    objects: list[Mapping[str, Any]] = []
    any_text = named = False
    for i, it in enumerate(r.items(items, "retrieved") or (), start=1):
        if isinstance(it, Mapping):
            text = it.get("text")
            if text is not None:
                text = r.text(text, f"retrieved[{i}].text")
                r.tally.empty_texts += text == ""
            if it.get("id") is None:
                if text is None:
                    raise r.fail(f"retrieved[{i}] has neither an id nor a text")
                named = True
                ids.append(text_id(text))
            else:
                ids.append(r.an_id(it["id"], f"retrieved[{i}].id"))
            texts.append(text or "")
            any_text = any_text or text is not None
            meta.append({k: r.clean(v) for k, v in it.items() if k not in _KEYS})
            objects.append(it)
        elif isinstance(it, (str, int)) and not isinstance(it, bool):
            ids.append(r.an_id(it, f"retrieved[{i}]"))
            texts.append("")
            meta.append({})
            objects.append({})
        else:
            raise r.fail(f"retrieved[{i}] must be an id or an object with an id")
    r.tally.text_named += named
    out: dict[str, Any] = {_IDS.attr: tuple(ids), _TEXTS.attr: tuple(texts) if any_text else None}
    for c in _STRICT:
        key = str(c.key)
        given = tuple(o.get(key) for o in objects)
        missing = given.count(None)
        if missing:
            if missing < len(given):
                i = next(i for i, v in enumerate(given) if (v is None) != (given[0] is None))
                raise r.fail(
                    f"retrieved[{i + 1}]: some chunks have {'an' if key[:1] in 'aeiou' else 'a'} {key} and others not"
                )
            out[c.attr] = None
            continue
        quick = c.shape.many(given) if c.shape.many is not None else None
        if quick is None:
            quick = tuple(c.shape.read(r, v, f"retrieved[{i}].{key}") for i, v in enumerate(given, start=1))
        out[c.attr] = quick
    out["retrieved_meta"] = tuple(meta) if any(meta) else None
    return out


def _check(r: Reader, values: Mapping[str, Any], objects: bool) -> None:
    """Fields given together come all or none; a bounded field is never below its bound."""

    def named(c: Row) -> str:
        return f"{c.key!r}" if objects else c.name

    for c in _CHECKED:
        if values[c.attr] is None:
            continue
        missing = [_BY_NAME[n] for n in c.together if values[_BY_NAME[n].attr] is None]
        if missing:
            where = "retrieved: the key " if objects else ""
            raise r.fail(
                f"{where}{named(c)} is given without {' and '.join(map(named, missing))}: give "
                f"{', '.join(map(named, (_BY_NAME[n] for n in c.together)))} together"
            )
        if c.at_least is not None:
            low = _BY_NAME[c.at_least]
            for i, (v, floor) in enumerate(zip(values[c.attr], values[low.attr]), start=1):
                if v < floor:
                    what = f"retrieved[{i}].{c.key}" if objects else f"{c.name}[{i}]"
                    bound = f"retrieved[{i}].{low.key}" if objects else f"{low.name}[{i}]"
                    raise r.fail(f"{what} must be at least {bound} ({floor}), got {v}")


def _unique(r: Reader, values: dict[str, Any], duplicates: str) -> dict[str, Any]:
    """A chunk given twice in one list: an error naming both positions, or (``first``) the first kept."""
    ids = values[_IDS.attr]
    if len(set(ids)) == len(ids):
        return values
    texts = values[_TEXTS.attr]
    first: dict[str, int] = {}
    keep = []
    for i, d in enumerate(ids):
        if d in first:
            if duplicates == "error":
                what = "the same chunk text" if texts is not None and named_by(d, texts[i]) else f"chunk id {d!r}"
                raise r.fail(
                    f"retrieved: {what} is given twice (positions {first[d] + 1} and {i + 1}); "
                    "duplicates='first' / --duplicates first keeps the first"
                )
            r.tally.duplicate_chunks += 1
            continue
        first[d] = i
        keep.append(i)
    return {k: tuple(v[i] for i in keep) if v is not None else None for k, v in values.items()}


def _ranks_as_listed(ids: tuple[str, ...], scores: tuple[float, ...]) -> bool:
    """Whether the scores rank the chunks in list order under the evaluation's rule: decreasing as
    float32, ties broken by chunk id descending (byte-wise)."""
    f32 = array("f", scores)  # rounded to float32 in C (beyond its range: inf), as the ranking compares them
    for i in range(len(f32) - 1):
        a, b = f32[i], f32[i + 1]
        if b > a or (b == a and ids[i + 1].encode("utf-8") > ids[i].encode("utf-8")):
            return False
    return True


def chunks_record(s: Sample) -> dict[str, Any]:
    """The parallel lists when they carry everything, else one ``retrieved`` object per chunk. A chunk
    named by its text is written by its text alone."""
    ids, texts = s.retrieved_ids, s.retrieved_texts
    named = [False] * len(ids) if texts is None else [named_by(d, t) for d, t in zip(ids, texts)]
    given = [(name, key, v) for name, attr, key in _WRITTEN if (v := getattr(s, attr)) is not None]
    if s.retrieved_meta is None and (all(named) or not any(named)):
        out: dict[str, Any] = {} if ids and all(named) else {_ID_NAME: list(ids)}
        for name, _, v in given:
            out[name] = list(v)
        return out
    items: list[dict[str, Any]] = [{} if n else {"id": d} for d, n in zip(ids, named)]
    for _, key, values in given:  # (a chunk without a text among chunks with texts reads as an empty one)
        if key:
            for item, v in zip(items, values):
                item[key] = v
        else:
            for item, v in zip(items, values):
                item.update(v)
    return {"retrieved": items}
