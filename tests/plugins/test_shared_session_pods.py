"""predicates and nodeorder share one view of the session's pods (``session_pods``) and one
inter-pod affinity tracker (``affinity_tracker``), each told once per event; with the switches
off each plugin keeps its own (issue 14: a placement's events were handled twice). That both
ways hand out the same is ``tests/framework/test_session_shortcut_outputs.py``'s part."""

from __future__ import annotations

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import default_conf
from volcano_py.framework.session import SchedulingState, Session, open_session
from volcano_py.plugins._kube_scheduling import affinity_tracker, session_pods
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry


def _session() -> Session:
    cache = SchedulerCache()
    cache.apply_event("Queue", "ADDED", build_queue("default"))
    cache.apply_event("Node", "ADDED", build_node("n1", resource_list("4", "8Gi", pods="110")))
    cache.apply_event("PodGroup", "ADDED", build_pod_group("g", "ns", "default", 1))
    cache.apply_event(
        "Pod", "ADDED", build_pod("ns", "p", "", "Pending", resource_list("1", "1Gi"), "g")
    )
    conf = default_conf(BUILTIN_ACTIONS)
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState())


def _pods_handlers(ssn: Session) -> int:
    return sum(
        1
        for handler in ssn.event_handlers
        if getattr(handler.allocate, "__self__", None).__class__ is SessionPods
    )


@pytest.mark.parametrize("shared", [True, False])
def test_one_view_of_the_pods_per_session_when_shared(shared: bool) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(session_pods, "_SHARED", shared)
        monkeypatch.setattr(affinity_tracker, "_SHARED", shared)
        ssn = _session()
    assert _pods_handlers(ssn) == (1 if shared else 2)
    assert (session_pods._SHARED_KEY in ssn.shared) is shared
    assert (affinity_tracker._SHARED_KEY in ssn.shared) is shared


def test_the_trackers_every_pod_answer_follows_its_states() -> None:
    """``_count_every_pod`` is kept between placements (``affinity_tracker._KEEP_EVERY_POD``)
    and asked again once a state comes: a pod with preferred terms of its own is scored
    against every pod, so from then on every pod's placement counts."""
    ssn = _session()
    tracker = ssn.shared[affinity_tracker._SHARED_KEY]
    assert isinstance(tracker, affinity_tracker.AffinityTracker)
    task = next(t for job in ssn.jobs.values() for t in job.tasks.values())
    assert tracker._count_every_pod() is False
    tracker.score_state(task)
    assert tracker._count_every_pod() is False
    preferring = build_pod(
        "ns",
        "q",
        "",
        "Pending",
        resource_list("1", "1Gi"),
        "g",
        affinity={
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 1,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": "x"}},
                            "topologyKey": "zone",
                        },
                    }
                ]
            }
        },
    )
    tracker.score_state(TaskInfo.from_pod(preferring))
    assert tracker._count_every_pod() is True
