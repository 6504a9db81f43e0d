"""The sample format's one home: every field read and written side by side. Generated samples
(every field, every name and form the reader takes) read back to the same sample after writing, as
records, JSON lines, CSV and through the judge's label writer; the strategy reaches every field."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from ctxeval import Samples
from ctxeval._io.samples import Sample, parse, record
from ctxeval._io.samples.schema import Tally
from strategies import csv_safe, sample_records


def _parse(rec: dict) -> Sample:
    return parse(rec, "<test>", 1, None, "error", Tally())


@given(sample_records())
def test_a_written_sample_reads_back_the_same(rec: dict) -> None:
    s = _parse(rec)
    written = record(s)
    assert _parse(json.loads(json.dumps(written))) == s
    assert record(_parse(written)) == written  # writing is stable: a second pass changes nothing


@st.composite
def _sets(draw: st.DrawFn, csv: bool = False) -> list[dict]:
    return [draw(sample_records(i, csv=csv)) for i in range(draw(st.integers(1, 4)))]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(_sets(), st.sampled_from(["s.jsonl", "s.csv", "s.tsv"]))
def test_files_written_read_back_the_same_samples(tmp_path: Path, recs: list[dict], name: str) -> None:
    """JSON lines keep every value; CSV and TSV hold text (the strategy's csv=True values) and read
    back the same samples too."""
    if name != "s.jsonl":
        recs = [csv_safe(r) for r in recs]
    s = Samples.from_records(recs)
    path = tmp_path / name
    s.write(path)
    back = Samples.from_path(path)
    assert tuple(back.samples) == tuple(s.samples)


@given(_sets())
def test_the_judge_label_writer_keeps_every_field(recs: list[dict]) -> None:
    """``ctxeval judge`` rewrites a sample set through the format's writer: with no new labels, every
    sample reads back as it was."""
    from ctxeval._judge.labels import merged

    s = Samples.from_records(recs)
    assert tuple(Samples.from_records(merged(s, [])).samples) == tuple(s.samples)


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Sample) if f.default is not dataclasses.MISSING}


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(Sample)])
def test_the_strategy_reaches_every_field(name: str) -> None:
    """Each field of :class:`Sample` takes a value other than its default (and than empty) in some
    generated sample: the round-trip properties above cover every field."""

    def given_(rec: dict) -> bool:
        v = getattr(_parse(rec), name)
        return v != _DEFAULTS.get(name, ()) and v not in ((), {}, None)

    find(sample_records(), given_, settings=settings(max_examples=1000, database=None, phases=[Phase.generate]))
