"""The image's second layer: the project's wheel and its dependencies' wheels, resolved by the
image's own Python (markers and wheel tags for Python 3.13 on Debian's glibc, whatever the host
runs) and installed with `installer` into /usr/local (scripts run /usr/bin/python3.13), every
module compiled to bytecode by the image's Python."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from installer import install
from installer.destinations import SchemeDictionaryDestination
from installer.sources import WheelFile

from . import spec, target_python
from .fetch import download, log

# Resolutions are repeated from the cached wheels alone for a day (offline, seconds), then
# against PyPI again (newer dependency releases); `--refresh` goes to PyPI at once.
RESOLUTION_MAX_AGE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Wheel:
    name: str
    version: str
    path: Path


def build_project_wheel(out: Path) -> Path:
    """`pip wheel --no-deps .` with the running Python (hatchling from the project's dev
    dependencies, no isolated build environment to download: works offline)."""
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(out),
            str(spec.ROOT),
        ],
        check=True,
    )
    wheels = sorted(out.glob("volcano_py-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"build-image: expected one volcano_py wheel in {out}, got {wheels}")
    return wheels[0]


def _pip_wheel(cache: Path) -> Path:
    """A pip for the image's Python to run from (pip runs from its own wheel file)."""
    tools = cache / "tools"
    found = sorted(tools.glob("pip-*.whl"))
    if not found:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                str(tools),
                "pip",
            ],
            check=True,
        )
        found = sorted(tools.glob("pip-*.whl"))
    return found[-1]


def _resolve(
    rootfs: Path, cache: Path, project_wheel: Path, offline: bool
) -> list[dict[str, object]]:
    report = cache / "pip-report.json"
    report.unlink(missing_ok=True)
    args = [
        str(_pip_wheel(cache) / "pip"),
        "install",
        "--dry-run",
        "--ignore-installed",
        "--quiet",
        "--disable-pip-version-check",
        "--only-binary=:all:",
        "--cache-dir",
        str(cache / "pip-cache"),
        "--report",
        str(report),
        "--find-links",
        str(project_wheel.parent),
    ]
    if offline:
        args += ["--no-index", "--find-links", str(cache / "wheels")]
    args.append(str(project_wheel))
    target_python.run(rootfs, args, quiet=True)
    installs: list[dict[str, object]] = json.loads(report.read_text())["install"]
    return installs


def resolve_and_fetch(rootfs: Path, cache: Path, project_wheel: Path, refresh: bool) -> list[Wheel]:
    """The wheels the project needs on the image's Python, from the cache or PyPI."""
    stamp = cache / "wheels" / ".resolved-online"
    fresh = stamp.exists() and time.time() - stamp.stat().st_mtime < RESOLUTION_MAX_AGE_SECONDS
    attempts = [True, False] if fresh and not refresh else [False, True]
    for offline in attempts:
        try:
            installs = _resolve(rootfs, cache, project_wheel, offline)
        except subprocess.CalledProcessError:
            if offline is attempts[-1]:
                raise SystemExit(
                    "build-image: pip could not resolve the project's dependencies "
                    "(offline from the cache, nor from PyPI)"
                ) from None
            log(
                "resolving "
                + (
                    "from the cached wheels failed; trying PyPI"
                    if offline
                    else "from PyPI failed; trying the cached wheels"
                )
            )
            continue
        if not offline:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.touch()
        break
    wheels = []
    for item in installs:
        metadata = item["metadata"]
        info = item["download_info"]
        assert isinstance(metadata, dict) and isinstance(info, dict)
        url = str(info["url"])
        if url.startswith("file://"):
            path = Path(url.removeprefix("file://"))
        else:
            hashes = info.get("archive_info", {}).get("hashes", {})
            path = download(url, cache / "wheels" / url.rsplit("/", 1)[1], hashes.get("sha256"))
        wheels.append(Wheel(str(metadata["name"]), str(metadata["version"]), path))
    return sorted(wheels, key=lambda w: w.name.lower())


def install_wheels(wheels: list[Wheel], rootfs: Path, stage: Path) -> None:
    """The wheels into `stage` as the image's /usr/local, then their bytecode compiled."""
    site = spec.SITE_PACKAGES
    scheme = {
        "purelib": site,
        "platlib": site,
        "scripts": spec.SCRIPTS,
        "data": "/usr/local",
        "headers": f"/usr/local/include/python{spec.PYTHON_VERSION}",
    }
    destination = SchemeDictionaryDestination(
        scheme, interpreter=spec.PYTHON, script_kind="posix", destdir=str(stage)
    )
    for wheel in wheels:
        with WheelFile.open(wheel.path) as source:
            install(source, destination, additional_metadata={"INSTALLER": b"volcano-py image\n"})
    target_python.compile_bytecode(rootfs, stage, [site])


def describe(wheels: list[Wheel]) -> str:
    return " ".join(f"{w.name}=={w.version}" for w in wheels)
