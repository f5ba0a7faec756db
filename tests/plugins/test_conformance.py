"""conformance plugin (``pkg/scheduler/plugins/conformance``).

Transcribes upstream ``conformance_test.go`` ``TestConformancePlugin`` (case "conformance
plugin") and adds the critical-class and reclaim paths it does not cover.
"""

from __future__ import annotations

import pytest

from tests.builders import build_pod, resource_list
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import conformance


def make_session(*flags: str) -> Session:
    cache = SchedulerCache()
    conf = SchedulerConf(actions=[], tiers=[Tier([PluginOption.with_flags("conformance", *flags)])])
    return open_session(cache.snapshot(), conf, {"conformance": conformance.new}, cache)


def task(namespace: str, name: str = "test-pod", priority_class: str = "") -> TaskInfo:
    pod = build_pod(
        namespace,
        name,
        "test-node",
        "Running",
        resource_list("1", "1Gi"),
        "pg1",
        priority_class_name=priority_class,
    )
    return TaskInfo.from_pod(pod)


def empty_task() -> TaskInfo:
    return TaskInfo("", "", "", "", {}, Resource(), Resource())


def test_conformance_plugin() -> None:
    """``TestConformancePlugin`` "conformance plugin": a kube-system pod is never a victim."""
    system_task = task("kube-system")
    user_task = task("test-namespace")
    ssn = make_session("enablePreemptable")
    assert ssn.preemptable(empty_task(), [system_task, user_task]) == [user_task]


@pytest.mark.parametrize("priority_class", ["system-cluster-critical", "system-node-critical"])
@pytest.mark.parametrize("flag", ["enablePreemptable", "enableReclaimable"])
def test_critical_classes_are_never_victims(flag: str, priority_class: str) -> None:
    critical = task("default", "critical", priority_class)
    ordinary = task("default", "ordinary", "high-priority")
    ssn = make_session(flag)
    dispatch = ssn.preemptable if flag == "enablePreemptable" else ssn.reclaimable
    assert dispatch(empty_task(), [critical, ordinary]) == [ordinary]


def test_only_protected_candidates_leave_the_tier_undecided() -> None:
    # An empty answer is "no victims" from this tier, not a veto (spec §2.8).
    ssn = make_session("enablePreemptable")
    assert ssn.preemptable(empty_task(), [task("kube-system")]) == []
