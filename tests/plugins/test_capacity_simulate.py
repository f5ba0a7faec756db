"""capacity's part in topology-aware preemption's dry run: PrePredicate seeds the task's
simulation state; SimulateRemoveTask / SimulateAddTask move the allocation of the queue and
of every ancestor in it; SimulateAllocatable checks each level's real capability against it
(``capacity.go``; upstream drives these through ``TestTopologyAwarePreempt`` only)."""

from __future__ import annotations

from typing import Any

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.builders import resource_list as rl
from volcano_py.api.resource import DimensionDefault
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import StatusCode
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import capacity
from volcano_py.plugins.capacity import CapacityPlugin

FLAGS = ("enabledAllocatable", "enablePredicate")


def _session(queues: list[dict[str, Any]], *flags: str) -> Session:
    """A 10-CPU node; queue q1 holds two running 2-CPU tasks and a pending 2-CPU one."""
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node("n1", rl("10", "10G", pods="10"))),
        ("PodGroup", build_pod_group("low", "c1", "q1", 0, {}, "Running")),
        ("PodGroup", build_pod_group("high", "c1", "q1", 1, {}, "Inqueue")),
        ("Pod", build_pod("c1", "v1", "n1", "Running", rl("2", "2G"), "low")),
        ("Pod", build_pod("c1", "v2", "n1", "Running", rl("2", "2G"), "low")),
        ("Pod", build_pod("c1", "preemptor", "", "Pending", rl("2", "2G"), "high")),
        *(("Queue", queue) for queue in queues),
    ]
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("capacity", *(flags or FLAGS))
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"capacity": capacity.new}, cache)


def _parts(ssn: Session) -> tuple[TaskInfo, TaskInfo, CapacityPlugin]:
    preemptor = next(iter(ssn.jobs["c1/high"].tasks.values()))
    victim = next(t for t in ssn.jobs["c1/low"].tasks.values() if t.name == "v1")
    plugin = ssn.plugins["capacity"]
    assert isinstance(plugin, CapacityPlugin)
    return preemptor, victim, plugin


def test_flat_queue_capability_in_the_dry_run() -> None:
    ssn = _session([build_queue("q1", 1, rl("4", "4G"))])
    preemptor, victim, plugin = _parts(ssn)
    node, queue = ssn.nodes["n1"], ssn.queues["q1"]
    assert ssn.pre_predicate_fn(preemptor) is None
    state = ssn.simulation_state(preemptor)
    live = plugin.queue_attributes["q1"].allocated.clone()

    assert not ssn.simulate_allocatable(state, queue, preemptor)  # 4 + 2 > 4
    assert ssn.simulate_remove_task(state, preemptor, victim, node) is None
    assert ssn.simulate_allocatable(state, queue, preemptor)
    assert ssn.simulate_add_task(state, preemptor, victim, node) is None
    assert not ssn.simulate_allocatable(state, queue, preemptor)
    assert plugin.queue_attributes["q1"].allocated.equal(live, DimensionDefault.ZERO)


def _tree() -> list[dict[str, Any]]:
    """root -> parent (capability 4 CPU) -> q1 (capability 10 CPU)."""
    return [
        build_queue("root", 1),
        build_queue("parent", 1, rl("4", "4G"), parent="root"),
        build_queue("q1", 1, rl("10", "10G"), parent="parent"),
    ]


def test_hierarchy_moves_every_ancestor_and_checks_each() -> None:
    ssn = _session(_tree(), *FLAGS, "enableHierarchy")
    preemptor, victim, plugin = _parts(ssn)
    node, queue = ssn.nodes["n1"], ssn.queues["q1"]
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)

    # q1 could take it (4 + 2 <= 10), its parent cannot (4 + 2 > 4).
    assert not ssn.simulate_allocatable(state, queue, preemptor)
    ssn.simulate_remove_task(state, preemptor, victim, node)
    assert ssn.simulate_allocatable(state, queue, preemptor)
    allocations = state["capacity"]
    attributes = plugin.queue_attributes
    assert [allocations.allocated(attributes[q]).milli_cpu for q in ("q1", "parent", "root")] == [
        2000,
        2000,
        2000,
    ]
    assert attributes["parent"].allocated.milli_cpu == 4000


def test_an_inner_queue_is_never_allocatable() -> None:
    ssn = _session(_tree(), *FLAGS, "enableHierarchy")
    preemptor, _, _ = _parts(ssn)
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)
    assert not ssn.simulate_allocatable(state, ssn.queues["parent"], preemptor)


def test_an_inconsistent_tree_is_never_allocatable() -> None:
    queues = [build_queue("root", 1), build_queue("q1", 1, parent="missing")]
    ssn = _session(queues, *FLAGS, "enableHierarchy")
    preemptor, _, plugin = _parts(ssn)
    assert not plugin.ready
    state = ssn.simulation_state(preemptor)
    ssn.pre_predicate_fn(preemptor)
    assert not ssn.simulate_allocatable(state, ssn.queues["q1"], preemptor)


def test_without_a_seeded_state_nothing_is_allocatable_and_changes_fail() -> None:
    ssn = _session([build_queue("q1", 1, rl("4", "4G"))])
    preemptor, victim, _ = _parts(ssn)
    assert not ssn.simulate_allocatable({}, ssn.queues["q1"], preemptor)
    failure = ssn.simulate_remove_task({}, preemptor, victim, ssn.nodes["n1"])
    assert failure is not None and failure.code is StatusCode.ERROR


def test_hooks_follow_their_flags() -> None:
    """No ``enablePredicate``: no seed. No ``enabledAllocatable`` (nor ``enablePreemptable``):
    no Simulate* hook at all, so the dry run's queue check passes."""
    ssn = _session([build_queue("q1", 1, rl("4", "4G"))], "enableQueueOrder")
    preemptor, victim, _ = _parts(ssn)
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)
    assert "capacity" not in state
    assert ssn.simulate_allocatable(state, ssn.queues["q1"], preemptor)
    assert ssn.simulate_remove_task(state, preemptor, victim, ssn.nodes["n1"]) is None
