"""User guide ``how_to_use_volcano_vgpu``, HAMi-core mode: with ``deviceshare.VGPUEnable`` and
``SchedulePolicy: binpack``, nodes whose HAMi device plugin registered their cards
(``volcano.sh/node-vgpu-register``) and advertise ``volcano.sh/vgpu-number`` and
``vgpu-memory``:

* the guide's ``hami-pod`` (1 vGPU, 50% cores, 3000 MiB, ``volcano.sh/vgpu-mode: hami-core``)
  gets one card, written into its bind annotations (``volcano.sh/vgpu-ids-new`` and
  ``devices-to-allocate``: ``<uuid>,NVIDIA,3000,50:``, ``volcano.sh/bind-phase: allocating``);
* binpack stacks the pods of one PodGroup on one card; ``volcano.sh/vgpu-podgroup-policy:
  spread`` keeps them on different cards;
* ``volcano.sh/vgpu-use-gpuuuid`` is an allowlist, ``volcano.sh/vgpu-nouse-gpuuuid`` a denylist,
  UUIDs trimmed; a UUID in both is denied, and a pod no permitted card fits waits.

The guide's dynamic MIG and GPU exclusivity sections: test_how_to_use_volcano_vgpu_mig_exclusive.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import conf_map, node, pending_reason, simulate, task, vcjob

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.SchedulePolicy: binpack
"""
IDS = "volcano.sh/vgpu-ids-new"


def vgpu_node(name: str, uuids: list[str], mode: str = "hami-core") -> dict[str, Any]:
    """Cards of 24000 MiB split 10 ways, as HAMi's device plugin registers them."""
    found = node(
        name,
        cpu="32",
        memory="64Gi",
        **{
            "volcano.sh/vgpu-number": str(10 * len(uuids)),
            "volcano.sh/vgpu-memory": str(24000 * len(uuids)),
            "volcano.sh/vgpu-cores": str(100 * len(uuids)),
        },
    )
    register = "".join(f"{uuid},10,24000,NVIDIA-Tesla T4,true,{mode}:" for uuid in uuids)
    found["metadata"]["annotations"] = {"volcano.sh/node-vgpu-register": register}
    return found


def limits(memory: int, cores: int | None = None) -> dict[str, str]:
    found = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": str(memory)}
    if cores is not None:
        found["volcano.sh/vgpu-cores"] = str(cores)
    return found


def vgpu_pod(name: str, wanted: dict[str, str], annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": annotations},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "cuda-container",
                    "image": "nvidia/cuda:9.0-devel",
                    "resources": {"limits": wanted},
                }
            ],
        },
    }


def card(entry: dict[str, Any]) -> str:
    """The UUID of the one card a pod was given."""
    return str(entry["annotations"][IDS]).split(",", 1)[0]


def test_hami_core_pod_gets_one_card_in_its_bind_annotations(tmp_path: Path) -> None:
    objects = [
        conf_map(CONF),
        vgpu_node("n1", ["GPU-a", "GPU-b"]),
        vgpu_pod("hami-pod", limits(3000, 50), {"volcano.sh/vgpu-mode": "hami-core"}),
    ]
    report, _, err = simulate(tmp_path, objects)
    assert err == ""
    entry = report["pods"]["default/hami-pod"]
    assert entry["node"] == "n1"
    allocated = entry["annotations"][IDS]
    assert allocated in ("GPU-a,NVIDIA,3000,50:", "GPU-b,NVIDIA,3000,50:")
    assert entry["annotations"]["volcano.sh/devices-to-allocate"] == allocated
    assert entry["annotations"]["volcano.sh/vgpu-node"] == "n1"
    assert entry["annotations"]["volcano.sh/bind-phase"] == "allocating"


def job_of_two(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    worker = task("worker", 2, cpu="1", annotations=annotations)
    worker["template"]["spec"]["containers"][0]["resources"]["limits"] = limits(3000, 10)
    return vcjob(name, [worker], minAvailable=2)


def test_binpack_stacks_a_podgroup_and_spread_splits_it(tmp_path: Path) -> None:
    objects = [
        conf_map(CONF),
        vgpu_node("n1", ["GPU-a", "GPU-b"]),
        job_of_two("packed"),
        job_of_two("spread", {"volcano.sh/vgpu-podgroup-policy": "spread"}),
    ]
    report, _, err = simulate(tmp_path, objects)
    assert err == ""
    pods = report["pods"]
    packed = {card(pods[f"default/packed-worker-{i}"]) for i in range(2)}
    spread = {card(pods[f"default/spread-worker-{i}"]) for i in range(2)}
    assert len(packed) == 1
    assert spread == {"GPU-a", "GPU-b"}


def test_uuid_allow_and_deny_lists(tmp_path: Path) -> None:
    allowed = "GPU-03f69c50-207a-2038-9b45-23cac89cb67d"
    objects = [
        conf_map(CONF),
        vgpu_node("n1", ["GPU-a", "GPU-b"]),
        vgpu_node("n2", [allowed, "GPU-d"]),
        vgpu_pod("use", limits(3000), {"volcano.sh/vgpu-use-gpuuuid": f" {allowed} "}),
        vgpu_pod("nouse", limits(3000), {"volcano.sh/vgpu-nouse-gpuuuid": "GPU-a, GPU-b, GPU-d"}),
        vgpu_pod(
            "both",
            limits(3000),
            {"volcano.sh/vgpu-use-gpuuuid": "GPU-d", "volcano.sh/vgpu-nouse-gpuuuid": "GPU-d"},
        ),
    ]
    report, final, _ = simulate(tmp_path, objects)
    pods = report["pods"]
    assert (pods["default/use"]["node"], card(pods["default/use"])) == ("n2", allowed)
    assert (pods["default/nouse"]["node"], card(pods["default/nouse"])) == ("n2", allowed)
    # The denylist wins: no card is left for "both".
    assert pods["default/both"]["node"] is None
    assert pending_reason(final, "both").startswith("0/2 nodes are available")

