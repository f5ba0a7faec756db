"""JobInfo and PodGroupInfo: the status index, the sums, the gang predicates and the "why
pending" texts (spec §2.5, upstream ``pkg/scheduler/api/job_info.go`` and ``job_info_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest

from volcano_py.api.job import (
    POD_GROUP_NOT_READY,
    POD_GROUP_READY,
    JobInfo,
    PodGroupInfo,
    job_sort_key,
    parse_go_duration,
)
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import (
    GROUP_NAME_ANNOTATION,
    NODE_POD_NUMBER_EXCEEDED,
    NODE_RESOURCE_FIT_FAILED,
    POD_REASON_SCHEDULABLE,
    POD_REASON_UNSCHEDULABLE,
    QUEUE_ALLOCATION_GATE,
    TASK_SPEC_KEY,
    FitError,
    FitErrors,
    Status,
    StatusCode,
    TaskStatus,
    TransactionContext,
    unschedulable,
)

S = TaskStatus
G = 1_000_000_000
GPU = "nvidia.com/gpu"


def make_pod(
    namespace: str,
    name: str,
    node: str = "",
    phase: str = "Pending",
    requests: dict[str, str] | None = None,
    *,
    group: str | None = None,
    role: str | None = None,
    gates: list[str] | None = None,
) -> dict[str, Any]:
    """Upstream's ``buildPod(ns, name, node, phase, requests, owners, labels)``."""
    annotations: dict[str, str] = {}
    if group is not None:
        annotations[GROUP_NAME_ANNOTATION] = group
    if role is not None:
        annotations[TASK_SPEC_KEY] = role
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "resources": {"requests": dict(requests or {})}}]
    }
    if node:
        spec["nodeName"] = node
    if gates is not None:
        spec["schedulingGates"] = [{"name": gate} for gate in gates]
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"{namespace}-{name}",
            "annotations": annotations,
        },
        "spec": spec,
        "status": {"phase": phase},
    }


def rl(cpu: str, memory: str, scalars: dict[str, str] | None = None) -> dict[str, str]:
    """Upstream's ``BuildResourceList`` (``BuildResourceListWithGPU`` with a GPU scalar)."""
    return {"cpu": cpu, "memory": memory, **(scalars or {})}


def res(cpu: float, memory: float = 0.0, **scalars: float) -> Resource:
    return Resource(milli_cpu=cpu, memory=memory, scalar_resources=dict(scalars))


def same(left: Resource, right: Resource) -> bool:
    return left.equal(right, DimensionDefault.ZERO)


def new_task(
    uid: str,
    status: TaskStatus,
    *,
    role: str = "",
    cpu: str | None = "100m",
    node: str = "",
) -> TaskInfo:
    """A task with a given status (``newTaskFunc`` / ``newTaskWithStatus`` upstream); cpu=None
    makes it best-effort."""
    task = TaskInfo.from_pod(
        make_pod("ns1", uid, node, requests={"cpu": cpu} if cpu else {}, role=role or None)
    )
    task.status = status
    task.node_name = node
    return task


def new_job(
    uid: str = "ns1/job",
    *tasks: TaskInfo,
    min_available: int = 0,
    min_task_member: dict[str, int] | None = None,
) -> JobInfo:
    """``NewJobInfo(uid, tasks...)`` plus the PodGroup fields the gang checks read."""
    job = JobInfo(uid)
    for task in tasks:
        job.add_task(task)
    job.min_available = min_available
    job.task_min_available = dict(min_task_member or {})
    job.task_min_available_total = sum(job.task_min_available.values())
    return job


def pod_group(
    name: str = "pg1",
    namespace: str = "ns1",
    *,
    min_member: int = 0,
    min_task_member: dict[str, int] | None = None,
    min_resources: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    network_topology: dict[str, Any] | None = None,
    phase: str | None = None,
    queue: str | None = None,
) -> PodGroupInfo:
    spec: dict[str, Any] = {"minMember": min_member}
    if min_task_member is not None:
        spec["minTaskMember"] = min_task_member
    if min_resources is not None:
        spec["minResources"] = min_resources
    if network_topology is not None:
        spec["networkTopology"] = network_topology
    if queue is not None:
        spec["queue"] = queue
    obj: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": annotations or {},
            "labels": labels or {},
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
        "spec": spec,
    }
    if phase is not None:
        obj["status"] = {"phase": phase}
    return PodGroupInfo.from_dict(obj)


def index_uids(job: JobInfo) -> dict[TaskStatus, set[str]]:
    return {status: set(tasks) for status, tasks in job.task_status_index.items()}


def fit_errors(reasons_by_node: dict[str, str]) -> FitErrors:
    errors = FitErrors()
    for node, reason in reasons_by_node.items():
        errors.set_node_error(node, FitError(node, [Status(StatusCode.ERROR, reason)]))
    return errors


# ---------------------------------------------------------------- upstream TestAddTaskInfo


def test_upstream_add_task_info():
    """TestAddTaskInfo, "add 1 pending owner pod, 1 running owner pod"."""
    pods = [
        make_pod("c1", "p1", "", "Pending", rl("1000m", "1G")),
        make_pod("c1", "p2", "n1", "Running", rl("2000m", "2G")),
        make_pod("c1", "p3", "n1", "Pending", rl("1000m", "1G")),
        make_pod("c1", "p4", "n1", "Pending", rl("1000m", "1G")),
    ]
    job = JobInfo("uid")
    for pod in pods:
        job.add_task(TaskInfo.from_pod(pod))

    assert same(job.allocated, res(4000, 4 * G, pods=3))
    assert same(job.total_request, res(5000, 5 * G, pods=4))
    assert set(job.tasks) == {"c1-p1", "c1-p2", "c1-p3", "c1-p4"}
    assert index_uids(job) == {
        S.RUNNING: {"c1-p2"},
        S.PENDING: {"c1-p1"},
        S.BOUND: {"c1-p3", "c1-p4"},
    }
    assert job.task_min_available == {}
    assert job.nodes_fit_errors == {}


# ---------------------------------------------------------------- upstream TestDeleteTaskInfo


@pytest.mark.parametrize(
    ("name", "pods", "removed", "left", "index"),
    [
        (
            "add 1 pending owner pod, 2 running owner pod, remove 1 running owner pod",
            [
                ("p1", "", "Pending", "1000m", "1G"),
                ("p2", "n1", "Running", "2000m", "2G"),
                ("p3", "n1", "Running", "3000m", "3G"),
            ],
            "p2",
            {"c-p1", "c-p3"},
            {S.PENDING: {"c-p1"}, S.RUNNING: {"c-p3"}},
        ),
        (
            "add 2 pending owner pod, 1 running owner pod, remove 1 pending owner pod",
            [
                ("p1", "", "Pending", "1000m", "1G"),
                ("p2", "n1", "Pending", "2000m", "2G"),
                ("p3", "n1", "Running", "3000m", "3G"),
            ],
            "p2",
            {"c-p1", "c-p3"},
            {S.PENDING: {"c-p1"}, S.RUNNING: {"c-p3"}},
        ),
    ],
)
def test_upstream_delete_task_info(
    name: str,
    pods: list[tuple[str, str, str, str, str]],
    removed: str,
    left: set[str],
    index: dict[TaskStatus, set[str]],
):
    """TestDeleteTaskInfo (both cases); the removed task is a fresh TaskInfo of the same pod."""
    built = {p[0]: make_pod("c", p[0], p[1], p[2], rl(p[3], p[4])) for p in pods}
    job = JobInfo("owner")
    for pod in built.values():
        job.add_task(TaskInfo.from_pod(pod))
    job.delete_task(TaskInfo.from_pod(built[removed]))

    assert same(job.allocated, res(3000, 3 * G, pods=1)), name
    assert same(job.total_request, res(4000, 4 * G, pods=2)), name
    assert set(job.tasks) == left
    assert index_uids(job) == index


def test_delete_unknown_task_is_a_no_op():
    job = new_job("j", new_task("a", S.RUNNING))
    job.delete_task(new_task("ghost", S.RUNNING))
    assert set(job.tasks) == {"ns1-a"}
    assert job.allocated.milli_cpu == pytest.approx(100)


# ---------------------------------------------------------------- update_task_status


def test_update_task_status_keeps_index_allocated_and_total_right():
    task = new_task("a", S.PENDING)
    other = new_task("b", S.RUNNING)
    job = new_job("j", task, other)
    assert job.allocated.milli_cpu == pytest.approx(100)
    assert job.total_request.milli_cpu == pytest.approx(200)

    job.update_task_status(task, S.ALLOCATED)
    assert task.status is S.ALLOCATED
    assert index_uids(job) == {S.ALLOCATED: {"ns1-a"}, S.RUNNING: {"ns1-b"}}
    assert job.allocated.milli_cpu == pytest.approx(200)
    assert job.total_request.milli_cpu == pytest.approx(200)

    job.update_task_status(task, S.PENDING)  # discard
    assert index_uids(job) == {S.PENDING: {"ns1-a"}, S.RUNNING: {"ns1-b"}}
    assert job.allocated.milli_cpu == pytest.approx(100)

    job.update_task_status(other, S.RELEASING)  # eviction: no longer "allocated"
    assert index_uids(job) == {S.PENDING: {"ns1-a"}, S.RELEASING: {"ns1-b"}}
    assert job.allocated.milli_cpu == pytest.approx(0)
    assert job.total_request.milli_cpu == pytest.approx(200)


def test_update_task_status_of_a_task_not_yet_in_the_job_adds_it():
    job = new_job("j")
    task = new_task("a", S.PENDING)
    job.update_task_status(task, S.BINDING)
    assert job.tasks == {"ns1-a": task}
    assert index_uids(job) == {S.BINDING: {"ns1-a"}}
    assert job.allocated.milli_cpu == pytest.approx(100)


def test_empty_status_buckets_are_dropped():
    task = new_task("a", S.PENDING)
    job = new_job("j", task)
    job.update_task_status(task, S.ALLOCATED)
    assert S.PENDING not in job.task_status_index
    assert job.tasks_in(S.PENDING) == {}


# ---------------------------------------------------------------- counts and gang predicates


def test_upstream_job_info_starving_and_ready():
    """TestJobInfo, "starving job" (minAvailable 5) and "ready job" (minAvailable 3)."""

    def tasks() -> list[TaskInfo]:
        return [
            new_task("pending-besteffort-task-1", S.PENDING, cpu=None),
            new_task("pipelined-besteffort-task-1", S.PIPELINED, cpu=None),
            new_task("running-besteffort-task-1", S.RUNNING, cpu=None),
            new_task("pending-unbesteffort-task-1", S.PENDING),
            new_task("pipelined-unbesteffort-task-1", S.PIPELINED),
            new_task("running-unbesteffort-task-1", S.RUNNING),
        ]

    starving = new_job("job-1", *tasks(), min_available=5)
    assert starving.pending_best_effort_task_num() == 1
    assert not starving.is_ready()
    assert starving.is_pipelined()
    assert starving.is_starving()

    ready = new_job("job-1", *tasks(), min_available=3)
    assert ready.pending_best_effort_task_num() == 1
    assert ready.is_ready()
    assert ready.is_pipelined()
    assert not ready.is_starving()


def test_task_counts_by_status():
    job = new_job(
        "j",
        *[new_task(f"t-{status.name.lower()}", status) for status in TaskStatus],
        new_task("pending-be", S.PENDING, cpu=None),
    )
    # Bound + Binding + Running + Allocated + Succeeded.
    assert job.ready_task_num() == 5
    assert job.waiting_task_num() == 1
    assert job.pending_best_effort_task_num() == 1
    assert job.allocated_task_num() == 4
    # AllocatedStatus + Succeeded + Pipelined + Pending (two pending tasks).
    assert job.valid_task_num() == 8
    assert job.scheduled_task_num() == 4
    assert job.has_pending_tasks()


def test_upstream_releasing_scheduled_task_num():
    """TestReleasingScheduledTaskNum."""
    job = new_job(
        "job-1",
        new_task("scheduled-1", S.RELEASING, node="node-1"),
        new_task("unscheduled", S.RELEASING),
        new_task("scheduled-2", S.RELEASING, node="node-2"),
        new_task("running", S.RUNNING, node="node-3"),
    )
    assert job.releasing_scheduled_task_num() == 2


def test_upstream_scheduled_task_num():
    """TestScheduledTaskNum."""
    job = new_job(
        "job-1",
        *[
            new_task(name, status)
            for name, status in [
                ("running", S.RUNNING),
                ("bound", S.BOUND),
                ("failed", S.FAILED),
                ("succeeded", S.SUCCEEDED),
                ("pending", S.PENDING),
                ("releasing", S.RELEASING),
            ]
        ],
    )
    assert job.scheduled_task_num() == 4


@pytest.mark.parametrize(
    ("statuses", "min_available", "ready", "pipelined", "starving"),
    [
        ([S.RUNNING, S.RUNNING], 2, True, True, False),
        ([S.RUNNING, S.PENDING], 2, False, False, True),
        ([S.RUNNING, S.PIPELINED], 2, False, True, False),
        ([S.SUCCEEDED, S.ALLOCATED], 2, True, True, False),
        ([S.RELEASING, S.RUNNING], 2, False, False, True),  # releasing is not ready
        ([S.FAILED, S.BOUND, S.BINDING], 2, True, True, False),
        ([], 0, True, True, False),
    ],
)
def test_gang_readiness(
    statuses: list[TaskStatus], min_available: int, ready: bool, pipelined: bool, starving: bool
):
    job = new_job(
        "j", *[new_task(f"t{i}", s) for i, s in enumerate(statuses)], min_available=min_available
    )
    assert job.is_ready() is ready
    assert job.is_pipelined() is pipelined
    assert job.is_starving() is starving


# Roles: a job of 1 ps + 2 workers needing 1 ps and 2 workers.
ROLES = {"ps": 1, "worker": 2}


def role_job(
    *tasks: tuple[str, TaskStatus, bool],
    min_available: int = 3,
    min_task_member: dict[str, int] | None = None,
) -> JobInfo:
    built = [
        new_task(f"{role}-{i}", status, role=role, cpu=None if best_effort else "100m")
        for i, (role, status, best_effort) in enumerate(tasks)
    ]
    return new_job(
        "j",
        *built,
        min_available=min_available,
        min_task_member=ROLES if min_task_member is None else min_task_member,
    )


@pytest.mark.parametrize(
    ("tasks", "expected"),
    [
        (
            [("ps", S.PENDING, False), ("worker", S.PENDING, False), ("worker", S.PENDING, False)],
            True,
        ),
        (
            [
                ("ps", S.RUNNING, False),
                ("worker", S.PIPELINED, False),
                ("worker", S.SUCCEEDED, False),
            ],
            True,
        ),
        ([("ps", S.PENDING, False), ("worker", S.PENDING, False)], False),
        # Failed and Releasing tasks are not valid members.
        (
            [("ps", S.PENDING, False), ("worker", S.PENDING, False), ("worker", S.FAILED, False)],
            False,
        ),
        (
            [
                ("ps", S.RELEASING, False),
                ("worker", S.RUNNING, False),
                ("worker", S.RUNNING, False),
            ],
            False,
        ),
    ],
)
def test_check_task_valid(tasks: list[tuple[str, TaskStatus, bool]], expected: bool):
    assert role_job(*tasks).check_task_valid() is expected


def test_check_task_valid_skips_roles_with_zero_minimum():
    job = role_job(
        ("ps", S.PENDING, False), min_available=1, min_task_member={"ps": 1, "worker": 0}
    )
    assert job.check_task_valid()


def test_role_checks_are_skipped_when_min_available_is_below_the_role_total():
    job = role_job(("ps", S.PENDING, False), min_available=2)  # 2 < 1 + 2
    assert job.check_task_valid()
    assert job.check_task_ready()
    assert job.check_task_pipelined()
    assert job.check_task_starving()  # upstream answers true here too


@pytest.mark.parametrize(
    ("tasks", "ready", "pipelined", "starving"),
    [
        (
            [("ps", S.RUNNING, False), ("worker", S.ALLOCATED, False), ("worker", S.BOUND, False)],
            True,
            True,
            False,
        ),
        (
            [
                ("ps", S.RUNNING, False),
                ("worker", S.ALLOCATED, False),
                ("worker", S.PENDING, False),
            ],
            False,
            False,
            True,
        ),
        # A best-effort pending task counts as ready (it needs nothing), not against starving.
        (
            [("ps", S.RUNNING, False), ("worker", S.ALLOCATED, False), ("worker", S.PENDING, True)],
            True,
            True,
            True,
        ),
        # Pipelined counts for "pipelined" and against "starving", not for "ready".
        (
            [
                ("ps", S.RUNNING, False),
                ("worker", S.ALLOCATED, False),
                ("worker", S.PIPELINED, False),
            ],
            False,
            True,
            False,
        ),
        (
            [
                ("ps", S.SUCCEEDED, False),
                ("worker", S.BINDING, False),
                ("worker", S.RUNNING, False),
            ],
            True,
            True,
            False,
        ),
        (
            [("ps", S.PENDING, False), ("worker", S.RUNNING, False), ("worker", S.RUNNING, False)],
            False,
            False,
            True,
        ),
    ],
)
def test_check_task_ready_pipelined_starving(
    tasks: list[tuple[str, TaskStatus, bool]], ready: bool, pipelined: bool, starving: bool
):
    job = role_job(*tasks)
    assert job.check_task_ready() is ready
    assert job.check_task_pipelined() is pipelined
    assert job.check_task_starving() is starving


# ---------------------------------------------------------------- need_continue_allocating


def fail(job: JobInfo, uid: str) -> None:
    errors = FitErrors()
    errors.set_node_error("n1", FitError("n1", [unschedulable("Insufficient cpu")]))
    job.nodes_fit_errors[uid] = errors


def test_need_continue_allocating_stops_when_every_task_is_needed():
    job = role_job(
        ("worker", S.PENDING, False),
        ("worker", S.PENDING, False),
        ("ps", S.PENDING, False),
        min_task_member={},
    )
    fail(job, "ns1-worker-0")
    assert not job.need_continue_allocating()


def test_need_continue_allocating_stops_when_min_available_exceeds_the_tasks():
    """The default sub-job check (``subJob.MinAvailable >= len(subJob.Tasks)``): with fewer
    pods than minAvailable (the rest not created yet) no failure can be absorbed."""
    job = role_job(
        ("worker", S.PENDING, False),
        ("worker", S.PENDING, False),
        min_available=5,
        min_task_member={},
    )
    fail(job, "ns1-worker-0")
    assert not job.need_continue_allocating()


def test_need_continue_allocating_counts_other_roles_when_min_is_below_role_total():
    # minAvailable 3 < 1 ps + 2 workers + 1 chief: only the job total matters.
    tasks = [
        ("ps", S.PENDING, False),
        ("worker", S.PENDING, False),
        ("worker", S.PENDING, False),
        ("chief", S.PENDING, False),
        ("chief", S.PENDING, False),
    ]
    members = {"ps": 1, "worker": 2, "chief": 1}
    job = role_job(*tasks, min_task_member=members)
    fail(job, "ns1-ps-0")
    # ready 0 + pending workers 2 + pending chiefs 2 = 4 >= 3
    assert job.need_continue_allocating()
    fail(job, "ns1-chief-3")
    # 0 + 2 workers = 2 < 3
    assert not job.need_continue_allocating()


def test_need_continue_allocating_per_role_minimum():
    tasks = [
        ("ps", S.RUNNING, False),
        ("worker", S.ALLOCATED, False),
        ("worker", S.PENDING, False),
        ("worker", S.PENDING, False),
    ]
    job = role_job(*tasks)
    # A worker failed while only 1 of 2 workers is allocated: the gang cannot make it.
    fail(job, "ns1-worker-2")
    assert not job.need_continue_allocating()

    enough = role_job(
        ("ps", S.RUNNING, False),
        ("worker", S.ALLOCATED, False),
        ("worker", S.BINDING, False),
        ("worker", S.PENDING, False),
    )
    fail(enough, "ns1-worker-3")
    assert enough.need_continue_allocating()


def test_need_continue_allocating_ignores_roles_without_minimum():
    job = role_job(
        ("ps", S.RUNNING, False),
        ("worker", S.RUNNING, False),
        ("worker", S.RUNNING, False),
        ("extra", S.PENDING, False),
        ("extra", S.PENDING, False),
    )
    fail(job, "ns1-extra-3")
    assert job.need_continue_allocating()


def test_task_has_fit_errors_is_a_per_role_cache():
    job = role_job(
        ("worker", S.PENDING, False), ("worker", S.PENDING, False), ("ps", S.PENDING, False)
    )
    fail(job, "ns1-worker-0")
    assert job.fit_failed_roles() == {"worker"}
    assert job.task_has_fit_errors(job.tasks["ns1-worker-1"])
    assert not job.task_has_fit_errors(job.tasks["ns1-ps-2"])
    # A task without a role never uses the cache.
    roleless = new_task("x", S.PENDING)
    job.add_task(roleless)
    fail(job, "ns1-x")
    assert not job.task_has_fit_errors(roleless)


# ---------------------------------------------------------------- "why pending"


def test_upstream_task_scheduling_reason():
    """TestTaskSchedulingReason, "task3 ~ 5 are schedulable".

    Upstream's node summary says "0/3 nodes are unavailable"; ours uses kube-scheduler's
    "0/3 nodes are available" (types.FitErrors, SIMULATION.md), the rest is verbatim."""
    nodes = {1: "", 2: "", 3: "node1", 4: "node2", 5: "node3", 6: ""}
    job = JobInfo("case1")
    for i, node in nodes.items():
        pod = make_pod("ns1", f"task-{i}", node, "Pending", rl("1", "1G"), group="pg1")
        task = TaskInfo.from_pod(pod)
        task.uid = f"task-{i}"
        job.add_task(task)
        if node:
            task.last_transaction = TransactionContext(node_name=node, status=S.ALLOCATED)
    job.set_pod_group(pod_group("pg1", "ns1", min_member=6))
    job.nodes_fit_errors = {
        "task-6": fit_errors(
            {
                "node1": NODE_POD_NUMBER_EXCEEDED,
                "node2": NODE_RESOURCE_FIT_FAILED,
                "node3": NODE_RESOURCE_FIT_FAILED,
            }
        )
    }
    job.task_status_index = {S.PENDING: {}}
    for task in job.tasks.values():
        task.status = S.PENDING
        job.task_status_index[S.PENDING][task.uid] = task
    job.job_fit_errors = job.fit_error()

    origin = (
        ". Origin reason is task-6: 0/3 nodes are available: 1 node(s) pod number exceeded,"
        " 2 node(s) resource fit failed."
    )
    summary = (
        "pod group is not ready, 6 Pending, 6 minAvailable; Pending: 3 Schedulable,"
        " 3 Unschedulable" + origin
    )
    schedulable = "Pod ns1/task-{} can possibly be assigned to {}, once minAvailable is satisfied"
    expected = {
        "task-1": summary,
        "task-2": summary,
        "task-3": schedulable.format(3, "node1"),
        "task-4": schedulable.format(4, "node2"),
        "task-5": schedulable.format(5, "node3"),
        "task-6": "0/3 nodes are available: 1 node(s) pod number exceeded, 2 node(s) resource fit"
        " failed.",
    }
    assert job.job_fit_errors == summary
    for uid, message in expected.items():
        assert job.task_scheduling_reason(uid)[1] == message, uid
    assert job.task_scheduling_reason("task-3")[0] == POD_REASON_SCHEDULABLE
    assert job.task_scheduling_reason("task-6")[0] == POD_REASON_UNSCHEDULABLE


def test_fit_error_when_ready_and_with_a_job_level_reason():
    job = new_job("j", new_task("a", S.RUNNING), new_task("b", S.PENDING), min_available=1)
    job.job_fit_errors = "queue q1 is overused"
    assert job.fit_error() == (
        f"{POD_GROUP_READY}, 1 Pending, 1 Running, 1 minAvailable; Pending: 1 Unschedulable."
        " Origin reason is: queue q1 is overused"
    )


def test_fit_error_without_pending_tasks_or_reasons():
    job = new_job("j", new_task("a", S.ALLOCATED), min_available=2)
    assert job.fit_error() == f"{POD_GROUP_NOT_READY}, 1 Allocated, 2 minAvailable"


def test_fit_error_takes_the_first_task_by_name_with_node_errors():
    job = new_job("j", new_task("b", S.PENDING), new_task("a", S.PENDING), min_available=2)
    job.nodes_fit_errors["ns1-b"] = fit_errors({"n1": "Insufficient cpu"})
    job.nodes_fit_errors["ns1-a"] = fit_errors({"n1": "Insufficient memory"})
    assert job.fit_error().endswith(
        ". Origin reason is a: 0/1 nodes are available: 1 Insufficient memory."
    )


def test_task_scheduling_reason_pipelined_and_other_statuses():
    job = new_job("j", new_task("p", S.PIPELINED, node="n2"), new_task("r", S.RUNNING))
    job.job_fit_errors = "gang"
    pipelined = job.tasks["ns1-p"]
    pipelined.eviction_occurred = True
    assert job.task_scheduling_reason("ns1-p") == (
        POD_REASON_UNSCHEDULABLE,
        "Pod ns1/p can possibly be assigned to n2, once resource is released and minAvailable"
        " is satisfied",
        "n2",  # nominated because victims were evicted for it
    )
    pipelined.eviction_occurred = False
    assert job.task_scheduling_reason("ns1-p")[2] == ""
    assert job.task_scheduling_reason("ns1-r") == ("Running", "gang", "")
    assert job.task_scheduling_reason("missing") == ("", "", "")


def test_task_scheduling_reason_prefers_the_last_transaction():
    job = new_job("j", new_task("a", S.PENDING))
    task = job.tasks["ns1-a"]
    task.last_transaction = TransactionContext(node_name="n9", status=S.ALLOCATED)
    reason, message, _ = job.task_scheduling_reason("ns1-a")
    assert reason == POD_REASON_SCHEDULABLE
    assert "assigned to n9" in message


def test_reset_fit_errors():
    job = new_job("j", new_task("a", S.PENDING))
    job.job_fit_errors = "x"
    fail(job, "ns1-a")
    job.reset_fit_errors()
    assert job.job_fit_errors == ""
    assert job.nodes_fit_errors == {}


# ---------------------------------------------------------------- PodGroup


def test_pod_group_from_dict_defaults():
    group = PodGroupInfo.from_dict({"metadata": {"name": "pg"}})
    assert group.namespace == "default"
    assert group.queue == "default"
    assert group.min_member == 0
    assert group.min_task_member == {}
    assert group.min_resources is None
    assert group.phase == ""
    assert group.status_dict() == {"phase": ""}


def test_pod_group_from_dict_reads_spec_and_status():
    obj = {
        "metadata": {"name": "pg", "namespace": "ns", "uid": "u1"},
        "spec": {
            "minMember": 3,
            "queue": "q1",
            "minTaskMember": {"ps": 1},
            "priorityClassName": "high",
            "minResources": {"cpu": "2"},
        },
        "status": {"phase": "Running", "running": 3, "conditions": [{"type": "Scheduled"}]},
    }
    group = PodGroupInfo.from_dict(obj)
    assert (group.queue, group.min_member, group.min_task_member) == ("q1", 3, {"ps": 1})
    assert group.priority_class_name == "high"
    assert group.raw is obj
    assert group.status_dict() == {
        "phase": "Running",
        "conditions": [{"type": "Scheduled"}],
        "running": 3,
    }
    copy = group.clone()
    copy.conditions[0]["type"] = "Unschedulable"
    copy.phase = "Pending"
    assert group.conditions == [{"type": "Scheduled"}]
    assert group.phase == "Running"


def test_set_pod_group_copies_its_fields():
    job = JobInfo("ns1/pg1")
    job.set_pod_group(pod_group(min_member=4, min_task_member={"ps": 1, "worker": 3}, queue="q1"))
    assert (job.name, job.namespace, job.queue, job.min_available) == ("pg1", "ns1", "q1", 4)
    assert job.task_min_available == {"ps": 1, "worker": 3}
    assert job.task_min_available_total == 4
    assert job.creation_timestamp == "2024-01-01T00:00:00Z"
    assert not job.preemptable
    assert job.revocable_zone == ""
    assert job.waiting_time is None


@pytest.mark.parametrize(
    ("initial", "changed", "total"),
    [
        ({"worker": 3}, {"master": 1, "worker": 2, "gpu": 1}, 4),
        ({"master": 2, "worker": 5, "gpu": 3}, {"master": 1, "worker": 2}, 3),
        ({"worker": 2}, {"master": 2, "worker": 5, "gpu": 3}, 10),
        ({"old-master": 1, "old-worker": 3}, {"new-master": 1, "new-worker": 3}, 4),
        ({"master": 1, "worker": 3}, {}, 0),
    ],
    ids=[
        "single to multiple roles",
        "decreased",
        "increased",
        "replaced completely",
        "changed to empty",
    ],
)
def test_upstream_parse_min_member_info_changed(
    initial: dict[str, int], changed: dict[str, int], total: int
):
    """TestParseMinMemberInfoChanged: a PodGroup update replaces the role minimums."""
    job = JobInfo("test-job")
    job.set_pod_group(pod_group(min_task_member=initial))
    job.set_pod_group(pod_group(min_task_member=changed))
    assert job.task_min_available == changed
    assert job.task_min_available_total == total


@pytest.mark.parametrize(
    ("annotations", "labels", "expected"),
    [
        ({}, {}, False),  # a job is not preemptable unless it says so
        ({"volcano.sh/preemptable": "true"}, {}, True),
        ({}, {"volcano.sh/preemptable": "true"}, True),
        ({"volcano.sh/preemptable": "false"}, {"volcano.sh/preemptable": "true"}, False),
        ({"volcano.sh/preemptable": "nope"}, {"volcano.sh/preemptable": "true"}, False),
    ],
)
def test_job_preemptable(annotations: dict[str, str], labels: dict[str, str], expected: bool):
    job = JobInfo("j")
    job.set_pod_group(pod_group(annotations=annotations, labels=labels))
    assert job.preemptable is expected


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({"volcano.sh/revocable-zone": "*"}, "*"),
        ({"volcano.sh/revocable-zone": "rz1"}, ""),
        ({}, ""),
    ],
)
def test_job_revocable_zone(annotations: dict[str, str], expected: str):
    job = JobInfo("j")
    job.set_pod_group(pod_group(annotations=annotations))
    assert job.revocable_zone == expected


@pytest.mark.parametrize(
    ("annotations", "seconds"),
    [
        ({"volcano.sh/sla-waiting-time": "1h30m"}, 5400.0),
        ({"sla-waiting-time": "90s"}, 90.0),
        ({"volcano.sh/sla-waiting-time": "10m", "sla-waiting-time": "1s"}, 600.0),
        # An invalid or non-positive first key falls back to the bare key.
        ({"volcano.sh/sla-waiting-time": "soon", "sla-waiting-time": "2m"}, 120.0),
        ({"volcano.sh/sla-waiting-time": "0s", "sla-waiting-time": "1.5m"}, 90.0),
        ({"volcano.sh/sla-waiting-time": "-5m"}, None),
        ({}, None),
    ],
)
def test_sla_waiting_time(annotations: dict[str, str], seconds: float | None):
    job = JobInfo("j")
    job.set_pod_group(pod_group(annotations=annotations))
    assert job.waiting_time == seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("300ms", 0.3),
        ("1h", 3600.0),
        ("2h45m30s", 9930.0),
        (".5s", 0.5),
        ("1.5h", 5400.0),
        ("10", None),
        ("", None),
        ("1d", None),
        ("h", None),
    ],
)
def test_parse_go_duration(text: str, seconds: float | None):
    result = parse_go_duration(text)
    if seconds is None:
        assert result is None
    else:
        assert result == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("phase", "pending"), [(None, True), ("Pending", True), ("Inqueue", False), ("Running", False)]
)
def test_is_pending(phase: str | None, pending: bool):
    job = JobInfo("j")
    assert job.is_pending()  # no PodGroup at all
    job.set_pod_group(pod_group(phase=phase))
    assert job.is_pending() is pending
    job.unset_pod_group()
    assert job.is_pending()


# ---------------------------------------------------------------- resources


def test_upstream_get_elastic_resources():
    """TestGetElasticResources, all four cases: what the job holds beyond minResources."""
    with_gpu = rl("1", "1G", {GPU: "1"})
    no_gpu = rl("1", "1G")
    min_resources = {**with_gpu, "pods": "1"}
    cases = [
        ([with_gpu], Resource()),
        ([with_gpu, no_gpu], res(1000, G, pods=1)),
        ([no_gpu, no_gpu], res(1000, G, pods=1)),
        ([with_gpu, with_gpu], res(1000, G, pods=1, **{GPU: 1000})),
    ]
    for i, (requests, want) in enumerate(cases):
        job = JobInfo("job")
        for n, request in enumerate(requests, start=1):
            job.add_task(
                TaskInfo.from_pod(make_pod("ns1", f"task-{n}", f"node{n}", "Running", request))
            )
        job.set_pod_group(pod_group(min_member=1, min_resources=min_resources))
        assert same(job.elastic_resources(), want), i


def test_min_resources():
    job = JobInfo("j")
    assert same(job.min_resources(), Resource())
    job.set_pod_group(pod_group(min_resources={"cpu": "2", "memory": "1G"}))
    assert same(job.min_resources(), res(2000, G))


def test_sch_gated_resources_skip_volcano_only_gate():
    job = JobInfo("j")
    job.add_task(
        TaskInfo.from_pod(make_pod("ns1", "a", requests=rl("1", "1G"), gates=["example.com/wait"]))
    )
    job.add_task(
        TaskInfo.from_pod(
            make_pod("ns1", "b", requests=rl("2", "2G"), gates=[QUEUE_ALLOCATION_GATE])
        )
    )
    job.add_task(TaskInfo.from_pod(make_pod("ns1", "c", requests=rl("4", "4G"))))
    gated = job.sch_gated_resources()
    assert gated.milli_cpu == pytest.approx(1000)
    assert gated.memory == pytest.approx(G)

    deducted = job.deduct_sch_gated_resources(res(3000, 500_000_000, pods=3))
    assert deducted.milli_cpu == pytest.approx(2000)
    assert deducted.memory == 0  # floored at zero
    assert deducted.scalar_resources["pods"] == pytest.approx(2)


def test_deduct_without_gated_tasks_returns_the_same_object():
    job = new_job("j", new_task("a", S.PENDING))
    resource = res(1000)
    assert job.deduct_sch_gated_resources(resource) is resource


# ---------------------------------------------------------------- topology


@pytest.mark.parametrize(
    ("topology", "expected"),
    [
        (None, (False, 0)),  # "Nil NetworkTopologies"
        ({"mode": "hard", "highestTierAllowed": 2}, (True, 2)),  # "Hard Mode"
        ({"mode": "soft", "highestTierAllowed": 3}, (False, 3)),  # "Soft Mode"
        ({"mode": "hard"}, (False, 0)),  # no tier: not a hard constraint (yet)
        ({"highestTierAllowed": 1}, (True, 1)),  # the CRD defaults mode to hard
    ],
)
def test_upstream_has_topology_hard_constrain(
    topology: dict[str, Any] | None, expected: tuple[bool, int]
):
    """TestHasTopologyHardConstrain (+ the unset-tier and defaulted-mode cases)."""
    job = JobInfo("j")
    assert job.hard_topology() == (False, 0)  # "Nil PodGroup"
    job.set_pod_group(pod_group(network_topology=topology))
    assert job.hard_topology() == expected
    assert job.with_network_topology() is (topology is not None)


# ---------------------------------------------------------------- clone


def test_clone_is_independent():
    job = new_job(
        "j",
        new_task("a", S.PENDING),
        new_task("b", S.RUNNING),
        min_available=2,
        min_task_member={"": 2},
    )
    job.set_pod_group(pod_group(min_member=2, min_task_member={"": 2}))
    job.job_fit_errors = "not enough"
    copy = job.clone()

    assert copy.tasks.keys() == job.tasks.keys()
    assert all(copy.tasks[uid] is not job.tasks[uid] for uid in job.tasks)
    assert index_uids(copy) == index_uids(job)
    assert copy.job_fit_errors == "not enough"
    assert copy.pod_group is not job.pod_group

    copy.update_task_status(copy.tasks["ns1-a"], S.ALLOCATED)
    assert job.tasks["ns1-a"].status is S.PENDING
    assert index_uids(job) == {S.PENDING: {"ns1-a"}, S.RUNNING: {"ns1-b"}}
    assert job.allocated.milli_cpu == pytest.approx(100)
    assert copy.allocated.milli_cpu == pytest.approx(200)

    copy.task_min_available["extra"] = 5
    assert "extra" not in job.task_min_available


def test_clone_of_a_clone_keeps_index_and_tasks_identical():
    job = new_job("j", new_task("a", S.PIPELINED))
    copy = job.clone().clone()
    assert copy.task_status_index[S.PIPELINED]["ns1-a"] is copy.tasks["ns1-a"]


def test_job_sort_key_is_creation_then_uid():
    older = JobInfo("z", creation_timestamp="2024-01-01T00:00:00Z")
    newer = JobInfo("a", creation_timestamp="2024-01-02T00:00:00Z")
    same_time = JobInfo("b", creation_timestamp="2024-01-01T00:00:00Z")
    assert [j.uid for j in sorted([newer, older, same_time], key=job_sort_key)] == ["b", "z", "a"]


EMPTY_IN_A_SHELL = ("tasks", "task_status_index", "nodes_fit_errors", "sub_jobs", "task_to_sub_job")


def test_shell_copies_every_field_but_the_tasks():
    """``_shell`` builds its copy by position (a snapshot takes one per job): every field must
    land in its own place, with its own containers and sums."""
    import dataclasses
    from collections import Counter

    from volcano_py.api.job import PodGroupInfo

    job = JobInfo(uid="ns/j")
    values: dict[str, Any] = {}
    for number, spec in enumerate(dataclasses.fields(JobInfo)):
        if spec.name in EMPTY_IN_A_SHELL:
            continue
        current = getattr(job, spec.name)
        if isinstance(current, str) or (current is None and spec.name != "pod_group"):
            values[spec.name] = f"value-{number}"
        elif isinstance(current, bool):
            values[spec.name] = not current
        elif isinstance(current, int | float):
            values[spec.name] = number + 1
        elif isinstance(current, Resource):
            values[spec.name] = Resource(milli_cpu=float(number), memory=2.0 * number)
        elif isinstance(current, Counter):
            values[spec.name] = Counter({f"key-{number}": number})
        elif isinstance(current, dict):
            values[spec.name] = {f"key-{number}": number}
        elif spec.name == "pod_group":
            values[spec.name] = PodGroupInfo(name="j", namespace="ns", phase="Running")
        elif isinstance(current, tuple):
            values[spec.name] = ()
        else:
            values[spec.name] = current
    job = dataclasses.replace(job, **values)
    shell = job._shell()
    for spec in dataclasses.fields(JobInfo):
        mine, theirs = getattr(shell, spec.name), getattr(job, spec.name)
        if spec.name in EMPTY_IN_A_SHELL:
            assert mine == {}
        else:
            assert mine == theirs, spec.name
            if isinstance(theirs, dict | Resource | PodGroupInfo) and spec.name != "sums_memo":
                assert mine is not theirs, spec.name
    assert type(shell.role_counts) is Counter
    assert shell.sums_memo is job.sums_memo
    assert shell.memo is job.memo
