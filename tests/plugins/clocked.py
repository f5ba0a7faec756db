"""``run_case`` with the session clock set: time-based plugins (sla deadlines, cdp cooldowns,
tdm windows) are tested at a chosen instant, where upstream's tests read the wall clock."""

from __future__ import annotations

from collections.abc import Sequence

from tests.harness import Case, Outcome, tiers_of
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import (
    RecordingBinder,
    RecordingEventRecorder,
    RecordingEvictor,
    RecordingStatusUpdater,
)
from volcano_py.framework.conf import SchedulerConf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.registry import PluginRegistry, new_action


def run_case_at(case: Case, actions: Sequence[str], now: float) -> Outcome:
    """``run_case(case, actions)`` with the session clock at ``now`` (Unix seconds)."""
    binder, evictor = RecordingBinder(), RecordingEvictor()
    status, recorder = RecordingStatusUpdater(), RecordingEventRecorder()
    cache = SchedulerCache(binder=binder, evictor=evictor, status_updater=status, recorder=recorder)
    objects = [
        *(("Node", node) for node in case.nodes),
        *(("Pod", pod) for pod in case.pods),
        *(("PodGroup", pod_group) for pod_group in case.pod_groups),
        *(("Queue", queue) for queue in case.queues),
        *(("PriorityClass", priority_class) for priority_class in case.priority_classes),
        *(("HyperNode", hyper_node) for hyper_node in case.hyper_nodes),
        *case.others,
    ]
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(
        actions=list(actions),
        tiers=tiers_of(case.plugins, case.arguments),
        configurations={k: dict(v) for k, v in case.configurations.items()},
    )
    state = SchedulingState(seed=case.seed, clock=lambda: now)
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
    for name in actions:
        new_action(name).execute(ssn)
    close_session(ssn)
    return Outcome(binder, evictor, status, recorder, ssn, cache)
