"""RAGAS both ways, with the real ragas package (the test extra's ragas 0.4.3): RAGAS's own exports
(``to_jsonl``, ``to_csv`` with its Python-literal lists, ``to_pandas``, ``to_hf_dataset``) and the
``EvaluationDataset`` itself read as they are; sample sets with every field (a judge's labels included)
written as RAGAS JSON lines / CSV read back by ragas and by ctxeval without losing a field; RAGAS's
metrics on the datasets ctxeval writes equal ctxeval's measures."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxeval import Samples, evaluate
from ctxeval._io.samples import Sample
from ragas_oracle import ragas_metric
from strategies import csv_safe, sample_records

_FIELDS = [
    "retrieved_contexts",
    "retrieved_context_ids",
    "reference_contexts",
    "reference_context_ids",
    "response",
    "reference",
]
_TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r"), min_size=1, max_size=10)
_TEXTS = st.one_of(
    _TEXT, st.sampled_from(['a "quoted" text', "it's, with a comma", "two\nlines", "[bracket]", "é ü 雪"])
)
_IDS = (st.sampled_from(["d1", "d2", "d3", "d 4", "é5"]), st.integers(0, 5))


@st.composite
def ragas_datasets(draw: st.DrawFn) -> list[dict[str, Any]]:
    """The samples of an EvaluationDataset (single-turn): every sample gives the same fields (RAGAS's
    to_csv takes its columns from the first sample), ids all strings or all numbers (its Hugging Face
    dataset needs one type)."""
    _ID = draw(st.sampled_from(_IDS))
    fields = draw(st.sets(st.sampled_from(_FIELDS), min_size=1))
    fields.add(draw(st.sampled_from(["retrieved_contexts", "retrieved_context_ids"])))
    samples = []
    for _ in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 4))
        kw: dict[str, Any] = {"user_input": draw(_TEXTS)}
        ids = draw(st.lists(_ID, min_size=n, max_size=n, unique_by=str))
        texts = draw(st.lists(_TEXTS, min_size=n, max_size=n, unique=True))
        if "retrieved_context_ids" in fields:
            kw["retrieved_context_ids"] = ids
        if "retrieved_contexts" in fields:
            kw["retrieved_contexts"] = texts
        if "reference_context_ids" in fields:
            kw["reference_context_ids"] = draw(st.lists(_ID, min_size=1, max_size=3, unique_by=str))
        if "reference_contexts" in fields:
            kw["reference_contexts"] = draw(st.lists(_TEXTS, min_size=1, max_size=3))
        for name in ("response", "reference"):
            if name in fields:
                kw[name] = draw(_TEXTS)
        samples.append(kw)
    return samples


def _dataset(samples: list[dict[str, Any]]) -> Any:
    from ragas.dataset_schema import EvaluationDataset, SingleTurnSample

    return EvaluationDataset(samples=[SingleTurnSample(**kw) for kw in samples])


def _quiet() -> Any:
    w = warnings.catch_warnings()
    w.__enter__()
    warnings.simplefilter("ignore", DeprecationWarning)
    return w


@pytest.mark.slow
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None, max_examples=60)
@given(ragas_datasets())
def test_ragas_exports_read_as_they_are(tmp_path: Path, samples: list[dict[str, Any]]) -> None:
    """The dataset, its JSON lines, its CSV (lists as Python literals), its pandas frame and its Hugging
    Face dataset give one sample set, whose fields are the dataset's own."""
    ds = _dataset(samples)
    ds.to_jsonl(tmp_path / "e.jsonl")
    ds.to_csv(tmp_path / "e.csv")
    base = Samples.from_ragas(ds)
    for other in (
        Samples.from_path(tmp_path / "e.jsonl"),
        Samples.from_path(tmp_path / "e.csv"),
        Samples.coerce(ds.to_pandas()),
        Samples.coerce(ds.to_hf_dataset()),
    ):
        assert tuple(other.samples) == tuple(base.samples)
    for s, r in zip(base.samples, ds.samples):
        assert s.question == r.user_input
        assert s.retrieved_texts == (tuple(r.retrieved_contexts) if r.retrieved_contexts else None)
        if r.retrieved_context_ids is not None:
            assert s.retrieved_ids == tuple(map(str, r.retrieved_context_ids))
        assert s.reference_ids == (tuple(map(str, r.reference_context_ids)) if r.reference_context_ids else None)
        assert s.reference_contexts == (tuple(r.reference_contexts) if r.reference_contexts else None)
        assert (s.response, s.reference_answer) == (r.response, r.reference)


def test_a_ragas_to_csv_export_by_hand(tmp_path: Path) -> None:
    """RAGAS's to_csv writes lists as Python literals: ['a, b', 'c\\nd'] is a list of two texts."""
    from ragas.dataset_schema import EvaluationDataset, SingleTurnSample

    ds = EvaluationDataset(
        samples=[
            SingleTurnSample(
                user_input='what "is" x?',
                retrieved_contexts=["a, b", "c\nd", "it's"],
                retrieved_context_ids=["1", "2", "3"],
                reference_context_ids=["2", "9"],
            )
        ]
    )
    ds.to_csv(tmp_path / "e.csv")
    want = '"[\'a, b\', \'c\\nd\', ""it\'s""]"'  # a Python literal, CSV-quoted
    assert want in (tmp_path / "e.csv").read_text()
    got = evaluate(samples=str(tmp_path / "e.csv"), measures=["IDBasedContextRecall", "IDBasedContextPrecision"]).runs[
        0
    ]
    assert got.mean("IDBasedContextRecall") == 0.5 and got.mean("IDBasedContextPrecision") == pytest.approx(1 / 3)
    assert Samples.from_path(tmp_path / "e.csv").samples[0].retrieved_texts == ("a, b", "c\nd", "it's")


def _same(back: Sample, orig: Sample) -> bool:
    """Equal, bar the reference ids a graded sample gives RAGAS (its chunks of grade >= 1)."""
    if orig.reference_ids is None and orig.judgments_from == "grades":
        back = dataclasses.replace(back, reference_ids=None)
    return back == orig


@st.composite
def _sets(draw: st.DrawFn, csv: bool = False) -> list[dict]:
    return [draw(sample_records(i, csv=csv)) for i in range(draw(st.integers(1, 4)))]


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None, max_examples=60)
@given(_sets())
def test_sample_sets_go_to_ragas_and_come_back(tmp_path: Path, recs: list[dict]) -> None:
    """Every field, a judge's labels included: written as RAGAS JSON lines, read back by ctxeval the
    same; read by ragas (EvaluationDataset.from_jsonl) with RAGAS's fields as ctxeval's; ragas's own
    to_jsonl of it read by ctxeval gives those fields again."""
    from ragas.dataset_schema import EvaluationDataset

    s = Samples.from_records(recs)
    path = tmp_path / "r.jsonl"
    s.write(path, schema="ragas")
    back = Samples.from_path(path)
    assert all(_same(b, o) for b, o in zip(back.samples, s.samples)) and len(back) == len(s)
    w = _quiet()
    try:
        ds = EvaluationDataset.from_jsonl(path)
        ds.to_jsonl(tmp_path / "again.jsonl")
    finally:
        w.__exit__(None, None, None)
    for r, o in zip(ds.samples, s.samples):
        assert r.user_input == o.question and r.response == o.response and r.reference == o.reference_answer
        assert r.retrieved_contexts == (list(o.retrieved_texts) if o.retrieved_texts is not None else None)
        assert r.reference_contexts == (list(o.reference_contexts) if o.reference_contexts is not None else None)
    again = Samples.from_path(tmp_path / "again.jsonl")  # ragas kept its own fields only: no query ids
    for a, o in zip(again.samples, s.samples):
        assert (a.question, a.retrieved_texts, a.reference_contexts) == (
            o.question,
            o.retrieved_texts,
            o.reference_contexts,
        )


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None, max_examples=40)
@given(_sets(csv=True))
def test_ragas_csv_written_reads_back(tmp_path: Path, recs: list[dict]) -> None:
    s = Samples.from_records([csv_safe(r) for r in recs])
    s.write(tmp_path / "r.csv", schema="ragas")
    back = Samples.from_path(tmp_path / "r.csv")
    assert all(_same(b, o) for b, o in zip(back.samples, s.samples)) and len(back) == len(s)


@settings(deadline=None, max_examples=40)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(["c1", "c2", "c3", "c4", "c5"]), min_size=1, max_size=5, unique=True),
            st.dictionaries(st.sampled_from(["c1", "c2", "c3", "c6"]), st.integers(0, 3), min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_ragas_metrics_on_the_dataset_ctxeval_writes_equal_ctxeval(samples: list[tuple[list[str], dict]]) -> None:
    """Graded samples written as an EvaluationDataset (grades >= 1 as RAGAS's reference ids): ragas's
    IDBasedContextPrecision / Recall on it equal ctxeval's on the graded set (rel=1)."""
    recs = [{"query_id": f"q{i}", "retrieved_ids": r, "grades": g} for i, (r, g) in enumerate(samples)]
    s = Samples.from_records(recs)
    ds = s.to_ragas()
    got = evaluate(samples=s, measures=["IDBasedContextPrecision", "IDBasedContextRecall"]).runs[0]
    p, r = got.per_query("IDBasedContextPrecision"), got.per_query("IDBasedContextRecall")
    precision, recall = ragas_metric("IDBasedContextPrecision")(), ragas_metric("IDBasedContextRecall")()
    w = _quiet()
    try:
        for (q, (_, grades)), sample in zip(((f"q{i}", x) for i, x in enumerate(samples)), ds.samples):
            if any(g >= 1 for g in grades.values()):
                assert p[q] == pytest.approx(precision.single_turn_score(sample), abs=1e-15)
                assert r[q] == pytest.approx(recall.single_turn_score(sample), abs=1e-15)
    finally:
        w.__exit__(None, None, None)
