"""Which Volcano Job an object belongs to: the rule the live controllers and the simulator
share, so that both route a pod's or a PodGroup's events to the same job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.types import JOB_NAME_KEY


def job_of_owner(obj: Mapping[str, Any]) -> str | None:
    """The key (namespace/name) of the Volcano Job owning ``obj``, if one does."""
    meta = obj.get("metadata") or {}
    for owner in meta.get("ownerReferences") or []:
        if owner.get("kind") == "Job" and str(owner.get("apiVersion", "")).startswith(
            "batch.volcano.sh"
        ):
            return f"{meta.get('namespace') or 'default'}/{owner.get('name')}"
    return None


def job_of_pod(pod: Mapping[str, Any]) -> str | None:
    """The job-name label or annotation the controller puts on its pods, else the owner."""
    meta = pod.get("metadata") or {}
    name = (meta.get("labels") or {}).get(JOB_NAME_KEY) or (meta.get("annotations") or {}).get(
        JOB_NAME_KEY
    )
    if name:
        return f"{meta.get('namespace') or 'default'}/{name}"
    return job_of_owner(pod)
