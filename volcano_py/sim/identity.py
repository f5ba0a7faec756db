"""What the API server stamps on every object it stores: a ``uid`` and a ``resourceVersion``.

Objects keep the uid they were given. An object made during a run gets a uid derived from
``--seed``, its kind, its key and its creation time (a UUID in Kubernetes' format), so the same
input gives the same output, and a reloaded ``--format yaml`` output cannot collide with what
the second run makes. ``resourceVersion`` is the store's revision, bumped by every write, as
etcd's; an object given with a numeric one keeps it and the revision continues above it (a
restored dump keeps its versions)."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field


def derived_uid(seed: int, kind: str, key: str, created: str, serial: int) -> str:
    """A UUID determined by what names the object; ``serial`` tells apart objects of the same
    key made at the same moment (a pod deleted and recreated within one cycle)."""
    digest = hashlib.sha256(f"{seed}\0{kind}\0{key}\0{created}\0{serial}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


@dataclass(slots=True)
class Identities:
    seed: int = 0
    revision: int = 0
    _serials: dict[tuple[str, str], int] = field(default_factory=dict)

    def new_uid(self, kind: str, key: str, created: str) -> str:
        serial = self._serials.get((kind, key), 0)
        self._serials[(kind, key)] = serial + 1
        return derived_uid(self.seed, kind, key, created, serial)

    def given_version(self, version: object) -> str | None:
        """Keep a numeric ``resourceVersion`` an input object carries (None otherwise)."""
        text = str(version) if version is not None else ""
        if not text.isdecimal():
            return None
        self.revision = max(self.revision, int(text))
        return text

    def next_version(self) -> str:
        self.revision += 1
        return str(self.revision)
