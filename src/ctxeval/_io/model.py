"""The data model: :class:`Qrels` (judgments) and :class:`Run` (a scored result list with a name).

Both hold core :class:`~ctxeval._core.columns.Columns` (rows grouped by query, ids behind an
``Ids`` column, values in numpy), read by any registered format (:mod:`.read`) or built from a
mapping or a frame; nothing else is hidden inside. ``frame`` gives a polars frame of the rows in input
order, for users.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.columns import Columns, Layout
from .._core.grademap import GradeMap
from .._core.ids import ArrayIds
from .._core.ranking import score_key, segment_order, tie_memo
from .._core.segments import segment_rows
from .._errors import ConfigError
from .._policies import Policies
from . import tables, writers
from .frames import frame_of
from .read import check_duplicate_policy, read_file, resolve_duplicates
from .trec import Kind

if TYPE_CHECKING:
    import polars as pl

    from .labels import LabelKind
    from .subtopics import SubtopicJudgments

__all__ = ["Qrels", "Run"]


def split_named(arg: str) -> tuple[str | None, str]:
    """``"NAME=PATH"`` -> (NAME, PATH) when PATH is a file and ``arg`` itself is not; else (None, arg).

    >>> split_named("no-such=file")
    (None, 'no-such=file')
    """
    name, sep, path = arg.partition("=")
    if sep and name and not os.path.exists(arg) and os.path.exists(path):
        return name, path
    return None, arg


def _is_subtopic(labels: Any) -> bool:
    """Whether ``labels`` declares subtopic qrels."""
    if labels is None:
        return False
    from .labels import LabelKind

    return LabelKind.coerce(labels).kind == "subtopic"


def _stem(path: str | os.PathLike[str]) -> str:
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    return os.path.splitext(name)[0] or name


class _Rows:
    """What judgments and runs share: core columns, a source, the rows a duplicate policy dropped."""

    __slots__ = ("columns", "dropped_duplicates", "source")
    _kind: Kind
    _value: str

    columns: Columns
    source: str
    dropped_duplicates: int

    @property
    def frame(self) -> pl.DataFrame:
        """The rows as a polars frame (``query_id``, ``doc_id`` and ``relevance`` or ``score``) in input order."""
        return frame_of(self.columns, self._value)

    @property
    def query_ids(self) -> list[str]:
        """The query ids, sorted byte-wise."""
        return sorted(self.columns.layout.heads.tolist())

    def __len__(self) -> int:
        return len(self.columns)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for q, d, v in self.frame.iter_rows():
            out.setdefault(q, {})[d] = v
        return out

    @classmethod
    def _of_mapping(cls, mapping: Mapping[str, Mapping[str, Any]], source: str, duplicates: str) -> tuple[Columns, int]:
        return resolve_duplicates(tables.from_mapping(mapping, cls._kind, source), cls._kind, source, duplicates)

    @classmethod
    def _of_frame(
        cls, frame: Any, source: str, duplicates: str, plain: bool = False, renames: Mapping[str, str] | None = None
    ) -> tuple[Columns, int, str | None]:
        check_duplicate_policy(duplicates)
        cols, tag = tables.from_table(frame, cls._kind, source, renames=renames or None, plain=plain)
        cols, dropped = resolve_duplicates(cols, cls._kind, f"{source} (row)", duplicates)
        return cols, dropped, tag


class Qrels(_Rows):
    """Relevance judgments: one integer grade per (query id, doc id); grades may be negative.

    ``labels`` (a :class:`~ctxeval.LabelKind`) says what the grades are: ``graded`` unless
    told otherwise (``labels="binary"`` for reference ids, ``"trec"`` for TREC's 0-3 ...), a file's
    sidecar (``<file>.labels.json``, written by the judge) or the sample set the judgments came from.

    >>> q = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}})
    >>> len(q), q.query_ids, q.labels.kind
    (2, ['q1'], 'graded')
    >>> Qrels.from_dict({"q1": {"d1": 1}}, labels="binary").labels.binary
    True
    """

    __slots__ = ("_labels", "_origin", "subtopics")
    _kind = "qrels"
    _value = "relevance"

    def __init__(
        self,
        columns: Columns,
        source: str = "<qrels>",
        *,
        dropped_duplicates: int = 0,
        labels: LabelKind | str | None = None,
        subtopics: SubtopicJudgments | None = None,
    ) -> None:
        if not isinstance(columns, Columns):
            raise ConfigError("Qrels holds core Columns; build one with Qrels.from_file, from_dict or from_frame")
        self.columns = columns
        self.source = source
        self.dropped_duplicates = dropped_duplicates
        self._labels = labels  # built on first use: plain TREC files never import the label kinds
        self._origin = "assumed"
        #: the judgments by subtopic of subtopic qrels (``labels="subtopic"``), which the diversity
        #: measures read; None for other qrels
        self.subtopics = subtopics

    @property
    def labels(self) -> LabelKind:
        """What the grades are (a :class:`~ctxeval.LabelKind`); graded when nothing says otherwise."""
        from .labels import LabelKind

        if not isinstance(self._labels, LabelKind):
            given = self._labels
            self._labels = LabelKind.coerce(given) if given is not None else LabelKind("graded", None, self._origin)
        return self._labels

    @property
    def plain(self) -> bool:
        """Nothing said what the grades are (no ``labels``, no sidecar, not from a sample set): graded,
        read as they are."""
        return self._labels is None or (
            not isinstance(self._labels, str)
            and self._labels.kind == "graded"
            and self._labels.scale is None
            and self._labels.origin == self._origin
        )

    def with_labels(self, labels: LabelKind | str) -> Qrels:
        """The same judgments, declared to be of another kind (e.g. ``"binary"`` for reference ids)."""
        out = Qrels(self.columns, self.source, dropped_duplicates=self.dropped_duplicates, labels=labels)
        out.subtopics = self.subtopics
        return out

    def on(self, columns: Columns) -> Qrels:
        """Other judgments (a block of these judgments' queries, read elsewhere) as the same kind of
        labels, from the same source: what an engine joins a block of a run with."""
        out = Qrels(columns, self.source, labels=self._labels, subtopics=self.subtopics)
        out._origin = self._origin
        return out

    def queries(self, qids: Iterable[str]) -> Qrels:
        """These judgments of the queries ``qids`` alone (see :meth:`on`)."""
        heads = self.columns.layout.heads
        keep = np.isin(heads, np.asarray(list(qids), dtype=str))
        rows = np.flatnonzero(np.repeat(keep, self.columns.layout.lengths))
        return self.on(self.columns.take(rows))

    # construction ---------------------------------------------------------------------------------
    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        format: str | None = None,
        duplicates: str = "error",
        columns: Any = None,
        labels: LabelKind | str | None = None,
    ) -> Qrels:
        """Read TREC qrels (``qid iter docid grade``; plain, gzip, bzip2 or xz; a path, ``-`` or a pipe), CSV/TSV/JSONL with a header, or Parquet.
        ``columns``: which columns hold what, for names the reader does not know (see :class:`Policies`).
        ``labels``: what the grades are; default: the file's sidecar (judge-written labels), else graded.
        ``labels="subtopic"`` reads ``qid subtopic docid grade`` lines (TREC text; see :mod:`.subtopics`)."""
        if _is_subtopic(labels):
            if format not in (None, "trec") or columns is not None:
                raise ConfigError(f"{path}: subtopic qrels are read from TREC text (qid subtopic docid grade) only")
            from .subtopics import read_subtopic_qrels

            return cls.from_subtopics(read_subtopic_qrels(path, duplicates), labels)
        read = read_file(path, "qrels", format, duplicates, Policies(columns=columns).renames("qrels"))
        kind = labels
        if kind is None and os.path.isfile(f"{os.fspath(path)}.labels.json"):  # a judge's sidecar
            from .labels import check_sidecar, read_sidecar

            kind = read_sidecar(path)
            if kind is not None:
                check_sidecar(kind, path, read.columns.values)
        out = cls(read.columns, str(path), dropped_duplicates=read.dropped, labels=kind)
        out._origin = f"qrels file {Path(path).name}"
        return out

    @classmethod
    def from_subtopics(cls, judgments: Any, labels: LabelKind | str | None = "subtopic") -> Qrels:
        """Subtopic qrels: a :class:`~ctxeval._io.subtopics.SubtopicJudgments` or ``(qid, subtopic,
        docid, grade)`` tuples; each doc's plain grade is its highest over the subtopics.

        >>> q = Qrels.from_subtopics([("q1", "1", "a", 1), ("q1", "2", "a", 0), ("q1", "2", "b", 2)])
        >>> q.to_dict(), q.labels.kind, q.subtopics.n_judgments
        ({'q1': {'b': 2, 'a': 1}}, 'subtopic', 3)
        """
        from .subtopics import SubtopicJudgments, subtopic_records

        sub = judgments if isinstance(judgments, SubtopicJudgments) else subtopic_records(judgments)
        out = cls(sub.docs, sub.source, dropped_duplicates=sub.dropped, labels=labels or "subtopic", subtopics=sub)
        out._origin = f"subtopic qrels {Path(sub.source).name}"
        return out

    @classmethod
    def from_dict(
        cls,
        mapping: Mapping[str, Mapping[str, int]],
        *,
        source: str = "<qrels dict>",
        duplicates: str = "error",
        labels: LabelKind | str | None = None,
    ) -> Qrels:
        """From ``{query_id: {doc_id: grade}}`` (the pytrec_eval / ranx shape)."""
        cols, dropped = cls._of_mapping(mapping, source, duplicates)
        return cls(cols, source, dropped_duplicates=dropped, labels=labels)

    @classmethod
    def from_frame(
        cls,
        frame: Any,
        *,
        source: str = "<qrels frame>",
        duplicates: str = "error",
        labels: LabelKind | str | None = None,
        columns: Any = None,
    ) -> Qrels:
        """From a pandas or polars frame with query id, doc id and relevance columns (``columns``:
        which columns hold what, as for :meth:`from_file`)."""
        cols, dropped, _ = cls._of_frame(frame, source, duplicates, renames=Policies(columns=columns).renames("qrels"))
        return cls(cols, source, dropped_duplicates=dropped, labels=labels)

    @classmethod
    def coerce(
        cls, obj: Any, *, duplicates: str = "error", columns: Any = None, labels: LabelKind | str | None = None
    ) -> Qrels:
        """Accept a :class:`Qrels`, a path, a dict-of-dicts or a frame (``columns`` names a frame's or
        a file's columns; ``labels``: what the grades are, see :class:`Qrels`)."""
        if isinstance(obj, Qrels):
            return obj if labels is None else obj.with_labels(labels)
        if _is_subtopic(labels) and not isinstance(obj, (str, os.PathLike)):
            return cls.from_subtopics(obj, labels)
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_file(obj, duplicates=duplicates, columns=columns, labels=labels)
        if isinstance(obj, Mapping):
            return cls.from_dict(obj, duplicates=duplicates, labels=labels)
        return cls.from_frame(obj, duplicates=duplicates, labels=labels, columns=columns)

    def __repr__(self) -> str:
        return f"Qrels({self.source!r}, {self.columns.layout.n_segments} queries, {len(self)} judgments)"

    def map_grades(self, grade_map: GradeMap | Mapping[int, int] | str) -> Qrels:
        """Qrels with every grade mapped through ``grade_map`` (unmapped grades are an error)."""
        gm = GradeMap.coerce(grade_map)
        if gm is None:
            raise ConfigError("map_grades needs a grade map")
        bad = gm.unmapped(self.columns.values)
        if bad:
            raise ConfigError(
                f"{self.source}: grade map {gm.describe()} does not map grade(s) {bad}; add them to the map"
            )
        c = self.columns
        return Qrels(Columns(c.layout, c.doc, gm.apply(c.values), c.source_rows), self.source, labels=self._labels)

    def write_trec(self, path: str | os.PathLike[str]) -> None:
        writers.write_trec_qrels(self.frame, path)

    def write_parquet(self, path: str | os.PathLike[str]) -> None:
        writers.write_parquet(self.frame, path)


class Run(_Rows):
    """A run: a score per (query id, doc id) with a name.

    The rank column of a TREC file is ignored; ranking is decided at evaluation time by the ``ties``
    policy (trec_eval's by default: score descending, then doc id descending).

    >>> r = Run.from_dict({"q1": {"d1": 0.5, "d2": 0.9}}, name="bm25")
    >>> r.name, len(r)
    ('bm25', 2)
    """

    __slots__ = ("name", "samples")
    _kind = "run"
    _value = "score"

    def __init__(
        self,
        columns: Columns,
        name: str = "run",
        source: str = "<run>",
        *,
        dropped_duplicates: int = 0,
        samples: Any = None,
    ) -> None:
        if not isinstance(columns, Columns):
            raise ConfigError("Run holds core Columns; build one with Run.from_file, from_dict or from_frame")
        self.columns = columns
        self.name = name
        self.source = source
        self.dropped_duplicates = dropped_duplicates
        #: the sample set the run was read from (:meth:`Samples.run`): its facets, citations, nuggets,
        #: texts and pools serve the measures that read them, in every verb
        self.samples = samples

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        name: str | None = None,
        format: str | None = None,
        duplicates: str = "error",
        columns: Any = None,
    ) -> Run:
        """Read a TREC run (``qid Q0 docid rank score tag``; plain, gzip, bzip2 or xz; a path, ``-`` or a pipe), CSV/TSV/JSONL with a header, or Parquet.

        The run's name is ``name`` if given, else its tag when one tag is used throughout, else the
        file name without extension. ``columns``: as for :meth:`Qrels.from_file`.
        """
        read = read_file(path, "run", format, duplicates, Policies(columns=columns).renames("run"))
        return cls(read.columns, name or read.tag or _stem(path), str(path), dropped_duplicates=read.dropped)

    @classmethod
    def from_dict(
        cls,
        mapping: Mapping[str, Mapping[str, float]],
        *,
        name: str = "run",
        source: str = "<run dict>",
        duplicates: str = "error",
    ) -> Run:
        """From ``{query_id: {doc_id: score}}`` (the pytrec_eval / ranx shape)."""
        cols, dropped = cls._of_mapping(mapping, source, duplicates)
        return cls(cols, name, source, dropped_duplicates=dropped)

    @classmethod
    def from_frame(
        cls,
        frame: Any,
        *,
        name: str | None = None,
        source: str = "<run frame>",
        duplicates: str = "error",
        columns: Any = None,
    ) -> Run:
        """From a pandas or polars frame with query id, doc id and score columns (and optionally a tag;
        ``columns``: which columns hold what, as for :meth:`from_file`)."""
        cols, dropped, tag = cls._of_frame(frame, source, duplicates, renames=Policies(columns=columns).renames("run"))
        return cls(cols, name or tag or "run", source, dropped_duplicates=dropped)

    @classmethod
    def coerce(cls, obj: Any, *, name: str | None = None, duplicates: str = "error", columns: Any = None) -> Run:
        """Accept a :class:`Run`, a path, ``"NAME=PATH"`` (a path named NAME), a dict-of-dicts or a frame."""
        if isinstance(obj, Run):
            return obj
        if isinstance(obj, str) and name is None:
            given, path = split_named(obj)
            if given is not None:
                return cls.from_file(path, name=given, duplicates=duplicates, columns=columns)
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_file(obj, name=name, duplicates=duplicates, columns=columns)
        if isinstance(obj, Mapping):
            return cls.from_dict(obj, name=name or "run", duplicates=duplicates)
        return cls.from_frame(obj, name=name, duplicates=duplicates, columns=columns)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {self.columns.layout.n_segments} queries, {len(self)} rows)"

    @classmethod
    def empty(cls, name: str = "run", source: str = "<run>") -> Run:
        """A run without rows (every judged query missing from it)."""
        cols = Columns(
            Layout(np.zeros(0, dtype="U1"), np.zeros(0, dtype=np.int64), 0),
            ArrayIds(np.zeros(0, dtype="S1")),
            np.zeros(0),
        )
        return cls(cols, name, source)

    def with_name(self, name: str) -> Run:
        return Run(self.columns, name, self.source, dropped_duplicates=self.dropped_duplicates, samples=self.samples)

    def with_samples(self, samples: Any) -> Run:
        """The same run, linked to the sample set it came from (the one link a provider follows)."""
        return Run(self.columns, self.name, self.source, dropped_duplicates=self.dropped_duplicates, samples=samples)

    def ranked_rows(self, ties: str = "trec") -> np.ndarray:
        """Every row in rank order: queries by id ascending, then the ``ties`` rule within each."""
        c = self.columns
        lay = c.layout
        order = segment_order(
            score_key(c.values, ties),
            c.doc,
            lay.starts,
            lay.lengths,
            ties,
            c.memo.get(memo) if (memo := tie_memo(ties)) else None,
        )
        segs = np.argsort(lay.heads, kind="stable")

        rows = segment_rows(lay.starts[segs], lay.lengths[segs])
        return order.rows(lay.n_rows)[rows]

    def write_trec(self, path: str | os.PathLike[str], *, ties: str = "trec") -> None:
        """Write in TREC format, ranked by the ``ties`` policy (ranks 1..n per query)."""
        c = self.columns
        rows = self.ranked_rows(ties)
        q = c.query_of_rows()[rows]
        writers.write_trec_run(q.tolist(), c.doc.to_list(rows), c.values[rows].tolist(), path, self.name)

    def write_parquet(self, path: str | os.PathLike[str]) -> None:
        import polars as pl

        writers.write_parquet(self.frame.with_columns(pl.lit(self.name).alias("tag")), path)
