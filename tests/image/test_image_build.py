"""`make image` proven without a container engine: the archive it writes is a well-formed OCI
layout and docker-archive (digests, diff_ids, the name deploy/ uses) that containerd's importer
(`kind load image-archive`) and a docker-archive reader accept, and the image, unpacked as a
runtime unpacks it, runs volcano-py as its unprivileged user with only its own Python (no pip,
no shell): `--version`, a bundled example simulated (the same report as the host's), and the
three processes' and the certificate Job's `--help`. The build's time and the image's size
are printed (`-s`; README's "Development" records them)."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from image_rootfs import ROOT, BuiltImage, blob, build_and_unpack, spec, unavailable_reason

from volcano_py import __version__

pytestmark = pytest.mark.image
# Room for growth, not a target: 2026-11, 70 MB compressed, 312 MB unpacked.
MAX_COMPRESSED_BYTES = 100_000_000
EXAMPLE = "gang-deadlock.yaml"


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BuiltImage]:
    reason = unavailable_reason()
    if reason is not None:
        if os_environ_ci():
            pytest.fail(f"CI=true and the image cannot be built and run here: {reason}")
        pytest.skip(reason)
    built = build_and_unpack(tmp_path_factory.mktemp("image"))
    layers = built.oci_manifest["layers"]
    compressed = sum(layer["size"] for layer in layers)
    print(f"\nmake image: {built.build_seconds:.0f}s, {len(layers)} layers, "
          f"{compressed / 1e6:.1f} MB compressed\n{built.build_log.splitlines()[-1]}")  # fmt: skip
    yield built


def os_environ_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def sha256_file(path: Path, decompress: bool = False) -> str:
    digest = hashlib.sha256()
    with gzip.open(path) if decompress else path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def test_archive_is_an_oci_layout_and_a_docker_archive_of_the_same_image(image: BuiltImage) -> None:
    layout = image.rootfs.parent / "archive"
    assert json.loads((layout / "oci-layout").read_text()) == {"imageLayoutVersion": "1.0.0"}
    index = json.loads((layout / "index.json").read_text())
    (entry,) = index["manifests"]
    assert (
        entry["annotations"]["io.containerd.image.name"]
        == f"docker.io/library/volcano-py:{__version__}"
    )
    assert entry["annotations"]["org.opencontainers.image.ref.name"] == __version__
    assert entry["platform"] == {"architecture": "amd64", "os": "linux"}
    assert sha256_file(blob(layout, entry["digest"])) == entry["digest"]
    assert image.docker_manifest["RepoTags"] == [f"volcano-py:{__version__}"]
    config_digest = image.oci_manifest["config"]["digest"]
    assert image.docker_manifest["Config"] == f"blobs/{config_digest.replace(':', '/')}"
    assert sha256_file(blob(layout, config_digest)) == config_digest
    layers = image.oci_manifest["layers"]
    assert image.docker_manifest["Layers"] == [
        f"blobs/{layer['digest'].replace(':', '/')}" for layer in layers
    ]
    diff_ids = []
    for layer in layers:
        path = blob(layout, layer["digest"])
        assert layer["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
        assert (sha256_file(path), path.stat().st_size) == (layer["digest"], layer["size"])
        diff_ids.append(sha256_file(path, decompress=True))
    assert image.config["rootfs"] == {"type": "layers", "diff_ids": diff_ids}
    assert sum(layer["size"] for layer in layers) < MAX_COMPRESSED_BYTES


def test_containerd_imports_it_and_the_docker_archive_reader_validates_it(
    image: BuiltImage, tmp_path: Path
) -> None:
    """What `kind load image-archive` runs on the node (containerd's archive importer), and a
    docker-archive reader (go-containerregistry's, reading manifest.json as the classic
    `docker load` does), both real code built from their Go modules by
    scripts/archive-check-bin.sh."""
    built = subprocess.run(["bash", str(ROOT / "scripts" / "archive-check-bin.sh")],
                           capture_output=True, text=True, timeout=1800)  # fmt: skip
    if built.returncode == 3:
        if os_environ_ci():
            pytest.fail(f"CI=true and the archive checker cannot be built: {built.stderr}")
        pytest.skip(built.stderr.strip())
    assert built.returncode == 0, built.stderr
    checker = built.stdout.splitlines()[-1]
    checked = subprocess.run([checker, str(image.archive), str(tmp_path / "content")],
                             capture_output=True, text=True)  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    (imported,) = json.loads(checked.stdout)["images"]
    assert imported["name"] == f"docker.io/library/volcano-py:{__version__}"
    assert imported["manifest"] == image.oci_manifest
    assert imported["diff_ids"] == image.config["rootfs"]["diff_ids"]


def test_config_runs_volcano_py_as_the_unprivileged_user(image: BuiltImage) -> None:
    config = image.config["config"]
    assert config["User"] == f"{spec.USER_ID}:{spec.GROUP_ID}" and spec.USER_ID != 0
    assert config["Entrypoint"] == ["volcano-py"]
    assert config["Cmd"][0] == "scheduler"
    assert image.env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert image.config["architecture"] == "amd64" and image.config["os"] == "linux"
    assert config["Labels"]["org.opencontainers.image.version"] == __version__


def test_version(image: BuiltImage) -> None:
    assert image.run(["--version"]).stdout.strip() == f"volcano-py {__version__}"


def test_only_the_images_python_as_its_user(image: BuiltImage) -> None:
    probe = (
        "import importlib.util, json, os, ssl, sys, volcano_py;"
        "print(json.dumps({'uid': os.getuid(), 'gid': os.getgid(), 'exe': sys.executable,"
        " 'version': sys.version_info[:2], 'path': sys.path, 'package': volcano_py.__file__,"
        " 'cas': ssl.create_default_context().cert_store_stats()['x509_ca'],"
        " 'root_writable': os.access('/', os.W_OK),"
        " 'pip': importlib.util.find_spec('pip') is not None,"
        " 'shell': os.path.exists('/bin/sh')}))"
    )
    seen = json.loads(image.run([spec.PYTHON, "-c", probe]).stdout)
    assert (seen["uid"], seen["gid"]) == (spec.USER_ID, spec.GROUP_ID)
    assert seen["exe"] == spec.PYTHON
    assert seen["version"] == [int(n) for n in spec.PYTHON_VERSION.split(".")]
    assert seen["package"].startswith(f"{spec.SITE_PACKAGES}/volcano_py/")
    # Inside the image's root, only the image's own directories are on sys.path.
    assert all(
        p == "" or p.startswith(("/usr/lib/python", "/usr/local/lib/python")) for p in seen["path"]
    )
    assert seen["cas"] > 100  # the CA bundle: TLS to Prometheus or an extender verifies
    assert seen["root_writable"] is False
    assert not seen["pip"] and not seen["shell"]  # the build's tools stayed in the build


def test_simulate_a_bundled_example_as_the_host_does(image: BuiltImage) -> None:
    (image.rootfs / "tmp" / EXAMPLE).write_bytes((ROOT / "examples" / EXAMPLE).read_bytes())
    inside = image.run(["simulate", f"/tmp/{EXAMPLE}"])
    host_cli = Path(sys.executable).parent / "volcano-py"
    outside = subprocess.run([str(host_cli), "simulate", str(ROOT / "examples" / EXAMPLE)],
                             capture_output=True, text=True, check=True)  # fmt: skip
    assert json.loads(inside.stdout) == json.loads(outside.stdout)
    assert json.loads(inside.stdout)["binds"]


# The three Deployments' processes, and the certificate Job's command.
@pytest.mark.parametrize(
    "process", ["scheduler", "controllers", "webhooks", "gen-admission-secret"]
)
def test_process_entrypoints_start(image: BuiltImage, process: str) -> None:
    shown = image.run([process, "--help"])
    assert shown.stdout.startswith(f"usage: volcano-py {process}")


def test_every_module_is_compiled_and_nothing_is_written_at_run_time(image: BuiltImage) -> None:
    """The pods' root filesystem is read-only: every module's bytecode was compiled at build
    time for the image's Python (importing writes none)."""
    tag = f"cpython-{spec.PYTHON_VERSION.replace('.', '')}"
    for tree in (spec.SITE_PACKAGES, f"/usr/lib/python{spec.PYTHON_VERSION}"):
        root = image.rootfs / tree.lstrip("/")
        missing = [
            str(source.relative_to(root))
            for source in root.rglob("*.py")
            if not (source.parent / "__pycache__" / f"{source.stem}.{tag}.pyc").exists()
        ]
        assert not missing[:5], f"{len(missing)} modules without bytecode under {tree}"
