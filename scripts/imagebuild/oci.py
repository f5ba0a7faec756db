"""The image as one archive both loaders read: an OCI image layout (oci-layout, index.json,
blobs/sha256/...: what containerd's import, hence `kind load image-archive`, and `docker load`
with the containerd image store use) that is also a docker-archive (manifest.json naming the
config and layers by their blob paths: what the classic `docker load` reads). `docker save`
writes the same shape since Docker 25. Layers are gzip-compressed tars; the config's diff_ids
are the uncompressed digests."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

from .layer import Layer

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar+gzip"


def _canonical(document: object) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def _descriptor(media_type: str, blob: bytes) -> dict[str, object]:
    return {
        "mediaType": media_type,
        "digest": f"sha256:{hashlib.sha256(blob).hexdigest()}",
        "size": len(blob),
    }


def _blob_path(digest: str) -> str:
    return "blobs/" + digest.replace(":", "/", 1)


def config(
    *,
    layers: Sequence[Layer],
    history: Sequence[str],
    user: str,
    entrypoint: Sequence[str],
    cmd: Sequence[str],
    env: Mapping[str, str],
    labels: Mapping[str, str],
    epoch: int,
    architecture: str,
) -> bytes:
    created = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return _canonical(
        {
            "architecture": architecture,
            "os": "linux",
            "created": created,
            "config": {
                "User": user,
                "Entrypoint": list(entrypoint),
                "Cmd": list(cmd),
                "Env": [f"{k}={v}" for k, v in env.items()],
                "Labels": dict(labels),
                "WorkingDir": "/",
            },
            "rootfs": {"type": "layers", "diff_ids": [layer.diff_id for layer in layers]},
            "history": [{"created": created, "created_by": step} for step in history],
        }
    )


def write_archive(
    out: Path,
    *,
    reference: str,
    config_blob: bytes,
    layers: Sequence[Layer],
    architecture: str,
    epoch: int,
) -> str:
    """The archive at `out`, the image named `reference` (name:tag); returns the manifest's
    digest (what `docker images --digests` and containerd show)."""
    name, tag = reference.rsplit(":", 1)
    config_descriptor = _descriptor(CONFIG_TYPE, config_blob)
    manifest = _canonical(
        {
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": config_descriptor,
            "layers": [
                {"mediaType": LAYER_TYPE, "digest": layer.digest, "size": layer.size}
                for layer in layers
            ],
        }
    )
    manifest_descriptor = _descriptor(MANIFEST_TYPE, manifest)
    full_name = name if "/" in name else f"docker.io/library/{name}"
    index = _canonical(
        {
            "schemaVersion": 2,
            "mediaType": INDEX_TYPE,
            "manifests": [
                {
                    **manifest_descriptor,
                    "platform": {"architecture": architecture, "os": "linux"},
                    "annotations": {
                        "io.containerd.image.name": f"{full_name}:{tag}",
                        "org.opencontainers.image.ref.name": tag,
                    },
                }
            ],
        }
    )
    docker_manifest = _canonical(
        [
            {
                "Config": _blob_path(str(config_descriptor["digest"])),
                "RepoTags": [reference],
                "Layers": [_blob_path(layer.digest) for layer in layers],
            }
        ]
    )
    small = {
        "oci-layout": _canonical({"imageLayoutVersion": "1.0.0"}),
        "index.json": index,
        "manifest.json": docker_manifest,
        _blob_path(str(config_descriptor["digest"])): config_blob,
        _blob_path(str(manifest_descriptor["digest"])): manifest,
    }
    entries: dict[str, bytes | Path] = {
        **small,
        **{_blob_path(layer.digest): layer.path for layer in layers},
    }
    partial = out.with_name(out.name + ".part")
    with tarfile.open(partial, "w", format=tarfile.PAX_FORMAT) as tar:
        for directory in ("blobs", "blobs/sha256"):
            info = tarfile.TarInfo(directory)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, epoch
            tar.addfile(info)
        for path in sorted(entries):
            content = entries[path]
            info = tarfile.TarInfo(path)
            info.mode, info.mtime = 0o644, epoch
            if isinstance(content, Path):
                info.size = content.stat().st_size
                with content.open("rb") as stream:
                    tar.addfile(info, stream)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    partial.replace(out)
    return str(manifest_descriptor["digest"])
