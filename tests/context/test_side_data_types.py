"""A sample set's side data is declared beside the provider that builds it (ctxeval._context.samples)
and read by the measure kernels through protocols that say what each reads (ctxeval._measures.context):
neither imports the other, and the core knows neither. These checks bind them: each value has every
attribute its protocol names, with the same type, and is the value its provider builds for the
measures that require it."""

from __future__ import annotations

import dataclasses
import typing

import pytest

import ctxeval
from ctxeval._context import PROVIDERS, closure
from ctxeval._context import samples as values
from ctxeval._core import extras
from ctxeval._measures import context as kernels

PAIRS = [
    (kernels.SampleLabelsView, values.SampleLabels, "samples"),
    (kernels.JudgeLabelsView, values.JudgeLabels, "judged"),
    (kernels.SimilaritiesView, values.Similarities, "similarity"),
    (kernels.SimilaritiesView, values.Similarities, "containment"),
]


@pytest.mark.parametrize(("view", "value", "name"), PAIRS, ids=[p[2] for p in PAIRS])
def test_each_value_has_what_its_kernels_read(view: type, value: type, name: str) -> None:
    wanted = typing.get_type_hints(view)
    given = {f.name: f for f in dataclasses.fields(value)}
    assert wanted, view
    for attr, kind in wanted.items():
        assert attr in given, f"{value.__name__} lacks {attr}, which the kernels read ({view.__name__})"
        assert typing.get_type_hints(value)[attr] == kind, attr
    closure([name])  # the providers are registered
    assert PROVIDERS[name].build.__annotations__["return"] == value.__name__  # (a string: postponed annotations)


def test_the_core_holds_no_sample_feature() -> None:
    assert not {"SampleLabels", "JudgeLabels", "Similarities"} & set(vars(extras))


def test_the_built_values_are_those_the_kernels_read() -> None:
    """A sample set with citations, facets, nuggets, claims, a judge's relevance and texts: the measures
    reading each kind of side data give the values worked out by hand."""
    rec = {
        "query_id": "q1",
        "retrieved": [{"id": "a", "text": "paris is in france"}, {"id": "b", "text": "lyon"}, {"id": "c", "text": "x"}],
        "reference_ids": ["a"],
        "reference_contexts": ["paris is in france"],
        "citations": ["a", "b"],
        "facets": [{"name": "f1", "ids": ["a"]}, {"name": "f2", "ids": ["z"]}],
        "nuggets": [{"text": "n", "importance": "vital", "supported_by": ["b"], "partially_supported_by": []}],
        "claims": [{"text": "c1", "supported_by": ["c"], "undecided": []}],
        "judged": {"relevant": ["b"], "undecided": []},
    }
    ms = [
        "AttributionRate",
        "CoverageRecall@3",
        "NuggetRecall@1",
        "NuggetRecall@2",
        "ContextPrecision(method=judge)",
        "ContextRecall(method=judge)@2",
        "ContextRecall(method=judge)@3",
        "ContextRecall(method=similarity)@1",
        "ContextRecall(method=containment)@1",
    ]
    run = ctxeval.evaluate(samples=[rec], measures=ms).runs[0]
    assert [run.mean(m) for m in ms] == [2 / 3, 0.5, 0.0, 1.0, 0.5, 0.0, 1.0, 1.0, 1.0]
