"""Seed 002 (queue resource management), "使用样例": the four-step reclaim walk-through with
the capacity plugin, as plain pods and PodGroups (what the job controller would create for
``job1``..``job3``: one pod each, ``minMember`` 1, ``minResources`` = the pod's request).

1. A 4-CPU cluster; the ``default`` queue deserves 1 CPU but may use all 4 while nobody else
   asks.
2. job1 (1 CPU) and job2 (3 CPU) in ``default`` both run.
3. Queue ``test`` is created: reclaimable, deserves 3 CPU.
4. job3 (3 CPU) in ``test``: ``default`` holds 3 CPU beyond what it deserves, so reclaim evicts
   job2 (evicting job1 would leave ``default`` at 3 > 1 and free too little), keeps job1 and
   pipelines job3 on the node. Once job2's pod is gone, job3 binds, and job2's re-created pod
   stays pending: ``default`` is at its deserved 1 CPU, so it may not reclaim back.

The configuration is what a volcano-scheduler.conf file gives (every enable flag on): gang in
the first tier, predicates and capacity in the second. The layout matters: gang refuses to
make victims of a job at its ``minMember`` (job2 has 1 of 1), and a tier where one plugin
answers "no victim" is undecided, so the decision falls to the second tier, where capacity
names job2. With gang's reclaimable in capacity's tier the reclaim could not happen (checked
below).

Action order. ``enqueue, allocate, reclaim`` is the one that makes sense: allocate places what
fits in free room first, and reclaim only evicts for what does not fit. With ``enqueue,
reclaim, allocate`` step 4 still evicts job2, but in the next cycle reclaim runs before
allocate and pipelines job3 into the room job2 left, with nothing evicted (Volcano does the
same: ``ValidateVictims`` accepts an empty victim list when the room is already free, and
allocate only places Pending tasks), so job3 is never bound while a reclaimable pod of another
queue runs on that node. Both orders are exercised.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder, RecordingEvictor
from volcano_py.framework.conf import SchedulerConf, parse_conf
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.plugins.capacity import CapacityPlugin
from volcano_py.plugins.proportion import ProportionPlugin
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action

NS = "default"
ALLOCATE_FIRST = "enqueue, allocate, reclaim"
RECLAIM_FIRST = "enqueue, reclaim, allocate"


def conf_text(actions: str) -> str:
    return f"""
actions: "{actions}"
tiers:
- plugins:
  - name: gang
- plugins:
  - name: predicates
  - name: capacity
"""


def job(name: str, queue: str, cpu: str, created: str) -> list[tuple[str, dict[str, Any]]]:
    """A one-pod job as the job controller would create it, PodGroup still Pending."""
    pod_group = build_pod_group(
        name,
        NS,
        queue,
        1,
        None,
        "Pending",
        min_resources={"cpu": cpu},
        creation_timestamp=created,
    )
    pod = pending_pod(name, cpu, created)
    return [("PodGroup", pod_group), ("Pod", pod)]


def pending_pod(job_name: str, cpu: str, created: str) -> dict[str, Any]:
    return build_pod(
        NS, f"{job_name}-nginx-0", "", "Pending", {"cpu": cpu}, job_name, creation_timestamp=created
    )


def running(pod: dict[str, Any], node: str) -> dict[str, Any]:
    """What the kubelet reports once the pod started on ``node``."""
    started = dict(pod)
    started["spec"] = {**pod["spec"], "nodeName": node}
    started["status"] = {"phase": "Running"}
    return started


class Cluster:
    """One scheduler cache driven through several sessions, like the scheduler loop."""

    def __init__(self, actions: str) -> None:
        self.conf: SchedulerConf = parse_conf(conf_text(actions), BUILTIN_ACTIONS)
        self.binder, self.evictor = RecordingBinder(), RecordingEvictor()
        self.cache = SchedulerCache(binder=self.binder, evictor=self.evictor)
        self.state = SchedulingState()
        self.pods: dict[str, dict[str, Any]] = {}

    def add(self, *objects: tuple[str, dict[str, Any]]) -> None:
        for kind, obj in objects:
            if kind == "Pod":
                self.pods[obj["metadata"]["name"]] = obj
            self.cache.apply_event(kind, "ADDED", obj)

    def cycle(self) -> Session:
        """One scheduling cycle; the session is returned closed, for inspection."""
        self.binder.binds.clear()
        self.evictor.evicted.clear()
        ssn = open_session(
            self.cache.snapshot(), self.conf, PluginRegistry(), self.cache, self.state
        )
        for action in self.conf.actions:
            new_action(action).execute(ssn)
        close_session(ssn)
        return ssn

    def kubelet_runs(self, pod_name: str) -> None:
        node = self.binder.binds[f"{NS}/{pod_name}"]
        self.cache.apply_event("Pod", "MODIFIED", running(self.pods[pod_name], node))

    def kubelet_deletes(self, pod_name: str) -> None:
        self.cache.apply_event("Pod", "DELETED", self.pods.pop(pod_name))


def pipelined(ssn: Session, job_id: str) -> dict[str, str]:
    tasks = ssn.jobs[job_id].tasks_in(TaskStatus.PIPELINED)
    return {task.key: task.node_name for task in tasks.values()}


def deserved_cpu(ssn: Session) -> dict[str, float]:
    plugin = ssn.plugins["capacity"]
    assert isinstance(plugin, CapacityPlugin)
    return {name: res.milli_cpu for name, res in plugin.deserved_by_queue().items()}


def steps_1_to_3(actions: str) -> Cluster:
    cluster = Cluster(actions)
    # Step 1: the cluster (4 CPU) and the default queue, deserving 1 CPU.
    cluster.add(
        ("Node", build_node("n1", resource_list("4", "8Gi", pods="110"))),
        ("Queue", build_queue("default", deserved={"cpu": "1"})),
    )
    # Step 2: job1 and job2 in default; both run although together they exceed 1 CPU.
    cluster.add(*job("job1", "default", "1", "2024-12-30T10:00:00Z"))
    cluster.add(*job("job2", "default", "3", "2024-12-30T10:00:01Z"))
    ssn = cluster.cycle()
    assert cluster.binder.binds == {"default/job1-nginx-0": "n1", "default/job2-nginx-0": "n1"}
    assert cluster.evictor.evicted == []
    assert deserved_cpu(ssn) == {"default": 1000}
    cluster.kubelet_runs("job1-nginx-0")
    cluster.kubelet_runs("job2-nginx-0")
    # Step 3: the test queue, reclaimable, deserving 3 CPU.
    cluster.add(("Queue", build_queue("test", deserved={"cpu": "3"}, reclaimable=True)))
    return cluster


def step_4(cluster: Cluster) -> Session:
    cluster.add(*job("job3", "test", "3", "2024-12-30T10:05:00Z"))
    ssn = cluster.cycle()
    # default holds 4 CPU for 1 deserved: job2 goes, job1 stays, job3 waits for job2's CPUs.
    assert cluster.evictor.evicted == ["default/job2-nginx-0"]
    assert cluster.binder.binds == {}
    assert pipelined(ssn, "default/job3") == {"default/job3-nginx-0": "n1"}
    assert ssn.jobs["default/job1"].tasks_in(TaskStatus.RUNNING)
    assert deserved_cpu(ssn) == {"default": 1000, "test": 3000}
    assert ssn.jobs["default/job3"].pod_group is not None
    assert ssn.jobs["default/job3"].pod_group.phase == "Inqueue"
    return ssn


@pytest.mark.parametrize("actions", [ALLOCATE_FIRST, RECLAIM_FIRST])
def test_step_4_reclaims_job2_keeps_job1_and_pipelines_job3(actions: str) -> None:
    step_4(steps_1_to_3(actions))


def test_after_the_eviction_job3_runs_and_default_cannot_take_it_back() -> None:
    cluster = steps_1_to_3(ALLOCATE_FIRST)
    step_4(cluster)
    # job2's pod terminates; its controller re-creates it (Pending again).
    cluster.kubelet_deletes("job2-nginx-0")
    cluster.add(("Pod", pending_pod("job2", "3", "2024-12-30T10:06:00Z")))
    ssn = cluster.cycle()
    assert cluster.binder.binds == {"default/job3-nginx-0": "n1"}
    assert cluster.evictor.evicted == []
    # default is at its deserved 1 CPU: job2 may not reclaim from test.
    assert ssn.jobs["default/job2"].tasks_in(TaskStatus.PENDING)
    assert not pipelined(ssn, "default/job2")
    cluster.kubelet_runs("job3-nginx-0")
    cluster.cycle()
    assert cluster.binder.binds == {} and cluster.evictor.evicted == []


def test_reclaim_before_allocate_keeps_job3_pipelined_instead_of_bound() -> None:
    """Why allocate goes before reclaim: with reclaim first, job3 is pipelined into the free
    room every cycle (job1 on the node is a reclaimee, capacity names no victim, the room is
    already free) and allocate, which only places Pending tasks, never binds it."""
    cluster = steps_1_to_3(RECLAIM_FIRST)
    step_4(cluster)
    cluster.kubelet_deletes("job2-nginx-0")
    for _ in range(2):
        ssn = cluster.cycle()
        assert cluster.binder.binds == {}
        assert cluster.evictor.evicted == []
        assert pipelined(ssn, "default/job3") == {"default/job3-nginx-0": "n1"}


def test_gang_reclaimable_in_capacitys_tier_blocks_the_reclaim() -> None:
    """One tier with gang's reclaimable beside capacity: gang keeps job2 (1 of minMember 1),
    capacity keeps job1 (default would fall to its deserved), the intersection is empty and
    the tier answers "no victim"; job3 stays pending."""
    cluster = steps_1_to_3(ALLOCATE_FIRST)
    cluster.conf = parse_conf(
        """
actions: "enqueue, allocate, reclaim"
tiers:
- plugins:
  - name: gang
  - name: predicates
  - name: capacity
""",
        BUILTIN_ACTIONS,
    )
    cluster.add(*job("job3", "test", "3", "2024-12-30T10:05:00Z"))
    ssn = cluster.cycle()
    assert cluster.evictor.evicted == []
    assert not pipelined(ssn, "default/job3")


def test_proportion_gives_the_same_deserved_amounts() -> None:
    """Seed 002: with proportion instead, weights 1 and 3 give the same 1 and 3 CPU."""
    cluster = steps_1_to_3(ALLOCATE_FIRST)
    cluster.conf = parse_conf(
        conf_text(ALLOCATE_FIRST).replace("name: capacity", "name: proportion"), BUILTIN_ACTIONS
    )
    cluster.add(("Queue", build_queue("test", 3, reclaimable=True)))
    cluster.add(*job("job3", "test", "3", "2024-12-30T10:05:00Z"))
    ssn = cluster.cycle()
    assert cluster.evictor.evicted == ["default/job2-nginx-0"]
    plugin = ssn.plugins["proportion"]
    assert isinstance(plugin, ProportionPlugin)
    for name, cpu in (("default", 1000.0), ("test", 3000.0)):
        amount = plugin.deserved(name)
        assert amount is not None and amount.milli_cpu == pytest.approx(cpu)
