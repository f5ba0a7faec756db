"""User guide ``how_to_use_vnpu``, HAMi mode: with ``deviceshare.AscendHAMiVNPUEnable`` and the
device ConfigMap named by ``KnownGeometriesCM*``, a pod asking one vNPU with part of a card's
memory gets the smallest template holding it; several cards are given whole (memory left out);
a ``huawei.com/vnpu-mode: hami-core`` pod gets exactly its memory and AI-core percent on a node
that runs hami-vnpu-core. (The MindCluster mode, ``AscendMindClusterVNPUEnable``, is not
ported: it is named as without effect.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

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
    # The node also advertises the memory and core resources: volcano-py does not yet drop
    # them from the resource fit as Volcano does (GetIgnoredDevices).
    found = node(
        name,
        **{
            f"huawei.com/{kind}": str(cards),
            f"huawei.com/{kind}-memory": str(devmem * cards),
            f"huawei.com/{kind}-core": str(100 * cards),
        },
    )
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
