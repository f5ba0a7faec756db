"""proportion's part in topology-aware preemption's dry run: PrePredicate seeds the task's
simulation state; SimulateRemoveTask / SimulateAddTask move the queue's allocation in it;
SimulateAllocatable checks ``deserved`` against it (``proportion.go``; upstream has no unit
test of its own for these, ``TestTopologyAwarePreempt`` drives them)."""

from __future__ import annotations

from typing import Any

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.builders import resource_list as rl
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import StatusCode
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import proportion
from volcano_py.plugins._simulated_allocations import SimulatedAllocations
from volcano_py.plugins.proportion import ProportionPlugin

FLAGS = ("enabledAllocatable", "enablePredicate")


def _session(*flags: str) -> Session:
    """q1 holds two running 2-CPU tasks on a 4-CPU node (deserved 4 CPU) and a pending
    2-CPU preemptor."""
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node("n1", rl("4", "4G", pods="10"))),
        ("Queue", build_queue("q1", 1)),
        ("PodGroup", build_pod_group("low", "c1", "q1", 0, {}, "Running")),
        ("PodGroup", build_pod_group("high", "c1", "q1", 1, {}, "Inqueue")),
        ("Pod", build_pod("c1", "v1", "n1", "Running", rl("2", "2G"), "low")),
        ("Pod", build_pod("c1", "v2", "n1", "Running", rl("2", "2G"), "low")),
        ("Pod", build_pod("c1", "preemptor", "", "Pending", rl("2", "2G"), "high")),
    ]
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("proportion", *(flags or FLAGS))
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"proportion": proportion.new}, cache)


def _task(job: JobInfo, name: str) -> TaskInfo:
    return next(task for task in job.tasks.values() if task.name == name)


def _plugin(ssn: Session) -> ProportionPlugin:
    plugin = ssn.plugins["proportion"]
    assert isinstance(plugin, ProportionPlugin)
    return plugin


def test_pre_predicate_seeds_the_state() -> None:
    ssn = _session()
    preemptor = _task(ssn.jobs["c1/high"], "preemptor")
    assert ssn.pre_predicate_fn(preemptor) is None
    assert isinstance(ssn.simulation_state(preemptor)["proportion"], SimulatedAllocations)


def test_seeding_follows_enable_predicate() -> None:
    """Upstream runs PrePredicate for plugins with ``enablePredicate`` only."""
    ssn = _session("enabledAllocatable")
    preemptor = _task(ssn.jobs["c1/high"], "preemptor")
    ssn.pre_predicate_fn(preemptor)
    assert "proportion" not in ssn.simulation_state(preemptor)


def test_remove_and_add_move_the_allocation_in_the_state_only() -> None:
    ssn = _session()
    queue = ssn.queues["q1"]
    preemptor = _task(ssn.jobs["c1/high"], "preemptor")
    victim = _task(ssn.jobs["c1/low"], "v1")
    node = ssn.nodes["n1"]
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)
    live = _plugin(ssn).queue_attributes["q1"].allocated.clone()

    assert not ssn.simulate_allocatable(state, queue, preemptor)  # 4 + 2 > 4
    assert ssn.simulate_remove_task(state, preemptor, victim, node) is None
    assert ssn.simulate_allocatable(state, queue, preemptor)  # 2 + 2 <= 4
    assert ssn.simulate_add_task(state, preemptor, victim, node) is None
    assert not ssn.simulate_allocatable(state, queue, preemptor)
    assert _plugin(ssn).queue_attributes["q1"].allocated.equal(live, DimensionDefault.ZERO)


def test_a_clone_changes_apart_from_its_original() -> None:
    ssn = _session()
    queue = ssn.queues["q1"]
    preemptor = _task(ssn.jobs["c1/high"], "preemptor")
    victim = _task(ssn.jobs["c1/low"], "v1")
    ssn.pre_predicate_fn(preemptor)
    original = ssn.simulation_state(preemptor)
    ssn.simulate_remove_task(original, preemptor, victim, ssn.nodes["n1"])
    copy = {key: value.clone() for key, value in original.items()}
    ssn.simulate_add_task(copy, preemptor, victim, ssn.nodes["n1"])
    assert ssn.simulate_allocatable(original, queue, preemptor)
    assert not ssn.simulate_allocatable(copy, queue, preemptor)


def test_without_a_seeded_state_nothing_is_allocatable_and_changes_fail() -> None:
    """Upstream's ``getProportionState`` fails: allocatable says no, add/remove error."""
    ssn = _session()
    preemptor = _task(ssn.jobs["c1/high"], "preemptor")
    victim = _task(ssn.jobs["c1/low"], "v1")
    assert not ssn.simulate_allocatable({}, ssn.queues["q1"], preemptor)
    failure = ssn.simulate_remove_task({}, preemptor, victim, ssn.nodes["n1"])
    assert failure is not None and failure.code is StatusCode.ERROR


def test_a_task_of_an_unknown_job_is_an_error() -> None:
    ssn = _session()
    preemptor = _task(ssn.jobs["c1/high"], "preemptor")
    ssn.pre_predicate_fn(preemptor)
    stranger = TaskInfo.from_pod(build_pod("c1", "x", "n1", "Running", rl("1", "1G"), "gone"))
    failure = ssn.simulate_add_task(
        ssn.simulation_state(preemptor), preemptor, stranger, ssn.nodes["n1"]
    )
    assert failure is not None and "not in the session" in failure.reason


def test_simulated_allocations_copy_on_write() -> None:
    class Attr:
        def __init__(self, name: str, allocated: Resource) -> None:
            self.name = name
            self.allocated = allocated

    attr = Attr("q", Resource(1000, 0))
    allocations = SimulatedAllocations()
    assert allocations.allocated(attr) is attr.allocated
    allocations.remove(attr, Resource(400, 0))
    assert attr.allocated.milli_cpu == 1000
    assert allocations.allocated(attr).milli_cpu == 600
    clone = allocations.clone()
    clone.add(attr, Resource(1000, 0))
    assert allocations.allocated(attr).milli_cpu == 600
    assert clone.allocated(attr).milli_cpu == 1600
