"""User guide ``how_to_use_gpu_sharing``: with ``deviceshare.GPUSharingEnable`` (the guide's conf
for Volcano after v1.8.2), a node advertising ``volcano.sh/gpu-memory`` 89424 and
``volcano.sh/gpu-number`` 8 has 8 cards of 11178 MiB; two pods asking 1024 MiB each share one
card (``volcano.sh/gpu-index: "0"`` on both, with ``volcano.sh/predicate-time``, which the device
plugin turns into ``NVIDIA_VISIBLE_DEVICES=0``), and a pod asking more than one card holds waits
though the node has that much in total.

The guide's conf for v1.8.2 and earlier (``predicate.GPUSharingEnable`` on predicates) turns
nothing on in current Volcano: the argument is retired, so it is inert and quiet, and the pods
are fitted as a plain extended resource, with no card picked; a pod left pending is told that
deviceshare's switch is off (docs/migrating-from-volcano.md, "Where Volcano's guides and
Volcano disagree").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import conf_map, node, pending_reason, simulate

MEMORY, NUMBER = "volcano.sh/gpu-memory", "volcano.sh/gpu-number"

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: deviceshare
    arguments:
      deviceshare.GPUSharingEnable: true
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
OLD_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
    arguments:
      predicate.GPUSharingEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


def gpu_node(name: str) -> dict[str, Any]:
    """The guide's node: 8 cards, 89424 MiB in all."""
    return node(name, cpu="4", memory="8Gi", **{MEMORY: "89424", NUMBER: "8"})


def gpu_pod(name: str, memory: str) -> dict[str, Any]:
    """The guide's pod: GPU memory as a limit only."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "cuda-container",
                    "image": "nvidia/cuda:9.0-devel",
                    "command": ["sleep"],
                    "args": ["100000"],
                    "resources": {"limits": {MEMORY: memory}},
                }
            ],
        },
    }


def test_two_pods_share_one_card(tmp_path: Path) -> None:
    objects = [
        conf_map(CONF),
        gpu_node("n1"),
        gpu_pod("gpu-pod1", "1024"),
        gpu_pod("gpu-pod2", "1024"),
    ]
    report, _, err = simulate(tmp_path, objects)
    assert err == ""
    for name in ("gpu-pod1", "gpu-pod2"):
        entry = report["pods"][f"default/{name}"]
        assert entry["node"] == "n1"
        assert entry["annotations"]["volcano.sh/gpu-index"] == "0"
        assert entry["annotations"]["volcano.sh/predicate-time"].isdigit()


def test_a_pod_larger_than_one_card_waits(tmp_path: Path) -> None:
    """12000 MiB: the node has 89424 free in all but no card of more than 11178."""
    objects = [conf_map(CONF), gpu_node("n1"), gpu_pod("big", "12000")]
    report, final, _ = simulate(tmp_path, objects)
    assert report["pods"]["default/big"]["node"] is None
    assert "GpuShare no enough gpu memory on node n1" in pending_reason(final, "big")


def test_the_old_conf_is_quiet_and_fits_a_plain_resource(tmp_path: Path) -> None:
    """predicate.GPUSharingEnable is retired: no warning, no card picked; 12000 MiB fits the
    node's total, as on a current Volcano."""
    objects = [
        conf_map(OLD_CONF),
        gpu_node("n1"),
        gpu_pod("gpu-pod1", "1024"),
        gpu_pod("big", "12000"),
    ]
    report, _, err = simulate(tmp_path, objects)
    assert err == ""
    for name in ("gpu-pod1", "big"):
        entry = report["pods"][f"default/{name}"]
        assert entry["node"] == "n1"
        assert "volcano.sh/gpu-index" not in (entry.get("annotations") or {})


def test_the_old_conf_says_why_a_pod_waits(tmp_path: Path) -> None:
    """More than the node's total: pending, and the reason names deviceshare's switch."""
    objects = [conf_map(OLD_CONF), gpu_node("n1"), gpu_node("n2"), gpu_pod("huge", "100000")]
    report, final, err = simulate(tmp_path, objects)
    assert err == ""
    assert report["pods"]["default/huge"]["node"] is None
    assert pending_reason(final, "huge") == (
        "0/2 nodes are available: 2 Insufficient volcano.sh/gpu-memory (counted as a plain"
        " resource, not per device: deviceshare.GPUSharingEnable is off on plugin deviceshare;"
        " predicate.GPUSharingEnable is retired, Volcano v1.8 moved GPU sharing to the"
        " deviceshare plugin)."
    )
