"""priority plugin (``pkg/scheduler/plugins/priority``).

Upstream ``priority_test.go`` has two tests:

* ``TestPreempt`` (allocate + preempt actions): its two cases are checked here at the level of
  the PreemptableFn they exercise; the action-level expectations (evicted ``ns1/preemptee1``,
  pipelined ``ns2/pg2`` on ``node1``) are transcribed with the preempt action.
* ``TestUnifiedEvictableFn_GangReclaimPermitsAll``: in ``tests/plugins/test_unified_evictable.py``
  with the other plugins' UnifiedEvictableFns.
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
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import priority

ENABLE_EVICT = (
    "enableTaskOrder",
    "enableJobOrder",
    "enablePreemptable",
    "enableReclaimable",
    "enableJobStarving",
)
# Upstream's pluginDisableEvict: the preempt/reclaim flags explicitly off.
DISABLE_EVICT = ("enableTaskOrder", "enableJobOrder", "enableJobStarving")


def make_session(objects: Iterable[tuple[str, Mapping[str, Any]]], *flags: str) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=[], tiers=[Tier([PluginOption.with_flags("priority", *flags)])])
    return open_session(cache.snapshot(), conf, {"priority": priority.new}, cache)


def preempt_case_objects() -> list[tuple[str, dict[str, Any]]]:
    """Upstream ``TestPreempt`` case 1's cluster (both cases share the shape)."""
    preemptable = {"volcano.sh/preemptable": "true"}
    return [
        ("PriorityClass", build_priority_class("low-priority", 100)),
        ("PriorityClass", build_priority_class("high-priority", 1000)),
        ("Node", build_node("node1", resource_list("6", "6G", pods="10"))),
        ("Node", build_node("node2", resource_list("2", "2G", pods="10"))),
        ("Queue", build_queue("q1", 1, resource_list("6", "6G"))),
        (
            "PodGroup",
            build_pod_group("pg1", "ns1", "q1", 1, priority_class_name="low-priority"),
        ),
        (
            "PodGroup",
            build_pod_group("pg2", "ns2", "q1", 1, priority_class_name="high-priority"),
        ),
        (
            "Pod",
            build_pod(
                "ns1",
                "preemptee1",
                "node1",
                "Running",
                resource_list("3", "3G"),
                "pg1",
                preemptable,
            ),
        ),
        (
            "Pod",
            build_pod(
                "ns1",
                "preemptee2",
                "node1",
                "Running",
                resource_list("3", "3G"),
                "pg1",
                preemptable,
                priority=1000,
            ),
        ),
        ("Pod", build_pod("ns2", "preemptor1", "", "Pending", resource_list("3", "3G"), "pg2")),
    ]


def test_preempt_enable_preempt_low_priority() -> None:
    """``TestPreempt`` "enable preempt low priority: enablePreemptable:true": both running
    tasks belong to the low-priority job, so the plugin offers both (the preempt action then
    evicts only what the preemptor needs). preemptee2's own pod priority does not matter
    across jobs."""
    ssn = make_session(preempt_case_objects(), *ENABLE_EVICT)
    low, high = ssn.jobs["ns1/pg1"], ssn.jobs["ns2/pg2"]
    assert (low.priority, high.priority) == (100, 1000)
    preemptor = high.tasks["ns2-preemptor1"]
    candidates = sorted(low.tasks.values(), key=lambda t: t.name)
    assert [t.name for t in ssn.preemptable(preemptor, candidates)] == [
        "preemptee1",
        "preemptee2",
    ]


def test_preempt_disable_preempt_low_priority() -> None:
    """``TestPreempt`` "disable preempt low priority: enablePreemptable:false": the
    PreemptableFn is not registered, so no plugin offers victims."""
    ssn = make_session(preempt_case_objects(), *DISABLE_EVICT)
    preemptor = ssn.jobs["ns2/pg2"].tasks["ns2-preemptor1"]
    candidates = list(ssn.jobs["ns1/pg1"].tasks.values())
    assert ssn.preemptable(preemptor, candidates) == []
    # Priority never registers a ReclaimableFn, whatever the flags say.
    assert ssn.reclaimable(preemptor, candidates) == []


def test_same_job_compares_task_priority() -> None:
    objects = [
        ("Node", build_node("n1", resource_list("4", "4G", pods="10"))),
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("pg1", "ns1", "q1", 1)),
        (
            "Pod",
            build_pod("ns1", "low", "n1", "Running", resource_list("1", "1G"), "pg1", priority=5),
        ),
        (
            "Pod",
            build_pod(
                "ns1", "equal", "n1", "Running", resource_list("1", "1G"), "pg1", priority=10
            ),
        ),
        (
            "Pod",
            build_pod(
                "ns1", "preemptor", "", "Pending", resource_list("1", "1G"), "pg1", priority=10
            ),
        ),
    ]
    ssn = make_session(objects, "enablePreemptable")
    job = ssn.jobs["ns1/pg1"]
    victims = ssn.preemptable(
        job.tasks["ns1-preemptor"], [job.tasks["ns1-low"], job.tasks["ns1-equal"]]
    )
    assert [t.name for t in victims] == ["low"]


def test_unknown_preemptor_job_offers_nothing() -> None:
    ssn = make_session(preempt_case_objects(), "enablePreemptable")
    preemptor = ssn.jobs["ns2/pg2"].tasks["ns2-preemptor1"].clone()
    preemptor.job = "ns2/gone"
    assert ssn.preemptable(preemptor, list(ssn.jobs["ns1/pg1"].tasks.values())) == []


def test_orders() -> None:
    ssn = make_session(preempt_case_objects(), *ENABLE_EVICT)
    low, high = ssn.jobs["ns1/pg1"], ssn.jobs["ns2/pg2"]
    assert priority.job_order(high, low) == -1
    assert priority.job_order(low, high) == 1
    assert priority.job_order(low, low) == 0
    assert ssn.job_order_fn(high, low)

    # Task priority defaults to 1 without spec.priority; preemptee2 has 1000.
    first, second = low.tasks["ns1-preemptee1"], low.tasks["ns1-preemptee2"]
    assert (first.priority, second.priority) == (1, 1000)
    assert priority.task_order(second, first) == -1
    assert priority.task_order(first, second) == 1
    assert priority.task_order(first, first) == 0
    assert ssn.task_order_fn(second, first)


def test_job_starving_until_every_task_is_placed() -> None:
    ssn = make_session(preempt_case_objects(), *ENABLE_EVICT)
    low, high = ssn.jobs["ns1/pg1"], ssn.jobs["ns2/pg2"]
    assert not ssn.job_starving(low)
    assert ssn.job_starving(high)
    statement = ssn.statement()
    statement.pipeline(high.tasks["ns2-preemptor1"], "node2", eviction_occurred=False)
    # Waiting (pipelined) tasks count as placed.
    assert not ssn.job_starving(high)
