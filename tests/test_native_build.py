"""ctxeval's compiled kernels (the TREC scanner, the id hashes) are built wherever a C compiler is (a
build that failed unseen would leave the other tests of the kernels skipped and large files read
slowly)."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ctxeval import _native
from ctxeval._core.ids import ArrayIds, splitmix

ROOT = Path(__file__).resolve().parents[1]


def test_the_kernels_are_built_wherever_a_compiler_is() -> None:
    """`pip install` (the editable one of the README's test command too) builds it with the C
    compiler Python was built with (hatch_build.py)."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if os.environ.get("CTXEVAL_NATIVE") == "0" or shutil.which(cc) is None:
        pytest.skip("no C compiler here, or the kernels turned off")
    assert _native.available(), _native.status()


# ---------------------------------------------------------------- the build hook and what it records
def _hook() -> Any:
    """hatch_build.py (the repository's build hook) as a module, for its helpers."""
    spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_glibc_versions_the_library_needs_are_those_objdump_lists() -> None:
    """The wheel's manylinux tag comes from the newest GLIBC_ version the library requires; the ELF
    reader that finds it against binutils' objdump -T (another reading of the same tables)."""
    lib = Path(_native.__file__).with_name(_native.LIBRARY)
    if not lib.is_file() or shutil.which("objdump") is None:
        pytest.skip("no built library or no objdump here")
    listed = subprocess.run(["objdump", "-T", str(lib)], capture_output=True, text=True, check=True).stdout
    versions = {tuple(int(x) for x in v.split(".")[:2]) for v in re.findall(r"\(GLIBC_([0-9.]+)\)", listed)}
    hook = _hook()
    assert hook.glibc_needed(lib) == max(versions)
    tag = hook.platform_tag(lib, "linux_x86_64")
    want = max(max(versions), hook.MANYLINUX_FLOOR)
    assert tag == f"manylinux_{want[0]}_{want[1]}_x86_64"
    assert hook.platform_tag(lib, "macosx_11_0_arm64") == "macosx_11_0_arm64"
    assert hook.glibc_needed(ROOT / "hatch_build.py") is None  # not ELF


def test_version_says_why_the_kernels_are_not_there(tmp_path: Path) -> None:
    """A library the build did not make: the build's own word (no compiler, or a compiler that
    failed), else that it is not built."""
    path = str(tmp_path / _native.LIBRARY)
    assert _native.load(path)[1].startswith("not built (no C compiler when ctxeval was installed, or")
    (tmp_path / _native.STATUS).write_text("not built (a C compiler, cc, was found and failed: boom)\n")
    assert _native.load(path) == (None, "not built (a C compiler, cc, was found and failed: boom)")


def test_the_hashes_take_only_the_dtypes_they_read() -> None:
    """ctx_hash_be64 reads 8 big-endian bytes a row: any other array (little-endian, 4-byte, two
    dimensions) is refused before the call, never read past its end; ArrayIds holds no other."""
    if not _native.available():
        pytest.skip(f"compiled kernels {_native.status()}")
    ok = np.arange(5, dtype=">u8")
    assert _native.hash_be64(ok).tolist() == splitmix(ok.astype(np.uint64)).tolist()
    for bad in (np.arange(5, dtype="<u8"), np.arange(5, dtype=np.uint32), ok.reshape(5, 1), np.arange(5)):
        with pytest.raises(TypeError):
            _native.hash_be64(bad)
        with pytest.raises(TypeError):
            ArrayIds(bad)
    with pytest.raises(TypeError):
        _native.hash_bytes(np.array(["a", "b"]))  # 'U' (4 bytes a character), not 'S'


@pytest.mark.slow
@pytest.mark.parametrize("cc", ["", "false"])
def test_a_wheel_is_built_away_from_the_source_tree(cc: str, tmp_path: Path) -> None:
    """``pip wheel .``: the library is compiled in a temporary folder (the checkout's src/ is not
    written to), the wheel is tagged manylinux_2_X; with a compiler that fails, the wheel says so."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    src = ROOT / "src" / "ctxeval"
    before = {p.name: p.stat().st_mtime_ns for p in src.iterdir()}
    env = {**os.environ, "CC": cc} if cc else dict(os.environ)
    cmd = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {p.name: p.stat().st_mtime_ns for p in src.iterdir()} == before
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        if cc == "false":
            assert wheel.name.endswith("-py3-none-any.whl")
            status = zf.read(f"ctxeval/{_native.STATUS}").decode()
            assert status.startswith("not built (a C compiler, false, was found and failed")
        else:
            assert re.search(r"-py3-none-manylinux_2_\d+_\w+\.whl$", wheel.name), wheel.name
            assert f"ctxeval/{_native.LIBRARY}" in names and f"ctxeval/{_native.STATUS}" not in names
