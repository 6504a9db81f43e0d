"""AWRF's side files: the group labels (``docid group [weight]`` lines, JSON lines, mappings) and the
targets (``qid group weight``) read alike in every form, their rules (weights scaled per doc and
dimension, the unknown level, intersectional groups), and a one-line error naming the file and the
line for every bad input, through the API and the command line."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import ctxeval
from ctxeval import ConfigError, DuplicateError, EmptyInputError, FormatError, InputError
from ctxeval._cli import cli
from ctxeval._io.fairness import read_fair_groups, read_fair_targets

TEXT = """# fairness groups: geography and gender
d1 geo=Asia
d1 geo=Europe 3
d1 gender=f
d2 geo=Africa
d3 gender=m 2
d3 gender=f 2
"""
JSONL = [
    {"doc_id": "d1", "groups": {"geo": {"Asia": 1, "Europe": 3}, "gender": "f"}},
    {"docid": "d2", "dimension": "geo", "group": "Africa"},
    {"doc": "d3", "groups": {"gender": ["m", "f"]}},
]
MAPPING = {"d1": {"geo=Asia": 1, "geo=Europe": 3, "gender=f": 1}, "d2": "geo=Africa", "d3": ["gender=m", "gender=f"]}


def _table(g) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    docs = g.doc.to_list()
    for i, d in enumerate(docs):
        lo, hi = int(g.ptr[i]), int(g.ptr[i + 1])
        out[d] = {g.labels[int(c)]: float(w) for c, w in zip(g.group[lo:hi], g.weight[lo:hi])}
    return out


WANT = {
    "d1": {"gender=f&geo=Asia": 0.25, "gender=f&geo=Europe": 0.75},
    "d2": {"gender=@unknown&geo=Africa": 1.0},
    "d3": {"gender=f&geo=@unknown": 0.5, "gender=m&geo=@unknown": 0.5},
}


def test_text_json_lines_gzip_and_mapping_read_alike(tmp_path: Path) -> None:
    text = tmp_path / "groups.txt"
    text.write_text(TEXT)
    jl = tmp_path / "groups.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in JSONL) + "\n")
    gz = tmp_path / "groups.txt.gz"
    gz.write_bytes(gzip.compress(TEXT.replace(" ", "\t").encode()))
    tables = [_table(read_fair_groups(v)) for v in (str(text), str(jl), str(gz), MAPPING)]
    assert all(t == WANT for t in tables)
    assert read_fair_groups(str(text)).dimensions == ("gender", "geo")


def test_levels_with_spaces_come_through_json_lines(tmp_path: Path) -> None:
    jl = tmp_path / "g.jsonl"
    jl.write_text(json.dumps({"doc_id": "d1", "dimension": "geo", "group": "Latin America and the Caribbean"}) + "\n")
    assert read_fair_groups(str(jl)).labels == ("geo=Latin America and the Caribbean",)


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("d1 a\nd2\n", 2, "expected docid group [weight], found 1 fields"),
        ("d1 a\nd2 b c d\n", 2, "found 4 fields"),
        ("d1 a\nd2 b heavy\n", 2, "weight 'heavy' is not a number"),
        ("d1 a\nd2 b -1\n", 2, "weight '-1' is not a finite number >= 0"),
        ("d1 a\nd2 b nan\n", 2, "not a finite number"),
        ("d1 =a\n", 1, "names no dimension"),
        ("d1 geo=\n", 1, "names no level"),
        ("d1 geo=a&gender=f\n", 1, "one level of one dimension"),
        ('{"doc_id": "d1", "group": "a"}\n{"group": "b"}\n', 2, "no doc id"),
        ('{"doc_id": "d1", "group": "a"}\n{"doc_id": "d2"}\n', 2, "expected 'group'"),
        ('{"doc_id": "d1", "group": "a"}\n{"doc_id": "d2", "group": "b", "weight": true}\n', 2, "weight True"),
        ('{"doc_id": "d1", "group": "a"}\n{"doc_id": "d2", "group": "b"\n', 2, "not valid JSON"),
    ],
)
def test_a_bad_group_line_is_named(tmp_path: Path, text: str, line: int, problem: str) -> None:
    p = tmp_path / "groups.txt"
    p.write_text(text)
    with pytest.raises(FormatError) as err:
        read_fair_groups(str(p))
    assert err.value.line == line and problem in str(err.value), str(err.value)
    assert str(err.value).startswith(f"{p}:{line}: ")


def test_a_group_given_twice_names_both_lines(tmp_path: Path) -> None:
    p = tmp_path / "groups.txt"
    p.write_text("d1 geo=a\nd2 geo=b\n# again\nd1 geo=a 2\n")
    with pytest.raises(DuplicateError, match=r"doc 'd1' is in group 'geo=a' twice \(lines 1 and 4\)"):
        read_fair_groups(str(p))


def test_weights_summing_to_zero_and_empty_files(tmp_path: Path) -> None:
    p = tmp_path / "groups.txt"
    p.write_text("d1 a 0\nd1 b 0\nd2 a\n")
    with pytest.raises(InputError, match=r"doc 'd1' has weights summing to 0 in dimension \(unnamed\) \(line 1\)"):
        read_fair_groups(str(p))
    p.write_text("# nothing\n\n")
    with pytest.raises(EmptyInputError, match="no fairness group labels"):
        read_fair_groups(str(p))
    with pytest.raises(ConfigError, match="fairness groups must be a file path or a mapping"):
        read_fair_groups(3)


def test_targets_name_every_dimension(tmp_path: Path) -> None:
    groups = read_fair_groups(str(_write(tmp_path / "g.txt", TEXT)))
    t = read_fair_targets(str(_write(tmp_path / "t.txt", "* geo=Asia&gender=f 1\nq1 gender=m&geo=Africa 1\n")), groups)
    assert t.qids == ("*", "q1") and t.labels == ("gender=f&geo=Asia", "gender=m&geo=Africa")
    jl = _write(
        tmp_path / "t.jsonl", json.dumps({"qid": "q1", "group": {"geo": "Asia", "gender": "f"}, "weight": 2}) + "\n"
    )
    assert read_fair_targets(str(jl), groups).labels == ("gender=f&geo=Asia",)
    for text, problem in [
        ("q1 geo=Asia 1\n", "must name one level of each dimension of the groups (gender, geo)"),
        ("q1 geo=Asia&geo=Europe 1\n", "names dimension geo twice"),
        ("q1 geo=Asia&gender=f\n", "expected qid group weight, found 2 fields"),
        ("q1 geo=Asia&gender=f x\n", "weight 'x' is not a number"),
    ]:
        with pytest.raises(FormatError, match=r"t2\.txt:1: ") as err:
            read_fair_targets(str(_write(tmp_path / "t2.txt", text)), groups)
        assert problem in str(err.value)
    with pytest.raises(DuplicateError, match=r"query 'q1', group 'gender=f&geo=Asia' given twice \(lines 1 and 2\)"):
        read_fair_targets(str(_write(tmp_path / "t3.txt", "q1 geo=Asia&gender=f 1\nq1 gender=f&geo=Asia 2\n")), groups)
    with pytest.raises(InputError, match="the target of query 'q1' has weights summing to 0"):
        read_fair_targets({"q1": {"geo=Asia&gender=f": 0}}, groups)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_what_the_evaluation_asks_for() -> None:
    qrels, run = {"q1": {"a": 1}, "q2": {"a": 1}}, {"q1": {"a": 1.0}, "q2": {"a": 1.0}}
    with pytest.raises(ConfigError, match="needs the docs' group labels"):
        ctxeval.evaluate(qrels, run, ["AWRF"])
    with pytest.raises(ConfigError, match=r"AWRF\(target=given\) compares with the targets of a file"):
        ctxeval.evaluate(qrels, run, ["AWRF(target=given)"], rag={"fair_groups": {"a": "x"}})
    with pytest.raises(ConfigError, match="fairness targets name groups of the fairness group labels"):
        ctxeval.evaluate(qrels, run, ["AWRF"], rag={"fair_target": {"q1": {"x": 1}}})
    with pytest.raises(ConfigError, match=r"no target for 1 evaluated query \('q2'\)"):
        ctxeval.evaluate(
            qrels, run, ["AWRF(target=given)"], rag={"fair_groups": {"a": "x"}, "fair_target": {"q1": {"x": 1}}}
        )
    with pytest.raises(ctxeval.MeasureError, match="needs p"):
        ctxeval.parse_measure("AWRF-FRT")


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 b 1\nq1 0 c 0\n")
    (tmp_path / "r.txt").write_text("q1 Q0 a 1 3.0 sys\nq1 Q0 c 2 2.0 sys\nq1 Q0 b 3 1.0 sys\nq1 Q0 u 4 0.5 sys\n")
    (tmp_path / "g.txt").write_text("a x\nb y\nc y\n")
    (tmp_path / "t.txt").write_text("* x 1\n* y 1\n")
    return [str(tmp_path / n) for n in ("q.txt", "r.txt", "g.txt", "t.txt")]


def test_the_command_line(tmp_path: Path) -> None:
    q, r, g, t = _files(tmp_path)
    names = ["AWRF@3", "AWRF(target=given)", "nDCG-AWRF@3", "AWRF-FRT(p=0.5)"]
    args = ["evaluate", q, r, "--fair-groups", g, "--fair-target", t, "--format", "json"]
    for n in names:
        args += ["-m", n]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    api = ctxeval.evaluate(q, r, names, rag={"fair_groups": g, "fair_target": t}).runs[0]
    means = doc["runs"][0]["aggregate"]
    assert doc["settings"]["fairness"] == {"groups": g, "target": t}
    for n in names:
        assert means[n] == pytest.approx(api.mean(n), rel=1e-12)
    # a, c, b at ranks 1-3 (weights 1, 1, 1/log2 3): x gets 1, y gets 1 + 1/log2 3; the target half and half
    P = [1 / (2 + 1 / math.log2(3)), (1 + 1 / math.log2(3)) / (2 + 1 / math.log2(3))]
    M = [(p + 0.5) / 2 for p in P]
    js = sum(p * math.log(p / m) + 0.5 * math.log(0.5 / m) for p, m in zip(P, M)) / 2
    assert api.mean("AWRF(target=given)") == pytest.approx(1 - js, rel=1e-14)
    assert any("1 of its 4 ranked docs have no group label" in n for n in doc.get("notes", [])), doc.get("notes")


def test_a_bad_line_on_the_command_line_is_one_line(tmp_path: Path) -> None:
    q, r, g, _ = _files(tmp_path)
    Path(g).write_text("a x\nb\n")
    out = CliRunner().invoke(cli, ["evaluate", q, r, "--fair-groups", g, "-m", "AWRF"])
    assert out.exit_code == 2
    assert out.stderr.strip().splitlines() == [
        f"ctxeval: error: {g}:2: expected docid group [weight], found 1 fields (line: 'b')"
    ]


def test_fields_are_separated_by_spaces_and_tabs_only(tmp_path: Path) -> None:
    """The reading rule of every side file: a no-break space belongs to its field, a CR before the
    line's end does not."""
    p = tmp_path / "groups.txt"
    p.write_text("d1\tgeo=South\u00a0Asia  2\r\nd2 geo=Europe\r\n", encoding="utf-8", newline="")
    g = read_fair_groups(str(p))
    assert g.labels == ("geo=Europe", "geo=South\u00a0Asia") and g.doc.to_list() == ["d1", "d2"]
