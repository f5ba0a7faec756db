"""The image `make image` builds, as a test uses it: built once per session into a temporary
directory (the downloads and the Debian base layer cached under ~/.cache/volcano-py-image, as
`make image` caches them), unpacked from its archive as a container runtime would (manifest.json
→ layers in order), and commands run inside it as the image's user with chroot (root) or an
unprivileged user namespace (unshare --root), never with a file of the host's Python
reachable."""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from imagebuild import spec  # scripts/ is on sys.path (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]

__all__ = ["ROOT", "BuiltImage", "blob", "build_and_unpack", "spec", "unavailable_reason"]


@dataclass(frozen=True)
class BuiltImage:
    archive: Path
    rootfs: Path
    config: dict[str, Any]
    oci_manifest: dict[str, Any]
    docker_manifest: dict[str, Any]
    build_seconds: float
    build_log: str

    @property
    def user(self) -> tuple[int, int]:
        uid, gid = self.config["config"]["User"].split(":")
        return int(uid), int(gid)

    @property
    def env(self) -> dict[str, str]:
        return dict(item.split("=", 1) for item in self.config["config"]["Env"])

    def command(self, args: Sequence[str]) -> list[str]:
        """`args` (the entrypoint's arguments, or a command when it starts with "/") run in the
        image as its user, the image's environment only."""
        argv = (
            list(args)
            if args and args[0].startswith("/")
            else [*self.config["config"]["Entrypoint"], *args]
        )
        uid, gid = self.user
        env = ["env", "-i", *(f"{k}={v}" for k, v in self.env.items())]
        if os.geteuid() == 0:
            return [
                *env,
                shutil.which("chroot") or "/usr/sbin/chroot",
                f"--userspec={uid}:{gid}",
                str(self.rootfs),
                *argv,
            ]
        return [*env, "unshare", "--user", f"--map-user={uid}", f"--map-group={gid}",
                f"--root={self.rootfs}", "--wd=/", *argv]  # fmt: skip

    def run(self, args: Sequence[str], check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(args), capture_output=True, text=True, check=check, timeout=120
        )


def unavailable_reason() -> str | None:
    """Why the image cannot be built and run here, or None."""
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        return "the image build runs the image's amd64 Python: needs an x86_64 Linux host"
    if os.geteuid() != 0:
        probe = subprocess.run(
            ["unshare", "--user", "--map-root-user", "true"], capture_output=True
        )
        if probe.returncode != 0:
            return "running the image needs root (chroot) or user namespaces (unshare --user)"
    return None


def build_and_unpack(work: Path) -> BuiltImage:
    archive = work / "image.tar"
    began = time.monotonic()
    built = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_image.py"), "--output", str(archive)],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    seconds = time.monotonic() - began
    if built.returncode != 0:
        raise AssertionError(f"make image failed:\n{built.stderr[-4000:]}")
    layout = work / "archive"
    with tarfile.open(archive) as tar:
        tar.extractall(layout, filter="data")
    docker_manifest = json.loads((layout / "manifest.json").read_text())[0]
    index = json.loads((layout / "index.json").read_text())
    oci_manifest = json.loads(blob(layout, index["manifests"][0]["digest"]).read_text())
    config = json.loads((layout / docker_manifest["Config"]).read_text())
    rootfs = work / "rootfs"
    rootfs.mkdir()
    for layer in docker_manifest["Layers"]:
        with tarfile.open(layout / layer) as tar:
            # Our own layers: ownership, modes (the sticky /tmp) and links kept as built.
            tar.extractall(rootfs, numeric_owner=True, filter="fully_trusted")
    return BuiltImage(archive, rootfs, config, oci_manifest, docker_manifest, seconds, built.stderr)


def blob(layout: Path, digest: str) -> Path:
    return layout / "blobs" / digest.replace(":", "/", 1)
