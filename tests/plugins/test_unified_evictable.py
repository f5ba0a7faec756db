"""The plugins' UnifiedEvictableFns (gangpreempt / gangreclaim victims).

Upstream has one plugin test of them, ``priority_test.go``
``TestUnifiedEvictableFn_GangReclaimPermitsAll`` (transcribed first). The others pin what
each plugin's function does in upstream's source (no upstream test): gang permits every
candidate, conformance spares protected pods, capacity permits everything for gangpreempt and
keeps each victim queue at its guarantee and above its deserved share for gangreclaim.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
    resource_list,
)
from volcano_py.api.job import JobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.hooks import EvictionContext, EvictionKind
from volcano_py.framework.session import Session, open_session
from volcano_py.scheduler.registry import PluginRegistry

PREEMPTABLE = {"volcano.sh/preemptable": "true"}
# Upstream's pluginEnableEvict.
ENABLE_EVICT = (
    "enableTaskOrder",
    "enableJobOrder",
    "enablePreemptable",
    "enableReclaimable",
    "enableJobStarving",
)


def open_with(
    objects: Iterable[tuple[str, Mapping[str, Any]]], plugin: str, *flags: str
) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=[], tiers=[Tier([PluginOption.with_flags(plugin, *flags)])])
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache)


def tasks_named(ssn: Session, *names: str) -> list[TaskInfo]:
    """Clones of the session's tasks with these pod names, in that order."""
    by_name = {task.name: task for job in ssn.jobs.values() for task in job.tasks.values()}
    return [by_name[name].clone() for name in names]


def ask(ssn: Session, kind: EvictionKind, job: JobInfo, candidates: list[TaskInfo]) -> list[str]:
    return [t.name for t in ssn.unified_evictable(EvictionContext(kind, job, ""), candidates)]


# ---------------------------------------------------------------------------- priority


def test_priority_gang_reclaim_permits_all_upstream() -> None:
    """priority ``TestUnifiedEvictableFn_GangReclaimPermitsAll`` ("GangReclaim permits all
    candidates regardless of priority"): for gangreclaim both tasks may go; for gangpreempt
    only the one whose job's priority (100) is below the preemptor's (500)."""
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("PriorityClass", build_priority_class("low-priority", 100)),
        ("PriorityClass", build_priority_class("high-priority", 1000)),
        (
            "PodGroup",
            build_pod_group(
                "pg-high", "ns1", "q1", 1, {}, "Running", priority_class_name="high-priority"
            ),
        ),
        (
            "PodGroup",
            build_pod_group(
                "pg-low", "ns2", "q1", 1, {}, "Running", priority_class_name="low-priority"
            ),
        ),
        (
            "Pod",
            build_pod(
                "ns1",
                "high-task",
                "node1",
                "Running",
                resource_list("1", "1G"),
                "pg-high",
                PREEMPTABLE,
            ),
        ),
        (
            "Pod",
            build_pod(
                "ns2",
                "low-task",
                "node1",
                "Running",
                resource_list("1", "1G"),
                "pg-low",
                PREEMPTABLE,
            ),
        ),
        ("Node", build_node("node1", resource_list("4", "4G", pods="10"))),
        ("Queue", build_queue("q1", 1, resource_list("4", "4G"))),
    ]
    ssn = open_with(objects, "priority", *ENABLE_EVICT)
    candidates = tasks_named(ssn, "high-task", "low-task")
    reclaimer = JobInfo(uid="reclaimer", priority=500)
    assert ask(ssn, EvictionKind.GANG_RECLAIM, reclaimer, candidates) == ["high-task", "low-task"]
    assert ask(ssn, EvictionKind.GANG_PREEMPT, reclaimer, candidates) == ["low-task"]


def test_priority_gang_preempt_needs_no_preemptable_flag() -> None:
    """UnifiedEvictableFn has no flag: with enablePreemptable off (upstream's
    ``pluginDisableEvict``) priority still filters gangpreempt victims."""
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("PriorityClass", build_priority_class("low-priority", 100)),
        (
            "PodGroup",
            build_pod_group("pg", "ns", "q1", 1, {}, "Running", priority_class_name="low-priority"),
        ),
        ("Pod", build_pod("ns", "t", "node1", "Running", resource_list("1", "1G"), "pg")),
        ("Node", build_node("node1", resource_list("4", "4G", pods="10"))),
        ("Queue", build_queue("q1")),
    ]
    ssn = open_with(objects, "priority", "enableTaskOrder", "enableJobOrder")
    candidates = tasks_named(ssn, "t")
    assert ask(ssn, EvictionKind.GANG_PREEMPT, JobInfo(uid="p", priority=100), candidates) == []
    assert ask(ssn, EvictionKind.GANG_PREEMPT, JobInfo(uid="p", priority=101), candidates) == ["t"]


# ---------------------------------------------------------------------------- gang, conformance


def plain_cluster(*pods: dict[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("Node", build_node("n1", resource_list("8", "8Gi", pods="10"))),
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("pg", "ns", "q1", 1, None, "Running")),
        ("PodGroup", build_pod_group("pg", "kube-system", "q1", 1, None, "Running")),
    ]
    return objects + [("Pod", pod) for pod in pods]


def test_gang_permits_every_candidate() -> None:
    """gang's UnifiedEvictableFn permits all (gang safety is the bundles' business)."""
    ssn = open_with(
        plain_cluster(
            build_pod("ns", "a", "n1", "Running", resource_list("1", "1Gi"), "pg"),
            build_pod("ns", "b", "n1", "Running", resource_list("1", "1Gi"), "pg"),
        ),
        "gang",
    )
    candidates = tasks_named(ssn, "a", "b")
    for kind in (EvictionKind.GANG_PREEMPT, EvictionKind.GANG_RECLAIM):
        assert ask(ssn, kind, JobInfo(uid="x"), candidates) == ["a", "b"]


def test_conformance_spares_system_critical_and_kube_system_pods() -> None:
    """conformance: no pod of a system-critical PriorityClass, nor of kube-system, is ever a
    victim, for either action."""
    ssn = open_with(
        plain_cluster(
            build_pod("ns", "plain", "n1", "Running", resource_list("1", "1Gi"), "pg"),
            build_pod(
                "ns",
                "critical",
                "n1",
                "Running",
                resource_list("1", "1Gi"),
                "pg",
                priority_class_name="system-node-critical",
            ),
            build_pod("kube-system", "sys", "n1", "Running", resource_list("1", "1Gi"), "pg"),
        ),
        "conformance",
    )
    candidates = tasks_named(ssn, "plain", "critical", "sys")
    for kind in (EvictionKind.GANG_PREEMPT, EvictionKind.GANG_RECLAIM):
        assert ask(ssn, kind, JobInfo(uid="x"), candidates) == ["plain"]


# ---------------------------------------------------------------------------- capacity


def capacity_cluster(guarantee: dict[str, str] | None) -> list[tuple[str, Mapping[str, Any]]]:
    """q2 deserves 1 CPU / 1Gi (and guarantees ``guarantee``) but runs three 1-CPU tasks."""
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("Node", build_node("n1", resource_list("8", "8Gi", pods="10"))),
        ("Queue", build_queue("q1", deserved=resource_list("7", "7Gi"))),
        (
            "Queue",
            build_queue("q2", deserved=resource_list("1", "1Gi"), guarantee=guarantee),
        ),
        ("PodGroup", build_pod_group("victim", "ns", "q2", 1, None, "Running")),
    ]
    objects += [
        ("Pod", build_pod("ns", f"v{i}", "n1", "Running", resource_list("1", "1Gi"), "victim"))
        for i in range(3)
    ]
    return objects


def test_capacity_permits_all_for_gang_preempt() -> None:
    ssn = open_with(capacity_cluster(resource_list("3", "3Gi")), "capacity")
    candidates = tasks_named(ssn, "v0", "v1", "v2")
    assert ask(ssn, EvictionKind.GANG_PREEMPT, JobInfo(uid="x"), candidates) == [
        "v0",
        "v1",
        "v2",
    ]


def test_capacity_gang_reclaim_stops_at_deserved() -> None:
    """3 allocated against 1 deserved: two tasks may go, the third would take q2 to its
    deserved share."""
    ssn = open_with(capacity_cluster(None), "capacity")
    candidates = tasks_named(ssn, "v0", "v1", "v2")
    assert ask(ssn, EvictionKind.GANG_RECLAIM, JobInfo(uid="x"), candidates) == ["v0", "v1"]


def test_capacity_gang_reclaim_keeps_the_guarantee() -> None:
    """Guarantee 2 CPUs / 2Gi: only one task may go (a second would leave 1 < 2)."""
    ssn = open_with(capacity_cluster(resource_list("2", "2Gi")), "capacity")
    candidates = tasks_named(ssn, "v0", "v1", "v2")
    assert ask(ssn, EvictionKind.GANG_RECLAIM, JobInfo(uid="x"), candidates) == ["v0"]
