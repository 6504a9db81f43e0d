"""TREC text (plain or compressed, a file or a stream): ``qid iter docid grade`` (qrels) and
``qid Q0 docid rank score tag`` (runs), into core :class:`~ctxeval._core.columns.Columns`.

The rule, which every tier follows (``tests/io/test_reader_rule.py`` runs each case through each):

* Lines end at ``\\n`` (a ``\\r`` before it is dropped); a UTF-8 byte order mark at the start is
  skipped; lines that are blank or start with ``#`` are skipped. A line holds at most 1 MiB
  (:data:`~ctxeval._io.source.LINE_LIMIT`, its line end excluded): a longer one is an error at once.
* Fields are separated by ASCII spaces and tabs, any run of them one separator; leading and trailing
  ones are ignored. Every other character (a no-break space, U+3000, a vertical tab ...) belongs to a
  field, except NUL, which is an error.
* Every line holds exactly the format's fields (4 or 6); anything else is an error naming the file
  and the line (a run given where qrels belong is named as such). The one exception is trec_eval's
  own reading of a run (``trailing="ignore"``, for ``ctxeval trec_eval``): words after the sixth
  field are dropped, as trec_eval drops them, and the lines that had them are counted.
* A grade is a whole number in ASCII digits (``2`` or ``2.0``) in [-2^63, 2^63), a C long's range, in
  which trec_eval reads it; a score is a finite decimal number in ASCII (``0.5``, ``-1e3``), read as
  ``float()`` reads it (one that rounds to zero keeps its sign: ``-1e-400`` is ``-0.0``, which ranks
  as ``0.0`` does). Underscores, other digits (``٣``), ``inf`` and ``nan`` are errors.

Three tiers, one module each: the compiled scanner (:mod:`.native`; ctxeval works without it), polars
over pieces of whole lines (:mod:`.columnar`), and the rule written out line by line (:mod:`.exact`),
which reads the pieces the vectorised tier cannot vouch for and names the line of any error. A tier
that meets anything it cannot vouch for gives the text to the next; when the scanner declines a line,
the exact tier first reads that one line: an error there is the file's error (named at once, without
reading the file again through the slower tiers), and a line the rule accepts sends the text on.
The text itself (files read with ``pread``, streams read once, compressed data, the line limit, a file
that changes while it is read) is :mod:`.source`'s.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from .._errors import EmptyInputError, FormatError
from . import columnar, exact, native
from .columnar import Parsed
from .exact import Kind, brief, cut_trailing, decode, finite_float, parse_grade, parse_score, split_fields
from .source import LINE_LIMIT, MemoryText, Text, open_bytes, open_text

__all__ = [
    "Kind",
    "Parsed",
    "brief",
    "cut_trailing",
    "decode",
    "finite_float",
    "locate_in_trec",
    "open_bytes",
    "parse_grade",
    "parse_score",
    "parse_trec",
    "read_tags",
    "read_text",
    "read_trec",
    "split_fields",
]


def read_trec(
    path: str | os.PathLike[str], kind: Kind, source: str, trailing: Literal["error", "ignore"] = "error"
) -> Parsed:
    """Read a TREC qrels or run file (see the module docstring). ``trailing="ignore"`` (a run): words
    after the sixth field are dropped and the lines counted (``Parsed.trailing``), as trec_eval
    reads a run."""
    with open_text(path, source, kind) as text:
        return read_text(text, kind, trailing)


def parse_trec(data: bytes, kind: Kind, source: str, first_line: int = 1) -> Parsed:
    """TREC text already in memory (a piece of a file whose first line is ``first_line``): the same
    tiers as :func:`read_trec`; an error names the line in the whole file."""
    return read_text(MemoryText(data, source, first_line, bom=first_line == 1), kind)


def read_text(text: Text, kind: Kind, trailing: Literal["error", "ignore"] = "error") -> Parsed:
    """The tiers over an open text (see the module docstring)."""
    cut = trailing == "ignore" and kind == "run"
    found = native.scan_text(text, kind)
    if isinstance(found, native.Scanned):
        text.check()
        return Parsed(found.columns, found.tag)
    if found.at >= 0:
        _explain(text, found.at, kind, cut)
    parsed = columnar.read(text, kind, trailing=cut)
    text.check()
    if parsed is None:
        raise _empty(text, kind)
    return parsed


def _explain(text: Text, at: int, kind: Kind, cut: bool) -> None:
    """The rule's error for the line at offset ``at`` (the scanner declined it), if the rule refuses
    that line; nothing when it accepts it (the scanner declines what lies outside its remit)."""
    data = text.read(at, min(text.size, at + LINE_LIMIT + 2) - at)
    nl = data.find(b"\n")
    line = data if nl < 0 else data[: nl + 1]
    if cut:
        line = cut_trailing(line)[0]
    try:
        exact.frame(line, kind, text.source)
    except FormatError as exc:
        if exc.line is None:
            raise
        raise FormatError(exc.source, text.line_of(at), exc.problem, exc.text) from None


def _empty(text: Text, kind: Kind) -> EmptyInputError:
    """The error of a text without a line of data: empty (or white space), or only comments."""
    for lo, hi in text.cuts():
        if not text.read(lo, hi - lo).isspace():
            return EmptyInputError(f"{text.source}: no {kind} lines found (the file is empty or only comments)")
    return EmptyInputError(f"{text.source}: the file is empty")


def read_tags(path: Path, source: str) -> list[str]:
    """The tag of every run record, in file order (the exact tier's reading)."""
    return exact.frame(open_bytes(path, source), "run", source)["tag"].to_list()


def locate_in_trec(path: Path, q: str, d: str) -> list[int]:
    """Line numbers at which (q, d) occurs in a TREC file (used only to explain a duplicate)."""
    lines: list[int] = []
    data = open_bytes(path)
    for lineno, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        f = line.split()
        if len(f) >= 3 and f[0] == q and f[2] == d:
            lines.append(lineno)
            if len(lines) == 2:
                break
    return lines
