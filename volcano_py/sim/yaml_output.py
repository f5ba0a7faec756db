"""``volcano-py simulate --format yaml``: the final state of every object of the simulated
cluster, those of the input and those the controllers made, as one ``kind: List`` document the
way ``kubectl get -o yaml`` prints it (keys sorted at every level, lists unindented, multi-line
strings as literal blocks). It is valid input: simulating it again changes nothing the first
run had settled.

Objects are listed kind by kind in the order a cluster needs them created (namespaces, nodes,
priority classes and queues before the jobs, PodGroups and pods that name them), each kind
sorted by namespace and name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

import yaml

from volcano_py.api.qos import qos_class
from volcano_py.sim.cluster import InMemoryCluster

# apiVersion of the kinds the simulated cluster holds, for objects given without one.
API_VERSIONS: Final = {
    "Namespace": "v1",
    "Node": "v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "Queue": "scheduling.volcano.sh/v1beta1",
    "HyperNode": "topology.volcano.sh/v1alpha1",
    "Numatopology": "nodeinfo.volcano.sh/v1alpha1",
    "ConfigMap": "v1",
    "Secret": "v1",
    "Service": "v1",
    "NetworkPolicy": "networking.k8s.io/v1",
    "PersistentVolumeClaim": "v1",
    "ResourceQuota": "v1",
    "PodDisruptionBudget": "policy/v1",
    "JobTemplate": "flow.volcano.sh/v1alpha1",
    "JobFlow": "flow.volcano.sh/v1alpha1",
    "CronJob": "batch.volcano.sh/v1alpha1",
    "Job": "batch.volcano.sh/v1alpha1",
    "Deployment": "apps/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "CronJob.batch": "batch/v1",
    "Job.batch": "batch/v1",
    "PodGroup": "scheduling.volcano.sh/v1beta1",
    "Pod": "v1",
    "Command": "bus.volcano.sh/v1alpha1",
}
# Creation order: what an object names comes before it. Kinds not listed follow, by name.
KIND_ORDER: Final = tuple(API_VERSIONS)
# Go's yaml (and kubectl) never folds long strings; PyYAML would at 80 columns.
_NO_WRAP: Final = 1 << 30


# libyaml's emitter when PyYAML has it (ten times faster than the pure-Python one).
_SafeDumper: Final[type[yaml.SafeDumper]] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _KubectlDumper(_SafeDumper):  # type: ignore[valid-type,misc]
    """PyYAML's safe dumper, with multi-line strings as literal blocks (as kubectl)."""


def _represent_text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_KubectlDumper.add_representer(str, _represent_text)


def _kinds(cluster: InMemoryCluster) -> list[str]:
    present = [kind for kind, store in cluster.objects.items() if store]
    order = {kind: index for index, kind in enumerate(KIND_ORDER)}
    return sorted(present, key=lambda kind: (order.get(kind, len(order)), kind))


def listed_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """One item as ``kubectl get -o yaml`` shows it: apiVersion and kind on every object, and
    a pod's ``status.qosClass`` (the API server computes it when it stores the pod)."""
    kind = str(obj.get("kind", ""))
    item = dict(obj)
    if not item.get("apiVersion") and kind in API_VERSIONS:
        item["apiVersion"] = API_VERSIONS[kind]
    if kind == "Pod":
        pod_status = dict(item.get("status") or {})
        pod_status.setdefault("qosClass", qos_class(obj))
        item["status"] = pod_status
    return item


def cluster_items(cluster: InMemoryCluster) -> Iterator[dict[str, Any]]:
    for kind in _kinds(cluster):
        for _key, obj in cluster.items(kind):
            yield listed_object(obj)


def render_yaml(cluster: InMemoryCluster) -> str:
    document = {
        "apiVersion": "v1",
        "items": list(cluster_items(cluster)),
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }
    return yaml.dump(
        document,
        Dumper=_KubectlDumper,
        sort_keys=True,
        default_flow_style=False,
        allow_unicode=True,
        width=_NO_WRAP,
    )
