"""The kinds the controllers watch and write, and their REST paths."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from volcano_py.operator.informer import POD, POD_GROUP, PRIORITY_CLASS, QUEUE, ResourceKind

__all__ = [
    "COMMAND",
    "CONFIG_MAP",
    "CRONJOB",
    "JOB",
    "JOBFLOW",
    "JOBTEMPLATE",
    "NETWORK_POLICY",
    "PLUGIN_KINDS",
    "POD",
    "POD_GROUP",
    "PRIORITY_CLASS",
    "QUEUE",
    "SECRET",
    "SERVICE",
    "WATCHED_KINDS",
    "WRITABLE_KINDS",
    "namespaced_path",
    "object_path",
]

JOB: Final = ResourceKind("Job", "/apis/batch.volcano.sh/v1alpha1", "jobs", True)
CRONJOB: Final = ResourceKind("CronJob", "/apis/batch.volcano.sh/v1alpha1", "cronjobs", True)
# Optional: Volcano installs the flow CRDs with a separate chart; without them the JobFlow
# controllers simply hear of nothing.
JOBFLOW: Final = ResourceKind(
    "JobFlow", "/apis/flow.volcano.sh/v1alpha1", "jobflows", True, optional=True
)
JOBTEMPLATE: Final = ResourceKind(
    "JobTemplate", "/apis/flow.volcano.sh/v1alpha1", "jobtemplates", True, optional=True
)
COMMAND: Final = ResourceKind("Command", "/apis/bus.volcano.sh/v1alpha1", "commands", True)
CONFIG_MAP: Final = ResourceKind("ConfigMap", "/api/v1", "configmaps", True)
SERVICE: Final = ResourceKind("Service", "/api/v1", "services", True)
SECRET: Final = ResourceKind("Secret", "/api/v1", "secrets", True)
NETWORK_POLICY: Final = ResourceKind(
    "NetworkPolicy", "/apis/networking.k8s.io/v1", "networkpolicies", True
)
PERSISTENT_VOLUME_CLAIM: Final = ResourceKind(
    "PersistentVolumeClaim", "/api/v1", "persistentvolumeclaims", True
)

# Objects the job plugins (svc, ssh) own: watched so that an unchanged one is not re-emitted
# (``sync_job``'s ``plugin_objects``), as the simulator hands them over.
PLUGIN_KINDS: Final = (CONFIG_MAP, SERVICE, SECRET, NETWORK_POLICY)
# Queues and PriorityClasses first: a Job's first sync finds its queue. CronJobs before Jobs:
# a Job's first event finds the CronJob controlling it (JobTemplates and JobFlows likewise).
WATCHED_KINDS: Final = (
    QUEUE,
    PRIORITY_CLASS,
    *PLUGIN_KINDS,
    POD_GROUP,
    POD,
    CRONJOB,
    JOBTEMPLATE,
    JOBFLOW,
    JOB,
    COMMAND,
)
# Kinds ``JobChanges.extra_objects`` may hold (volumes add PVCs, which are not watched).
WRITABLE_KINDS: Final = {
    kind.kind: kind
    for kind in (*PLUGIN_KINDS, PERSISTENT_VOLUME_CLAIM, POD, POD_GROUP, JOB, COMMAND, QUEUE)
}


def namespaced_path(resource: ResourceKind, namespace: str, name: str | None = None) -> str:
    base = f"{resource.api_path}/namespaces/{namespace}/{resource.plural}"
    return f"{base}/{name}" if name else base


def object_path(resource: ResourceKind, obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = str(meta.get("name", ""))
    if resource.namespaced:
        return namespaced_path(resource, str(meta.get("namespace") or "default"), name)
    return f"{resource.collection_path}/{name}"
