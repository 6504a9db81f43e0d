"""trec_eval's other relevance formats (``-R qrels_jg``, ``-R prefs``, ``-R qrels_prefs``), read
under the TREC files' reading rule (:mod:`.trec`): one line reader, errors naming the file and line."""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

from .._errors import EmptyInputError, FormatError
from .exact import DECIMAL as _DECIMAL
from .exact import decode, parse_grade, split_fields
from .source import open_bytes

__all__ = ["PrefLine", "read_prefs", "read_qrels_jg"]


def read_qrels_jg(path: Path, source: str) -> dict[str, dict[str, dict[str, int]]]:
    """trec_eval's judgment-group qrels (``-R qrels_jg``): ``qid jg docid grade`` lines ->
    {jg: {qid: {docid: grade}}}, the groups in byte-wise order. Blank lines and lines starting with
    ``#`` are skipped; a doc judged twice in one group of one query is an error (as in trec_eval)."""
    text = decode(open_bytes(path), source)
    groups: dict[str, dict[str, dict[str, int]]] = {}
    for lineno, line in enumerate(text.split("\n"), start=1):
        fields = split_fields(line.removesuffix("\r"))
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise FormatError(source, lineno, f"expected 4 fields (qid jg docid grade), found {len(fields)}", line)
        qid, jg, doc = fields[0], fields[1], fields[2]
        docs = groups.setdefault(jg, {}).setdefault(qid, {})
        if doc in docs:
            raise FormatError(source, lineno, f"doc {doc!r} is judged twice for query {qid!r} in group {jg!r}", line)
        docs[doc] = parse_grade(fields[3], source, lineno, line)
    if not groups:
        raise EmptyInputError(f"{source}: no qrels lines found (the file is empty or only comments)")
    return {jg: groups[jg] for jg in sorted(groups, key=lambda g: g.encode())}


class PrefLine(NamedTuple):
    """One judgment of a preference file: ``rel`` of ``doc`` for ``qid`` in sub-group ``jsg`` of
    judgment group ``jg``."""

    qid: str
    jg: str
    jsg: str
    doc: str
    rel: float
    line: int  #: its line number in the file


def read_prefs(path: Path, source: str, *, qrels_form: bool = False) -> list[PrefLine]:
    """trec_eval's preference judgments (``-R prefs``): ``qid jg jsg docid rel_level`` lines, or a
    qrels file read as preferences (``-R qrels_prefs``: ``qid jg docid rel_level``, the iter column
    the judgment group and one sub-group ``0``). Within a sub-group a doc with a higher level is
    preferred to one with a lower level (trec_eval's ``get_prefs.c``). The reading rule is the
    TREC files' (see the module docstring); a level is a finite decimal number (0: nonrelevant)."""
    text = decode(open_bytes(path), source)
    n_fields = 4 if qrels_form else 5
    expect = "qid jg docid rel_level" if qrels_form else "qid jg jsg docid rel_level"
    lines: list[PrefLine] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        fields = split_fields(line.removesuffix("\r"))
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != n_fields:
            raise FormatError(source, lineno, f"expected {n_fields} fields ({expect}), found {len(fields)}", line)
        if "\x00" in line:
            raise FormatError(source, lineno, "a NUL byte in a field", line)
        token = fields[-1]
        if not _DECIMAL.fullmatch(token) or not math.isfinite(float(token)):
            raise FormatError(source, lineno, f"rel_level {token!r} is not a finite number", line)
        jsg = "0" if qrels_form else fields[2]
        lines.append(PrefLine(fields[0], fields[1], jsg, fields[-2], float(token), lineno))
    if not lines:
        raise EmptyInputError(f"{source}: no preference lines found (the file is empty or only comments)")
    return lines
