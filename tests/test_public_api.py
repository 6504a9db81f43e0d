"""The public surface: ``ctxeval.__all__`` is exactly the names the site's API overview documents, every one of them
resolves, the exceptions form one tree, and ``import ctxeval`` / the serving-time selector load
neither polars nor click."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import ctxeval

API_PAGE = Path(__file__).resolve().parent.parent / "docs" / "reference" / "api" / "index.md"


def _documented_names() -> set[str]:
    text = API_PAGE.read_text(encoding="utf-8")
    start = text.index("The package exports exactly these names")
    block = text[start : text.index("\n\n", text.index("\n- ", start))]
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", block))


def test_all_is_exactly_the_documented_names() -> None:
    assert len(ctxeval.__all__) == len(set(ctxeval.__all__)), "a name is listed twice in __all__"
    assert set(ctxeval.__all__) == _documented_names()


def test_every_exported_name_resolves_and_no_other_public_name_exists() -> None:
    for name in ctxeval.__all__:
        assert getattr(ctxeval, name) is not None, name
    public = {n for n in vars(ctxeval) if not n.startswith("_")}
    public -= {"annotations"}  # ``from __future__ import annotations``
    public -= {"testing"}  # the public module ctxeval.testing (pytest helpers), once imported
    assert public <= set(ctxeval.__all__), f"public but not exported: {sorted(public - set(ctxeval.__all__))}"


ERRORS = ["InputError", "FormatError", "DuplicateError", "EmptyInputError", "QueryMismatchError",
          "ConfigError", "MeasureError", "PoolError", "OutputError", "DependencyError"]  # fmt: skip


@pytest.mark.parametrize("name", ERRORS)
def test_every_exception_is_in_one_tree(name: str) -> None:
    cls = getattr(ctxeval, name)
    assert issubclass(cls, ctxeval.CtxevalError)
    assert cls.__module__ == "ctxeval"  # as users import it (tracebacks, doctests, the API pages)


def test_input_errors_are_value_errors_and_missing_extras_import_errors() -> None:
    # callers that catch the builtin categories keep working
    for name in ["InputError", "FormatError", "DuplicateError", "EmptyInputError", "PoolError", "ConfigError"]:
        assert issubclass(getattr(ctxeval, name), ValueError), name
    assert issubclass(ctxeval.DependencyError, ImportError)
    assert issubclass(ctxeval.FormatError, ctxeval.InputError)
    assert issubclass(ctxeval.PoolError, ctxeval.InputError)


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_import_and_selector_load_neither_polars_nor_click() -> None:
    out = _fresh(
        "import sys, ctxeval\n"
        "sel = ctxeval.ContextSelector.from_dict({'policy_format': 2, 'k_max': 2, 'tau': 0.5})\n"
        "print(sel.select(['a', 'b', 'c'], [0.9, 0.2, 0.8]))\n"
        "print(sorted(m for m in ('polars', 'click', 'pandas', 'matplotlib', 'scipy') if m in sys.modules))\n"
    )
    # rel = (s - 0.2) / 0.7: a 1.0, c 0.857 are kept (>= 0.5); b 0.0 is not; at most 2
    assert out.splitlines() == ["['a', 'c']", "[]"]


def test_result_and_report_frames_have_one_shape_and_keep_summaries_apart(tmp_path) -> None:
    import pandas as pd

    qrels = tmp_path / "q.txt"
    qrels.write_text("all 0 a 1\nq2 0 b 1\n")  # a query named "all" is a query like any other
    run = tmp_path / "r.txt"
    run.write_text("all Q0 a 1 2 t\nall Q0 x 2 1 t\nq2 Q0 x 1 2 t\nq2 Q0 b 2 1 t\n")
    res = ctxeval.evaluate(qrels, run, ["RR", "P@1"])
    per_query = res.to_pandas(per_query=True)
    assert list(per_query.columns) == ["run", "query", "measure", "value"]
    # RR: "all" has a at rank 1 -> 1; q2 has b at rank 2 -> 1/2; P@1: 1 and 0
    assert per_query.values.tolist() == [
        ["t", "all", "RR", 1.0], ["t", "all", "P@1", 1.0], ["t", "q2", "RR", 0.5], ["t", "q2", "P@1", 0.0]
    ]  # fmt: skip
    means = res.to_pandas()
    assert means.values.tolist() == [["t", "RR", 0.75, 2], ["t", "P@1", 0.5, 2]]
    rep = ctxeval.compare(
        qrels, [run], ["RR", "P@1"], sections={"curves_k": 0}, stats={"permutations": 10, "resamples": 10}
    )
    assert rep.to_pandas(per_query=True).equals(per_query)
    from_csv = pd.read_csv(__import__("io").StringIO(rep.to_csv()), dtype={"query": str})
    assert list(from_csv.columns) == list(per_query.columns) and from_csv.values.tolist() == per_query.values.tolist()


@pytest.mark.parametrize(
    "err",
    [
        ctxeval.FormatError("run.txt", 3, "expected 6 fields, found 5", "q1 Q0 d1 1 0.5"),
        ctxeval.DependencyError("plot()", "matplotlib", "report"),
        ctxeval.DependencyError("the Spark engine", "java", "spark", "not found", "install Java 17"),
        ctxeval.ConfigError("ties must be one of 'trec', 'trec10', 'input', got 'tre'"),
    ],
)
def test_errors_survive_pickling_with_their_message(err: Exception) -> None:
    """Spark's workers and process pools send errors back pickled: the same class, message and fields."""
    import pickle

    back = pickle.loads(pickle.dumps(err))
    assert type(back) is type(err) and str(back) == str(err)
    assert vars(back) == vars(err)
