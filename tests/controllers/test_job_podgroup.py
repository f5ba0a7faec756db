"""The PodGroup of a Volcano Job: construction, update and ``minResources`` (upstream
``TestTaskPriority_CalcPGMin``, ``TestCalcPGMinResources`` in ``job_controller_util_test.go``;
``TestCreatePodGroupIfNotExistFunc``, ``TestUpdatePodGroupIfJobUpdateFunc``,
``TestGetSubGroupPolicy``, ``TestRecordPodGroupEvent`` in ``job_controller_actions_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from controller_fixtures import NOW, job, pod_group, task

from volcano_py.controllers.job import JobRequest, sync_job
from volcano_py.controllers.job_podgroup import (
    build_pod_group,
    calc_pg_min_resources,
    min_then_fill_resources,
    sub_group_policy,
    tasks_by_priority,
    updated_pod_group,
)
from volcano_py.controllers.quota import format_list

UID = "e7f18111-1cec-11ea-b688-fa163ec79500"


def _usage(cpu_milli: int, pods: int) -> dict[str, str]:
    cpu = f"{cpu_milli}m" if cpu_milli % 1000 else str(cpu_milli // 1000)
    return {"count/pods": str(pods), "cpu": cpu, "pods": str(pods), "requests.cpu": cpu}


def _master(min_available: int | None, priority_class: str | None = None) -> dict[str, Any]:
    return task("master", 2, min_available=min_available, cpu="50m", priority_class=priority_class)


def _worker(min_available: int | None, priority_class: str | None = None) -> dict[str, Any]:
    return task("worker", 2, min_available=min_available, cpu="100m", priority_class=priority_class)


# The classes upstream's table sets by hand as TaskPriority.priority.
CLASSES = {"high": 2}


@pytest.mark.parametrize(
    ("name", "tasks", "job_min", "cpu_milli", "pods"),
    [
        (
            "job's min available is 0, master's and workers is set to 1: min=1*master+1*worker",
            [_master(1), _worker(1)], None, 150, 2,
        ),
        (
            "job's min available is 0, master's is null and worker's is set to 1: "
            "min=2*master+worker",
            [_master(None, "high"), _worker(1)], None, 200, 3,
        ),
        (
            "job's min available is 3, master's is null and worker's is set to 1: "
            "min=2*master+1*worker",
            [_master(None), _worker(1)], 3, 200, 3,
        ),
        (
            "job's min available is 3, master's is 1 and worker's is null: min=1*master+2*worker",
            [_master(1), _worker(None)], 3, 250, 3,
        ),
        (
            "job's min available is 2, master's and worker's is set to 1: min=1*master+1*worker",
            [_master(1), _worker(1)], 2, 150, 2,
        ),
        (
            "job's min available is 3, master's and worker's is set to 1: "
            "min=1*master+1*worker+1*master(high-priority)",
            [_master(1, "high"), _worker(1)], 3, 200, 3,
        ),
        (
            "job's min available is 3, master's and worker's is set to 1: "
            "min=1*worker+1*master+1*worker(high-priority)",
            [_master(1), _worker(1, "high")], 3, 250, 3,
        ),
        (
            "job's min available is 3, master's is 0 and worker's is set to 1: "
            "min=1*worker+1*worker(high-priority)+1*master",
            [_master(0), _worker(1, "high")], 3, 250, 3,
        ),
        (
            "job's min available is 4, master's is null and worker's is set to 1: "
            "min=1*worker+2*master+1*worker",
            [_master(None), _worker(1, "high")], 4, 300, 4,
        ),
        (
            "job's min available is 4, master's and worker's is set to 1: "
            "min=1*worker+1*master+1*worker(hi-prio)+1*master",
            [_master(1), _worker(1, "high")], 4, 300, 4,
        ),
        (
            "job's min available is 2, master's is null and worker's is set to 1: min=2*master",
            [_master(None, "high"), _worker(1)], 2, 100, 2,
        ),
        (
            "job's min available is 2, master's is null and worker's is set to 1: "
            "min=1*worker+1*master",
            [_master(None), _worker(1, "high")], 2, 150, 2,
        ),
        (
            "job's min available is 2, master's is 1 and worker's is set to bull: "
            "min=1*master+1*worker",
            [_master(1), _worker(None)], 2, 150, 2,
        ),
    ],
)  # fmt: skip
def test_upstream_task_priority_calc_pg_min(
    name: str, tasks: list[dict[str, Any]], job_min: int | None, cpu_milli: int, pods: int
) -> None:
    """TestTaskPriority_CalcPGMin: ``TasksPriority.CalcPGMinResources`` on its own (the
    "minAvailable first, then fill" rule). As upstream's table does, a task without
    minAvailable gets its replicas (the webhook's default) and a job minAvailable of 0 the sum
    of the tasks'."""
    for each in tasks:
        each.setdefault("minAvailable", each["replicas"])
    owner = job("job1", *tasks, min_available=job_min)
    ordered = tasks_by_priority(owner, CLASSES)
    got = format_list(min_then_fill_resources(ordered, owner["spec"]["minAvailable"]))
    assert got == _usage(cpu_milli, pods), name


@pytest.mark.parametrize(
    ("master_min", "worker_min", "job_min", "cpu_milli", "pods"),
    [
        (1, None, 2, 100, 2),  # jobMinAvailable < sum(taskMinAvailable)
        (None, 1, 2, 100, 2),
        (None, None, 3, 200, 3),
        (1, 1, 3, 200, 3),  # jobMinAvailable > sum(taskMinAvailable)
        (1, None, 3, 250, 3),  # jobMinAvailable = sum(taskMinAvailable)
        (1, 1, 2, 150, 2),
    ],
)
def test_upstream_calc_pg_min_resources(
    master_min: int | None, worker_min: int | None, job_min: int, cpu_milli: int, pods: int
) -> None:
    """TestCalcPGMinResources: through the controller, tasks in spec order (no classes)."""
    tasks = [_master(master_min), _worker(worker_min)]
    for each in tasks:
        each.setdefault("minAvailable", each["replicas"])
    owner = job("job1", *tasks, min_available=job_min)
    assert calc_pg_min_resources(owner) == _usage(cpu_milli, pods)


def test_min_resources_carry_memory_limits_and_extended_resources() -> None:
    template = task("worker", 2, cpu="500m", memory="1Gi")
    template["template"]["spec"]["containers"][0]["resources"]["limits"] = {
        "cpu": "1",
        "nvidia.com/gpu": "1",
    }
    template["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    owner = job("job1", template)
    assert calc_pg_min_resources(owner) == {
        "count/pods": "2",
        "cpu": "1",
        "limits.cpu": "2",
        "memory": "2Gi",
        "nvidia.com/gpu": "2",
        "pods": "2",
        "requests.cpu": "1",
        "requests.memory": "2Gi",
        "requests.nvidia.com/gpu": "2",
    }


def test_pod_group_built_for_a_job() -> None:
    """Spec §5.1 "PodGroup built for a vcjob"."""
    owner = job(
        "job1",
        task("ps", 1),
        task("worker", 3, min_available=2),
        uid=UID,
        queue="q1",
        min_available=3,
        priorityClassName="high",
        networkTopology={"mode": "hard", "highestTierAllowed": 2},
        annotations={"a": "1"},
        labels={"l": "2"},
    )
    pg = build_pod_group(owner, {"high": 100})
    assert pg["metadata"] == {
        "name": f"job1-{UID}",
        "namespace": "default",
        "ownerReferences": [
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": "job1",
                "uid": UID,
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
        "annotations": {"a": "1"},
        "labels": {"l": "2"},
    }
    assert pg["spec"] == {
        "minMember": 3,
        "minTaskMember": {"ps": 1, "worker": 2},
        "queue": "q1",
        "priorityClassName": "high",
        "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
        "minResources": {
            "count/pods": "3",
            "cpu": "3",
            "pods": "3",
            "requests.cpu": "3",
        },
    }
    assert "status" not in pg  # the scheduler treats an empty phase as Pending


def _partitioned(name: str, min_partitions: int = 0, **topology: Any) -> dict[str, Any]:
    partition: dict[str, Any] = {"totalPartitions": 2, "partitionSize": 3}
    if min_partitions:
        partition["minPartitions"] = min_partitions
    if topology:
        partition["networkTopology"] = {"mode": "hard", **topology}
    return job(name, task("task1", 6, partition=partition), uid=UID, min_available=6)


@pytest.mark.parametrize(
    ("name", "owner", "expected"),
    [
        ("CreatePodGroup success Case", _partitioned("job1", highestTierAllowed=1), {"task1": 6}),
        (
            "CreatePodGroup success Case with MinPartitions",
            _partitioned("job3", 1, highestTierAllowed=1),
            {"task1": 3},
        ),
        (
            "CreatePodGroup success Case with highestTierName",
            _partitioned("job2", highestTierName="volcano.sh/hypernode"),
            {"task1": 6},
        ),
    ],
)
def test_upstream_create_pod_group_if_not_exist(
    name: str, owner: dict[str, Any], expected: dict[str, int]
) -> None:
    """TestCreatePodGroupIfNotExistFunc: the first sync creates ``<job>-<uid>``."""
    changes = sync_job(owner, None, [], JobRequest(event="OutOfSync"), now=NOW)
    assert changes.pod_group is not None
    assert changes.pod_group["metadata"]["name"] == f"{owner['metadata']['name']}-{UID}", name
    assert changes.pod_group["spec"]["minTaskMember"] == expected, name
    assert changes.create_pods == []  # the group is not admitted yet


@pytest.mark.parametrize(
    ("name", "owner", "pg_name", "expected"),
    [
        ("UpdatePodGroup success Case", job("job1", uid=UID), f"job1-{UID}", None),
        (
            "UpdatePodGroup compatibility with version lt 1.5 success Case",
            job("job2", uid=UID),
            "job2",
            None,
        ),
        (
            "UpdatePodGroup compatibility with PartitionPolicy",
            _partitioned("job3", highestTierAllowed=1),
            "job3",
            {"task1": 6},
        ),
        (
            "UpdatePodGroup compatibility with PartitionPolicy having MinPartitions",
            _partitioned("job4", 1, highestTierAllowed=1),
            "job4",
            {"task1": 3},
        ),
        (
            "UpdatePodGroup compatibility with highestTierName",
            _partitioned("job4", highestTierName="volcano.sh/hypernode"),
            "job4",
            {"task1": 6},
        ),
    ],
)
def test_upstream_update_pod_group_if_job_update(
    name: str, owner: dict[str, Any], pg_name: str, expected: dict[str, int] | None
) -> None:
    """TestUpdatePodGroupIfJobUpdateFunc: an existing group (also a legacy ``<job>`` one)
    takes the job's new priority class and task minimums."""
    owner["spec"]["priorityClassName"] = "new"
    existing = {
        "metadata": {"name": pg_name, "namespace": "test"},
        "spec": {"minResources": {}},
    }
    updated = updated_pod_group(existing, owner)
    assert updated is not None
    assert updated["metadata"]["name"] == pg_name
    assert updated["spec"]["priorityClassName"] == "new", name
    wanted = expected if expected is not None else {"worker": 2}
    assert updated["spec"]["minTaskMember"] == wanted, name


def test_update_keeps_status_and_skips_unchanged_groups() -> None:
    owner = job("job1", task("worker", 2), uid=UID)
    current = build_pod_group(owner)
    current["status"] = {"phase": "Running"}
    assert updated_pod_group(current, owner) is None
    owner["spec"]["tasks"][0]["replicas"] = 3
    owner["spec"]["tasks"][0]["minAvailable"] = 3
    owner["spec"]["minAvailable"] = 3
    updated = updated_pod_group(current, owner)
    assert updated is not None
    assert updated["status"] == {"phase": "Running"}
    assert updated["spec"]["minMember"] == 3
    assert updated["spec"]["minResources"]["cpu"] == "3"


def test_update_does_not_revisit_queue() -> None:
    owner = job("job1", task("worker", 2), uid=UID)
    current = build_pod_group(owner)
    owner["spec"]["queue"] = "elsewhere"
    assert updated_pod_group(current, owner) is None


@pytest.mark.parametrize(
    ("name", "replicas", "total", "min_partitions", "size", "topology"),
    [
        ("SubGroupPolicy with MinPartitions set", 6, 2, 1, 3, True),
        ("SubGroupPolicy with MinPartitions equal to TotalPartitions", 9, 3, 3, 3, False),
        ("SubGroupPolicy with MinPartitions not set", 6, 2, 0, 3, False),
    ],
)
def test_upstream_get_sub_group_policy(
    name: str, replicas: int, total: int, min_partitions: int, size: int, topology: bool
) -> None:
    """TestGetSubGroupPolicy."""
    partition: dict[str, Any] = {
        "totalPartitions": total,
        "minPartitions": min_partitions,
        "partitionSize": size,
    }
    if topology:
        partition["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    policy = sub_group_policy(task("task1", replicas, partition=partition))
    assert policy["subGroupSize"] == size, name
    assert policy["minSubGroups"] == min_partitions, name
    assert policy["labelSelector"] == {"matchLabels": {"volcano.sh/task-spec": "task1"}}
    assert policy["matchLabelKeys"] == ["volcano.sh/partition-id"]
    assert ("networkTopology" in policy) == topology
    if topology:
        assert policy["networkTopology"] == {"mode": "hard", "highestTierAllowed": 1}


PENDING_EVENT = (
    "Warning",
    "PodGroupPending",
    "PodGroup default:job1 unschedulable, reason: test message",
)


def _condition(kind: str, minute: int) -> dict[str, Any]:
    return {
        "type": kind,
        "status": "True",
        "reason": "test reason",
        "message": "test message",
        "lastTransitionTime": f"2024-07-01T15:{minute:02d}:05Z",
    }


@pytest.mark.parametrize(
    ("name", "conditions", "expected"),
    [
        ("pg with no conditions", [], None),
        (
            "pg with Unschedulable condition",
            [_condition("Unschedulable", 4)],
            PENDING_EVENT,
        ),
        (
            "pg with Unschedulable later than Scheduled",
            [_condition("Unschedulable", 15), _condition("Scheduled", 4)],
            PENDING_EVENT,
        ),
        (
            "pg with Scheduled later than Unschedulable ",
            [_condition("Unschedulable", 15), _condition("Scheduled", 20)],
            None,
        ),
    ],
)  # fmt: skip
def test_upstream_record_pod_group_event(
    name: str, conditions: list[dict[str, Any]], expected: tuple[str, str, str] | None
) -> None:
    """TestRecordPodGroupEvent."""
    owner = job("job1", task("worker", 0), uid=UID, phase="Running", min_available=0)
    pg = pod_group(owner, "Running")
    pg["status"]["conditions"] = conditions
    changes = sync_job(owner, pg, [], JobRequest(event="OutOfSync"), now=NOW)
    pending = [e for e in changes.events if e[1] == "PodGroupPending"]
    assert pending == ([expected] if expected else []), name
