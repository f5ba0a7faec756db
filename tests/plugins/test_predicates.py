"""predicates plugin (``pkg/scheduler/plugins/predicates``).

Transcribed from upstream ``predicates_test.go``:

* ``TestNodeNum`` ("pod-predicate") and ``TestEventHandler`` ("pod-deallocate") as scenario
  runs of allocate (+ backfill);
* ``TestPodAntiAffinity`` ("pod-anti-affinity") at the plugin level, since preempt is not
  ported yet: evicting the low-priority pod does not make the node feasible;
* ``TestInitPlugin`` as what each ``predicate.*Enable`` argument switches on or off.

Not transcribable: ``TestTaskPodAnnotations``, the VolumeBinding/DRA argument tests,
``TestReserveRollbackOrderStable`` and ``TestBatchNodeOrderRunsPreScorePlugins`` (volumes,
devices and fake kube-scheduler plugin objects are not modelled), and the two tests built on
fake filter plugins (``TestPredicateFailureReasonAggregationOrderStable``,
``TestPredicateByStablefilterSkipsPluginInSkipSet``).

Then kube-scheduler-style cases per filter (NodeAffinity, TaintToleration, NodeUnschedulable,
NodePorts, InterPodAffinity, the pod count), the event bookkeeping, and Hypothesis
properties: the vectorised masks equal the scalar rules node by node, and the incremental
affinity counts equal a fresh scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
    resource_list,
)
from tests.harness import Case, check, run_case
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import NODE_POD_NUMBER_EXCEEDED, Status, StatusCode, TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import predicates
from volcano_py.plugins._kube_scheduling.affinity_tracker import AffinityTracker
from volcano_py.plugins._kube_scheduling.node_index import NodeIndex, requirement_mask
from volcano_py.plugins._kube_scheduling.selectors import Requirement, SelectorError
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods
from volcano_py.plugins._kube_scheduling.topology_spread import (
    NodeView,
    TopologySpread,
    filter_reference,
)
from volcano_py.plugins.predicates.masks import (
    StaticFilters,
    StaticSpec,
    static_mask,
    static_status_at,
)

UNRESOLVABLE = StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE
UNSCHEDULABLE = StatusCode.UNSCHEDULABLE
ERR_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ERR_PORTS = "node(s) didn't have free ports for the requested pod ports"
ERR_POD_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI = "node(s) didn't satisfy existing pods anti-affinity rules"
HOSTNAME = "kubernetes.io/hostname"

Objects = list[tuple[str, dict[str, Any]]]


# ----------------------------------------------------------------------------------------- helpers


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]], arguments: Mapping[str, Any] | None = None
) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("predicates", "enablePredicate", arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"predicates": predicates.new}, cache)


def base() -> Objects:
    return [("Queue", build_queue("q1")), ("PodGroup", build_pod_group("pg", "ns", "q1", 1))]


def node(
    name: str, labels: Mapping[str, str] | None = None, pods: str = "10", **kwargs: Any
) -> tuple[str, dict[str, Any]]:
    return "Node", build_node(name, resource_list("8", "8G", pods=pods), labels, **kwargs)


def pod(name: str, node_name: str = "", **kwargs: Any) -> tuple[str, dict[str, Any]]:
    phase = "Running" if node_name else "Pending"
    return "Pod", build_pod("ns", name, node_name, phase, resource_list("1", "1G"), "pg", **kwargs)


def task_of(ssn: Session, name: str, namespace: str = "ns") -> TaskInfo:
    for job in ssn.jobs.values():
        for task in job.tasks.values():
            if task.name == name and task.namespace == namespace:
                return task
    raise KeyError(name)


def statuses(ssn: Session, task_name: str, node_name: str) -> list[tuple[StatusCode, str]]:
    task = task_of(ssn, task_name)
    return [(s.code, s.reason) for s in ssn.predicate_fn(task, ssn.nodes[node_name])]


def feasible(ssn: Session, task_name: str) -> list[str]:
    task = task_of(ssn, task_name)
    return [n.name for n in ssn.node_list if not ssn.predicate_fn(task, n)]


def term(key: str, operator: str, *values: str) -> dict[str, Any]:
    expression: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        expression["values"] = list(values)
    return {"matchExpressions": [expression]}


def required_node_affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}
        }
    }


def pod_term(
    selector: Mapping[str, str], topology_key: str = HOSTNAME, **extra: Any
) -> dict[str, Any]:
    return {"labelSelector": {"matchLabels": dict(selector)}, "topologyKey": topology_key, **extra}


def anti_affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


def pod_affinity(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": list(terms)}}


# ------------------------------------------------------------------------- upstream transcriptions


def _worker_affinity() -> dict[str, Any]:
    """``getWorkerAffinity``: no two ``role=worker`` pods on one host."""
    return anti_affinity(
        {
            "labelSelector": {
                "matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]
            },
            "topologyKey": HOSTNAME,
        }
    )


def test_node_num_upstream() -> None:
    """``TestNodeNum`` "pod-predicate": a node with ``pods: 2`` takes two of three pods."""
    worker = {"role": "worker"}
    case = Case(
        name="pod-predicate",
        plugins={"predicates": ["enablePredicate"]},
        nodes=[build_node("node1", resource_list("4", "4k", pods="2"), {"selector": "worker"})],
        pods=[
            build_pod("ns1", "worker-1", "", "Pending", {}, "pg1", worker, {"selector": "worker"}),
            build_pod("ns1", "worker-2", "", "Pending", {}, "pg1", worker),
            build_pod("ns1", "worker-3", "", "Pending", {}, "pg2", worker),
        ],
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 2, priority_class_name="p2"),
            build_pod_group("pg2", "ns1", "q1", 1, priority_class_name="p1"),
        ],
        queues=[build_queue("q1", 0)],
        priority_classes=[build_priority_class("p1", 1), build_priority_class("p2", 2)],
        expect_bind_map={"ns1/worker-1": "node1", "ns1/worker-2": "node1"},
        expect_binds_num=2,
    )
    check(case, run_case(case, ["allocate", "backfill"]))


def test_event_handler_upstream() -> None:
    """``TestEventHandler`` "pod-deallocate": pg1 (worker-1, worker-2, anti-affine) cannot
    be placed; discarding its statement must take worker-1 back out of the affinity counts,
    or worker-3 could not use node1."""
    worker = {"role": "worker"}
    pods = [
        build_pod(
            "ns1",
            "worker-1",
            "",
            "Pending",
            resource_list("3", "3k"),
            "pg1",
            worker,
            {"selector": "worker"},
            affinity=_worker_affinity(),
        ),
        build_pod(
            "ns1",
            "worker-2",
            "",
            "Pending",
            resource_list("5", "5k"),
            "pg1",
            worker,
            affinity=_worker_affinity(),
        ),
        build_pod(
            "ns1",
            "worker-3",
            "",
            "Pending",
            resource_list("4", "4k"),
            "pg2",
            worker,
            affinity=_worker_affinity(),
        ),
    ]
    case = Case(
        name="pod-deallocate",
        plugins={
            "predicates": ["enablePredicate"],
            "gang": ["enableJobReady", "enableJobPipelined"],
            "priority": ["enableJobOrder"],
        },
        nodes=[
            build_node(
                "node1",
                resource_list("14", "14k", pods="10"),
                {"selector": "worker", HOSTNAME: "node1"},
            ),
            build_node("node2", resource_list("3", "3k", pods="10"), {HOSTNAME: "node2"}),
        ],
        pods=pods,
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 2, priority_class_name="p2"),
            build_pod_group("pg2", "ns1", "q1", 1, priority_class_name="p1"),
        ],
        queues=[build_queue("q1", 0)],
        priority_classes=[build_priority_class("p1", 1), build_priority_class("p2", 2)],
        expect_bind_map={"ns1/worker-3": "node1"},
        expect_binds_num=1,
    )
    check(case, run_case(case, ["allocate"]))


def test_pod_anti_affinity_upstream() -> None:
    """``TestPodAntiAffinity`` "pod-anti-affinity", at the plugin level: n1 is full
    (``pods: 2``) and holds worker-1, whose anti-affinity rejects worker-3. Evicting the
    low-priority worker-2 frees a pod slot but not the anti-affinity, so preemption has no
    victim set that makes n1 feasible (upstream expects no eviction)."""
    objects: Objects = [
        ("Queue", build_queue("q1", 0, resource_list("9", "9G"))),
        ("PriorityClass", build_priority_class("high-priority", 100000)),
        ("PriorityClass", build_priority_class("low-priority", 10)),
        (
            "PodGroup",
            build_pod_group(
                "pg1", "ns1", "q1", 0, phase="Running", priority_class_name="low-priority"
            ),
        ),
        ("PodGroup", build_pod_group("pg2", "ns1", "q1", 1, priority_class_name="high-priority")),
        ("Node", build_node("n1", resource_list("12", "12G", pods="2"), {HOSTNAME: "node1"})),
        (
            "Pod",
            build_pod(
                "ns1",
                "worker-1",
                "n1",
                "Running",
                resource_list("3", "3G"),
                "pg1",
                {"role": "worker"},
                priority=100000,
                affinity=_worker_affinity(),
            ),
        ),
        (
            "Pod",
            build_pod(
                "ns1", "worker-2", "n1", "Running", resource_list("3", "3G"), "pg1", priority=10
            ),
        ),
        (
            "Pod",
            build_pod(
                "ns1",
                "worker-3",
                "",
                "Pending",
                resource_list("3", "3G"),
                "pg2",
                {"role": "worker"},
                priority=100000,
                affinity=_worker_affinity(),
            ),
        ),
    ]
    ssn = make_session(objects)
    preemptor = task_of(ssn, "worker-3", "ns1")
    n1 = ssn.nodes["n1"]
    assert [s.reason for s in ssn.predicate_fn(preemptor, n1)] == [NODE_POD_NUMBER_EXCEEDED]

    statement = ssn.statement()
    statement.evict(task_of(ssn, "worker-2", "ns1"), "preempt")
    after = ssn.predicate_fn(preemptor, n1)
    assert [(s.code, s.reason) for s in after] == [(UNSCHEDULABLE, ERR_POD_ANTI_AFFINITY)]
    statement.discard()

    # Only evicting worker-1 itself (higher priority: not a victim) would help.
    statement = ssn.statement()
    statement.evict(task_of(ssn, "worker-1", "ns1"), "preempt")
    assert ssn.predicate_fn(preemptor, n1) == ()
    statement.discard()
    assert [s.reason for s in ssn.predicate_fn(preemptor, n1)] == [NODE_POD_NUMBER_EXCEEDED]


def _all_filters_objects() -> Objects:
    """One node that fails every switchable filter for ``p``, one that fails none."""
    return [
        *base(),
        node(
            "bad",
            {"zone": "b", HOSTNAME: "bad"},
            taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}],
        ),
        node("good", {"zone": "a", HOSTNAME: "good"}),
        pod("holder", "bad", labels={"app": "x"}, ports=[{"containerPort": 80, "hostPort": 80}]),
        pod(
            "p",
            node_selector={"zone": "a"},
            ports=[{"containerPort": 80, "hostPort": 80}],
            affinity=anti_affinity(pod_term({"app": "x"})),
        ),
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param({}, [(UNRESOLVABLE, ERR_AFFINITY)], id="all default plugins enabled"),
        pytest.param(
            {"predicate.NodeAffinityEnable": False},
            [(UNRESOLVABLE, "node(s) had untolerated taint(s)")],
            id="node affinity off",
        ),
        pytest.param(
            {"predicate.NodeAffinityEnable": False, "predicate.TaintTolerationEnable": False},
            [(UNSCHEDULABLE, ERR_PORTS), (UNSCHEDULABLE, ERR_POD_ANTI_AFFINITY)],
            id="node affinity and taints off",
        ),
        pytest.param(
            {
                "predicate.NodeAffinityEnable": False,
                "predicate.TaintTolerationEnable": False,
                "predicate.NodePortsEnable": False,
            },
            [(UNSCHEDULABLE, ERR_POD_ANTI_AFFINITY)],
            id="ports off too",
        ),
        pytest.param(
            {
                "predicate.NodeAffinityEnable": "false",
                "predicate.TaintTolerationEnable": False,
                "predicate.NodePortsEnable": False,
                "predicate.PodAffinityEnable": False,
            },
            [],
            id="everything switchable off",
        ),
    ],
)
def test_init_plugin_upstream(
    arguments: dict[str, Any], expected: list[tuple[StatusCode, str]]
) -> None:
    """``TestInitPlugin``: each ``predicate.*Enable`` argument switches its filter."""
    ssn = make_session(_all_filters_objects(), arguments)
    assert statuses(ssn, "p", "bad") == expected
    assert statuses(ssn, "p", "good") == []


def test_node_unschedulable_cannot_be_switched_off() -> None:
    objects = [*base(), node("n1", unschedulable=True), pod("p")]
    ssn = make_session(
        objects, {"predicate.NodeAffinityEnable": False, "predicate.TaintTolerationEnable": False}
    )
    assert statuses(ssn, "p", "n1") == [(UNRESOLVABLE, "node(s) were unschedulable")]


# ------------------------------------------------------------------------------------ NodeAffinity


NODES_FOR_AFFINITY: Objects = [
    node("n1", {"zone": "a", "gen": "3", "gpu": "true"}),
    node("n2", {"zone": "b", "gen": "5"}),
    node("n3", {"zone": "c", "gen": "x"}),
    node("n4", {}),
]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"node_selector": {"zone": "a"}}, ["n1"]),
        ({"node_selector": {"zone": "a", "gpu": "false"}}, []),
        ({"affinity": required_node_affinity(term("zone", "In", "a", "b"))}, ["n1", "n2"]),
        ({"affinity": required_node_affinity(term("zone", "NotIn", "a"))}, ["n2", "n3", "n4"]),
        ({"affinity": required_node_affinity(term("gpu", "Exists"))}, ["n1"]),
        ({"affinity": required_node_affinity(term("gpu", "DoesNotExist"))}, ["n2", "n3", "n4"]),
        ({"affinity": required_node_affinity(term("gen", "Gt", "3"))}, ["n2"]),
        ({"affinity": required_node_affinity(term("gen", "Lt", "4"))}, ["n1"]),
        # Terms are ORed.
        (
            {"affinity": required_node_affinity(term("zone", "In", "a"), term("gen", "Gt", "4"))},
            ["n1", "n2"],
        ),
        # Requirements in one term are ANDed.
        (
            {
                "affinity": required_node_affinity(
                    {
                        "matchExpressions": [
                            {"key": "zone", "operator": "In", "values": ["a", "b"]},
                            {"key": "gen", "operator": "Gt", "values": ["4"]},
                        ]
                    }
                )
            },
            ["n2"],
        ),
        # nodeSelector AND node affinity.
        (
            {
                "node_selector": {"zone": "b"},
                "affinity": required_node_affinity(term("zone", "In", "a", "b")),
            },
            ["n2"],
        ),
        # matchFields on the node name.
        (
            {
                "affinity": required_node_affinity(
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n3"]}]}
                )
            },
            ["n3"],
        ),
        (
            {
                "affinity": required_node_affinity(
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "NotIn", "values": ["n3"]}
                        ]
                    }
                )
            },
            ["n1", "n2", "n4"],
        ),
        # An empty term list, or only empty terms, selects nothing.
        ({"affinity": required_node_affinity()}, []),
        ({"affinity": required_node_affinity({})}, []),
        # A term that does not parse never matches; the other terms still do.
        ({"affinity": required_node_affinity(term("zone", "In"), term("zone", "In", "c"))}, ["n3"]),
        ({"affinity": required_node_affinity(term("gen", "Gt", "three"))}, []),
        ({"affinity": required_node_affinity(term("zone", "Bogus", "a"))}, []),
        # Preferred terms never filter.
        (
            {
                "affinity": {
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {"weight": 1, "preference": term("zone", "In", "a")}
                        ]
                    }
                }
            },
            ["n1", "n2", "n3", "n4"],
        ),
    ],
)
def test_node_affinity(spec: dict[str, Any], expected: list[str]) -> None:
    ssn = make_session([*base(), *NODES_FOR_AFFINITY, pod("p", **spec)])
    assert feasible(ssn, "p") == expected
    for name in {"n1", "n2", "n3", "n4"} - set(expected):
        assert statuses(ssn, "p", name) == [(UNRESOLVABLE, ERR_AFFINITY)]


def test_node_name_conflict_fails_pre_predicate() -> None:
    affinity = required_node_affinity(
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
        {
            "matchFields": [
                {"key": "metadata.name", "operator": "In", "values": ["n2"]},
                {"key": "metadata.name", "operator": "In", "values": ["n3"]},
            ]
        },
    )
    ssn = make_session(
        [
            *base(),
            node("n1"),
            pod("ok", affinity=affinity),
            pod(
                "bad",
                affinity=required_node_affinity(
                    {
                        "matchFields": [
                            {"key": "metadata.name", "operator": "In", "values": ["n2"]},
                            {"key": "metadata.name", "operator": "In", "values": ["n3"]},
                        ]
                    }
                ),
            ),
        ]
    )
    assert ssn.pre_predicate_fn(task_of(ssn, "ok")) is None
    status = ssn.pre_predicate_fn(task_of(ssn, "bad"))
    assert status is not None and status.code is UNRESOLVABLE
    assert status.reason == "plugin NodeAffinity pre-predicates failed pod affinity terms conflict"


# ------------------------------------------------------------- TaintToleration / NodeUnschedulable


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return {"key": key, "value": value, "effect": effect}


@pytest.mark.parametrize(
    ("taints", "tolerations", "reason"),
    [
        (
            [taint("dedicated", "gpu", "NoSchedule")],
            None,
            "node(s) had untolerated taint(s)",
        ),
        (
            [taint("dedicated", "gpu", "NoExecute")],
            None,
            "node(s) had untolerated taint(s)",
        ),
        ([taint("dedicated", "gpu", "PreferNoSchedule")], None, None),
        (
            [taint("dedicated", "gpu", "NoSchedule")],
            [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
            None,
        ),
        ([taint("dedicated", "gpu", "NoSchedule")], [{"key": "dedicated", "value": "gpu"}], None),
        (
            [taint("dedicated", "gpu", "NoSchedule")],
            [{"key": "dedicated", "value": "cpu"}],
            "node(s) had untolerated taint(s)",
        ),
        (
            [taint("dedicated", "gpu", "NoSchedule")],
            [{"key": "dedicated", "operator": "Exists"}],
            None,
        ),
        ([taint("dedicated", "gpu", "NoSchedule")], [{"operator": "Exists"}], None),
        (
            [taint("dedicated", "gpu", "NoSchedule")],
            [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}],
            "node(s) had untolerated taint(s)",
        ),
        # kube-scheduler >= 1.34.x no longer names the taint (kubernetes#134740).
        (
            [taint("a", "1", "NoSchedule"), taint("b", "2", "NoSchedule")],
            [{"key": "a", "operator": "Exists"}],
            "node(s) had untolerated taint(s)",
        ),
        (
            [taint("a", "1", "NoSchedule"), taint("b", "2", "NoSchedule")],
            None,
            "node(s) had untolerated taint(s)",
        ),
    ],
)
def test_taint_toleration(
    taints: list[dict[str, str]], tolerations: list[dict[str, str]] | None, reason: str | None
) -> None:
    ssn = make_session([*base(), node("n1", taints=taints), pod("p", tolerations=tolerations)])
    expected = [] if reason is None else [(UNRESOLVABLE, reason)]
    assert statuses(ssn, "p", "n1") == expected


def test_unschedulable_node_tolerated_by_the_unschedulable_taint() -> None:
    toleration = [
        {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}
    ]
    ssn = make_session(
        [
            *base(),
            node("n1", unschedulable=True),
            pod("plain"),
            pod("tolerant", tolerations=toleration),
        ]
    )
    assert statuses(ssn, "plain", "n1") == [(UNRESOLVABLE, "node(s) were unschedulable")]
    assert statuses(ssn, "tolerant", "n1") == []


# --------------------------------------------------------------------------------------- NodePorts


def port(host_port: int, host_ip: str = "", protocol: str = "") -> dict[str, Any]:
    entry: dict[str, Any] = {"containerPort": host_port, "hostPort": host_port}
    if host_ip:
        entry["hostIP"] = host_ip
    if protocol:
        entry["protocol"] = protocol
    return entry


@pytest.mark.parametrize(
    ("used", "wanted", "conflict"),
    [
        ([port(80)], [port(80)], True),
        ([port(80)], [port(81)], False),
        ([port(80, protocol="UDP")], [port(80)], False),
        ([port(80, protocol="UDP")], [port(80, protocol="UDP")], True),
        ([port(80, "127.0.0.1")], [port(80, "127.0.0.2")], False),
        ([port(80, "127.0.0.1")], [port(80, "127.0.0.1")], True),
        # 0.0.0.0 clashes with every IP, both ways.
        ([port(80, "127.0.0.1")], [port(80)], True),
        ([port(80)], [port(80, "127.0.0.1")], True),
        ([port(80, "0.0.0.0")], [port(80, "10.0.0.1")], True),
        ([], [port(80)], False),
    ],
)
def test_node_ports(
    used: list[dict[str, Any]], wanted: list[dict[str, Any]], conflict: bool
) -> None:
    objects = [*base(), node("n1"), pod("p", ports=wanted)]
    if used:
        objects.append(pod("holder", "n1", ports=used))
    ssn = make_session(objects)
    assert statuses(ssn, "p", "n1") == ([(UNSCHEDULABLE, ERR_PORTS)] if conflict else [])


def test_ports_of_init_containers_count() -> None:
    holder = build_pod("ns", "holder", "n1", "Running", resource_list("1", "1G"), "pg")
    holder["spec"]["initContainers"] = [{"name": "init", "ports": [port(9000)]}]
    ssn = make_session([*base(), node("n1"), ("Pod", holder), pod("p", ports=[port(9000)])])
    assert statuses(ssn, "p", "n1") == [(UNSCHEDULABLE, ERR_PORTS)]


# -------------------------------------------------------------------------------- InterPodAffinity

ZONES: Objects = [
    node("a1", {HOSTNAME: "a1", "zone": "a"}),
    node("a2", {HOSTNAME: "a2", "zone": "a"}),
    node("b1", {HOSTNAME: "b1", "zone": "b"}),
    node("nozone", {HOSTNAME: "nozone"}),
]


def test_pod_affinity_needs_a_matching_pod_in_the_topology() -> None:
    objects = [
        *base(),
        *ZONES,
        pod("db", "a1", labels={"app": "db"}),
        pod("web", affinity=pod_affinity(pod_term({"app": "db"}, "zone"))),
    ]
    ssn = make_session(objects)
    assert feasible(ssn, "web") == ["a1", "a2"]
    assert statuses(ssn, "web", "b1") == [(UNRESOLVABLE, ERR_POD_AFFINITY)]
    assert statuses(ssn, "web", "nozone") == [(UNRESOLVABLE, ERR_POD_AFFINITY)]


def test_pod_affinity_first_pod_of_a_self_affine_group() -> None:
    """No pod matches anywhere and the pod matches its own term: any node with the
    topology key will do; a pod that does not match itself stays pending."""
    own = pod_affinity(pod_term({"app": "cache"}, "zone"))
    objects = [
        *base(),
        *ZONES,
        pod("first", labels={"app": "cache"}, affinity=own),
        pod("stranger", affinity=own),
    ]
    ssn = make_session(objects)
    assert feasible(ssn, "first") == ["a1", "a2", "b1"]
    assert feasible(ssn, "stranger") == []


def test_pod_affinity_counts_pods_placed_in_the_session() -> None:
    own = pod_affinity(pod_term({"app": "cache"}, "zone"))
    objects = [
        *base(),
        *ZONES,
        pod("first", labels={"app": "cache"}, affinity=own),
        pod("second", labels={"app": "cache"}, affinity=own),
    ]
    ssn = make_session(objects)
    statement = ssn.statement()
    statement.allocate(task_of(ssn, "first"), ssn.nodes["b1"])
    assert feasible(ssn, "second") == ["b1"]
    statement.discard()
    assert feasible(ssn, "second") == ["a1", "a2", "b1"]


def test_pod_anti_affinity_and_its_symmetric_rule() -> None:
    objects = [
        *base(),
        *ZONES,
        pod("db", "a1", labels={"app": "db"}),
        pod(
            "loner",
            "b1",
            labels={"app": "loner"},
            affinity=anti_affinity(pod_term({"app": "web"}, "zone")),
        ),
        pod("web", labels={"app": "web"}, affinity=anti_affinity(pod_term({"app": "db"}, "zone"))),
    ]
    ssn = make_session(objects)
    assert statuses(ssn, "web", "a2") == [(UNSCHEDULABLE, ERR_POD_ANTI_AFFINITY)]
    assert statuses(ssn, "web", "b1") == [(UNSCHEDULABLE, ERR_EXISTING_ANTI)]
    assert feasible(ssn, "web") == ["nozone"]


def test_pod_affinity_namespaces() -> None:
    """A term without namespaces means the pod's own namespace; ``namespaceSelector: {}``
    means all; a selector on ``kubernetes.io/metadata.name`` picks namespaces by name."""
    other = (
        "Pod",
        build_pod("other", "db", "a1", "Running", resource_list("1", "1G"), "", {"app": "db"}),
    )
    same_ns = pod_affinity(pod_term({"app": "db"}))
    all_ns = pod_affinity(pod_term({"app": "db"}, namespaceSelector={}))
    by_name = pod_affinity(
        pod_term(
            {"app": "db"},
            namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "other"}},
        )
    )
    listed = pod_affinity(pod_term({"app": "db"}, namespaces=["other"]))
    objects = [
        *base(),
        *ZONES,
        other,
        pod("same", affinity=same_ns),
        pod("all", affinity=all_ns),
        pod("by-name", affinity=by_name),
        pod("listed", affinity=listed),
    ]
    ssn = make_session(objects)
    assert feasible(ssn, "same") == []
    assert feasible(ssn, "all") == ["a1"]
    assert feasible(ssn, "by-name") == ["a1"]
    assert feasible(ssn, "listed") == ["a1"]


def test_unparseable_pod_affinity_fails_pre_predicate() -> None:
    bad = anti_affinity(
        {
            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In"}]},
            "topologyKey": HOSTNAME,
        }
    )
    ssn = make_session([*base(), node("n1"), pod("p", affinity=bad)])
    status = ssn.pre_predicate_fn(task_of(ssn, "p"))
    assert status is not None and status.code is UNRESOLVABLE
    assert status.reason.startswith("plugin InterPodAffinity pre-predicates failed parsing pod: ")


def test_label_selector_validation() -> None:
    with pytest.raises(SelectorError):
        Requirement.parse("app", "In", [])
    with pytest.raises(SelectorError):
        Requirement.parse("app", "Exists", ["x"])
    with pytest.raises(SelectorError):
        Requirement.parse("bad key!", "Exists", None)
    with pytest.raises(SelectorError):
        Requirement.parse("gen", "Gt", ["1", "2"])


# ---------------------------------------------------------------------------- pod count and events


def test_pod_count_follows_allocations_and_evictions() -> None:
    objects = [*base(), node("n1", pods="2"), pod("running", "n1"), pod("a"), pod("b")]
    ssn = make_session(objects)
    assert feasible(ssn, "a") == ["n1"]
    statement = ssn.statement()
    statement.allocate(task_of(ssn, "a"), ssn.nodes["n1"])
    assert statuses(ssn, "b", "n1") == [(UNSCHEDULABLE, NODE_POD_NUMBER_EXCEEDED)]
    # An eviction takes the pod out of kube-scheduler's node view at once.
    evicting = ssn.statement()
    evicting.evict(task_of(ssn, "running"), "test")
    assert statuses(ssn, "b", "n1") == []
    evicting.discard()
    assert statuses(ssn, "b", "n1") == [(UNSCHEDULABLE, NODE_POD_NUMBER_EXCEEDED)]
    statement.discard()
    assert statuses(ssn, "b", "n1") == []


def test_ports_follow_allocations() -> None:
    objects = [*base(), node("n1"), pod("a", ports=[port(80)]), pod("b", ports=[port(80)])]
    ssn = make_session(objects)
    assert statuses(ssn, "b", "n1") == []
    statement = ssn.statement()
    statement.allocate(task_of(ssn, "a"), ssn.nodes["n1"])
    assert statuses(ssn, "b", "n1") == [(UNSCHEDULABLE, ERR_PORTS)]
    statement.discard()
    assert statuses(ssn, "b", "n1") == []


def test_static_mask_is_shared_by_identical_tasks() -> None:
    objects = [
        *base(),
        node("n1", {"zone": "a"}),
        node("n2"),
        pod("a", node_selector={"zone": "a"}),
        pod("b", node_selector={"zone": "a"}),
    ]
    ssn = make_session(objects)
    first, second = ssn.predicate_masks(task_of(ssn, "a")), ssn.predicate_masks(task_of(ssn, "b"))
    assert first[0] is second[0]
    assert list(first[0].passed) == [True, False]
    assert first[0].reason(1) == Status(UNRESOLVABLE, ERR_AFFINITY, "NodeAffinity")


# -------------------------------------------------------------------------------------- properties

LABEL_KEYS = ("zone", "gen", "gpu")
LABEL_VALUES = ("a", "b", "1", "3", "10", "-2", "x")
TAINTS = (
    taint("k", "v", "NoSchedule"),
    taint("k", "w", "NoExecute"),
    taint("e", "", "NoSchedule"),
    taint("p", "q", "PreferNoSchedule"),
)
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bad")


NODE_LABELS = st.dictionaries(
    st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), max_size=3
)
NODE_TAINTS = st.lists(
    st.sampled_from(TAINTS), max_size=2, unique_by=lambda t: (t["key"], t["effect"])
)


@st.composite
def raw_nodes(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 8))
    nodes = []
    for i in range(count):
        labels, taints, unschedulable = draw(NODE_LABELS), draw(NODE_TAINTS), draw(st.booleans())
        allocatable = resource_list("1", "1G", pods="10")
        nodes.append(
            build_node(f"n{i}", allocatable, labels, taints=taints, unschedulable=unschedulable)
        )
    return nodes


EXPRESSIONS = st.fixed_dictionaries(
    {
        "key": st.sampled_from(LABEL_KEYS),
        "operator": st.sampled_from(OPERATORS),
        "values": st.lists(st.sampled_from(LABEL_VALUES), max_size=2),
    }
)
FIELDS = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["metadata.name", "metadata.uid"]),
        "operator": st.sampled_from(["In", "NotIn", "Exists"]),
        "values": st.lists(st.sampled_from(["n0", "n1", "n9"]), max_size=2),
    }
)
RAW_TERMS = st.fixed_dictionaries(
    {},
    optional={
        "matchExpressions": st.lists(EXPRESSIONS, max_size=3),
        "matchFields": st.lists(FIELDS, max_size=2),
    },
)
TOLERATIONS = st.lists(
    st.fixed_dictionaries(
        {
            "key": st.sampled_from(["", "k", "e", "p", "node.kubernetes.io/unschedulable"]),
            "operator": st.sampled_from(["", "Equal", "Exists"]),
            "value": st.sampled_from(["", "v", "w"]),
            "effect": st.sampled_from(["", "NoSchedule", "NoExecute", "PreferNoSchedule"]),
        }
    ),
    max_size=2,
)
NODE_SELECTORS = st.dictionaries(
    st.sampled_from(LABEL_KEYS), st.sampled_from(LABEL_VALUES), min_size=1, max_size=2
)


@st.composite
def raw_pods(draw: st.DrawFn) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["node_selector"] = draw(NODE_SELECTORS)
    if draw(st.booleans()):
        spec["affinity"] = required_node_affinity(*draw(st.lists(RAW_TERMS, max_size=3)))
    spec["tolerations"] = draw(TOLERATIONS) or None
    return build_pod("ns", "p", "", "Pending", resource_list("1", "1G"), "pg", **spec)


def _node_infos(nodes: Sequence[dict[str, Any]]) -> list[NodeInfo]:
    """NodeInfos carrying only the node objects (the index reads nothing else)."""
    matrix = NodeMatrix()
    return [
        NodeInfo(name=raw["metadata"]["name"], matrix=matrix, row=matrix.add_row(), node=raw)
        for raw in nodes
    ]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw_nodes(), raw_pods(), st.booleans(), st.booleans())
def test_static_mask_equals_scalar_rules(
    nodes: list[dict[str, Any]], raw_pod: dict[str, Any], node_affinity: bool, taints: bool
) -> None:
    index = NodeIndex(_node_infos(nodes))
    spec = StaticSpec.of(raw_pod)
    filters = StaticFilters(node_affinity, taints)
    mask = static_mask(spec, filters, index)
    for row in range(index.size):
        assert bool(mask[row]) == (static_status_at(spec, filters, index, row) is None)


@settings(max_examples=300, deadline=None)
@given(raw_nodes(), EXPRESSIONS)
def test_requirement_mask_equals_requirement(
    nodes: list[dict[str, Any]], expression: dict[str, Any]
) -> None:
    try:
        requirement = Requirement.parse(
            expression["key"], expression["operator"], expression["values"]
        )
    except SelectorError:
        requirement = Requirement(
            expression["key"], expression["operator"], tuple(expression["values"])
        )
    index = NodeIndex(_node_infos(nodes))
    mask = requirement_mask(requirement, index.column(requirement.key))
    for row in range(index.size):
        assert bool(mask[row]) == requirement.matches(index.labels(row))


POD_LABELS = st.dictionaries(
    st.sampled_from(["app", "tier"]), st.sampled_from(["db", "web"]), max_size=2
)


@st.composite
def affinity_sections(draw: st.DrawFn) -> dict[str, Any] | None:
    if not draw(st.booleans()):
        return None
    terms = st.builds(
        lambda labels, key: pod_term(labels, key),
        st.dictionaries(
            st.sampled_from(["app", "tier"]), st.sampled_from(["db", "web"]), min_size=1, max_size=1
        ),
        st.sampled_from([HOSTNAME, "zone"]),
    )
    section: dict[str, Any] = {}
    if draw(st.booleans()):
        section.update(pod_affinity(*draw(st.lists(terms, min_size=1, max_size=2))))
    if draw(st.booleans()):
        section.update(anti_affinity(*draw(st.lists(terms, min_size=1, max_size=2))))
    return section or None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_incremental_affinity_counts_equal_a_fresh_scan(data: st.DataObject) -> None:
    """Allocations and discards update a built filter state exactly as rebuilding it."""
    objects: Objects = [*base(), *ZONES]
    for i in range(data.draw(st.integers(0, 4))):
        where = data.draw(st.sampled_from(["a1", "a2", "b1", "nozone"]))
        objects.append(
            pod(
                f"old{i}",
                where,
                labels=data.draw(POD_LABELS),
                affinity=data.draw(affinity_sections()),
            )
        )
    pending = data.draw(st.integers(1, 4))
    for i in range(pending):
        objects.append(
            pod(f"new{i}", labels=data.draw(POD_LABELS), affinity=data.draw(affinity_sections()))
        )
    ssn = make_session(objects)
    pods = SessionPods(ssn)
    ssn.add_event_handler(pods.handler("test"))
    index = NodeIndex(ssn.node_list)
    tracker = AffinityTracker(pods, index)
    probe = task_of(ssn, "new0")
    tracker.filter_state(probe)
    tracker.score_state(probe)
    statement = ssn.statement()
    for i in range(1, pending):
        target = ssn.nodes[data.draw(st.sampled_from(["a1", "a2", "b1", "nozone"]))]
        statement.allocate(task_of(ssn, f"new{i}"), target)
    if data.draw(st.booleans()):
        statement.discard()
    fresh = AffinityTracker(pods, index)
    incremental, rebuilt = tracker.filter_state(probe), fresh.filter_state(probe)
    assert +incremental.affinity_counts == +rebuilt.affinity_counts
    assert +incremental.anti_counts == +rebuilt.anti_counts
    assert +incremental.existing_anti_counts == +rebuilt.existing_anti_counts
    for row in range(index.size):
        assert tracker.score_state(probe).score(index.labels(row)) == fresh.score_state(
            probe
        ).score(index.labels(row))


def test_task_status_after_discard_is_pending() -> None:
    """Sanity for the event-driven tests above: a discarded allocation leaves the task
    Pending and off the node."""
    ssn = make_session([*base(), node("n1"), pod("a")])
    task = task_of(ssn, "a")
    statement = ssn.statement()
    statement.allocate(task, ssn.nodes["n1"])
    statement.discard()
    assert task.status is TaskStatus.PENDING and not ssn.nodes["n1"].tasks
    assert np.array_equal(ssn.predicate_masks(task)[1].passed, [True])


# --------------------------------------------------------------------------- PodTopologySpread

SPREAD_NODES: Objects = [
    node("a1", {HOSTNAME: "a1", "zone": "a"}),
    node("a2", {HOSTNAME: "a2", "zone": "a"}),
    node("b1", {HOSTNAME: "b1", "zone": "b"}),
    node("nozone", {HOSTNAME: "nozone"}),
]


def spread_pod(
    name: str, node_name: str = "", *constraints: dict[str, Any], **kwargs: Any
) -> tuple[str, dict[str, Any]]:
    kind, raw = pod(name, node_name, labels=kwargs.pop("labels", {"app": "foo"}), **kwargs)
    if constraints:
        raw["spec"]["topologySpreadConstraints"] = list(constraints)
    return kind, raw


def spread(
    key: str = "zone", skew: int = 1, action: str = "DoNotSchedule", **extra: Any
) -> dict[str, Any]:
    return {
        "maxSkew": skew,
        "topologyKey": key,
        "whenUnsatisfiable": action,
        "labelSelector": {"matchLabels": {"app": "foo"}},
        **extra,
    }


ERR_SPREAD = "node(s) didn't match pod topology spread constraints"


def test_topology_spread_skew() -> None:
    """Zone a holds 2 matching pods, b none: a node in a would make the skew 3 > 1."""
    objects = [
        *base(),
        *SPREAD_NODES,
        spread_pod("x1", "a1"),
        spread_pod("x2", "a2"),
        spread_pod("p", "", spread()),
    ]
    ssn = make_session(objects)
    assert feasible(ssn, "p") == ["b1"]
    assert statuses(ssn, "p", "a1") == [(UNSCHEDULABLE, ERR_SPREAD)]
    assert statuses(ssn, "p", "nozone") == [
        (UNRESOLVABLE, ERR_SPREAD + " (missing required label)")
    ]


def test_topology_spread_follows_session_events() -> None:
    objects = [
        *base(),
        *SPREAD_NODES,
        spread_pod("x1", "a1"),
        spread_pod("q", ""),
        spread_pod("p", "", spread()),
    ]
    ssn = make_session(objects)
    assert feasible(ssn, "p") == ["b1"]
    statement = ssn.statement()
    statement.allocate(task_of(ssn, "q"), ssn.nodes["b1"])
    assert feasible(ssn, "p") == ["a1", "a2", "b1"]
    statement.discard()
    assert feasible(ssn, "p") == ["b1"]


def test_topology_spread_min_domains_and_policies() -> None:
    placed = [spread_pod("x1", "a1"), spread_pod("x2", "a2")]
    # Only zone a is eligible under the pod's node selector (nodeAffinityPolicy Honor): one
    # domain, minimum 2, skew 1 on a.
    honor = spread_pod("honor", "", spread(), node_selector={"zone": "a"})
    ignore = spread_pod(
        "ignore", "", spread(nodeAffinityPolicy="Ignore"), node_selector={"zone": "a"}
    )
    # Two domains (a: 2, b: 0) but minDomains 3: the minimum counts as 0.
    min_domains = spread_pod("min-domains", "", spread(skew=2, minDomains=3))
    objects = [*base(), *SPREAD_NODES, *placed, honor, ignore, min_domains]
    ssn = make_session(objects)
    assert feasible(ssn, "honor") == ["a1", "a2"]
    assert feasible(ssn, "ignore") == []
    assert feasible(ssn, "min-domains") == ["b1"]


def test_topology_spread_taints_policy() -> None:
    tainted = node(
        "b1",
        {HOSTNAME: "b1", "zone": "b"},
        taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}],
    )
    tolerate = [{"key": "k", "operator": "Exists"}]
    objects = [
        *base(),
        node("a1", {HOSTNAME: "a1", "zone": "a"}),
        tainted,
        spread_pod("x1", "a1"),
        # Taints ignored (default): zone b counts as an empty domain, a would be skew 2.
        spread_pod("ignore", "", spread(), tolerations=tolerate),
        # Honor: the pod tolerates b1's taint, so b still counts.
        spread_pod("honor", "", spread(nodeTaintsPolicy="Honor"), tolerations=tolerate),
        # Honor without the toleration: zone b is not a domain, so a alone has minimum 1.
        spread_pod("strict", "", spread(nodeTaintsPolicy="Honor"), labels={"app": "foo"}),
    ]
    ssn = make_session(objects, {"predicate.TaintTolerationEnable": False})
    assert feasible(ssn, "ignore") == ["b1"]
    assert feasible(ssn, "honor") == ["b1"]
    assert feasible(ssn, "strict") == ["a1", "b1"]


def test_topology_spread_counts_namespace_non_terminating_and_match_label_keys() -> None:
    terminating = spread_pod("gone", "b1")
    terminating[1]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    other_ns = (
        "Pod",
        build_pod("other", "y", "b1", "Running", resource_list("1", "1G"), "", {"app": "foo"}),
    )
    keyed = spread_pod(
        "keyed", "", spread(matchLabelKeys=["rev"]), labels={"app": "foo", "rev": "2"}
    )
    objects = [
        *base(),
        *SPREAD_NODES,
        spread_pod("x1", "a1", labels={"app": "foo", "rev": "1"}),
        terminating,
        other_ns,
        spread_pod("p", "", spread()),
        keyed,
    ]
    ssn = make_session(objects)
    # a: 1, b: 0 (the terminating pod and the other namespace's pod do not count).
    assert feasible(ssn, "p") == ["b1"]
    # With matchLabelKeys [rev] only rev=2 pods count: none anywhere.
    assert feasible(ssn, "keyed") == ["a1", "a2", "b1"]


def test_topology_spread_bad_selector_fails_pre_predicate() -> None:
    bad = spread()
    bad["labelSelector"] = {"matchExpressions": [{"key": "app", "operator": "In"}]}
    ssn = make_session([*base(), *SPREAD_NODES, spread_pod("p", "", bad)])
    status = ssn.pre_predicate_fn(task_of(ssn, "p"))
    assert status is not None and status.reason.startswith(
        "plugin PodTopologySpread pre-predicates failed get constraints from pod"
    )


SPREAD_LABELS = st.sampled_from([{"app": "foo"}, {"app": "bar"}, {"app": "foo", "rev": "1"}, {}])
SPREAD_CONSTRAINT = st.fixed_dictionaries(
    {
        "maxSkew": st.integers(1, 2),
        "topologyKey": st.sampled_from(["zone", HOSTNAME, "rack"]),
        "whenUnsatisfiable": st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]),
        "labelSelector": st.sampled_from(
            [
                {"matchLabels": {"app": "foo"}},
                {},
                {"matchExpressions": [{"key": "app", "operator": "Exists"}]},
            ]
        ),
    },
    optional={
        "minDomains": st.integers(1, 4),
        "nodeAffinityPolicy": st.sampled_from(["Honor", "Ignore"]),
        "nodeTaintsPolicy": st.sampled_from(["Honor", "Ignore"]),
        "matchLabelKeys": st.just(["rev"]),
    },
)


@st.composite
def spread_clusters(draw: st.DrawFn) -> Objects:
    objects: Objects = [*base()]
    names = []
    for i in range(draw(st.integers(1, 5))):
        node_labels = {HOSTNAME: f"n{i}"}
        if draw(st.booleans()):
            node_labels["zone"] = draw(st.sampled_from(["a", "b", "c"]))
        if draw(st.booleans()):
            node_labels["rack"] = draw(st.sampled_from(["r1", "r2"]))
        taints = (
            [{"key": "k", "value": "v", "effect": "NoSchedule"}] if draw(st.booleans()) else None
        )
        objects.append(node(f"n{i}", node_labels, taints=taints))
        names.append(f"n{i}")
    for j in range(draw(st.integers(0, 6))):
        kind, raw = pod(f"x{j}", draw(st.sampled_from(names)), labels=draw(SPREAD_LABELS))
        if draw(st.booleans()):
            raw["metadata"]["namespace"] = "elsewhere"
        if draw(st.integers(0, 4)) == 0:
            raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
        objects.append((kind, raw))
    extra: dict[str, Any] = {}
    if draw(st.booleans()):
        extra["node_selector"] = {"zone": draw(st.sampled_from(["a", "b"]))}
    if draw(st.booleans()):
        extra["tolerations"] = [{"key": "k", "operator": "Exists"}]
    constraints = draw(st.lists(SPREAD_CONSTRAINT, min_size=1, max_size=2))
    objects.append(spread_pod("p", "", *constraints, labels=draw(SPREAD_LABELS), **extra))
    return objects


def spread_views(ssn: Session) -> list[NodeView]:
    index = NodeIndex(ssn.node_list)
    return [
        NodeView(
            n.name,
            n.labels,
            index.taints(n.row),
            tuple((t.namespace, t.pod) for t in n.tasks.values()),
        )
        for n in ssn.node_list
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spread_clusters())
def test_topology_spread_mask_equals_reference(objects: Objects) -> None:
    ssn = make_session(objects)
    pods = SessionPods(ssn)
    spread_state = TopologySpread(pods, NodeIndex(ssn.node_list))
    task = task_of(ssn, "p")
    expected = filter_reference(task.pod, task.namespace, spread_views(ssn))
    mask = spread_state.mask(task)
    if mask is None:
        assert all(status is None for status in expected)
        return
    for row, status in enumerate(expected):
        assert bool(mask.passed[row]) == (status is None)
        if status is not None:
            assert mask.reason(row) == status


def test_topology_spread_switched_off() -> None:
    """``TestInitPlugin``: with ``predicate.PodTopologySpreadEnable: false`` no spreading."""
    objects = [*base(), *SPREAD_NODES, spread_pod("x1", "a1"), spread_pod("p", "", spread())]
    ssn = make_session(objects, {"predicate.PodTopologySpreadEnable": False})
    assert feasible(ssn, "p") == ["a1", "a2", "b1", "nozone"]
