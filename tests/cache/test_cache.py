"""SchedulerCache: watch events in, snapshots out, session decisions back (spec §2.3, §2.7;
upstream ``pkg/scheduler/cache``).

Upstream cases transcribed (``cache_test.go``, ``event_handlers_test.go``), adapted to raw
objects and ``apply_event``:

* ``TestGetOrCreateJob`` (3 cases), ``TestNodeOperation`` (3 cases),
  ``TestSchedulerCache_Bind_NodeWithSufficientResources``,
  ``TestSchedulerCache_Bind_NodeWithInsufficientResources``,
  ``TestDefaultBinderBindUsesTaskPodAnnotations`` (the cache half: the annotations the session
  set travel with the bind).
* ``TestSchedulerCache_updateTask`` / ``TestSchedulerCache_UpdatePod`` ("Success Case",
  "Error Case": a Succeeded pod that turns Running), ``TestSchedulerCache_AddPodGroupV1beta1``
  ("Success Case"), ``TestSchedulerCache_UpdatePodGroupV1beta1`` ("Success Case"),
  ``TestSchedulerCache_DeletePodGroupV1beta1`` ("Success Case"),
  ``TestSchedulerCache_AddQueueV1beta1`` / ``UpdateQueueV1beta1`` / ``DeleteQueueV1beta1``
  ("Success Case"). The "Wrong Type" and "Without Identity" cases test Go interface casts and
  have no equivalent with typed ``apply_event``.

Not transcribed: ``TestSchedulerCache_SyncNode`` (``--node-selector`` is not implemented),
HyperNode tree tests (the cache keeps raw HyperNodes; the tree is ``api/hypernode.py``'s),
NUMA, DRA, PreBind, handler-sync and shard tests.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
    resource_list,
)
from volcano_py.api.job import PG_PENDING
from volcano_py.api.types import NodePhase, TaskStatus
from volcano_py.cache.cache import CacheEventError, SchedulerCache
from volcano_py.cache.interfaces import (
    RecordingBinder,
    RecordingEventRecorder,
    RecordingEvictor,
    RecordingStatusUpdater,
)
from volcano_py.framework.conf import SchedulerConf
from volcano_py.framework.session import close_session, open_session

G = 10**9
NS = "test"


def new_cache(**kwargs: Any) -> SchedulerCache:
    return SchedulerCache(
        binder=RecordingBinder(),
        evictor=RecordingEvictor(),
        status_updater=RecordingStatusUpdater(),
        recorder=RecordingEventRecorder(),
        **kwargs,
    )


def add(cache: SchedulerCache, *objects: tuple[str, dict[str, Any]]) -> SchedulerCache:
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    return cache


def node(name: str, cpu: str = "2000m", memory: str = "10G") -> tuple[str, dict[str, Any]]:
    return "Node", build_node(name, resource_list(cpu, memory, pods="10"))


def pod(
    name: str,
    node_name: str = "",
    phase: str = "Pending",
    cpu: str = "1000m",
    memory: str = "1G",
    group: str = "j1",
    **kwargs: Any,
) -> tuple[str, dict[str, Any]]:
    return "Pod", build_pod(NS, name, node_name, phase, resource_list(cpu, memory), group, **kwargs)


def pod_group(name: str = "j1", queue: str = "q1", **kwargs: Any) -> tuple[str, dict[str, Any]]:
    return "PodGroup", build_pod_group(name, NS, queue, 1, **kwargs)


def queue(name: str = "q1", **kwargs: Any) -> tuple[str, dict[str, Any]]:
    return "Queue", build_queue(name, **kwargs)


def used_cpu(cache: SchedulerCache, name: str) -> float:
    return cache.nodes[name].used.milli_cpu


def idle_cpu(cache: SchedulerCache, name: str) -> float:
    return cache.nodes[name].idle.milli_cpu


# ---------------------------------------------------------------------------- event plumbing


def test_unknown_kind_or_event_type_is_rejected():
    cache = new_cache()
    with pytest.raises(CacheEventError, match="Deployment"):
        cache.apply_event("Deployment", "ADDED", {})
    with pytest.raises(CacheEventError, match="BOOKMARK"):
        cache.apply_event("Pod", "BOOKMARK", {})


def test_apply_events_in_order():
    cache = new_cache()
    cache.apply_events([("Node", "ADDED", node("n1")[1]), ("Node", "DELETED", node("n1")[1])])
    assert cache.nodes == {} and cache.node_list == []


# ---------------------------------------------------------------------------- pods


def test_pod_added_updated_deleted_on_a_node():
    cache = add(new_cache(), node("n1"), pod("p1", "n1", "Running"))
    task = cache.tasks[f"{NS}/p1"]
    assert task.status is TaskStatus.RUNNING
    assert used_cpu(cache, "n1") == 1000 and idle_cpu(cache, "n1") == 1000
    assert cache.jobs[f"{NS}/j1"].tasks[task.uid] is task
    # "Success Case": the request grows from 1G to 2G
    cache.apply_event("Pod", "MODIFIED", pod("p1", "n1", "Running", memory="2G")[1])
    assert cache.nodes["n1"].used.memory == 2 * G
    assert len(cache.nodes["n1"].tasks) == 1
    cache.apply_event("Pod", "DELETED", pod("p1", "n1", "Running")[1])
    assert f"{NS}/p1" not in cache.tasks
    assert used_cpu(cache, "n1") == 0 and cache.nodes["n1"].tasks == {}
    # a job with neither tasks nor PodGroup is forgotten
    assert f"{NS}/j1" not in cache.jobs


def test_succeeded_pod_that_turns_running_is_accounted_upstream_error_case():
    """``TestSchedulerCache_UpdatePod`` "Error Case": upstream errors because the Succeeded
    pod was never on the node; here the new version simply replaces the old one."""
    cache = add(new_cache(), node("n1"), pod("p1", "n1", "Succeeded"))
    assert used_cpu(cache, "n1") == 0
    assert cache.nodes["n1"].tasks == {}
    cache.apply_event("Pod", "MODIFIED", pod("p1", "n1", "Running", memory="2G")[1])
    assert used_cpu(cache, "n1") == 1000
    assert cache.tasks[f"{NS}/p1"].status is TaskStatus.RUNNING


def test_finished_pod_releases_its_node_but_stays_in_its_job():
    cache = add(new_cache(), node("n1"), pod_group(), queue(), pod("p1", "n1", "Running"))
    cache.apply_event("Pod", "MODIFIED", pod("p1", "n1", "Succeeded")[1])
    assert used_cpu(cache, "n1") == 0
    assert cache.jobs[f"{NS}/j1"].tasks_in(TaskStatus.SUCCEEDED)


def test_pending_pod_bound_by_the_api_becomes_bound_on_its_node():
    cache = add(new_cache(), node("n1"), pod("p1"))
    assert cache.tasks[f"{NS}/p1"].status is TaskStatus.PENDING
    cache.apply_event("Pod", "MODIFIED", pod("p1", "n1", "Pending")[1])
    assert cache.tasks[f"{NS}/p1"].status is TaskStatus.BOUND
    assert used_cpu(cache, "n1") == 1000


def test_terminating_pod_is_releasing():
    _, obj = pod("p1", "n1", "Running")
    obj["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    cache = add(new_cache(), node("n1"), ("Pod", obj))
    assert cache.tasks[f"{NS}/p1"].status is TaskStatus.RELEASING
    assert cache.nodes["n1"].releasing.milli_cpu == 1000
    assert used_cpu(cache, "n1") == 1000


def test_deleting_an_unknown_pod_is_harmless():
    cache = new_cache()
    cache.apply_event("Pod", "DELETED", pod("ghost", "n1", "Running")[1])
    assert cache.tasks == {} and cache.nodes == {}


# ---------------------------------------------------------------------------- tracked pods


@pytest.mark.parametrize(
    ("scheduler", "node_name", "tracked"),
    [
        ("volcano", "", True),
        ("volcano", "n1", True),
        ("default-scheduler", "", False),
        ("default-scheduler", "n1", True),  # already bound: it uses the node
    ],
    ids=["ours-pending", "ours-bound", "theirs-pending", "theirs-bound"],
)
def test_tracked_pods_are_ours_or_already_bound(scheduler, node_name, tracked):
    phase = "Running" if node_name else "Pending"
    cache = add(new_cache(), node("n1"), pod("p1", node_name, phase, scheduler_name=scheduler))
    assert (f"{NS}/p1" in cache.tasks) is tracked
    assert used_cpu(cache, "n1") == (1000 if tracked and node_name else 0)


def test_several_scheduler_names():
    cache = new_cache(scheduler_names=frozenset({"volcano", "batch"}))
    add(cache, pod("a", scheduler_name="batch"), pod("b", scheduler_name="other"))
    assert set(cache.tasks) == {f"{NS}/a"}


def test_pod_of_another_scheduler_is_tracked_once_bound():
    cache = add(new_cache(), node("n1"), pod("p1", scheduler_name="default-scheduler"))
    assert cache.tasks == {}
    cache.apply_event(
        "Pod", "MODIFIED", pod("p1", "n1", "Running", scheduler_name="default-scheduler")[1]
    )
    assert f"{NS}/p1" in cache.tasks
    assert used_cpu(cache, "n1") == 1000


@pytest.mark.parametrize(
    ("group", "scheduler", "has_job"),
    [("j1", "volcano", True), ("", "volcano", False), ("", "default-scheduler", False)],
    ids=["case 0: group annotation", "case 1: ours without group", "case 2: theirs"],
)
def test_get_or_create_job_upstream(group, scheduler, has_job):
    """``TestGetOrCreateJob``: only a pod naming a PodGroup creates a job; every bound pod
    still counts on its node."""
    cache = add(
        new_cache(), node("n1"), pod("p1", "n1", "Running", group=group, scheduler_name=scheduler)
    )
    assert bool(cache.jobs) is has_job
    assert used_cpu(cache, "n1") == 1000


# ---------------------------------------------------------------------------- nodes


@pytest.mark.parametrize("deleted", ["n2", "n1", "n3"], ids=["case 0", "case 1", "case 2"])
def test_node_operation_upstream(deleted):
    """``TestNodeOperation``: first-seen order, deletion keeps the others' order."""
    cache = add(
        new_cache(),
        node("n1", "2000m", "10G"),
        node("n2", "4000m", "16G"),
        node("n3", "3000m", "12G"),
    )
    assert cache.node_list == ["n1", "n2", "n3"]
    assert cache.nodes["n2"].allocatable.milli_cpu == 4000
    cache.apply_event("Node", "DELETED", node(deleted)[1])
    expected = [n for n in ("n1", "n2", "n3") if n != deleted]
    assert cache.node_list == expected
    assert sorted(cache.nodes) == expected


def test_readded_node_goes_to_the_end():
    cache = add(new_cache(), node("n1"), node("n2"))
    cache.apply_event("Node", "DELETED", node("n1")[1])
    cache.apply_event("Node", "ADDED", node("n1")[1])
    assert cache.node_list == ["n2", "n1"]


def test_node_modified_recomputes_idle_with_its_tasks():
    cache = add(new_cache(), node("n1"), pod("p1", "n1", "Running"))
    cache.apply_event("Node", "MODIFIED", node("n1", "8000m")[1])
    assert cache.nodes["n1"].allocatable.milli_cpu == 8000
    assert idle_cpu(cache, "n1") == 7000
    assert cache.node_list == ["n1"]


def test_placeholder_node_for_a_pod_on_an_unknown_node():
    cache = add(new_cache(), node("n1"), pod("p1", "n9", "Running"))
    placeholder = cache.nodes["n9"]
    assert placeholder.phase is NodePhase.NOT_READY
    assert cache.node_list == ["n1", "n9"]
    assert "n9" not in cache.snapshot().nodes
    cache.apply_event("Node", "ADDED", node("n9")[1])
    assert cache.nodes["n9"] is placeholder
    assert placeholder.ready
    assert used_cpu(cache, "n9") == 1000 and idle_cpu(cache, "n9") == 1000
    assert cache.node_list == ["n1", "n9"]
    snapshot = cache.snapshot()
    assert snapshot.node_list == ["n1", "n9"]
    assert snapshot.nodes["n9"].used.milli_cpu == 1000


def test_placeholder_node_goes_away_with_its_last_pod():
    cache = add(new_cache(), pod("p1", "n9", "Running"), pod("p2", "n9", "Running"))
    cache.apply_event("Pod", "DELETED", pod("p1", "n9", "Running")[1])
    assert "n9" in cache.nodes
    cache.apply_event("Pod", "DELETED", pod("p2", "n9", "Running")[1])
    assert "n9" not in cache.nodes and cache.node_list == []


def test_deleted_node_with_pods_stays_not_ready_until_they_leave():
    cache = add(new_cache(), node("n1"), node("n2"), pod("p1", "n1", "Running"))
    cache.apply_event("Node", "DELETED", node("n1")[1])
    assert cache.nodes["n1"].phase is NodePhase.NOT_READY
    assert cache.snapshot().node_list == ["n2"]
    cache.apply_event("Pod", "DELETED", pod("p1", "n1", "Running")[1])
    assert "n1" not in cache.nodes
    assert cache.node_list == ["n2"]


def test_deleting_an_unknown_node_is_harmless():
    cache = new_cache()
    cache.apply_event("Node", "DELETED", node("nope")[1])
    assert cache.nodes == {}


# ---------------------------------------------------------------------------- pod groups and queues


def test_add_pod_group_upstream():
    """``TestSchedulerCache_AddPodGroupV1beta1`` "Success Case"."""
    cache = add(new_cache(), node("n1"), pod("p1", "n1", "Running"), pod_group())
    job = cache.jobs[f"{NS}/j1"]
    assert job.pod_group is not None
    assert (job.pod_group.namespace, job.pod_group.name) == (NS, "j1")
    assert len(job.tasks) == 1


def test_pod_group_before_its_pods():
    cache = add(new_cache(), pod_group(), pod("p1"))
    job = cache.jobs[f"{NS}/j1"]
    assert job.min_available == 1 and len(job.tasks) == 1


def test_update_pod_group_upstream():
    """``TestSchedulerCache_UpdatePodGroupV1beta1`` "Success Case" (the spec changes; the job
    keeps its tasks)."""
    cache = add(new_cache(), node("n1"), pod("p1", "n1", "Running"), pod_group())
    cache.apply_event("PodGroup", "MODIFIED", build_pod_group("j1", NS, "q2", 3, phase="Running"))
    job = cache.jobs[f"{NS}/j1"]
    assert (job.min_available, job.queue, job.pod_group.phase) == (3, "q2", "Running")
    assert len(job.tasks) == 1


def test_delete_pod_group_upstream():
    """``TestSchedulerCache_DeletePodGroupV1beta1`` "Success Case": the job keeps its tasks
    without a PodGroup (and leaves the snapshot)."""
    cache = add(new_cache(), node("n1"), queue(), pod("p1", "n1", "Running"), pod_group())
    cache.apply_event("PodGroup", "DELETED", pod_group()[1])
    job = cache.jobs[f"{NS}/j1"]
    assert job.pod_group is None
    assert cache.snapshot().jobs == {}


def test_delete_pod_group_without_tasks_forgets_the_job():
    cache = add(new_cache(), pod_group())
    cache.apply_event("PodGroup", "DELETED", pod_group()[1])
    assert cache.jobs == {}
    cache.apply_event("PodGroup", "DELETED", pod_group()[1])


def test_pod_group_queue_defaults_to_the_default_queue():
    cache = add(new_cache(default_queue="fallback"), ("PodGroup", build_pod_group("j1", NS, "", 1)))
    assert cache.jobs[f"{NS}/j1"].queue == "fallback"


def test_queue_add_update_delete_upstream():
    """``TestSchedulerCache_{Add,Update,Delete}QueueV1beta1`` "Success Case"."""
    cache = add(new_cache(), queue("q1", weight=1))
    assert cache.queues["q1"].name == "q1"
    cache.apply_event("Queue", "MODIFIED", build_queue("q1", weight=5))
    assert cache.queues["q1"].weight == 5
    cache.apply_event("Queue", "DELETED", build_queue("q1"))
    assert cache.queues == {}
    cache.apply_event("Queue", "DELETED", build_queue("q1"))


def test_hyper_nodes_and_pdbs_follow_their_events():
    hyper = {"kind": "HyperNode", "metadata": {"name": "s0"}, "spec": {"tier": 1}}
    pdb = {"kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": NS}, "spec": {}}
    cache = add(new_cache(), ("HyperNode", hyper), ("PodDisruptionBudget", pdb))
    assert cache.snapshot().hyper_nodes == [hyper]
    assert cache.snapshot().pod_disruption_budgets == [pdb]
    changed = {**hyper, "spec": {"tier": 2}}
    cache.apply_event("HyperNode", "MODIFIED", changed)
    assert cache.snapshot().hyper_nodes == [changed]
    cache.apply_event("HyperNode", "DELETED", changed)
    cache.apply_event("PodDisruptionBudget", "DELETED", pdb)
    assert cache.snapshot().hyper_nodes == []
    assert cache.snapshot().pod_disruption_budgets == []


# ---------------------------------------------------------------------------- priority classes


def job_priority(cache: SchedulerCache, uid: str = f"{NS}/j1") -> int:
    return cache.snapshot().jobs[uid].priority


def test_job_priority_from_its_priority_class_else_global_default():
    cache = add(
        new_cache(),
        queue(),
        ("PriorityClass", build_priority_class("high", 100)),
        ("PriorityClass", build_priority_class("normal", 10, global_default=True)),
        pod_group("j1", priority_class_name="high"),
        pod_group("j2"),
        pod_group("j3", priority_class_name="missing"),
    )
    assert job_priority(cache, f"{NS}/j1") == 100
    assert job_priority(cache, f"{NS}/j2") == 10
    assert job_priority(cache, f"{NS}/j3") == 10
    assert cache.snapshot().priority_classes == {"high": 100, "normal": 10}


def test_no_global_default_means_zero():
    cache = add(
        new_cache(), queue(), ("PriorityClass", build_priority_class("high", 100)), pod_group()
    )
    assert job_priority(cache) == 0


def test_global_default_follows_priority_class_events():
    cache = add(
        new_cache(), queue(), pod_group(), ("PriorityClass", build_priority_class("a", 7, True))
    )
    assert job_priority(cache) == 7
    cache.apply_event("PriorityClass", "MODIFIED", build_priority_class("a", 8, True))
    assert job_priority(cache) == 8
    cache.apply_event("PriorityClass", "MODIFIED", build_priority_class("a", 8, False))
    assert job_priority(cache) == 0
    cache.apply_event("PriorityClass", "ADDED", build_priority_class("b", 3, True))
    assert job_priority(cache) == 3
    cache.apply_event("PriorityClass", "DELETED", build_priority_class("b", 3, True))
    assert job_priority(cache) == 0
    assert cache.default_priority == 0


def test_priority_class_change_reaches_the_next_snapshot():
    cache = add(
        new_cache(),
        queue(),
        ("PriorityClass", build_priority_class("high", 100)),
        pod_group(priority_class_name="high"),
    )
    assert job_priority(cache) == 100
    cache.apply_event("PriorityClass", "MODIFIED", build_priority_class("high", 200))
    assert job_priority(cache) == 200


# ---------------------------------------------------------------------------- snapshot


def test_snapshot_has_ready_nodes_in_order_with_compact_rows():
    cache = add(new_cache(), node("a"), pod("p", "ghost", "Running"), node("b"), node("c"))
    cache.apply_event("Node", "DELETED", node("b")[1])
    snapshot = cache.snapshot()
    assert snapshot.node_list == ["a", "c"]
    assert [snapshot.nodes[n].row for n in snapshot.node_list] == [0, 1]
    assert snapshot.matrix.allocatable.shape[0] >= 2
    for name in snapshot.node_list:
        assert snapshot.nodes[name].matrix is snapshot.matrix
        assert snapshot.nodes[name].allocatable.milli_cpu == 2000


def test_snapshot_jobs_need_a_pod_group_in_a_known_queue():
    cache = add(
        new_cache(),
        queue("q1"),
        pod("orphan", group="nogroup"),
        pod_group("known", "q1"),
        pod_group("lost", "q-missing"),
    )
    assert set(cache.snapshot().jobs) == {f"{NS}/known"}
    cache.apply_event("Queue", "ADDED", build_queue("q-missing"))
    assert set(cache.snapshot().jobs) == {f"{NS}/known", f"{NS}/lost"}
    cache.apply_event("Queue", "DELETED", build_queue("q1"))
    assert set(cache.snapshot().jobs) == {f"{NS}/lost"}


def isolation_cache() -> SchedulerCache:
    return add(
        new_cache(),
        node("n1", "4000m", "8G"),
        queue(),
        pod_group("j1", phase=PG_PENDING),
        pod("pending", group="j1"),
        pod("pending2", group="j1"),
        pod_group("j2", phase="Running"),
        pod("running", "n1", "Running", group="j2"),
    )


def cache_view(cache: SchedulerCache) -> Any:
    node_info = cache.nodes["n1"]
    return (
        {key: (t.status, t.node_name) for key, t in cache.tasks.items()},
        {
            uid: {s: sorted(tasks) for s, tasks in job.task_status_index.items()}
            for uid, job in cache.jobs.items()
        },
        (
            node_info.idle.milli_cpu,
            node_info.used.milli_cpu,
            node_info.releasing.milli_cpu,
            node_info.pipelined.milli_cpu,
        ),
        sorted(node_info.tasks),
        {uid: job.pod_group.phase for uid, job in cache.jobs.items() if job.pod_group},
        {name: q.allocated_status for name, q in cache.queues.items()},
    )


class NoOpSink:
    """Takes the session's decisions without touching the cache."""

    def add_bind_task(self, task: Any) -> None: ...

    def evict(self, task: Any, reason: str) -> None: ...

    def update_pod_group_status(self, job: Any) -> None: ...

    def update_job_info(self, job: Any) -> None: ...

    def update_queue_status(self, queue: str, allocated: Any) -> None: ...

    def update_pod_condition(self, task: Any, condition: Any, nominated_node: str) -> None: ...

    def record_event(self, *args: Any) -> None: ...


def test_session_changes_never_reach_the_cache():
    cache = isolation_cache()
    before = cache_view(cache)
    ssn = open_session(cache.snapshot(), SchedulerConf([], []), {}, NoOpSink())
    tasks = {t.name: t for j in ssn.jobs.values() for t in j.tasks.values()}
    statement = ssn.statement()
    statement.allocate(tasks["pending"], ssn.nodes["n1"])
    statement.pipeline(tasks["pending2"], "n1", True)
    statement.evict(tasks["running"], "preempt")
    assert cache_view(cache) == before
    statement.discard()
    statement.allocate(tasks["pending"], ssn.nodes["n1"])
    statement.evict(ssn.jobs[f"{NS}/j2"].tasks[f"{NS}-running"], "preempt")
    statement.commit()
    ssn.jobs[f"{NS}/j1"].pod_group.phase = "Running"
    ssn.jobs[f"{NS}/j1"].pod_group.conditions.append({"type": "Scheduled"})
    ssn.queues["q1"].allocated_status = {"cpu": "9"}
    close_session(ssn)
    assert cache_view(cache) == before
    assert cache.jobs[f"{NS}/j1"].pod_group.conditions == []


def test_cache_events_after_the_snapshot_never_reach_the_session():
    cache = isolation_cache()
    snapshot = cache.snapshot()
    job = snapshot.jobs[f"{NS}/j2"]
    running = job.tasks[f"{NS}-running"]
    node_info = snapshot.nodes["n1"]
    cache.apply_event("Pod", "MODIFIED", pod("running", "n1", "Succeeded", group="j2")[1])
    cache.apply_event("Pod", "DELETED", pod("pending", group="j1")[1])
    cache.apply_event("Node", "MODIFIED", node("n1", "64000m", "8G")[1])
    cache.apply_event("PodGroup", "MODIFIED", build_pod_group("j1", NS, "q1", 5, phase="Inqueue"))
    cache.apply_event("Queue", "MODIFIED", build_queue("q1", weight=9))
    assert running.status is TaskStatus.RUNNING
    assert job.tasks_in(TaskStatus.RUNNING) == {running.uid: running}
    assert f"{NS}-pending" in snapshot.jobs[f"{NS}/j1"].tasks
    assert snapshot.jobs[f"{NS}/j1"].min_available == 1
    assert snapshot.jobs[f"{NS}/j1"].pod_group.phase == PG_PENDING
    assert snapshot.queues["q1"].weight == 1
    assert node_info.allocatable.milli_cpu == 4000
    assert node_info.used.milli_cpu == 1000


def test_two_snapshots_are_independent():
    cache = isolation_cache()
    first, second = cache.snapshot(), cache.snapshot()
    ssn = open_session(first, SchedulerConf([], []), {}, NoOpSink())
    task = next(iter(ssn.jobs[f"{NS}/j1"].tasks_in(TaskStatus.PENDING).values()))
    ssn.statement().allocate(task, ssn.nodes["n1"])
    assert second.nodes["n1"].idle.milli_cpu == 3000
    assert len(second.jobs[f"{NS}/j1"].tasks_in(TaskStatus.PENDING)) == 2


# ---------------------------------------------------------------------------- session outputs


def test_bind_node_with_sufficient_resources_upstream():
    """``TestSchedulerCache_Bind_NodeWithSufficientResources``."""
    cache = add(new_cache(), pod("p1"), node("n1"))
    task = cache.tasks[f"{NS}/p1"].clone()
    task.node_name = "n1"
    task.pod_annotations["volcano.sh/vgpu-ids"] = "GPU-aaaa"
    cache.add_bind_task(task)
    assert cache.binder.binds == {f"{NS}/p1": "n1"}
    cached = cache.tasks[f"{NS}/p1"]
    assert cached.status is TaskStatus.BINDING
    assert cached.node_name == "n1"
    assert cached.pod_annotations["volcano.sh/vgpu-ids"] == "GPU-aaaa"
    assert used_cpu(cache, "n1") == 1000
    assert cache.jobs[f"{NS}/j1"].tasks_in(TaskStatus.BINDING)


def test_bound_task_is_placed_in_the_next_snapshot():
    cache = add(new_cache(), queue(), pod_group(), pod("p1"), node("n1"))
    task = cache.tasks[f"{NS}/p1"].clone()
    task.node_name = "n1"
    cache.add_bind_task(task)
    snapshot = cache.snapshot()
    assert snapshot.jobs[f"{NS}/j1"].tasks_in(TaskStatus.PENDING) == {}
    assert snapshot.nodes["n1"].idle.milli_cpu == 1000


def test_bind_node_with_insufficient_resources_upstream():
    """``TestSchedulerCache_Bind_NodeWithInsufficientResources``."""
    cache = add(new_cache(), pod("p1", cpu="5000m", memory="50G"), node("n1"))
    before = cache_view_of_bind(cache)
    task = cache.tasks[f"{NS}/p1"].clone()
    task.node_name = "n1"
    with pytest.raises(Exception):  # noqa: B017 - any error; upstream returns one
        cache.add_bind_task(task)
    assert cache_view_of_bind(cache) == before
    assert cache.binder.binds == {}


def cache_view_of_bind(cache: SchedulerCache) -> Any:
    task = cache.tasks[f"{NS}/p1"]
    job = cache.jobs[f"{NS}/j1"]
    return (
        task.status,
        task.node_name,
        {s: sorted(t) for s, t in job.task_status_index.items()},
        sorted(cache.nodes["n1"].tasks),
        idle_cpu(cache, "n1"),
    )


def test_bind_of_a_pod_deleted_since_the_snapshot_fails():
    cache = add(new_cache(), queue(), pod_group(), pod("p1"), node("n1"))
    task = cache.tasks[f"{NS}/p1"].clone()
    cache.apply_event("Pod", "DELETED", pod("p1")[1])
    task.node_name = "n1"
    with pytest.raises(Exception):  # noqa: B017 - any error; upstream returns one
        cache.add_bind_task(task)
    assert cache.binder.binds == {}


def test_evict_marks_releasing_and_calls_the_evictor():
    cache = add(new_cache(), queue(), pod_group(), node("n1"), pod("p1", "n1", "Running"))
    session_copy = cache.tasks[f"{NS}/p1"].clone()
    cache.evict(session_copy, "preempt")
    cached = cache.tasks[f"{NS}/p1"]
    assert cached.status is TaskStatus.RELEASING
    assert cache.nodes["n1"].releasing.milli_cpu == 1000
    assert idle_cpu(cache, "n1") == 1000
    assert cache.evictor.evicted == [f"{NS}/p1"]
    assert ("Pod", NS, "p1", "Warning", "Evict", "Pod is evicted, because of preempt") in (
        cache.recorder.events
    )


def test_evict_records_a_normal_event_on_the_pod_group():
    cache = add(new_cache(), queue(), pod_group(), node("n1"), pod("p1", "n1", "Running"))
    cache.evict(cache.tasks[f"{NS}/p1"].clone(), "reclaim")
    assert ("PodGroup", NS, "j1", "Normal", "Evict", "reclaim") in cache.recorder.events


def test_update_pod_group_status_reaches_cache_and_writer():
    cache = add(
        new_cache(), queue(), pod_group(phase="Inqueue"), node("n1"), pod("p1", "n1", "Running")
    )
    snapshot = cache.snapshot()
    job = snapshot.jobs[f"{NS}/j1"]
    job.pod_group.phase = "Running"
    job.pod_group.running = 1
    job.pod_group.conditions = [{"type": "Scheduled", "status": "True"}]
    cache.update_pod_group_status(job)
    cached = cache.jobs[f"{NS}/j1"].pod_group
    assert (cached.phase, cached.running) == ("Running", 1)
    assert cached.conditions == [{"type": "Scheduled", "status": "True"}]
    assert cached.conditions[0] is not job.pod_group.conditions[0]
    assert cache.status_updater.pod_groups[f"{NS}/j1"]["phase"] == "Running"


def test_update_queue_status_reaches_cache_and_writer():
    from volcano_py.api.resource import Resource

    cache = add(new_cache(), queue())
    cache.update_queue_status("q1", Resource.from_list({"cpu": "2", "memory": "1Gi"}))
    assert cache.queues["q1"].allocated_status == {"cpu": "2", "memory": "1Gi"}
    assert cache.status_updater.queues["q1"] == {"cpu": "2", "memory": "1Gi"}
