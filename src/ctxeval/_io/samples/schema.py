"""The sample format, read and written side by side: :func:`parse` turns one JSON object into a
:class:`~.fields.Sample`, :func:`record` turns a :class:`~.fields.Sample` back into the object it reads
from, and ``record(parse(r))`` reads back to the same sample for every object ``parse`` accepts (the
property test ``tests/io/test_sample_format.py`` checks it over every field).

Both walk the field table (:mod:`.fields`: every field's names, shape, meaning and reader; the format
reference, docs/reference/formats.md, is made from it). Read by it:

* a field given under two of its names (RAGAS's, RAGAS 0.1's older ones) must give one value; the
  writer uses the first name;
* ``query_id`` missing everywhere: the samples are named ``line-1``, ``line-2``, ... by position and
  the set says so (read beside other such sets, they are paired by their questions:
  :mod:`.across`); missing on some samples only, an error;
* the retrieved chunks, as objects or parallel lists (:mod:`.chunks`);
* the judgments: ``grades`` when given, else ``reference_ids`` at grade 1, else the retrieved chunks
  whose text equals a ``reference_contexts`` text exactly (:func:`_judgments`);
* any other field is kept as it is and written back (a name close to a known one is an error that
  names it, e.g. ``retreived_ids``); the edge readings (lone surrogates, empty texts) are
  :mod:`.reader`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .chunks import chunks_record, read_chunks
from .fields import CHUNKS, FIELDS, KEPT, NAMED, ROWS, Sample
from .reader import Reader, Tally, text_id
from .shapes import OPEN, as_is

__all__ = ["FIELDS", "OPEN", "Sample", "Tally", "parse", "record", "text_id"]

#: the fields read one value per sample, beside the query id and the chunks: (names, attribute, reader,
#: whether an error names the name given)
_PLAIN = tuple(
    (r.names, r.attr, r.shape.read, r.shape.given_name) for r in ROWS if not r.per_chunk and r.attr != "query_id"
)
_KEPT = frozenset(n for r in KEPT for n in r.names)


def parse(
    rec: Mapping[str, Any], source: str, line: int, generated: str | None, duplicates: str, tally: Tally
) -> Sample:
    """One sample object as a :class:`Sample` (``generated``: its query id when the set names samples
    by position); every error names ``source``, ``line`` and the field."""
    r = Reader(rec, source, line, tally)
    _unknown_fields(r)
    values: dict[str, Any] = {"query_id": generated if generated is not None else _query_id(r)}
    values.update(read_chunks(r, duplicates))
    given = rec.keys()
    for names, attr, read, given_name in _PLAIN:
        if given.isdisjoint(names):
            continue
        name, v = r.first(names)
        if v is not None:
            values[attr] = read(r, v, name if given_name else names[0])
    values.update(_judgments(r, values))
    values["extra"] = {k: r.clean(v) for k, v in rec.items() if k not in FIELDS or k in _KEPT} or None
    return Sample(**values)


def _compiled_writer() -> Callable[[Sample], dict[str, Any]]:
    """:func:`record`, compiled from the field table once, as :mod:`dataclasses` compiles ``__init__``:
    one test per field, in the table's order (a loop over the rows cost a microsecond a sample more)."""
    env: dict[str, Any] = {"chunks_record": chunks_record}
    body = ["def record(s):", "    rec = {}"]
    for i, r in enumerate(ROWS):
        if r.per_chunk:
            body += ["    rec.update(chunks_record(s))"] if r is CHUNKS[0] else []
            continue
        env[f"written_{i}"], env[f"write_{i}"] = r.written, r.shape.write
        body += [f"    v = {f'written_{i}(s)' if r.written else f's.{r.attr}'}", "    if v is not None:"]
        if r.shape.write is as_is:
            body.append(f"        rec[{r.name!r}] = v")
        else:
            body += [f"        v = write_{i}(v)", "        if v is not None:", f"            rec[{r.name!r}] = v"]
    body += ["    for k, v in (s.extra or {}).items():", "        rec.setdefault(k, v)", "    return rec"]
    exec("\n".join(body), env)
    return env["record"]


#: a :class:`Sample` as the JSON object it reads back from (canonical field names; the fields read
#: under another name, e.g. RAGAS's, are written under the first name)
record = _compiled_writer()


def _query_id(r: Reader) -> str:
    name, value = r.first(ROWS[0].names)
    if value is None:
        raise r.fail("no query_id (other samples have one)")
    return ROWS[0].shape.read(r, value, name)


def _unknown_fields(r: Reader) -> None:
    """Fields the format does not read are kept; one within two edits of a field the sample does not
    give (one edit for short names) is a misspelling: an error that names both."""
    unknown = [k for k in r.rec if k not in FIELDS]
    if not unknown:
        return
    from rapidfuzz.distance import Levenshtein  # here: 20 ms to import, needed only for an unknown field

    given = r.rec.keys()
    open_ = [n for group in NAMED if given.isdisjoint(group) for n in group]
    for k in unknown:
        if not isinstance(k, str):
            raise r.fail(f"a field name must be a string, got {k!r}")
        limit = 1 if len(k) <= 5 else 2
        close = sorted((Levenshtein.distance(k.lower(), n), n) for n in open_)
        if close and close[0][0] <= limit:
            raise r.fail(f"unknown field {k!r} (did you mean {close[0][1]!r}?)")
        r.tally.unknown[k] = r.tally.unknown.get(k, 0) + 1


def _judgments(r: Reader, values: Mapping[str, Any]) -> dict[str, Any]:
    """The sample's judgments (``grades``) and where they come from (``judgments_from``): its grades,
    else its reference ids at grade 1, else the retrieved chunks whose text equals a non-empty
    reference context (a reference context no chunk holds is named by its text's id)."""
    tally = r.tally
    given, ref_ids, ref_contexts = (values.get(k) for k in ("grades", "reference_ids", "reference_contexts"))
    ids, texts = values["retrieved_ids"], values["retrieved_texts"]
    if ref_contexts is not None:
        tally.empty_texts += ref_contexts.count("")
    grades: dict[str, int] | None = None
    source_of = None
    if given:
        grades, source_of = given, "grades"
    elif ref_ids:
        grades, source_of = dict.fromkeys(ref_ids, 1), "reference_ids"
    elif ref_contexts and any(ref_contexts):
        known = dict(zip(texts, ids)) if texts is not None else {}
        grades = {known.get(t) or text_id(t): 1 for t in ref_contexts if t}
        source_of = "reference_contexts"
        tally.text_refs += 1
        if texts is not None:
            tally.excerpts += _excerpts(ref_contexts, texts, known)
            tally.exact_refs += sum(1 for t in ref_contexts if t and t in known)
    if grades is None and (given is not None or ref_ids is not None or ref_contexts is not None):
        tally.empty_refs += 1
    return {"grades": grades, "judgments_from": source_of}


def _excerpts(refs: tuple[str, ...], texts: tuple[str, ...], known: Mapping[str, str]) -> int:
    """How many of the non-empty ``refs`` equal none of ``texts`` but are held in one (blanks collapsed)."""
    held = [" ".join(t.split()) for t in texts]
    return sum(1 for t in refs if t and t not in known and any(" ".join(t.split()) in h for h in held))
