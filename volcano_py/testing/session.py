"""Run one session over given objects and check its decisions, as upstream's
``uthelper.TestCommonStruct`` does (``pkg/scheduler/uthelper/helper.go``).

Tiers are built in code, so only the flags a case names are enabled (upstream applies no flag
defaults in unit tests). Binds, evictions and pipelined placements are recorded by fakes and
compared with the case's expectations. ``check`` raises ``AssertionError`` itself (not with
``assert``), so it works under ``python -O`` and outside pytest.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
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
from volcano_py.framework.plugin import PluginBuilder
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.scheduler.device_resources import snapshot_for
from volcano_py.scheduler.registry import PluginRegistry, new_action

# A raw object with its kind, as a watch delivers it: ("Pod", {...}).
KindAndObject = tuple[str, dict[str, Any]]

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
    """What one session did: the recording fakes, the closed session and the cache."""

    binder: RecordingBinder
    evictor: RecordingEvictor
    status: RecordingStatusUpdater
    recorder: RecordingEventRecorder
    session: Session
    cache: SchedulerCache

    @property
    def binds(self) -> dict[str, str]:
        """``namespace/pod`` -> node, for every bind sent."""
        return self.binder.binds

    @property
    def evicted(self) -> list[str]:
        """``namespace/pod`` of every eviction sent, in order."""
        return self.evictor.evicted

    @property
    def pipelined(self) -> dict[str, str]:
        """``namespace/pod`` -> node, for every task left pipelined at session close."""
        return {
            task.key: task.node_name
            for job in self.session.jobs.values()
            for task in job.tasks_in(TaskStatus.PIPELINED).values()
        }


def run_session(
    objects: Iterable[KindAndObject],
    conf: SchedulerConf,
    registry: Mapping[str, PluginBuilder] | None = None,
    seed: int = 0,
) -> Outcome:
    """Feed ``objects`` to a fresh cache, run one session of ``conf`` (its actions in order,
    its tiers and configurations) with the plugins of ``registry`` (default: the built-ins),
    and close it."""
    binder, evictor = RecordingBinder(), RecordingEvictor()
    status, recorder = RecordingStatusUpdater(), RecordingEventRecorder()
    cache = SchedulerCache(binder=binder, evictor=evictor, status_updater=status, recorder=recorder)
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    ssn = open_session(
        snapshot_for(cache, conf),
        conf,
        registry if registry is not None else PluginRegistry(),
        cache,
        SchedulingState(seed=seed),
    )
    for name in conf.actions:
        new_action(name).execute(ssn)
    close_session(ssn)
    return Outcome(binder, evictor, status, recorder, ssn, cache)


def case_objects(case: Case) -> list[KindAndObject]:
    """The case's objects in the order the cache needs them (nodes, pods, then their groups)."""
    return [
        *(("Node", node) for node in case.nodes),
        *(("Pod", pod) for pod in case.pods),
        *(("PodGroup", pod_group) for pod_group in case.pod_groups),
        *(("Queue", queue) for queue in case.queues),
        *(("PriorityClass", priority_class) for priority_class in case.priority_classes),
        *(("HyperNode", hyper_node) for hyper_node in case.hyper_nodes),
        *case.others,
    ]


def run_case(
    case: Case, actions: Sequence[str], registry: Mapping[str, PluginBuilder] | None = None
) -> Outcome:
    """Run ``actions`` over the case's objects with the tiers its plugins and flags make."""
    conf = SchedulerConf(
        actions=list(actions),
        tiers=tiers_of(case.plugins, case.arguments),
        configurations={k: dict(v) for k, v in case.configurations.items()},
    )
    return run_session(case_objects(case), conf, registry, case.seed)


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def check(case: Case, outcome: Outcome) -> None:
    """The expectations of ``case`` against what the session did."""
    binds = outcome.binder.binds
    if case.minimal_bind_check:
        expected = (
            case.expect_binds_num
            if case.expect_binds_num is not None
            else len(case.expect_bind_map)
        )
        _expect(len(binds) == expected, f"{case.name}: binds {binds}, expected {expected} of them")
    else:
        _expect(
            binds == case.expect_bind_map, f"{case.name}: binds {binds} != {case.expect_bind_map}"
        )
        if case.expect_binds_num is not None:
            _expect(len(binds) == case.expect_binds_num, f"{case.name}: {len(binds)} binds")
    evicted = outcome.evictor.evicted
    if case.expect_evict_num is not None:
        _expect(len(evicted) == case.expect_evict_num, f"{case.name}: evicted {evicted}")
    if case.expect_evicted or case.expect_evict_num is None:
        _expect(
            Counter(evicted) == Counter(case.expect_evicted),
            f"{case.name}: evicted {evicted} != {case.expect_evicted}",
        )
    ssn = outcome.session
    for job_id, nodes in case.expect_pipelined.items():
        job = ssn.jobs[job_id]
        pipelined = job.tasks_in(TaskStatus.PIPELINED)
        _expect(bool(pipelined), f"{case.name}: job {job_id} has no pipelined task")
        for task in pipelined.values():
            _expect(
                task.node_name in nodes, f"{case.name}: {task.key} pipelined on {task.node_name}"
            )
    for job_id, phase in case.expect_status.items():
        job = ssn.jobs[job_id]
        actual = job.pod_group.phase if job.pod_group else None
        _expect(actual == phase, f"{case.name}: job {job_id} phase {actual} != {phase}")
    for job_id, counts in case.expect_task_status_nums.items():
        job = ssn.jobs[job_id]
        for task_status, number in counts.items():
            count = len(job.tasks_in(task_status))
            _expect(count == number, f"{case.name}: job {job_id} has {count} {task_status} tasks")
