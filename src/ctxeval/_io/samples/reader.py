"""One sample object's values checked, each with the error that names the file, the line and the field
(:class:`Reader`), and what reading a set met, for its notes (:class:`Tally`). The field table
(:mod:`.fields`) says which check each field's value goes through (:mod:`.shapes`).

Edge readings (one each, whatever the method; the set's notes count them):

* a lone surrogate in a text (``"ab\\ud800cd"``, e.g. from a JSON ``\\ud800`` escape, a chunker that
  cut a UTF-16 pair) becomes U+FFFD, the replacement character; in an id it is an error;
* an empty text (a chunk's, a reference context) is no evidence: it matches no reference, exactly
  or by similarity, and an empty reference context counts as no reference (its sample keeps it, the
  writer writes it back).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._errors import FormatError

__all__ = ["Reader", "Tally", "named_by", "text_id"]

_SURROGATE = re.compile("[\ud800-\udfff]")
#: the largest offset or count a field may give (a 64-bit index)
_INT_MAX = 2**63 - 1


@dataclass
class Tally:
    """What reading a set's samples met, for its notes."""

    reordered: int = 0  #: samples whose scores rank in another order than the list's
    unscored: int = 0  #: samples listing chunks without scores
    text_named: int = 0  #: samples naming chunks by their text
    text_refs: int = 0  #: samples judged by exact text
    surrogates: int = 0  #: texts with a lone surrogate replaced
    empty_retrieved: int = 0  #: samples that retrieved nothing
    empty_refs: int = 0  #: samples with a reference field that holds no reference
    empty_texts: int = 0  #: empty chunk texts and reference contexts (they match nothing)
    duplicate_keys: int = 0  #: keys given twice in one object (the first kept)
    duplicate_chunks: int = 0  #: chunks given twice in one list (the first kept)
    unknown: dict[str, int] = field(default_factory=dict)  #: fields not read -> samples giving them
    #: reference contexts judged by exact text that equal no chunk text but are contained in one
    excerpts: int = 0
    #: reference contexts judged by exact text that equal a chunk text (whole chunks, not excerpts)
    exact_refs: int = 0


def text_id(text: str) -> str:
    """The id of a chunk given by its text only: ``t`` + the first 16 hex digits of its BLAKE2b hash.

    >>> text_id("Paris is the capital of France.")
    'tee6ee5bbaa3d3af8'
    """
    return "t" + hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


def named_by(d: str, text: str) -> bool:
    """Whether the chunk id ``d`` is the id of ``text`` (:func:`text_id`; an id of another form is not
    hashed to tell)."""
    return len(d) == 17 and d[0] == "t" and d == text_id(text)


class Reader:
    """One record's fields, each taken once, with the source and line every error names."""

    def __init__(self, rec: Mapping[str, Any], source: str, line: int, tally: Tally) -> None:
        self.rec, self.source, self.line, self.tally = rec, source, line, tally

    def fail(self, problem: str) -> FormatError:
        return FormatError(self.source, self.line, problem)

    def first(self, names: tuple[str, ...]) -> tuple[str, Any]:
        """The value of the first of ``names`` given (not null), and that name; another of them giving
        a different value is an error."""
        if len(names) == 1:
            return names[0], self.rec.get(names[0])
        found = [(k, self.rec[k]) for k in names if self.rec.get(k) is not None]
        if not found:
            return names[0], None
        for k, v in found[1:]:
            if v != found[0][1]:
                raise self.fail(f"{found[0][0]} and {k} give different values; give one of them")
        return found[0]

    def text(self, value: Any, what: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(f"{what} must be a string, got {type(value).__name__}")
        s = value if isinstance(value, str) else str(value)
        if not s.isascii() and _SURROGATE.search(s):
            self.tally.surrogates += 1
            s = _SURROGATE.sub("\ufffd", s)
        return s

    def clean(self, v: Any) -> Any:
        """A value kept as it is (an unknown field, a chunk's other keys), its texts' lone surrogates
        replaced as every text's are."""
        if isinstance(v, str):
            return self.text(v, "") if not v.isascii() else v
        if isinstance(v, Mapping):
            return {self.clean(k): self.clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.clean(x) for x in v]
        return v

    def items(self, value: Any, what: str, of: str = "") -> tuple[Any, ...] | None:
        """``value`` as a tuple (None stays None); anything but a list is refused naming ``what`` and,
        when given, what its elements must be (``of``: " of objects")."""
        if value is None:
            return None
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise self.fail(f"{what} must be a list{of}, got {type(value).__name__}")
        return tuple(value)

    def check_id(self, d: str, what: str) -> str:
        if not d or d != d.strip() or "\x00" in d:
            raise self.fail(f"{what}: an id must be non-empty, without blanks at its ends, got {d!r}")
        if not d.isascii() and _SURROGATE.search(d):
            raise self.fail(f"{what}: an id must be valid Unicode, got {d!r} (a lone surrogate)")
        return d

    def an_id(self, v: Any, what: str) -> str:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise self.fail(f"{what} must be a string, got {type(v).__name__}")
        return self.check_id(v if isinstance(v, str) else str(v), what)

    def ids(self, value: Any, what: str) -> tuple[str, ...] | None:
        """A list of chunk ids: strings (or whole numbers), none empty or with blanks at its ends (the
        rule every run and qrels file follows)."""
        items = self.items(value, what)
        if items is None:
            return None
        return tuple(self.an_id(v, f"{what}[{i}]") for i, v in enumerate(items, start=1))

    def score(self, v: Any, where: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail(f"{where} must be a finite number, got {v!r}")
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f):
            shown = repr(v) if isinstance(v, float) or len(str(v)) < 40 else f"an integer of {len(str(v))} digits"
            raise self.fail(f"{where} must be a finite number, got {shown}")
        return f

    def offset(self, v: Any, where: str) -> int:
        """A character offset: a whole number >= 0 (within 64 bits)."""
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= _INT_MAX:
            shown = f"an integer of {len(str(v))} digits" if isinstance(v, int) and len(str(v)) > 40 else repr(v)
            raise self.fail(f"{where} must be a whole number >= 0 (a character offset), got {shown}")
        return v
