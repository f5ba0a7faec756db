"""deviceshare's MindCluster Ascend 310P vNPU (``deviceshare.AscendMindClusterVNPUEnable``) live:
the scheduler and controllers as processes against a real API server, kwok nodes labelled and
annotated as MindCluster's device plugin leaves an Atlas inference node (``accelerator``,
``servertype``, ``node.kubernetes.io/npu.chip.name``, ``huawei.com/npu-core`` capacity, the
cards in ``baseDeviceInfos``), and ClusterD's device-info ConfigMap in ``mindx-dl`` carrying
``mx-consumer-volcano=true``, the label upstream's informer selects on (the card lists are
there, not on the Nodes).

* the guide's (how_to_use_vnpu, MindCluster mode) Job asking 8 AI cores gets a whole chip:
  ``huawei.com/npu-core: "0"`` and ``predicate-time`` in its bind annotations, as upstream's
  ``BuildNPUTopologyAnnotations`` writes them;
* two pods asking 2 AI cores (``vnpu-level`` low) share the least free chip's ``vir02_1c``
  template (``0-vir02_1c``);
* a node whose card list is only in a ConfigMap without the label is not a vNPU node: the
  pod pinned there stays Pending and says why.

The same scenario, larger, runs in ``simulate`` in tests/guides/test_how_to_use_vnpu.py.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
import test_controllers_process
import test_scheduler_process
from live_objects import KWOK_BASE, annotations_of, bare_pod, node_of, pending_reason, wait_bound
from test_scheduler_process import SchedulerProcess, wait_until

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import ApiError, ControlPlane
from tests.device_objects import (
    ATLAS_310P_LABELS,
    MINDX_NAMESPACE,
    atlas_310p_annotations,
    atlas_310p_capacity,
    cluster_device_info,
)

pytestmark = pytest.mark.cluster

# Fixtures of the scheduler, controllers and guide tests, used here too.
controllers = test_controllers_process.controllers
scheduler_name = test_scheduler_process.scheduler_name
scheduler_rbac = test_scheduler_process.scheduler_rbac
start_scheduler = test_scheduler_process.start_scheduler
__all__ = ["controllers", "scheduler_name", "scheduler_rbac", "start_scheduler"]

StartScheduler = Callable[..., SchedulerProcess]
MakeNode = Callable[..., str]
CONFIG_MAPS = f"/api/v1/namespaces/{MINDX_NAMESPACE}/configmaps"

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.AscendMindClusterVNPUEnable: true
configurations:
- name: init-params
  arguments: {"presetVirtualDevice": "false"}
"""


def atlas_node(make: MakeNode, role: str, chips: int, labels: dict[str, str] | None = None) -> str:
    """An Atlas inference node: 8 AI cores per 310P chip, its cards in ``baseDeviceInfos``;
    which of them are healthy comes from ClusterD's ConfigMap."""
    return make(
        role,
        {**KWOK_BASE, **atlas_310p_capacity(chips)},
        labels={**ATLAS_310P_LABELS, **(labels or {})},
        annotations=atlas_310p_annotations(chips),
    )


@pytest.fixture
def mindx_config_maps(
    control_plane: ControlPlane, delete_afterwards: Callable[[str], None]
) -> Callable[[dict[str, Any]], None]:
    """``create(config_map)`` in ``mindx-dl`` (made if missing); deleted afterwards."""
    with contextlib.suppress(ApiError):
        control_plane.create_namespace(MINDX_NAMESPACE)

    def create(config_map: dict[str, Any]) -> None:
        control_plane.create(config_map, MINDX_NAMESPACE)
        delete_afterwards(f"{CONFIG_MAPS}/{config_map['metadata']['name']}")

    return create


def vnpu_pod(name: str, scheduler: str, cores: int, host: str) -> dict[str, Any]:
    resources = {"huawei.com/npu-core": str(cores)}
    return bare_pod(
        name,
        scheduler,
        {"requests": dict(resources), "limits": dict(resources)},
        labels={"ring-controller.atlas": "ascend-310P"},
        container="infer",
        image="mindie",
        nodeSelector={"kubernetes.io/hostname": host},
    )


def mindx_job(scheduler: str) -> dict[str, Any]:
    """The guide's Job: one whole 310P chip (8 AI cores), on the ``host-arch`` node."""
    labels = {
        "app": "infers",
        "ring-controller.atlas": "ascend-310P",
        "vnpu-dvpp": "null",
        "vnpu-level": "low",
    }
    cores = {"huawei.com/npu-core": "8"}
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "mindx-dls", "labels": {"ring-controller.atlas": "ascend-310P"}},
        "spec": {
            "minAvailable": 1,
            "schedulerName": scheduler,
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
                            "terminationGracePeriodSeconds": 0,
                            "containers": [
                                {
                                    "name": "resnet50infer",
                                    "image": "mindie",
                                    "command": ["/bin/bash", "-c", "tail -f /dev/null"],
                                    "resources": {"requests": cores, "limits": cores},
                                }
                            ],
                            "nodeSelector": {"host-arch": "huawei-arm"},
                        },
                    },
                }
            ],
        },
    }


def test_vnpu_templates_and_whole_chips_in_the_bind_annotations(
    controllers: ControllersProcess,
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_node: MakeNode,
    mindx_config_maps: Callable[[dict[str, Any]], None],
    scheduler_name: str,
) -> None:
    suffix = namespace[-6:]
    arm = atlas_node(make_node, "arm", 2, {"host-arch": "huawei-arm"})
    duo = atlas_node(make_node, "duo", 2)
    stray = atlas_node(make_node, "stray", 2)
    control_plane.wait_nodes_ready([arm, duo, stray])
    mindx_config_maps(cluster_device_info({arm: 2, duo: 2}, f"cluster-info-device-{suffix}"))
    # Without the label upstream's informer selects on: not read, so stray lists no card.
    mindx_config_maps(
        cluster_device_info({stray: 2}, f"cluster-info-device-{suffix}-x", labelled=False)
    )
    scheduler = start_scheduler(conf=CONF)
    scheduler.wait_ready()
    control_plane.create(mindx_job(scheduler_name), namespace)
    for name in ("a-low", "b-low"):
        control_plane.create(vnpu_pod(name, scheduler_name, 2, duo), namespace)
    control_plane.create(vnpu_pod("on-stray", scheduler_name, 2, stray), namespace)
    job_pod = "mindx-dls-default-test-0"
    wait_bound(control_plane, namespace, [job_pod, "a-low", "b-low"], scheduler)

    assert node_of(control_plane, namespace, job_pod) == arm
    whole = annotations_of(control_plane, namespace, job_pod)
    assert whole["huawei.com/npu-core"] == "0"
    assert whole["predicate-time"].isdigit()
    for name in ("a-low", "b-low"):
        assert node_of(control_plane, namespace, name) == duo
        shared = annotations_of(control_plane, namespace, name)
        assert shared["huawei.com/npu-core"] == "0-vir02_1c"
        assert shared["predicate-time"].isdigit()

    wait_until(
        "the stray pod's pending reason",
        lambda: "invalid VNode" in pending_reason(control_plane, namespace, "on-stray"),
        diagnose=lambda: scheduler.log(40),
    )
    assert node_of(control_plane, namespace, "on-stray") == ""
    unlabelled = f"ConfigMap {MINDX_NAMESPACE}/cluster-info-device-{suffix}-x"
    assert f"{unlabelled} lacks the label mx-consumer-volcano=true" in scheduler.log(None)
