"""User guide ``how_to_use_gpu_number``: with ``deviceshare.GPUNumberEnable`` (the guide's conf
for Volcano after v1.8.2), a pod asking ``volcano.sh/gpu-number: 1`` gets a card of its own
(``volcano.sh/gpu-index``); a second such pod gets another card, and one more than the node has
idle waits.

The guide's own pod has no ``schedulerName``: the API server makes it default-scheduler's, so
Volcano never sees it; simulate says so rather than place it (docs/migrating-from-volcano.md).
The guide's conf for v1.8.2 and earlier (``predicate.GPUNumberEnable``) is retired: inert and
quiet, the cards counted as a plain resource.
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
      deviceshare.GPUNumberEnable: true
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
OLD_CONF = CONF.replace(
    "  - name: deviceshare\n    arguments:\n      deviceshare.GPUNumberEnable: true\n"
    "  - name: predicates\n",
    "  - name: predicates\n    arguments:\n      predicate.GPUNumberEnable: true\n",
)


def gpu_node(name: str, cards: int) -> dict[str, Any]:
    """As the guide's node: number-mode device plugin, so no GPU memory is advertised."""
    return node(name, cpu="2", memory="7Gi", **{MEMORY: "0", NUMBER: str(cards)})


def gpu_pod(name: str, cards: int, scheduler: str | None = "volcano") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "cuda-container",
                "image": "nvidia/cuda:9.0-devel",
                "resources": {"limits": {NUMBER: str(cards)}},
            }
        ]
    }
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def test_each_pod_gets_cards_of_its_own(tmp_path: Path) -> None:
    objects = [
        conf_map(CONF),
        gpu_node("n1", 2),
        gpu_pod("gpu-pod1", 1),
        gpu_pod("gpu-pod2", 1),
        gpu_pod("gpu-pod3", 1),
    ]
    report, final, err = simulate(tmp_path, objects)
    assert err == ""
    pods = report["pods"]
    placed = [
        name for name in ("gpu-pod1", "gpu-pod2", "gpu-pod3") if pods[f"default/{name}"]["node"]
    ]
    assert len(placed) == 2
    cards = {pods[f"default/{name}"]["annotations"]["volcano.sh/gpu-index"] for name in placed}
    assert cards == {"0", "1"}
    (waiting,) = {"gpu-pod1", "gpu-pod2", "gpu-pod3"} - set(placed)
    # Both cards are taken: enqueue does not admit the third (its PodGroup stays Pending).
    assert report["podgroups"] and pods[f"default/{waiting}"]["node"] is None
    assert "pod group is not ready" in pending_reason(final, waiting)


def test_two_cards_for_one_pod(tmp_path: Path) -> None:
    report, _, _ = simulate(tmp_path, [conf_map(CONF), gpu_node("n1", 2), gpu_pod("pair", 2)])
    assert report["pods"]["default/pair"]["annotations"]["volcano.sh/gpu-index"] == "0,1"


def test_the_guides_pod_without_scheduler_name_is_not_volcanos(tmp_path: Path) -> None:
    objects = [conf_map(CONF), gpu_node("n1", 1), gpu_pod("gpu-pod1", 1, scheduler=None)]
    report, _, _ = simulate(tmp_path, objects)
    assert report["pods"]["default/gpu-pod1"]["node"] is None
    assert "default-scheduler" in report["unschedulable"]["default/gpu-pod1"]


def test_the_old_conf_is_quiet_and_fits_a_plain_resource(tmp_path: Path) -> None:
    report, _, err = simulate(tmp_path, [conf_map(OLD_CONF), gpu_node("n1", 1), gpu_pod("p", 1)])
    assert err == ""
    entry = report["pods"]["default/p"]
    assert entry["node"] == "n1"
    assert "volcano.sh/gpu-index" not in (entry.get("annotations") or {})


def test_the_old_conf_says_why_a_pod_waits(tmp_path: Path) -> None:
    """Two nodes of one card: a pod asking two is admitted (the cluster has two) and fits
    no node; its reason names deviceshare's switch."""
    objects = [conf_map(OLD_CONF), gpu_node("n1", 1), gpu_node("n2", 1), gpu_pod("two", 2)]
    _, final, err = simulate(tmp_path, objects)
    assert err == ""
    reason = pending_reason(final, "two")
    assert reason.startswith("0/2 nodes are available: 2 Insufficient volcano.sh/gpu-number (")
    assert "deviceshare.GPUNumberEnable is off" in reason
    assert "predicate.GPUNumberEnable is retired" in reason
