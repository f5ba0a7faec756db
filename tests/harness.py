"""Run one session over given objects and check its decisions, as upstream's
``uthelper.TestCommonStruct`` does (``pkg/scheduler/uthelper/helper.go``).

Tiers are built in code, so only the flags a case names are enabled (upstream applies no flag
defaults in unit tests). Binds, evictions and pipelined placements are recorded by fakes and
compared with the case's expectations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import (
    RecordingBinder,
    RecordingEventRecorder,
    RecordingEvictor,
    RecordingStatusUpdater,
)
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.scheduler.registry import PluginRegistry, new_action

# plugin name -> the enable flags the case turns on (one tier), or a list of such tiers.
PluginFlags = Mapping[str, Sequence[str]]


def tiers_of(
    plugins: PluginFlags | Sequence[PluginFlags],
    arguments: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[Tier]:
    groups = [plugins] if isinstance(plugins, Mapping) else list(plugins)
    arguments = arguments or {}
    return [
        Tier(
            [
                PluginOption.with_flags(name, *flags, arguments=arguments.get(name))
                for name, flags in group.items()
            ]
        )
        for group in groups
    ]


@dataclass
class Case:
    name: str
    plugins: PluginFlags | Sequence[PluginFlags]
    nodes: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    pod_groups: list[dict[str, Any]] = field(default_factory=list)
    queues: list[dict[str, Any]] = field(default_factory=list)
    priority_classes: list[dict[str, Any]] = field(default_factory=list)
    hyper_nodes: list[dict[str, Any]] = field(default_factory=list)
    others: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    arguments: dict[str, dict[str, Any]] = field(default_factory=dict)
    configurations: dict[str, dict[str, Any]] = field(default_factory=dict)
    expect_bind_map: dict[str, str] = field(default_factory=dict)
    expect_binds_num: int | None = None
    expect_evicted: list[str] = field(default_factory=list)
    expect_evict_num: int | None = None
    # job id -> nodes its pipelined tasks may sit on
    expect_pipelined: dict[str, list[str]] = field(default_factory=dict)
    # job id -> PodGroup phase after close
    expect_status: dict[str, str] = field(default_factory=dict)
    expect_task_status_nums: dict[str, dict[TaskStatus, int]] = field(default_factory=dict)
    minimal_bind_check: bool = False
    seed: int = 0


@dataclass
class Outcome:
    binder: RecordingBinder
    evictor: RecordingEvictor
    status: RecordingStatusUpdater
    recorder: RecordingEventRecorder
    session: Session
    cache: SchedulerCache


def run_case(case: Case, actions: Sequence[str], registry: PluginRegistry | None = None) -> Outcome:
    binder, evictor = RecordingBinder(), RecordingEvictor()
    status, recorder = RecordingStatusUpdater(), RecordingEventRecorder()
    cache = SchedulerCache(binder=binder, evictor=evictor, status_updater=status, recorder=recorder)
    for node in case.nodes:
        cache.apply_event("Node", "ADDED", node)
    for pod in case.pods:
        cache.apply_event("Pod", "ADDED", pod)
    for pod_group in case.pod_groups:
        cache.apply_event("PodGroup", "ADDED", pod_group)
    for queue in case.queues:
        cache.apply_event("Queue", "ADDED", queue)
    for priority_class in case.priority_classes:
        cache.apply_event("PriorityClass", "ADDED", priority_class)
    for hyper_node in case.hyper_nodes:
        cache.apply_event("HyperNode", "ADDED", hyper_node)
    for kind, obj in case.others:
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(
        actions=list(actions),
        tiers=tiers_of(case.plugins, case.arguments),
        configurations={k: dict(v) for k, v in case.configurations.items()},
    )
    ssn = open_session(
        cache.snapshot(), conf, registry or PluginRegistry(), cache, SchedulingState(seed=case.seed)
    )
    for name in actions:
        new_action(name).execute(ssn)
    close_session(ssn)
    return Outcome(binder, evictor, status, recorder, ssn, cache)


def check(case: Case, outcome: Outcome) -> None:
    """The expectations of ``case`` against what the session did."""
    binds = outcome.binder.binds
    if case.minimal_bind_check:
        expected = (
            case.expect_binds_num
            if case.expect_binds_num is not None
            else len(case.expect_bind_map)
        )
        assert len(binds) == expected, f"{case.name}: binds {binds}, expected {expected} of them"
    else:
        assert binds == case.expect_bind_map, (
            f"{case.name}: binds {binds} != {case.expect_bind_map}"
        )
        if case.expect_binds_num is not None:
            assert len(binds) == case.expect_binds_num, f"{case.name}: {len(binds)} binds"
    evicted = outcome.evictor.evicted
    if case.expect_evict_num is not None:
        assert len(evicted) == case.expect_evict_num, f"{case.name}: evicted {evicted}"
    if case.expect_evicted or case.expect_evict_num is None:
        assert Counter(evicted) == Counter(case.expect_evicted), (
            f"{case.name}: evicted {evicted} != {case.expect_evicted}"
        )
    ssn = outcome.session
    for job_id, nodes in case.expect_pipelined.items():
        job = ssn.jobs[job_id]
        pipelined = job.tasks_in(TaskStatus.PIPELINED)
        assert pipelined, f"{case.name}: job {job_id} has no pipelined task"
        for task in pipelined.values():
            assert task.node_name in nodes, f"{case.name}: {task.key} pipelined on {task.node_name}"
    for job_id, phase in case.expect_status.items():
        job = ssn.jobs[job_id]
        actual = job.pod_group.phase if job.pod_group else None
        assert actual == phase, f"{case.name}: job {job_id} phase {actual} != {phase}"
    for job_id, counts in case.expect_task_status_nums.items():
        job = ssn.jobs[job_id]
        for task_status, number in counts.items():
            actual = len(job.tasks_in(task_status))
            assert actual == number, f"{case.name}: job {job_id} has {actual} {task_status} tasks"
