"""A job's ``spec.volumes``: the PVCs the controller creates and the claim each pod mounts
(``job_controller_actions.go`` ``createJobIOIfNotExist``, ``job_controller_util.go``).

Upstream names generated claims and pod volumes with random suffixes and writes the claim name
back into the job's spec. Here the suffixes are derived from the job's uid and the volume's
position, so every step computes the same names without a spec write and a run is
reproducible.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final

from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.raw import (
    Raw,
    controller_reference,
    items,
    mapping,
    name,
    namespace,
    text,
    uid,
)
from volcano_py.controllers.raw import spec as spec_of
from volcano_py.controllers.vocabulary import BATCH_API_VERSION

_ALPHABET: Final = "0123456789abcdefghijklmnopqrstuvwxyz"
_SUFFIX_LENGTH: Final = 12


def stable_suffix(seed: str) -> str:
    """12 characters of ``[0-9a-z]`` determined by ``seed`` (upstream: random)."""
    number = int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big")
    chars = []
    for _ in range(_SUFFIX_LENGTH):
        number, digit = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[digit])
    return "".join(chars)


def claim_name(job: Raw, index: int, volume: Raw) -> str:
    """The PVC a volume mounts: the one it names, or the one the controller makes for it."""
    given = text(volume.get("volumeClaimName"))
    if given:
        return given
    return f"{name(job)}-pvc-{stable_suffix(f'{uid(job)}/{index}')}"


def job_volumes(job: Raw) -> list[tuple[str, str]]:
    """(claim name, mount path) of every volume, in spec order."""
    return [
        (claim_name(job, index, mapping(volume)), text(mapping(volume).get("mountPath")))
        for index, volume in enumerate(items(spec_of(job).get("volumes")))
    ]


def ensure_claims(job: Raw, status: JobStatus) -> list[dict[str, Any]]:
    """PVCs to create for volumes that describe a new claim, recording every claim in
    ``controlledResources`` as ``volume-pvc-<name>``.

    Upstream refuses to go on while a named claim does not exist; the controllers see no PVCs,
    so that check is left to the cluster (the pod stays Pending until the claim exists).
    """
    created = []
    for index, raw in enumerate(items(spec_of(job).get("volumes"))):
        volume = mapping(raw)
        claim = claim_name(job, index, volume)
        key = f"volume-pvc-{claim}"
        template = volume.get("volumeClaim")
        if (
            not text(volume.get("volumeClaimName"))
            and template
            and key not in (status.controlled_resources)
        ):
            created.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {
                        "name": claim,
                        "namespace": namespace(job),
                        "ownerReferences": [controller_reference(job, BATCH_API_VERSION, "Job")],
                    },
                    "spec": dict(mapping(template)),
                }
            )
        status.controlled_resources[key] = claim
    return created


def pod_volume_name(job: Raw, claim: str) -> str:
    return f"{name(job)}-{stable_suffix(f'{uid(job)}/{claim}')}"
