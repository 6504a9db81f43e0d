"""Side files: everything read besides runs and qrels, with one line reader and one error style.

(~530 lines on purpose: eight small side formats sharing one line reader and one error style;
each reader is 30-60 lines.)

* known distractors: ``qid docid`` lines (a pair listed twice counts once);
* LLM utilities: ``qid docid u`` lines, u in [0, 1] (a pair listed twice is an error);
* doc groups: ``doc_id group`` lines;
* answer correctness: CSV/TSV with a header (query id, run, correct);
* strata: ``qid category`` lines (the category is the rest of the line);
* trec_eval's z-scores (``-Z``): ``qid measure mean stddev`` lines;
* query texts: ``qid<TAB>text`` lines, or JSON lines with ``qid`` and ``text``;
* fitted weights of the positional UDCG: JSON (``alpha``, ``beta``, ``bias``), named by a hash of
  their content.

In line files, blank lines and lines starting with ``#`` are skipped. A file that is missing, a
folder, not UTF-8, or has a malformed line is an :class:`~ctxeval.InputError` /
:class:`~ctxeval.FormatError` naming the file, the line and the problem.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.columns import Columns, duplicate_groups, keep_rows, scan
from .._core.ids import ArrayIds, Ids
from .._errors import ConfigError, DuplicateError, EmptyInputError, FormatError, InputError
from .exact import decode
from .source import open_bytes
from .tables import _DOC_NAMES, _QID_NAMES, delimited_rows, json_value, pick, split_lines

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = [
    "Answers",
    "DocGroups",
    "Pairs",
    "fit_hash",
    "open_path",
    "read_answers",
    "read_distractors",
    "read_fit",
    "read_groups",
    "read_query_texts",
    "read_strata",
    "read_utilities",
    "read_zscores",
    "text_lines",
]


def open_path(value: Any, what: str) -> Path:
    """The path of a side file that exists and is a file."""
    p = Path(value)
    if not p.exists():
        raise InputError(f"{value}: no such file ({what})")
    if p.is_dir():
        article = "an" if what[:1].lower() in "aeiou" else "a"
        raise InputError(f"{value}: is a directory, expected {article} {what} file")
    return p


def text_lines(path: Any, what: str, comments: bool = True) -> list[tuple[int, str]]:
    """The non-blank lines (and, with ``comments``, not starting with ``#``) of a UTF-8 text file
    (plain, gzip, bzip2 or xz), with their line numbers; lines end at ``\\n`` only (:func:`.tables.split_lines`)."""
    p = open_path(path, what)
    text = decode(open_bytes(p), str(path))
    out = []
    for lineno, line in enumerate(split_lines(text), start=1):
        stripped = line.strip(" \t")
        if stripped and not (comments and stripped.startswith("#")):
            out.append((lineno, line))
    return out


def fields(line: str) -> list[str]:
    """A line's fields as the TREC rule separates them: by runs of ASCII spaces and tabs (a no-break
    space, U+2028 or a vertical tab belongs to a field).

    >>> fields(" q1\\td" + chr(0x2028) + "x  0.5 ")[1] == "d" + chr(0x2028) + "x"
    True
    """
    return _SEPARATORS.split(line.strip(" \t"))


_SEPARATORS = re.compile(r"[ \t]+")


# --------------------------------------------------------------------------------------------------
# (query, doc) pairs
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pairs:
    """Distinct (query id, doc id) pairs with a value each (0 when the file gives none), as core
    columns; ``duplicates``: pairs the input repeated (counted once)."""

    columns: Columns
    source: str
    duplicates: int = 0

    @property
    def height(self) -> int:
        return len(self.columns)


def _pair_columns(qs: list[str], ds: list[str], vs: list[float]) -> Columns:
    names, codes = np.unique(np.array(qs, dtype=str), return_inverse=True)
    return Columns.from_codes(codes.reshape(-1), names, ArrayIds.from_strings(ds), np.asarray(vs, dtype=np.float64))


def _frame_pairs(
    value: pl.DataFrame, source: str, ucol: tuple[str, ...] | None
) -> tuple[list[str], list[str], list[Any]]:
    qc = pick(value.columns, _QID_NAMES, "query id", source, True)
    dc = pick(value.columns, _DOC_NAMES, "document id", source, True)
    qs = [str(x) for x in value[qc].to_list()]  # type: ignore[index]
    ds = [str(x) for x in value[dc].to_list()]  # type: ignore[index]
    if ucol is None:
        return qs, ds, [0.0] * len(qs)
    uc = pick(value.columns, ucol, "utility", source, True)
    return qs, ds, value[uc].to_list()  # type: ignore[index]


def read_distractors(value: Any) -> Pairs:
    """Known distractors: a file of ``qid docid`` lines, a mapping ``{qid: [doc, ...]}``, an iterable
    of ``(qid, doc)`` pairs or a frame with query id and doc id columns.

    >>> p = read_distractors({"q1": ["d2", "d3", "d2"]})
    >>> p.height, p.duplicates, p.source
    (2, 1, '<distractors>')
    """
    if isinstance(value, Pairs):
        return value
    qs: list[str] = []
    ds: list[str] = []
    if isinstance(value, (str, os.PathLike)):
        source = str(value)
        for lineno, line in text_lines(value, "known distractors"):
            parts = fields(line)
            if len(parts) != 2:
                raise FormatError(source, lineno, f"expected two fields (qid docid), found {len(parts)}", line)
            qs.append(parts[0])
            ds.append(parts[1])
        if not qs:
            raise EmptyInputError(f"{value}: no known-distractor lines found (the file is empty or only comments)")
    elif isinstance(value, pl.DataFrame):
        source = "<distractors frame>"
        qs, ds, _ = _frame_pairs(value, source, None)
    elif isinstance(value, Mapping):
        source = "<distractors>"
        for q, docs in value.items():
            if isinstance(docs, (str, bytes)) or not isinstance(docs, Iterable):
                raise InputError(f"known distractors: query {q!r} maps to {docs!r}, expected a list of doc ids")
            for d in docs:
                qs.append(str(q))
                ds.append(str(d))
    elif isinstance(value, Iterable):
        source = "<distractors>"
        for i, pair in enumerate(value):
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Iterable) or len(tuple(pair)) != 2:
                raise InputError(f"known distractors: item {i} is {pair!r}, expected a (qid, doc_id) pair")
            q, d = tuple(pair)
            qs.append(str(q))
            ds.append(str(d))
    else:
        raise ConfigError(
            f"known distractors must be a file path, a mapping or (qid, doc) pairs, got {type(value).__name__}"
        )
    if not qs:
        raise EmptyInputError(f"{source}: no known-distractor pairs")
    cols = _pair_columns(qs, ds, [0.0] * len(qs))
    groups = duplicate_groups(cols, scan(cols, ties=False).dup_segments)
    if not groups:
        return Pairs(cols, source, 0)
    keep = keep_rows(cols, groups, "first")
    return Pairs(cols.take(keep), source, len(cols) - int(keep.size))


def _check_u(x: Any, where: str) -> float:
    if (
        isinstance(x, bool)
        or not isinstance(x, (int, float))
        or not math.isfinite(float(x))
        or not 0.0 <= float(x) <= 1.0
    ):
        raise InputError(f"{where}: utility {x!r} is not a number in [0, 1]")
    return float(x)


def read_utilities(value: Any) -> Pairs:
    """LLM utilities: a file of ``qid docid u`` lines (u a number in [0, 1]), a mapping
    ``{qid: {doc: u}}`` or a frame with query id, doc id and ``u``/``utility`` columns.

    >>> read_utilities({"q1": {"d1": 0.9, "d2": 0.25}}).columns.values.tolist()
    [0.9, 0.25]
    """
    if isinstance(value, Pairs):
        return value
    qs: list[str] = []
    ds: list[str] = []
    us: list[float] = []
    lines: list[int] | None = None
    if isinstance(value, (str, os.PathLike)):
        source = str(value)
        lines = []
        for lineno, line in text_lines(value, "utilities"):
            parts = fields(line)
            if len(parts) != 3:
                raise FormatError(source, lineno, f"expected three fields (qid docid u), found {len(parts)}", line)
            try:
                u = float(parts[2])
            except ValueError:
                raise FormatError(source, lineno, f"utility {parts[2]!r} is not a number", line) from None
            if not (math.isfinite(u) and 0.0 <= u <= 1.0):
                raise FormatError(
                    source, lineno, f"utility {parts[2]!r} is outside [0, 1] (u = 1 - P(NO-RESPONSE))", line
                )
            qs.append(parts[0])
            ds.append(parts[1])
            us.append(u)
            lines.append(lineno)
        if not qs:
            raise EmptyInputError(f"{source}: no utility lines found (the file is empty or only comments)")
    elif isinstance(value, pl.DataFrame):
        source = "<utilities frame>"
        qs, ds, raw = _frame_pairs(value, source, ("u", "utility", "score"))
        us = [_check_u(x, f"{source}:{i + 1}") for i, x in enumerate(raw)]
    elif isinstance(value, Mapping):
        source = "<utilities>"
        for q, inner in value.items():
            if not isinstance(inner, Mapping):
                raise InputError(
                    f"utilities: query {q!r} maps to {type(inner).__name__}, expected a mapping of doc id to utility"
                )
            for d, u in inner.items():
                qs.append(str(q))
                ds.append(str(d))
                us.append(_check_u(u, f"utilities[{q!r}][{d!r}]"))
    else:
        raise ConfigError(f"utilities must be a file path, a mapping or a frame, got {type(value).__name__}")
    cols = _pair_columns(qs, ds, us)
    groups = duplicate_groups(cols, scan(cols, ties=False).dup_segments)
    if groups:
        first = min(groups, key=lambda g: min(cols.record(int(r)) for r in g))
        recs = sorted(cols.record(int(r)) for r in first)[:2]
        q, d = qs[recs[0]], ds[recs[0]]
        where = " and ".join(str(lines[i] if lines is not None else i + 1) for i in recs)
        raise DuplicateError(
            f"{source}: utility of query {q!r}, doc {d!r} given twice ({'lines' if lines is not None else 'records'} {where})"
        )
    return Pairs(cols, source, 0)


# --------------------------------------------------------------------------------------------------
# doc groups
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DocGroups:
    """A global doc id -> group mapping: ``doc`` ids and their group codes (``labels[code]``)."""

    doc: Ids
    group: np.ndarray
    labels: list[str]
    source: str


def read_groups(value: Any) -> DocGroups:
    """Doc groups from a mapping ``{doc: group}`` or a file of ``doc_id group`` lines."""
    if isinstance(value, DocGroups):
        return value
    if isinstance(value, Mapping):
        mapping = {str(k): str(v) for k, v in value.items()}
        source = "<groups dict>"
    elif isinstance(value, (str, os.PathLike)):
        source = str(value)
        mapping = {}
        for lineno, line in text_lines(value, "groups"):
            parts = fields(line)
            if len(parts) != 2:
                raise FormatError(source, lineno, "expected two fields: doc_id group", line.strip())
            mapping[parts[0]] = parts[1]
    else:
        raise ConfigError(f"groups must be a mapping of doc id to group or a file path, got {type(value).__name__}")
    labels = sorted(set(mapping.values()))
    code = {lab: i for i, lab in enumerate(labels)}
    docs = list(mapping)
    return DocGroups(
        ArrayIds.from_strings(docs) if docs else ArrayIds(np.zeros(0, dtype="S1")),
        np.array([code[mapping[d]] for d in docs], dtype=np.int64),
        labels,
        source,
    )


# --------------------------------------------------------------------------------------------------
# answer correctness
# --------------------------------------------------------------------------------------------------

_RUN_NAMES = ("run", "run_id", "system", "name", "tag")
_CORRECT_NAMES = ("correct", "is_correct", "accuracy", "label", "y")


@dataclass(frozen=True)
class Answers:
    """Answer correctness per (run name, query id): 1 correct, 0 not."""

    correct: dict[tuple[str, str], int]
    source: str

    @property
    def runs(self) -> list[str]:
        return sorted({r for r, _ in self.correct})


def read_answers(value: Any) -> Answers:
    """Answer correctness: a CSV/TSV file with a header naming the query id (``qid``), the run (``run``)
    and ``correct`` (0/1, true/false) columns (tab-separated when the header holds a tab), or a frame
    with those columns. Each (query, run) at most once."""
    if isinstance(value, Answers):
        return value
    if isinstance(value, pl.DataFrame):
        source = "<answers frame>"
        header = list(value.columns)
        records = [(i + 2, dict(zip(header, [str(x) for x in r]))) for i, r in enumerate(value.iter_rows())]
    elif isinstance(value, (str, os.PathLike)):
        source = str(value)
        p = open_path(value, "answers")
        text = decode(open_bytes(p), source)
        first = next((ln for ln in split_lines(text) if ln.strip() and not ln.lstrip().startswith("#")), None)
        if first is None:
            raise EmptyInputError(f"{source}: the file is empty (expected a header: qid, run, correct)")
        head, records = delimited_rows(text, source, "\t" if "\t" in first else ",", comments=True, strip=True)
        header = head or []
    else:
        raise ConfigError(f"answers must be a file path or a polars frame, got {type(value).__name__}")
    qc = pick(header, _QID_NAMES, "query id", source, True)
    rc = pick(header, _RUN_NAMES, "run", source, True)
    cc = pick(header, _CORRECT_NAMES, "correct", source, True)
    out: dict[tuple[str, str], int] = {}
    line_of: dict[tuple[str, str], int] = {}
    for lineno, rec in records:
        raw = rec[cc].strip().lower()  # type: ignore[index]
        if raw in ("1", "true", "yes", "1.0"):
            y = 1
        elif raw in ("0", "false", "no", "0.0"):
            y = 0
        else:
            raise FormatError(source, lineno, f"{cc} {rec[cc]!r} is not 0/1 (or true/false)", None)  # type: ignore[index]
        for col in (qc, rc):
            if not rec[col]:  # type: ignore[index]
                raise FormatError(source, lineno, f"{col} is empty", None)
        key = (rec[rc], rec[qc])  # type: ignore[index]
        if key in out:
            raise DuplicateError(
                f"{source}: query {key[1]!r}, run {key[0]!r} has two answers (lines {line_of[key]} and {lineno})"
            )
        out[key] = y
        line_of[key] = lineno
    if not out:
        raise EmptyInputError(f"{source}: no answer rows after the header")
    return Answers(out, source)


# --------------------------------------------------------------------------------------------------
# strata and query texts
# --------------------------------------------------------------------------------------------------


def read_strata(source: Any) -> tuple[dict[str, list[str]], str]:
    """Strata from a ``qid category`` file or a mapping ``qid -> category | [categories]``: each
    category's query ids (in first-seen order) and the source's name."""
    members: dict[str, list[str]] = {}
    if isinstance(source, Mapping):
        name = "<strata mapping>"
        for qid, cats in source.items():
            for cat in [cats] if isinstance(cats, str) else list(cats):
                if not isinstance(cat, str) or not cat.strip():
                    raise ConfigError(f"strata: query {qid!r} has an empty or non-text category {cat!r}")
                members.setdefault(cat.strip(), [])
                if str(qid) not in members[cat.strip()]:
                    members[cat.strip()].append(str(qid))
        return members, name
    if not isinstance(source, (str, os.PathLike)):
        raise ConfigError(
            f"strata must be a file path or a mapping of query id to categories, got {type(source).__name__}"
        )
    name = str(source)
    seen: dict[tuple[str, str], int] = {}
    for lineno, line in text_lines(source, "strata"):
        parts = line.strip().split(None, 1)
        if len(parts) != 2 or not parts[1].strip():
            raise FormatError(name, lineno, "expected 'qid category' (a query id, white space, a category)", line)
        qid, cat = parts[0], parts[1].strip()
        if (qid, cat) in seen:
            raise FormatError(
                name, lineno, f"query {qid} is already in category {cat!r} (line {seen[(qid, cat)]})", line
            )
        seen[(qid, cat)] = lineno
        members.setdefault(cat, []).append(qid)
    if not members:
        raise FormatError(name, None, "no 'qid category' lines")
    return members, name


def read_query_texts(source: Any) -> tuple[dict[str, str], str]:
    """Query texts from a mapping, a ``qid<TAB>text`` file or a JSON-lines file (``.jsonl``, or a
    first record starting with ``{``: ``qid`` / ``query_id`` / ``id`` and ``text`` / ``query`` /
    ``question``), or ``irds:<id>`` (an ir_datasets dataset's queries)."""
    return read_texts(source, "query texts", ("qid", "query_id", "id"), ("text", "query", "question"))


def read_passages(source: Any) -> tuple[Mapping[str, str], str]:
    """Passage texts: ``id<TAB>text`` lines, or JSON lines ``{"id" (or doc_id, docid, _id), "text"
    (or contents, passage)}``, or a mapping; ``irds:<id>``: an ir_datasets dataset's documents, looked
    up as they are asked for."""
    if isinstance(source, str) and source.startswith("irds:"):
        from .irds import passages

        return passages(source), source
    return read_texts(source, "passages", ("id", "doc_id", "docid", "_id", "pid"), ("text", "contents", "passage"))


def read_texts(
    source: Any,
    what: str = "query texts",
    id_keys: tuple[str, ...] = ("qid", "query_id", "id"),
    text_keys: tuple[str, ...] = ("text", "query"),
) -> tuple[dict[str, str], str]:
    """Texts by id from a mapping, an ``id<TAB>text`` file or a JSON-lines file."""
    if source is None:
        return {}, ""
    if isinstance(source, Mapping):
        return {str(k): str(v) for k, v in source.items()}, f"<{what} mapping>"
    if isinstance(source, str) and source.startswith("irds:"):  # an ir_datasets dataset by name
        from .irds import query_texts

        return query_texts(source), source
    if not isinstance(source, (str, os.PathLike)):
        raise ConfigError(f"{what} must be a file path or a mapping of id to text, got {type(source).__name__}")
    name = str(source)
    lines = text_lines(source, what, comments=False)
    first = lines[0][1] if lines else ""
    as_json = Path(source).suffix.lower() in (".jsonl", ".ndjson") or first.lstrip().startswith("{")
    out: dict[str, str] = {}
    for lineno, line in lines:
        if not as_json and line.startswith("#"):
            continue
        if as_json:
            rec = json_value(name, lineno, line, line)
            if not isinstance(rec, dict):
                raise FormatError(name, lineno, f"expected a JSON object with {id_keys[0]} and text", line)
            qid = next((rec[k] for k in id_keys if k in rec), None)
            text = next((rec[k] for k in text_keys if k in rec), None)
            if qid is None or not isinstance(text, str):
                raise FormatError(
                    name,
                    lineno,
                    f"expected fields {id_keys[0]} (or {', '.join(id_keys[1:])}) and {text_keys[0]} "
                    f"(or {', '.join(text_keys[1:])})",
                    line,
                )
            qid = str(qid)
        else:
            qid, tab, text = line.partition("\t")
            if not tab or not qid.strip():
                raise FormatError(name, lineno, f"expected '{id_keys[0]}<TAB>text'", line)
            qid = qid.strip()
        if qid in out:
            raise FormatError(
                name, lineno, f"{'query' if what == 'query texts' else 'id'} {qid} already has a text", line
            )
        out[qid] = text.strip()
    if not out:
        raise FormatError(name, None, f"no {what}")
    return out, name


# --------------------------------------------------------------------------------------------------
# fitted weights
# --------------------------------------------------------------------------------------------------


def fit_hash(fit: Mapping[str, Any]) -> str:
    """A name for fitted weights from their content: the first 12 hex digits of the SHA-256 of
    ``alpha``, ``beta`` and ``bias`` as canonical JSON."""
    doc = {
        "alpha": [float(x) for x in fit["alpha"]],
        "beta": [float(x) for x in fit["beta"]],
        "bias": float(fit["bias"]),
    }
    return "sha256:" + hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:12]


def read_fit(path: Any) -> dict[str, Any]:
    """Read and check a fit file written by ``ctxeval fit-udcg`` (``alpha``, ``beta`` of equal length
    k, ``bias``): ``{"alpha", "beta", "bias", "k", "source"}``."""
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"{path}: no such fit file (write one with 'ctxeval fit-udcg ... -o {path}')")
    if p.is_dir():
        raise ConfigError(f"{path}: is a directory, expected a fit JSON file written by 'ctxeval fit-udcg'")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a JSON fit file ({exc})") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a JSON object with alpha, beta and bias")
    alpha, beta, bias = doc.get("alpha"), doc.get("beta"), doc.get("bias", 0.0)
    ok = (
        isinstance(alpha, list)
        and isinstance(beta, list)
        and len(alpha) == len(beta) > 0
        and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in [*alpha, *beta, bias]
        )
    )
    if not ok:
        raise ConfigError(
            f"{path}: 'alpha' and 'beta' must be non-empty lists of numbers of equal length and 'bias' a number"
        )
    return {
        "alpha": np.asarray(alpha, dtype=np.float64),
        "beta": np.asarray(beta, dtype=np.float64),
        "bias": float(bias),
        "k": len(alpha),  # type: ignore[arg-type]
        "source": str(path),
    }


# what C's atof reads as a number: decimals, and inf / infinity / nan in any case (trec_eval's own
# test/zscores_file of 9.0.8 holds "nan" for set_F)
_ZNUMBER = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.IGNORECASE)


def read_zscores(path: Any) -> dict[tuple[str, str], tuple[float, float]]:
    """trec_eval's ``-Z`` file: ``qid measure mean stddev`` per line (blank lines skipped) ->
    {(qid, measure): (mean, stddev)}; a malformed line is an error naming the file and the line.
    A mean or stddev may be ``nan`` or ``inf`` as C's ``atof`` reads them (a z-score against a NaN
    is NaN, printed ``nan``, as trec_eval prints it); text that is not a number is an error, where
    trec_eval would silently read 0."""
    source = str(path)
    table: dict[tuple[str, str], tuple[float, float]] = {}
    for lineno, line in text_lines(path, "z-scores", comments=False):
        fields = line.split()
        if len(fields) != 4:
            raise FormatError(source, lineno, f"expected 4 fields (qid measure mean stddev), found {len(fields)}", line)
        numbers = []
        for what, token in (("mean", fields[2]), ("stddev", fields[3])):
            if not _ZNUMBER.fullmatch(token):
                raise FormatError(source, lineno, f"{what} {token!r} is not a number (trec_eval would read 0)", line)
            numbers.append(float(token))
        table[(fields[0], fields[1])] = (numbers[0], numbers[1])
    return table
