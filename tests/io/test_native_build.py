"""The native TREC scanner is built wherever a C compiler is (not skipped when it is missing: a build
that failed unseen would leave every other native test skipped and large files read slowly)."""

from __future__ import annotations

import os
import shutil
import sysconfig

import pytest

from ctxeval._io import native


def test_the_scanner_is_built_wherever_a_compiler_is() -> None:
    """`pip install` (the editable one of the README's test command too) builds it with the C
    compiler Python was built with (hatch_build.py)."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if os.environ.get("CTXEVAL_NATIVE") == "0" or shutil.which(cc) is None:
        pytest.skip("no C compiler here, or the scanner turned off")
    assert native.available(), native.status()
