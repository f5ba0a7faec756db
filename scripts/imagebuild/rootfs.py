"""The runtime's root filesystem, first layer of the image: the Debian packages unpacked, then
what their maintainer scripts would have made and a container needs (the merged-/usr links,
the CA bundle, the users), minus documentation nobody reads in a container."""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

from . import spec
from .debian import unpack

# Debian's merged /usr: /bin, /lib, ... are links into /usr (base-files makes them in trixie;
# made here first so every .deb unpacks through them).
MERGED_USR = ("bin", "lib", "lib64", "sbin")
# Documentation and data for tools the image does not have. The copyright files stay: they
# are the licences of what the image ships.
PRUNED = (
    "usr/share/man",
    "usr/share/info",
    "usr/share/lintian",
    "usr/share/bug",
    "usr/share/doc-base",
    "usr/share/locale",
    "usr/share/bash-completion",
)
CA_BUNDLE = "etc/ssl/certs/ca-certificates.crt"


def assemble(debs: Iterable[Path], dest: Path) -> None:
    dest.mkdir(parents=True)
    for name in MERGED_USR:
        (dest / "usr" / name).mkdir(parents=True, exist_ok=True)
        (dest / name).symlink_to(f"usr/{name}")
    for deb in debs:
        unpack(deb, dest)
    _prune(dest)
    _write_ca_bundle(dest)
    _write_users(dest)
    tmp = dest / "tmp"
    tmp.mkdir(exist_ok=True)
    tmp.chmod(0o1777)


def _prune(dest: Path) -> None:
    for relative in PRUNED:
        shutil.rmtree(dest / relative, ignore_errors=True)
    doc = dest / "usr/share/doc"
    for path in sorted(doc.rglob("*"), reverse=True):
        if path.name != "copyright" and not path.is_dir():
            path.unlink()
        elif path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()


def _write_ca_bundle(dest: Path) -> None:
    """What update-ca-certificates makes from ca-certificates' Mozilla set: every certificate
    in one PEM file, and the links the openssl package makes from OpenSSL's directory
    (/usr/lib/ssl, compiled into libssl) to it, so every TLS client finds it."""
    certificates = sorted((dest / "usr/share/ca-certificates").rglob("*.crt"))
    if not certificates:
        raise SystemExit("build-image: ca-certificates unpacked no certificate")
    bundle = dest / CA_BUNDLE
    bundle.parent.mkdir(parents=True, exist_ok=True)
    bundle.write_text("".join(c.read_text().rstrip("\n") + "\n" for c in certificates))
    openssl_dir = dest / "usr/lib/ssl"
    openssl_dir.mkdir(parents=True, exist_ok=True)
    (openssl_dir / "certs").symlink_to("/etc/ssl/certs")
    (openssl_dir / "cert.pem").symlink_to(f"/{CA_BUNDLE}")


def _write_users(dest: Path) -> None:
    """root and the unprivileged user, in the files glibc reads (no base-passwd postinst)."""
    uid, gid, user = spec.USER_ID, spec.GROUP_ID, spec.USER_NAME
    etc = dest / "etc"
    (etc / "passwd").write_text(
        "root:x:0:0:root:/root:/usr/sbin/nologin\n"
        f"{user}:x:{uid}:{gid}:{user}:{spec.HOME}:/usr/sbin/nologin\n"
    )
    (etc / "group").write_text(f"root:x:0:\n{user}:x:{gid}:\n")
    (etc / "nsswitch.conf").write_text(
        "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
        "networks: files\nprotocols: files\nservices: files\n"
    )
    (dest / "root").mkdir(mode=0o700, exist_ok=True)
    (dest / spec.HOME.lstrip("/")).mkdir(parents=True, mode=0o700)
