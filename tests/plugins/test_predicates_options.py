"""predicates' arguments beyond the filter switches (``predicates.go``, ``helper.go``,
``cache.go``; Volcano <= v1.12 ``proportional.go``).

* ``predicate.ProportionalEnable`` / ``predicate.resources`` / ``predicate.resources.<r>.cpu``
  and ``.memory``: transcribes ``Test_checkNodeResourceIsProportional`` (v1.12
  ``predicates/proportional_test.go``, now ``resource-strategy-fit/proportional_test.go``, all
  four cases) against the scalar rule and the vectorised mask; the argument parsing; a
  Hypothesis test that the mask equals the rule; a whole allocate session.
* ``predicate.CacheEnable``: changes nothing observable (the static masks are already cached
  per signature); the same session with and without it decides the same.
* Volume, DRA and GPU-sharing arguments: each named in one warning, once.
* ``ARGUMENTS`` lists every key upstream reads.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, check, run_case
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import StatusCode
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import predicates
from volcano_py.plugins.predicates import plugin as predicates_plugin
from volcano_py.plugins.predicates.proportional import Rate, parse_proportional, proportional_status

GPU = "nvidia.com/gpu"
PROPORTIONAL = {
    "predicate.ProportionalEnable": True,
    "predicate.resources": GPU,
    f"predicate.resources.{GPU}.cpu": 4,
    f"predicate.resources.{GPU}.memory": 4,
}


def gpu_list(cpu: str, memory: str, gpu: str) -> dict[str, str]:
    """``api.BuildResourceListWithGPU``."""
    return resource_list(cpu, memory, **{GPU: gpu})


def make_session(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], arguments: dict[str, Any]
) -> Session:
    cache = SchedulerCache()
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1))
    cache.apply_event("PodGroup", "ADDED", build_pod_group("pg", "ns", "q1", 0))
    for node in nodes:
        cache.apply_event("Node", "ADDED", node)
    for pod in pods:
        cache.apply_event("Pod", "ADDED", pod)
    option = PluginOption.with_flags("predicates", "enablePredicate", arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"predicates": predicates.new}, cache)


# --------------------------------------------------- Test_checkNodeResourceIsProportional

T1 = gpu_list("4", "4G", "0")
T2 = gpu_list("10", "10G", "0")
T3 = gpu_list("10", "10G", "1")
N1 = gpu_list("30", "30G", "6")
N2 = gpu_list("26", "26G", "2")


@pytest.mark.parametrize(
    ("case", "task", "node", "expected"),
    [
        ("cpu_task_less_than_reserved_resource", T1, N1, StatusCode.SUCCESS),
        (
            "cpu_task_greater_than_reserved_resource",
            T2,
            N1,
            StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ),
        ("gpu_task_no_proportional_check", T3, N1, StatusCode.SUCCESS),
        ("cpu_task_less_than_idle_resource", T2, N2, StatusCode.SUCCESS),
    ],
)
def test_check_node_resource_is_proportional(
    case: str, task: dict[str, str], node: dict[str, str], expected: StatusCode
) -> None:
    """Upstream ``Test_checkNodeResourceIsProportional``: the scalar rule, then the mask over a
    session whose only node is ``node`` (idle = allocatable) for a pending pod asking ``task``."""
    rates = {GPU: Rate(cpu=4, memory=4)}
    want, idle = Resource.from_list(task), Resource.from_list(node)
    status = proportional_status(
        want.milli_cpu,
        want.memory,
        want.scalar_resources,
        idle.milli_cpu,
        idle.memory,
        idle.scalar_resources,
        rates,
    )
    assert (status.code if status else StatusCode.SUCCESS) == expected, case
    if status is not None:
        assert status.reason == f"proportional of resource {GPU} check failed"

    ssn = make_session(
        [build_node("n", node | {"pods": "10"})],
        [build_pod("ns", "p", "", "Pending", task, "pg")],
        PROPORTIONAL,
    )
    [pending] = ssn.jobs["ns/pg"].tasks.values()
    statuses = ssn.predicate_fn(pending, ssn.nodes["n"])
    assert [s.code for s in statuses] == ([] if expected == StatusCode.SUCCESS else [expected]), (
        case
    )


# ------------------------------------------------------------------ arguments


def test_proportional_arguments_parse_as_upstream() -> None:
    """Comma-separated names, trimmed; rates default to 1; a negative rate counts as 1."""
    arguments = Arguments(
        {
            "predicate.resources": f" {GPU}, example.com/fpga ,",
            f"predicate.resources.{GPU}.cpu": 8,
            f"predicate.resources.{GPU}.memory": -2,
            "predicate.resources.example.com/fpga.memory": 1.5,
        }
    )
    assert parse_proportional(arguments) == {
        GPU: Rate(cpu=8.0, memory=1.0),
        "example.com/fpga": Rate(cpu=1.0, memory=1.5),
    }


def test_proportional_needs_the_switch() -> None:
    """``predicate.resources`` without ``predicate.ProportionalEnable: true`` restricts
    nothing (upstream's default is off)."""
    arguments = {key: value for key, value in PROPORTIONAL.items() if "Enable" not in key}
    ssn = make_session(
        [build_node("n", N1 | {"pods": "10"})],
        [build_pod("ns", "p", "", "Pending", T2, "pg")],
        arguments,
    )
    [pending] = ssn.jobs["ns/pg"].tasks.values()
    assert ssn.predicate_fn(pending, ssn.nodes["n"]) == ()


def test_a_node_without_the_resource_is_not_restricted() -> None:
    ssn = make_session(
        [build_node("plain", resource_list("2", "2G", pods="10"))],
        [build_pod("ns", "p", "", "Pending", resource_list("2", "2G"), "pg")],
        PROPORTIONAL,
    )
    [pending] = ssn.jobs["ns/pg"].tasks.values()
    assert ssn.predicate_fn(pending, ssn.nodes["plain"]) == ()


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(
        st.tuples(st.integers(0, 16), st.integers(0, 32), st.one_of(st.none(), st.integers(0, 8))),
        min_size=1,
        max_size=6,
    ),
    request=st.tuples(st.integers(0, 12), st.integers(0, 24), st.integers(0, 1)),
    rate=st.tuples(st.integers(0, 4), st.integers(0, 4)),
)
def test_mask_equals_the_rule(
    nodes: list[tuple[int, int, int | None]],
    request: tuple[int, int, int],
    rate: tuple[int, int],
) -> None:
    """The vectorised mask (and each failing row's reason) equals ``proportional_status``."""
    arguments = {
        **PROPORTIONAL,
        f"predicate.resources.{GPU}.cpu": rate[0],
        f"predicate.resources.{GPU}.memory": rate[1],
    }
    built = []
    for index, (cpu, memory, gpu) in enumerate(nodes):
        allocatable = resource_list(str(cpu), f"{memory}G", pods="110")
        if gpu is not None:
            allocatable[GPU] = str(gpu)
        built.append(build_node(f"n{index}", allocatable))
    cpu, memory, gpu = request
    asked = resource_list(str(cpu), f"{memory}G", **({GPU: "1"} if gpu else {}))
    ssn = make_session(built, [build_pod("ns", "p", "", "Pending", asked, "pg")], arguments)
    [pending] = ssn.jobs["ns/pg"].tasks.values()
    rates = {GPU: Rate(float(rate[0]), float(rate[1]))}
    for node in ssn.node_list:
        idle = node.idle
        scalars = {n: v for n, v in idle.scalar_resources.items() if n in node.defined_scalars}
        expected = proportional_status(
            pending.resreq.milli_cpu,
            pending.resreq.memory,
            pending.resreq.scalar_resources,
            idle.milli_cpu,
            idle.memory,
            scalars,
            rates,
        )
        assert ssn.predicate_fn(pending, node) == (() if expected is None else (expected,))


# ------------------------------------------------------------------ a whole session


def proportional_case(arguments: dict[str, Any], expect: dict[str, str]) -> Case:
    """A GPU node (8 cpu, 1 GPU: 4 cpu kept free) and a 4-cpu node. The 6-cpu pod fits only
    the GPU node, which would then keep 2 cpus free: refused with the policy. The GPU pod is
    not restricted."""
    return Case(
        name="proportional",
        plugins={"predicates": ["enablePredicate"]},
        nodes=[
            build_node("gpu-node", gpu_list("8", "16G", "1") | {"pods": "10"}),
            build_node("cpu-node", resource_list("4", "16G", pods="10")),
        ],
        pods=[
            build_pod("ns", "cpu-job", "", "Pending", resource_list("6", "1G"), "pg-cpu"),
            build_pod("ns", "gpu-job", "", "Pending", gpu_list("1", "1G", "1"), "pg-gpu"),
        ],
        pod_groups=[
            build_pod_group("pg-cpu", "ns", "q1", 1),
            build_pod_group("pg-gpu", "ns", "q1", 1),
        ],
        queues=[build_queue("q1", 1)],
        arguments={"predicates": arguments},
        expect_bind_map=expect,
    )


def test_proportional_session() -> None:
    with_policy = proportional_case(PROPORTIONAL, {"ns/gpu-job": "gpu-node"})
    outcome = run_case(with_policy, ["allocate"])
    check(with_policy, outcome)
    assert f"proportional of resource {GPU} check failed" in str(
        outcome.session.jobs["ns/pg-cpu"].job_fit_errors
    ) or any(
        f"proportional of resource {GPU} check failed" in str(errors)
        for errors in outcome.session.jobs["ns/pg-cpu"].nodes_fit_errors.values()
    )
    without = proportional_case({}, {"ns/cpu-job": "gpu-node", "ns/gpu-job": "gpu-node"})
    check(without, run_case(without, ["allocate"]))


@pytest.mark.parametrize("cache", [False, True])
def test_cache_enable_changes_nothing_observable(cache: bool) -> None:
    """``predicate.CacheEnable`` caches the stable filters per node and pod template upstream;
    the masks are cached per pod signature always, so the decisions are the same either way."""
    hostname = "kubernetes.io/hostname"
    selector = {"zone": "a"}
    case = Case(
        name=f"CacheEnable={cache}",
        plugins={"predicates": ["enablePredicate"]},
        nodes=[
            build_node("n1", resource_list("2", "4G", pods="10"), {"zone": "a", hostname: "n1"}),
            build_node("n2", resource_list("2", "4G", pods="10"), {"zone": "b", hostname: "n2"}),
        ],
        pods=[
            build_pod("ns", f"w{i}", "", "Pending", resource_list("1", "1G"), "pg", {}, selector)
            for i in range(3)
        ],
        pod_groups=[build_pod_group("pg", "ns", "q1", 1)],
        queues=[build_queue("q1", 1)],
        arguments={"predicates": {"predicate.CacheEnable": cache}},
        expect_bind_map={"ns/w0": "n1", "ns/w1": "n1"},
    )
    outcome = run_case(case, ["allocate"])
    check(case, outcome)
    plugin = outcome.session.plugins["predicates"]
    assert isinstance(plugin, predicates.PredicatesPlugin)
    assert plugin.flags.cache is cache


# ------------------------------------------------------------------ warnings


@pytest.fixture
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(predicates_plugin, "_warned", set())


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("predicate.NodeVolumeLimitsEnable", "volumes are not modelled"),
        ("predicate.VolumeZoneEnable", "volumes are not modelled"),
        ("predicate.VolumeBindingEnable", "volumes are not modelled"),
        ("volumebinding.bindTimeoutSeconds", "volumes are not modelled"),
        ("volumebinding.weight", "volumes are not modelled"),
        ("volumebinding.shape", "volumes are not modelled"),
        ("predicate.DynamicResourceAllocationEnable", "feature gate"),
        ("dynamicresources.filterTimeoutSeconds", "resource claims (DRA)"),
        ("predicate.GPUSharingEnable", "deviceshare.GPUSharingEnable"),
        ("predicate.GPUNumberEnable", "deviceshare.GPUNumberEnable"),
    ],
)
def test_unported_arguments_warn_once(
    key: str, words: str, fresh_warnings: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        predicates.new(Arguments({key: True}))
        predicates.new(Arguments({key: False}))
    messages = [record.getMessage() for record in caplog.records]
    assert len(messages) == 1
    assert f"predicates: argument {key} has no effect" in messages[0]
    assert words in messages[0]


def test_proportional_says_where_upstream_moved_it(
    fresh_warnings: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        predicates.new(Arguments(PROPORTIONAL))
        predicates.new(Arguments(PROPORTIONAL))
    [message] = [record.getMessage() for record in caplog.records]
    assert "predicate.ProportionalEnable is honoured as Volcano <= v1.12 did" in message
    assert "resource-strategy-fit" in message


def test_ported_switches_do_not_warn(
    fresh_warnings: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        predicates.new(
            Arguments({"predicate.CacheEnable": True, "predicate.NodeAffinityEnable": False})
        )
    assert caplog.records == []


def test_arguments_declare_every_key_upstream_reads() -> None:
    assert {
        "predicate.NodeAffinityEnable",
        "predicate.NodePortsEnable",
        "predicate.TaintTolerationEnable",
        "predicate.PodAffinityEnable",
        "predicate.NodeVolumeLimitsEnable",
        "predicate.VolumeZoneEnable",
        "predicate.PodTopologySpreadEnable",
        "predicate.VolumeBindingEnable",
        "predicate.DynamicResourceAllocationEnable",
        "predicate.CacheEnable",
        "predicate.ProportionalEnable",
        "predicate.resources",
        "predicate.resources.*",
        "predicate.GPUSharingEnable",
        "predicate.GPUNumberEnable",
        "volumebinding.bindTimeoutSeconds",
        "volumebinding.weight",
        "volumebinding.shape",
        "dynamicresources.filterTimeoutSeconds",
    } == predicates.ARGUMENTS


def test_mask_follows_placements() -> None:
    """Idle changes after a placement: the mask is recomputed (SessionPods.version)."""
    ssn = make_session(
        [build_node("n", gpu_list("10", "32G", "1") | {"pods": "10"})],
        [
            build_pod("ns", "a", "", "Pending", resource_list("4", "1G"), "pg"),
            build_pod("ns", "b", "", "Pending", resource_list("4", "1G"), "pg"),
        ],
        PROPORTIONAL,
    )
    first, second = sorted(ssn.jobs["ns/pg"].tasks.values(), key=lambda t: t.name)
    node = ssn.nodes["n"]
    assert ssn.predicate_fn(first, node) == ()  # 10 - 4 >= 4
    statement_allocate(ssn, first, "n")
    statuses = ssn.predicate_fn(second, node)  # 6 - 4 < 4
    assert [s.code for s in statuses] == [StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE]
    assert np.all(node.idle.milli_cpu == 6000)


def statement_allocate(ssn: Session, task: TaskInfo, node_name: str) -> None:
    from volcano_py.framework.statement import Statement

    statement = Statement(ssn)
    statement.allocate(task, ssn.nodes[node_name])
    statement.commit()
