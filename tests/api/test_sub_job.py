"""Sub-jobs (``subGroupPolicy``): upstream ``pkg/scheduler/api/sub_job_info_test.go``
(``TestNewSubJobInfo`` 4 cases, ``TestSubJobInfo_IsHardTopologyMode`` 4,
``TestSubJobInfo_IsSoftTopologyMode`` 3, ``TestGetSubJobMatchValues_Basic`` 3, ``_Boundary`` 3,
``_Error`` 4, ``TestSubJobInfo_getPodSubJobID`` 2, ``TestSubJobInfo_IsPipelined`` 7,
``TestSubJobInfo_IsReady`` 5, ``TestSubJobInfo_getTaskHighestPriority`` 4,
``TestConvertToHardTopology`` 4), then the job's bookkeeping of its sub-jobs
(``getOrCreateSubJob``, ``CheckSubJob{Valid,Ready,Pipelined}``, copies).

One reading differs: upstream's ``IsHardTopologyMode`` is false for an empty mode; ours reads a
missing mode as the CRD's default, ``hard`` (the API server fills it in before the scheduler
sees the object).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import build_pod, build_pod_group, build_sub_group_policy
from volcano_py.api.job import JobInfo, PodGroupInfo
from volcano_py.api.resource import Resource
from volcano_py.api.sub_job import SubGroupPolicy, SubJobInfo, sub_job_id
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus

S = TaskStatus


def new_sub_job(policy: dict[str, Any] | None, values: list[str]) -> SubJobInfo:
    parsed = SubGroupPolicy.from_raw(policy) if policy is not None else None
    return SubJobInfo.for_policy("test-job", parsed, values, gid="test-gid", uid="test-uid")


HARD_1 = {"mode": "hard", "highestTierAllowed": 1}


@pytest.mark.parametrize(
    ("policy", "values", "min_available", "match_index", "topology"),
    [
        pytest.param(
            {"subGroupSize": 4, "networkTopology": HARD_1},
            ["1"],
            4,
            1,
            HARD_1,
            id="All field provided",
        ),
        pytest.param(None, ["1"], 1, 1, None, id="No policy provided"),
        pytest.param(
            {"networkTopology": HARD_1}, ["1"], 1, 1, HARD_1, id="No SubGroupSize provided"
        ),
        pytest.param({"subGroupSize": 2}, [], 2, 0, None, id="No NetworkTopology provided"),
    ],
)
def test_new_sub_job_info_upstream(
    policy: dict[str, Any] | None,
    values: list[str],
    min_available: int,
    match_index: int,
    topology: dict[str, Any] | None,
) -> None:
    """``TestNewSubJobInfo``."""
    sub_job = new_sub_job(policy, values)
    assert (sub_job.gid, sub_job.uid, sub_job.job) == ("test-gid", "test-uid", "test-job")
    assert sub_job.min_available == min_available
    assert sub_job.match_index == match_index
    assert sub_job.network_topology == topology
    assert sub_job.tasks == {} and sub_job.task_status_index == {}
    if topology is not None:
        # A copy: the session rewrites it without touching the PodGroup's spec.
        assert sub_job.network_topology is not topology


@pytest.mark.parametrize(
    ("topology", "hard", "tier"),
    [
        pytest.param(None, False, 0, id="NetworkTopology is nil"),
        pytest.param({"mode": "hard"}, False, 0, id="HighestTierAllowed is nil"),
        pytest.param(
            {"mode": "hard", "highestTierAllowed": 1},
            True,
            1,
            id="Mode is HardNetworkTopologyMode and HighestTierAllowed is not nil",
        ),
        pytest.param(
            {"mode": "soft", "highestTierAllowed": 2},
            False,
            2,
            id="Mode is not HardNetworkTopologyMode and HighestTierAllowed is valid",
        ),
    ],
)
def test_is_hard_topology_mode_upstream(
    topology: dict[str, Any] | None, hard: bool, tier: int
) -> None:
    """``TestSubJobInfo_IsHardTopologyMode``."""
    sub_job = SubJobInfo("g", "u", "j", network_topology=topology)
    assert sub_job.hard_topology() == (hard, tier)


@pytest.mark.parametrize(
    ("topology", "soft"),
    [
        pytest.param(None, False, id="NetworkTopology is nil"),
        pytest.param({"mode": "hard"}, False, id="Mode is HardNetworkTopologyMode"),
        pytest.param({"mode": "soft"}, True, id="Mode is SoftNetworkTopologyMode"),
    ],
)
def test_is_soft_topology_mode_upstream(topology: dict[str, Any] | None, soft: bool) -> None:
    """``TestSubJobInfo_IsSoftTopologyMode``."""
    assert SubJobInfo("g", "u", "j", network_topology=topology).soft_topology() is soft


@pytest.mark.parametrize(
    ("policy", "labels", "expected"),
    [
        # TestGetSubJobMatchValues_Basic
        pytest.param(
            {
                "labelSelector": {"matchLabels": {"app": "test"}},
                "matchLabelKeys": ["version", "env"],
            },
            {"app": "test", "version": "v1", "env": "dev"},
            ["v1", "dev"],
            id="match label selector and collect match values",
        ),
        pytest.param(
            {"matchLabelKeys": ["zone"]},
            {"zone": "zone-1"},
            ["zone-1"],
            id="no label selector with match keys",
        ),
        pytest.param(
            {"labelSelector": {"matchLabels": {"app": "test"}}},
            {"app": "test"},
            [],
            id="no match keys returns empty slice",
        ),
        # TestGetSubJobMatchValues_Boundary
        pytest.param(
            {"labelSelector": {}, "matchLabelKeys": ["key"]},
            {"key": "value"},
            ["value"],
            id="empty label selector matches all",
        ),
        pytest.param(
            {
                "labelSelector": {
                    "matchExpressions": [
                        {"key": "app", "operator": "In", "values": ["test", "demo"]}
                    ]
                },
                "matchLabelKeys": ["app"],
            },
            {"app": "demo"},
            ["demo"],
            id="match expression selector",
        ),
        pytest.param(
            {"matchLabelKeys": ["a", "b"]},
            {"a": "", "b": "val"},
            None,
            id="multiple match keys with empty values",
        ),
        # TestGetSubJobMatchValues_Error
        pytest.param(
            {"labelSelector": {"matchExpressions": [{"key": "app", "operator": "invalid"}]}},
            {"app": "test"},
            None,
            id="invalid label selector",
        ),
        pytest.param(
            {"labelSelector": {"matchLabels": {"app": "test"}}, "matchLabelKeys": ["version"]},
            {"app": "prod"},
            None,
            id="pod labels do not match selector",
        ),
        pytest.param(
            {"matchLabelKeys": ["missing"]},
            {"existing": "value"},
            None,
            id="missing label key in pod",
        ),
        pytest.param({"matchLabelKeys": ["any"]}, {}, None, id="pod has no labels"),
    ],
)
def test_get_sub_job_match_values_upstream(
    policy: dict[str, Any], labels: dict[str, str], expected: list[str] | None
) -> None:
    """``TestGetSubJobMatchValues_Basic`` / ``_Boundary`` / ``_Error``."""
    assert SubGroupPolicy.from_raw(policy).match_values(labels) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(
            ["value1", "value2"],
            "job1/policy1-value1-value2",
            id="Normale case with non-empty policy and matchValues",
        ),
        pytest.param(["value1"], "job1/policy1-value1", id="Single matchValue"),
    ],
)
def test_get_pod_sub_job_id_upstream(values: list[str], expected: str) -> None:
    """``TestSubJobInfo_getPodSubJobID``."""
    assert sub_job_id("job1", "policy1", values) == expected


def task(uid: str, status: TaskStatus, best_effort: bool = False, priority: int = 0) -> TaskInfo:
    resource = Resource() if best_effort else Resource(milli_cpu=1000)
    return TaskInfo(
        uid=uid,
        job="j",
        name=uid,
        namespace="ns",
        pod={},
        resreq=resource,
        init_resreq=resource,
        status=status,
        best_effort=best_effort,
        priority=priority,
    )


def sub_job_with(min_available: int, tasks: list[TaskInfo]) -> SubJobInfo:
    sub_job = SubJobInfo("g", "u", "j", min_available=min_available)
    for one in tasks:
        sub_job.add_task(one)
    return sub_job


ALL_READY = [S.ALLOCATED, S.BINDING, S.BOUND, S.RUNNING, S.SUCCEEDED]


@pytest.mark.parametrize(
    ("min_available", "statuses", "best_effort", "expected"),
    [
        pytest.param(3, [S.PIPELINED] * 3, 0, True, id="All tasks are pipelined"),
        pytest.param(
            6,
            [S.ALLOCATED, S.PIPELINED, S.BINDING, S.BOUND, S.RUNNING, S.SUCCEEDED],
            0,
            True,
            id="Some tasks are ready and some are pipelined",
        ),
        pytest.param(
            3,
            [S.PIPELINED],
            2,
            True,
            id="Some tasks are pending best-effort and some are pipelined",
        ),
        pytest.param(
            8,
            [S.ALLOCATED, S.PIPELINED, S.BINDING, S.BOUND, S.RUNNING, S.SUCCEEDED],
            2,
            True,
            id="Some tasks are ready, some tasks are pending best-effort and some are pipelined",
        ),
        pytest.param(
            8,
            [S.PENDING, S.ALLOCATED, S.PIPELINED, S.BINDING, S.BOUND, S.RUNNING, S.SUCCEEDED],
            1,
            False,
            id="Some tasks are pending not best-effort",
        ),
        pytest.param(
            8,
            [S.ALLOCATED, S.PIPELINED, S.BINDING, S.BOUND, S.RUNNING, S.FAILED],
            2,
            False,
            id="Some tasks are failed",
        ),
        pytest.param(3, [S.UNKNOWN], 2, False, id="Some tasks are unknown"),
    ],
)
def test_is_pipelined_upstream(
    min_available: int, statuses: list[TaskStatus], best_effort: int, expected: bool
) -> None:
    """``TestSubJobInfo_IsPipelined``."""
    tasks = [task(f"t{i}", status) for i, status in enumerate(statuses)]
    tasks += [task(f"be{i}", S.PENDING, best_effort=True) for i in range(best_effort)]
    assert sub_job_with(min_available, tasks).is_pipelined() is expected


@pytest.mark.parametrize(
    ("min_available", "statuses", "best_effort", "expected"),
    [
        pytest.param(3, [S.PENDING] * 3, 0, False, id="All tasks are pipelined"),
        pytest.param(2, [], 2, True, id="All tasks are pending bestEffort"),
        pytest.param(
            6, ALL_READY, 1, True, id="Some tasks are pending best-effort and some are waiting"
        ),
        pytest.param(1, [S.FAILED], 0, False, id="Some tasks are failed"),
        pytest.param(
            7, [S.PENDING, *ALL_READY], 1, False, id="Some tasks are pending not best-effort"
        ),
    ],
)
def test_is_ready_upstream(
    min_available: int, statuses: list[TaskStatus], best_effort: int, expected: bool
) -> None:
    """``TestSubJobInfo_IsReady``."""
    tasks = [task(f"t{i}", status) for i, status in enumerate(statuses)]
    tasks += [task(f"be{i}", S.PENDING, best_effort=True) for i in range(best_effort)]
    assert sub_job_with(min_available, tasks).is_ready() is expected


@pytest.mark.parametrize(
    ("priorities", "expected"),
    [
        pytest.param([], 0, id="empty"),
        pytest.param([1], 1, id="one element"),
        pytest.param([1, 2, 3], 3, id="multiple elements"),
        pytest.param([-1, -2, -3], 0, id="negative elements: 0"),
    ],
)
def test_task_highest_priority_upstream(priorities: list[int], expected: int) -> None:
    """``TestSubJobInfo_getTaskHighestPriority``: kept as tasks come and go."""
    tasks = [task(f"t{i}", S.PENDING, priority=p) for i, p in enumerate(priorities)]
    sub_job = sub_job_with(1, tasks)
    assert sub_job.priority == expected
    if tasks:
        # Removing the highest recomputes from the rest.
        top = max(tasks, key=lambda t: t.priority)
        sub_job.delete_task(top)
        rest = [t.priority for t in tasks if t is not top and t.priority > 0]
        assert sub_job.priority == max(rest, default=0)


@pytest.mark.parametrize(
    ("topology", "max_tier", "mode", "tier"),
    [
        pytest.param({"mode": "soft"}, 4, "hard", 4, id="soft mode is converted to hard mode"),
        pytest.param(
            {"mode": "hard", "highestTierAllowed": 2}, 4, "hard", 2, id="hard mode is not changed"
        ),
        pytest.param(None, 4, None, None, id="nil networkTopology is not changed"),
        pytest.param(
            {"mode": "soft", "highestTierAllowed": 1},
            5,
            "hard",
            5,
            id="soft mode with existing HighestTierAllowed is overwritten",
        ),
    ],
)
def test_convert_to_hard_topology_upstream(
    topology: dict[str, Any] | None, max_tier: int, mode: str | None, tier: int | None
) -> None:
    """``TestConvertToHardTopology``."""
    sub_job = new_sub_job({"subGroupSize": 4, "networkTopology": topology}, [])
    sub_job.convert_to_hard_topology(max_tier)
    if topology is None:
        assert not sub_job.with_network_topology()
        return
    assert sub_job.network_topology is not None
    assert sub_job.network_topology["mode"] == mode
    assert sub_job.hard_topology() == (True, tier)
    assert not sub_job.soft_topology()
    assert topology.get("mode") != "hard" or topology == sub_job.network_topology


# ---------------------------------------------------------------------------- the job's side


def policy_job(
    policies: list[dict[str, Any]], pods: list[dict[str, Any]], min_member: int
) -> JobInfo:
    group = build_pod_group("pg1", "ns", "q", min_member, sub_group_policy=policies)
    job = JobInfo(uid="ns/pg1")
    job.set_pod_group(PodGroupInfo.from_dict(group))
    for pod in pods:
        job.add_task(TaskInfo.from_pod(pod))
    return job


def pod(name: str, labels: dict[str, str], node: str = "", phase: str = "Pending") -> Any:
    return build_pod("ns", name, node, phase, {"cpu": "1"}, "pg1", labels)


def test_tasks_are_filed_by_the_first_policy_that_takes_them() -> None:
    job = policy_job(
        [
            build_sub_group_policy("gpu", ["rack"], sub_group_size=2, min_sub_groups=2),
            # No matchLabelKeys: upstream's policy then takes no pod (its values are empty).
            {"name": "none", "subGroupSize": 1},
        ],
        [
            pod("a0", {"rack": "0"}),
            pod("a1", {"rack": "0"}),
            pod("b0", {"rack": "1"}),
            pod("c", {}),
        ],
        min_member=4,
    )
    assert sorted(job.sub_jobs) == ["ns/pg1", "ns/pg1/gpu-0", "ns/pg1/gpu-1"]
    assert sorted(job.sub_jobs["ns/pg1/gpu-0"].tasks) == ["ns-a0", "ns-a1"]
    assert job.sub_jobs["ns/pg1/gpu-0"].min_available == 2
    assert job.sub_jobs["ns/pg1/gpu-1"].match_index == 1
    # The default sub-job of a job with policies needs one pod.
    assert list(job.sub_jobs["ns/pg1"].tasks) == ["ns-c"]
    assert job.sub_jobs["ns/pg1"].min_available == 1
    assert job.min_sub_jobs == {"ns/pg1/gpu": 2, "ns/pg1/none": 0}
    assert job.check_sub_job_valid()
    assert not job.check_sub_job_ready()
    assert not job.check_sub_job_pipelined()


def test_sub_job_readiness_follows_task_status_changes() -> None:
    job = policy_job(
        [build_sub_group_policy("g", ["rack"], sub_group_size=2, min_sub_groups=1)],
        [pod("a0", {"rack": "0"}), pod("a1", {"rack": "0"}), pod("b0", {"rack": "1"})],
        min_member=2,
    )
    for uid in ("ns-a0", "ns-a1"):
        job.update_task_status(job.tasks[uid], S.ALLOCATED)
    assert job.sub_jobs["ns/pg1/g-0"].is_ready()
    assert not job.sub_jobs["ns/pg1/g-1"].is_ready()
    assert job.check_sub_job_ready()
    # A deleted pod leaves its sub-job; the policy then has one sub-job left.
    job.delete_task(job.tasks["ns-b0"])
    assert "ns-b0" not in job.task_to_sub_job
    assert job.sub_jobs["ns/pg1/g-1"].tasks == {}


def test_too_few_sub_groups_make_the_job_invalid() -> None:
    job = policy_job(
        [build_sub_group_policy("g", ["rack"], sub_group_size=1, min_sub_groups=3)],
        [pod("a0", {"rack": "0"}), pod("b0", {"rack": "1"})],
        min_member=2,
    )
    assert not job.check_sub_job_valid()


def test_a_snapshot_copy_has_its_own_sub_jobs_and_keeps_their_hyper_nodes() -> None:
    job = policy_job(
        [build_sub_group_policy("g", ["rack"], "hard", 1, sub_group_size=1)],
        [pod("a0", {"rack": "0"}), pod("b0", {"rack": "1"}, node="n1", phase="Running")],
        min_member=2,
    )
    job.sub_jobs["ns/pg1/g-1"].allocated_hyper_node = "s0"
    job.sub_jobs["ns/pg1/g-0"].nominated_hyper_node = "s1"
    copy = job.snapshot_copy()
    assert copy.sub_jobs["ns/pg1/g-1"].allocated_hyper_node == "s0"
    assert copy.sub_jobs["ns/pg1/g-0"].nominated_hyper_node == "s1"
    assert copy.sub_jobs["ns/pg1/g-0"] is not job.sub_jobs["ns/pg1/g-0"]
    copied_spec = copy.sub_jobs["ns/pg1/g-0"].network_topology
    assert copied_spec is not job.sub_jobs["ns/pg1/g-0"].network_topology
    # The copy's Pending task is its own clone, and its sub-job holds that clone.
    assert copy.sub_jobs["ns/pg1/g-0"].tasks["ns-a0"] is copy.tasks["ns-a0"]
    assert copy.tasks["ns-a0"] is not job.tasks["ns-a0"]
    copy.update_task_status(copy.tasks["ns-a0"], S.ALLOCATED)
    assert copy.sub_jobs["ns/pg1/g-0"].is_ready()
    assert not job.sub_jobs["ns/pg1/g-0"].is_ready()


def test_a_job_without_policies_has_one_sub_job_sharing_its_tasks() -> None:
    job = policy_job([], [pod("a", {}), pod("b", {})], min_member=2)
    default = job.default_sub_job()
    assert job.all_sub_jobs() == [default]
    assert default.tasks is job.tasks
    assert default.min_available == 2
    job.update_task_status(job.tasks["ns-a"], S.ALLOCATED)
    assert default.ready_task_num() == 1
    default.allocated_hyper_node = "s0"
    assert job.snapshot_copy().default_sub_job().allocated_hyper_node == "s0"


def test_changing_the_policies_refiles_every_task() -> None:
    job = policy_job([], [pod("a0", {"rack": "0"})], min_member=1)
    group = build_pod_group(
        "pg1", "ns", "q", 1, sub_group_policy=[build_sub_group_policy("g", ["rack"])]
    )
    job.set_pod_group(PodGroupInfo.from_dict(group))
    assert job.task_to_sub_job == {"ns-a0": "ns/pg1/g-0"}
