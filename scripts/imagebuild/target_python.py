"""The image's own Python, run on the build host from the unpacked root filesystem through the
root filesystem's dynamic loader and libraries (no chroot, no root, no container engine; an
x86_64 Linux host). It resolves the wheels (environment markers evaluated for the image's
Python, not the host's) and compiles the bytecode (the image's Python's magic number)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from . import spec

LIBRARY_DIR = "usr/lib/x86_64-linux-gnu"
LOADER = f"{LIBRARY_DIR}/ld-linux-x86-64.so.2"


def command(rootfs: Path, args: Sequence[str]) -> list[str]:
    return [
        str(rootfs / LOADER),
        "--library-path",
        str(rootfs / LIBRARY_DIR),
        str(rootfs / spec.PYTHON.lstrip("/")),
        "-s",
        *args,
    ]


def environment(rootfs: Path) -> dict[str, str]:
    """The host's environment minus every Python variable, with PYTHONHOME at the root
    filesystem's /usr, so nothing of the host's Python is on sys.path."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))
    }
    env["PYTHONHOME"] = str(rootfs / "usr")
    env["PYTHONNOUSERSITE"] = "1"
    # What it imports must not leave timestamp .pyc files (with the build's paths) behind for
    # compileall to take as up to date.
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run(rootfs: Path, args: Sequence[str], quiet: bool = False) -> None:
    """Runs the image's Python with `args`; its stdout dropped when `quiet`."""
    subprocess.run(
        command(rootfs, args),
        env=environment(rootfs),
        check=True,
        stdout=subprocess.DEVNULL if quiet else None,
    )


# compileall's workers would start new interpreters through sys.executable, which is not
# runnable without the loader: one process. A module that is a link to an absolute path (Debian's
# sitecustomize.py -> /etc/python3.X/...) is compiled from the root filesystem's target, which
# compileall would look for on the host.
_COMPILE = """
import compileall, importlib.util, os, py_compile, sys
root = sys.argv[1]
mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
ok = True
for directory in sys.argv[2:]:
    ok &= bool(compileall.compile_dir(directory, quiet=1, stripdir=root, prependdir="/",
                                      invalidation_mode=mode, workers=1, force=True))
    for base, _dirs, files in os.walk(directory):
        for name in files:
            path = os.path.join(base, name)
            if name.endswith(".py") and os.path.islink(path) and os.readlink(path).startswith("/"):
                py_compile.compile(root + os.readlink(path), importlib.util.cache_from_source(path),
                                   dfile="/" + os.path.relpath(path, root), doraise=True,
                                   invalidation_mode=mode)
sys.exit(0 if ok else 1)
"""


def compile_bytecode(python_root: Path, tree_root: Path, directories: Sequence[str]) -> None:
    """Every .py under `tree_root`/`directories` compiled for the image's Python, the paths in
    the .pyc files as they are in the image. Unchecked-hash .pyc files: valid whatever the
    files' mtimes (the layers fix them), never re-checked against the source (the image's
    files do not change)."""
    targets = [str(tree_root / d.lstrip("/")) for d in directories]
    run(python_root, ["-c", _COMPILE, str(tree_root), *targets])
