"""Build hook: compiles ctxeval's kernels (src/ctxeval/_native.c: the TREC scanner, the id hashes) when
the wheel or the editable install is built.

They are a plain C library loaded with ctypes (no Python headers, no link against Python): one
compiler call. Without a C compiler ctxeval still installs and works, with the same results,
reading large TREC files more slowly; the build then says so. ``CC`` picks the compiler (default:
the one Python was built with, else ``cc``); ``CTXEVAL_NO_NATIVE=1`` skips the build.

* A **wheel** compiles in a temporary folder and takes the library from there: the source tree is never
  written to. An **editable install** compiles beside ``_native.py`` in ``src/`` (that is where it is
  read from).
* When the library is not built, a one-line file beside where it would be (:data:`STATUS`) says why:
  no compiler, the compiler failed, or the build turned off; ``ctxeval --version`` prints it.
* The wheel is tagged for what the library needs: on Linux with glibc, ``manylinux_2_X_<arch>`` where
  2.X is the newest ``GLIBC_`` symbol version the library requires (read from its ELF version
  needs, :func:`glibc_needed`), at least 2.17 (the oldest baseline the package index's current
  tools name); elsewhere the platform's own tag. The library needs libc alone.
"""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import struct
import subprocess
import sysconfig
import tempfile
import zlib
from pathlib import Path
from typing import Any

from packaging.tags import sys_tags

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # the tests import this file for its helpers, without hatchling
    BuildHookInterface = object  # type: ignore[assignment,misc]

SOURCE = Path("src/ctxeval/_native.c")
FLAGS = ["-O3", "-std=c99", "-shared", "-fPIC", "-fvisibility=default"]
STATUS = "libctxeval_native.status"  #: why the library is not built (read by ctxeval/_native.py)
MANYLINUX_FLOOR = (2, 17)


def library_name() -> str:  # as ctxeval/_native.py's LIBRARY (not importable as a Python module)
    return "libctxeval_native" + (".dll" if os.name == "nt" else ".so")


def compiler() -> list[str] | None:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    cmd = shlex.split(cc)
    return cmd if cmd and shutil.which(cmd[0]) else None


def glibc_needed(path: Path) -> tuple[int, int] | None:
    """The newest ``GLIBC_x.y`` version an ELF shared library requires (its ``.gnu.version_r``
    entries, as ``objdump -T`` lists them), or None (not ELF, or no glibc version needed)."""
    data = path.read_bytes()
    if data[:4] != b"\x7fELF":
        return None
    wide, e = data[4] == 2, "<" if data[5] == 1 else ">"
    if wide:
        (shoff,) = struct.unpack_from(e + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(e + "HH", data, 0x3A)
        section = e + "IIQQQQII"
    else:
        (shoff,) = struct.unpack_from(e + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(e + "HH", data, 0x2E)
        section = e + "IIIIIIII"
    # (name, type, flags, addr, offset, size, link, info) of every section
    sections = [struct.unpack_from(section, data, shoff + i * shentsize) for i in range(shnum)]
    found: list[tuple[int, int]] = []
    for _, kind, _, _, offset, _, link, count in sections:
        if kind != 0x6FFFFFFE:  # SHT_GNU_verneed
            continue
        strings = sections[link][4]
        at = offset
        for _ in range(count):
            _, n_aux, _, aux, nxt = struct.unpack_from(e + "HHIII", data, at)
            where = at + aux
            for _ in range(n_aux):
                _, _, _, name, step = struct.unpack_from(e + "IHHII", data, where)
                text = data[strings + name : data.index(b"\0", strings + name)].decode("ascii", "replace")
                if text.startswith("GLIBC_") and text[6:].replace(".", "").isdigit():
                    parts = [int(x) for x in text[6:].split(".")]
                    found.append((parts[0], parts[1] if len(parts) > 1 else 0))
                where += step
            at += nxt
    return max(found) if found else None


def platform_tag(library: Path, default: str) -> str:
    """The wheel's platform tag for ``library`` (see the module docstring); ``default``: this
    platform's own tag (``linux_x86_64``, ``macosx_11_0_arm64`` ...)."""
    if not default.startswith("linux_") or platform.libc_ver()[0] != "glibc":
        return default
    need = glibc_needed(library)
    if need is None:
        return default
    major, minor = max(need, MANYLINUX_FLOOR)
    return f"manylinux_{major}_{minor}_{default[len('linux_') :]}"


class NativeScannerHook(BuildHookInterface):  # type: ignore[misc,valid-type]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        source = root / SOURCE
        editable = version == "editable"
        # an editable install reads the library where it is built, in the source tree; a wheel takes
        # it from a temporary folder and leaves the tree as it was
        folder = source.parent if editable else Path(tempfile.mkdtemp(prefix="ctxeval-native-"))
        self._scratch = None if editable else folder
        out, status = folder / library_name(), folder / STATUS
        reason = self._build(source, out)
        if reason is None:
            if editable:
                status.unlink(missing_ok=True)
                return
            build_data["force_include"][str(out)] = f"ctxeval/{out.name}"
            build_data["pure_python"] = False
            # a plain C library, not a Python extension: any Python 3, this platform (its libc) only
            build_data["tag"] = f"py3-none-{platform_tag(out, next(sys_tags()).platform)}"
            return
        status.write_text(reason + "\n")
        if not editable:
            build_data["force_include"][str(status)] = f"ctxeval/{STATUS}"

    def _build(self, source: Path, out: Path) -> str | None:
        """Compile ``source`` into ``out``; None, or why the library is not built."""
        if os.environ.get("CTXEVAL_NO_NATIVE") == "1":
            return "not built (CTXEVAL_NO_NATIVE=1 when ctxeval was installed)"
        cc = compiler()
        if cc is None:
            self.app.display_warning(
                "ctxeval: no C compiler found (set CC): ctxeval's compiled kernels are not built; ctxeval "
                "works without them, reading large TREC files more slowly"
            )
            return "not built (no C compiler found when ctxeval was installed: set CC, then reinstall)"
        digest = f"{zlib.crc32(source.read_bytes()):08x}"
        cmd = [*cc, *FLAGS, f'-DCTX_SOURCE_CRC="{digest}"', "-o", str(out), str(source)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            self.app.display_warning(
                "ctxeval: the compiled kernels did not compile; ctxeval works without them, reading large TREC "
                f"files more slowly.\n{' '.join(cmd)}\n{done.stderr.strip()[-2000:]}"
            )
            first = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[0][:200]
            return f"not built (a C compiler, {cc[0]}, was found and failed: {first})"
        return None

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if getattr(self, "_scratch", None) is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
