"""proportion plugin (``pkg/scheduler/plugins/proportion``).

Upstream ``proportion_test.go`` drives everything through actions:

* ``TestEnqueueAndAllocable`` (enqueue + allocate, cases 0-4; spec §7.3 S4): each case is
  checked here on the hook it exercises (JobEnqueueableFn, AllocatableFn) with the deserved
  amounts S4 derives; the action-level expectations (binds) wait for the actions.
* ``TestAllocate`` (allocate + reclaim) case0: its queue-priority ordering is checked on
  QueueOrderFn; the bind expectation waits for the actions.
* ``TestNoDoubleCountingForInqueueJobWithBindingTasks``: cycle 2's admission of pgB is checked
  on JobEnqueueableFn over a snapshot whose pgA tasks already sit on the node (cycle 1 needs
  the allocate action).
* ``TestJobEnqueuedOnOtherPluginsReject``: checked on the vote; that JobEnqueuedFn only runs
  after every plugin admitted the job is the enqueue action's duty.
* ``TestProportion``: not transcribed (allocate + Prometheus metrics over HTTP).

Plus the deserved example of seed 000 (three queues, 100 CPU) through the water-filling.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import MAX_FLOAT, DimensionDefault, Resource
from volcano_py.api.types import Vote
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingEventRecorder
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.plugin import PluginBuilder
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import proportion
from volcano_py.plugins.proportion import ProportionPlugin, QueueAttributes, compute_deserved

GIB = 1024**3
ALL_ENABLED = ("enabledAllocatable", "enabledOverused", "enableJobEnqueued")


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]],
    *options: PluginOption,
    recorder: RecordingEventRecorder | None = None,
    extra: Mapping[str, PluginBuilder] | None = None,
) -> Session:
    cache = SchedulerCache(recorder=recorder or RecordingEventRecorder())
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    if not options:
        options = (PluginOption.with_flags("proportion", *ALL_ENABLED),)
    conf = SchedulerConf(actions=[], tiers=[Tier(list(options))])
    builders: dict[str, PluginBuilder] = {"proportion": proportion.new, **(extra or {})}
    return open_session(cache.snapshot(), conf, builders, cache)


def plugin_of(ssn: Session) -> ProportionPlugin:
    plugin = ssn.plugins["proportion"]
    assert isinstance(plugin, ProportionPlugin)
    return plugin


def cpu_mem(cpu: float, memory: float, **scalars: float) -> Resource:
    """A resource in cores and bytes (milli-cores inside)."""
    return Resource(cpu * 1000, memory, dict(scalars))


def same(left: Resource | None, right: Resource) -> bool:
    assert left is not None
    return left.equal(right, DimensionDefault.ZERO)


# ----------------------------------------------------------------------- seed 000 example


SEED_QUEUES = {
    # name: (weight, guarantee cpu, capability cpu or None)
    "queue-a": (3, "20", "50"),
    "queue-b": (2, "10", "80"),
    "queue-c": (5, "30", None),
}


def test_seed_000_deserved_example_water_filling() -> None:
    """Seed 000, "Queue 资源管理": 100 CPU, weights 3/2/5, guarantees 20/10/30, capabilities
    50/80/unlimited -> deserved 30/20/50. Every queue asks for more than the cluster."""
    total = cpu_mem(100, 0)
    attributes = []
    for name, (weight, guarantee, capability) in SEED_QUEUES.items():
        attr = QueueAttributes(name, weight)
        attr.guarantee = cpu_mem(float(guarantee), 0)
        # realCapability = (total - all guarantees) + own guarantee, capped by capability.
        real = 100 - 60 + float(guarantee)
        attr.real_capability = cpu_mem(min(real, float(capability or "inf")), MAX_FLOAT)
        attr.request = cpu_mem(1000, 0)
        attributes.append(attr)
    compute_deserved(total, attributes)
    assert [attr.deserved.milli_cpu for attr in attributes] == [30000, 20000, 50000]


def test_seed_000_deserved_example_through_the_session() -> None:
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("Node", build_node(f"n{i}", resource_list("10", "100Gi", pods="110"))) for i in range(10)
    ]
    for name, (weight, guarantee, capability) in SEED_QUEUES.items():
        capability_list = resource_list(capability) if capability else None
        objects.append(
            (
                "Queue",
                build_queue(name, weight, capability_list, guarantee=resource_list(guarantee)),
            )
        )
        objects.append(("PodGroup", build_pod_group(f"{name}-job", "ns", name, 1)))
        # Pending demand well beyond the cluster, so the request cap does not bind.
        for i in range(12):
            request = resource_list("10", "1Gi")
            objects.append(
                ("Pod", build_pod("ns", f"{name}-{i}", "", "Pending", request, f"{name}-job"))
            )
    plugin = plugin_of(make_session(objects))
    deserved = {name: plugin.deserved(name) for name in SEED_QUEUES}
    assert {name: d.milli_cpu for name, d in deserved.items() if d is not None} == {
        "queue-a": 30000,
        "queue-b": 20000,
        "queue-c": 50000,
    }
    attrs = plugin.queue_attributes
    assert attrs["queue-a"].real_capability.milli_cpu == 50000
    assert attrs["queue-b"].real_capability.milli_cpu == 50000
    assert attrs["queue-c"].real_capability.milli_cpu == 70000
    # Memory is capped by what the queues ask for (12 pods x 1Gi each).
    assert all(attr.deserved.memory == 12 * GIB for attr in attrs.values())
    summary = plugin.summary()["queue-a"]
    assert summary["deserved"] == {"cpu": "30", "memory": "12Gi", "pods": "12"}
    assert summary["realCapability"] == {"cpu": "50", "memory": "1000Gi", "pods": "1100"}
    assert summary["weight"] == 3


# ----------------------------------------------------------------------- TestEnqueueAndAllocable


N1 = build_node("n1", resource_list("2", "2G", pods="10"))
N2 = build_node("n2", resource_list("2", "2G", pods="10"))
RES_1C2G = resource_list("1", "2G")
RES_2C1G = resource_list("2", "1G")
RES_1C0G = resource_list("1", "0G")
RES_0C1G = resource_list("0", "1G")
RES_1C1G = resource_list("1", "1G")
P1 = build_pod("ns1", "pod1", "n1", "Running", RES_1C2G, "pg1")
P2 = build_pod("ns1", "pod2", "n2", "Running", RES_2C1G, "pg2")
P3 = build_pod("ns1", "pod3", "", "Pending", RES_1C0G, "pg3")
P4 = build_pod("ns1", "pod4", "", "Pending", RES_0C1G, "pg4")
P5 = build_pod("ns1", "pod5", "", "Pending", RES_1C1G, "pg5")
P6 = build_pod("ns1", "pod6", "", "Pending", RES_1C1G, "pg6")
PG1 = build_pod_group("pg1", "ns1", "q1", 1, phase="Running", min_resources=RES_1C2G)
PG2 = build_pod_group("pg2", "ns1", "q2", 1, phase="Running", min_resources=RES_2C1G)
PG3 = build_pod_group("pg3", "ns1", "q1", 1, phase="Pending", min_resources=RES_1C0G)
PG4 = build_pod_group("pg4", "ns1", "q2", 1, phase="Pending", min_resources=RES_0C1G)
PG5 = build_pod_group("pg5", "ns1", "q1", 1, phase="Pending", min_resources=RES_1C1G)
PG6 = build_pod_group("pg6", "ns1", "q3", 1, phase="Pending", min_resources=RES_1C1G)
Q1 = build_queue("q1", 1, resource_list("2", "2G"))
Q2 = build_queue("q2", 1, resource_list("3", "3G"))
Q3_CLOSED = build_queue("q3", 1, resource_list("3", "3G"), state="Closed")

ENQUEUEABLE = PluginOption.with_flags("proportion", "enableJobEnqueued")
ALLOCATABLE = PluginOption.with_flags("proportion", "enabledAllocatable")


def s4_objects(pods: list[dict[str, Any]], groups: list[dict[str, Any]]) -> list[Any]:
    return [
        ("Node", N1),
        ("Node", N2),
        ("Queue", Q1),
        ("Queue", Q2),
        *(("PodGroup", group) for group in groups),
        *(("Pod", pod) for pod in pods),
    ]


def test_enqueue_and_allocable_case0_memory_exceeds_deserved_cpu_only_job_fits() -> None:
    """Case 0: "memory exceed derserved, job only request cpu can be enqueued and allocated"."""
    ssn = make_session(s4_objects([P1, P2, P3], [PG1, PG2, PG3]))
    plugin = plugin_of(ssn)
    attrs = plugin.queue_attributes
    assert same(attrs["q1"].real_capability, cpu_mem(2, 2e9, pods=20))
    assert same(attrs["q2"].real_capability, cpu_mem(3, 3e9, pods=20))
    assert same(plugin.deserved("q1"), cpu_mem(2, 2e9, pods=2))
    assert same(plugin.deserved("q2"), cpu_mem(2, 1e9, pods=1))
    job = ssn.jobs["ns1/pg3"]
    assert ssn.job_enqueueable(job)
    assert ssn.allocatable(ssn.queues["q1"], job.tasks["ns1-pod3"])


def test_enqueue_and_allocable_case1_cpu_exceeds_deserved_memory_only_job_fits() -> None:
    """Case 1: "cpu exceed derserved, job only request memory can be enqueued and allocated"."""
    ssn = make_session(s4_objects([P1, P2, P4], [PG1, PG2, PG4]))
    assert same(plugin_of(ssn).deserved("q2"), cpu_mem(2, 2e9, pods=2))
    job = ssn.jobs["ns1/pg4"]
    assert ssn.job_enqueueable(job)
    assert ssn.allocatable(ssn.queues["q2"], job.tasks["ns1-pod4"])


def test_enqueue_and_allocable_case2_exceed_capacity_can_not_enqueue() -> None:
    """Case 2: "exceed capacity, can not enqueue" (only the enqueue gate on)."""
    recorder = RecordingEventRecorder()
    ssn = make_session(s4_objects([P1, P2, P5], [PG1, PG2, PG5]), ENQUEUEABLE, recorder=recorder)
    assert not ssn.job_enqueueable(ssn.jobs["ns1/pg5"])
    assert recorder.events == [
        (
            "PodGroup",
            "ns1",
            "pg5",
            "Normal",
            "Unschedulable",
            "queue resource quota insufficient: insufficient memory",
        )
    ]
    # Allocatable is off in this tier: nothing stops the allocation on quota.
    assert ssn.allocatable(ssn.queues["q1"], ssn.jobs["ns1/pg5"].tasks["ns1-pod5"])


def test_enqueue_and_allocable_case3_exceed_deserved_can_not_allocate() -> None:
    """Case 3: "exceed deserved, can not allocate" (only the allocatable gate on). S4: q1's
    deserved stays {2, 2G} (capped), so 2G + 1G of memory does not fit."""
    ssn = make_session(s4_objects([P1, P2, P5], [PG1, PG2, PG5]), ALLOCATABLE)
    assert same(plugin_of(ssn).deserved("q1"), cpu_mem(2, 2e9, pods=2))
    job = ssn.jobs["ns1/pg5"]
    assert not ssn.allocatable(ssn.queues["q1"], job.tasks["ns1-pod5"])
    # The enqueue gate is off here: the vote is empty, so the job is admitted.
    assert ssn.job_enqueueable(job)


def test_enqueue_and_allocable_case4_non_open_queue_can_not_enqueue() -> None:
    """Case 4: "queue with non-open state, can not enqueue"."""
    objects = [("Node", N1), ("Node", N2), ("Queue", Q3_CLOSED), ("PodGroup", PG6), ("Pod", P6)]
    ssn = make_session(objects, ENQUEUEABLE)
    assert not ssn.job_enqueueable(ssn.jobs["ns1/pg6"])


def test_allocatable_refuses_a_non_open_queue() -> None:
    objects = [("Node", N1), ("Node", N2), ("Queue", Q3_CLOSED), ("PodGroup", PG6), ("Pod", P6)]
    ssn = make_session(objects, ALLOCATABLE)
    assert not ssn.allocatable(ssn.queues["q3"], ssn.jobs["ns1/pg6"].tasks["ns1-pod6"])


def test_a_queue_without_state_is_not_open(caplog: pytest.LogCaptureFixture) -> None:
    """As upstream's ``queue.Queue.Status.State != QueueStateOpen``: a Queue the queue
    controller has not synced (no ``status.state``) neither admits nor allocates; the reason
    is logged once, as a warning naming the queue."""
    unsynced = {key: value for key, value in Q3_CLOSED.items() if key != "status"}
    unsynced["metadata"] = {"name": "q-new"}
    group = {**PG6, "spec": {**PG6["spec"], "queue": "q-new"}}
    objects = [("Node", N1), ("Queue", unsynced), ("PodGroup", group), ("Pod", P6)]
    ssn = make_session(objects, ENQUEUEABLE, ALLOCATABLE)
    assert ssn.queues["q-new"].state == ""
    job = ssn.jobs["ns1/pg6"]
    assert not ssn.job_enqueueable(job)
    for _ in range(2):
        assert not ssn.allocatable(ssn.queues["q-new"], job.tasks["ns1-pod6"])
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings == [
        "proportion: queue q-new has no status.state: its jobs stay pending until the queue"
        " controller sets it Open (Volcano's scheduler also takes a queue without a state as"
        " not Open)",
        "proportion: queue q-new has no status.state: no allocation in it until the queue"
        " controller sets it Open (Volcano's scheduler also takes a queue without a state as"
        " not Open)",
    ]


# ----------------------------------------------------------------------- TestAllocate (order)


def test_allocate_case0_queue_priority_orders_queues() -> None:
    """``TestAllocate`` case0: "Pods are assigned according to the order of Queue Priority in
    which PGs are placed": q3 (priority 10) before q2 (priority 1) before q1 (5 is between)."""
    n1 = build_node("n1", resource_list("2", "4Gi", pods="10"))
    n2 = build_node("n2", resource_list("2", "4Gi", pods="10"))
    objects = [
        ("Node", n1),
        ("Node", n2),
        ("Queue", build_queue("q1", 1, priority=5, capability=resource_list("2", "4Gi"))),
        ("Queue", build_queue("q2", 1, priority=1, capability=resource_list("2", "4Gi"))),
        ("Queue", build_queue("q3", 1, priority=10, capability=resource_list("2", "4Gi"))),
        ("PodGroup", build_pod_group("pg1", "ns1", "q1", 1, phase="Running")),
        ("PodGroup", build_pod_group("pg2", "ns1", "q2", 1)),
        ("PodGroup", build_pod_group("pg3", "ns1", "q3", 1)),
        ("Pod", build_pod("ns1", "p1", "n1", "Running", resource_list("2", "4Gi"), "pg1")),
        ("Pod", build_pod("ns1", "p2", "", "Pending", resource_list("2", "4Gi"), "pg2")),
        ("Pod", build_pod("ns1", "p3", "", "Pending", resource_list("2", "4Gi"), "pg3")),
    ]
    ssn = make_session(objects, PluginOption.with_flags("proportion", "enableQueueOrder"))
    q1, q2, q3 = (ssn.queues[name] for name in ("q1", "q2", "q3"))
    assert ssn.queue_order_fn(q3, q2)
    assert ssn.queue_order_fn(q3, q1)
    assert ssn.queue_order_fn(q1, q2)
    assert plugin_of(ssn).queue_order(q2, q3) == 9


# ----------------------------------------------------------------------- regression tests


def test_no_double_counting_for_inqueue_job_with_binding_tasks() -> None:
    """``TestNoDoubleCountingForInqueueJobWithBindingTasks``, cycle 2: pgA (Inqueue, minResources
    3 CPU) already has its three tasks on the node; its reservation is what is not yet held
    (nothing), so pgB (1 CPU) still fits the queue's 4 CPU."""
    res_1cpu = resource_list("1", "1Gi")
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("Node", build_node("n1", resource_list("4", "8Gi", pods="10"))),
        ("Queue", build_queue("q1", 1, resource_list("4", "8Gi"))),
        (
            "PodGroup",
            build_pod_group("pgA", "ns1", "q1", 3, min_resources=resource_list("3", "3Gi")),
        ),
        (
            "PodGroup",
            build_pod_group("pgB", "ns1", "q1", 1, phase="Pending", min_resources=res_1cpu),
        ),
        # Bound (Pending with a node), as the binder left them; still Inqueue.
        *(("Pod", build_pod("ns1", f"pA{i}", "n1", "Pending", res_1cpu, "pgA")) for i in (1, 2, 3)),
        ("Pod", build_pod("ns1", "pB1", "", "Pending", res_1cpu, "pgB")),
    ]
    ssn = make_session(objects)
    attr = plugin_of(ssn).queue_attributes["q1"]
    assert attr.allocated.milli_cpu == 3000
    assert attr.inqueue.milli_cpu == 0
    assert ssn.job_enqueueable(ssn.jobs["ns1/pgB"])


class Rejecter:
    """Upstream ``uthelper.RejecterPlugin``: rejects one named job at enqueue."""

    name = "test-rejecter"

    def __init__(self, arguments: Arguments) -> None:
        self.reject_job = "pgA"

    def on_session_open(self, ssn: Session) -> None:
        def enqueueable(job: JobInfo) -> Vote:
            return Vote.REJECT if job.name == self.reject_job else Vote.ABSTAIN

        ssn.add_job_enqueueable_fn(self.name, enqueueable)

    def on_session_close(self, ssn: Session) -> None:
        return None


def test_job_enqueued_on_other_plugins_reject() -> None:
    """``TestJobEnqueuedOnOtherPluginsReject``: pgA is refused by a co-tier plugin although it
    fits; it reserved nothing, so pgB (same size, queue of 1 CPU) is still admitted."""
    res_1cpu = resource_list("1", "1G")
    objects = [
        ("Node", build_node("n1", resource_list("4", "4G", pods="10"))),
        ("Queue", build_queue("q1", 1, resource_list("1", "4G"))),
        (
            "PodGroup",
            build_pod_group("pgA", "ns1", "q1", 1, phase="Pending", min_resources=res_1cpu),
        ),
        (
            "PodGroup",
            build_pod_group("pgB", "ns1", "q1", 1, phase="Pending", min_resources=res_1cpu),
        ),
        ("Pod", build_pod("ns1", "podA", "", "Pending", res_1cpu, "pgA")),
        ("Pod", build_pod("ns1", "podB", "", "Pending", res_1cpu, "pgB")),
    ]
    ssn = make_session(
        objects,
        PluginOption.with_flags("proportion", "enableJobEnqueued"),
        PluginOption.with_flags("test-rejecter", "enableJobEnqueued"),
        extra={"test-rejecter": Rejecter},
    )
    job_a, job_b = ssn.jobs["ns1/pgA"], ssn.jobs["ns1/pgB"]
    assert not ssn.job_enqueueable(job_a)
    assert ssn.job_enqueueable(job_b)
    ssn.job_enqueued(job_b)
    # Now the queue's one CPU is reserved: pgA would not fit even without the rejecter.
    assert plugin_of(ssn).queue_attributes["q1"].inqueue.milli_cpu == 1000
    assert not ssn.job_enqueueable(job_a)


# ----------------------------------------------------------------------- water-filling rules


def attributes(
    name: str,
    weight: int,
    request: Resource,
    real_capability: Resource | None = None,
    guarantee: Resource | None = None,
) -> QueueAttributes:
    attr = QueueAttributes(name, weight)
    attr.request = request
    attr.real_capability = real_capability or cpu_mem(MAX_FLOAT / 1000, MAX_FLOAT)
    if guarantee is not None:
        attr.guarantee = guarantee
    return attr


def test_what_a_queue_does_not_ask_for_goes_to_the_others() -> None:
    small = attributes("small", 1, cpu_mem(2, 1e9))
    large = attributes("large", 1, cpu_mem(100, 1e9))
    compute_deserved(cpu_mem(10, 10e9), [small, large])
    assert same(small.deserved, cpu_mem(2, 1e9))
    assert same(large.deserved, cpu_mem(8, 1e9))


def test_capability_caps_and_guarantee_raises() -> None:
    capped = attributes("capped", 1, cpu_mem(100, 0), real_capability=cpu_mem(3, MAX_FLOAT))
    # Asks for 1 CPU but is guaranteed 4: deserved is raised to the guarantee.
    guaranteed = attributes("guaranteed", 1, cpu_mem(1, 0), guarantee=cpu_mem(4, 0))
    rest = attributes("rest", 1, cpu_mem(100, 0))
    compute_deserved(cpu_mem(12, 0), [capped, guaranteed, rest])
    assert capped.deserved.milli_cpu == 3000
    assert guaranteed.deserved.milli_cpu == 4000
    # 12 - 3 - 4 = 5 left for the last queue, handed out over the rounds.
    assert rest.deserved.milli_cpu == pytest.approx(5000)


def test_zero_total_weight_stops_the_loop() -> None:
    idle = attributes("idle", 0, cpu_mem(5, 0))
    compute_deserved(cpu_mem(10, 0), [idle])
    assert idle.deserved.milli_cpu == 0


def test_only_queues_with_jobs_get_attributes_and_capability_rules() -> None:
    objects = [
        ("Node", build_node("n1", resource_list("8", "8G", pods="10"))),
        # cpu <= 0 or absent in capability means unlimited in that dimension.
        ("Queue", build_queue("mem-only", 1, {"memory": "2G"})),
        ("Queue", build_queue("zero-cpu", 1, {"cpu": "0", "memory": "3G"})),
        ("Queue", build_queue("empty", 1, resource_list("1", "1G"))),
        ("Queue", build_queue("guaranteed", 1, guarantee=resource_list("2", "2G"))),
        ("PodGroup", build_pod_group("a", "ns", "mem-only", 1)),
        ("PodGroup", build_pod_group("b", "ns", "zero-cpu", 1)),
        ("Pod", build_pod("ns", "a-0", "", "Pending", resource_list("1", "1G"), "a")),
        ("Pod", build_pod("ns", "b-0", "", "Pending", resource_list("1", "1G"), "b")),
    ]
    plugin = plugin_of(make_session(objects))
    attrs = plugin.queue_attributes
    assert set(attrs) == {"mem-only", "zero-cpu"}
    assert plugin.deserved("empty") is None
    # The guaranteed queue has no job but its guarantee is set aside from everyone else.
    assert same(attrs["mem-only"].real_capability, cpu_mem(6, 2e9, pods=10))
    assert same(attrs["zero-cpu"].real_capability, cpu_mem(6, 3e9, pods=10))
    assert attrs["mem-only"].capability.milli_cpu == MAX_FLOAT
    assert attrs["zero-cpu"].capability.milli_cpu == MAX_FLOAT


# ----------------------------------------------------------------------- queue hooks


def reclaim_cluster() -> list[tuple[str, Mapping[str, Any]]]:
    """q1 runs three 1-CPU tasks, q2 waits with two: equal weights over 4 CPU."""
    return [
        ("Node", build_node("n1", resource_list("4", "4G", pods="10"))),
        ("Queue", build_queue("q1")),
        ("Queue", build_queue("q2")),
        ("PodGroup", build_pod_group("busy", "ns", "q1", 1, phase="Running")),
        ("PodGroup", build_pod_group("wait", "ns", "q2", 1)),
        *(
            ("Pod", build_pod("ns", f"busy-{i}", "n1", "Running", resource_list("1"), "busy"))
            for i in range(3)
        ),
        *(
            ("Pod", build_pod("ns", f"wait-{i}", "", "Pending", resource_list("1"), "wait"))
            for i in range(2)
        ),
    ]


FULL = PluginOption.with_flags(
    "proportion",
    "enableQueueOrder",
    "enableReclaimable",
    "enabledOverused",
    "enabledAllocatable",
    "enablePreemptive",
    "enableJobEnqueued",
)


def test_reclaimable_takes_only_beyond_deserved() -> None:
    ssn = make_session(reclaim_cluster(), FULL)
    plugin = plugin_of(ssn)
    assert same(plugin.deserved("q1"), cpu_mem(2, 0, pods=3))
    assert same(plugin.deserved("q2"), cpu_mem(2, 0, pods=2))
    busy = ssn.jobs["ns/busy"]
    reclaimer = ssn.jobs["ns/wait"].tasks["ns-wait-0"]
    candidates = [busy.tasks[f"ns-busy-{i}"] for i in range(3)]
    assert ssn.reclaimable(reclaimer, candidates) == candidates[:1]


def test_overused_queue_order_allocatable_preemptive() -> None:
    ssn = make_session(reclaim_cluster(), FULL)
    plugin = plugin_of(ssn)
    q1, q2 = ssn.queues["q1"], ssn.queues["q2"]
    assert ssn.overused(q1)
    assert not ssn.overused(q2)
    assert plugin.queue_attributes["q1"].share == pytest.approx(1.5)
    assert plugin.queue_attributes["q2"].share == 0.0
    assert ssn.queue_order_fn(q2, q1)
    waiting = list(ssn.jobs["ns/wait"].tasks.values())
    assert ssn.allocatable(q2, waiting[0])
    assert ssn.preemptive(q2, waiting)
    assert not ssn.preemptive(q2, [*waiting, waiting[0]])
    assert not ssn.allocatable(q1, ssn.jobs["ns/busy"].tasks["ns-busy-0"])


def test_event_handlers_track_queue_allocation() -> None:
    ssn = make_session(reclaim_cluster(), FULL)
    attr = plugin_of(ssn).queue_attributes["q2"]
    statement = ssn.statement()
    statement.allocate(ssn.jobs["ns/wait"].tasks["ns-wait-0"], ssn.nodes["n1"])
    assert attr.allocated.milli_cpu == 1000
    assert attr.share == pytest.approx(0.5)
    statement.discard()
    assert attr.allocated.milli_cpu == 0
    assert attr.share == 0.0


def test_enqueue_without_min_resources_and_enqueued_accounting() -> None:
    objects = [
        *reclaim_cluster(),
        (
            "PodGroup",
            build_pod_group(
                "sized", "ns", "q2", 1, phase="Pending", min_resources=resource_list("1")
            ),
        ),
        ("Pod", build_pod("ns", "sized-0", "", "Pending", resource_list("1"), "sized")),
    ]
    ssn = make_session(objects, FULL)
    attr = plugin_of(ssn).queue_attributes["q2"]
    # No minResources: always admitted, and nothing is reserved for it.
    assert ssn.job_enqueueable(ssn.jobs["ns/wait"])
    ssn.job_enqueued(ssn.jobs["ns/wait"])
    assert attr.inqueue.milli_cpu == 0
    sized = ssn.jobs["ns/sized"]
    assert ssn.job_enqueueable(sized)
    ssn.job_enqueued(sized)
    assert attr.inqueue.milli_cpu == 1000


def test_queue_metrics() -> None:
    ssn = make_session(reclaim_cluster(), FULL)
    sample = metrics.REGISTRY.get_sample_value
    assert sample("volcano_queue_deserved_milli_cpu", {"queue_name": "q1"}) == 2000
    assert sample("volcano_queue_allocated_milli_cpu", {"queue_name": "q1"}) == 3000
    assert sample("volcano_queue_request_milli_cpu", {"queue_name": "q2"}) == 2000
    assert sample("volcano_queue_weight", {"queue_name": "q2"}) == 1
    assert ssn.overused(ssn.queues["q1"])
    assert sample("volcano_queue_overused", {"queue_name": "q1"}) == 1
    statement = ssn.statement()
    statement.allocate(ssn.jobs["ns/wait"].tasks["ns-wait-0"], ssn.nodes["n1"])
    # Allocation gauges are set once per session, at close.
    ssn.plugins["proportion"].on_session_close(ssn)
    assert sample("volcano_queue_allocated_milli_cpu", {"queue_name": "q2"}) == 1000
    assert sample("volcano_queue_share", {"queue_name": "q2"}) == 0.5
