"""``ttlSecondsAfterFinished`` in the simulated cluster: what the live garbage collector and
Kubernetes' own garbage collector do together. A finished job whose TTL has run out on the
simulated clock is deleted, and with it every object it owns (its pods, its PodGroup, the
plugin objects), as foreground deletion would leave nothing behind.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Final

from volcano_py.controllers.job_ttl import ttl_expiry
from volcano_py.sim.cluster import InMemoryCluster

# What a Volcano Job may own in the simulated cluster.
_OWNED_KINDS: Final = ("Pod", "PodGroup", "Service", "ConfigMap", "Secret", "NetworkPolicy")


def _owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    references = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(ref, Mapping) and ref.get("uid") == uid for ref in references)


def expired_jobs(cluster: InMemoryCluster, now: dt.datetime) -> list[str]:
    """Keys of the jobs whose TTL has run out at ``now``."""
    return [key for key, job in cluster.items("Job") if _due(job, now)]


def _due(job: Mapping[str, Any], now: dt.datetime) -> bool:
    expiry = ttl_expiry(job)
    return expiry is not None and expiry <= now


def next_expiry(cluster: InMemoryCluster) -> dt.datetime | None:
    """The earliest TTL still to run out, or None."""
    expiries = [e for _key, job in cluster.items("Job") if (e := ttl_expiry(job)) is not None]
    return min(expiries, default=None)


def delete_job_and_dependents(cluster: InMemoryCluster, key: str) -> None:
    job = cluster.get("Job", key)
    if job is None:
        return
    metadata = job.get("metadata") or {}
    uid = str(metadata.get("uid") or "")
    namespace = str(metadata.get("namespace") or "default")
    if uid:
        for kind in _OWNED_KINDS:
            owned = [
                object_key
                for object_key, obj in cluster.items(kind)
                if object_key.startswith(f"{namespace}/") and _owned_by(obj, uid)
            ]
            for object_key in owned:
                cluster.delete(kind, object_key)
    cluster.delete("Job", key)
