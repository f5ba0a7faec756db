"""The PodGroup controller for plain pods and workloads (spec §5.2; upstream
``pkg/controllers/podgroup/pg_controller_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.controllers.podgroup import build_pod_group_for_pod, pod_group_for_pod

RS_UID = "7a09885b-b753-4924-9fba-77c0836bac20"
SCHEDULERS = ["volcano"]
MODE = "volcano.sh/network-topology-mode"
TIER = "volcano.sh/network-topology-highest-tier"


def plain_pod(
    name: str = "pod1",
    *,
    owner_uid: str | None = None,
    owner_kind: str = "ReplicaSet",
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    requests: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "test",
        "uid": f"{name}-uid",
        "annotations": dict(annotations or {}),
        "labels": dict(labels or {}),
    }
    if owner_uid is not None:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": owner_kind,
                "name": "rs1",
                "uid": owner_uid,
                "controller": True,
            }
        ]
    container = {"name": "container1", "resources": {"requests": dict(requests or {})}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"schedulerName": "volcano", "containers": [container], **spec},
    }


def replica_set(annotations: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "rs1", "namespace": "test", "uid": RS_UID, "annotations": annotations},
    }


def test_upstream_pod_with_owner_and_priority_class() -> None:
    """TestAddPodGroup "AddPodGroup: pod has ownerReferences and priorityClassName"."""
    pod = plain_pod(owner_uid=RS_UID, priorityClassName="test-pc")
    result = pod_group_for_pod(pod, None, SCHEDULERS)
    assert result is not None
    pg, patch = result
    assert pg["metadata"]["name"] == f"podgroup-{RS_UID}"
    assert pg["metadata"]["ownerReferences"] == pod["metadata"]["ownerReferences"]
    assert pg["spec"]["priorityClassName"] == "test-pc"
    assert pg["spec"]["minMember"] == 1
    assert pg["status"] == {"phase": "Pending"}
    assert patch == {"scheduling.k8s.io/group-name": f"podgroup-{RS_UID}"}


def test_upstream_pod_without_owner_or_priority_class() -> None:
    """TestAddPodGroup "AddPodGroup: pod has no ownerReferences or priorityClassName": the pod
    owns its group."""
    result = pod_group_for_pod(plain_pod(), None, SCHEDULERS)
    assert result is not None
    pg, _ = result
    assert pg["metadata"]["name"] == "podgroup-pod1-uid"
    assert pg["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": "pod1",
            "uid": "pod1-uid",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert "priorityClassName" not in pg["spec"]


def test_upstream_owner_with_group_min_member() -> None:
    """TestAddPodGroup "AddPodGroup: pod owners with group-min-member annotation": minMember 2
    and minResources twice the pod's request."""
    pod = plain_pod(owner_uid=RS_UID, requests={"nvidia.com/gpu": "1"})
    owner = replica_set({"scheduling.volcano.sh/group-min-member": "2"})
    result = pod_group_for_pod(pod, owner, SCHEDULERS)
    assert result is not None
    pg, _ = result
    assert pg["spec"]["minMember"] == 2
    assert pg["spec"]["minResources"]["nvidia.com/gpu"] == "2"


@pytest.mark.parametrize("value", ["x", "-1"])
def test_bad_group_min_member_falls_back_to_one(value: str) -> None:
    owner = replica_set({"scheduling.volcano.sh/group-min-member": value})
    pg = build_pod_group_for_pod(plain_pod(owner_uid=RS_UID), owner)
    assert pg["spec"]["minMember"] == 1


def test_upstream_build_scenario_1_do_not_inherit() -> None:
    """Test_pgcontroller_buildPodGroupFromPod "Scenario 1: Do not inherit upper resource
    annotations"."""
    pod = plain_pod(
        "test-pod",
        annotations={
            "scheduling.volcano.sh/queue-name": "test-queue",
            "volcano.sh/preemptable": "true",
        },
        labels={"volcano.sh/cooldown-time": "60s"},
        requests={"cpu": "1"},
        priorityClassName="high-priority",
    )
    pg = build_pod_group_for_pod(pod, None, inherit_owner_annotations=False)
    assert pg["metadata"]["namespace"] == "test"
    assert pg["spec"]["minMember"] == 1
    assert pg["spec"]["priorityClassName"] == "high-priority"
    assert pg["spec"]["queue"] == "test-queue"
    assert pg["spec"]["minResources"]["cpu"] == "1"
    assert pg["metadata"]["annotations"] == {"volcano.sh/preemptable": "true"}
    assert pg["metadata"]["labels"] == {"volcano.sh/cooldown-time": "60s"}


def test_upstream_build_scenario_2_inherit() -> None:
    """ "Scenario 2: Inherit upper resource annotations": minMember 3, volcano.sh/ annotations
    inherited, the pod's own jdb-min-available overriding the owner's."""
    owner = replica_set(
        {
            "scheduling.volcano.sh/group-min-member": "3",
            "volcano.sh/custom-key": "custom-value",
            "volcano.sh/jdb-min-available": "2",
        }
    )
    pod = plain_pod(
        "test-pod",
        owner_uid=RS_UID,
        annotations={"volcano.sh/jdb-min-available": "1"},
        requests={"cpu": "1"},
        priorityClassName="low-priority",
    )
    pg = build_pod_group_for_pod(pod, owner)
    assert pg["spec"]["minMember"] == 3
    assert pg["metadata"]["annotations"]["volcano.sh/custom-key"] == "custom-value"
    assert pg["metadata"]["annotations"]["volcano.sh/jdb-min-available"] == "1"
    assert "volcano.sh/jdb-max-unavailable" not in pg["metadata"]["annotations"]
    assert pg["spec"]["minResources"]["cpu"] == "3"
    # Only volcano.sh/ annotations are inherited.
    assert "scheduling.volcano.sh/group-min-member" not in pg["metadata"]["annotations"]


def test_upstream_build_scenario_3_inherit_max_unavailable() -> None:
    """ "Scenario 3: Inherit upper annotations with JDBMaxUnavailable"."""
    owner = replica_set(
        {"scheduling.volcano.sh/group-min-member": "3", "volcano.sh/jdb-max-unavailable": "20%"}
    )
    pg = build_pod_group_for_pod(plain_pod("test-pod-3", owner_uid=RS_UID), owner)
    assert pg["metadata"]["annotations"]["volcano.sh/jdb-max-unavailable"] == "20%"
    assert "volcano.sh/jdb-min-available" not in pg["metadata"]["annotations"]


def test_owner_kinds_that_set_the_gang_size() -> None:
    annotations = {"scheduling.volcano.sh/group-min-member": "4"}
    for kind, api_version, expected in [
        ("StatefulSet", "apps/v1", 4),
        ("DaemonSet", "apps/v1", 4),
        ("Job", "batch/v1", 4),
        ("Job", "batch.volcano.sh/v1alpha1", 1),
        ("Deployment", "apps/v1", 1),
    ]:
        owner = {"apiVersion": api_version, "kind": kind, "metadata": {"annotations": annotations}}
        pg = build_pod_group_for_pod(plain_pod(owner_uid="o", owner_kind=kind), owner)
        assert pg["spec"]["minMember"] == expected, (kind, api_version)


@pytest.mark.parametrize(
    ("name", "annotations", "expected"),
    [
        (
            "Pod with NetworkTopology annotations - hard mode with tier",
            {MODE: "hard", TIER: "2"},
            {"mode": "hard", "highestTierAllowed": 2},
        ),
        (
            "Pod with NetworkTopology annotations - soft mode only",
            {MODE: "soft"},
            {"mode": "soft"},
        ),
        (
            "Pod with tier annotation only - should default to hard mode",
            {TIER: "1"},
            {"mode": "hard", "highestTierAllowed": 1},
        ),
        ("Pod without NetworkTopology annotations", {}, None),
        (
            "Pod with invalid mode annotation - should default to hard",
            {MODE: "invalid", TIER: "3"},
            {"mode": "hard", "highestTierAllowed": 3},
        ),
    ],
)  # fmt: skip
def test_upstream_build_pod_group_with_network_topology(
    name: str, annotations: dict[str, str], expected: dict[str, Any] | None
) -> None:
    """TestBuildPodGroupFromPodWithNetworkTopology."""
    pg = build_pod_group_for_pod(plain_pod(annotations=annotations), None)
    assert pg["spec"].get("networkTopology") == expected, name


def test_upstream_no_pod_group_when_group_name_annotation_exists() -> None:
    """TestNoPodGroupCreatedForWhenKubeGroupNameAnnotationExists."""
    pod = plain_pod(annotations={"scheduling.k8s.io/group-name": "pg1"})
    assert pod_group_for_pod(pod, None, SCHEDULERS) is None


def test_pods_of_other_schedulers_are_ignored() -> None:
    pod = plain_pod(schedulerName="default-scheduler")
    assert pod_group_for_pod(pod, None, SCHEDULERS) is None


def test_pod_without_scheduler_name_is_ours() -> None:
    pod = plain_pod()
    del pod["spec"]["schedulerName"]
    assert pod_group_for_pod(pod, None, SCHEDULERS) is not None


def test_queue_defaults_and_preemptable_label_copied() -> None:
    pod = plain_pod(
        labels={"volcano.sh/preemptable": "false"}, annotations={"volcano.sh/revocable-zone": "*"}
    )
    pg = build_pod_group_for_pod(pod, None)
    assert pg["spec"]["queue"] == "default"
    assert pg["metadata"]["labels"] == {"volcano.sh/preemptable": "false"}
    assert pg["metadata"]["annotations"] == {"volcano.sh/revocable-zone": "*"}


def test_finished_pod_charges_only_the_object_count() -> None:
    pod = plain_pod(requests={"cpu": "1"})
    pod["status"] = {"phase": "Succeeded"}
    assert build_pod_group_for_pod(pod, None)["spec"]["minResources"] == {"count/pods": "1"}
