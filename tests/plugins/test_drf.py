"""drf plugin (``pkg/scheduler/plugins/drf``).

Upstream has no unit test of flat DRF; its only test, ``hdrf_test.go`` ``TestHDRF``, runs the
allocate action over hierarchical queues (cases "rescaling test" and "blocking nodes test").
Until the allocate action lands, both cases are replayed here with a minimal allocation loop
that does what allocate does for jobs without a gang (minMember 0): pop the first queue by
QueueOrderFn, its first job by JobOrderFn, place one task, repeat. The expected allocations are
upstream's. (Upstream's assertion is inverted and never fails; ours is the real check.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.plugin import PluginBuilder
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import drf, proportion

T = TypeVar("T")

HIERARCHY = "volcano.sh/hierarchy"
WEIGHTS = "volcano.sh/hierarchy-weights"


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]], *options: PluginOption
) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=[], tiers=[Tier(list(options))])
    builders: dict[str, PluginBuilder] = {"drf": drf.new, "proportion": proportion.new}
    return open_session(cache.snapshot(), conf, builders, cache)


def plugin_of(ssn: Session) -> drf.DrfPlugin:
    plugin = ssn.plugins["drf"]
    assert isinstance(plugin, drf.DrfPlugin)
    return plugin


def by(order: Callable[[T, T], bool]) -> Callable[[T], Any]:
    """A sort key from a "goes before" predicate, as upstream's priority queues use them."""
    return functools.cmp_to_key(lambda a, b: -1 if order(a, b) else 1)


def flat_cluster() -> list[tuple[str, dict[str, Any]]]:
    return [
        ("Node", build_node("n1", resource_list("10", "10G", pods="10"))),
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("big", "ns", "q1", 1)),
        ("Pod", build_pod("ns", "big-0", "n1", "Running", resource_list("3", "1G"), "big")),
        ("Pod", build_pod("ns", "big-1", "n1", "Running", resource_list("3", "1G"), "big")),
        ("PodGroup", build_pod_group("many", "ns", "q1", 1)),
        # Tiny pods: the dominant resource is the pod count (2 of 10).
        ("Pod", build_pod("ns", "many-0", "n1", "Running", resource_list("100m", "10M"), "many")),
        ("Pod", build_pod("ns", "many-1", "n1", "Running", resource_list("100m", "10M"), "many")),
        ("PodGroup", build_pod_group("new", "ns", "q1", 1)),
        ("Pod", build_pod("ns", "new-0", "", "Pending", resource_list("2", "1G"), "new")),
        ("Pod", build_pod("ns", "new-1", "", "Pending", resource_list("2", "1G"), "new")),
    ]


FLAT = PluginOption.with_flags("drf", "enableJobOrder", "enablePreemptable")


# ----------------------------------------------------------------------- flat DRF


def test_shares_count_pods() -> None:
    ssn = make_session(flat_cluster(), FLAT)
    plugin = plugin_of(ssn)
    big, many, new = (plugin.job_attrs[f"ns/{name}"] for name in ("big", "many", "new"))
    assert big.dominant_resource == "cpu"
    assert big.share == pytest.approx(0.6)
    assert many.dominant_resource == "pods"
    assert many.share == pytest.approx(0.2)
    assert (new.dominant_resource, new.share) == ("", 0.0)
    share = metrics.REGISTRY.get_sample_value(
        "volcano_job_share", {"job_ns": "ns", "job_id": "big"}
    )
    assert share == pytest.approx(0.6)


def test_calculate_share_of_a_dimension_the_cluster_lacks() -> None:
    total = Resource(1000.0, 1000.0, {"nvidia.com/gpu": 0.0})
    # total.resource_names() skips dimensions below 0.1, so a missing GPU does not count.
    assert drf.calculate_share(Resource(500.0, 0.0, {"nvidia.com/gpu": 1000.0}), total) == (
        "cpu",
        0.5,
    )


def test_job_order_smaller_share_first() -> None:
    ssn = make_session(flat_cluster(), FLAT)
    plugin = plugin_of(ssn)
    big, many, new = (ssn.jobs[f"ns/{name}"] for name in ("big", "many", "new"))
    assert plugin.job_order(new, many) == -1
    assert plugin.job_order(big, many) == 1
    assert plugin.job_order(big, big) == 0
    ordered = sorted([big, many, new], key=by(ssn.job_order_fn))
    assert [job.name for job in ordered] == ["new", "many", "big"]


def test_event_handlers_track_allocations() -> None:
    ssn = make_session(flat_cluster(), FLAT)
    plugin = plugin_of(ssn)
    job = ssn.jobs["ns/new"]
    statement = ssn.statement()
    statement.allocate(job.tasks["ns-new-0"], ssn.nodes["n1"])
    assert plugin.job_attrs["ns/new"].share == pytest.approx(0.2)
    statement.allocate(job.tasks["ns-new-1"], ssn.nodes["n1"])
    assert plugin.job_attrs["ns/new"].share == pytest.approx(0.4)
    statement.discard()
    assert plugin.job_attrs["ns/new"].share == 0.0
    assert plugin.job_attrs["ns/new"].allocated.milli_cpu == 0.0


def test_preemptable_compares_shares_after_the_move() -> None:
    ssn = make_session(flat_cluster(), FLAT)
    preemptor = ssn.jobs["ns/new"].tasks["ns-new-0"]
    big = ssn.jobs["ns/big"]
    many = ssn.jobs["ns/many"]
    candidates = [big.tasks["ns-big-0"], big.tasks["ns-big-1"], many.tasks["ns-many-0"]]
    # Preemptor's job after gaining 2 cpu: share 0.2. big after losing 3 cpu: 0.3 (>= 0.2, a
    # victim); after losing the next 3 too: 0.0 (< 0.2, kept). many after losing one pod: 0.1.
    victims = ssn.preemptable(preemptor, candidates)
    assert [t.name for t in victims] == ["big-0"]


def test_preemptable_subtracts_rejected_candidates_too() -> None:
    """Spec §9 pitfall 25: each candidate considered comes off its job's running allocation,
    even the ones not chosen, so a later candidate of the same job sees a smaller share."""
    objects = [
        ("Node", build_node("n1", resource_list("10", "10G", pods="100"))),
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("victim", "ns", "q1", 1)),
        ("Pod", build_pod("ns", "v-small", "n1", "Running", resource_list("1", "1G"), "victim")),
        ("Pod", build_pod("ns", "v-large", "n1", "Running", resource_list("4", "1G"), "victim")),
        ("PodGroup", build_pod_group("preemptor", "ns", "q1", 1)),
        ("Pod", build_pod("ns", "p-0", "n1", "Running", resource_list("3", "1G"), "preemptor")),
        ("Pod", build_pod("ns", "p-1", "", "Pending", resource_list("1", "1G"), "preemptor")),
    ]
    ssn = make_session(objects, FLAT)
    victim = ssn.jobs["ns/victim"]
    preemptor = ssn.jobs["ns/preemptor"].tasks["ns-p-1"]
    # Preemptor share after gaining: 4/10. victim holds 5 cpu: minus large (4) -> 0.1 (kept),
    # minus small next -> 0.0 (kept). In the other order: minus small -> 0.4 (victim).
    large, small = victim.tasks["ns-v-large"], victim.tasks["ns-v-small"]
    assert ssn.preemptable(preemptor, [large, small]) == []
    assert ssn.preemptable(preemptor, [small, large]) == [small]


def test_preemptable_unknown_jobs() -> None:
    ssn = make_session(flat_cluster(), FLAT)
    preemptor = ssn.jobs["ns/new"].tasks["ns-new-0"]
    orphan = ssn.jobs["ns/big"].tasks["ns-big-0"].clone()
    orphan.job = "ns/gone"
    assert ssn.preemptable(preemptor, [orphan]) == []
    lost = preemptor.clone()
    lost.job = "ns/gone"
    assert ssn.preemptable(lost, [ssn.jobs["ns/big"].tasks["ns-big-0"]]) == []


def test_flat_mode_registers_no_queue_hooks() -> None:
    ssn = make_session(
        flat_cluster(),
        PluginOption.with_flags("drf", "enableQueueOrder", "enableReclaimable", "enableJobOrder"),
    )
    assert not plugin_of(ssn).hierarchy_enabled
    assert not ssn.has_hook("queue_order")
    assert not ssn.has_hook("reclaimable")


# ----------------------------------------------------------------------- hierarchical DRF


def pending_pods(
    count: int, cpu: str, memory: str, group: str, namespace: str = "default"
) -> list[tuple[str, dict[str, Any]]]:
    """Upstream ``makePods``."""
    return [
        (
            "Pod",
            build_pod(namespace, f"{group}-p{i}", "", "Pending", resource_list(cpu, memory), group),
        )
        for i in range(count)
    ]


def hierarchy_queue(name: str, path: str, weights: str) -> tuple[str, dict[str, Any]]:
    return "Queue", build_queue(name, 1, annotations={HIERARCHY: path, WEIGHTS: weights})


HDRF_TIER = (
    PluginOption.with_flags("drf", "enableHierarchy", "enableQueueOrder", "enableJobOrder"),
    PluginOption.with_flags(
        "proportion", "enableJobEnqueued", "enableQueueOrder", "enableReclaimable"
    ),
)


def allocate_one_task_per_pop(ssn: Session) -> None:
    """What allocate does for gang-less jobs on one node, until nothing more fits."""
    node = ssn.node_list[0]
    statement = ssn.statement()
    while True:
        idle = node.idle

        def fitting(job: JobInfo, idle: Resource = idle) -> list[Any]:
            pending = job.tasks_in(TaskStatus.PENDING).values()
            return [t for t in pending if t.resreq.less_equal(idle, DimensionDefault.ZERO)]

        queues: dict[str, tuple[QueueInfo, list[JobInfo]]] = {}
        for job in ssn.jobs.values():
            if fitting(job):
                queues.setdefault(job.queue, (ssn.queues[job.queue], []))[1].append(job)
        if not queues:
            return
        _queue, jobs = sorted(queues.values(), key=lambda entry: by(ssn.queue_order_fn)(entry[0]))[
            0
        ]
        job = sorted(jobs, key=by(ssn.job_order_fn))[0]
        task = sorted(fitting(job), key=lambda t: t.name)[0]
        statement.allocate(task, node)


def test_hdrf_rescaling() -> None:
    """``TestHDRF`` "rescaling test": sci and eng split the cluster evenly; inside eng, dev
    (cpu only) and prod (memory only) each reach the same dominant share."""
    objects = [
        ("Node", build_node("n", resource_list("10", "10G", pods="50"))),
        hierarchy_queue("root-sci", "root/sci", "100/50"),
        hierarchy_queue("root-eng-dev", "root/eng/dev", "100/50/50"),
        hierarchy_queue("root-eng-prod", "root/eng/prod", "100/50/50"),
        ("PodGroup", build_pod_group("pg1", "default", "root-sci", 0)),
        ("PodGroup", build_pod_group("pg21", "default", "root-eng-dev", 0)),
        ("PodGroup", build_pod_group("pg22", "default", "root-eng-prod", 0)),
        *pending_pods(10, "1", "1G", "pg1"),
        *pending_pods(10, "1", "0G", "pg21"),
        *pending_pods(10, "0", "1G", "pg22"),
    ]
    ssn = make_session(objects, *HDRF_TIER)
    allocate_one_task_per_pop(ssn)
    expected = {
        "pg1": Resource(5000, 5e9, {"pods": 5}),
        "pg21": Resource(5000, 0, {"pods": 5}),
        "pg22": Resource(0, 5e9, {"pods": 5}),
    }
    for job in ssn.jobs.values():
        assert job.allocated.equal(expected[job.name], DimensionDefault.ZERO), job.name


def test_hdrf_blocking_nodes() -> None:
    """``TestHDRF`` "blocking nodes test". pg32's PodGroup names queue root-pg3-pg31, as
    upstream's does, so pg31 and pg32 share a leaf queue and root-pg3-pg32 stays empty."""
    objects = [
        ("Node", build_node("n", resource_list("30", "30G", pods="500"))),
        hierarchy_queue("root-pg1", "root/pg1", "100/25"),
        hierarchy_queue("root-pg2", "root/pg2", "100/25"),
        hierarchy_queue("root-pg3-pg31", "root/pg3/pg31", "100/25/50"),
        hierarchy_queue("root-pg3-pg32", "root/pg3/pg32", "100/25/50"),
        hierarchy_queue("root-pg4", "root/pg4", "100/25"),
        ("PodGroup", build_pod_group("pg1", "default", "root-pg1", 0)),
        ("PodGroup", build_pod_group("pg2", "default", "root-pg2", 0)),
        ("PodGroup", build_pod_group("pg31", "default", "root-pg3-pg31", 0)),
        ("PodGroup", build_pod_group("pg32", "default", "root-pg3-pg31", 0)),
        ("PodGroup", build_pod_group("pg4", "default", "root-pg4", 0)),
        *pending_pods(30, "1", "0G", "pg1"),
        *pending_pods(30, "1", "0G", "pg2"),
        *pending_pods(30, "1", "0G", "pg31"),
        *pending_pods(30, "0", "1G", "pg32"),
        *pending_pods(30, "0", "1G", "pg4"),
    ]
    ssn = make_session(objects, *HDRF_TIER)
    allocate_one_task_per_pop(ssn)
    expected = {
        "pg1": Resource(10000, 0, {"pods": 10}),
        "pg2": Resource(10000, 0, {"pods": 10}),
        "pg31": Resource(10000, 0, {"pods": 10}),
        "pg32": Resource(0, 15e9, {"pods": 15}),
        "pg4": Resource(0, 15e9, {"pods": 15}),
    }
    for job in ssn.jobs.values():
        assert job.allocated.equal(expected[job.name], DimensionDefault.ZERO), job.name


def running_hierarchy() -> list[tuple[str, dict[str, Any]]]:
    """Two queues under root with equal weights: a holds 6 cpu, b holds 2 cpu and wants more."""
    return [
        ("Node", build_node("n", resource_list("10", "10G", pods="100"))),
        hierarchy_queue("a", "root/a", "1/1"),
        hierarchy_queue("b", "root/b", "1/1"),
        ("PodGroup", build_pod_group("ja", "ns", "a", 0)),
        ("PodGroup", build_pod_group("jb", "ns", "b", 0)),
        *[
            ("Pod", build_pod("ns", f"a-{i}", "n", "Running", resource_list("1", "100M"), "ja"))
            for i in range(6)
        ],
        *[
            ("Pod", build_pod("ns", f"b-{i}", "n", "Running", resource_list("1", "100M"), "jb"))
            for i in range(2)
        ],
        *pending_pods(4, "1", "100M", "ja", "ns"),
        *pending_pods(4, "1", "100M", "jb", "ns"),
    ]


def test_hierarchy_queue_order_and_tree() -> None:
    hdrf = PluginOption.with_flags(
        "drf", "enableHierarchy", "enableQueueOrder", "enableReclaimable"
    )
    ssn = make_session(running_hierarchy(), hdrf)
    plugin = plugin_of(ssn)
    assert plugin.hierarchy_enabled
    a, b = ssn.queues["a"], ssn.queues["b"]
    assert plugin.queue_order(b, a) == -1
    assert plugin.queue_order(a, b) == 1
    assert ssn.queue_order_fn(b, a)
    assert plugin.root.children is not None
    assert set(plugin.root.children) == {"a", "b"}
    node_a = plugin.root.children["a"]
    assert node_a.children is not None
    assert set(node_a.children) == {"ns/ja"}
    assert node_a.attr.share == pytest.approx(0.6)


def test_hierarchy_reclaimable() -> None:
    hdrf = PluginOption.with_flags(
        "drf", "enableHierarchy", "enableQueueOrder", "enableReclaimable"
    )
    ssn = make_session(running_hierarchy(), hdrf)
    reclaimer = ssn.jobs["ns/jb"].tasks["ns-jb-p0"]
    ja = ssn.jobs["ns/ja"]
    candidates = [ja.tasks[f"ns-a-{i}"] for i in range(6)]
    # With the reclaimer placed b holds 3; each candidate is judged alone (put back after):
    # a at 5 still shares more than b at 3, so every candidate may go.
    assert ssn.reclaimable(reclaimer, candidates) == candidates
    # The tree is left as it was.
    plugin = plugin_of(ssn)
    assert plugin.root.children is not None
    assert plugin.root.children["a"].attr.share == pytest.approx(0.6)
    assert plugin.root.children["b"].attr.share == pytest.approx(0.2)

    # Its own queue's task: a queue never comes before itself.
    own = ssn.jobs["ns/jb"].tasks["ns-b-0"]
    assert ssn.reclaimable(reclaimer, [own]) == []


def test_hierarchy_event_handlers_update_tree() -> None:
    hdrf = PluginOption.with_flags("drf", "enableHierarchy", "enableQueueOrder")
    ssn = make_session(running_hierarchy(), hdrf)
    plugin = plugin_of(ssn)
    jb = ssn.jobs["ns/jb"]
    statement = ssn.statement()
    for i in range(4):
        statement.allocate(jb.tasks[f"ns-jb-p{i}"], ssn.nodes["n"])
    assert plugin.root.children is not None
    assert plugin.root.children["b"].attr.share == pytest.approx(0.6)
    # Equal shares, neither saturated: no order.
    assert plugin.queue_order(ssn.queues["a"], ssn.queues["b"]) == 0
    statement.discard()
    assert plugin.root.children["b"].attr.share == pytest.approx(0.2)


def test_saturated_queue_goes_last() -> None:
    """A job that holds everything it asked for of some resource is saturated; its queue
    yields to a demanding one even with a smaller share."""
    objects = [
        ("Node", build_node("n", resource_list("10", "10G", pods="100"))),
        hierarchy_queue("done", "root/done", "1/1"),
        hierarchy_queue("hungry", "root/hungry", "1/1"),
        ("PodGroup", build_pod_group("jd", "ns", "done", 0)),
        ("PodGroup", build_pod_group("jh", "ns", "hungry", 0)),
        ("Pod", build_pod("ns", "d-0", "n", "Running", resource_list("1", "100M"), "jd")),
        *[
            ("Pod", build_pod("ns", f"h-{i}", "n", "Running", resource_list("1", "100M"), "jh"))
            for i in range(4)
        ],
        *pending_pods(4, "1", "100M", "jh", "ns"),
    ]
    ssn = make_session(
        objects, PluginOption.with_flags("drf", "enableHierarchy", "enableQueueOrder")
    )
    plugin = plugin_of(ssn)
    assert plugin.root.children is not None
    assert plugin.root.children["done"].saturated
    assert not plugin.root.children["hungry"].saturated
    assert plugin.queue_order(ssn.queues["hungry"], ssn.queues["done"]) == -1


def test_level_weights() -> None:
    objects = [
        ("Node", build_node("n", resource_list("10", "10G", pods="100"))),
        hierarchy_queue("x", "root/x/y", "1/0.5/bad"),
        ("PodGroup", build_pod_group("jx", "ns", "x", 0)),
        *pending_pods(1, "1", "1G", "jx", "ns"),
    ]
    ssn = make_session(objects, PluginOption.with_flags("drf", "enableHierarchy"))
    root = plugin_of(ssn).root
    assert root.children is not None
    level_x = root.children["x"]
    assert level_x.children is not None
    # Below 1 and unparsable weights both mean 1.
    assert (level_x.weight, level_x.children["y"].weight) == (1.0, 1.0)
