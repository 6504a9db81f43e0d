"""The exact tier: the reading rule of TREC text (:mod:`ctxeval._io.trec`'s docstring) written out line
by line. It reads what the faster tiers cannot vouch for (a piece at a time) and names the line of any
error; its value parsers (:func:`parse_score`, :func:`parse_grade`) are the rule's, shared with the
tabular readers.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Literal

from .._errors import FormatError

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = [
    "DECIMAL",
    "INT64",
    "Kind",
    "brief",
    "cut_trailing",
    "decode",
    "finite_float",
    "frame",
    "parse_grade",
    "parse_score",
    "split_fields",
    "tag_of",
]

Kind = Literal["qrels", "run"]
FIELDS = {"qrels": 4, "run": 6}

_SEPARATORS = re.compile(r"[ \t]+")
_GRADE = re.compile(r"[+-]?[0-9]+(?:\.0*)?")
_FLOAT_GRADE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eE][+-]?[0-9]+")
DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NOT_FINITE = re.compile(r"[+-]?(?:inf(?:inity)?|nan)", re.IGNORECASE)
INT64 = 1 << 63  #: a grade lies in [-INT64, INT64): a C long, as trec_eval reads it


def split_fields(line: str) -> list[str]:
    """The fields of a line under the rule (see :mod:`ctxeval._io.trec`).

    >>> split_fields(" q1 \t0\td\u00a01  1 ")
    ['q1', '0', 'd\xa01', '1']
    """
    core = line.strip(" \t")
    return _SEPARATORS.split(core) if core else []


def frame(data: bytes, kind: Kind, source: str, first_line: int = 1) -> pl.DataFrame:
    """The lines of ``data`` (whole lines of a file whose first is line ``first_line``) as a frame of
    ``query_id``, ``doc_id`` and ``score`` + ``tag`` (a run) or ``relevance`` (qrels); no rows when
    every line is blank or a comment. An error names the file's line."""
    ncols = FIELDS[kind]
    qids: list[str] = []
    docs: list[str] = []
    vals: list[Any] = []
    tags: list[str] = []
    text = data.decode("utf-8", errors="strict") if data.isascii() else decode(data, source, first_line)
    if text.startswith("\ufeff") and first_line == 1:
        text = text[1:]
    for lineno, line in enumerate(text.split("\n"), start=first_line):
        if line.endswith("\r"):
            line = line[:-1]
        fields = split_fields(line)
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != ncols:
            raise FormatError(source, lineno, _count_problem(kind, fields), line)
        if "\x00" in line:
            raise FormatError(source, lineno, "a NUL byte in a field", line)
        qids.append(fields[0])
        docs.append(fields[2])
        if kind == "run":
            vals.append(parse_score(fields[4], source, lineno, line))
            tags.append(fields[5])
        else:
            vals.append(parse_grade(fields[3], source, lineno, line))
    cols: dict[str, Any] = {
        "query_id": pl.Series(qids, dtype=pl.String),
        "doc_id": pl.Series(docs, dtype=pl.String),
    }
    if kind == "run":
        cols["score"] = pl.Series(vals, dtype=pl.Float64)
        cols["tag"] = pl.Series(tags, dtype=pl.String)
    else:
        cols["relevance"] = pl.Series(vals, dtype=pl.Int64)
    return pl.DataFrame(cols)


def _count_problem(kind: Kind, fields: list[str]) -> str:
    ncols = FIELDS[kind]
    expect = "qid iter docid grade" if kind == "qrels" else "qid Q0 docid rank score tag"
    hint = ""
    if kind == "qrels" and len(fields) == 6 and DECIMAL.fullmatch(fields[4]):
        hint = "; this looks like a run (qid Q0 docid rank score tag), not qrels"
    elif kind == "run" and len(fields) > ncols:
        hint = (
            "; trec_eval ignores words after the run tag: `ctxeval trec_eval` reads this file as it does, "
            "or keep 6 fields with awk '{print $1,$2,$3,$4,$5,$6}'"
        )
    return f"expected {ncols} fields ({expect}), found {len(fields)}{hint}"


def tag_of(tags: pl.Series) -> str | None:
    """The tag when one non-empty tag is used throughout, else None."""
    if tags.len() == 0:
        return None
    first = tags[0]
    if first and tags.null_count() == 0 and bool((tags == first).all()):
        return str(first)
    return None


def decode(data: bytes, source: str, first_line: int = 1) -> str:
    """UTF-8 text, without a byte order mark; an error names the line of a bad byte."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + first_line
        raise FormatError(source, line, f"not valid UTF-8 (byte {data[exc.start]:#04x})") from exc


def brief(value: Any) -> str:
    """A value as an error message shows it: its repr, cut to about 40 characters.

    >>> brief(10**5000), brief("x" * 100), brief(0.5)
    ('(an integer of 5001 digits)', "'xxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100 characters)", '0.5')
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"(an integer of {len(str(value)) if value.bit_length() < 14000 else _digits(value)} digits)"
    text = repr(value)
    if len(text) <= 40:
        return text
    if isinstance(value, str):
        return f"{value[:28]!r}... ({len(value)} characters)"
    return f"{text[:30]}... ({len(text)} characters)"


def _digits(value: int) -> int:
    """The number of decimal digits of a positive or negative integer too long to print (Python
    refuses to turn one of over 4,300 digits into text)."""
    n = abs(value)
    d = int(n.bit_length() * 0.30102999566398120) + 1
    return d if n >= 10 ** (d - 1) else d - 1


def finite_float(value: Any) -> float | None:
    """``value`` (an int or a float, not a bool) as a finite float, or None (beyond a float's range
    or not finite: 10**400 does not convert)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        out = float(value)
    except OverflowError:
        return None
    return out if math.isfinite(out) else None


def parse_score(token: str, source: str, lineno: int | None, line: str | None) -> float:
    """A score: a finite decimal number in ASCII (see :mod:`ctxeval._io.trec`); one that rounds to
    zero keeps its sign (``-1e-400`` is ``-0.0``, as ``float()`` and ``strtod`` read it)."""
    if not DECIMAL.fullmatch(token):
        problem = "is not finite" if _NOT_FINITE.fullmatch(token) else "is not a number"
        raise FormatError(source, lineno, f"score {brief(token)} {problem}", line)
    value = float(token)
    if not math.isfinite(value):
        raise FormatError(source, lineno, f"score {brief(token)} is not finite (or beyond a 64-bit float)", line)
    return value


def parse_grade(token: Any, source: str, lineno: int | None, line: str | None) -> int:
    """A grade: a whole number (``2``, ``2.0``, an int or an integral float) in [-2^63, 2^63), the
    range of a C long, in which trec_eval reads it."""
    if isinstance(token, bool):
        raise FormatError(source, lineno, f"relevance {brief(token)} is not an integer", line)
    value: int | None = None
    if isinstance(token, int):
        value = token
    elif isinstance(token, float):
        if math.isfinite(token) and token.is_integer():
            value = int(token)
    else:
        text = str(token)
        if _GRADE.fullmatch(text):
            whole = text.split(".")[0]
            # beyond 19 digits it cannot fit (and past 4,300 Python refuses to read it)
            value = int(whole) if len(whole.lstrip("+-0")) <= 19 else 2 * INT64 * (-1 if whole.startswith("-") else 1)
        elif _FLOAT_GRADE.fullmatch(text):
            as_float = float(text)
            if math.isfinite(as_float) and as_float.is_integer():
                value = int(as_float)
    if value is None:
        raise FormatError(source, lineno, f"relevance {brief(token)} is not an integer", line)
    if not -INT64 <= value < INT64:
        raise FormatError(
            source, lineno, f"relevance {brief(token)} is out of range (a grade must fit in 64 bits)", line
        )
    return value


_TRAILING = re.compile(rb"(?m)^([ \t]*[^# \t\n][^ \t\n]*(?:[ \t]+[^ \t\n]+){5})[ \t]+[^ \t\r\n][^\n]*")


def cut_trailing(data: bytes) -> tuple[bytes, int]:
    r"""Run lines cut after their sixth field (trec_eval's reading), and how many lines were cut.

    >>> cut_trailing(b"q1 Q0 d1 1 0.5 tag more junk\nq1 Q0 d2 2 0.4 tag \r\n")
    (b'q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 0.4 tag \r\n', 1)
    """
    return _TRAILING.subn(rb"\1", data)
