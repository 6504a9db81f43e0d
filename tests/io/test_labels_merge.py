"""Judged label files merged with their provenance (issue 29, point 13): ``ctxeval labels merge`` /
``ctxeval.merge_labels`` write the union of the labels and one sidecar for it, refuse files that
disagree or come from different judges, and give the same bytes whatever the order of the files and
their lines. The RAG guide's recipe used ``sort -u``, which dropped the sidecars: the verdicts then
read as if nobody's labels were a heuristic's; now they carry a caveat where the provenance is unknown."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval._cli import cli
from ctxeval._io.labels import LabelKind, Provenance, read_sidecar, write_sidecar
from scenario import planted


def _judged(tmp: Path, name: str, lines: list[str], **prov: object) -> Path:
    p = tmp / name
    p.write_text("".join(lines))
    base = {"judge": "openai", "model": "m", "task": "utility", "depth": None, "pairs": len(lines), "undecided": 0}
    write_sidecar(p, LabelKind("judged", prov.pop("scale", "utility"), provenance=Provenance(**{**base, **prov})))
    return p


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The RAG guide's walk: two pipelines' sample sets, each judged by the lexical judge."""
    folder = tmp_path_factory.mktemp("walk")
    files = planted.write(planted.make(), folder)
    for name, src in (("bm25", "refs_weak.jsonl"), ("dense", "refs_good.jsonl")):
        (folder / f"{name}.jsonl").write_bytes(files[src].read_bytes())
        res = CliRunner().invoke(
            cli,
            ["judge", "utility", "--samples", str(folder / f"{name}.jsonl"), "--judge", "lexical",
             "--cache", str(folder / "j.sqlite"), "-q", "-o", str(folder / f"{name}.u")],
        )  # fmt: skip
        assert res.exit_code == 0, res.output
    return folder


def _lines(p: Path) -> set[tuple[str, str, float]]:
    return {(q, d, float(u)) for q, d, u in (ln.split() for ln in p.read_text().splitlines())}


def test_merge_keeps_the_labels_of_sort_u_and_the_judges_provenance(walk: Path, tmp_path: Path) -> None:
    out = tmp_path / "utilities.txt"
    res = CliRunner().invoke(cli, ["labels", "merge", str(walk / "bm25.u"), str(walk / "dense.u"), "-o", str(out)])
    assert res.exit_code == 0, res.output
    union = _lines(walk / "bm25.u") | _lines(walk / "dense.u")  # what sort -u keeps
    assert _lines(out) == union and len(out.read_text().splitlines()) == len(union) == 412
    kind = read_sidecar(out)
    a, b = read_sidecar(walk / "bm25.u"), read_sidecar(walk / "dense.u")
    assert kind is not None and kind.provenance is not None and a is not None and b is not None
    assert (kind.kind, kind.scale) == ("judged", "utility") and not kind.notes  # its hash is the merged file's
    p = kind.provenance
    assert (p.judge, p.model, p.heuristic, p.task, p.prompt_version) == (
        a.provenance.judge, a.provenance.model, True, "utility", b.provenance.prompt_version)  # fmt: skip
    assert p.pairs == 412 and p.undecided == a.provenance.undecided + b.provenance.undecided
    # the sort -u file: the same labels, no sidecar
    bare = tmp_path / "sorted.txt"
    bare.write_text("".join(f"{q} {d} {u:g}\n" for q, d, u in sorted(union)))
    merged = ctxeval.distraction_table(samples={"bm25": walk / "bm25.jsonl", "dense": walk / "dense.jsonl"}, k=3,
                                       utility={"utilities": str(out)})  # fmt: skip
    plain = ctxeval.distraction_table(samples={"bm25": walk / "bm25.jsonl", "dense": walk / "dense.jsonl"}, k=3,
                                      utility={"utilities": str(bare)})  # fmt: skip
    assert [r["verdict"] for r in merged["rows"]] == [r["verdict"] for r in plain["rows"]] == ["DANGEROUS", "SAFE"]
    assert any("a word-overlap heuristic: a first look, not a verdict" in n for n in merged["notes"])
    assert not any("unknown provenance" in n for n in merged["notes"])
    assert any("sorted.txt has no sidecar" in n and "unknown provenance" in n for n in plain["notes"])


def test_the_same_bytes_whatever_the_order_of_files_and_lines(tmp_path: Path) -> None:
    rng = random.Random(7)
    rows_a = [f"q{i % 7} d{i} {rng.random():.3f}\n" for i in range(60)]
    rows_b = [*rows_a[40:], *(f"q{i % 5} e{i} {rng.random():.3f}\n" for i in range(30))]
    a = _judged(tmp_path, "a.u", rows_a, runs=("a",), depth=5)
    b = _judged(tmp_path, "b.u", rows_b, runs=("b", "a"), depth=3, undecided=2)
    one = merge_labels_bytes([a, b], tmp_path / "ab.u")
    shuffled_a = _judged(tmp_path, "a2.u", rng.sample(rows_a, len(rows_a)), runs=("a",), depth=5)
    shuffled_b = _judged(tmp_path, "b2.u", rng.sample(rows_b, len(rows_b)), runs=("b", "a"), depth=3, undecided=2)
    assert merge_labels_bytes([shuffled_b, shuffled_a], tmp_path / "ba.u") == one
    k = read_sidecar(tmp_path / "ab.u")
    assert k is not None and k.provenance is not None
    assert (k.provenance.depth, k.provenance.pairs, k.provenance.undecided) == (3, 90, 2)
    assert set(k.provenance.runs) == {"a", "b"}


def merge_labels_bytes(files: list[Path], out: Path) -> bytes:
    m = ctxeval.merge_labels(files, out)
    assert m.pairs == len(out.read_text().splitlines())
    return out.read_bytes()


def test_judged_grades_merge_as_qrels(tmp_path: Path) -> None:
    a = _judged(tmp_path, "a.qrels", ["q1 0 d1 5\n", "q1 0 d2 1\n"], task="grade", scale="rag")
    b = _judged(tmp_path, "b.qrels", ["q2 0 d3 4\n", "q1 0 d2 1\n"], task="grade", scale="rag")
    ctxeval.merge_labels([a, b], tmp_path / "ab.qrels")
    assert (tmp_path / "ab.qrels").read_text() == "q1 0 d1 5\nq1 0 d2 1\nq2 0 d3 4\n"
    q = ctxeval.Qrels.from_file(tmp_path / "ab.qrels")
    assert q.labels.judged and q.labels.scale == "rag" and len(q) == 3


def test_disagreeing_files_are_refused_naming_both_lines(tmp_path: Path) -> None:
    a = _judged(tmp_path, "a.u", ["q1 d1 0.9\n", "q1 d2 0.2\n"])
    b = _judged(tmp_path, "b.u", ["q1 d3 0.5\n", "q1 d2 0.7\n"])
    with pytest.raises(
        ctxeval.InputError, match=r"a\.u:2 and .*b\.u:2: query 'q1', passage 'd2' labelled 0\.2 and 0\.7"
    ):
        ctxeval.merge_labels([a, b], tmp_path / "out.u")
    assert not (tmp_path / "out.u").exists()


@pytest.mark.parametrize(("field", "value"), [("model", "other"), ("heuristic", True), ("prompt_version", "v9")])
def test_labels_of_another_judge_are_refused_naming_the_field(tmp_path: Path, field: str, value: object) -> None:
    a = _judged(tmp_path, "a.u", ["q1 d1 0.9\n"])
    b = _judged(tmp_path, "b.u", ["q1 d2 0.5\n"], **{field: value})
    with pytest.raises(ctxeval.InputError, match=rf"b\.u: written by another judge than .*a\.u \({field} "):
        ctxeval.merge_labels([a, b], tmp_path / "out.u")


def test_a_file_without_its_sidecar_or_with_a_stale_one_is_refused(tmp_path: Path) -> None:
    a = _judged(tmp_path, "a.u", ["q1 d1 0.9\n"])
    bare = tmp_path / "bare.u"
    bare.write_text("q1 d2 0.5\n")
    with pytest.raises(ctxeval.InputError, match=r"bare\.u: no sidecar .*provenance is unknown"):
        ctxeval.merge_labels([a, bare], tmp_path / "out.u")
    b = _judged(tmp_path, "b.u", ["q1 d2 0.5\n"])
    b.write_text("q1 d2 0.6\n")  # edited after the judge wrote it
    with pytest.raises(ctxeval.InputError, match=r"another version of b\.u"):
        ctxeval.merge_labels([a, b], tmp_path / "out.u")
    # no sidecar anywhere: merged, and said to be of unknown provenance
    other = tmp_path / "other.u"
    other.write_text("q2 d1 0.1\n")
    m = ctxeval.merge_labels([bare, other], tmp_path / "plain.u")
    assert m.sidecar is None and m.labels is None and "who wrote these labels is unknown" in m.describe()


def test_cli_refuses_writing_over_an_input(tmp_path: Path) -> None:
    a = _judged(tmp_path, "a.u", ["q1 d1 0.9\n"])
    b = _judged(tmp_path, "b.u", ["q1 d2 0.5\n"])
    res = CliRunner().invoke(cli, ["labels", "merge", str(a), str(b), "-o", str(a)])
    assert res.exit_code == 2 and "the output is one of the inputs" in res.stderr
    assert a.read_text() == "q1 d1 0.9\n" and json.loads((tmp_path / "a.u.labels.json").read_text())["pairs"] == 1
