"""What a set of labels is, on two axes: its scale (what a value says, :class:`Scale`) and its source
(who wrote it, :class:`Source`: people or a data set, or a judge with its :class:`Provenance`), and
the sidecar of judge-written files.

Labels mean different things, and every command must answer within what they can say. The kinds, as
they are named (``--labels``, ``LabelKind(kind, scale)``, the sidecar's ``kind``): the first four name
a scale of labels people or a data set gave; ``judged`` names the other axis, a judge's labels on any
scale but subtopic:

* ``binary``: reference ids (RAGAS's ``reference_context_ids``, a sample's ``reference_ids``, exact-text
  reference contexts) or a 0/1 qrels declared binary. A labelled chunk is relevant (grade >= 1); every
  other chunk is *unlabelled*: not known to be relevant, and not known to be harmful either.
* ``graded``: judgments on a scale, named when it is known: ``rag`` (1-5, RA-nWG: 5 decisive, 4 useful,
  3 partially useful, 2 on topic but useless, 1 a distractor) or ``trec`` (0-3, TREC DL / UMBRELA);
  unnamed scales are read as they are (a grade map puts them on the 1-5 scale).
* ``utility``: per-passage utilities u in [0, 1] (``qid docid u`` lines, ``ctxeval judge utility``).
* ``subtopic``: graded judgments per (query, subtopic, doc), ``qid subtopic docid grade`` lines (the TREC
  Web track's diversity qrels, read by :mod:`.subtopics`); each doc's highest grade is its plain grade.
* ``judged``: labels a model (or the offline heuristic) wrote, on one of the scales above, with their
  :class:`Provenance`: the judge, the model, the task and prompt version, how deep it judged, how many
  pairs it judged and left undecided.

A :class:`LabelKind` travels with the labels: :class:`~ctxeval.Qrels` and :class:`~ctxeval.Samples`
carry one, inferred where it can be (a sample set with ``reference_ids`` is binary, one with ``grades``
graded; a qrels file is graded unless its sidecar says otherwise) and settable explicitly
(``RagConfig(labels="binary")``, ``--labels binary``, ``Qrels.with_labels``).

**The sidecar.** A file of judge-written labels (``judged.qrels``, ``utilities.txt``) carries a JSON
file beside it, ``<file>.labels.json``, that every reader of that file understands
(:func:`read_sidecar`, :func:`write_sidecar`)::

    {"ctxeval_labels": 1, "kind": "judged", "scale": "rag",
     "labelled_by": {"judge": "openai", "model": "qwen2.5-7b", "heuristic": false, "task": "grade",
                     "prompt_version": "grade-v2"},
     "depth": 2, "pairs": 14, "undecided": 3, "runs": ["bm25", "dense"],
     "file": {"name": "judged.qrels", "sha256": "..."}}

``scale``: ``binary``, ``rag``, ``trec``, ``utility`` or null; ``depth``: the top K of each run (or
sample) the judge saw (null: every chunk); ``pairs``: the (query, passage) pairs judged with a label
written; ``undecided``: pairs asked that the judge could not decide; ``ties``: pairs whose votes
split evenly, and ``not_sent``: pairs the budget stopped before they were asked (both written when
any; none of the three has a label); ``runs``: the runs pooled (may be empty); ``file``: the labels file the sidecar describes (its hash tells a sidecar left behind by an
edited file). Unknown keys are ignored, so later versions may add some.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from .._errors import ConfigError, FormatError, InputError
from .._json import fields
from .writers import write_text

__all__ = [
    "GIVEN",
    "KINDS",
    "SCALES",
    "SIDECAR_SUFFIX",
    "LabelKind",
    "Provenance",
    "Scale",
    "Source",
    "check_sidecar",
    "contradiction",
    "of_samples",
    "read_sidecar",
    "sidecar_path",
    "union",
    "write_sidecar",
]

KINDS = ("binary", "graded", "utility", "judged", "subtopic")
#: the named scales and what their values mean
SCALES: dict[str, str] = {
    "binary": "relevant (grade >= 1) or unlabelled",
    "rag": "1-5 (RA-nWG: 5 decisive, 4 useful, 3 partially useful, 2 on topic but useless, 1 distractor)",
    "trec": "0-3 (TREC DL / UMBRELA: 3 perfectly, 2 highly, 1 related, 0 irrelevant)",
    "utility": "u in [0, 1] (1 - P(NO-RESPONSE))",
    "subtopic": "grades per subtopic (qid subtopic docid grade); a doc's plain grade is its highest",
}
SIDECAR_SUFFIX = ".labels.json"
_VERSION = 1


@dataclass(frozen=True)
class Provenance:
    """Who wrote a set of labels and how much of the runs it covers (see the module docstring).

    >>> Provenance("lexical", task="grade", heuristic=True, depth=2, pairs=14, undecided=3).describe()
    'task grade by lexical (a heuristic, not a model), top 2 of each list, 14 pairs judged, 3 undecided'
    """

    judge: str
    model: str | None = None
    heuristic: bool = False
    task: str = "grade"
    prompt_version: str | None = None
    depth: int | None = None  #: the top K of each list the judge saw (None: every chunk)
    pairs: int | None = None  #: pairs judged with a label written
    undecided: int | None = None  #: pairs asked that the judge could not decide (no label)
    runs: tuple[str, ...] = ()  #: the runs pooled
    ties: int | None = None  #: pairs whose votes split evenly (no label)
    not_sent: int | None = None  #: pairs the budget stopped before they were asked (no label)

    def describe(self) -> str:
        who = self.judge + (f" / {self.model}" if self.model and self.model != self.judge else "")
        if self.heuristic:
            who += " (a heuristic, not a model)"
        parts = [f"task {self.task}" + (f" ({self.prompt_version})" if self.prompt_version else "") + f" by {who}"]
        parts.append("every chunk" if self.depth is None else f"top {self.depth} of each list")
        if self.pairs is not None:
            parts.append(f"{self.pairs} pairs judged")
        if self.undecided:
            parts.append(f"{self.undecided} undecided")
        if self.ties:
            parts.append(f"{self.ties} tied")
        if self.not_sent:
            parts.append(f"{self.not_sent} not sent (the budget)")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return fields(self, "judge", "model", "heuristic", "task", "prompt_version")


@dataclass(frozen=True)
class Scale:
    """Axis one of a :class:`LabelKind`: what a label's value says (:data:`SCALES`).

    >>> Scale("trec").kind, Scale("trec").meaning[:3], Scale().kind, Scale("binary").binary
    ('graded', '0-3', 'graded', True)
    """

    #: binary, rag, trec, utility or subtopic; None: grades on a scale of their own, read as they are
    name: str | None = None

    def __post_init__(self) -> None:
        if self.name is not None and self.name not in SCALES:
            raise ConfigError(f"label scale must be one of {', '.join(SCALES)}, got {self.name!r}")

    @property
    def kind(self) -> str:
        """The kind its labels are when people or a data set gave them: ``graded`` for grades (on a
        named scale or not), else the scale's own name."""
        return "graded" if self.name in (None, "rag", "trec") else str(self.name)

    @property
    def binary(self) -> bool:
        """Relevant or unlabelled: no label says a chunk is useless or harmful."""
        return self.name == "binary"

    @property
    def meaning(self) -> str | None:
        return SCALES.get(self.name) if self.name is not None else None

    @classmethod
    def of(cls, kind: str, scale: str | None) -> Scale:
        """The scale a kind and a scale name say together: the scale when named, else the kind's own
        (``binary``, ``utility``, ``subtopic``); graded and judged labels without one are read as they
        are. The subtopic scale belongs to subtopic labels alone."""
        if kind not in KINDS:
            raise ConfigError(f"label kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if scale is not None and scale not in SCALES:
            raise ConfigError(f"label scale must be one of {', '.join(SCALES)}, got {scale!r}")
        if scale is not None and (kind == "subtopic") != (scale == "subtopic"):
            raise ConfigError("the subtopic scale belongs to subtopic labels alone (labels='subtopic')")
        return cls(scale if scale is not None else (kind if kind in ("binary", "utility", "subtopic") else None))


@dataclass(frozen=True)
class Source:
    """Axis two of a :class:`LabelKind`: who wrote the labels. People or a data set (``judged`` false:
    :data:`GIVEN`), or a model or the offline heuristic (``judged``), with its :class:`Provenance`
    when known (a sidecar gives it)."""

    judged: bool = False
    provenance: Provenance | None = None


#: labels given by people or a data set (reference ids, qrels, grades)
GIVEN = Source()


@dataclass(frozen=True, init=False)
class LabelKind:
    """What a set of labels is, on two axes: its :class:`Scale` (what a value says) and its
    :class:`Source` (who wrote it: people or a data set, or a judge with its :class:`Provenance`); where
    that was learnt (``origin``); ``notes``: what a report must say about them (once).

    Built from the axes (``LabelKind(values=Scale("rag"), source=Source(True, provenance))``) or, as
    always, from a kind and a scale: ``kind`` is ``binary``, ``graded``, ``utility``, ``subtopic``
    (people's labels on that scale) or ``judged`` (a judge's, on ``scale``), and :attr:`kind` and
    :attr:`scale` read back the same way.

    >>> LabelKind.coerce("binary").describe()
    'binary (relevant (grade >= 1) or unlabelled; given)'
    >>> LabelKind.coerce("trec").kind, LabelKind.coerce("trec").scale
    ('graded', 'trec')
    >>> LabelKind.coerce("graded:rag").binary, LabelKind.coerce("binary").binary
    (False, True)
    >>> k = LabelKind("judged", "binary", provenance=Provenance("lexical", heuristic=True))
    >>> k.values, k.source.judged, k.kind, k.binary
    (Scale(name='binary'), True, 'judged', True)
    """

    values: Scale  #: axis one: what the values say
    source: Source  #: axis two: who wrote them
    origin: str = "given"
    notes: tuple[str, ...] = field(default=(), compare=False)

    def __init__(
        self,
        kind: str = "graded",
        scale: str | None = None,
        origin: str = "given",
        provenance: Provenance | None = None,
        notes: tuple[str, ...] = (),
        *,
        values: Scale | None = None,
        source: Source | None = None,
    ) -> None:
        object.__setattr__(self, "values", values if values is not None else Scale.of(kind, scale))
        if source is None:
            source = Source(kind == "judged", provenance) if kind == "judged" or provenance is not None else GIVEN
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "notes", notes)

    @property
    def kind(self) -> str:
        """``judged`` for a judge's labels, else the scale's kind (``binary``, ``graded``, ``utility``,
        ``subtopic``)."""
        return "judged" if self.source.judged else self.values.kind

    @property
    def scale(self) -> str | None:
        """The scale's name (None: grades read as they are)."""
        return self.values.name

    @property
    def provenance(self) -> Provenance | None:
        """The judge that wrote the labels, when known (None: given labels, or a judge nobody named)."""
        return self.source.provenance

    @property
    def binary(self) -> bool:
        """Relevant or unlabelled: no label says a chunk is useless or harmful."""
        return self.values.binary

    @property
    def judged(self) -> bool:
        """A model (or the offline heuristic) wrote the labels."""
        return self.source.judged

    @classmethod
    def coerce(cls, value: Any, origin: str = "given") -> LabelKind:
        """A :class:`LabelKind`, or a name: ``binary``, ``graded``, ``utility``, a scale (``rag``,
        ``trec``: graded on it) or ``graded:SCALE``."""
        if isinstance(value, LabelKind):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value, origin)
        if not isinstance(value, str):
            raise ConfigError(
                f"labels must be a label kind name (binary, graded, rag, trec), got {type(value).__name__}"
            )
        text = value.strip().lower()
        kind, _, scale = text.partition(":")
        if kind in SCALES and kind not in KINDS:
            kind, scale = "graded", kind
        if kind not in KINDS or (scale and scale not in SCALES):
            raise ConfigError(
                f"labels {value!r}: expected binary, graded, utility, a scale ({', '.join(s for s in SCALES if s not in KINDS)}) "
                "or graded:SCALE"
            )
        return cls(kind, scale or None, origin)

    def with_origin(self, origin: str) -> LabelKind:
        return replace(self, origin=origin)

    def describe(self) -> str:
        """One line for reports.

        >>> LabelKind("judged", "rag", "sidecar j.qrels.labels.json", Provenance("openai", "m", depth=2)).describe()
        'judged on the rag scale (task grade by openai / m, top 2 of each list; sidecar j.qrels.labels.json)'
        """
        if self.judged:
            what = "judged" + (f" on the {self.scale} scale" if self.scale else "")
            inner = [self.provenance.describe()] if self.provenance is not None else []
            return f"{what} ({'; '.join([*inner, self.origin])})"
        if self.kind == "graded":
            scale = f" on the {self.scale} scale, {self.values.meaning}" if self.scale else ""
            return f"graded{scale} ({self.origin})"
        return f"{self.kind} ({self.values.meaning}; {self.origin})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "scale": self.scale, "origin": self.origin}
        if self.provenance is not None:
            p = self.provenance
            out.update(labelled_by=p.to_dict(), depth=p.depth, pairs=p.pairs, undecided=p.undecided, runs=list(p.runs))
            out.update({k: v for k, v in (("ties", p.ties), ("not_sent", p.not_sent)) if v})
        return out

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], origin: str = "given") -> LabelKind:
        """From the sidecar's fields (``kind``, ``scale``, ``labelled_by``, ``depth``, ``pairs``,
        ``undecided``, ``runs``, ``ties``, ``not_sent``); a :class:`ConfigError` naming the field that is wrong.
        Every sidecar written so far reads so: the kind and the scale give the two axes."""
        kind = doc.get("kind", "graded")
        scale = doc.get("scale")
        by = doc.get("labelled_by")
        prov = None
        if by is not None:
            if not isinstance(by, Mapping) or not isinstance(by.get("judge"), str):
                raise ConfigError("labelled_by must be an object with a judge name")
            prov = Provenance(
                judge=by["judge"],
                model=_opt_str(by.get("model"), "labelled_by.model"),
                heuristic=bool(by.get("heuristic", False)),
                task=str(by.get("task") or "grade"),
                prompt_version=_opt_str(by.get("prompt_version"), "labelled_by.prompt_version"),
                depth=_opt_count(doc.get("depth"), "depth", low=1),
                pairs=_opt_count(doc.get("pairs"), "pairs"),
                undecided=_opt_count(doc.get("undecided"), "undecided"),
                runs=tuple(str(r) for r in doc.get("runs") or ()),
                ties=_opt_count(doc.get("ties"), "ties"),
                not_sent=_opt_count(doc.get("not_sent"), "not_sent"),
            )
        if not isinstance(kind, str) or (scale is not None and not isinstance(scale, str)):
            raise ConfigError("kind and scale must be names")
        return cls(kind, scale, origin, prov)


def _opt_str(v: Any, what: str) -> str | None:
    if v is not None and not isinstance(v, str):
        raise ConfigError(f"{what} must be a text")
    return v


def _opt_count(v: Any, what: str, low: int = 0) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ConfigError(f"{what} must be a whole number >= {low}, got {v!r}")
    return v


def sidecar_path(path: str | os.PathLike[str]) -> Path:
    """Where the sidecar of the labels file ``path`` lives: ``<path>.labels.json``."""
    p = Path(path)
    return p.with_name(p.name + SIDECAR_SUFFIX)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_sidecar(path: str | os.PathLike[str], labels: LabelKind) -> Path:
    """Write the sidecar of the labels file ``path`` (written first: the sidecar records its hash),
    atomically; returns the sidecar's path. ``labels`` is usually
    ``LabelKind("judged", scale, provenance=Provenance(...))``.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "j.qrels").write_text("q1 0 d1 4\\n")
    >>> k = LabelKind("judged", "rag", provenance=Provenance("lexical", heuristic=True, depth=2, pairs=1, undecided=0))
    >>> write_sidecar(d / "j.qrels", k).name
    'j.qrels.labels.json'
    >>> back = read_sidecar(d / "j.qrels")
    >>> back.kind, back.scale, back.provenance.depth, back.provenance.heuristic
    ('judged', 'rag', 2, True)
    """
    target = Path(path)
    if not target.is_file():
        raise InputError(f"{target}: no such file (write the labels before their sidecar)")
    doc = {"ctxeval_labels": _VERSION, **labels.to_dict()}
    doc.pop("origin", None)
    doc["file"] = {"name": target.name, "sha256": _sha256(target)}
    out = sidecar_path(target)
    write_text(out, json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return out


def read_sidecar(path: str | os.PathLike[str]) -> LabelKind | None:
    """The :class:`LabelKind` the sidecar of the labels file ``path`` records, or None when there is
    none. A malformed sidecar is a :class:`~ctxeval.FormatError` naming it; one whose recorded hash no
    longer matches the file is read, with a note saying so."""
    side = sidecar_path(path)
    if not side.is_file():
        return None

    try:
        doc = json.loads(side.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FormatError(str(side), getattr(exc, "lineno", 1), f"not a labels sidecar (invalid JSON: {exc})") from None
    if not isinstance(doc, Mapping) or "ctxeval_labels" not in doc:
        raise FormatError(str(side), 1, "not a labels sidecar (no ctxeval_labels key)")
    try:
        kind = LabelKind.from_dict(doc, origin=f"sidecar {side.name}")
    except ConfigError as exc:
        raise FormatError(str(side), 1, str(exc)) from None
    recorded = (doc.get("file") or {}).get("sha256") if isinstance(doc.get("file"), Mapping) else None
    if isinstance(recorded, str) and recorded != _sha256(Path(path)):
        kind = replace(
            kind,
            notes=(
                f"{side}: the sidecar describes another version of {Path(path).name} (its hash differs): the file "
                "was changed after the judge wrote it; its provenance may no longer hold",
            ),
        )
    return kind


#: per named scale, the values its labels may take (a whole-number grade g, or a utility u)
_SCALE_RANGE: dict[str, tuple[float, float, str]] = {
    "binary": (-math.inf, 1, "at most 1 (1 relevant; 0 or below not)"),
    "trec": (0, 3, "0-3"),
    "rag": (1, 5, "1-5"),
    "utility": (0, 1, "in [0, 1]"),
}


def contradiction(scale: str | None, values: Any) -> str | None:
    """What in ``values`` (the labels' grades or utilities) a declared ``scale`` cannot hold, or None
    when nothing contradicts it: a value outside the scale's range, or a fraction on a scale of whole
    grades.

    >>> contradiction("binary", [0, 1, 3, 5]), contradiction("trec", [0, 3]), contradiction(None, [7])
    ('grades 3, 5, where binary labels are at most 1 (1 relevant; 0 or below not)', None, None)
    >>> contradiction("trec", [-1, 0, 4]), contradiction("rag", [0.25, 1.0])
    ('grades -1, 4, where the trec scale is 0-3', 'grade 0.25, where the rag scale is 1-5')
    """
    if scale is None or scale not in _SCALE_RANGE:
        return None
    low, high, said = _SCALE_RANGE[scale]
    v = np.unique(np.asarray(values, dtype=np.float64))
    bad = v[(v < low) | (v > high) | np.isnan(v) | ((v != np.round(v)) if scale != "utility" else False)]
    if not bad.size:
        return None
    shown = ", ".join(f"{x:g}" for x in bad[:6].tolist()) + (f" and {bad.size - 6} more" if bad.size > 6 else "")
    what = "utilit" + ("ies" if bad.size > 1 else "y") if scale == "utility" else "grade" + "s" * (bad.size > 1)
    where = "binary labels are" if scale == "binary" else f"the {scale} scale is"
    return f"{what} {shown}, where {where} {said}"


def check_sidecar(kind: LabelKind, path: str | os.PathLike[str], values: Any) -> None:
    """A sidecar that contradicts the labels beside it (:func:`contradiction`) is an
    :class:`~ctxeval.InputError` naming both, and saying so when the file changed after the sidecar
    was written."""
    bad = contradiction(kind.scale, values)
    if bad is None:
        return
    edited = "; its recorded hash differs: the file was changed after the sidecar was written" if kind.notes else ""
    raise InputError(
        f"{sidecar_path(path)}: the sidecar says {Path(path).name} holds {kind.kind} labels on the {kind.scale} "
        f"scale, but {path} holds {bad}{edited}. The sidecar contradicts its labels: correct or remove it, or say "
        "what the labels are (--labels KIND, labels=...)"
    )


def of_samples(source: str, graded: int, refs: int, texts: int, grades: Any = ()) -> LabelKind:
    """The kind of a sample set's references from how many samples give ``grades`` (``graded``),
    ``reference_ids`` (``refs``) and only ``reference_contexts`` matched by exact text (``texts``).

    >>> of_samples("s.jsonl", 0, 42, 0).describe()
    'binary (relevant (grade >= 1) or unlabelled; reference_ids in s.jsonl)'
    >>> k = of_samples("s.jsonl", 3, 2, 0)
    >>> k.kind, len(k.notes)
    ('graded', 1)

    Grades within 1-5 that use 4 or 5 (``grades``: the distinct values given) are read as the 1-5 scale
    (``rag``): no other common scale has them without a 0.

    >>> of_samples("s.jsonl", 3, 0, 0, {1, 2, 5}).scale, of_samples("s.jsonl", 3, 0, 0, {0, 1, 3}).scale
    ('rag', None)
    """
    if graded:
        notes: tuple[str, ...] = ()
        if refs or texts:
            notes = (
                f"{source}: {graded} samples give grades and {refs + texts} only reference ids or contexts: the "
                "references are read as grade 1 on the grades' scale (on the 1-5 scale a distractor); give grades "
                "everywhere, or reference ids everywhere (binary labels)",
            )
        values = set(grades)
        scale = "rag" if values and values <= {1, 2, 3, 4, 5} and max(values) >= 4 and not notes else None
        return LabelKind("graded", scale, f"grades in {source}", notes=notes)
    if refs and texts:
        return LabelKind("binary", None, f"reference_ids and exact-text reference_contexts in {source}")
    if texts:
        return LabelKind("binary", None, f"reference_contexts in {source}, matched by exact text")
    return LabelKind("binary", None, f"reference_ids in {source}" if refs else f"no references in {source}")


def union(kinds: list[LabelKind]) -> LabelKind:
    """The kind of several label sets read together (sample sets compared): the one kind when they
    agree; graded (with a note) when binary and graded sets meet."""
    first = kinds[0]
    if all(k.kind == first.kind and k.scale == first.scale for k in kinds):
        origins = list(dict.fromkeys(k.origin for k in kinds))
        notes = tuple(dict.fromkeys(n for k in kinds for n in k.notes))
        return replace(first, origin="; ".join(origins), notes=notes)
    described = "; ".join(dict.fromkeys(k.describe() for k in kinds))
    return LabelKind(
        "graded",
        None,
        "mixed label sets",
        notes=(
            f"the label sets differ in kind ({described}): read as graded, so reference ids are grade 1 there; "
            "give every set the same kind of references",
        ),
    )
