"""HTTP downloads into the build cache: atomic (a partial file never looks complete), checked
against a known SHA-256 when one is given."""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.request
from pathlib import Path

TIMEOUT_SECONDS = 60


def log(message: str) -> None:
    print(f"build-image: {message}", file=sys.stderr, flush=True)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def download(url: str, dest: Path, sha256: str | None = None, fresh: bool = False) -> Path:
    """`dest` holding `url`'s content; reused when it is already there with the right hash
    (or any content, when no hash is known), unless `fresh` asks for it again."""
    if not fresh and dest.exists() and (sha256 is None or sha256_of(dest) == sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + f".part{os.getpid()}")
    try:
        with (
            urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response,
            partial.open("wb") as out,
        ):
            while chunk := response.read(1 << 20):
                out.write(chunk)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise SystemExit(f"build-image: cannot download {url}: {error}") from None
    if sha256 is not None and (got := sha256_of(partial)) != sha256:
        partial.unlink()
        raise SystemExit(f"build-image: {url}: sha256 {got}, expected {sha256}")
    partial.replace(dest)
    return dest
