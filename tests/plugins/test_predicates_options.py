"""predicates' arguments beyond the filter switches (``predicates.go``, ``helper.go``,
``cache.go``).

* ``predicate.ProportionalEnable`` / ``predicate.resources*``: Volcano v1.13 moved the policy to
  resource-strategy-fit (whose tests transcribe ``proportional_test.go``) and its predicates
  plugin reads them no more: here too they change nothing (retired: logged once at info, not
  warned; tests/framework/test_conf_check.py).
* ``predicate.CacheEnable``: changes nothing observable (the static masks are already cached
  per signature); the same session with and without it decides the same.
* Volume arguments: each named in one warning, once. The retired GPU-sharing and DRA switches
  warn nothing (``dynamicresources.filterTimeoutSeconds`` acts: tests/plugins/test_dra_mask.py).
* ``ARGUMENTS`` lists every key upstream reads.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, check, run_case
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import predicates
from volcano_py.plugins.predicates import plugin as predicates_plugin

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


def test_proportional_arguments_change_no_decision(fresh_warnings: None) -> None:
    """The case that Volcano <= v1.12's policy would refuse (6 cpu on the GPU node would leave
    2 of the 4 cpus it keeps for its GPU) binds there, as on Volcano v1.13+."""
    case = proportional_case(PROPORTIONAL, {"ns/cpu-job": "gpu-node", "ns/gpu-job": "gpu-node"})
    check(case, run_case(case, ["allocate"]))


def test_ported_switches_do_not_warn(
    fresh_warnings: None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        predicates.new(
            Arguments({"predicate.CacheEnable": True, "predicate.NodeAffinityEnable": False})
        )
    assert caplog.records == []


@pytest.mark.parametrize(
    "key",
    [
        "predicate.GPUSharingEnable",
        "predicate.GPUNumberEnable",
        "predicate.DynamicResourceAllocationEnable",
        "predicate.ProportionalEnable",
        "predicate.resources",
        f"predicate.resources.{GPU}.cpu",
    ],
)
def test_retired_switches_are_not_warned_by_the_plugin(
    key: str, fresh_warnings: None, caplog: pytest.LogCaptureFixture
) -> None:
    """Volcano's predicates plugin reads them no more: inert (the conf check logs them once
    at info level)."""
    with caplog.at_level(logging.WARNING):
        predicates.new(Arguments({key: "not even a bool"}))
    assert caplog.records == []
    assert predicates.RETIRED_ARGUMENTS


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
    } == predicates.ARGUMENTS | predicates.UNSUPPORTED_ARGUMENTS | set(predicates.RETIRED_ARGUMENTS)
