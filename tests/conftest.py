from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("dev", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: tests over a few seconds that are not marked where they are defined (measured with --durations on a
#: busy 2-core machine): the fast tier, pytest -m "not slow", leaves them out; CI runs them all
SLOW_TESTS = (
    "tests/test_lint.py::test_check_passes[mypy]",
    "tests/cli/test_demo.py::",
    "tests/render/test_html.py::",
    "tests/regression/test_regression.py::test_output_unchanged[compare-example-html]",
    "tests/regression/test_regression.py::test_output_unchanged[demo]",
    "tests/io/test_samples_fast.py::test_the_columnar_reader_agrees_with_the_line_reader",
    "tests/measures/test_context_ragas.py::",
    "tests/compare/test_compare.py::test_many_queries_same_bytes_whatever_the_number_of_threads",
    "tests/judge/test_resume.py::test_sigkill_mid_run_resumes_without_losing_or_repeating",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW_TESTS):
            item.add_marker(pytest.mark.slow)


def pytest_report_header(config: pytest.Config) -> str:
    from shared_data import trec_eval_folder, trec_eval_missing

    missing = trec_eval_missing()
    return f"trec_eval's data: {trec_eval_folder()}" if missing is None else f"skipping the tests that need {missing}"
