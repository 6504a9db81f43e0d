"""ctxeval's compiled kernels (the TREC scanner, the id hashes) are built wherever a C compiler is (a
build that failed unseen would leave the other tests of the kernels skipped and large files read
slowly)."""

from __future__ import annotations

import os
import shutil
import sysconfig

import pytest

from ctxeval import _native


def test_the_kernels_are_built_wherever_a_compiler_is() -> None:
    """`pip install` (the editable one of the README's test command too) builds it with the C
    compiler Python was built with (hatch_build.py)."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if os.environ.get("CTXEVAL_NATIVE") == "0" or shutil.which(cc) is None:
        pytest.skip("no C compiler here, or the kernels turned off")
    assert _native.available(), _native.status()
