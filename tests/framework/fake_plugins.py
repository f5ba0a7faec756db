"""Fake plugins and sinks for the framework tests.

A fake plugin registers the lambdas it is given through the session's public ``add_*_fn``
methods, exactly as a real plugin does in ``on_session_open``; tiers are built in code, so
only the flags a test names are on (upstream's unit-test convention).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.snapshot import ClusterSnapshot
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.event import EventHandler
from volcano_py.framework.plugin import PluginBuilder
from volcano_py.framework.session import SchedulingState, Session, open_session


class FakePlugin:
    """Registers ``hooks`` (hook name -> function) and event handlers when the session opens."""

    def __init__(
        self,
        name: str,
        hooks: Mapping[str, Any],
        handlers: Sequence[EventHandler] = (),
        on_close: Callable[[Session], None] | None = None,
    ) -> None:
        self.name = name
        self.hooks = dict(hooks)
        self.handlers = list(handlers)
        self.on_close = on_close
        self.opened = 0
        self.closed = 0

    def on_session_open(self, ssn: Session) -> None:
        self.opened += 1
        for hook, fn in self.hooks.items():
            getattr(ssn, f"add_{hook}_fn")(self.name, fn)
        for handler in self.handlers:
            ssn.add_event_handler(handler)

    def on_session_close(self, ssn: Session) -> None:
        self.closed += 1
        if self.on_close is not None:
            self.on_close(ssn)


@dataclass
class PluginSpec:
    """One plugin entry of a tier: its name, the flags turned on, what it registers."""

    name: str
    flags: tuple[str, ...] = ()
    hooks: Mapping[str, Any] = field(default_factory=dict)
    handlers: Sequence[EventHandler] = ()
    on_close: Callable[[Session], None] | None = None


def plugin(name: str, *flags: str, **hooks: Any) -> PluginSpec:
    return PluginSpec(name, tuple(flags), hooks)


def conf_of(tiers: Sequence[Sequence[PluginSpec]], actions: Iterable[str] = ()) -> SchedulerConf:
    return SchedulerConf(
        actions=list(actions),
        tiers=[Tier([PluginOption.with_flags(p.name, *p.flags) for p in tier]) for tier in tiers],
    )


def builders_of(tiers: Sequence[Sequence[PluginSpec]]) -> dict[str, PluginBuilder]:
    built: dict[str, PluginBuilder] = {}
    for tier in tiers:
        for spec in tier:

            def build(_arguments: Arguments, spec: PluginSpec = spec) -> FakePlugin:
                return FakePlugin(spec.name, spec.hooks, spec.handlers, spec.on_close)

            built[spec.name] = build
    return built


@dataclass
class RecordingSink:
    """A session sink that records what the session sends, and can be told to fail."""

    binds: list[str] = field(default_factory=list)
    evictions: list[tuple[str, str]] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    pod_groups: list[str] = field(default_factory=list)
    job_infos: list[str] = field(default_factory=list)
    queues: dict[str, dict[str, str]] = field(default_factory=dict)
    conditions: list[tuple[str, Mapping[str, Any], str]] = field(default_factory=list)
    events: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)
    fail_bind: set[str] = field(default_factory=set)
    fail_evict: set[str] = field(default_factory=set)

    def add_bind_task(self, task: TaskInfo) -> None:
        self.calls.append(("bind", task.key))
        if task.key in self.fail_bind:
            raise RuntimeError(f"bind of {task.key} refused")
        self.binds.append(task.key)

    def evict(self, task: TaskInfo, reason: str) -> None:
        self.calls.append(("evict", task.key))
        if task.key in self.fail_evict:
            raise RuntimeError(f"eviction of {task.key} refused")
        self.evictions.append((task.key, reason))

    def update_pod_group_status(self, job: Any) -> None:
        self.pod_groups.append(job.uid)

    def update_job_info(self, job: Any) -> None:
        self.job_infos.append(job.uid)

    def update_queue_status(self, queue: str, allocated: Resource) -> None:
        self.queues[queue] = allocated.to_list()

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None:
        self.conditions.append((task.key, dict(condition), nominated_node))

    def record_event(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None:
        self.events.append((kind, namespace, name, event_type, reason, message))


def cache_of(objects: Iterable[tuple[str, Mapping[str, Any]]], **kwargs: Any) -> SchedulerCache:
    cache = SchedulerCache(**kwargs)
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    return cache


def open_fake_session(
    tiers: Sequence[Sequence[PluginSpec]] = (),
    snapshot: ClusterSnapshot | None = None,
    sink: Any = None,
    state: SchedulingState | None = None,
) -> Session:
    """A session over ``snapshot`` (an empty cluster by default) with the fake plugins."""
    if snapshot is None:
        snapshot = SchedulerCache().snapshot()
    return open_session(
        snapshot,
        conf_of(tiers),
        builders_of(tiers),
        sink if sink is not None else RecordingSink(),
        state,
    )
