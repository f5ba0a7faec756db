"""User guide ``how_to_use_vnpu``, HAMi mode: with ``deviceshare.AscendHAMiVNPUEnable`` and the
device ConfigMap named by ``KnownGeometriesCM*``, a pod asking one vNPU with part of a card's
memory gets the smallest template holding it; several cards are given whole (memory left out);
a ``huawei.com/vnpu-mode: hami-core`` pod gets exactly its memory and AI-core percent on a node
that runs hami-vnpu-core.

MindCluster mode (``deviceshare.AscendMindClusterVNPUEnable``): the guide's Job asking 8 AI
cores of a 310P gets a whole chip (``huawei.com/npu-core: "0"``); pods asking fewer cores get a
template chosen by their ``vnpu-level``/``vnpu-dvpp`` labels on the least free chip, a node
only takes pods of the template its pods already hold, and a bad ``vnpu-dvpp`` is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.device_objects import (
    ATLAS_310P_LABELS,
    atlas_310p_annotations,
    atlas_310p_capacity,
    cluster_device_info,
)
from tests.guides.guide_sim import conf_map, node, simulate

CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.AscendHAMiVNPUEnable: true
      deviceshare.SchedulePolicy: binpack
      deviceshare.KnownGeometriesCMNamespace: kube-system
      deviceshare.KnownGeometriesCMName: hami-scheduler-device
"""

# The guide's example card: 65536 MiB, templates of 1/4 and 1/2 of it.
DEVICES = {
    "vnpus": {
        "hamiVnpuCore": False,
        "configs": [
            {
                "chipName": "910B3",
                "commonWord": "Ascend910B3",
                "resourceName": "huawei.com/Ascend910B3",
                "resourceMemoryName": "huawei.com/Ascend910B3-memory",
                "memoryAllocatable": 65536,
                "memoryCapacity": 65536,
                "aiCore": 20,
                "templates": [
                    {"name": "vir05_1c_16g", "memory": 16384, "aiCore": 5},
                    {"name": "vir10_3c_32g", "memory": 32768, "aiCore": 10},
                ],
            },
            {
                "chipName": "310P3",
                "commonWord": "Ascend310P",
                "resourceName": "huawei.com/Ascend310P",
                "resourceMemoryName": "huawei.com/Ascend310P-memory",
                "memoryAllocatable": 21527,
                "memoryCapacity": 24576,
                "aiCore": 8,
                "templates": [
                    {"name": "vir01", "memory": 3072, "aiCore": 1},
                    {"name": "vir02", "memory": 6144, "aiCore": 2},
                    {"name": "vir04", "memory": 12288, "aiCore": 4},
                ],
            },
        ],
    }
}


def device_config_map() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "hami-scheduler-device", "namespace": "kube-system"},
        "data": {"device-config.yaml": yaml.safe_dump(DEVICES)},
    }


def npu_node(name: str, kind: str, devmem: int, cards: int, hami_core: bool) -> dict[str, Any]:
    # Only the card count is advertised: the memory and core resources a pod asks are left
    # out of the resource fit once the node registers the kind (GetIgnoredDevices).
    found = node(name, **{f"huawei.com/{kind}": str(cards)})
    registered = [
        {"id": f"{name}-{i}", "count": 7, "devmem": devmem, "devcore": 20} for i in range(cards)
    ]
    found["metadata"]["annotations"] = {
        f"hami.io/node-register-{kind}": json.dumps(registered),
        "hami-vnpu-core": "true" if hami_core else "false",
    }
    return found


def npu_pod(
    name: str, limits: dict[str, str], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
        "spec": {
            "schedulerName": "volcano",
            "containers": [{"name": "c", "image": "ascend", "resources": {"limits": limits}}],
        },
    }


def test_hami_mode(tmp_path: Path) -> None:
    objects = [
        conf_map(CONF),
        device_config_map(),
        npu_node("b3", "Ascend910B3", 65536, 4, hami_core=False),
        npu_node("p310", "Ascend310P", 21527, 2, hami_core=True),
        # The guide's template-mode pod.
        npu_pod(
            "ascend-pod", {"huawei.com/Ascend310P": "1", "huawei.com/Ascend310P-memory": "4096"}
        ),
        # "requests 1 vNPU device and 1024 memory, so the actual allocated memory is 16384".
        npu_pod("small", {"huawei.com/Ascend910B3": "1", "huawei.com/Ascend910B3-memory": "1024"}),
        # "a requested memory of 20480, resulting in an actual allocated memory of 32768".
        npu_pod("half", {"huawei.com/Ascend910B3": "1", "huawei.com/Ascend910B3-memory": "20480"}),
        # Several devices: memory left out is the whole card.
        npu_pod("two", {"huawei.com/Ascend910B3": "2"}),
        # Several devices with part of a card each: refused.
        npu_pod(
            "partial", {"huawei.com/Ascend910B3": "2", "huawei.com/Ascend910B3-memory": "1024"}
        ),
        # The guide's hami-core pod.
        npu_pod(
            "core-pod",
            {
                "huawei.com/Ascend310P": "1",
                "huawei.com/Ascend310P-memory": "4096",
                "huawei.com/Ascend310P-core": "90",
            },
            {"huawei.com/vnpu-mode": "hami-core"},
        ),
    ]
    report, _, _ = simulate(tmp_path, objects)
    pods = report["pods"]

    def allocated(name: str, kind: str) -> str:
        entry = pods[f"default/{name}"]
        text: str = entry["annotations"][f"hami.io/{kind}-devices-allocated"]
        return text

    assert pods["default/ascend-pod"]["node"] == "p310"
    assert allocated("ascend-pod", "Ascend310P").endswith(",Ascend310P,6144,0:;")
    runtime = json.loads(pods["default/ascend-pod"]["annotations"]["huawei.com/Ascend310P"])
    assert runtime[0]["temp"] == "vir02"
    assert allocated("small", "Ascend910B3").endswith(",Ascend910B3,16384,0:;")
    assert allocated("half", "Ascend910B3").endswith(",Ascend910B3,32768,0:;")
    two = allocated("two", "Ascend910B3")
    assert two.count(",Ascend910B3,65536,0:") == 2
    assert pods["default/partial"]["node"] is None
    core = pods["default/core-pod"]
    assert core["node"] == "p310"
    assert allocated("core-pod", "Ascend310P").endswith(",Ascend310P,4096,90:;")
    assert json.loads(core["annotations"]["huawei.com/Ascend310P"])[0]["core"] == 90
    assert core["annotations"]["hami.io/bind-phase"] == "allocating"


# ---- MindCluster mode (``deviceshare.AscendMindClusterVNPUEnable``)

MINDCLUSTER_CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.AscendMindClusterVNPUEnable: true
configurations:
- name: init-params
  arguments: {"presetVirtualDevice": "false"}
"""


def atlas_node(name: str, chips: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """An Atlas inference node: 8 AI cores per 310P chip, labelled as MindCluster's device
    plugin labels it, its cards listed in ``baseDeviceInfos``."""
    found = node(name, labels={**ATLAS_310P_LABELS, **(labels or {})}, **atlas_310p_capacity(chips))
    found["metadata"]["annotations"] = atlas_310p_annotations(chips)
    return found


def vnpu_pod(
    name: str, cores: int, labels: dict[str, str] | None = None, host: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "volcano",
        "containers": [
            {
                "name": "infer",
                "image": "mindie",
                "resources": {
                    "requests": {"huawei.com/npu-core": str(cores)},
                    "limits": {"huawei.com/npu-core": str(cores)},
                },
            }
        ],
    }
    if host is not None:
        spec["nodeSelector"] = {"kubernetes.io/hostname": host}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "vnpu",
            "labels": {"ring-controller.atlas": "ascend-310P", **(labels or {})},
        },
        "spec": spec,
    }


def mindx_job() -> dict[str, Any]:
    """The guide's Job: one whole 310P chip (8 AI cores)."""
    labels = {
        "app": "infers",
        "ring-controller.atlas": "ascend-310P",
        "vnpu-dvpp": "null",
        "vnpu-level": "low",
    }
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {
            "name": "mindx-dls",
            "namespace": "vnpu",
            "labels": {"ring-controller.atlas": "ascend-310P"},
        },
        "spec": {
            "minAvailable": 1,
            "schedulerName": "volcano",
            "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
            "plugins": {"ssh": [], "env": [], "svc": []},
            "maxRetry": 3,
            "queue": "default",
            "tasks": [
                {
                    "name": "default-test",
                    "replicas": 1,
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "schedulerName": "volcano",
                            "containers": [
                                {
                                    "name": "resnet50infer",
                                    "image": "mindie",
                                    "imagePullPolicy": "IfNotPresent",
                                    "securityContext": {"privileged": False},
                                    "command": ["/bin/bash", "-c", "tail -f /dev/null"],
                                    "resources": {
                                        "requests": {"huawei.com/npu-core": "8"},
                                        "limits": {"huawei.com/npu-core": "8"},
                                    },
                                }
                            ],
                            "nodeSelector": {"host-arch": "huawei-arm"},
                        },
                    },
                }
            ],
        },
    }


def test_mindcluster_mode(tmp_path: Path) -> None:
    objects = [
        conf_map(MINDCLUSTER_CONF),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vnpu"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "mindx-dl"}},
        cluster_device_info({"arm": 2, "duo": 2}),
        atlas_node("arm", 2, {"host-arch": "huawei-arm"}),
        atlas_node("duo", 2),
        mindx_job(),
        # (Pods are taken in name order.) "2 / null / low": vir02_1c; two of them share the
        # least free chip.
        vnpu_pod("a-low", 2, host="duo"),
        vnpu_pod("b-low", 2, host="duo"),
        # Another template on a node whose pods hold vir02_1c: refused there.
        vnpu_pod("c-high", 4, {"vnpu-level": "high"}, host="duo"),
        # A vnpu-dvpp value outside yes/no/null: never placed.
        vnpu_pod("d-bad-dvpp", 2, {"vnpu-dvpp": "maybe"}, host="duo"),
        # Not labelled ascend-310P: not a vNPU pod, placed by the resource fit alone.
        {
            **vnpu_pod("e-plain", 1, host="duo"),
            "metadata": {"name": "e-plain", "namespace": "vnpu"},
        },
    ]
    report, _, _ = simulate(tmp_path, objects)
    pods = report["pods"]
    job_pod = pods["vnpu/mindx-dls-default-test-0"]
    assert job_pod["node"] == "arm"
    assert job_pod["annotations"]["huawei.com/npu-core"] == "0"
    assert job_pod["annotations"]["predicate-time"].isdigit()
    for name in ("a-low", "b-low"):
        assert pods[f"vnpu/{name}"]["node"] == "duo"
        assert pods[f"vnpu/{name}"]["annotations"]["huawei.com/npu-core"] == "0-vir02_1c"
    assert pods["vnpu/c-high"]["node"] is None
    reasons = " | ".join(report["unschedulable"].values())
    assert "c-high is using duo, and not rewrite" in reasons
    assert "err dvpp value:maybe" in reasons
    assert pods["vnpu/d-bad-dvpp"]["node"] is None
    assert pods["vnpu/e-plain"]["node"] == "duo"
    assert "huawei.com/npu-core" not in pods["vnpu/e-plain"].get("annotations", {})
