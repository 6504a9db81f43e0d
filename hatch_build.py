"""Build hook: compiles ctxeval's kernels (src/ctxeval/_native.c: the TREC scanner, the id hashes) when
the wheel or the editable install is built.

They are a plain C library loaded with ctypes (no Python headers, no link against Python): one
compiler call. Without a C compiler ctxeval still installs and works, with the same results,
reading large TREC files more slowly; the build then says so. ``CC`` picks the compiler (default:
the one Python was built with, else ``cc``); ``CTXEVAL_NO_NATIVE=1`` skips the build.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sysconfig
import zlib
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface
from packaging.tags import sys_tags

SOURCE = Path("src/ctxeval/_native.c")
FLAGS = ["-O3", "-std=c99", "-shared", "-fPIC", "-fvisibility=default"]


def library_name() -> str:  # as ctxeval/_native.py's LIBRARY (not importable as a Python module)
    return "libctxeval_native" + (".dll" if os.name == "nt" else ".so")


def compiler() -> list[str] | None:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    cmd = shlex.split(cc)
    return cmd if cmd and shutil.which(cmd[0]) else None


class NativeScannerHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        source = root / SOURCE
        out = source.with_name(library_name())
        if os.environ.get("CTXEVAL_NO_NATIVE") == "1":
            return
        cc = compiler()
        if cc is None:
            self.app.display_warning(
                "ctxeval: no C compiler found (set CC): ctxeval's compiled kernels are not built; ctxeval "
                "works without them, reading large TREC files more slowly"
            )
            return
        digest = f"{zlib.crc32(source.read_bytes()):08x}"
        cmd = [*cc, *FLAGS, f'-DCTX_SOURCE_CRC="{digest}"', "-o", str(out), str(source)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            self.app.display_warning(
                "ctxeval: the compiled kernels did not compile; ctxeval works without them, reading large TREC "
                f"files more slowly.\n{' '.join(cmd)}\n{done.stderr.strip()[-2000:]}"
            )
            return
        if version != "editable":  # an editable install reads it where it was built, in the source tree
            build_data["force_include"][str(out)] = f"ctxeval/{out.name}"
            build_data["pure_python"] = False
            # a plain C library, not a Python extension: any Python 3, this platform only
            build_data["tag"] = f"py3-none-{next(sys_tags()).platform}"
