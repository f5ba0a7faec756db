"""User guide ``how_to_use_volcano_vgpu``, its "Dynamic MIG Usage" and "GPU Exclusivity"
sections: a pod annotated ``volcano.sh/vgpu-mode: mig`` asking 3000 MiB gets the best-fit
MIG slice of a MIG node (the 5 GB one of an A100 40GB, by the geometries of
``kube-system/volcano-vgpu-device-config``), and with ``deviceshare.GPUExclusiveRules`` pods
matching one rule never share a card while others do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.guides.guide_sim import conf_map, node, simulate

VGPU = {"volcano.sh/vgpu-number": "80", "volcano.sh/vgpu-memory": "320000",
        "volcano.sh/vgpu-cores": "800"}  # fmt: skip

GEOMETRIES = """nvidia:
  resourceCountName: volcano.sh/vgpu-number
  resourceMemoryName: volcano.sh/vgpu-memory
  resourceCoreName: volcano.sh/vgpu-cores
  knownMigGeometries:
  - models: ["A100-SXM4-40GB", "A100-40GB-PCIe", "A100-PCIE-40GB"]
    allowedGeometries:
    - group: group1
      geometries:
      - {name: 1g.5gb, memory: 5120, count: 7}
    - group: group2
      geometries:
      - {name: 2g.10gb, memory: 10240, count: 3}
      - {name: 1g.5gb, memory: 5120, count: 1}
"""


def _conf(**arguments: Any) -> dict[str, Any]:
    plugin_arguments = {"deviceshare.VGPUEnable": True, **arguments}
    conf = {
        "actions": "enqueue, allocate, backfill",
        "tiers": [
            {"plugins": [{"name": "priority"}, {"name": "gang"}]},
            {"plugins": [{"name": "predicates"},
                         {"name": "deviceshare", "arguments": plugin_arguments}]},
        ],
    }  # fmt: skip
    return conf_map(yaml.safe_dump(conf))


def _gpu_node(name: str, mode: str, card_type: str, memory: int, cards: int) -> dict[str, Any]:
    made = node(name, cpu="64", memory="256Gi", **VGPU)
    made["metadata"]["annotations"] = {
        "volcano.sh/node-vgpu-register": "".join(
            f"GPU-{name}-{i},10,{memory},{card_type},true,{mode}:" for i in range(cards)
        )
    }
    return made


def _vgpu_pod(
    name: str,
    number: str,
    memory: str,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    limits = {"volcano.sh/vgpu-number": number, "volcano.sh/vgpu-memory": memory}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": labels or {},
                     "annotations": annotations or {}},
        "spec": {"schedulerName": "volcano",
                 "containers": [{"name": "cuda", "image": "nvidia/cuda:12.0-base",
                                 "resources": {"limits": limits}}]},
    }  # fmt: skip


def test_mig_pod_gets_the_best_fit_slice(tmp_path: Path) -> None:
    device_config = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-vgpu-device-config", "namespace": "kube-system"},
        "data": {"device-config.yaml": GEOMETRIES},
    }
    objects = [
        _conf(),
        device_config,
        _gpu_node("core", "hami-core", "NVIDIA-A100-SXM4-40GB", 40960, 8),
        _gpu_node("mig", "mig", "NVIDIA-A100-SXM4-40GB", 40960, 8),
        _vgpu_pod("mig-pod", "1", "3000", annotations={"volcano.sh/vgpu-mode": "mig"}),
    ]
    report, _, _ = simulate(tmp_path, objects)
    placed = report["pods"]["default/mig-pod"]
    assert placed["node"] == "mig"
    # 3000 MiB -> the 1g.5gb slice; the device plugin reads the instance from the id.
    ids = placed["annotations"]["volcano.sh/vgpu-ids-new"]
    assert ids.endswith("[group1-0],NVIDIA,3000,0:") and ids.startswith("GPU-mig-")


def test_gpu_exclusivity_rules(tmp_path: Path) -> None:
    rules = [{"workloadType": "training"}, {"workloadType": "batch", "priority": "high"}]
    training = {"workloadType": "training"}
    objects = [
        _conf(**{"deviceshare.GPUExclusiveRules": rules}),
        _gpu_node("gpu-node", "hami-core", "NVIDIA-A100", 40960, 8),
        *(_vgpu_pod(f"training-job-{i}", "4", "16384", labels=training) for i in range(3)),
        _vgpu_pod("batch-job", "8", "1000", labels={"workloadType": "batch", "priority": "high"}),
        _vgpu_pod("other", "8", "1000"),
    ]
    report, _, _ = simulate(tmp_path, objects)
    pods = report["pods"]

    def cards(name: str) -> set[str]:
        text = pods[f"default/{name}"]["annotations"]["volcano.sh/vgpu-ids-new"]
        return {entry.split(",")[0] for entry in text.split(":") if entry}

    bound = [f"training-job-{i}" for i in range(3) if pods[f"default/training-job-{i}"].get("node")]
    # Two training pods take the 8 cards between them, each its own 4; the third waits.
    assert len(bound) == 2
    assert not cards(bound[0]) & cards(bound[1])
    assert len(cards(bound[0]) | cards(bound[1])) == 8
    # Another rule's pod, and a pod matching none, share the training pods' cards.
    assert len(cards("batch-job")) == 8 and len(cards("other")) == 8
