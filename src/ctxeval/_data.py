"""The data model: :class:`Qrels` (judgments) and :class:`Run` (a ranked, scored result list).

Both wrap a validated polars frame. Ids are strings at the edge; the evaluation engine turns them into
integer codes and contiguous per-query segments (see :mod:`ctxeval._engine`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _io
from ._errors import ConfigError, InputError

if TYPE_CHECKING:
    import polars as pl

    from ._segments import Layout
else:
    from ._lazy import pl

__all__ = ["Qrels", "Run", "GradeMap"]


def _source_name(obj: Any, default: str) -> str:
    return str(obj) if isinstance(obj, (str, os.PathLike)) else default


def _pair_keys(obj: Qrels | Run) -> np.ndarray:
    if obj._keys is None:
        obj._keys = _io.pair_keys(obj.frame)
    return obj._keys


def _layout(obj: Qrels | Run) -> Layout:
    if obj._layout is None:
        from ._segments import layout

        obj._layout = layout(obj.frame)
    return obj._layout


def _frame(obj: Qrels | Run) -> pl.DataFrame:
    if obj._df is None:
        obj._df = obj._light.to_frame()  # type: ignore[union-attr]
    elif "query_id" not in obj._df.columns:  # read compactly: the layout holds the query ids
        from ._segments import with_query_id

        obj._df = with_query_id(obj._df, obj._layout)  # type: ignore[arg-type]
    return obj._df


def column(obj: Qrels | Run, name: str) -> pl.Series:
    """One column of ``obj.frame``, without rebuilding a compactly read ``query_id`` for another."""
    df = obj._df
    if df is not None and name in df.columns:
        return df[name]
    return _frame(obj)[name]


def _light_columns(path: str | os.PathLike[str], kind: _io.Kind, format: str | None) -> Any:
    """The file's columns from the polars-free reader, when it applies (see ``_light``)."""
    if format not in (None, "trec") or _io.detect_format(path) != "trec":
        return None
    from . import _light

    return _light.read_trec(path, kind)


def _read_checked(path: str | os.PathLike[str], kind: _io.Kind, format: str | None, duplicates: _io.DuplicatePolicy) -> tuple[pl.DataFrame, int, Layout | None, str | None]:
    """Read a file and apply the duplicate policy: (frame, rows dropped, its layout, the run's tag name).

    The frame may lack ``query_id`` (a large grouped TREC file, read compactly: the layout then holds
    the ids, see :class:`~ctxeval._io.Loaded`). The tag column is dropped as soon as it has given the
    name, unless rows are dropped (the name then comes from the remaining rows: the file is then read
    again in full, as the duplicates' messages need the query ids anyway).
    """
    from ._segments import duplicate_free, layout

    _io.check_duplicate_policy(duplicates)
    loaded = _io.read_file_layout(path, kind, format, compact=True)
    df = loaded.frame
    lay = loaded.layout if loaded.layout is not None else layout(df)
    if duplicate_free(df, lay):
        tag = loaded.tag if loaded.tag_settled else Run._tag_name(df)
        return (df.drop("tag") if "tag" in df.columns else df), 0, lay, tag
    if loaded.compact or loaded.tag_settled:
        loaded = _io.read_file_layout(path, kind, format)
        df = loaded.frame
        lay = loaded.layout if loaded.layout is not None else layout(df)
    fmt = format or _io.detect_format(path)
    locate = (lambda q, d: _io.locate_in_trec(path, q, d)) if fmt == "trec" else None
    df, dropped = _io.resolve_duplicates(df, kind, str(path), duplicates, locate, lay)
    return df, dropped, (lay if dropped == 0 else None), Run._tag_name(df)


class Qrels:
    """Relevance judgments: one integer grade per (query id, doc id); grades may be negative.

    >>> q = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}})
    >>> len(q), q.query_ids
    (2, ['q1'])
    """

    __slots__ = ("_df", "source", "dropped_duplicates", "_keys", "_layout", "_unique", "_light")

    def __init__(self, frame: pl.DataFrame, source: str = "<qrels>", *, dropped_duplicates: int = 0) -> None:
        expected = {"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64}
        for col, dtype in expected.items():
            if col not in frame.columns or frame.schema[col] != dtype:
                raise InputError(f"{source}: a Qrels frame needs column {col!r} of type {dtype}")
        self._df = frame.select(list(expected))
        self.source = source
        self.dropped_duplicates = dropped_duplicates
        self._keys: np.ndarray | None = None
        self._layout: Layout | None = None
        self._unique: bool | None = None
        self._light: Any = None

    keys = property(lambda self: _pair_keys(self), doc="64-bit hash of every (query_id, doc_id) pair, in row order (computed once).")
    layout = property(lambda self: _layout(self), doc="The query segments of the frame (computed once).")

    @property
    def pairs_unique(self) -> bool:
        """Whether every (query id, doc id) pair occurs once (known from the readers, else tested once)."""
        if self._unique is None:
            from ._segments import duplicate_free

            self._unique = duplicate_free(self.frame, self.layout)
        return self._unique

    # construction ---------------------------------------------------------------------------------
    @classmethod
    def from_file(
        cls, path: str | os.PathLike[str], *, format: str | None = None, duplicates: _io.DuplicatePolicy = "error"
    ) -> Qrels:
        """Read TREC qrels (``qid iter docid grade``, plain or .gz), CSV/TSV/JSONL with a header, or Parquet."""
        _io.check_duplicate_policy(duplicates)
        light = _light_columns(path, "qrels", format)
        if light is not None:
            out = cls.__new__(cls)
            out._df, out.source, out.dropped_duplicates = None, str(path), 0
            out._keys, out._layout, out._unique, out._light = None, None, True, light
            return out
        df, dropped, lay, _ = _read_checked(path, "qrels", format, duplicates)
        if "query_id" in df.columns:
            out = cls(df, str(path), dropped_duplicates=dropped)
        else:  # read compactly: the layout holds the query ids (see _read_checked)
            out = cls.__new__(cls)
            # one contiguous piece per column: evaluation gathers doc ids and reads grades as numpy
            # arrays, and this costs less here (often on the reading thread, see evaluate) than there
            df = df.rechunk()
            out._df, out.source, out.dropped_duplicates, out._keys, out._light = df, str(path), 0, None, None
        out._layout = lay
        out._unique = True
        return out

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Mapping[str, int]], *, source: str = "<qrels dict>") -> Qrels:
        """From ``{query_id: {doc_id: grade}}`` (the pytrec_eval / ranx shape)."""
        out = cls(_io.frame_from_dict(mapping, "qrels", source), source)
        out._unique = True  # a mapping cannot repeat a (query, doc) pair
        return out

    @classmethod
    def from_frame(
        cls, frame: Any, *, source: str = "<qrels frame>", duplicates: _io.DuplicatePolicy = "error"
    ) -> Qrels:
        """From a pandas or polars frame with query id, doc id and relevance columns."""
        df = _io.frame_from_table(frame, "qrels", source)
        df, dropped = _io.resolve_duplicates(df, "qrels", source, duplicates)
        out = cls(df, source, dropped_duplicates=dropped)
        out._unique = True
        return out

    @classmethod
    def coerce(cls, obj: Any, **kwargs: Any) -> Qrels:
        """Accept a :class:`Qrels`, a path, a dict-of-dicts or a frame."""
        if isinstance(obj, Qrels):
            return obj
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_file(obj, **kwargs)
        if isinstance(obj, Mapping):
            return cls.from_dict(obj)
        return cls.from_frame(obj, **kwargs)

    # access ----------------------------------------------------------------------------------------
    frame = property(lambda self: _frame(self), doc="The judgments as a polars frame (``query_id``, ``doc_id``, ``relevance``).")

    @property
    def query_ids(self) -> list[str]:
        """Judged query ids, sorted byte-wise."""
        return sorted(self.frame["query_id"].unique().to_list())

    def __len__(self) -> int:
        return len(self._light) if self._df is None else self._df.height

    def __repr__(self) -> str:
        n_q = self.frame["query_id"].n_unique()
        return f"Qrels({self.source!r}, {n_q} queries, {len(self)} judgments)"

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, r in self.frame.iter_rows():
            out.setdefault(q, {})[d] = r
        return out

    def map_grades(self, grade_map: GradeMap | Mapping[int, int]) -> Qrels:
        """Qrels with every grade mapped through ``grade_map`` (unmapped grades are an error)."""
        gm = grade_map if isinstance(grade_map, GradeMap) else GradeMap(dict(grade_map))
        return Qrels(gm.apply(self.frame, self.source), self.source)

    def write_trec(self, path: str | os.PathLike[str]) -> None:
        _io.write_trec_qrels(self.frame, path)

    def write_parquet(self, path: str | os.PathLike[str]) -> None:
        self.frame.write_parquet(path)


class Run:
    """A run: a score per (query id, doc id) with a name.

    The rank column of a TREC file is ignored; ranking is decided at evaluation time by the ``ties``
    policy (trec_eval's by default: score descending, then doc id descending).

    >>> r = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9}}, name="bm25")
    >>> r.name, len(r)
    ('bm25', 2)
    """

    __slots__ = ("_df", "name", "source", "dropped_duplicates", "_keys", "_layout", "_light")

    def __init__(self, frame: pl.DataFrame, name: str = "run", source: str = "<run>", *, dropped_duplicates: int = 0) -> None:
        expected = {"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64}
        for col, dtype in expected.items():
            if col not in frame.columns or frame.schema[col] != dtype:
                raise InputError(f"{source}: a Run frame needs column {col!r} of type {dtype}")
        self._df = frame.select(list(expected))
        self.name = name
        self.source = source
        self.dropped_duplicates = dropped_duplicates
        self._keys: np.ndarray | None = None
        self._layout: Layout | None = None
        self._light: Any = None

    keys = property(lambda self: _pair_keys(self), doc="64-bit hash of every (query_id, doc_id) pair, in row order (computed once).")
    layout = property(lambda self: _layout(self), doc="The query segments of the frame (computed once).")

    @staticmethod
    def _tag_name(df: pl.DataFrame) -> str | None:
        """The tag when one non-empty tag is used throughout, else None."""
        if "tag" not in df.columns or df.height == 0:
            return None
        tags = df["tag"]
        first = tags[0]
        if first and tags.null_count() == 0 and bool((tags == first).all()):
            return str(first)
        return None

    @staticmethod
    def _name_from(df: pl.DataFrame | None, path: str | os.PathLike[str] | None, fallback: str, tag: str | None = None) -> str:
        tag = tag if tag is not None or df is None else Run._tag_name(df)
        if tag is not None:
            return tag
        if path is not None:
            name = Path(path).name
            if name.lower().endswith(".gz"):
                name = name[:-3]
            stem = os.path.splitext(name)[0]
            return stem or name
        return fallback

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        name: str | None = None,
        format: str | None = None,
        duplicates: _io.DuplicatePolicy = "error",
    ) -> Run:
        """Read a TREC run (``qid Q0 docid rank score tag``, plain or .gz), CSV/TSV/JSONL with a header, or Parquet.

        The run's name is ``name`` if given, else its tag when one tag is used throughout, else the
        file name without extension.
        """
        _io.check_duplicate_policy(duplicates)
        light = _light_columns(path, "run", format)
        if light is not None:
            out = cls.__new__(cls)
            out._df, out.source, out.dropped_duplicates = None, str(path), 0
            out.name = name or cls._name_from(None, path, "run", light.tag)  # type: ignore[arg-type]
            out._keys, out._layout, out._light = None, None, light
            return out
        df, dropped, lay, tag = _read_checked(path, "run", format, duplicates)
        run_name = name or cls._name_from(df, path, "run", tag)
        if "query_id" in df.columns:
            out = cls(df, run_name, str(path), dropped_duplicates=dropped)
        else:  # read compactly: the layout holds the query ids (see _read_checked)
            out = cls.__new__(cls)
            out._df, out.name, out.source, out.dropped_duplicates, out._keys, out._light = df, run_name, str(path), 0, None, None
        out._layout = lay
        return out

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Mapping[str, float]], *, name: str = "run", source: str = "<run dict>") -> Run:
        """From ``{query_id: {doc_id: score}}`` (the pytrec_eval / ranx shape)."""
        return cls(_io.frame_from_dict(mapping, "run", source), name, source)

    @classmethod
    def from_frame(
        cls, frame: Any, *, name: str | None = None, source: str = "<run frame>", duplicates: _io.DuplicatePolicy = "error"
    ) -> Run:
        """From a pandas or polars frame with query id, doc id and score columns (and optionally a tag)."""
        df = _io.frame_from_table(frame, "run", source)
        df, dropped = _io.resolve_duplicates(df, "run", source, duplicates)
        return cls(df, name or cls._name_from(df, None, "run"), source, dropped_duplicates=dropped)

    @classmethod
    def coerce(cls, obj: Any, *, name: str | None = None, **kwargs: Any) -> Run:
        """Accept a :class:`Run`, a path, a dict-of-dicts or a frame."""
        if isinstance(obj, Run):
            return obj
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_file(obj, name=name, **kwargs)
        if isinstance(obj, Mapping):
            return cls.from_dict(obj, name=name or "run")
        return cls.from_frame(obj, name=name, **kwargs)

    frame = property(lambda self: _frame(self), doc="The run as a polars frame (``query_id``, ``doc_id``, ``score``) in input order.")

    @property
    def query_ids(self) -> list[str]:
        return sorted(self.frame["query_id"].unique().to_list())

    def __len__(self) -> int:
        return len(self._light) if self._df is None else self._df.height

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.frame['query_id'].n_unique()} queries, {len(self)} rows)"

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in self.frame.iter_rows():
            out.setdefault(q, {})[d] = s
        return out

    def with_name(self, name: str) -> Run:
        out = Run.__new__(Run)
        for slot in Run.__slots__:
            setattr(out, slot, getattr(self, slot))
        out.name = name
        return out

    def write_trec(self, path: str | os.PathLike[str], *, ties: str = "trec") -> None:
        """Write in TREC format, ranked by the ``ties`` policy (ranks 1..n per query)."""
        from ._engine import ranked_frame

        _io.write_trec_run(ranked_frame(self.frame, ties), path, self.name)

    def write_parquet(self, path: str | os.PathLike[str]) -> None:
        self.frame.with_columns(pl.lit(self.name).alias("tag")).write_parquet(path)


class GradeMap:
    """A mapping of qrels grades onto another scale (e.g. TREC DL 0–3 onto the 1–5 utility scale).

    >>> GradeMap.parse("trec-dl").mapping
    {3: 5, 2: 4, 1: 3, 0: 2}
    >>> str(GradeMap.parse("3:5,2:4"))
    '3:5,2:4'
    """

    PRESETS: dict[str, dict[int, int]] = {
        "trec-dl": {3: 5, 2: 4, 1: 3, 0: 2},
        "identity": {},
    }

    __slots__ = ("mapping", "name")

    def __init__(self, mapping: Mapping[int, int], name: str | None = None) -> None:
        self.mapping = {int(k): int(v) for k, v in mapping.items()}
        self.name = name

    @classmethod
    def parse(cls, text: str) -> GradeMap:
        text = text.strip()
        if text in cls.PRESETS:
            return cls(cls.PRESETS[text], text)
        mapping: dict[int, int] = {}
        for part in text.split(","):
            if not part.strip():
                continue
            src, sep, dst = part.partition(":")
            try:
                if not sep:
                    raise ValueError
                mapping[int(src)] = int(dst)
            except ValueError:
                raise ConfigError(
                    f"grade map {text!r}: {part.strip()!r} is not of the form FROM:TO with integer grades "
                    f"(or use a preset: {', '.join(cls.PRESETS)})"
                ) from None
        return cls(mapping)

    def __str__(self) -> str:
        if self.name:
            return self.name
        return ",".join(f"{k}:{v}" for k, v in self.mapping.items())

    def describe(self) -> str:
        body = ",".join(f"{k}:{v}" for k, v in self.mapping.items()) or "identity"
        return f"{self.name} ({body})" if self.name and self.mapping else body

    def apply(self, df: pl.DataFrame, source: str) -> pl.DataFrame:
        if not self.mapping:
            return df
        present = set(df["relevance"].unique().to_list())
        unmapped = sorted(present - set(self.mapping))
        if unmapped:
            raise ConfigError(
                f"{source}: grade map {self.describe()} does not map grade(s) {unmapped}; add them to the map"
            )
        return df.with_columns(pl.col("relevance").replace_strict(self.mapping, return_dtype=pl.Int64))
