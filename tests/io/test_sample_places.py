"""Where each retrieved chunk lies, (document, start, end), as the field table's walk adds a field
(docs/development.md, "Add a sample field"): read and written in every sample file format, checked
(one-line errors naming the file, the line and the field), and read by no measure yet: a sample
set's figures do not move when its chunks' places are given."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import ctxeval
from ctxeval import ConfigError, FormatError, InputError, Samples
from ctxeval._cli import cli

#: three questions over two documents; chunk c2 overlaps c1 and c3; a chunk of d2 given by its text
DOC = {"d1": "Paris is the capital of France. It lies on the Seine.", "d2": "Lyon is in France."}
PLACES = {"c1": ("d1", 0, 31), "c2": ("d1", 16, 42), "c3": ("d1", 32, 53), "c4": ("d2", 0, 18)}


def _as_objects(ids: list[str]) -> list[dict]:
    return [{"id": d, "document": PLACES[d][0], "start": PLACES[d][1], "end": PLACES[d][2]} for d in ids]


def _as_lists(ids: list[str]) -> dict:
    return {
        "retrieved_ids": ids,
        "retrieved_documents": [PLACES[d][0] for d in ids],
        "retrieved_starts": [PLACES[d][1] for d in ids],
        "retrieved_ends": [PLACES[d][2] for d in ids],
    }


RECORDS = [
    {"query_id": "q1", "retrieved": _as_objects(["c1", "c2"]), "reference_ids": ["c1"]},
    {"query_id": "q2", **_as_lists(["c3", "c4", "c2"]), "grades": {"c3": 2}},
    {
        "query_id": "q3",
        "retrieved": [{**_as_objects(["c4"])[0], "text": DOC["d2"], "score": 0.5}],
        "reference_ids": ["c4"],
    },
]


def test_planted_places_read_as_given() -> None:
    s = Samples.from_records(RECORDS)
    assert s.locations() == PLACES
    q2 = s.samples[1]
    assert (q2.retrieved_documents, q2.retrieved_starts, q2.retrieved_ends) == (
        ("d1", "d2", "d1"),
        (32, 0, 16),
        (53, 18, 42),
    )
    # the offsets are code points, end exclusive: each chunk is its document's text between them
    assert DOC["d2"][PLACES["c4"][1] : PLACES["c4"][2]] == "Lyon is in France."
    # written as parallel lists, which carry everything here (objects when a chunk has other keys)
    written = s.to_records()
    assert written[0] == {"query_id": "q1", **_as_lists(["c1", "c2"]), "reference_ids": ["c1"]}
    assert tuple(Samples.from_records(written).samples) == tuple(s.samples)
    kept = Samples.from_records([{"query_id": "q", "retrieved": [{**_as_objects(["c1"])[0], "page": 3}]}])
    assert kept.to_records()[0]["retrieved"] == [{"id": "c1", "document": "d1", "start": 0, "end": 31, "page": 3}]
    assert not any("no measure reads" in n for n in s.notes)  # known fields, not kept as unknown ones


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(st.sampled_from(["s.jsonl", "s.csv", "s.tsv", "s.parquet", "polars", "pandas", "ragas.jsonl", "ragas.csv"]))
def test_every_format_keeps_the_places(tmp_path: Path, where: str) -> None:
    s = Samples.from_records(RECORDS)
    if where == "polars":
        back = Samples.from_frame(pl.DataFrame(s.to_records()))
    elif where == "pandas":
        pd = pytest.importorskip("pandas")
        back = Samples.from_frame(pd.DataFrame(s.to_records()))
    elif where == "s.parquet":
        pl.DataFrame(s.to_records()).write_parquet(tmp_path / where)  # Parquet is written by polars
        back = Samples.from_path(tmp_path / where)
    else:
        schema = "ragas" if where.startswith("ragas") else "ctxeval"
        s.write(tmp_path / where, schema=schema)
        back = Samples.from_path(tmp_path / where)
    assert back.locations() == PLACES
    if where.startswith("ragas"):  # RAGAS's reference ids are also given for graded samples (documented)
        assert [(b.retrieved_ids, b.grades) for b in back.samples] == [(a.retrieved_ids, a.grades) for a in s.samples]
    else:
        assert tuple(back.samples) == tuple(s.samples)


def test_parquet_is_written_by_polars_not_mislabelled(tmp_path: Path) -> None:
    """Samples.write wrote JSON lines under a .parquet name; now it says how to write Parquet."""
    with pytest.raises(ConfigError, match=r"s\.parquet: ctxeval writes sample sets as JSON lines, CSV or TSV"):
        Samples.from_records(RECORDS).write(tmp_path / "s.parquet")
    assert not (tmp_path / "s.parquet").exists()


GOOD = {"query_id": "q1", "retrieved_ids": ["a", "b"], "reference_ids": ["a"]}
PLACED = {**GOOD, "retrieved_documents": ["d", "d"], "retrieved_starts": [0, 5], "retrieved_ends": [5, 9]}
OBJECT = {"id": "a", "document": "d", "start": 0, "end": 5}

ERRORS = [
    ({**PLACED, "retrieved_ends": [5, 4]}, "retrieved_ends[2] must be at least retrieved_starts[2] (5), got 4"),
    ({**PLACED, "retrieved_starts": [0, -1]}, "retrieved_starts[2] must be a whole number >= 0 (a character offset), got -1"),
    ({**PLACED, "retrieved_starts": [0, 1.5]}, "retrieved_starts[2] must be a whole number >= 0 (a character offset), got 1.5"),
    ({**PLACED, "retrieved_ends": [5, True]}, "retrieved_ends[2] must be a whole number >= 0 (a character offset), got True"),
    ({**PLACED, "retrieved_ends": [5, 2**64]}, "retrieved_ends[2] must be a whole number >= 0 (a character offset), got 18446744073709551616"),
    ({**PLACED, "retrieved_starts": [0]}, "retrieved_starts has 1 items but retrieved_ids 2"),
    ({**PLACED, "retrieved_documents": ["d", " d"]}, "retrieved_documents[2]: an id must be non-empty, without blanks at its ends, got ' d'"),
    ({**GOOD, "retrieved_starts": [0, 5], "retrieved_ends": [5, 9]},
     "retrieved_starts is given without retrieved_documents: give retrieved_documents, retrieved_starts, retrieved_ends together"),
    ({**GOOD, "retrieved_documents": "d"}, "retrieved_documents must be a list, got str"),
    ({"query_id": "q1", "retrieved": [OBJECT, {"id": "b"}]}, "retrieved[2]: some chunks have a document and others not"),
    ({"query_id": "q1", "retrieved": [OBJECT, "b"]}, "retrieved[2]: some chunks have a document and others not"),
    ({"query_id": "q1", "retrieved": [{**OBJECT, "end": 0, "start": 3}]}, "retrieved[1].end must be at least retrieved[1].start (3), got 0"),
    ({"query_id": "q1", "retrieved": [{"id": "a", "start": 0, "end": 3}]},
     "retrieved: the key 'start' is given without 'document': give 'document', 'start', 'end' together"),
    ({"query_id": "q1", "retrieved": [{**OBJECT, "start": "0"}]}, "retrieved[1].start must be a whole number >= 0 (a character offset), got '0'"),
    ({**PLACED, "retrieved": [OBJECT]}, "retrieved and retrieved_ids both give the retrieved chunks; give one of them"),
]  # fmt: skip


@pytest.mark.parametrize(("rec", "message"), ERRORS, ids=[m[:40] for _, m in ERRORS])
def test_a_bad_place_is_one_line_naming_the_field(tmp_path: Path, rec: dict, message: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({**GOOD, "query_id": "q0"}) + "\n" + json.dumps(rec) + "\n")
    with pytest.raises(FormatError) as err:
        Samples.from_path(path)
    assert str(err.value) == f"{path}:2: {message}"
    res = CliRunner().invoke(cli, ["evaluate", "--samples", str(path), "-m", "RR"])
    assert res.exit_code == 2 and res.stderr == f"ctxeval: error: {path}:2: {message}\n"


def test_a_chunk_given_twice_keeps_its_first_place() -> None:
    rec = {
        "query_id": "q1",
        "retrieved": [OBJECT, {**OBJECT, "start": 1}, {"id": "b", "document": "e", "start": 2, "end": 2}],
    }
    with pytest.raises(FormatError, match=r"chunk id 'a' is given twice \(positions 1 and 2\)"):
        Samples.from_records([rec])
    s = Samples.from_records([rec], duplicates="first")
    assert s.locations() == {"a": ("d", 0, 5), "b": ("e", 2, 2)}


def test_a_chunk_placed_twice_differently_is_named() -> None:
    other = {"query_id": "q2", "retrieved": [{**OBJECT, "end": 6}], "reference_ids": ["a"]}
    s = Samples.from_records([{"query_id": "q1", "retrieved": [OBJECT]}, other], name="s")
    with pytest.raises(
        InputError, match=r"chunk 'a' lies at \('d', 0, 5\) in query 'q1' but at \('d', 0, 6\) in query 'q2'"
    ):
        s.locations()


@st.composite
def _sets(draw: st.DrawFn) -> list[dict]:
    out = []
    for i in range(draw(st.integers(1, 4))):
        ids = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), min_size=1, max_size=5, unique=True))
        rec = {
            "query_id": f"q{i}",
            "retrieved_ids": ids,
            "reference_ids": draw(st.lists(st.sampled_from("abcdef"), max_size=3)),
        }
        if draw(st.booleans()):
            rec["grades"] = {d: draw(st.integers(1, 3)) for d in draw(st.lists(st.sampled_from("abcdef"), max_size=3))}
        out.append(rec)
    return out


@settings(deadline=None, max_examples=30)
@given(_sets(), st.data())
def test_no_measure_reads_the_places_yet(recs: list[dict], data: st.DataObject) -> None:
    """Giving the chunks' places (any places) changes no figure and no note."""
    assume(any(r.get("grades") or r["reference_ids"] for r in recs))  # something to evaluate against
    ms = ["RR", "nDCG@3", "P@2", "ContextPrecision", "ContextRecall@3", "CoverageRecall@2", "Harm@2"]
    placed = []
    for rec in recs:
        n = len(rec["retrieved_ids"])
        starts = data.draw(st.lists(st.integers(0, 99), min_size=n, max_size=n))
        placed.append(
            {
                **rec,
                "retrieved_documents": ["d"] * n,
                "retrieved_starts": starts,
                "retrieved_ends": [x + 7 for x in starts],
            }
        )
    a, b = (ctxeval.evaluate(samples=x, measures=ms) for x in (recs, placed))
    assert json.dumps(a.to_dict()["runs"], sort_keys=True) == json.dumps(b.to_dict()["runs"], sort_keys=True)
    assert a.notes == b.notes
