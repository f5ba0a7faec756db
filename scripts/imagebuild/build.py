"""`make image`: the two layers (cached Debian runtime, then the wheels), the config and the
archive. Prints the archive's path on its last line of stdout; progress goes to stderr."""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from . import debian, oci, rootfs, spec, target_python, wheels
from .fetch import log
from .layer import Layer, write_layer

SOURCES = Path(__file__).resolve().parent


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "volcano-py-image"


def source_date_epoch() -> int:
    """Every file's mtime and the image's creation time: SOURCE_DATE_EPOCH, else 0 (as ko and
    rules_oci do), so a rebuild from the same inputs gives the same digests."""
    return int(os.environ.get("SOURCE_DATE_EPOCH", "0"))


def _base_key(packages: list[debian.Package], epoch: int) -> str:
    """The base layer depends on the .debs, the build code and the epoch only."""
    digest = hashlib.sha256(f"epoch={epoch}\n".encode())
    for package in packages:
        digest.update(f"{package.name} {package.sha256}\n".encode())
    for source in sorted(SOURCES.glob("*.py")):
        if source.name not in ("wheels.py", "oci.py", "build.py"):
            digest.update(source.read_bytes())
    return digest.hexdigest()[:24]


def base_layer(cache: Path, refresh: bool, epoch: int) -> tuple[Path, Layer, list[debian.Package]]:
    """The Debian runtime (unpacked, for the image's Python to run from, and as a layer),
    rebuilt only when a package, the build code or the epoch changed."""
    index = debian.load_index(
        debian.suites(spec.DEBIAN_MIRROR, spec.DEBIAN_SECURITY_MIRROR, spec.DEBIAN_SUITE),
        spec.ARCHITECTURE,
        cache / "debian-index",
        refresh,
    )
    packages = debian.resolve(index, spec.DEBIAN_ROOTS, spec.DEBIAN_EXCLUDED)
    where = cache / "base" / _base_key(packages, epoch)
    record = where / "layer.json"
    if record.exists():
        log(f"base layer: cached ({where})")
        fields = json.loads(record.read_text())
        fields["path"] = where / "layer.tar.gz"
        return where / "rootfs", Layer(**fields), packages
    log(f"base layer: {len(packages)} Debian {spec.DEBIAN_SUITE} packages")
    debs = debian.fetch(packages, cache / "debs")
    shutil.rmtree(cache / "base", ignore_errors=True)  # older keys: one base is kept
    work = where.with_name(where.name + ".part")
    rootfs.assemble(debs, work / "rootfs")
    target_python.compile_bytecode(
        work / "rootfs", work / "rootfs", [f"/usr/lib/python{spec.PYTHON_VERSION}"]
    )
    layer = write_layer(
        work / "rootfs",
        work / "layer.tar.gz",
        epoch,
        {spec.HOME.lstrip("/"): (spec.USER_ID, spec.GROUP_ID)},
    )
    fields = {k: v for k, v in asdict(layer).items() if k != "path"}
    (work / "layer.json").write_text(json.dumps(fields))
    work.replace(where)
    return where / "rootfs", Layer(**{**fields, "path": where / "layer.tar.gz"}), packages


def build(out: Path, reference: str, cache: Path, refresh: bool) -> Path:
    """One build at a time per cache (`make image` and the test may run together): a second
    waits, then finds the base layer made."""
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _build(out, reference, cache, refresh)


def _build(out: Path, reference: str, cache: Path, refresh: bool) -> Path:
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        raise SystemExit(
            "build-image: needs an x86_64 Linux host (the image's own amd64 Python "
            "resolves and compiles its wheels)"
        )
    began = time.monotonic()
    epoch = source_date_epoch()
    base_root, base, packages = base_layer(cache, refresh, epoch)
    log(f"base layer ready ({time.monotonic() - began:.0f}s)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="volcano-py-image-", dir=out.parent) as tmp:
        work = Path(tmp)
        project = wheels.build_project_wheel(work / "project")
        found = wheels.resolve_and_fetch(base_root, cache, project, refresh)
        log(f"wheels: {wheels.describe(found)}")
        wheels.install_wheels(found, base_root, work / "app")
        app = write_layer(work / "app", work / "app.tar.gz", epoch)
        log(f"application layer ready ({time.monotonic() - began:.0f}s)")
        version = spec.package_version()
        labels = {
            "org.opencontainers.image.title": spec.NAME,
            "org.opencontainers.image.description": spec.DESCRIPTION,
            "org.opencontainers.image.version": version,
            "org.opencontainers.image.licenses": spec.LICENSE,
            "org.opencontainers.image.base.name": f"debian:{spec.DEBIAN_SUITE} (.debs, unpacked)",
        }
        history = [
            f"debian {spec.DEBIAN_SUITE}: " + " ".join(f"{p.name}={p.version}" for p in packages),
            f"pip wheels: {wheels.describe(found)}",
        ]
        config = oci.config(
            layers=[base, app],
            history=history,
            user=f"{spec.USER_ID}:{spec.GROUP_ID}",
            entrypoint=spec.ENTRYPOINT,
            cmd=spec.CMD,
            env=spec.ENVIRONMENT,
            labels=labels,
            epoch=epoch,
            architecture=spec.ARCHITECTURE,
        )
        digest = oci.write_archive(
            out,
            reference=reference,
            config_blob=config,
            layers=[base, app],
            architecture=spec.ARCHITECTURE,
            epoch=epoch,
        )
    unpacked = base.uncompressed_size + app.uncompressed_size
    log(
        f"{reference} ({digest}): {out}, {out.stat().st_size / 1e6:.1f} MB archive, "
        f"{(base.size + app.size) / 1e6:.1f} MB compressed layers, {unpacked / 1e6:.1f} MB "
        f"unpacked, in {time.monotonic() - began:.0f}s"
    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build_image.py", description=__doc__)
    parser.add_argument("--tag", default=spec.image_reference(), help="name:tag (%(default)s)")
    parser.add_argument("--output", type=Path, help="the archive (build/<name>_<tag>.tar)")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=default_cache(),
        help="downloads and the base layer (%(default)s)",
    )
    parser.add_argument(
        "--refresh",
        action="store_true",
        help="fetch Debian's indices and resolve the wheels on PyPI now",
    )
    args = parser.parse_args(argv)
    output = args.output or spec.ROOT / "build" / (
        args.tag.replace(":", "_").replace("/", "_") + ".tar"
    )
    print(build(output.resolve(), args.tag, args.cache_dir, args.refresh))
    return 0


if __name__ == "__main__":
    sys.exit(main())
