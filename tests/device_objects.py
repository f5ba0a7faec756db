"""Objects that device plugins and exporters publish, as both the simulate guide tests
(tests/guides) and the live cluster tests (tests/cluster) build them: the resource exporter's
Numatopology, MindCluster's Atlas 310P node labels and card list, ClusterD's device-info
ConfigMap. One definition, so the two suites feed the scheduler the same objects."""

from __future__ import annotations

import json
from typing import Any

NUMATOPOLOGY_API = "nodeinfo.volcano.sh/v1alpha1"
MINDX_NAMESPACE = "mindx-dl"
# What MindCluster's device plugin labels an Atlas 310P inference node with.
ATLAS_310P_LABELS = {
    "accelerator": "huawei-Ascend310P",
    "servertype": "Ascend310P-8",
    "node.kubernetes.io/npu.chip.name": "310P3",
}


def numatopology(node: str, cpus_per_numa: int, policy: str) -> dict[str, Any]:
    """Two NUMA nodes of ``cpus_per_numa`` CPUs each (one socket each, two threads a core),
    the kubelet running the static CPU manager with topology policy ``policy``."""
    total = 2 * cpus_per_numa
    detail = {
        str(cpu): {"numa": cpu // cpus_per_numa, "socket": cpu // cpus_per_numa, "core": cpu // 2}
        for cpu in range(total)
    }
    return {
        "apiVersion": NUMATOPOLOGY_API,
        "kind": "Numatopology",
        "metadata": {"name": node},
        "spec": {
            "policies": {"CPUManagerPolicy": "static", "TopologyManagerPolicy": policy},
            "numares": {"cpu": {"allocatable": f"0-{total - 1}", "capacity": total}},
            "cpuDetail": detail,
        },
    }


def atlas_310p_capacity(chips: int) -> dict[str, str]:
    """An Atlas 310P node's device capacity: 8 AI cores per chip."""
    return {"huawei.com/npu-core": str(8 * chips), "huawei.com/Ascend310P": str(chips)}


def atlas_310p_annotations(chips: int) -> dict[str, str]:
    """The node's whole cards in ``baseDeviceInfos``, as MindCluster's device plugin lists
    them; which of them are healthy comes from ClusterD's ConfigMap."""
    cards = {f"Ascend310P-{i}": {"IP": "", "SuperDeviceID": 0} for i in range(chips)}
    return {"baseDeviceInfos": json.dumps(cards)}


def cluster_device_info(
    chips_per_node: dict[str, int], name: str = "cluster-info-device-0", labelled: bool = True
) -> dict[str, Any]:
    """ClusterD's device-info ConfigMap (data under its own name): every node's healthy cards.
    ``labelled``: carrying ``mx-consumer-volcano=true``, the label upstream's informer selects
    on."""
    infos = {
        f"mindx-dl-deviceinfo-{node}": {
            "DeviceList": {
                "huawei.com/Ascend310P": ",".join(f"Ascend310P-{i}" for i in range(chips)),
                "huawei.com/Ascend310P-Unhealthy": "",
            },
            "UpdateTime": 1700000000,
        }
        for node, chips in chips_per_node.items()
    }
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": MINDX_NAMESPACE,
            "labels": {"mx-consumer-volcano": "true"} if labelled else {},
        },
        "data": {name: json.dumps(infos)},
    }
