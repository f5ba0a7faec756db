"""A directory as an image layer: a tar with sorted entries, one fixed mtime, root ownership
(but for the paths a caller names), no host user names; gzip-compressed without a timestamp.
The same directory gives the same bytes, so the same digests."""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import tarfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

GZIP_LEVEL = 6  # zlib's default: a third of level 9's time for about 1% more bytes


@dataclass(frozen=True)
class Layer:
    path: Path  # the .tar.gz
    digest: str  # sha256 of the compressed bytes: the manifest's layer digest
    diff_id: str  # sha256 of the uncompressed tar: the config's rootfs.diff_ids
    size: int  # compressed bytes
    uncompressed_size: int


class _Hashing:
    """A write-only stream that hashes and counts what passes through it."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.size += len(data)
        return self.inner.write(data)  # type: ignore[attr-defined, no-any-return]

    def flush(self) -> None:
        self.inner.flush()  # type: ignore[attr-defined]


def _walk(root: Path) -> Iterator[Path]:
    """Every path under root, parents before children, siblings by name."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        base = Path(dirpath)
        for name in sorted(dirnames + filenames):
            yield base / name


def write_layer(
    root: Path, out: Path, mtime: int, owners: Mapping[str, tuple[int, int]] | None = None
) -> Layer:
    """`root`'s tree as the layer `out`; `owners` maps paths (relative, no leading slash) to
    the uid and gid they belong to, everything else being root's."""
    owners = owners or {}
    with out.open("wb") as raw:
        compressed = _Hashing(raw)
        with gzip.GzipFile(
            filename="",
            mode="wb",
            fileobj=compressed,
            compresslevel=GZIP_LEVEL,
            mtime=0,
        ) as gz:
            plain = _Hashing(gz)
            with tarfile.open(fileobj=plain, mode="w|", format=tarfile.PAX_FORMAT) as tar:  # type: ignore[call-overload]
                for path in _walk(root):
                    name = path.relative_to(root).as_posix()
                    info = tar.gettarinfo(str(path), arcname=name)
                    info.mtime = mtime
                    info.uid, info.gid = owners.get(name, (0, 0))
                    info.uname = info.gname = ""
                    info.mode = stat.S_IMODE(path.lstat().st_mode)
                    if info.isreg():
                        with path.open("rb") as content:
                            tar.addfile(info, content)
                    else:
                        tar.addfile(info)
    return Layer(
        out,
        f"sha256:{compressed.sha256.hexdigest()}",
        f"sha256:{plain.sha256.hexdigest()}",
        compressed.size,
        plain.size,
    )
