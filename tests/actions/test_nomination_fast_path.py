"""allocate's fast path into a nominated HyperNode: upstream ``allocate_test.go``
``TestInvalidateSubJobNomination``, ``TestAllocateFromNomination_FallsBackWhenHyperNodeMissing``,
``TestValidateNomination_MissBranches`` (4 cases), ``TestAllocateFromNomination_HappyPath`` and
``TestAllocate_FlatPathHonorsAndClearsNomination``; then the same through the HyperNode search
and the nomination's way from gangpreempt to the next session.

Upstream builds a bare session by hand; here the objects go through the cache. Two differences:
a miss clears the sub-job's nomination but not the pods' ``status.nominatedNodeName`` (the pod is
the watched object, which the scheduler does not rewrite; allocate only tries a nominated node
first, inside the HyperNode it searches), and ``TestAllocateFromNomination_AllocateErrorFallsBack``
is not transcribed: it injects a Go-level fault (the pod already on the node's task map) that the
cache cannot hold; the fallback on a failed placement is the same code as a validation miss.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.builders import resource_list as rl
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.actions.allocate import new as new_allocate
from volcano_py.actions.nomination_fast_path import allocate_from_nomination
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.session import Session, close_session, open_session
from volcano_py.scheduler.registry import PluginRegistry

TIER = Tier(
    [
        PluginOption.with_flags(
            "gang", "enableJobOrder", "enableJobReady", "enableJobPipelined", "enableJobStarving"
        ),
        PluginOption.with_flags("drf", "enablePreemptable", "enableJobOrder"),
        PluginOption.with_flags(
            "proportion", "enableQueueOrder", "enableReclaimable", "enabledAllocatable"
        ),
        PluginOption.with_flags("predicates", "enablePredicate"),
        PluginOption.with_flags("nodeorder", "enableNodeOrder"),
    ]
)


def nominated_pod(name: str, node: str, cpu: str = "1") -> dict[str, Any]:
    pod = build_pod("c1", name, "", "Pending", rl(cpu, "1G"), "pg1")
    if node:
        pod["status"]["nominatedNodeName"] = node
    return pod


def cluster(
    pods: list[dict[str, Any]], nodes: dict[str, str], hyper_nodes: dict[str, list[str]]
) -> SchedulerCache:
    cache = SchedulerCache(binder=RecordingBinder())
    for name, cpu in nodes.items():
        cache.apply_event("Node", "ADDED", build_node(name, rl(cpu, "4Gi", pods="10")))
    cache.apply_event("Queue", "ADDED", build_queue("c1", 1, None))
    cache.apply_event("PodGroup", "ADDED", build_pod_group("pg1", "c1", "c1", 1, None, "Inqueue"))
    for pod in pods:
        cache.apply_event("Pod", "ADDED", pod)
    for name, members in hyper_nodes.items():
        cache.apply_event("HyperNode", "ADDED", build_hyper_node(name, 1, members))
    return cache


def session(cache: SchedulerCache) -> Session:
    return open_session(
        cache.snapshot(), SchedulerConf(["allocate"], [TIER]), PluginRegistry(), cache
    )


def fast_path(ssn: Session, pinned: str) -> tuple[Any, Any, deque[Any]]:
    job = ssn.jobs["c1/pg1"]
    sub_job = job.default_sub_job()
    sub_job.nominated_hyper_node = pinned
    tasks = deque(job.tasks_in(TaskStatus.PENDING).values())
    helper = PredicateHelper(ssn, True)
    queue = ssn.queues[job.queue]
    return allocate_from_nomination(ssn, helper, job, queue, sub_job, tasks), sub_job, tasks


def test_falls_back_when_the_hyper_node_is_missing_upstream() -> None:
    """``TestAllocateFromNomination_FallsBackWhenHyperNodeMissing`` (and
    ``TestInvalidateSubJobNomination``: a miss clears the sub-job's nomination)."""
    ssn = session(cluster([nominated_pod("t1", "n1")], {"n1": "4"}, {"hn-other": ["n1"]}))
    statement, sub_job, tasks = fast_path(ssn, "hn-pinned")
    assert statement is None
    assert sub_job.nominated_hyper_node == ""
    assert len(tasks) == 1  # untouched: the normal search places them
    assert "c1/pg1" in ssn.dirty_jobs


@pytest.mark.parametrize(
    ("nominated", "leaf", "task_cpu", "leaf_cpu"),
    [
        pytest.param("", "n1", "1", "4", id="task missing NominatedNodeName"),
        pytest.param("n-outside", "n1", "1", "4", id="task NominatedNodeName outside leaf set"),
        pytest.param("n-ghost", "n1", "1", "4", id="task NominatedNodeName not in ssn.Nodes"),
        pytest.param(
            "n1", "n1", "1", "0.5", id="Predicate fails (task asks more than node FutureIdle)"
        ),
    ],
)
def test_validate_nomination_miss_branches_upstream(
    nominated: str, leaf: str, task_cpu: str, leaf_cpu: str
) -> None:
    """``TestValidateNomination_MissBranches``."""
    nodes = {leaf: leaf_cpu, "n-outside": "4"}
    ssn = session(cluster([nominated_pod("t1", nominated, task_cpu)], nodes, {"hn-pinned": [leaf]}))
    statement, sub_job, _ = fast_path(ssn, "hn-pinned")
    assert statement is None
    assert sub_job.nominated_hyper_node == ""


def test_allocate_from_nomination_happy_path_upstream() -> None:
    """``TestAllocateFromNomination_HappyPath``: every task placed on its nominated node, the
    worksheet drained, the sub-job now in the pinned HyperNode."""
    ssn = session(cluster([nominated_pod("t1", "n1")], {"n1": "4"}, {"hn-pinned": ["n1"]}))
    statement, sub_job, tasks = fast_path(ssn, "hn-pinned")
    assert statement is not None
    assert not tasks
    assert sub_job.allocated_hyper_node == "hn-pinned"
    (operation,) = statement.operations
    assert operation.task.node_name == "n1"


def test_flat_path_honors_and_clears_nomination_upstream() -> None:
    """``TestAllocate_FlatPathHonorsAndClearsNomination``: the job has no hard topology; its
    default sub-job pinned to the virtual root is placed on the nominated node, and the commit
    uses the nomination up."""
    cache = cluster([nominated_pod("p1", "n1")], {"n1": "2"}, {})
    ssn = session(cache)
    job = ssn.jobs["c1/pg1"]
    assert not job.contains_hard_topology() and not job.contains_sub_job_policy()
    sub_job = job.default_sub_job()
    sub_job.nominated_hyper_node = CLUSTER_TOP_HYPER_NODE
    new_allocate().execute(ssn)
    close_session(ssn)
    assert isinstance(cache.binder, RecordingBinder)
    assert cache.binder.binds == {"c1/p1": "n1"}
    assert sub_job.nominated_hyper_node == ""
    # The cleared nomination reaches the cache's job too.
    assert cache.jobs["c1/pg1"].default_sub_job().nominated_hyper_node == ""


def test_a_nomination_outlives_the_session_on_the_cache() -> None:
    """gangpreempt/gangreclaim nominate in one session; the pods are Pending again in the next,
    where allocate must still find the nomination (kept on the cache's job)."""
    cache = cluster([nominated_pod("p1", "n2")], {"n1": "2", "n2": "2"}, {"hn": ["n2"]})
    ssn = session(cache)
    ssn.jobs["c1/pg1"].default_sub_job().nominated_hyper_node = "hn"
    ssn.dirty_jobs.add("c1/pg1")
    close_session(ssn)
    assert cache.jobs["c1/pg1"].default_sub_job().nominated_hyper_node == "hn"
    later = session(cache)
    assert later.jobs["c1/pg1"].default_sub_job().nominated_hyper_node == "hn"
    new_allocate().execute(later)
    close_session(later)
    assert isinstance(cache.binder, RecordingBinder)
    assert cache.binder.binds == {"c1/p1": "n2"}
    assert cache.jobs["c1/pg1"].default_sub_job().nominated_hyper_node == ""
