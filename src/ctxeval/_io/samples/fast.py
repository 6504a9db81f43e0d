"""The columnar reader of plain sample files: JSON lines holding only ids, scores, references and
short texts, decoded by polars in one pass instead of one ``json.loads`` per line.

It is a fast path, never a second definition: :func:`read` returns None whenever a line holds
anything it does not check exactly (another field, a value of another JSON type, an id given twice,
a query id given twice, a blank or non-UTF-8 file, ...), and the caller then reads the file with the
line-by-line reader, which gives the exact error or result. The property test
``tests/io/test_samples_fast.py`` checks that both readers agree on generated files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ..._errors import InputError
from ..frames import columns_from_runs, query_array
from ..ids import SeriesIds
from ..model import Qrels
from ..tables import _EDGE_SPACE_OR_NUL
from .fields import FAST
from .reader import Tally

__all__ = ["Columnar", "qrels_rows", "read", "run_columns", "tally"]

_GRADES = r'"grades": ?\{[^{}]*\}'  # json.dumps's spacings (default, compact); others: the line reader
_KEYS = r'[{,] ?"[a-z_]+":'  #: the keys (all known ones are lower case); others fail the quote count
#: the fields it takes (the field table's ``fast`` rows), by how it decodes them
_STRING_FIELDS = tuple(r.name for r in FAST if r.column == "string")
_LIST_FIELDS = tuple(r.name for r in FAST if r.column in ("strings", "floats"))
_ID_LISTS = tuple(r.name for r in FAST if r.column == "strings")
_FIELDS = frozenset(r.name for r in FAST)
_TYPES: dict[str, Any] = {"string": pl.String, "strings": pl.List(pl.String), "floats": pl.List(pl.Float64)}
_COLUMNS = tuple(r.name for r in FAST if r.column in _TYPES)  #: the frame's columns (grades apart)
_SCHEMA = pl.Struct({r.name: _TYPES[r.column] for r in FAST if r.column in _TYPES})


@dataclass(frozen=True, eq=False)
class Columnar:
    """A sample set as frames: ``frame`` one row per sample (a column per field the reader takes but
    grades: query_id, question, retrieved_ids, retrieved_scores (None: not given), reference_ids,
    category), in file order; ``grades`` one row per graded chunk (s: the sample's position, query_id,
    doc_id, relevance)."""

    frame: pl.DataFrame
    grades: pl.DataFrame
    #: no id can be empty, padded with white space or hold a control character (see :func:`read`)
    plain: bool = False
    qrels: Any = None  #: the judgments (a Qrels), None when no sample gives any
    given_grades: Any = None  #: per sample, whether it gives a grades object (a numpy bool array)

    def __len__(self) -> int:
        return self.frame.height


def read(path: Path) -> Columnar | None:
    """The sample file at ``path`` as frames, or None when the line-by-line reader must read it.

    Exactness without parsing twice: a line without an escaped quote (``\\"``) or backslash (``\\\\``)
    holds no quote character inside a string (``\\u00e9`` and ``\\n`` escapes are fine), so
    its keys are the quoted names after ``{`` or ``,`` and before ``:``, and its quote count is twice
    the number of its strings. polars' decoder coerces (a number or ``true`` into a string, a string
    into a one-item list); the counts rule that out: every key known and given once, each list field
    a list, brackets and braces only where the schema puts them, no ``true`` / ``false`` anywhere,
    and quotes = 2 x (keys + string values + ids in the lists + graded ids). The grades object
    (``"grades": {"id": grade, ...}``, the only nested object) is cut out first, split at its commas
    and colons.

    ``plain``: json.dumps writes no blank after an opening quote nor before a closing one, so an
    ASCII line without escapes, ``" ``, a blank before a closing quote or ``""`` holds no empty or
    padded id (a control character inside a string is not valid JSON), and the ids need no check of
    their own; other lines have their decoded ids checked.

    A file whose first line names a field the reader does not take (a RAGAS file's
    ``retrieved_contexts``, a chunk's ``retrieved`` objects) is declined before anything is decoded,
    so the line reader is the only one to parse it.
    """
    if not _first_line_plain(path):
        return None
    try:
        lines = pl.read_csv(
            path, has_header=False, separator="\x1f", quote_char=None, schema={"line": pl.String}, encoding="utf8"
        )
    except (pl.exceptions.PolarsError, OSError):
        return None
    if lines.height == 0:
        return None
    line = pl.col("line")
    try:
        frame = lines.select(
            line.str.json_decode(_SCHEMA).alias("s"),
            (
                (line.str.strip_chars().str.len_bytes() == 0)
                | line.str.contains('\\"', literal=True)  # an escaped quote (other escapes keep the counts)
                | line.str.contains("\\\\", literal=True)
                | line.str.contains("\x1f", literal=True)
                | line.str.contains("\ufeff", literal=True)
                | line.str.contains("true", literal=True)
                | line.str.contains("false", literal=True)
                | line.str.contains(r"\\u[dD][89a-fA-F]")  # a surrogate escape: the line reader's rule
            ).alias("unsafe"),
            line.str.count_matches('"', literal=True).alias("quotes"),
            pl.any_horizontal(  # literals: a control character fails the decoding anyway
                line.str.len_bytes() != line.str.len_chars(),
                line.str.contains("\\", literal=True),  # an escape may stand for anything
                *(line.str.contains(t, literal=True) for t in ('" ', '""', ' ",', ' ":', ' "]', ' "}')),
            ).alias("padded"),
            line.str.count_matches("[", literal=True).alias("brackets"),
            line.str.count_matches("{", literal=True).alias("braces"),
            line.str.count_matches("}", literal=True).alias("closing"),
            *(
                (line.str.contains(f'"{k}": [', literal=True) | line.str.contains(f'"{k}":[', literal=True)).alias(
                    f"list:{k}"
                )
                for k in _LIST_FIELDS
            ),
            line.str.extract(_GRADES, 0).str.replace(r"^[^{]*\{", "").alias("grades_text"),
            line.str.replace(_GRADES, "").str.extract_all(_KEYS).alias("keys"),
        ).unnest("s")
    except pl.exceptions.PolarsError:
        return None
    has_grades = frame["grades_text"].is_not_null()
    if frame["grades_text"].str.contains("\\", literal=True).any():
        return None  # graded ids are split from the raw text: an escape there is the line reader's
    keys = frame["keys"]
    n_keys = keys.list.len()
    if frame["unsafe"].any() or (n_keys == 0).any() or (keys.list.n_unique() != n_keys).any():
        return None
    found = set(keys.explode().unique().str.extract(r'"([^"]+)"', 1).to_list())
    if "grades" in found:
        return None  # grades that are not one flat object
    if has_grades.any():
        found.add("grades")
    if not found <= _FIELDS or "query_id" not in found or "retrieved_ids" not in found:
        return None
    qid = frame["query_id"]
    if qid.is_null().any() or (qid == "").any() or qid.n_unique() != qid.len():
        return None
    pairs = (
        frame.select(
            pl.int_range(pl.len()).alias("s"),
            "query_id",
            pl.col("grades_text").str.strip_suffix("}").str.split(",").alias("p"),
        )
        .explode("p")
        .filter(pl.col("p").str.strip_chars().str.len_bytes() > 0)
        .with_columns(pl.col("p").str.split_exact(":", 1).alias("kv"))
        .unnest("kv")
        .select(
            "s",
            "query_id",
            pl.col("field_0").str.strip_chars().alias("key"),
            pl.col("field_1").str.strip_chars().alias("value"),
        )
    )
    graded = pairs.select(
        "s",
        "query_id",
        pl.col("key").str.strip_prefix('"').str.strip_suffix('"').alias("doc_id"),
        pl.col("value").cast(pl.Int64, strict=False).alias("relevance"),
    )
    lists = pl.sum_horizontal([pl.col(f"list:{k}").cast(pl.UInt32) for k in _LIST_FIELDS])
    string_lists = [pl.col(k).list.len().fill_null(0) for k in _ID_LISTS]
    scalars = [pl.col(k).is_not_null().cast(pl.UInt32) for k in _STRING_FIELDS]
    g = pl.col("grades_text").is_not_null().cast(pl.UInt32)
    ok = (
        frame.with_columns(n_keys.alias("n_keys"))
        .with_row_index("s")
        .select(
            (
                # a list field is absent, null or a list (the decoder makes a one-item list of a string)
                pl.all_horizontal([pl.col(f"list:{k}") | pl.col(k).is_null() for k in _LIST_FIELDS])
                & (pl.col("brackets") == lists)
                & (pl.col("braces") == 1 + g)
                & (pl.col("closing") == 1 + g)
                & (
                    pl.col("quotes")
                    == 2
                    * (
                        pl.col("n_keys")
                        + g
                        + pl.sum_horizontal(scalars)
                        + pl.sum_horizontal(string_lists)
                        + pl.col("grades_text").str.count_matches('":', literal=True).fill_null(0)
                    )
                )
            ).all()
        )
        .item()
    )
    if not ok:
        return None
    # a value that is not a whole number (2.0, 2e0) casts to null; "+2" or "02" fail the decoding
    if graded["relevance"].null_count():
        return None
    quoted = pairs.select(
        (
            pl.col("key").str.starts_with('"') & pl.col("key").str.ends_with('"') & (pl.col("key").str.len_bytes() > 2)
        ).all()
    ).item()
    if not quoted:
        return None
    ids = frame["retrieved_ids"]
    if (ids.list.n_unique() != ids.list.len()).any():
        return None  # an id given twice: the error (or --duplicates first) is the line reader's
    scores = frame["retrieved_scores"]
    if (scores.is_not_null() & (scores.list.len() != ids.list.len().fill_null(0))).any():
        return None
    flat = scores.explode().drop_nulls()
    if flat.len() != scores.list.len().fill_null(0).sum() or not flat.is_finite().all():
        return None  # a null score, or one beyond float64
    plain = not frame["padded"].any()
    if not plain:  # an empty or padded id is the line reader's to name
        every = pl.concat([ids.explode(), frame["reference_ids"].explode(), graded["doc_id"], qid]).drop_nulls()
        if (every.str.len_bytes() == 0).any() or every.str.contains(_EDGE_SPACE_OR_NUL).any():
            return None
    out = Columnar(frame.select(_COLUMNS), graded, plain=plain, given_grades=has_grades.to_numpy())
    try:  # its duplicate check finds a graded id given twice in a line (json.loads keeps the last)
        return replace(out, qrels=_qrels(out, str(path)))
    except InputError:
        return None


def _first_line_plain(path: Path) -> bool:
    """Whether the file's first line may be one this reader takes: its keys (as JSON would give them)
    all among the fields it reads (a wrong guess only costs the decoding the check avoids)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(1 << 20)
        keys = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return True  # let the full checks (and then the line reader) say what is wrong
    return not isinstance(keys, dict) or set(keys) <= _FIELDS


def run_columns(c: Columnar) -> tuple[Any, np.ndarray, Tally]:
    """The run as core columns, built directly (the reader checked what a run frame's validation
    checks: ids, finite scores, no id twice in a list, no query twice), each sample's given scores
    kept when they rank its chunks in list order under the evaluation's rule (decreasing as float32,
    ties by id descending), else ``n .. 1``; with the scores per row in list order, how many samples
    listed scores in another order and how many listed chunks without scores (a :class:`Tally`)."""
    f = c.frame
    lengths = f["retrieved_ids"].list.len().fill_null(0).to_numpy().astype(np.int64)
    given = f["retrieved_scores"].is_not_null().to_numpy()
    n = int(lengths.sum())
    s_of = np.repeat(np.arange(f.height, dtype=np.int64), lengths)
    doc = f["retrieved_ids"].explode().drop_nulls().alias("doc_id")
    if given.all():
        score = f["retrieved_scores"].explode().drop_nulls().to_numpy().astype(np.float64)
    else:
        score = np.full(n, np.nan)
        score[np.repeat(given, lengths)] = (
            f.filter(pl.Series(given))["retrieved_scores"].explode().drop_nulls().to_numpy()
        )
    with np.errstate(over="ignore"):  # beyond float32: inf, as the ranking compares them
        f32 = score.astype(np.float32)
    same = s_of[1:] == s_of[:-1]
    tie = np.flatnonzero(same & (f32[1:] == f32[:-1]))  # ties are ranked by id: compare those only
    bad_pair = same & (f32[1:] > f32[:-1])
    if tie.size:
        bad_pair[tie] = (doc.gather(tie + 1) > doc.gather(tie)).to_numpy()
    bad = np.zeros(f.height, dtype=bool)
    bad[s_of[:-1][bad_pair]] = True
    by_order = bad | ~given
    off = np.zeros(f.height + 1, dtype=np.int64)
    np.cumsum(lengths, out=off[1:])
    ranks = (np.repeat(lengths, lengths) - (np.arange(n, dtype=np.int64) - np.repeat(off[:-1], lengths))).astype(
        np.float64
    )
    final = np.where(np.repeat(by_order, lengths), ranks, score)
    listed = lengths > 0
    heads = query_array(f["query_id"].filter(pl.Series(listed)))
    cols = columns_from_runs(heads, lengths[listed], SeriesIds(doc), final)
    return cols, final, Tally(reordered=int((bad & given).sum()), unscored=int((~given & listed).sum()))


def tally(c: Columnar, t: Tally) -> None:
    """The counts the line reader's :func:`.schema.parse` keeps, for the set's notes: the samples
    that retrieved nothing, and those whose reference fields give no judgment."""
    f = c.frame
    t.empty_retrieved = int((f["retrieved_ids"].list.len().fill_null(0) == 0).sum())
    judged = np.zeros(f.height, dtype=bool)
    judged[c.grades["s"].to_numpy()] = True
    judged |= (f["reference_ids"].list.len().fill_null(0) > 0).to_numpy()
    given = (f["reference_ids"].is_not_null() | pl.Series(c.given_grades)).to_numpy()
    t.empty_refs = int((given & ~judged).sum())


def _qrels(c: Columnar, source: str) -> Any:
    frame = qrels_rows(c)
    if frame.height == 0:
        return None
    cols, _, _ = Qrels._of_frame(frame, source, "error", plain=c.plain)
    return Qrels(cols, source)


def qrels_rows(c: Columnar) -> pl.DataFrame:
    """The judgments (query_id, doc_id, relevance): a sample's grades, else its reference ids at
    grade 1 (the first of a repeated id)."""
    graded = c.grades["s"].unique()
    refs = (
        c.frame.select("query_id", "reference_ids")
        .with_row_index("s")
        .filter(~pl.col("s").is_in(graded.implode()))
        .explode("reference_ids")
        .drop_nulls("reference_ids")
        .unique(["s", "reference_ids"], keep="first", maintain_order=True)
        .select("query_id", pl.col("reference_ids").alias("doc_id"), pl.lit(1, dtype=pl.Int64).alias("relevance"))
    )
    return pl.concat([c.grades.select("query_id", "doc_id", "relevance"), refs])
