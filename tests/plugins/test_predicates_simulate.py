"""predicates' part in topology-aware preemption's dry run (``predicates/simulation.py``):
PrePredicate seeds the task's inter-pod affinity state; SimulateRemoveTask / SimulateAddTask
take pods out of it and put them back (InterPodAffinity's ``RemovePod`` / ``AddPod``);
SimulatePredicate runs InterPodAffinity's filter with it (``predicates.go``; upstream drives
these through ``TestTopologyAwarePreempt`` only)."""

from __future__ import annotations

from typing import Any

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
)
from tests.builders import resource_list as rl
from tests.harness import Case, check, run_case
from volcano_py.api.node import NodeInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import StatusCode
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import predicates
from volcano_py.plugins.predicates.simulation import AffinitySimulation

HOSTNAME = "kubernetes.io/hostname"
FLAGS = ("enablePredicate", "enablePreemptable")
PRIORITY_FLAGS = ["enablePreemptable", "enableJobStarving"]


def _anti_affinity(labels: dict[str, str]) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": labels}, "topologyKey": HOSTNAME}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _session(
    pods: list[dict[str, Any]], *flags: str, arguments: dict[str, Any] | None = None
) -> Session:
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node("n1", rl("4", "4G", pods="10"), {HOSTNAME: "n1"})),
        ("Node", build_node("n2", rl("4", "4G", pods="10"), {HOSTNAME: "n2"})),
        ("Queue", build_queue("q1", 1)),
        ("PodGroup", build_pod_group("low", "c1", "q1", 0, {}, "Running")),
        ("PodGroup", build_pod_group("high", "c1", "q1", 1, {}, "Inqueue")),
        *(("Pod", pod) for pod in pods),
    ]
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("predicates", *(flags or FLAGS), arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"predicates": predicates.new}, cache)


def _task(ssn: Session, job: str, name: str) -> TaskInfo:
    return next(task for task in ssn.jobs[job].tasks.values() if task.name == name)


def _copy(node: NodeInfo) -> NodeInfo:
    """A node copy as the dry run makes it: its own one-row matrix, so its row is 0."""
    return node.clone_into(node.matrix.take([node.row]), 0)


def _preemptor_refusing_test_pods() -> list[dict[str, Any]]:
    return [
        build_pod("c1", "other", "n1", "Running", rl("1", "1G"), "low", {"test": "test"}),
        build_pod(
            "c1",
            "preemptor",
            "",
            "Pending",
            rl("1", "1G"),
            "high",
            {"app": "x"},
            affinity=_anti_affinity({"test": "test"}),
        ),
    ]


def test_pre_predicate_seeds_the_state() -> None:
    ssn = _session(_preemptor_refusing_test_pods())
    preemptor = _task(ssn, "c1/high", "preemptor")
    assert ssn.pre_predicate_fn(preemptor) is None
    assert isinstance(ssn.simulation_state(preemptor)["predicates"], AffinitySimulation)


def test_the_preemptors_anti_affinity_follows_removals() -> None:
    ssn = _session(_preemptor_refusing_test_pods())
    preemptor, other = _task(ssn, "c1/high", "preemptor"), _task(ssn, "c1/low", "other")
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)
    n1 = _copy(ssn.nodes["n1"])

    assert ssn.simulate_predicate(state, preemptor, n1)
    assert ssn.simulate_remove_task(state, preemptor, other, n1) is None
    assert ssn.simulate_predicate(state, preemptor, n1) == ()
    assert ssn.simulate_add_task(state, preemptor, other, n1) is None
    statuses = ssn.simulate_predicate(state, preemptor, n1)
    assert [s.code for s in statuses] == [StatusCode.UNSCHEDULABLE]
    # The session's own view did not move.
    assert ssn.predicate_fn(preemptor, ssn.nodes["n1"])


def test_the_filter_reads_the_copys_labels_not_its_row() -> None:
    ssn = _session(_preemptor_refusing_test_pods())
    preemptor = _task(ssn, "c1/high", "preemptor")
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)
    # n2's copy sits on row 0, n1's row in the session; n2 holds no refused pod.
    assert ssn.simulate_predicate(state, preemptor, _copy(ssn.nodes["n2"])) == ()


def test_an_existing_pods_anti_affinity_follows_removals() -> None:
    pods = [
        build_pod(
            "c1",
            "picky",
            "n1",
            "Running",
            rl("1", "1G"),
            "low",
            affinity=_anti_affinity({"app": "x"}),
        ),
        build_pod("c1", "preemptor", "", "Pending", rl("1", "1G"), "high", {"app": "x"}),
    ]
    ssn = _session(pods)
    preemptor, picky = _task(ssn, "c1/high", "preemptor"), _task(ssn, "c1/low", "picky")
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)
    n1 = _copy(ssn.nodes["n1"])
    assert ssn.simulate_predicate(state, preemptor, n1)
    ssn.simulate_remove_task(state, preemptor, picky, n1)
    assert ssn.simulate_predicate(state, preemptor, n1) == ()


def test_a_clone_changes_apart_from_its_original() -> None:
    ssn = _session(_preemptor_refusing_test_pods())
    preemptor, other = _task(ssn, "c1/high", "preemptor"), _task(ssn, "c1/low", "other")
    ssn.pre_predicate_fn(preemptor)
    original = ssn.simulation_state(preemptor)
    n1 = _copy(ssn.nodes["n1"])
    ssn.simulate_remove_task(original, preemptor, other, n1)
    clone = {key: value.clone() for key, value in original.items()}
    ssn.simulate_add_task(clone, preemptor, other, n1)
    assert ssn.simulate_predicate(original, preemptor, n1) == ()
    assert ssn.simulate_predicate(clone, preemptor, n1)


def test_without_a_seeded_state_the_filter_fails() -> None:
    """Upstream's filter cannot read its PreFilter state and errors."""
    ssn = _session(_preemptor_refusing_test_pods())
    preemptor, other = _task(ssn, "c1/high", "preemptor"), _task(ssn, "c1/low", "other")
    n1 = _copy(ssn.nodes["n1"])
    statuses = ssn.simulate_predicate({}, preemptor, n1)
    assert [s.code for s in statuses] == [StatusCode.ERROR]
    failure = ssn.simulate_add_task({}, preemptor, other, n1)
    assert failure is not None and failure.code is StatusCode.ERROR


def test_with_pod_affinity_off_nothing_is_seeded_and_everything_passes() -> None:
    ssn = _session(
        _preemptor_refusing_test_pods(),
        *FLAGS,
        arguments={"predicate.PodAffinityEnable": False},
    )
    preemptor, other = _task(ssn, "c1/high", "preemptor"), _task(ssn, "c1/low", "other")
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)
    n1 = _copy(ssn.nodes["n1"])
    assert state == {}
    assert ssn.simulate_remove_task(state, preemptor, other, n1) is None
    assert ssn.simulate_predicate(state, preemptor, n1) == ()


def test_without_enable_preemptable_removals_are_not_followed() -> None:
    """SimulateAddTask / SimulateRemoveTask need ``enablePreemptable`` (or
    ``enabledAllocatable``) on the plugin, as upstream gates them."""
    ssn = _session(_preemptor_refusing_test_pods(), "enablePredicate")
    preemptor, other = _task(ssn, "c1/high", "preemptor"), _task(ssn, "c1/low", "other")
    ssn.pre_predicate_fn(preemptor)
    state = ssn.simulation_state(preemptor)
    n1 = _copy(ssn.nodes["n1"])
    ssn.simulate_remove_task(state, preemptor, other, n1)
    assert ssn.simulate_predicate(state, preemptor, n1)


def _worker_anti_affinity() -> dict[str, Any]:
    """predicates_test.go ``getWorkerAffinity``."""
    selector = {"matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]}
    term = {"labelSelector": selector, "topologyKey": HOSTNAME}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def test_pod_anti_affinity_upstream() -> None:
    """predicates_test.go TestPodAntiAffinity, "pod-anti-affinity" (allocate, then preempt
    with enableTopologyAwarePreemption). The preemptor refuses worker-1's node; predicates has
    no ``enablePreemptable``, so the dry run cannot take worker-1 out of the affinity state,
    the preemptor never fits and nothing is evicted."""
    high, low = 100000, 10
    case = Case(
        name="pod-anti-affinity",
        plugins={"predicates": ["enablePredicate"], "priority": PRIORITY_FLAGS},
        configurations={"preempt": {"enableTopologyAwarePreemption": True}},
        priority_classes=[
            build_priority_class("low-priority", low),
            build_priority_class("high-priority", high),
        ],
        pods=[
            build_pod(
                "ns1",
                "worker-1",
                "n1",
                "Running",
                rl("3", "3G"),
                "pg1",
                {"role": "worker"},
                priority=high,
                affinity=_worker_anti_affinity(),
            ),
            build_pod("ns1", "worker-2", "n1", "Running", rl("3", "3G"), "pg1", priority=low),
            build_pod(
                "ns1",
                "worker-3",
                "",
                "Pending",
                rl("3", "3G"),
                "pg2",
                {"role": "worker"},
                priority=high,
                affinity=_worker_anti_affinity(),
            ),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="2"), {HOSTNAME: "node1"})],
        pod_groups=[
            build_pod_group(
                "pg1", "ns1", "q1", 0, None, "Running", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "ns1", "q1", 1, None, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        queues=[build_queue("q1", 0, rl("9", "9G"))],
        expect_evicted=[],
        expect_evict_num=0,
    )
    check(case, run_case(case, ["allocate", "preempt"]))
