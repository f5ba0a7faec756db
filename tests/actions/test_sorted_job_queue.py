"""allocate sorts a queue's jobs once by the job order's key instead of keeping them in a heap
that asks ``job_order_fn`` (issue 14, "Session"): the queue must pop the same jobs in the same
order, the jobs pushed back after a placement included.

``Session.job_order_key`` offers a key only when every plugin that registered ``job_order``
offers one (priority, gang, drf, sla and tdm do); the fallback's key is (creation time, UID).
The properties below draw jobs with priorities, gangs ready or not, drf shares (equal ones
too), SLA deadlines (equal ones too), preemptable flags and equal creation times, under drawn
plugin lists and tiers, and check that the key orders them strictly as the function does.

A queue keys a job once, when it joins; the heap asks about the waiting jobs at every
comparison. They agree because allocate changes only the job it popped: placing one job's
tasks must leave every other job's key as it was (drf's hierarchy included), and the placed
job's new key must still order it as the function does. Last, allocate runs both ways
(``allocate._SORTED_JOBS``) over queues of many jobs on too few nodes, and every bind is
compared in order.
"""

from __future__ import annotations

import random
from itertools import permutations
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
)
from tests.builders import resource_list as rl
from volcano_py.actions import allocate
from volcano_py.api.job import JobInfo
from volcano_py.api.types import HIERARCHY_ANNOTATION, PREEMPTABLE_KEY, TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.priority_queue import PriorityQueue, SortedQueue
from volcano_py.framework.session import Session, close_session, open_session
from volcano_py.scheduler.registry import PluginRegistry

KEYED = ("priority", "gang", "drf", "sla", "tdm")
T0, T1 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"
NODES = 4  # of 8 CPUs each: a running pod of 1, 2 or 0.5 CPU gives shares that tie

# (priority class, minMember, running pods, CPU of each, pending pods, SLA waiting time,
#  preemptable, created, queue)
JobDraw = tuple[str, int, int, str, int, str | None, bool, str, str]
jobs_drawn = st.lists(
    st.tuples(
        st.sampled_from(["", "low", "high"]),
        st.integers(1, 3),
        st.integers(0, 2),
        st.sampled_from(["1", "2", "500m"]),
        st.integers(0, 2),
        # 11m from T0 and 10m from T1 are the same deadline.
        st.sampled_from([None, "10m", "11m"]),
        st.booleans(),
        st.sampled_from([T0, T0, T1]),
        st.sampled_from(["q1", "q2"]),
    ),
    min_size=1,
    max_size=10,
)
# Each keyed plugin: left out, listed with its job order, or listed with it off.
plugin_lists = st.permutations(KEYED).flatmap(
    lambda names: st.tuples(
        st.just(names),
        st.lists(st.sampled_from(["out", "on", "off"]), min_size=5, max_size=5),
        st.integers(0, 5),  # where the second tier starts
        st.booleans(),  # drf's hierarchy
        st.sampled_from([None, "12m"]),  # sla's global waiting time
    )
)
PluginsDraw = tuple[tuple[str, ...], list[str], int, bool, str | None]


def _conf(drawn: PluginsDraw) -> SchedulerConf:
    names, modes, split, hierarchy, global_wait = drawn
    options = []
    for name, mode in zip(names, modes, strict=True):
        if mode == "out":
            continue
        flags = ["enableJobOrder"] if mode == "on" else []
        if name == "drf" and hierarchy:
            flags.append("enableHierarchy")
        arguments = {"sla-waiting-time": global_wait} if name == "sla" and global_wait else None
        options.append(PluginOption.with_flags(name, *flags, arguments=arguments))
    tiers = [Tier(options[:split]), Tier(options[split:])]
    return SchedulerConf(["allocate"], [tier for tier in tiers if tier.plugins] or [Tier([])])


def _cache(jobs: list[JobDraw], nodes: int = NODES) -> SchedulerCache:
    """The jobs' running pods go round the nodes."""
    cache = SchedulerCache(binder=RecordingBinder())
    for node in range(nodes):
        cache.apply_event("Node", "ADDED", build_node(f"n{node}", rl("8", "64Gi", pods="110")))
    for name, value in (("low", 1), ("high", 100)):
        cache.apply_event("PriorityClass", "ADDED", build_priority_class(name, value))
    for queue in ("q1", "q2"):
        annotations = {HIERARCHY_ANNOTATION: f"root/{queue}"}
        cache.apply_event("Queue", "ADDED", build_queue(queue, annotations=annotations))
    running = 0
    for number, drawn in enumerate(jobs):
        running = _add_job(cache, f"j{number:02d}", drawn, running, nodes)
    return cache


def _add_job(cache: SchedulerCache, name: str, drawn: JobDraw, placed: int, nodes: int) -> int:
    """Add the job's PodGroup and pods; ``placed`` running pods came before, the sum after."""
    priority, min_member, running, cpu, pending, wait, preemptable, created, queue = drawn
    annotations = {PREEMPTABLE_KEY: "true"} if preemptable else {}
    if wait is not None:
        annotations["volcano.sh/sla-waiting-time"] = wait
    group = build_pod_group(
        name,
        "ns",
        queue,
        min_member,
        phase="Running" if running else "Inqueue",
        priority_class_name=priority,
        annotations=annotations,
        creation_timestamp=created,
    )
    cache.apply_event("PodGroup", "ADDED", group)
    for index in range(running + pending):
        node = f"n{(placed + index) % nodes}" if index < running else ""
        phase = "Running" if node else "Pending"
        pod = build_pod("ns", f"{name}-{index}", node, phase, rl(cpu, "1Mi"), name)
        cache.apply_event("Pod", "ADDED", pod)
    return placed + running


def _session(cache: SchedulerCache, conf: SchedulerConf) -> Session:
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache)


def _agrees(ssn: Session, keys: dict[str, Any], jobs: list[JobInfo]) -> None:
    """The keys are distinct and order every pair as ``job_order_fn`` does."""
    assert len(set(keys.values())) == len(keys)
    for left, right in permutations(jobs, 2):
        assert ssn.job_order_fn(left, right) == (keys[left.uid] < keys[right.uid])


def _popped(queue: Any, pushes_back: int) -> list[str]:
    """Pop everything; the first ``pushes_back`` popped go back in once (as allocate pushes
    back a job with tasks left)."""
    first = [queue.pop() for _ in range(min(pushes_back, len(queue)))]
    for job in first:
        queue.push(job)
    order = []
    while not queue.empty():
        order.append(queue.pop().uid)
    return order


@settings(max_examples=150, deadline=None)
@given(jobs_drawn, plugin_lists)
def test_the_key_orders_jobs_as_the_function(jobs: list[JobDraw], plugins: PluginsDraw) -> None:
    ssn = _session(_cache(jobs), _conf(plugins))
    key = ssn.job_order_key()
    assert key is not None
    waiting = list(ssn.jobs.values())
    _agrees(ssn, {job.uid: key(job) for job in waiting}, waiting)
    for pushes_back in (0, 3):
        heap = PriorityQueue(ssn.job_order_fn, waiting)
        assert _popped(SortedQueue(key, waiting), pushes_back) == _popped(heap, pushes_back)
    close_session(ssn)


@settings(max_examples=100, deadline=None)
@given(jobs_drawn, plugin_lists, st.data())
def test_placing_one_job_moves_no_other_key(
    jobs: list[JobDraw], plugins: PluginsDraw, data: st.DataObject
) -> None:
    """What allocate does to the job it popped (tasks allocated, then committed or discarded)
    leaves every waiting job's key as it was, and the placed job's new key still orders it
    as the function does against the keys the waiting jobs were given."""
    ssn = _session(_cache(jobs), _conf(plugins))
    key = ssn.job_order_key()
    assert key is not None
    pending = [job for job in ssn.jobs.values() if job.tasks_in(TaskStatus.PENDING)]
    if not pending:
        close_session(ssn)
        return
    placed = data.draw(st.sampled_from(pending))
    before = {job.uid: key(job) for job in ssn.jobs.values()}
    statement = ssn.statement()
    for task in list(placed.tasks_in(TaskStatus.PENDING).values()):
        statement.allocate(task, ssn.nodes["n0"])
    if data.draw(st.booleans()):
        statement.discard()
    after = {job.uid: key(job) for job in ssn.jobs.values()}
    others = {uid: value for uid, value in after.items() if uid != placed.uid}
    assert others == {uid: before[uid] for uid in others}
    _agrees(ssn, after, list(ssn.jobs.values()))
    close_session(ssn)


def test_a_job_order_without_a_key_has_none() -> None:
    ssn = _session(_cache([]), _conf((KEYED, ["on"] * 5, 5, False, None)))
    assert ssn.job_order_key() is not None
    # Registered by hand: no plugin object offers its key.
    ssn.add_job_order_fn("by-name", lambda left, right: (left.name > right.name) - 0)
    assert ssn.job_order_key() is None


def test_a_plugin_registering_twice_has_none() -> None:
    ssn = _session(_cache([]), _conf((KEYED, ["on"] * 5, 5, False, None)))
    ssn.add_job_order_fn("priority", lambda left, right: 0)
    assert ssn.job_order_key() is None


def test_without_job_order_plugins_the_key_is_creation_then_uid() -> None:
    jobs: list[JobDraw] = [("", 1, 0, "1", 1, None, False, created, "q1") for created in (T1, T0)]
    ssn = _session(_cache(jobs), _conf((KEYED, ["off"] * 5, 0, False, None)))
    key = ssn.job_order_key()
    assert key is not None
    assert key(ssn.jobs["ns/j00"]) == (T1, "ns/j00")
    assert sorted(ssn.jobs.values(), key=key)[0].uid == "ns/j01"


# ---------------------------------------------------------------------- allocate both ways

ALLOCATE_TIER = [
    Tier(
        [
            PluginOption.with_flags("priority", "enableJobOrder", "enableTaskOrder"),
            PluginOption.with_flags("gang", "enableJobOrder", "enableJobReady"),
            PluginOption.with_flags("sla", "enableJobOrder"),
        ]
    ),
    Tier(
        [
            PluginOption.with_flags("drf", "enableJobOrder"),
            PluginOption.with_flags("proportion", "enableQueueOrder", "enabledAllocatable"),
            PluginOption.with_flags("predicates", "enablePredicate"),
            PluginOption.with_flags("nodeorder", "enableNodeOrder"),
        ]
    ),
]


def _busy_cluster(seed: int) -> list[JobDraw]:
    """Two queues of 30 jobs each: gangs of 1 to 3 with 0 to 2 pods running (so some gangs are
    ready), pending pods of 1, 2 or 0.5 CPU (drf shares that differ, and some that tie), three
    priorities, SLA on a few, and creation times mostly equal; on 16 nodes of 8 CPUs, more
    pending CPU than free."""
    draw = random.Random(seed)
    return [
        (
            draw.choice(["", "low", "high"]),
            draw.randint(1, 3),
            draw.randint(0, 2),
            draw.choice(["1", "2", "500m"]),
            draw.randint(1, 3),
            draw.choice([None, None, None, "10m", "11m"]),
            False,
            draw.choice([T0, T0, T0, T1]),
            queue,
        )
        for queue in ("q1", "q2")
        for _ in range(30)
    ]


def _allocate(jobs: list[JobDraw]) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """Two allocate sessions over the cluster: every bind in order, every task's status."""
    cache = _cache(jobs, nodes=16)
    conf = SchedulerConf(["allocate"], ALLOCATE_TIER)
    for _ in range(2):
        ssn = _session(cache, conf)
        assert ssn.job_order_key() is not None
        allocate.new().execute(ssn)
        close_session(ssn)
    binder = cache.binder
    assert isinstance(binder, RecordingBinder)
    statuses = {
        task.key: task.status.name for job in ssn.jobs.values() for task in job.tasks.values()
    }
    return list(binder.binds.items()), statuses


@pytest.mark.parametrize("seed", range(8))
def test_allocate_binds_the_same_as_with_the_heap(seed: int) -> None:
    jobs = _busy_cluster(seed)
    sorted_once = _allocate(jobs)
    binds, statuses = sorted_once
    assert binds, "nothing was placed: the order was not exercised"
    assert "PENDING" in statuses.values(), "everything was placed: the order did not matter"
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(allocate, "_SORTED_JOBS", False)
        assert _allocate(jobs) == sorted_once
