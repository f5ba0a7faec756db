"""Debian's archive as a package source: the release's package indices (signature checked with
gpgv against Debian's archive keyring when the host has both), dependency resolution from a few
root packages, the .debs downloaded (SHA-256 from the index) and unpacked without dpkg."""

from __future__ import annotations

import io
import lzma
import re
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .fetch import download, log, sha256_of

KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
# A cached index is used for a day, then fetched again (security updates land in
# <suite>-security); `--refresh` fetches at once.
INDEX_MAX_AGE_SECONDS = 24 * 3600


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    filename: str  # the pool path, relative to the mirror
    sha256: str
    mirror: str
    depends: tuple[tuple[str, ...], ...]  # each item: alternatives, first preferred
    provides: tuple[str, ...]

    @property
    def url(self) -> str:
        return f"{self.mirror}/{self.filename}"


@dataclass(frozen=True)
class Suite:
    mirror: str
    name: str  # trixie, trixie-updates, trixie-security


def suites(mirror: str, security_mirror: str, release: str) -> list[Suite]:
    """Lowest precedence first: a later suite's version of a package replaces an earlier one's
    (updates and security only ever hold newer versions than the release)."""
    return [
        Suite(mirror, release),
        Suite(mirror, f"{release}-updates"),
        Suite(security_mirror, f"{release}-security"),
    ]


def _verified_release(suite: Suite, cache: Path, refresh: bool) -> str:
    """The suite's InRelease text, its signature checked when gpgv and the keyring exist."""
    path = cache / f"{suite.name}.InRelease"
    stale = not path.exists() or time.time() - path.stat().st_mtime > INDEX_MAX_AGE_SECONDS
    if refresh or stale:
        try:
            download(f"{suite.mirror}/dists/{suite.name}/InRelease", path, fresh=True)
        except SystemExit as error:
            if not path.exists():
                raise
            log(f"{error}; using the cached {suite.name} index")
    if shutil.which("gpgv") and KEYRING.exists():
        checked = subprocess.run(
            ["gpgv", "--keyring", str(KEYRING), str(path)], capture_output=True, text=True
        )
        if checked.returncode != 0:
            path.unlink()
            raise SystemExit(
                f"build-image: {suite.name}/InRelease: bad signature:\n{checked.stderr}"
            )
    else:
        log(
            f"{suite.name}: InRelease signature not checked (no gpgv or {KEYRING}); "
            "relying on HTTPS"
        )
    return path.read_text()


def _index_sha256(release_text: str, member: str) -> str:
    section = release_text.split("\nSHA256:\n", 1)[1]
    for line in section.splitlines():
        if not line.startswith(" "):
            break
        digest, _size, name = line.split()
        if name == member:
            return digest
    raise SystemExit(f"build-image: InRelease lists no {member}")


def _parse_relations(field: str) -> tuple[tuple[str, ...], ...]:
    """`a (>= 1) | b, c:any` -> (("a", "b"), ("c",)). Versions are not compared: one release's
    indices hold one version of each package, the newest suite's winning."""
    relations = []
    for item in field.split(","):
        names = tuple(re.split(r"[\s(:\[]", alt.strip(), maxsplit=1)[0] for alt in item.split("|"))
        if names and names[0]:
            relations.append(names)
    return tuple(relations)


def _stanzas(text: str) -> Iterator[dict[str, str]]:
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith((" ", "\t")):
                fields[key] += "\n" + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if "Package" in fields:
            yield fields


def load_index(
    suite_list: Iterable[Suite], architecture: str, cache: Path, refresh: bool
) -> dict[str, Package]:
    """Every package of the suites by name (the newest suite's version), and every virtual
    name by a package providing it (under "virtual:<name>")."""
    packages: dict[str, Package] = {}
    for suite in suite_list:
        release = _verified_release(suite, cache, refresh)
        member = f"main/binary-{architecture}/Packages.xz"
        expected = _index_sha256(release, member)
        path = cache / f"{suite.name}.{architecture}.Packages.xz"
        if not path.exists() or sha256_of(path) != expected:
            path.unlink(missing_ok=True)
            download(f"{suite.mirror}/dists/{suite.name}/{member}", path, expected)
        for fields in _stanzas(lzma.decompress(path.read_bytes()).decode()):
            relations = ", ".join(
                f for f in (fields.get("Pre-Depends"), fields.get("Depends")) if f
            )
            package = Package(
                name=fields["Package"],
                version=fields["Version"],
                filename=fields["Filename"],
                sha256=fields["SHA256"],
                mirror=suite.mirror,
                depends=_parse_relations(relations),
                provides=tuple(n[0] for n in _parse_relations(fields.get("Provides", ""))),
            )
            packages[package.name] = package
    for package in list(packages.values()):
        for virtual in package.provides:
            packages.setdefault(f"virtual:{virtual}", package)
    return packages


def resolve(
    index: dict[str, Package], roots: Iterable[str], excluded: frozenset[str]
) -> list[Package]:
    """The roots and their dependencies, transitively, sorted by name. A relation is met by its
    first alternative that is excluded, already chosen or available, in that order."""
    chosen: dict[str, Package] = {}
    pending = list(roots)
    for name in pending:
        if name not in index:
            raise SystemExit(f"build-image: Debian package {name!r} not in the index")
    while pending:
        package = index[pending.pop()]
        if package.name in chosen:
            continue
        chosen[package.name] = package
        for alternatives in package.depends:
            if any(name in excluded or name in chosen for name in alternatives):
                continue
            for name in alternatives:
                found = index.get(name) or index.get(f"virtual:{name}")
                if found is not None:
                    if found.name not in excluded:
                        pending.append(found.name)
                    break
            else:
                raise SystemExit(
                    f"build-image: {package.name} depends on "
                    f"{' | '.join(alternatives)}, which the index lacks"
                )
    return sorted(chosen.values(), key=lambda p: p.name)


def fetch(packages: Iterable[Package], cache: Path) -> list[Path]:
    """The .debs, from the cache when there (checked against the index's SHA-256)."""
    return [download(p.url, cache / Path(p.filename).name, p.sha256) for p in packages]


def _ar_members(path: Path) -> Iterator[tuple[str, bytes]]:
    data = path.read_bytes()
    if not data.startswith(b"!<arch>\n"):
        raise SystemExit(f"build-image: {path.name} is not a .deb (ar archive)")
    offset = 8
    while offset < len(data):
        header = data[offset : offset + 60]
        name = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        yield name, data[offset + 60 : offset + 60 + size]
        offset += 60 + size + (size % 2)


def unpack(deb: Path, dest: Path) -> None:
    """The .deb's data.tar into `dest`, as dpkg would place it (no maintainer scripts)."""
    for name, payload in _ar_members(deb):
        if name.startswith("data.tar"):
            if name.endswith(".zst"):
                raise SystemExit(f"build-image: {deb.name}: zstd data.tar is not supported")
            with tarfile.open(fileobj=io.BytesIO(payload)) as archive:
                archive.extractall(dest, filter="tar")
            return
    raise SystemExit(f"build-image: {deb.name} has no data.tar")
