"""LabelKind as two frozen axes (issue 31, point 5): its Scale (what a value says) and its Source (who
wrote it: people or a data set, or a judge with its provenance). Every kind and scale spelt as before
reads the same (kind, scale, binary reading, judged), checked against the one-axis rules it replaces;
every pair of axes goes through the sidecar and back; sidecars written before still read."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ctxeval import ConfigError, LabelKind
from ctxeval._io.labels import GIVEN, KINDS, SCALES, Provenance, Scale, Source, read_sidecar, sidecar_path

PROV = Provenance("openai", "qwen2.5-7b", task="grade", prompt_version="grade-v2", depth=2, pairs=14, undecided=3)


def _one_axis(kind: str, scale: str | None) -> tuple[str, str | None, bool, bool]:
    """The rules LabelKind followed with one axis (kind, scale): (kind, scale, binary, judged), or a
    ConfigError where it refused the pair."""
    if kind == "binary" and scale is None:
        scale = "binary"
    if kind == "utility" and scale is None:
        scale = "utility"
    if (kind == "subtopic") != (scale == "subtopic") and scale is not None:
        raise ConfigError("the subtopic scale belongs to subtopic labels alone")
    if kind == "subtopic":
        scale = "subtopic"
    return kind, scale, scale == "binary", kind == "judged"


def _refused(kind: str, scale: str | None) -> bool:
    try:
        _one_axis(kind, scale)
    except ConfigError:
        return True
    return False


SPELLINGS = [(k, s) for k in KINDS for s in (None, *SCALES)]
REFUSED = [p for p in SPELLINGS if _refused(*p)]
READ = [p for p in SPELLINGS if not _refused(*p)]


@pytest.mark.parametrize(("kind", "scale"), REFUSED, ids=[f"{k}:{s}" for k, s in REFUSED])
def test_every_spelling_refused_before_is_refused(kind: str, scale: str | None) -> None:
    with pytest.raises(ConfigError, match="subtopic scale belongs to subtopic labels alone"):
        LabelKind(kind, scale)


@pytest.mark.parametrize(("kind", "scale"), READ, ids=[f"{k}:{s}" for k, s in READ])
def test_every_spelling_reads_as_before(kind: str, scale: str | None) -> None:
    want = _one_axis(kind, scale)
    k = LabelKind(kind, scale, "o", PROV if kind == "judged" else None)
    got = (k.kind, k.scale, k.binary, k.judged)
    coherent = kind == "judged" or scale in (None, kind) or (kind == "graded" and scale in ("rag", "trec"))
    if coherent:
        assert got == want
    else:  # a kind and a scale that say two things (binary:rag, graded:binary): the named scale is the axis,
        # the same binary reading as before (only the kind reported follows the scale)
        assert (k.scale, k.binary, k.judged, k.kind) == (scale, want[2], want[3], Scale(scale).kind)
    assert k.values == Scale(k.scale) and k.source == (Source(True, k.provenance) if want[3] else GIVEN)
    assert LabelKind.from_dict(k.to_dict(), "o") == k  # the sidecar's fields give the same kind


AXES = [
    (Scale(s), src)
    for s in (None, "binary", "rag", "trec", "utility")
    for src in (GIVEN, Source(True), Source(True, PROV))
]


@pytest.mark.parametrize(("values", "source"), AXES)
def test_the_axes_go_through_the_sidecar_fields_and_back(values: Scale, source: Source) -> None:
    k = LabelKind(values=values, source=source, origin="o")
    assert (k.values, k.source, k.provenance) == (values, source, source.provenance)
    assert k.kind == ("judged" if source.judged else values.kind) and k.binary == (values.name == "binary")
    back = LabelKind.from_dict(k.to_dict(), "o")
    assert back == k and back.describe() == k.describe()
    assert LabelKind(k.kind, k.scale, "o", k.provenance) == k  # the same kind spelt by kind and scale


def test_the_axes_are_frozen_and_replaced_whole() -> None:
    k = LabelKind("judged", "rag", "sidecar", PROV)
    for obj, name in ((k, "values"), (k.values, "name"), (k.source, "judged")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, name, None)
    assert dataclasses.replace(k, origin="merged") == LabelKind("judged", "rag", "merged", PROV)
    trec = dataclasses.replace(k, values=Scale("trec"))
    assert (trec.kind, trec.scale, trec.provenance) == ("judged", "trec", PROV)
    assert (dataclasses.replace(k, source=GIVEN).kind, k.with_origin("x").origin) == ("graded", "x")


#: sidecars as ctxeval wrote them before the axes (file name -> the document), and what each reads as:
#: (kind, scale, binary, judge, pairs)
OLD_SIDECARS = {
    "graded.qrels": (
        {"ctxeval_labels": 1, "kind": "judged", "scale": "rag",
         "labelled_by": {"judge": "openai", "model": "qwen2.5-7b", "heuristic": False, "task": "grade",
                         "prompt_version": "grade-v2"},
         "depth": 2, "pairs": 14, "undecided": 3, "runs": ["bm25", "dense"]},
        ("judged", "rag", False, "openai", 14),
    ),
    "utilities.txt": (
        {"ctxeval_labels": 1, "kind": "judged", "scale": "utility", "ties": 2, "not_sent": 5, "later_key": [1],
         "labelled_by": {"judge": "lexical", "model": None, "heuristic": True, "task": "utility", "prompt_version": None},
         "depth": None, "pairs": 9, "undecided": 0, "runs": []},
        ("judged", "utility", False, "lexical", 9),
    ),
    "relevance.qrels": (
        {"ctxeval_labels": 1, "kind": "judged", "scale": "binary",
         "labelled_by": {"judge": "llama.cpp", "model": "SmolLM2-135M", "heuristic": False, "task": "relevance"}},
        ("judged", "binary", True, "llama.cpp", None),
    ),
    "people.qrels": ({"ctxeval_labels": 1, "kind": "graded", "scale": "trec"}, ("graded", "trec", False, None, None)),
    "bare.qrels": ({"ctxeval_labels": 1, "kind": "judged", "scale": None}, ("judged", None, False, None, None)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(OLD_SIDECARS))
def test_sidecars_written_before_still_read(tmp_path: Path, name: str) -> None:
    doc, (kind, scale, binary, judge, pairs) = OLD_SIDECARS[name]
    labels = tmp_path / name
    labels.write_text("q1 d1 0.5\n" if name.endswith(".txt") else "q1 0 d1 1\n")
    sidecar_path(labels).write_text(json.dumps(doc))
    k = read_sidecar(labels)
    assert k is not None and (k.kind, k.scale, k.binary) == (kind, scale, binary)
    assert k.source.judged == (kind == "judged") and k.values == Scale(scale)
    assert (k.provenance.judge if k.provenance else None, k.provenance.pairs if k.provenance else None) == (
        judge,
        pairs,
    )
    assert k.origin == f"sidecar {sidecar_path(labels).name}"
