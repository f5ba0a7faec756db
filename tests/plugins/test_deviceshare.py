"""The deviceshare plugin as a whole: its arguments (``deviceshare_test.go`` TestArguments,
and the combinations upstream exits on), the conf check, and whole runs through ``simulate``
(the examples, release of cards and annotations, the device ConfigMap)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.plugins.deviceshare_helpers import (
    EXAMPLES,
    example_documents,
    example_with,
    simulate,
    write_input,
)
from volcano_py.cli.main import main
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import RefusedArgumentsError
from volcano_py.framework.conf_check import load_conf
from volcano_py.plugins.deviceshare import new
from volcano_py.plugins.deviceshare.config import parse_device_config
from volcano_py.plugins.deviceshare.options import refused_arguments
from volcano_py.scheduler.registry import PluginRegistry


def test_arguments() -> None:
    """TestArguments (deviceshare_test.go)."""
    plugin = new(
        Arguments(
            {
                "deviceshare.VGPUEnable": True,
                "deviceshare.SchedulePolicy": "binpack",
                "deviceshare.ScheduleWeight": 10,
            }
        )
    )
    assert plugin.options.schedule_weight == 10
    assert plugin.options.schedule_policy == "binpack"
    assert plugin.options.config_key == "kube-system/volcano-vgpu-device-config"


@pytest.mark.parametrize(
    ("arguments", "refusal"),
    [
        (
            {"deviceshare.GPUSharingEnable": True, "deviceshare.GPUNumberEnable": True},
            "can not define true in both gpu sharing and gpu number",
        ),
        (
            {"deviceshare.GPUNumberEnable": True, "deviceshare.VGPUEnable": "true"},
            "gpu-share and vgpu can't be used together",
        ),
        ({"deviceshare.GPUSharingEnable": True, "deviceshare.VGPUEnable": False}, None),
    ],
)
def test_conflicting_switches_are_refused(arguments: dict[str, Any], refusal: str | None) -> None:
    found = refused_arguments(arguments)
    if refusal is None:
        assert found is None
        return
    assert found is not None and refusal in found
    conf = yaml.safe_dump(
        {
            "actions": "allocate",
            "tiers": [{"plugins": [{"name": "deviceshare", "arguments": arguments}]}],
        }
    )
    with pytest.raises(RefusedArgumentsError, match="deviceshare"):
        load_conf(conf, PluginRegistry())


def test_unknown_arguments_are_named() -> None:
    warnings: list[str] = []
    conf = yaml.safe_dump(
        {
            "actions": "allocate",
            "tiers": [
                {
                    "plugins": [
                        {
                            "name": "deviceshare",
                            "arguments": {
                                "deviceshare.GPUSharingEnable": True,
                                "deviceshare.AscendMindClusterVNPUEnable": True,
                                "deviceshare.GPUShareEnable": True,
                            },
                        }
                    ]
                }
            ],
        }
    )
    load_conf(conf, PluginRegistry(), emit=warnings.append)
    text = "\n".join(warnings)
    # MindCluster vNPU is ported: accepted without a word.
    assert "AscendMindClusterVNPUEnable" not in text
    assert "unknown plugin argument 'deviceshare.GPUShareEnable'" in text


def test_device_config_reads_the_nvidia_section() -> None:
    config = parse_device_config(
        "nvidia:\n  resourceCountName: example.com/gpu\n  resourceMemoryName: example.com/mem\n",
        "test",
    )
    assert (config.resource_count_name, config.resource_memory_name) == (
        "example.com/gpu",
        "example.com/mem",
    )
    assert config.resource_core_name == ""


def test_gpu_share_example_lands_where_one_card_fits(capsys: pytest.CaptureFixture[str]) -> None:
    report = simulate(capsys, EXAMPLES / "gpu-share.yaml")
    share = report["pods"]["default/share"]
    assert share["node"] == "node-b"
    assert share["annotations"]["volcano.sh/gpu-index"] == "1"
    # The simulated clock's time, in nanoseconds (upstream's UnixNano).
    assert share["annotations"]["volcano.sh/predicate-time"].isdigit()
    assert "annotations" not in report["pods"]["default/busy"]


def test_vgpu_example_binpacks_and_honours_the_uuid(capsys: pytest.CaptureFixture[str]) -> None:
    report = simulate(capsys, EXAMPLES / "vgpu.yaml")
    infer = report["pods"]["default/infer"]
    assert infer["node"] == "gpu-1"
    assert infer["annotations"]["volcano.sh/vgpu-ids-new"] == "GPU-a,NVIDIA,8000,30:"
    assert infer["annotations"]["volcano.sh/devices-to-allocate"] == "GPU-a,NVIDIA,8000,30:"
    assert infer["annotations"]["volcano.sh/vgpu-node"] == "gpu-1"
    assert infer["annotations"]["volcano.sh/bind-phase"] == "allocating"
    pinned = report["pods"]["default/pinned"]
    assert pinned["node"] == "gpu-2"
    assert pinned["annotations"]["volcano.sh/vgpu-ids-new"].startswith("GPU-c,")


def test_a_finished_pod_gives_its_card_back(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Released on deletion: the card a finished pod held is free for the next one, which
    could not fit while it ran."""
    documents = example_documents("gpu-share.yaml")
    for doc in documents:
        if doc["kind"] == "Pod" and doc["metadata"]["name"] == "share":
            doc["spec"]["containers"][0]["resources"]["limits"]["volcano.sh/gpu-memory"] = "8000"
        if doc["kind"] == "Pod" and doc["metadata"]["name"] == "busy":
            # It holds both of node-b's cards until it finishes.
            doc["metadata"]["annotations"]["volcano.sh/gpu-index"] = "0,1"
            doc["metadata"]["annotations"]["volcano-py.sim/run-cycles"] = "2"
    report = simulate(capsys, write_input(tmp_path, documents), "--cycles", "6")
    share = report["pods"]["default/share"]
    assert share["node"] == "node-b"
    assert share["annotations"]["volcano.sh/gpu-index"] == "0"


def test_the_device_config_map_names_the_vgpu_resources(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The device ConfigMap is read from the input by namespace and name (the plugin's
    KnownGeometriesCM* arguments); a pod asking the renamed resources is a vGPU pod."""
    documents = example_with(
        "vgpu.yaml",
        {
            "deviceshare.KnownGeometriesCMName": "devices",
            "deviceshare.KnownGeometriesCMNamespace": "gpu",
        },
    )
    documents.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "devices", "namespace": "gpu"},
            "data": {
                "device-config.yaml": "nvidia:\n  resourceCountName: example.com/vgpu\n"
                "  resourceMemoryName: example.com/vgpu-memory\n"
                "  resourceCoreName: example.com/vgpu-cores\n"
            },
        }
    )
    for doc in documents:
        if doc["kind"] == "Node":
            doc["status"]["allocatable"].update(
                {"example.com/vgpu": "20", "example.com/vgpu-memory": "48000"}
            )
        if doc["kind"] == "Pod" and doc["metadata"]["name"] == "infer":
            doc["spec"]["containers"][0]["resources"]["limits"] = {
                "example.com/vgpu": "1",
                "example.com/vgpu-memory": "8000",
            }
    report = simulate(capsys, write_input(tmp_path, documents))
    infer = report["pods"]["default/infer"]
    assert infer["annotations"]["volcano.sh/vgpu-ids-new"] == "GPU-a,NVIDIA,8000,0:"


# ---- deallocation: the cards and the bind annotations go back


def _vgpu_plugin_with_pod(bind_phase: str) -> tuple[Any, Any]:
    from volcano_py.api.node import NodeInfo
    from volcano_py.api.node_matrix import NodeMatrix
    from volcano_py.api.task import TaskInfo
    from volcano_py.api.types import TaskStatus
    from volcano_py.plugins.deviceshare.config import DEFAULT_NVIDIA
    from volcano_py.plugins.deviceshare.vgpu import VgpuDevices

    resources = {
        "volcano.sh/vgpu-number": "10",
        "volcano.sh/vgpu-memory": "16384",
        "volcano.sh/vgpu-cores": "100",
    }
    node = {
        "metadata": {
            "name": "node-a",
            "annotations": {
                "volcano.sh/node-vgpu-register": "GPU-aaaa,10,16384,NVIDIA-T4,true,hami-core:"
            },
        },
        "status": {"allocatable": resources, "capacity": resources},
    }
    annotations = {
        "volcano.sh/vgpu-node": "node-a",
        "volcano.sh/vgpu-ids-new": "GPU-aaaa,NVIDIA,80,0:",
        "volcano.sh/devices-to-allocate": "GPU-aaaa,NVIDIA,80,0:",
        "volcano.sh/vgpu-time": "1700000000",
        "volcano.sh/bind-time": "1700000000",
        "volcano.sh/bind-phase": bind_phase,
        "keep-me": "yes",
    }
    pod = {
        "metadata": {"name": "worker-0", "namespace": "default", "annotations": annotations},
        "spec": {
            "nodeName": "node-a",
            "containers": [
                {
                    "resources": {
                        "limits": {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "80"}
                    }
                }
            ],
        },
    }
    task = TaskInfo.from_pod(pod)
    task.status = TaskStatus.RUNNING
    info = NodeInfo(name="node-a", matrix=NodeMatrix(), row=0, node=node)
    info.tasks[task.key] = task
    plugin = new(Arguments({"deviceshare.VGPUEnable": True}))
    plugin.vgpu = VgpuDevices([info], DEFAULT_NVIDIA, "")
    return plugin, task


def test_release_drops_the_speculative_vgpu_annotations() -> None:
    """TestReleaseReturnsSpeculativeAnnotationKeys (vgpu/device_info_test.go) and
    TestHAMICoreFactory_SubPodRemovesEntry (hamicore_test.go): a deallocated pod leaves its
    card, and the device annotations leave its bind annotations (others stay)."""
    from volcano_py.framework.event import Event

    plugin, task = _vgpu_plugin_with_pod("allocating")
    card = plugin.vgpu.nodes[0].cards[0]
    assert (card.used_num, card.used_mem) == (1, 80)
    plugin._deallocate(None, Event(task))
    assert (card.used_num, card.used_mem, card.pods) == (0, 0, {})
    for key in (
        "volcano.sh/vgpu-node",
        "volcano.sh/vgpu-ids-new",
        "volcano.sh/devices-to-allocate",
        "volcano.sh/bind-phase",
    ):
        assert key not in task.pod_annotations
    assert task.pod_annotations["keep-me"] == "yes"


def test_release_keeps_committed_annotations() -> None:
    """TestReleaseKeepsCommittedAnnotations: once the device plugin set bind-phase success,
    the annotations are its own and stay."""
    from volcano_py.framework.event import Event

    plugin, task = _vgpu_plugin_with_pod("success")
    plugin._deallocate(None, Event(task))
    assert task.pod_annotations["volcano.sh/vgpu-node"] == "node-a"
    assert task.pod_annotations["volcano.sh/vgpu-ids-new"] == "GPU-aaaa,NVIDIA,80,0:"


def test_an_unknown_schedule_policy_is_named(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("WARNING"):
        new(Arguments({"deviceshare.VGPUEnable": True, "deviceshare.SchedulePolicy": "bnpack"}))
    assert "deviceshare.SchedulePolicy 'bnpack' is neither 'binpack' nor 'spread'" in caplog.text


def test_simulate_exits_2_on_conflicting_switches(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    documents = example_with("gpu-share.yaml", {"deviceshare.VGPUEnable": True})
    assert main(["simulate", str(write_input(tmp_path, documents))]) == 2
    assert "gpu-share and vgpu can't be used together" in capsys.readouterr().err
